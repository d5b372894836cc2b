//! A shard's side of a sharded run: it runs the rounds its collector names — each planned run,
//! each trial, each probe of a capacity search — and hands every result over, complete or
//! not. The collector judges; what this process keeps is its share, for its own table.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::error::{RunError, RunFailure};
use super::lifecycle;
use super::options::RunOptions;
use super::progress::Position;
use super::shard::{Coordination, Next};
use crate::measure::status::Cause;
use crate::measure::{RunResult, RunStatus};
use crate::plan::{Plan, RunNo};

/// What a shard ran of one planned run.
#[derive(Default)]
struct Share {
    /// Its results of the run itself or of its trials.
    runs: Vec<RunResult>,
    /// The last probe of its capacity search, and how many it ran.
    probe: Option<RunResult>,
    probes: u32,
}

/// What a shard's part came to: its share of each run, and why it stopped early, if it did.
#[derive(Default)]
pub(super) struct Followed {
    pub results: Vec<RunResult>,
    pub failure: Option<RunFailure>,
    pub interrupted: bool,
    pub notes: Vec<String>,
}

/// Joins the sharded run, then runs each round the collector names until it says the run is
/// over, a round fails, or `interrupt` is set.
pub(super) async fn follow(
    plan: &Plan,
    s: &dyn Coordination,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
) -> Followed {
    let mut exec = Followed::default();
    // Said with every result: the merged file keeps each shard's machine.
    let here = super::environment::local();
    let failure = |index: usize, error: RunError| RunFailure {
        index,
        label: label_of(plan, index),
        error,
    };
    let first = plan.runs.first().map_or(0, |r| r.index);
    if let Err(e) = s.join(plan, &interrupt).await {
        exec.interrupted = matches!(e, RunError::Interrupted);
        if !exec.interrupted {
            s.failed(e.to_string()).await;
            exec.failure = Some(failure(first, e));
        }
        return exec;
    }
    let mut shares: BTreeMap<usize, Share> = BTreeMap::new();
    let mut at_run = first;
    loop {
        if interrupt.load(Ordering::SeqCst) {
            exec.interrupted = true;
            break;
        }
        let (number, round) = match s.next_round(&interrupt).await {
            Ok(Next::Round(number, round)) => (number, round),
            Ok(Next::Finished) => break,
            Ok(Next::Stopped(reason)) => {
                exec.notes
                    .push(format!("the collector stopped the run: {reason}"));
                break;
            }
            Err(RunError::Interrupted) => {
                exec.interrupted = true;
                break;
            }
            Err(e) => {
                s.failed(e.to_string()).await;
                exec.failure = Some(failure(at_run, e));
                break;
            }
        };
        let Some(rp) = round.plan(plan) else {
            let e = RunError::NoSuchRound(number);
            s.failed(e.to_string()).await;
            exec.failure = Some(failure(at_run, e));
            break;
        };
        at_run = rp.index;
        let at = Position {
            number: number as usize,
            of: (number as usize).max(plan.runs.len() * plan.repeat.max(1) as usize),
            trial: round.trial,
            probe: round.probe.as_ref().map(|p| (p.number, p.rate)),
        };
        // A long probe's series are finer than the run's: the collector says how fine.
        let interval = round.probe.as_ref().and_then(|p| p.interval_secs);
        let opts = &interval.map_or_else(
            || opts.clone(),
            |i| RunOptions {
                interval: std::time::Duration::from_secs_f64(i),
                ..opts.clone()
            },
        );
        let mut outcome =
            lifecycle::run_one(&rp, at, opts, interrupt.clone(), &mut exec.notes).await;
        // The collector judges: every result goes to it, complete or not.
        match &mut outcome {
            Ok(r) => {
                r.environment = Some(here.clone());
                if let Err(e) = s.report(r).await {
                    // The cluster stays lost when it was (the flag is kept).
                    let cause = Cause::said(format!("the collector did not get the result: {e}"));
                    r.status = if r.status.is_cluster_lost() {
                        RunStatus::ClusterLost { cause }
                    } else {
                        RunStatus::Failed { cause }
                    };
                }
            }
            Err(e) => s.failed(e.to_string()).await,
        }
        let share = shares.entry(rp.index).or_default();
        match outcome {
            Ok(mut r) => {
                let ended = (!r.status.is_complete()).then(|| RunError::Ended(r.status.clone()));
                r.index = rp.index;
                if round.probe.is_some() {
                    share.probes += 1;
                    share.probe = Some(r);
                } else {
                    share.runs.push(r);
                }
                if let Some(e) = ended {
                    exec.failure = Some(failure(rp.index, e));
                    break;
                }
            }
            Err(RunError::Interrupted) => {
                exec.interrupted = true;
                break;
            }
            Err(e) => {
                exec.failure = Some(failure(rp.index, e));
                break;
            }
        }
    }
    for (index, share) in shares {
        let mut r = match (share.runs.len(), share.probe) {
            (0, Some(probe)) => {
                exec.notes.push(format!(
                    "run {}: this shard ran {} probe(s) of a capacity search; the figures \
                     shown are its share of the last, and the collector judges the search",
                    RunNo(index),
                    share.probes
                ));
                probe
            }
            (0, None) => continue,
            (1, _) => share.runs.into_iter().next().expect("one result"),
            _ => crate::measure::trials::combine(share.runs),
        };
        r.label = label_of(plan, index);
        exec.results.push(r);
    }
    exec
}

/// The label of planned run `index` (empty for one the plan lacks).
fn label_of(plan: &Plan, index: usize) -> String {
    plan.runs
        .iter()
        .find(|r| r.index == index)
        .map_or_else(String::new, |r| r.label.clone())
}
