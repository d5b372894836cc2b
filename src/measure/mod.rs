//! Stage measure: what one run measured, and how the threads' raw recordings become figures.
//! Latencies are recorded into per-thread HdrHistograms (nanoseconds, 3 significant digits)
//! and merged once at the end; nothing is stored per sample. Figures are derived here and
//! only here; `report` prints them.

pub mod broker_config;
pub mod capacity;
pub mod changepoint;
pub mod client;
pub(crate) mod clock;
pub(crate) mod codec;
pub mod compaction;
pub(crate) mod consume;
mod derive;
pub(crate) mod due;
pub mod environment;
pub(crate) mod fault;
pub(crate) mod flat_histogram;
pub(crate) mod intervals;
pub(crate) mod merge;
pub mod outage;
pub mod placed;
pub(crate) mod recording;
pub mod run_recording;
pub mod sequential;
pub(crate) mod series;
pub mod share;
pub mod sizes;
pub(crate) mod stalls;
pub mod stats;
pub mod status;
pub mod steady;
pub mod timeline;
pub(crate) mod topics;
pub mod trials;
pub(crate) mod txn;

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub use capacity::{CapacityFigures, GeneratorLoad};
pub use consume::{
    ConsumeFigures, ConsumerRecording, ReadPlaceFigures, ReadPlaces, ReadSums, ReaderQueue,
};
pub use derive::{account, ProducerRecording, Recordings, SeqSet};
pub use environment::Environment;
pub use fault::{
    drain_metric, pair_drains, AckTimeline, Beside, ChurnEvent, FaultFigures, FaultRecord,
    FaultSums, PhaseFigures,
};
pub use intervals::{IntervalRecorder, IntervalRecording};
pub use placed::{PlaceFigures, Placed};
pub use recording::{ProducerStats, RawSums, Recording, SendSpan};
pub use series::{Intervals, SeriesPoint, TimeSeries};
pub use share::{InDoubt, ShareFigures, ShareRecording};
pub use sizes::SizeSummary;
pub use status::RunStatus;
pub use topics::{TopicFigures, TopicTally};
pub use txn::{TxnFigures, TxnRecording};

use crate::model::{LatencyKind, Metric, Props, RateSpec, Stat, TopicSpec};

/// Highest latency a histogram tracks: one hour, in nanoseconds.
const MAX_NS: u64 = 3_600_000_000_000;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, 3).expect("static histogram bounds are valid")
}

/// Records saturating at the histogram's range instead of failing.
#[inline]
pub fn record(h: &mut Histogram<u64>, ns: u64) {
    let _ = h.record(ns.clamp(1, MAX_NS));
}

/// Percentile summary of one latency distribution, in milliseconds for humans and JSON, with
/// the whole histogram (`codec`) so a saved run can be re-analysed and merged exactly.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(try_from = "LatencySummaryFile")]
pub struct LatencySummary {
    pub count: u64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// HdrHistogram V2 deflate, base64 (nanoseconds); None when nothing was recorded.
    pub histogram: Option<String>,
    #[serde(skip)]
    hist: Option<Histogram<u64>>,
}

/// A summary as a result file holds it; its histogram is decoded on reading.
#[derive(Deserialize)]
struct LatencySummaryFile {
    count: u64,
    min_ms: f64,
    mean_ms: f64,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    p999_ms: f64,
    max_ms: f64,
    #[serde(default)]
    histogram: Option<String>,
}

impl TryFrom<LatencySummaryFile> for LatencySummary {
    type Error = String;
    fn try_from(f: LatencySummaryFile) -> Result<Self, String> {
        let hist = f.histogram.as_deref().map(codec::decode).transpose()?;
        Ok(LatencySummary {
            count: f.count,
            min_ms: f.min_ms,
            mean_ms: f.mean_ms,
            p50_ms: f.p50_ms,
            p90_ms: f.p90_ms,
            p99_ms: f.p99_ms,
            p999_ms: f.p999_ms,
            max_ms: f.max_ms,
            histogram: f.histogram,
            hist,
        })
    }
}

