//! A capacity search's run: probes at the rates and lengths `measure::capacity::Search` asks
//! for, each a fixed-rate run of its own on fresh topics (the run's lifecycle, consumers and
//! transactions as any run has them; its fault timeline is not played), judged as it ends.
//! What limited it is `limit.rs`; the result it makes, `result.rs`.

mod limit;
mod result;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::error::RunError;
use super::lifecycle;
use super::options::RunOptions;
use super::progress::Position;
use super::round::{ProbeRound, Round};
use crate::format::{compact_rate, human_duration};
use crate::measure::capacity::{
    judge, unsteady, Answer, CanaryRun, Limit, Miss, Probe, Search, Step, Verdict,
};
use crate::measure::RunStatus;
use crate::model::capacity::PROBE_OVERHEAD;
use crate::model::CapacitySearch;
use crate::plan::RunPlan;
use result::Ran;

/// How many intervals a long probe's series is cut into at least: the steady-state detector
/// needs 60 whole ones, and a few more keep the last partial one and a slow start from
/// leaving it short.
const LONG_INTERVALS: u32 = 120;

/// The finest interval a long probe's series gets: finer holds too few records per interval
/// at low rates for a p99.
const FINEST_INTERVAL: Duration = Duration::from_millis(100);

/// The series interval of a probe measured for `length`: the run's own, or finer, so that
/// the probe has [`LONG_INTERVALS`] of them.
fn long_interval(run: Duration, length: Duration) -> Duration {
    run.min(length / LONG_INTERVALS).max(FINEST_INTERVAL)
}

/// Time spent on rounds of one kind, for the budget's guess at the next one's.
#[derive(Default)]
struct Spent {
    rounds: u32,
    time: Duration,
}

impl Spent {
    /// What the next round costs: the average so far, or `guess` before any.
    fn each(&self, guess: Duration) -> Duration {
        match self.rounds {
            0 => guess,
            n => self.time / n,
        }
    }

    fn add(&mut self, d: Duration) {
        self.rounds += 1;
        self.time += d;
    }
}

/// Runs the search of `rp`; its result is the last probe at the capacity (or the last probe
/// when none passed) with every probe in `capacity`. A probe that cannot run fails the run,
/// as a run that cannot run does.
pub(super) async fn search(
    rp: &RunPlan,
    c: &CapacitySearch,
    round: &Round,
    at: Position,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
    notes: &mut Vec<String>,
) -> Result<crate::measure::RunResult, RunError> {
    let started = Instant::now();
    let mut s = Search::new(c);
    let mut ran = Ran {
        probes: Vec::new(),
        canaries: Vec::new(),
        long: Vec::new(),
    };
    let mut stopped: Option<Limit> = None;
    if !rp.faults.is_empty() {
        notes.push(format!(
            "run {}: the fault timeline is not played during a capacity search",
            crate::plan::RunNo(rp.index)
        ));
    }
    // How a canary cut short (a lost cluster, an interrupt) ended the search.
    let mut cut: Option<RunStatus> = None;
    let (mut short, mut long) = (Spent::default(), Spent::default());
    loop {
        let (rate, trial, length, canary) = match s.next() {
            Step::Done => break,
            Step::Probe {
                rate,
                trial,
                length,
            } => (rate, trial, length, None),
            Step::Canary { rate, nth } => (rate, 1, c.probe, Some(nth)),
        };
        // The check refuses a `hold` no longer than `probe`: a longer probe is a long one.
        let is_long = length > c.probe;
        if interrupt.load(Ordering::SeqCst) {
            stopped = Some(Limit::Stopped);
            break;
        }
        // A round costs what those of its kind took on average so far (the plan's guess
        // before any).
        let each = if is_long {
            long.each(length + c.warmup + PROBE_OVERHEAD)
        } else {
            short.each(c.probe + c.warmup + PROBE_OVERHEAD)
        };
        let left = c.budget.map(|b| b.saturating_sub(started.elapsed()));
        if left.is_some_and(|l| l < each) {
            stopped = Some(Limit::Budget);
            break;
        }
        let round_started = Instant::now();
        if let Some(nth) = canary {
            let after = (ran.probes.len() + ran.long.len()) as u32;
            let canary = round.probe(ProbeRound::new(after, Some(nth), rate));
            match run_canary(rp, c, &canary, nth, at, opts, &interrupt, notes).await {
                Ok(run) => {
                    s.record(run.pass);
                    ran.canaries.push(run);
                    short.add(round_started.elapsed());
                    continue;
                }
                Err(status) => {
                    cut = Some(status);
                    stopped = Some(Limit::Stopped);
                    break;
                }
            }
        }
        let number = (ran.probes.len() + ran.long.len()) as u32 + 1;
        let mut this = ProbeRound::new(number, None, rate);
        let mut probe_opts = opts.clone();
        if is_long {
            probe_opts.interval = long_interval(opts.interval, length);
            this = this.long(length, probe_opts.interval);
        }
        let mut probe = this.plan(rp, c);
        let probe_round = round.probe(this);
        probe.label = progress_label(rp, &s, number, (rate, trial, length), left);
        let probe_at = Position {
            probe: Some((number, rate)),
            trial: (c.trials > 1 && !is_long)
                .then_some((trial, c.trials))
                .or(at.trial),
            ..at
        };
        let r = match lifecycle::one(
            &probe,
            &probe_round,
            probe_at,
            &probe_opts,
            &interrupt,
            notes,
        )
        .await
        {
            Ok(r) => r,
            Err(RunError::Interrupted) if !ran.probes.is_empty() => {
                stopped = Some(Limit::Stopped);
                break;
            }
            Err(e) => return Err(e),
        };
        let mut misses = judge(&r, rate, c, length);
        if is_long {
            misses.extend(unsteady(&r));
        }
        let pass = misses.is_empty();
        let verdict = if pass {
            Verdict::Pass
        } else if misses.iter().any(Miss::is_overload) {
            Verdict::Overload
        } else {
            Verdict::Fail
        };
        let complete = r.status.is_complete();
        let secs = round_started.elapsed();
        let p = Probe {
            number,
            target: rate,
            trial,
            achieved: r.throughput_msgs,
            pass,
            misses,
            result: Box::new(r),
            secs: secs.as_secs_f64(),
        };
        if is_long {
            ran.long.push(p);
            long.add(secs);
        } else {
            ran.probes.push(p);
            short.add(secs);
        }
        if !complete {
            stopped = Some(Limit::Stopped);
            break;
        }
        s.record(verdict);
    }
    // A probe or canary cut short (a lost cluster, an interrupt) cuts the search short with
    // its status.
    let last = ran.long.last().or(ran.probes.last());
    let status = match (cut, last) {
        (Some(status), _) => status,
        (None, Some(p)) if !p.result.status.is_complete() => p.result.status.clone(),
        _ if interrupt.load(Ordering::SeqCst) => RunStatus::Interrupted,
        _ => RunStatus::Complete,
    };
    // A budget or an interrupt that ended the long phase ends no short answer: the limit is
    // the short probes'.
    let stopped = stopped.filter(|_| s.hold().is_none());
    let mut r = result::result(rp, c, &s, ran, stopped, started.elapsed());
    r.status = status;
    Ok(r)
}

