//! Live progress of a run, as snapshots handed to whoever renders them (the command layer).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::shared::Shared;

/// Receives progress snapshots; called from the orchestrator's tasks.
pub(crate) type ProgressSink = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Where one run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgressPhase {
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
    pub label: &'a str,
    pub phase: ProgressPhase,
    pub acked: u64,
    pub failed: u64,
    /// Since the measured phase started; once every record is reported, the time that took
    /// (the consumers' drain after it is not sending).
    pub elapsed: Duration,
}

/// How often a snapshot is taken.
const TICK: Duration = Duration::from_millis(250);

/// Reports one run's progress until it is told the run is finished (or is dropped: a run that
/// failed says nothing more).
pub(super) struct Ticker {
    task: tokio::task::JoinHandle<()>,
    sink: ProgressSink,
    shared: Arc<Shared>,
    start: Instant,
    run: usize,
    runs: usize,
    label: String,
}

/// A snapshot of the live counters: a few relaxed loads, nothing the hot path waits on.
fn snapshot<'a>(
    shared: &Shared,
    start: Instant,
    (run, runs, label): (usize, usize, &'a str),
    phase: ProgressPhase,
) -> Progress<'a> {
    Progress {
        run,
        runs,
        label,
        phase,
        acked: shared.acked.load(Ordering::Relaxed),
        failed: shared.failed.load(Ordering::Relaxed),
        elapsed: shared
            .sending_time()
            .map_or(start.elapsed(), |d| d.min(start.elapsed())),
    }
}

/// Where a run stands among the runs an invocation executes: the one place a run's number is
/// counted from 1. With `--only` it is the position among the selected runs, not the plan's
/// index (that stays the run's identity everywhere else).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Position {
    /// From 1.
    pub number: usize,
    pub of: usize,
}

impl Ticker {
    pub(super) fn start(
        sink: ProgressSink,
        shared: Arc<Shared>,
        at: Position,
        label: String,
    ) -> Ticker {
        let (run, runs) = (at.number, at.of);
        let (s, l, sh) = (sink.clone(), label.clone(), shared.clone());
        let start = Instant::now();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(TICK);
            loop {
                tick.tick().await;
                let phase = if sh.producers_done.load(Ordering::Relaxed) {
                    ProgressPhase::Draining
                } else {
                    ProgressPhase::Producing
                };
                s(&snapshot(&sh, start, (run, runs, &l), phase));
            }
        });
        Ticker {
            task,
            sink,
            shared,
            start,
            run,
            runs,
            label,
        }
    }

    /// The last snapshot, with the run's final counts.
    pub(super) fn finish(self) {
        self.task.abort();
        (self.sink)(&snapshot(
            &self.shared,
            self.start,
            (self.run, self.runs, &self.label),
            ProgressPhase::Finished,
        ));
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.task.abort();
    }
}
