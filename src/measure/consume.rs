//! The read side's figures: what a group of consumers (or the verification consumer) did.

use serde::{Deserialize, Serialize};

use super::{IntervalRecording, LatencySummary, SeqSet};

mod places;
mod recording;
mod sums;
#[cfg(test)]
mod tests;

pub(crate) use places::lag_measured;
pub use places::{ReadPlaceFigures, ReadPlaces};
pub use recording::{ConsumerRecording, ReaderQueue};
pub use sums::ReadSums;

/// Figures of the consumers of one run; None on a run without consumers.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ConsumeFigures {
    /// Consumer clients (1 for the verification consumer).
    pub consumers: u32,
    /// Every record read, of every phase and producer (the backlog included).
    pub records: u64,
    pub bytes: u64,
    /// Records and bytes read per second, first record read → last.
    pub throughput_msgs: f64,
    pub throughput_bytes: f64,
    /// Highest lag (records written and not yet read) at an interval's end.
    pub lag_max: Option<u64>,
    /// The longest a partition went unread in a rebalance that reached into the measured
    /// phase (`measure::stalls`), whole: from when its member gave it up (or the group's
    /// first join) to the first record its next member read of it.
    pub rebalance_secs: Option<f64>,
    pub rebalances: u64,
    /// Each partition's stall (one per partition per rebalance that moved or stopped it), for
    /// the report.
    #[serde(default)]
    pub rebalance: Option<LatencySummary>,
    /// The stalls within the measured phase added up, partition by partition: seconds of
    /// partitions unread because of rebalances (12 partitions stopped for 1 s: 12 s).
    #[serde(default)]
    pub stall_secs: Option<f64>,
    /// Records read again after a rebalance (same partition and offset).
    pub redelivered: u64,
    /// librdkafka statistics, summed over the consumers.
    pub fetch_requests: Option<u64>,
    pub fetch_bytes_avg: Option<f64>,
    /// Consumer start → every partition read to its end.
    pub drain_secs: Option<f64>,
    /// Records of aborted transactions read anyway (read_committed violated).
    pub aborted_read: u64,
    /// The commit policy, as a user would write it.
    pub commit: String,
    /// A cold backlog: the share of the records the topics held at the clock's start that
    /// were in remote storage only (0 to 1), and the clock's start → the first record read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_share: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_record_secs: Option<f64>,
    /// With a backlog: the consumers' fetch round trips while it drained (librdkafka's
    /// statistics), their mean and the longest, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch_rtt_secs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch_rtt_max_secs: Option<f64>,
}

/// Fetch round trips, from librdkafka's statistics: the `rtt` window of each partition
/// leader a consumer fetches from (the group coordinator's requests go to a logical broker of
/// their own), taken while a backlog drains. Records are waiting then, so a fetch returns as
/// soon as the broker has read them, and its round trip is the read's latency, not a long poll
/// for records not yet written. Sums, counts and maxima: they merge exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchTrips {
    pub sum_us: u64,
    pub count: u64,
    pub max_us: u64,
}

impl FetchTrips {
    /// One statistics window's round trips (µs), as librdkafka reports them.
    pub fn window(&mut self, sum_us: i64, count: i64, max_us: i64) {
        if count > 0 && sum_us >= 0 {
            self.sum_us += sum_us as u64;
            self.count += count as u64;
            self.max_us = self.max_us.max(max_us.max(0) as u64);
        }
    }

    /// Another consumer's (or shard's) round trips.
    pub fn absorb(&mut self, o: &FetchTrips) {
        self.sum_us += o.sum_us;
        self.count += o.count;
        self.max_us = self.max_us.max(o.max_us);
    }

    /// The mean and the longest round trip, in seconds; None without one.
    fn figures(&self) -> Option<(f64, f64)> {
        (self.count > 0).then(|| {
            (
                self.sum_us as f64 / self.count as f64 / 1e6,
                self.max_us as f64 / 1e6,
            )
        })
    }
}

/// What a run knows of its read side beyond what its consumers recorded.
pub struct ReadSide {
    pub consumers: u32,
    /// The commit policy as written (`auto(5s)`, `every(1000)`, `off`).
    pub commit: String,
    /// Where the measured phase began, on the run's clock (ns).
    pub origin_ns: u64,
    /// When every partition had been read to its end, on the run's clock; None without a
    /// backlog, or when that never happened.
    pub drained_ns: Option<u64>,
    /// The rebalances the group went through: the distinct assignment epochs its members
    /// were given partitions in (`group_rebalances`).
    pub rebalances: u64,
    /// A share group read the run: what its figures are reported with.
    pub share: Option<ShareSide>,
    /// A cold backlog: the records in remote storage only when the clock started, and the
    /// records the topics held then (`run::offload`).
    pub cold: Option<(u64, u64)>,
}

/// A share group's settings, reported beside its figures.
pub struct ShareSide {
    pub ack_mode: String,
    pub processing_ms: f64,
    pub delivery_limit: u16,
}

/// The rebalances a group went through: the distinct assignment epochs in which any of its
/// members was given partitions (the first join included). Under the classic protocol the
/// epoch is the group generation; under the consumer protocol (KIP-848) the member epoch,
/// which is the epoch of the group's target assignment the member reconciled to: members
/// given partitions by one new assignment see the same number, a member whose partitions did
/// not change sees none. Counting per member (the most any one took part in) undercounts
/// when no member was in every rebalance: the first to join is alone in generation 1 and is
/// then stopped, say.
pub(crate) fn group_rebalances(members: &[&ConsumerRecording]) -> u64 {
    let epochs: std::collections::BTreeSet<i32> = members
        .iter()
        .flat_map(|c| c.generations.iter().copied())
        .collect();
    epochs.len() as u64
}