/// Runs the `nth` canary after probe `after` at `rate`, a run like a probe's on fresh topics,
/// judged as a probe is. Its status when it was cut short (an interrupt, a lost cluster): the
/// search stops there with it, as it does when a probe is cut short. A canary that cannot start
/// is a failed canary, not a failed search: the next probe says what is wrong.
#[allow(clippy::too_many_arguments)]
async fn run_canary(
    rp: &RunPlan,
    c: &CapacitySearch,
    round: &Round,
    nth: u32,
    at: Position,
    opts: &RunOptions,
    interrupt: &Arc<AtomicBool>,
    notes: &mut Vec<String>,
) -> Result<CanaryRun, RunStatus> {
    let started = Instant::now();
    let probe = round.probe.as_ref().expect("a canary is a probe's round");
    let (after, rate) = (probe.number, probe.rate);
    let mut plan = probe.plan(rp, c);
    plan.label = format!(
        "{} · canary {nth} at {} after probe {after} failed",
        rp.label,
        compact_rate(rate)
    );
    let canary_at = Position {
        probe: Some((after, rate)),
        ..at
    };
    let (pass, misses) = match lifecycle::one(&plan, round, canary_at, opts, interrupt, notes).await
    {
        Ok(r) if !r.status.is_complete() => return Err(r.status),
        Ok(r) => {
            let misses = judge(&r, rate, c, c.probe);
            (misses.is_empty(), misses)
        }
        Err(RunError::Interrupted) => return Err(RunStatus::Interrupted),
        Err(e) => {
            notes.push(format!(
                "canary {nth} after probe {after} could not run: {e}"
            ));
            (false, Vec::new())
        }
    };
    Ok(CanaryRun {
        after,
        target: rate,
        pass,
        misses,
        secs: started.elapsed().as_secs_f64(),
    })
}

/// What progress shows while a probe runs: the probe, the bracket (or for a long probe, its
/// length and trial) and the time left.
fn progress_label(
    rp: &RunPlan,
    s: &Search,
    number: u32,
    (rate, trial, length): (f64, u32, Duration),
    left: Option<Duration>,
) -> String {
    let mut l = format!("{} · probe {number} at {}", rp.label, compact_rate(rate));
    if s.hold().is_some() {
        l.push_str(&format!(
            " for {} (long, {trial} of at most {})",
            human_duration(length.as_secs_f64()),
            crate::model::capacity::HOLD_PROBES
        ));
    } else if trial > 1 {
        l.push_str(&format!(" (trial {trial})"));
    }
    match s.answer() {
        Answer::Capacity { rate, low, high } => l.push_str(&format!(
            " · about {} ({}–{})",
            compact_rate(rate),
            compact_rate(low),
            compact_rate(high)
        )),
        Answer::AtLeast { rate } => l.push_str(&format!(" · passed {}", compact_rate(rate))),
        Answer::NotNarrowed { low, high, .. } => {
            l.push_str(&format!(" · {}–{}", compact_rate(low), compact_rate(high)))
        }
        Answer::Unstable { passes, probes, .. } => {
            l.push_str(&format!(" · met in {passes} of {probes}"))
        }
        Answer::NonePassed => {}
    }
    if let Some(left) = left {
        l.push_str(&format!(
            " · {} left",
            human_duration(left.as_secs_f64().round())
        ));
    }
    l
}