impl LatencySummary {
    pub fn from_histogram(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        LatencySummary {
            count: h.len(),
            min_ms: ms(h.min()),
            mean_ms: h.mean() / 1e6,
            p50_ms: ms(h.value_at_quantile(0.50)),
            p90_ms: ms(h.value_at_quantile(0.90)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            p999_ms: ms(h.value_at_quantile(0.999)),
            max_ms: ms(h.max()),
            histogram: Some(codec::encode(h)),
            hist: Some(h.clone()),
        }
    }

    /// The whole distribution, when something was recorded (live or decoded from a file).
    pub fn histogram(&self) -> Option<&Histogram<u64>> {
        self.hist.as_ref()
    }

    /// Any statistic, in seconds. None when nothing was recorded.
    pub fn stat_secs(&self, s: Stat) -> Option<f64> {
        let h = self.hist.as_ref()?;
        let ns = match s {
            Stat::Percentile(p) => h.value_at_quantile(p / 100.0) as f64,
            Stat::Min => h.min() as f64,
            Stat::Max => h.max() as f64,
            Stat::Mean => h.mean(),
        };
        Some(ns / 1e9)
    }
}

/// Producer internals from librdkafka statistics over the measured phase.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Internals {
    /// Average compressed batch (MessageSet) size in bytes.
    pub batch_bytes_avg: Option<f64>,
    /// Average records per batch.
    pub batch_records_avg: Option<f64>,
    /// Records per Produce request.
    pub records_per_request: Option<f64>,
    /// Uncompressed key+value bytes over compressed batch bytes.
    pub wire_ratio: Option<f64>,
    pub produce_requests: u64,
    /// A worker's client's own figures by its metric names (`compression-rate-avg`,
    /// `bufferpool-wait-time-ns-total`, …), over the measured phase; empty for librdkafka.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub client: BTreeMap<String, f64>,
}

/// Delivery as verified by the consumer.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Delivery {
    /// Distinct measured records read back.
    pub consumed: u64,
    /// Acked records never read back within the drain time; None when the run was cut short
    /// (interrupted, cluster lost): the consumer stopped with it, so what it did not read is
    /// not known to be lost.
    pub lost: Option<u64>,
    /// The run was cut short, so these figures cover only what was read before it stopped.
    pub incomplete: bool,
    /// Records reported failed (e.g. timed out) that were written all the same: read back.
    pub failed_but_delivered: u64,
    pub duplicated: u64,
    /// Records that arrived before an earlier one of the same producer and partition.
    pub reordered: u64,
}

/// The warm-up `warmup = auto` chose.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutoWarmup {
    /// From the warm-up's start to the measured phase's, seconds.
    pub secs: f64,
    /// The bound it was allowed, seconds.
    pub max_secs: f64,
    /// Whether the rate settled (false: a thread's warm-up ended at the bound).
    pub settled: bool,
}

