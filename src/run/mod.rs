//! Stage run: executes a [`Plan`] against a real cluster and hands back an [`Execution`].
//!
//! tokio orchestrates (topic lifecycle, barriers around warm-up, progress, Ctrl-C); producers
//! and the consumer run on dedicated OS threads. Nothing here prints: progress goes to the
//! caller's [`ProgressSink`], failures into the `Execution`.

pub(crate) mod admin;
mod auto;
mod availability;
mod blocking;
mod broker_configs;
mod capacity;
mod clients;
mod clock;
mod cold;
mod compaction;
mod consumer;
pub(crate) mod cpu;
pub(crate) mod driven;
mod environment;
mod error;
mod events;
pub(crate) mod faults;
mod follow;
mod group_configs;
mod interrupt;
mod lifecycle;
pub(crate) mod live;
pub(crate) mod logdirs;
mod offload;
mod options;
pub(crate) mod pacer;
pub(crate) mod payload;
mod producer;
mod progress;
mod recorder;
mod round;
pub(crate) mod shard;
mod share;
mod shared;
mod spread;
mod stamp;
pub(crate) mod topic;
mod trials;
mod txn;
mod warmup;
mod worker;
mod workers;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub(crate) use blocking::blocking;
pub(crate) use error::{RunError, RunFailure};
pub(crate) use faults::LiveFaults;
pub(crate) use interrupt::LiveTopic;
pub(crate) use options::RunOptions;
pub(crate) use progress::{Position, Progress, ProgressPhase, ProgressSink};
#[cfg(test)]
pub(crate) use round::ProbeRound;
pub(crate) use round::Round;
pub(crate) use shard::{Coordination, Next, Phase, Rounds, Shard};

use crate::measure::RunResult;
use crate::plan::{Plan, RunPlan, Selection};
use auto::Auto;

/// Everything `run` produced: the results so far and why it stopped early, if it did.
#[derive(Default)]
pub struct Execution {
    pub results: Vec<RunResult>,
    pub failure: Option<RunFailure>,
    pub interrupted: bool,
    pub notes: Vec<String>,
    /// Where it was measured: the client machine before the first run, the cluster once it
    /// answered.
    pub environment: Option<crate::measure::Environment>,
    /// A sharded run's: each shard's machine (and its view of the cluster), by shard.
    pub shard_environments: Vec<crate::measure::Environment>,
}

impl Execution {
    /// The runs (indices) cut short (interrupted, cluster lost): their figures are partial.
    pub fn cut_short(&self) -> Vec<usize> {
        self.results
            .iter()
            .filter(|r| !r.status.is_complete())
            .map(|r| r.index)
            .collect()
    }
}

