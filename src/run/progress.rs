//! Live progress of a run, as snapshots handed to whoever renders them (the command layer).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::shared::Shared;

/// Receives progress snapshots; called from the orchestrator's tasks.
pub type ProgressSink = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Where one run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressPhase {
    Producing,
    /// The producers are done; delivery reports and the consumer are catching up.
    Draining,
    /// The run's threads are done: nothing more will be reported for it.
    Finished,
}

/// One snapshot of a run in progress.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    /// 1-based, of `runs`.
    pub run: usize,
    pub runs: usize,
    pub label: &'a str,
    pub phase: ProgressPhase,
    pub sent: u64,
    pub acked: u64,
    /// Since the measured phase started.
    pub elapsed: Duration,
}

/// How often a snapshot is taken.
const TICK: Duration = Duration::from_millis(250);

/// Reports one run's progress until it is told the run is finished.
pub struct Ticker {
    task: tokio::task::JoinHandle<()>,
    sink: ProgressSink,
    run: usize,
    runs: usize,
    label: String,
}

impl Ticker {
    pub fn start(
        sink: ProgressSink,
        shared: Arc<Shared>,
        run: usize,
        runs: usize,
        label: String,
    ) -> Ticker {
        let (s, l) = (sink.clone(), label.clone());
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(TICK);
            let start = Instant::now();
            loop {
                tick.tick().await;
                let phase = if shared.producers_done.load(Ordering::Relaxed) {
                    ProgressPhase::Draining
                } else {
                    ProgressPhase::Producing
                };
                s(&Progress {
                    run,
                    runs,
                    label: &l,
                    phase,
                    sent: shared.sent.load(Ordering::Relaxed),
                    acked: shared.acked.load(Ordering::Relaxed),
                    elapsed: start.elapsed(),
                });
            }
        });
        Ticker {
            task,
            sink,
            run,
            runs,
            label,
        }
    }

    pub fn finish(self) {
        self.task.abort();
        (self.sink)(&Progress {
            run: self.run,
            runs: self.runs,
            label: &self.label,
            phase: ProgressPhase::Finished,
            sent: 0,
            acked: 0,
            elapsed: Duration::ZERO,
        });
    }
}