/// Everything measured for one planned run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunResult {
    pub index: usize,
    pub label: String,
    pub coords: BTreeMap<String, String>,
    pub topic: String,
    /// How the measured phase ended (on disk: `complete`, `cluster_lost`, `error`).
    #[serde(flatten)]
    pub status: RunStatus,
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    pub failed_by_kind: BTreeMap<String, u64>,
    pub queue_full: u64,
    /// Key and value bytes of the acked measured records (the JSON name predates keys).
    #[serde(rename = "payload_bytes")]
    pub key_value_bytes: u64,
    /// The value sizes of the measured records sent, when they vary (a size distribution, a
    /// payload file, a schema); None for one size, and in files of an older kafkabench.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<SizeSummary>,
    pub elapsed_secs: f64,
    /// How far past its planned duration the run finished (the drain of what the cluster
    /// could not take in time); None for runs not bounded by a duration.
    pub schedule_slip_secs: Option<f64>,
    pub throughput_msgs: f64,
    pub throughput_bytes: f64,
    pub target_rate: Option<f64>,
    pub achieved_rate: f64,
    pub ack: LatencySummary,
    pub service: LatencySummary,
    pub send_delay: LatencySummary,
    pub e2e: Option<LatencySummary>,
    pub delivery: Option<Delivery>,
    pub disk_bytes: Option<u64>,
    pub disk_ratio: Option<f64>,
    pub internals: Internals,
    /// The effective client configuration, secrets masked: proof of what was applied.
    pub producer_config: Props,
    pub consumer_config: Option<Props>,
    /// Each side's client and release, and the run's seed (`workload { seed }` repeats its
    /// records); absent in files of an older kafkabench, which ran on librdkafka.
    #[serde(default)]
    pub producer_client: Option<crate::model::ClientRelease>,
    #[serde(default)]
    pub consumer_client: Option<crate::model::ClientRelease>,
    #[serde(default)]
    pub seed: Option<u64>,
    /// The topic as the run created (or found) it.
    #[serde(default)]
    pub topic_config: Option<TopicConfig>,
    /// When the measured phase began, RFC 3339 UTC; the time series' t = 0.
    #[serde(default)]
    pub started_at: Option<String>,
    /// The measured phase interval by interval; None when it was not recorded.
    #[serde(default)]
    pub series: Option<TimeSeries>,
    /// Where the series became steady (`measure::steady`); None when no series was recorded
    /// and in files of an older kafkabench.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_after: Option<steady::SteadyAfter>,
    /// What `warmup = auto` chose; None with any other warm-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_auto: Option<AutoWarmup>,
    /// The read side: consumer groups, backlogs (None without consumers).
    #[serde(default)]
    pub consume: Option<ConsumeFigures>,
    /// Transactions (None without).
    #[serde(default)]
    pub txn: Option<TxnFigures>,
    /// The fault timeline and what it did (None without faults).
    #[serde(default)]
    pub faults: Option<FaultFigures>,
    /// A backlog's drain as a phase: the live records due while it drained, and beside them
    /// the same seconds of the run it is compared with (None without a backlog).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain: Option<PhaseFigures>,
    /// The compacted topic checked after the run (`compaction = verify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<compaction::CompactionFigures>,
    /// The instant the stamps' intended times count from, on the load machine's
    /// CLOCK_MONOTONIC (ns): how another reader on that machine computes end-to-end latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp_origin_monotonic_ns: Option<u64>,
    /// The periods in which no broker answered (`measure::outage`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<outage::Outage>,
    /// Per-topic figures of a run over several topics (empty for one topic).
    #[serde(default)]
    pub topics: Vec<TopicFigures>,
    /// Per broker that acknowledged, by node id (`measure::placed`); empty when not recorded
    /// (a worker client, a file of an older kafkabench).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub brokers: Vec<PlaceFigures>,
    /// Per partition of a run over one topic, by number; empty when not recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PlaceFigures>,
    /// The read side per partition of a run over one topic (`consume::places`); empty
    /// without a librdkafka or Java reader, and in files before version 6.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_partitions: Vec<ReadPlaceFigures>,
    /// Counts per partition over time, the heat map's data (`measure::timeline`); None when
    /// partitions are not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_counts: Option<timeline::PartitionCounts>,
    /// Every side's raw recording, what the figures above are derived from; a reader
    /// derives them again from it (`rederive`).
    #[serde(default)]
    pub recording: run_recording::RunRecording,
    /// Version 2 files kept the producer's and the read side's sums here (`upgrade_v2`
    /// moves them into `recording`); never written.
    #[serde(default, rename = "raw", skip_serializing)]
    pub legacy_raw: Option<RawSums>,
    #[serde(default, rename = "raw_read", skip_serializing)]
    pub legacy_raw_read: Option<ReadSums>,
    /// kafkabench's own CPU over the measured phase (None in files of an older kafkabench);
    /// a merged run's is its busiest shard's, named (`GeneratorLoad::busiest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<GeneratorLoad>,
    /// A capacity search: every probe and what it found (None for a fixed run). The run's
    /// other figures are those of the last probe at the capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Box<CapacityFigures>>,
    /// A share group's figures (KIP-932), when one read the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<ShareFigures>,
    /// The machine that measured it, when it is not the file's: a shard's result as it goes
    /// to its collector (the merged file keeps them all, `shard_environments`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    /// A repeated run (`repeat = N`): every trial. The run's own fields are its median
    /// trial's; `metric` reads counts summed and figures as medians over the trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<Box<trials::Trials>>,
}