/// Runs every planned run in order; stops at the first run that fails, and when `interrupt`
/// is set (the caller sets it on a signal: Ctrl-C, SIGTERM).
pub(crate) async fn execute(
    plan: &Plan,
    selection: &Selection,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
) -> Execution {
    let mut exec = Execution {
        results: Vec::new(),
        failure: None,
        interrupted: false,
        notes: Vec::new(),
        environment: Some(environment::local()),
        shard_environments: Vec::new(),
    };
    // A drain is compared with the same seconds of a run without one: every run of a plan
    // with a backlog keeps latency by due time.
    let opts = &RunOptions {
        by_due: opts.by_due || plan.runs.iter().any(|r| r.workload.backlog.is_some()),
        ..opts.clone()
    };
    if let Some(s) = &opts.shard {
        // A shard runs the rounds its collector names, not the plan's order of its own.
        let part = follow::follow(plan, s.as_ref(), opts, interrupt).await;
        exec.results = part.results;
        exec.failure = part.failure;
        exec.interrupted = part.interrupted;
        exec.notes = part.notes;
        return exec;
    }
    let runs: Vec<&RunPlan> = selection.runs(plan).collect();
    // A topic the cluster would refuse fails before any run sends a record.
    if let Err(failure) = topic::validate(&runs, &interrupt).await {
        exec.interrupted = matches!(failure.error, RunError::Interrupted);
        exec.failure = (!exec.interrupted).then_some(failure);
        return exec;
    }
    let n = plan.repeat.max(1);
    let mut auto = plan.repeat_auto.map(|a| Auto::new(a, plan, &runs));
    let clients = broker_configs::clients(&runs);
    // Trials interleave, the order rotated each round (A B C, B C A, C A B …): drift of the
    // machine or the broker falls on every run alike. With `repeat = auto` a run that has its
    // answer leaves the rounds; the others go on, still interleaved among themselves.
    let len = runs.len();
    let mut trials: Vec<Vec<RunResult>> = vec![Vec::new(); runs.len()];
    let mut number = 0;
    'rounds: for t in 0..n {
        let round: Vec<usize> = (0..len)
            .map(|k| (k + t as usize) % len)
            .filter(|&k| auto.as_ref().map_or(true, |a| a.stopped[k].is_none()))
            .collect();
        if round.is_empty() {
            break;
        }
        for k in round {
            if interrupt.load(Ordering::SeqCst) {
                exec.interrupted = true;
                break 'rounds;
            }
            number += 1;
            let at = Position {
                number,
                // With `repeat = auto`, the most there may be.
                of: len * n as usize,
                trial: (n > 1).then_some((t + 1, n)),
                probe: None,
            };
            let round = Round {
                trial: (n > 1).then_some((t + 1, n)),
                ..Round::of(runs[k].index)
            };
            let trial;
            let rp = if n > 1 {
                trial = trials::trial_plan(runs[k], t + 1, n);
                &trial
            } else {
                runs[k]
            };
            let mut notes = Vec::new();
            let outcome = match &rp.capacity {
                Some(c) => {
                    let i = interrupt.clone();
                    capacity::search(rp, c, &round, at, opts, i, &mut notes).await
                }
                None => lifecycle::one(rp, &round, at, opts, &interrupt, &mut notes).await,
            };
            exec.notes
                .extend(trials::name_trial(notes, rp.index, round.trial));
            let error = match outcome {
                Ok(r) => {
                    let stopped =
                        (!r.status.is_complete()).then(|| RunError::Ended(r.status.clone()));
                    let complete = r.status.is_complete();
                    trials[k].push(r);
                    if let Some(a) = auto.as_mut() {
                        a.look(k, &trials[k]);
                    }
                    if let Some(env) = exec
                        .environment
                        .as_mut()
                        .filter(|e| complete && e.cluster.is_none())
                    {
                        // Asked once the cluster has answered a whole run: an unreachable or
                        // lost one fails the run first, in its own words and time.
                        env.cluster = environment::cluster(rp, &clients).await;
                        let configs = env.cluster.as_ref().and_then(|c| c.configs.as_ref());
                        exec.notes.extend(configs.and_then(|c| c.missing()));
                    }
                    if interrupt.load(Ordering::SeqCst) {
                        exec.interrupted = true;
                        break 'rounds;
                    }
                    stopped
                }
                Err(RunError::Interrupted) => {
                    exec.interrupted = true;
                    break 'rounds;
                }
                Err(e) => Some(e),
            };
            if let Some(error) = error {
                exec.failure = Some(RunFailure {
                    index: rp.index,
                    label: rp.label.clone(),
                    error,
                });
                break 'rounds;
            }
        }
    }
    for (k, done) in trials.into_iter().enumerate() {
        if done.is_empty() {
            continue;
        }
        let ran = done.len() as u32;
        let mut r = match &auto {
            Some(a) => a.combine(k, done),
            None => crate::measure::trials::combine(done),
        };
        let cut = auto.as_ref().map_or(ran < n, |a| a.stopped[k].is_none());
        if n > 1 && cut {
            exec.notes.push(format!(
                "run {}: {ran} of {n} trials ran",
                crate::plan::RunNo(runs[k].index),
            ));
        }
        r.label = runs[k].label.clone();
        if let Some(why) = no_broker_figures(runs[k], &r) {
            exec.notes.push(why);
        }
        exec.results.push(r);
    }
    // A drain beside the same seconds of the run it is compared with: known once both ran.
    crate::measure::pair_drains(&mut exec.results);
    exec
}

/// Said of a run that acknowledged records on a producer that does not say which broker
/// acknowledged each (grammar/REFERENCE.md, "Per broker"): its figures per broker are not
/// measured, where a reader of the file would otherwise look for them.
fn no_broker_figures(rp: &RunPlan, r: &RunResult) -> Option<String> {
    use crate::model::ClientKind;
    if rp.producer_client == ClientKind::Librdkafka || r.acked == 0 || !r.brokers.is_empty() {
        return None;
    }
    Some(format!(
        "run {}: no figures per broker: the {} client does not say which broker acknowledged a record{}",
        crate::plan::RunNo(rp.index),
        rp.producer_client,
        if r.partitions.is_empty() {
            ""
        } else {
            " (figures per partition are measured)"
        }
    ))
}
