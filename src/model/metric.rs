//! What an expectation can name: the metrics a run is judged on, their statistics and the
//! physical unit each measures, so `check` can type an assertion before anything runs.

use serde::{Deserialize, Serialize};

/// What a metric or constant measures (its physical dimension, not a matrix dimension), for
/// type checking assertions: `ack.p50` and `5ms` are both a duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// Counts, ratios and percentages.
    Number,
    Duration,
    Size,
    Rate,
    ByteRate,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Number => "a number",
            Unit::Duration => "a duration",
            Unit::Size => "a size",
            Unit::Rate => "a rate (messages per second)",
            Unit::ByteRate => "a byte rate",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum LatencyKind {
    /// Intended send time → delivery report (the headline; no coordinated omission).
    Ack,
    /// Intended send time → consumer receives.
    E2e,
    /// produce() call → delivery report.
    Service,
    /// Intended send time → produce() call: how far the sender fell behind.
    SendDelay,
    /// commit_transaction() call → its return.
    TxnCommit,
    /// A share group's acquisition of a record → the broker's answer to its acknowledgement.
    ShareAck,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Stat {
    Percentile(f64),
    Min,
    Max,
    Mean,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Metric {
    Sent,
    Acked,
    Failed,
    QueueFull,
    Consumed,
    Lost,
    Duplicated,
    Reordered,
    Elapsed,
    Throughput,
    ThroughputBytes,
    RateTarget,
    RateAchieved,
    Latency(LatencyKind, Stat),
    DiskBytes,
    DiskRatio,
    BatchBytes,
    BatchRecords,
    RequestRecords,
    WireRatio,
    // ---- the read side (consumer groups, backlogs) ----
    /// Records read per second by all consumers (`consume.throughput`).
    ConsumeThroughput,
    ConsumeThroughputBytes,
    /// Highest lag (records acked, or in the backlog, and not yet read) over the intervals.
    LagMax,
    /// The longest a partition went unread in a rebalance (its stall).
    RebalanceTime,
    RebalanceCount,
    /// Partitions' stalls within the measured phase, added up (`rebalance.stall`).
    RebalanceStall,
    /// Records read again after a rebalance (same partition and offset): not duplicates.
    Redelivered,
    /// Fetch requests the consumers sent, and bytes per fetch (librdkafka statistics).
    FetchRequests,
    FetchBytes,
    /// Consumer start → every partition read to its end (the backlog drained).
    DrainTime,
    /// A cold backlog: the share of the records held at the clock's start that were in
    /// remote storage only (`backlog.cold`), and the clock's start → the first record read
    /// (`first_record.time`).
    BacklogCold,
    FirstRecordTime,
    /// With a backlog: the consumers' fetch round trips while it drained, their mean
    /// (`fetch.rtt`) and the longest (`fetch.rtt.max`), from librdkafka's statistics.
    FetchRtt,
    FetchRttMax,
    /// Seconds into the measured phase at which its series became steady (`steady_after`).
    SteadyAfter,
    // ---- transactions ----
    TxnCommitted,
    TxnAborted,
    /// Records of aborted transactions a read_committed consumer read anyway: violations.
    AbortedRead,
    // ---- faults ----
    /// The longest stretch with no successful acknowledgement.
    UnavailableTime,
    /// Fault end → the first 1 s window with acknowledgements back at the target rate.
    RecoveryTime,
    /// A latency family within the fault windows (`fault.ack.p99`).
    FaultLatency(LatencyKind, Stat),
    /// Records failed within the fault windows.
    FaultFailed,
    /// A latency family of the live records due while a backlog drained (`drain.ack.p99`).
    DrainLatency(LatencyKind, Stat),
    // ---- a capacity search ----
    /// The highest rate that passed all its trials.
    Capacity,
    // ---- a share group (KIP-932) ----
    /// Acknowledgements the broker took, by type.
    ShareAccepted,
    ShareReleased,
    ShareRejected,
    /// Records the broker archived: released (or timed out) at the delivery count limit.
    ShareArchived,
    /// Deliveries after a record's first (delivery count above 1).
    ShareRedelivered,
    /// Redeliveries no member asked for: an acquisition lock expired (a slow or lost member).
    ShareLockTimeouts,
    /// The highest delivery count any record reached.
    ShareDeliveryMax,

    // ---- a compacted topic checked after the run (`compaction = verify`) ----
    /// Distinct keys written.
    CompactionKeys,
    /// Keys read back with a value.
    CompactionSurviving,
    /// Keys whose last value the topic does not hold.
    CompactionLost,
    /// Keys not deleted that the topic holds no value of.
    CompactionMissing,
    /// Deleted keys read back with a value.
    CompactionResurrected,
    /// Deleted keys whose tombstone is still there after the check.
    CompactionTombstonesLeft,
    /// Log bytes before the forced compaction over bytes after it.
    CompactionRatio,
    /// How long the cleaner took.
    CompactionTime,

    // ---- a worker client's own internals (clients/PROTOCOL.md, `internals`) ----
    /// Compressed over uncompressed batch size, averaged over batches (the Java client's
    /// `compression-rate-avg`).
    ClientCompressionRate,
    /// The fewest free bytes the client's buffer had (`buffer-available-bytes`, lowest).
    ClientBufferAvailable,
    /// How long sends waited for buffer space, added up (`bufferpool-wait-time-ns-total`).
    ClientBufferWait,
    /// Records the client reported failed, per second of the run (`record-error-total`).
    ClientRecordErrors,
}

impl Metric {
    pub fn unit(self) -> Unit {
        match self {
            Metric::Elapsed
            | Metric::SteadyAfter
            | Metric::Latency(..)
            | Metric::RebalanceTime
            | Metric::RebalanceStall
            | Metric::DrainTime
            | Metric::FirstRecordTime
            | Metric::FetchRtt
            | Metric::FetchRttMax
            | Metric::UnavailableTime
            | Metric::RecoveryTime
            | Metric::CompactionTime
            | Metric::FaultLatency(..)
            | Metric::DrainLatency(..) => Unit::Duration,
            Metric::Throughput
            | Metric::Capacity
            | Metric::RateTarget
            | Metric::RateAchieved
            | Metric::ConsumeThroughput => Unit::Rate,
            Metric::ThroughputBytes | Metric::ConsumeThroughputBytes => Unit::ByteRate,
            Metric::DiskBytes
            | Metric::BatchBytes
            | Metric::FetchBytes
            | Metric::ClientBufferAvailable => Unit::Size,
            Metric::ClientBufferWait => Unit::Duration,
            Metric::ClientRecordErrors => Unit::Rate,
            _ => Unit::Number,
        }
    }

    /// Whether the metric is a count that adds up over a run's trials (`lost`, `failed`,
    /// `sent`): a guarantee such as `lost == 0` must see a loss in any trial. Every other
    /// figure (rates, latencies, sizes, ratios, times) is the median over the trials.
    pub fn summed(self) -> bool {
        matches!(
            self,
            Metric::Sent
                | Metric::Acked
                | Metric::Failed
                | Metric::QueueFull
                | Metric::Consumed
                | Metric::Lost
                | Metric::Duplicated
                | Metric::Reordered
                | Metric::Redelivered
                | Metric::AbortedRead
                | Metric::TxnCommitted
                | Metric::TxnAborted
                | Metric::FaultFailed
                | Metric::FetchRequests
                | Metric::ShareAccepted
                | Metric::ShareReleased
                | Metric::ShareRejected
                | Metric::ShareArchived
                | Metric::ShareRedelivered
                | Metric::ShareLockTimeouts
                | Metric::CompactionKeys
                | Metric::CompactionSurviving
                | Metric::CompactionLost
                | Metric::CompactionMissing
                | Metric::CompactionResurrected
                | Metric::CompactionTombstonesLeft
        )
    }

    /// Whether the metric exists only when the run checks its compacted topic.
    pub fn needs_compaction(self) -> bool {
        matches!(
            self,
            Metric::CompactionKeys
                | Metric::CompactionSurviving
                | Metric::CompactionLost
                | Metric::CompactionMissing
                | Metric::CompactionResurrected
                | Metric::CompactionTombstonesLeft
                | Metric::CompactionRatio
                | Metric::CompactionTime
        )
    }

    /// Whether the metric exists only when a share group reads the run.
    pub fn needs_share(self) -> bool {
        matches!(
            self,
            Metric::ShareAccepted
                | Metric::ShareReleased
                | Metric::ShareRejected
                | Metric::ShareArchived
                | Metric::ShareRedelivered
                | Metric::ShareLockTimeouts
                | Metric::ShareDeliveryMax
                | Metric::Latency(LatencyKind::ShareAck, _)
        )
    }

    /// Whether the metric is a worker client's own (the Java client's): a producer on
    /// librdkafka has none of these.
    pub fn needs_worker_client(self) -> bool {
        matches!(
            self,
            Metric::ClientCompressionRate
                | Metric::ClientBufferAvailable
                | Metric::ClientBufferWait
                | Metric::ClientRecordErrors
        )
    }

    /// Whether the metric exists only when the scenario has a consumer.
    pub fn needs_consumer(self) -> bool {
        matches!(
            self,
            Metric::Consumed
                | Metric::Lost
                | Metric::Duplicated
                | Metric::Reordered
                | Metric::Latency(LatencyKind::E2e, _)
                | Metric::FaultLatency(LatencyKind::E2e, _)
                | Metric::DrainLatency(..)
                | Metric::ConsumeThroughput
                | Metric::ConsumeThroughputBytes
                | Metric::LagMax
                | Metric::RebalanceTime
                | Metric::RebalanceCount
                | Metric::RebalanceStall
                | Metric::Redelivered
                | Metric::FetchRequests
                | Metric::FetchBytes
                | Metric::DrainTime
                | Metric::BacklogCold
                | Metric::FirstRecordTime
                | Metric::FetchRtt
                | Metric::FetchRttMax
                | Metric::AbortedRead
        )
    }
}