/// The effective topic configuration of a run, secrets masked.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TopicConfig {
    pub partitions: i32,
    pub replication: i32,
    /// Topic-level configs it was created with (none for an existing topic).
    pub configs: Props,
    /// Configs written for an existing topic, which were not applied.
    #[serde(default)]
    pub ignored_configs: Props,
    /// An existing topic: used, never created or deleted.
    pub existing: bool,
    /// Its configs as the cluster described them before the run (`broker_config`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective: Option<broker_config::Described>,
}

impl TopicConfig {
    pub fn of(t: &TopicSpec) -> TopicConfig {
        TopicConfig {
            partitions: t.partitions,
            replication: t.replication,
            configs: t.configs.masked(),
            ignored_configs: t.ignored_configs.masked(),
            existing: t.existing,
            effective: None,
        }
    }
}

impl RunResult {
    pub fn elapsed(&self) -> Duration {
        Duration::from_secs_f64(self.elapsed_secs)
    }

    /// A metric in base units (seconds, bytes, per second); None when it was not measured.
    /// Over a repeated run's trials, a count is their sum and any other figure their median.
    pub fn metric(&self, m: Metric) -> Option<f64> {
        match &self.trials {
            Some(t) if !t.results.is_empty() => t.metric(m),
            _ => self.own_metric(m),
        }
    }

