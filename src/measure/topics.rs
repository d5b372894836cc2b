//! Per-topic figures of a run over several topics (`topics = N`).

use serde::{Deserialize, Serialize};

/// One topic's share of a run; the run's own figures are the totals.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TopicFigures {
    pub topic: String,
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    pub throughput_msgs: f64,
    pub consumed: Option<u64>,
    pub disk_bytes: Option<u64>,
}
