//! Live progress of a run, as snapshots handed to whoever renders them (the command layer).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::live::LiveLatency;
use super::shared::Shared;
use crate::model::RateSpec;

/// Receives progress snapshots; called from the orchestrator's tasks.
pub(crate) type ProgressSink = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Where one run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgressPhase {
    /// Connected and sending the warm-up, which is not measured.
    Warmup,
    Producing,
    /// The producers are done; delivery reports and the consumer are catching up.
    Draining,
    /// The run's threads are done: nothing more will be reported for it.
    Finished,
}

/// One snapshot of a run in progress.
#[derive(Debug, Clone)]
pub(crate) struct Progress<'a> {
    /// 1-based, of `runs`.
    pub run: usize,
    pub runs: usize,
    /// Where the run stands among the invocation's: trial, probe.
    pub at: Position,
    /// The plan's index of the run.
    pub index: usize,
    pub label: &'a str,
    pub phase: ProgressPhase,
    /// Measured records handed to the client (moves in batches of a few hundred).
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    /// The rate the schedule asks for now (records/s); None at an unlimited rate.
    pub target_rate: Option<f64>,
    /// Since the measured phase started (since connecting, in warm-up); once every record is
    /// reported, the time that took (the consumers' drain after it is not sending).
    pub elapsed: Duration,
    /// Latency buckets so far, with `--metrics`.
    pub live: Option<&'a LiveLatency>,
}

/// How often a snapshot is taken.
const TICK: Duration = Duration::from_millis(250);

/// Reports one run's progress until it is told the run is finished (or is dropped: a run that
/// failed says nothing more).
pub(super) struct Ticker {
    task: tokio::task::JoinHandle<()>,
    about: Arc<About>,
}

/// What every snapshot of one run says besides its counters.
struct About {
    sink: ProgressSink,
    shared: Arc<Shared>,
    start: Instant,
    at: Position,
    index: usize,
    label: String,
    rate: RateSpec,
}

impl About {
    /// A snapshot of the live counters: a few relaxed loads, nothing the hot path waits on.
    fn snapshot(&self, phase: ProgressPhase) -> Progress<'_> {
        let sh = &self.shared;
        let measuring = sh.measuring();
        let elapsed = if measuring {
            let since = sh.t0.elapsed().saturating_sub(sh.measure_origin_elapsed());
            sh.sending_time().map_or(since, |d| d.min(since))
        } else {
            self.start.elapsed()
        };
        let phase = match phase {
            ProgressPhase::Producing if !measuring => ProgressPhase::Warmup,
            ProgressPhase::Producing if sh.producers_done.load(Ordering::Relaxed) => {
                ProgressPhase::Draining
            }
            p => p,
        };
        let target_rate = match phase {
            ProgressPhase::Producing => self.rate.rate_at(elapsed.as_secs_f64()),
            ProgressPhase::Warmup => self.rate.rate_at(0.0),
            _ => self.rate.rate_at(f64::INFINITY),
        };
        Progress {
            run: self.at.number,
            runs: self.at.of,
            at: self.at,
            index: self.index,
            label: &self.label,
            phase,
            sent: sh.sent.load(Ordering::Relaxed),
            acked: sh.acked.load(Ordering::Relaxed),
            failed: sh.failed.load(Ordering::Relaxed),
            target_rate,
            elapsed,
            live: sh.live.as_ref(),
        }
    }
}

/// Where a run stands among the runs an invocation executes: the one place a run's number is
/// counted from 1. With `--only` it is the position among the selected runs, not the plan's
/// index (that stays the run's identity everywhere else).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Position {
    /// From 1.
    pub number: usize,
    pub of: usize,
    /// Trial t (from 1) of n, when the run is repeated.
    pub trial: Option<(u32, u32)>,
    /// Probe k (from 1) of a capacity search, and its rate (records/s).
    pub probe: Option<(u32, f64)>,
}

impl Ticker {
    /// From connecting on: warm-up snapshots first, then the measured phase's.
    pub(super) fn start(
        sink: ProgressSink,
        shared: Arc<Shared>,
        at: Position,
        rp: &crate::plan::RunPlan,
    ) -> Ticker {
        let about = Arc::new(About {
            sink,
            shared,
            start: Instant::now(),
            at,
            index: rp.index,
            label: rp.label.clone(),
            rate: rp.workload.rate.clone(),
        });
        let a = about.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(TICK);
            loop {
                tick.tick().await;
                (a.sink)(&a.snapshot(ProgressPhase::Producing));
            }
        });
        Ticker { task, about }
    }

    /// The last snapshot, with the run's final counts.
    pub(super) fn finish(self) {
        self.task.abort();
        (self.about.sink)(&self.about.snapshot(ProgressPhase::Finished));
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.task.abort();
    }
}
