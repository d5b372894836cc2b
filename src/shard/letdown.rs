//! How a shard let a sharded run down, as the collector saw it, and why the collector refuses
//! a shard's hello: typed, each worded in one `Display`.

use super::error::ShardError;
use crate::plan::RunNo;

/// Why the collector refuses a shard (sent to it in a `refused` message, and reported).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("it speaks control protocol {theirs}, the collector {ours}")]
    Version { theirs: u32, ours: u32 },
    #[error("it runs as shard {shard} of {shards}, the collector waits for {expected} shards")]
    Count {
        shard: u32,
        shards: u32,
        expected: u32,
    },
    #[error(
        "it runs another scenario (digest {theirs} against the collector's {ours}): every \
         shard and the collector need the same files"
    )]
    Scenario { theirs: String, ours: String },
    #[error("it runs at --scale {theirs}, the collector at --scale {ours}")]
    Scale { theirs: f64, ours: f64 },
    #[error("shard {shard} started twice (on {first} and on {second})")]
    Twice {
        shard: u32,
        first: String,
        second: String,
    },
}

/// What a shard did not do in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Missed {
    #[error("was not ready for run {} by the deadline", .0 + 1)]
    Ready(usize),
    #[error("did not finish run {}'s warm-up by the deadline", .0 + 1)]
    Warmup(usize),
    #[error("sent no result of run {} before the deadline", .0 + 1)]
    Result(usize),
}

/// How a shard let the run down; the collector names it `shard I` before this.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Letdown {
    #[error("refused: {0}")]
    Refused(Refusal),
    /// Its result of run `run` came in parts that do not fit, or do not read.
    #[error("run {}: {error}", RunNo::of(.run))]
    Result { run: usize, error: ShardError },
    /// It said it cannot go on (at run `run`, if at one).
    #[error("reported a failure: {}{reason}", at(*.run))]
    Failed { run: Option<usize>, reason: String },
    /// It missed a deadline; on the host it said hello from, if it did.
    #[error("{missed}{}", on(.host.as_deref()))]
    Missed {
        missed: Missed,
        host: Option<String>,
    },
}

fn at(run: Option<usize>) -> String {
    run.map(|r| format!("run {}: ", r + 1)).unwrap_or_default()
}

fn on(host: Option<&str>) -> String {
    host.map(|h| format!(" (on {h})")).unwrap_or_default()
}
