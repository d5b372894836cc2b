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
