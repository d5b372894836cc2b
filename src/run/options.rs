//! How the caller asks for runs to be carried out: the options every stage of a run reads.

use std::sync::Arc;
use std::time::Duration;

use super::faults::LiveFaults;
use super::interrupt::LiveTopic;
use super::progress::ProgressSink;
use super::shard::{Coordination, Rounds};

/// The time series' interval when none is asked for.
pub(crate) const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

#[derive(Clone)]
pub(crate) struct RunOptions {
    pub keep_topics: bool,
    /// Where live progress goes, a few times a second; None for none.
    pub progress: Option<ProgressSink>,
    /// The topic created and not yet deleted, for whoever ends the process early.
    pub live_topic: LiveTopic,
    /// Width of the time series' intervals (`--interval`).
    pub interval: Duration,
    /// The faults in force, for whoever ends the process early (they are undone first).
    pub live_faults: LiveFaults,
    /// This process is one shard of a sharded run (`run --shard I/N`): it runs its share,
    /// creates and deletes no topic, and meets the collector at every barrier.
    pub shard: Option<Arc<dyn Coordination>>,
    /// Another carries out each round (a sharded run's collector): this process plans the
    /// rounds (trials, a capacity search's probes) and judges what comes back.
    pub rounds: Option<Arc<dyn Rounds>>,
    /// Count latencies into live buckets too, for `--metrics` (progress snapshots carry them).
    pub live_latency: bool,
    /// Keep latency by due time in every run (`measure::due`), not only in those with faults
    /// or a backlog: another run of the plan drains a backlog, to be compared with these.
    pub by_due: bool,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            keep_topics: false,
            progress: None,
            live_topic: LiveTopic::default(),
            interval: DEFAULT_INTERVAL,
            live_faults: LiveFaults::default(),
            shard: None,
            rounds: None,
            live_latency: false,
            by_due: false,
        }
    }
}