    /// The metric as this run (or trial) alone measured it.
    pub fn own_metric(&self, m: Metric) -> Option<f64> {
        Some(match m {
            Metric::Sent => self.sent as f64,
            Metric::Acked => self.acked as f64,
            Metric::Failed => self.failed as f64,
            Metric::QueueFull => self.queue_full as f64,
            Metric::Consumed => self.delivery.as_ref()?.consumed as f64,
            Metric::Lost => self.delivery.as_ref()?.lost? as f64,
            Metric::Duplicated => self.delivery.as_ref()?.duplicated as f64,
            Metric::Reordered => self.delivery.as_ref()?.reordered as f64,
            Metric::Elapsed => self.elapsed_secs,
            // Never steady: the whole measured phase, so `steady_after < 5s` fails on it; too
            // short to tell is not measured.
            Metric::SteadyAfter => match self.steady_after.as_ref()? {
                steady::SteadyAfter::Steady { secs, .. } => *secs,
                steady::SteadyAfter::Never { .. } => self.elapsed_secs,
                steady::SteadyAfter::TooShort { .. } => return None,
            },
            Metric::Throughput => self.throughput_msgs,
            Metric::ThroughputBytes => self.throughput_bytes,
            Metric::RateTarget => self.target_rate?,
            Metric::RateAchieved => self.achieved_rate,
            Metric::Latency(kind, stat) => {
                let s = match kind {
                    LatencyKind::Ack => &self.ack,
                    LatencyKind::Service => &self.service,
                    LatencyKind::SendDelay => &self.send_delay,
                    LatencyKind::E2e => self.e2e.as_ref()?,
                    LatencyKind::TxnCommit => &self.txn.as_ref()?.commit,
                    LatencyKind::ShareAck => &self.share.as_ref()?.ack,
                };
                s.stat_secs(stat)?
            }
            Metric::DiskBytes => self.disk_bytes? as f64,
            Metric::DiskRatio => self.disk_ratio?,
            Metric::BatchBytes => self.internals.batch_bytes_avg?,
            Metric::BatchRecords => self.internals.batch_records_avg?,
            Metric::RequestRecords => self.internals.records_per_request?,
            Metric::WireRatio => self.internals.wire_ratio?,
            Metric::ClientCompressionRate => *self.internals.client.get("compression-rate-avg")?,
            Metric::ClientBufferAvailable => {
                *self.internals.client.get("buffer-available-bytes-min")?
            }
            Metric::ClientBufferWait => {
                self.internals.client.get("bufferpool-wait-time-ns-total")? / 1e9
            }
            Metric::ClientRecordErrors => {
                let errors = self.internals.client.get("record-error-total")?;
                (self.elapsed_secs > 0.0).then(|| errors / self.elapsed_secs)?
            }
            Metric::ConsumeThroughput => self.consume.as_ref()?.throughput_msgs,
            Metric::ConsumeThroughputBytes => self.consume.as_ref()?.throughput_bytes,
            Metric::LagMax => self.consume.as_ref()?.lag_max? as f64,
            Metric::RebalanceTime => self.consume.as_ref()?.rebalance_secs?,
            Metric::RebalanceCount => self.consume.as_ref()?.rebalances as f64,
            Metric::RebalanceStall => self.consume.as_ref()?.stall_secs?,
            Metric::Redelivered => self.consume.as_ref()?.redelivered as f64,
            Metric::FetchRequests => self.consume.as_ref()?.fetch_requests? as f64,
            Metric::FetchBytes => self.consume.as_ref()?.fetch_bytes_avg?,
            Metric::DrainTime => self.consume.as_ref()?.drain_secs?,
            Metric::BacklogCold => self.consume.as_ref()?.cold_share?,
            Metric::FirstRecordTime => self.consume.as_ref()?.first_record_secs?,
            Metric::FetchRtt => self.consume.as_ref()?.fetch_rtt_secs?,
            Metric::CompactionKeys => self.compaction.as_ref()?.keys as f64,
            Metric::CompactionSurviving => self.compaction.as_ref()?.surviving as f64,
            Metric::CompactionLost => self.compaction.as_ref()?.lost as f64,
            Metric::CompactionMissing => self.compaction.as_ref()?.missing as f64,
            Metric::CompactionResurrected => self.compaction.as_ref()?.resurrected as f64,
            Metric::CompactionTombstonesLeft => self.compaction.as_ref()?.tombstones_left as f64,
            Metric::CompactionRatio => self.compaction.as_ref()?.ratio()?,
            Metric::CompactionTime => self.compaction.as_ref()?.cleaner_secs?,
            Metric::FetchRttMax => self.consume.as_ref()?.fetch_rtt_max_secs?,
            Metric::AbortedRead => self.consume.as_ref()?.aborted_read as f64,
            Metric::TxnCommitted => self.txn.as_ref()?.committed as f64,
            Metric::TxnAborted => self.txn.as_ref()?.aborted as f64,
            Metric::UnavailableTime => self.faults.as_ref()?.unavailable_secs?,
            Metric::RecoveryTime => self.faults.as_ref()?.recovery_secs?,
            Metric::FaultFailed => self.faults.as_ref()?.failed as f64,
            // A search where every probe failed has a capacity below its first rate: 0, so
            // `capacity > 5k/s` fails as out of bound rather than "not measured". A search
            // stopped before any rate passed has none.
            Metric::Capacity => {
                let c = self.capacity.as_ref()?;
                match (c.capacity, c.limit) {
                    (Some(x), _) => x,
                    (None, capacity::Limit::Stopped) => return None,
                    (None, _) => 0.0,
                }
            }
            Metric::ShareAccepted => self.share.as_ref()?.accepted as f64,
            Metric::ShareReleased => self.share.as_ref()?.released as f64,
            Metric::ShareRejected => self.share.as_ref()?.rejected as f64,
            Metric::ShareArchived => self.share.as_ref()?.archived as f64,
            Metric::ShareRedelivered => self.share.as_ref()?.redelivered as f64,
            Metric::ShareLockTimeouts => self.share.as_ref()?.lock_timeouts as f64,
            Metric::ShareDeliveryMax => self.share.as_ref()?.delivery_max() as f64,
            Metric::FaultLatency(kind, stat) => {
                let f = self.faults.as_ref()?;
                let s = match kind {
                    LatencyKind::Ack => f.ack.as_ref()?,
                    LatencyKind::E2e => f.e2e.as_ref()?,
                    _ => return None,
                };
                s.stat_secs(stat)?
            }
            // A run without a drain of its own is read over another's only by an assertion
            // about that one (`assert`, `drain_metric`).
            Metric::DrainLatency(kind, stat) => drain_metric(self, self, kind, stat)?,
        })
    }
}

#[cfg(test)]
mod tests;
