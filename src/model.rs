//! The typed scenario: what the check stage produces and everything after it consumes.
//! Durations, sizes and rates are types; every matrix cell or step is already lowered to a
//! concrete [`RunSpec`], so nothing past the check stage parses strings or units.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::source::Span;

mod assertion;
pub mod capacity;
pub mod client;
pub(crate) mod fault;
mod metric;
mod props;
mod rate;
mod schema;
mod seconds;
pub mod share;
mod size;

use seconds::{duration_opt, duration_secs};

pub use assertion::{Assertion, BinOp, BrokerPick, Clause, CmpOp, Expr, Test};
pub use capacity::CapacitySearch;
pub use client::{ClientKind, ClientRelease, Side, FRANZ_GO_VERSION, JAVA_DEFAULT_VERSION};
pub use fault::{BrokerTarget, Fault, FaultAction};
pub use metric::{LatencyKind, Metric, Stat, Unit};
pub use props::{is_secret, Prop, Props, CONSUMER_GROUP_CONFIGS, LIBRDKAFKA_SENSITIVE, MASK};
pub use rate::{RateSegment, RateSpec};
pub use schema::SchemaPayload;
pub use share::{Ack, AckClass, AckMode, ShareSpec};
#[cfg(test)]
pub(crate) use size::testing as size_testing;
pub use size::{
    json_smallest, Bin, PayloadSize, SizeDist, SizeShape, SizeTable, Slot, LARGEST_PAYLOAD,
};

/// A typed scalar, as written in the scenario (`5ms`, `1KiB`, `zstd`, `8000/min`): what a
/// `syntax::Value` becomes once its unit is known.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    Number(f64),
    Duration(Duration),
    Size(u64),
    /// Messages per second.
    Rate(f64),
    /// Bytes per second.
    ByteRate(f64),
    /// `10x` → 10.0, `50%` → 0.5.
    Ratio(f64),
    Word(String),
    Str(String),
}

impl Scalar {
    pub fn kind_name(&self) -> &'static str {
        match self {
            Scalar::Number(_) => "a number",
            Scalar::Duration(_) => "a duration",
            Scalar::Size(_) => "a size",
            Scalar::Rate(_) => "a rate",
            Scalar::ByteRate(_) => "a byte rate",
            Scalar::Ratio(_) => "a ratio",
            Scalar::Word(_) => "a word",
            Scalar::Str(_) => "a string",
        }
    }
}

/// One axis of comparison: a matrix variable, or `step` for steps and ladders.
#[derive(Clone, Debug, Serialize)]
pub struct Dimension {
    pub name: String,
    /// Values as written, in order.
    pub values: Vec<String>,
}

/// A coordinate of a cell: `codec = zstd`.
#[derive(Clone, Debug)]
pub struct Coord {
    pub dim: String,
    pub value: Scalar,
    /// As written in the file; used in labels and topic names.
    pub text: String,
}

/// A checked scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub dims: Vec<Dimension>,
    pub cells: Vec<Cell>,
    pub assertions: Vec<Assertion>,
    /// `repeat = N`: every run is run N times (trials), interleaved; 1 runs each once. With
    /// `repeat = auto(…)`, its `max`.
    pub repeat: u32,
    /// `repeat = auto(±5%, max 20)`: trials until the judged figures are known well enough.
    pub repeat_auto: Option<AutoRepeat>,
    /// What the check stage noted about a valid scenario (`Severity::Note`): said by `check`
    /// and `plan`, never a reason to refuse it.
    pub notes: Vec<crate::diagnostic::Diagnostic>,
}

/// `repeat = auto(±5%, max 20)`: trials of every run until each judged figure's median has an
/// interval within ±`within` of it, at most `max` (`measure::sequential` has the rule).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AutoRepeat {
    /// The interval's half-width the trials must reach, relative to the median (0.05).
    pub within: f64,
    /// The most trials of a run.
    pub max: u32,
}

impl AutoRepeat {
    /// The first look's trials, so the least `max` may be: fewer cannot give an interval at a
    /// look's adjusted level (99 % for five looks needs 8 trials).
    pub const FIRST_LOOK: u32 = 8;

    /// `repeat = auto` alone.
    pub const DEFAULT: AutoRepeat = AutoRepeat {
        within: 0.05,
        max: 20,
    };
}

