//! Why a sharded run could not go on: the shard stage's error, all its wording in one
//! `Display`. The run stage carries it as `RunError::Coordination`.

use rdkafka::error::KafkaError;

use crate::measure::merge::MergeError;
use crate::plan::RunNo;
use crate::run::{Phase, RunError};

#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// `--shard` is not `I/N`.
    #[error("write I/N (e.g. 0/3: shard 0 of 3)")]
    NotIOverN,
    #[error("the shard count `{0}` must be from 1 to 1024")]
    Count(String),
    #[error("no shard index before `/` and JOB_COMPLETION_INDEX is not set")]
    NoIndex,
    #[error("the shard index `{index}` of {count} shards must be from 0 to {}", .count - 1)]
    Index { index: String, count: u32 },
    /// A topic with fewer partitions than shards: every shard needs partitions of its own.
    #[error(
        "the topic has {partitions} partition{} for {shards} shards: every shard writes and \
         reads partitions of its own, so a sharded run needs at least as many partitions as \
         shards",
        if *.partitions == 1 { "" } else { "s" }
    )]
    TooFewPartitions { partitions: i32, shards: u32 },
    /// The cluster did not create the control topic, or give it a leader (the admin's words).
    #[error("{0}")]
    ControlTopic(String),
    #[error("cannot create the control topic's {client}: {source}")]
    Client {
        client: &'static str,
        source: KafkaError,
    },
    #[error("cannot read the control topic {topic}: {source}")]
    Unreadable { topic: String, source: KafkaError },
    /// The control topic's one partition could not be named for reading.
    #[error("{0}")]
    Partition(KafkaError),
    #[error("reading the control topic: {0}")]
    Reading(KafkaError),
    #[error("cannot send to the control topic: {0}")]
    Send(KafkaError),
    #[error("the control topic did not take a message: {0}")]
    NotTaken(KafkaError),
    /// A message that cannot be written as JSON (not expected: every field is plain data).
    #[error("{0}")]
    Encode(serde_json::Error),
    #[error("the control topic is not open")]
    NotOpen,
    #[error("the collector stopped the run: {0}")]
    Aborted(String),
    #[error("the collector refused this shard: {0}")]
    Refused(String),
    #[error(
        "the collector named no round {round} in time (is `kafkabench collect` running with \
         this --run-id?)"
    )]
    NoRound { round: u32 },
    #[error("interrupted at the barrier")]
    InterruptedAtBarrier,
    #[error(
        "no start from the collector before the deadline (round {round}, {})",
        match .phase { Phase::Warmup => "before warm-up", Phase::Measure => "before the measured phase" }
    )]
    NoStart { round: u32, phase: Phase },
    /// A run id used before whose control topic was left behind (a collector that was killed):
    /// its messages would be taken for this run's.
    #[error(
        "the control topic {topic} already holds another collector's messages: run id \
         {run_id} was used before and its run did not end cleanly; start the shards and the \
         collector again with a new --run-id (or delete that topic)"
    )]
    AnotherCollector { topic: String, run_id: String },
    /// A result's part whose numbers do not fit (untrusted input).
    #[error("part {part} of {parts}: not a result's part")]
    NotAPart { part: u32, parts: u32 },
    #[error("its result cannot be read: {0}")]
    ResultUnreadable(serde_json::Error),
    /// A result file holds a run its scenario does not plan.
    #[error("{file} holds run {} `{label}`, which the scenario does not plan", RunNo::of(.run))]
    NotPlanned {
        file: String,
        run: usize,
        label: String,
    },
    /// A result file's run cannot be merged with the others' (`measure::merge` says why).
    #[error("{file}: run {} ({label}): {source}", RunNo::of(.run))]
    Unmergeable {
        file: String,
        run: usize,
        label: String,
        source: Box<MergeError>,
    },
}

impl From<ShardError> for RunError {
    fn from(e: ShardError) -> RunError {
        RunError::Coordination(Box::new(e))
    }
}
