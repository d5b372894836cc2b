//! The read side's figures: what a group of consumers (or the verification consumer) did.

use serde::{Deserialize, Serialize};

use super::LatencySummary;

/// Figures of the consumers of one run; None on a run without consumers.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ConsumeFigures {
    /// Consumer clients (1 for the verification consumer).
    pub consumers: u32,
    /// Every record read, of every phase and producer (the backlog included).
    pub records: u64,
    pub bytes: u64,
    /// Records and bytes read per second over the reading time.
    pub throughput_msgs: f64,
    pub throughput_bytes: f64,
    /// Highest lag (records written and not yet read) at an interval's end.
    pub lag_max: Option<u64>,
    /// Group join → first record after the assignment, the longest of the run.
    pub rebalance_secs: Option<f64>,
    pub rebalances: u64,
    /// Each rebalance's time, for the report.
    #[serde(default)]
    pub rebalance: Option<LatencySummary>,
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
    /// The rebalances the group went through: the most any one consumer took part in.
    pub rebalances: u64,
}

/// The read side's figures from the consumers' merged recording and the merged series.
pub fn derive(
    c: &super::ConsumerRecording,
    side: &ReadSide,
    series: Option<&super::TimeSeries>,
) -> ConsumeFigures {
    let reading_secs = c.last_read_ns.saturating_sub(side.origin_ns) as f64 / 1e9;
    let per_sec = |n: u64| {
        if reading_secs > 0.0 {
            n as f64 / reading_secs
        } else {
            0.0
        }
    };
    let mut times = super::new_histogram();
    for ns in &c.rebalances {
        super::record(&mut times, *ns);
    }
    ConsumeFigures {
        consumers: side.consumers,
        records: c.records,
        bytes: c.bytes,
        throughput_msgs: per_sec(c.records),
        throughput_bytes: per_sec(c.bytes),
        lag_max: series.and_then(|s| s.points.iter().filter_map(|p| p.lag).max()),
        rebalance_secs: c.rebalances.iter().max().map(|ns| *ns as f64 / 1e9),
        rebalances: side.rebalances,
        rebalance: (!c.rebalances.is_empty()).then(|| LatencySummary::from_histogram(&times)),
        redelivered: c.redelivered,
        fetch_requests: c.fetch_requests,
        fetch_bytes_avg: match (c.fetch_requests, c.fetch_bytes) {
            (Some(r), Some(b)) if r > 0 => Some(b as f64 / r as f64),
            _ => None,
        },
        drain_secs: side
            .drained_ns
            .map(|t| t.saturating_sub(side.origin_ns) as f64 / 1e9),
        aborted_read: c.aborted_read,
        commit: side.commit.clone(),
    }
}