/// One concrete run: a matrix cell, a step, or the single run of a scenario with neither.
#[derive(Clone, Debug)]
pub struct Cell {
    pub coords: Vec<Coord>,
    pub spec: RunSpec,
}

impl Cell {
    /// `linger=5ms codec=zstd`, or the step name alone, or `run` when there is nothing to vary.
    pub fn label(&self) -> String {
        if self.coords.is_empty() {
            return "run".to_string();
        }
        self.coords
            .iter()
            .map(|c| {
                if c.dim == "step" {
                    c.text.clone()
                } else {
                    format!("{}={}", c.dim, c.text)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub fn coord(&self, dim: &str) -> Option<&Coord> {
        self.coords.iter().find(|c| c.dim == dim)
    }
}

/// The longest topic name Kafka accepts.
pub const TOPIC_NAME_MAX: usize = 249;

/// Hex digits of the run id `plan` appends to a created topic's name (`-1a2b3c`), so that the
/// check stage can hold names to [`TOPIC_NAME_MAX`] with the suffix included.
pub const RUN_ID_DIGITS: usize = 6;
/// The run suffix: a `-` and the run id.
pub const RUN_SUFFIX_LEN: usize = RUN_ID_DIGITS + 1;

/// The most topics one run may spread over (`topics = N`): OpenMessaging Benchmark's many-topic
/// workloads stop at a few thousand; beyond ten thousand a run tests the controller, and a
/// stray digit is more likely than intent.
pub const TOPICS_MAX: u32 = 10_000;

/// The name of topic `i` of a run's `n`: `base` itself for one topic, else `base-i` with `i`
/// zero-padded to the width of `n - 1`, so the names sort in their order.
pub fn nth_topic(base: &str, i: u32, n: u32) -> String {
    if n <= 1 {
        return base.to_string();
    }
    let width = (n - 1).to_string().len();
    format!("{base}-{i:0width$}")
}

/// Characters `nth_topic` adds to a name for `n` topics (`-` and the index).
pub fn topic_index_len(n: u32) -> usize {
    if n <= 1 {
        0
    } else {
        1 + (n - 1).to_string().len()
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct TopicSpec {
    /// The name as templated for this cell, before the run suffix.
    pub name: String,
    /// Where the name was written, for diagnostics about it.
    #[serde(skip)]
    pub name_span: Option<Span>,
    pub partitions: i32,
    pub replication: i32,
    /// Topic-level configs the topic is created with.
    pub configs: Props,
    /// Configs written for an `existing` topic: it is not created, so they are not applied;
    /// `plan` moves them here so that every output says so.
    #[serde(skip_serializing_if = "no_props")]
    pub ignored_configs: Props,
    /// Use a topic that already exists: never created, written only because the file says so,
    /// never deleted.
    pub existing: bool,
}

impl TopicSpec {
    /// Whether the topic's segments move to remote storage (KIP-405), leaving local disk.
    pub fn tiered(&self) -> bool {
        self.configs
            .get("remote.storage.enable")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }
}

fn no_props(p: &Props) -> bool {
    p.0.is_empty()
}

#[derive(Clone, Debug, Serialize)]
pub struct RunSpec {
    pub bootstrap: String,
    /// Client-wide properties from `cluster { }` (security and the like).
    pub client: Props,
    pub topic: TopicSpec,
    pub producer: Props,
    /// Present when the scenario declares a consumer; turns on end-to-end latency.
    pub consumer: Option<Props>,
    pub workload: Workload,
    /// The fault timeline (`faults { }`), relative to the start of the measured phase.
    pub faults: Vec<Fault>,
    /// `capacity { }`: the run is a search for the highest rate within its SLO; the
    /// workload's rate and length are then each probe's.
    pub capacity: Option<CapacitySearch>,
    /// `share { }`: a share group (KIP-932) of `workload.consumers` members reads the run
    /// instead of librdkafka consumers (`consumer` is then Some and empty).
    pub share: Option<ShareSpec>,
    /// `cluster { lost_after }`: how long no broker may answer before the run ends as
    /// *cluster lost*; a shorter silence is measured unavailability.
    pub lost_after: Duration,
    /// The client library each side runs on (`client = java` in `producer { }` or
    /// `consumer { }`); librdkafka unless the scenario says.
    pub producer_client: ClientKind,
    pub consumer_client: ClientKind,
    /// Each side's client release: the Java client's as the scenario chose it (`client =
    /// java(version: "3.9.1")`, else [`JAVA_DEFAULT_VERSION`]), the others' as kafkabench
    /// pins them (librdkafka built in, franz-go in the Go worker's go.mod).
    pub producer_version: String,
    pub consumer_version: String,
}

/// How long no broker may answer before a run ends as *cluster lost*, when the scenario does
/// not say: longer than a broker's restart (a one-broker dev cluster, a rolling restart, a
/// long GC pause) and than the 30 s `message.timeout.ms` kafkabench sets, so records time out
/// and count as failed on their own clock first.
pub const DEFAULT_LOST_AFTER: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, Serialize)]
pub struct Workload {
    /// Stop after this many messages (all producers together).
    pub messages: Option<u64>,
    /// Stop after this long.
    #[serde(with = "duration_opt")]
    pub duration: Option<Duration>,
    pub warmup: Option<Warmup>,
    pub rate: RateSpec,
    /// At most this many records awaiting their ack per producer (closed loop); `1` is seed 004's
    /// one-at-a-time sending.
    pub in_flight: Option<u32>,
    /// A record stops being in flight when the consumer reads it, not when it is acked: one
    /// record end to end at a time, so a consumer-side wait is paid in full by every record.
    pub in_flight_until_consumed: bool,
    /// Producer clients running in parallel, each on its own thread.
    pub producers: u32,
    pub payload: PayloadSpec,
    pub key: KeySpec,
    pub headers: Vec<(String, String)>,
    /// `consumers = N`: N consumer clients in one group (subscribe, not assign), each on its
    /// own thread. None: the single verification consumer with partitions assigned by hand
    /// (when the scenario has a `consumer { }`).
    pub consumers: Option<u32>,
    /// How a group's consumers commit their offsets.
    pub commit: CommitPolicy,
    /// `backlog = M`: records written before the clock starts (not measured), which the
    /// consumers then drain; `backlog = existing`: what the topic already holds.
    pub backlog: Option<Backlog>,
    /// `transaction = 1000 messages | 100ms`, with an optional abort fraction.
    pub transaction: Option<TxnSpec>,
    /// `topics = N`: the run spreads its producers and consumers over N topics of one
    /// configuration (1 by default).
    pub topics: u32,
    /// `tombstones = 5%`: this fraction of the records are tombstones (a key with a null
    /// value), which delete the key from a compacted topic.
    pub tombstones: f64,
    /// `compaction = verify`: after the run, compaction is forced and the topic read whole to
    /// check what it kept (`run::compaction`).
    pub compaction: Option<CompactionCheck>,
    /// `seed = 42`: the run's seed, from which every generator (payloads, keys, tombstones,
    /// sizes) draws, so a run can be repeated exactly and two clients send the same records.
    /// None until `plan` derives one from the run id (drawn from the clock) when the scenario
    /// gives none: every run of a plan, each trial and each shard draws from the same seed.
    pub seed: Option<u64>,
}

/// The largest `seed`: 2^53 − 1, the largest whole number a JSON reader's double holds
/// exactly, so a seed copied from a result file is the seed that ran.
pub const SEED_MAX: u64 = (1 << 53) - 1;

/// `compaction = verify(within: 2m)`: the after-run check of a compacted topic, bounded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompactionCheck {
    /// The longest the check waits for the cleaner's passes.
    #[serde(with = "duration_secs")]
    pub within: Duration,
}

impl CompactionCheck {
    /// How long the check waits unless the scenario says: two cleaner passes and
    /// `delete.retention.ms` between them, with the broker's 15 s cleaner backoff.
    pub const WITHIN: Duration = Duration::from_secs(120);
}

/// How a group's consumers commit offsets.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CommitPolicy {
    /// librdkafka's auto commit every `interval`, of offsets stored once a record is processed
    /// (what most applications do).
    Auto {
        #[serde(with = "duration_secs")]
        interval: Duration,
    },
    /// A commit after every `records` records read by a consumer, synchronous or not.
    Every { records: u64, sync: bool },
    /// No commits.
    Off,
}

impl Default for CommitPolicy {
    fn default() -> Self {
        CommitPolicy::Auto {
            interval: Duration::from_secs(5),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backlog {
    /// Pre-fill the topic with this many records, unmeasured, before the clock starts.
    Records(u64),
    /// `cold(N)`: pre-fill as `Records`, then wait (up to `within`) until the records have
    /// left the brokers' local disks for remote storage (tiered storage, KIP-405), so the
    /// consumers read them from there.
    Cold {
        records: u64,
        #[serde(with = "duration_secs")]
        within: Duration,
    },
    /// The topic's existing records are the backlog (a topic declared `existing`).
    Existing,
}

impl Backlog {
    /// How long a cold backlog waits for remote storage unless the scenario says.
    pub const COLD_WITHIN: Duration = Duration::from_secs(120);

    /// The records written before the clock starts (None: the topic's own).
    pub fn records(&self) -> Option<u64> {
        match self {
            Backlog::Records(n) | Backlog::Cold { records: n, .. } => Some(*n),
            Backlog::Existing => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TxnSpec {
    pub size: TxnSize,
    /// The fraction of transactions aborted, decided by the schedule (transaction index),
    /// so the verifier knows which.
    pub abort: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnSize {
    /// Commit after this many records of one producer.
    Messages(u64),
    /// Commit after this long.
    #[serde(with = "duration_secs")]
    Duration(Duration),
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    Messages(u64),
    #[serde(with = "duration_secs")]
    Duration(Duration),
    /// `warmup = auto(max: 30s)`: until the rate has settled, at most `max`.
    Auto {
        #[serde(with = "duration_secs")]
        max: Duration,
    },
}

impl Warmup {
    /// `warmup = auto`'s bound when none is given.
    pub const AUTO_MAX: Duration = Duration::from_secs(30);
    /// How often an automatic warm-up looks at the rate, and how many looks in a row must
    /// agree: the fewest seconds an automatic warm-up takes is their product.
    pub const AUTO_SLICE: Duration = Duration::from_secs(1);
    pub const AUTO_LOOKS: usize = 3;
    /// The looks agree when their acknowledged counts lie within this share of their mean,
    /// and each acknowledged this share of what it sent (it kept up).
    pub const AUTO_TOLERANCE: f64 = 0.05;

    /// The longest it can take.
    pub fn bound(&self) -> Option<Duration> {
        match self {
            Warmup::Duration(d) => Some(*d),
            Warmup::Auto { max } => Some(*max),
            Warmup::Messages(_) => None,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PayloadSpec {
    /// Fresh random bytes per record; `compressibility` of each record is a repeated filler.
    Random {
        size: PayloadSize,
        compressibility: f64,
    },
    /// A unique JSON object per record (seq, id, ts, event, random hex filler) padded to `size`.
    Json { size: PayloadSize, event: String },
    /// Lines of a file, cycled.
    File {
        path: PathBuf,
        #[serde(skip)]
        lines: Arc<Vec<Vec<u8>>>,
    },
    /// The same bytes for every record (what kafka-producer-perf-test sends); with sizes
    /// drawn, the first `size` bytes of them.
    Constant {
        #[serde(skip)]
        bytes: Arc<Vec<u8>>,
        size: PayloadSize,
    },
    /// Records of a schema (`avro(...)`, `protobuf(...)`, `json_schema(...)`).
    Schema(SchemaPayload),
}

impl PayloadSpec {
    /// Nominal bytes per record, for display (a distribution's mean).
    pub fn nominal_size(&self) -> usize {
        match self {
            PayloadSpec::Random { size, .. }
            | PayloadSpec::Json { size, .. }
            | PayloadSpec::Constant { size, .. } => size.mean().round() as usize,
            PayloadSpec::File { lines, .. } => {
                lines.iter().map(|l| l.len()).sum::<usize>() / lines.len().max(1)
            }
            PayloadSpec::Schema(s) => s.nominal_size(),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySpec {
    None,
    /// The record's sequence number, in decimal.
    Sequence,
    /// Uniform over `0..n`.
    Uniform(u64),
    /// Zipf over `0..n` with exponent `s`: a few hot keys.
    Zipf {
        n: u64,
        s: f64,
    },
    Fixed(String),
    /// Keys of a schema (`key = avro("key.avsc")`).
    Schema(SchemaPayload),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Number(n) => write!(f, "{n}"),
            Scalar::Duration(d) => write!(f, "{d:?}"),
            Scalar::Size(b) => write!(f, "{b}B"),
            Scalar::Rate(r) => write!(f, "{r}/s"),
            Scalar::ByteRate(r) => write!(f, "{r}B/s"),
            Scalar::Ratio(r) => write!(f, "{r}x"),
            Scalar::Word(w) | Scalar::Str(w) => f.write_str(w),
        }
    }
}
