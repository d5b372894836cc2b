//! A run over time: figures per fixed interval of the measured phase, so a stall, a broker
//! restart or a rate shape shows when it happened. Each record counts in the interval in which
//! its acknowledgement (or consumption) arrived.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TimeSeries {
    /// Width of every interval, seconds.
    pub interval_secs: f64,
    pub points: Vec<SeriesPoint>,
}

/// One interval. Latencies are from that interval's own histogram (records acked in it).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SeriesPoint {
    /// Start of the interval, seconds since the measured phase began.
    pub t_secs: f64,
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    /// Key and value bytes of the records acked in the interval.
    pub bytes: u64,
    /// The schedule's rate over the interval (records/s); None at unlimited rate.
    pub target_rate: Option<f64>,
    /// Measured records read back in the interval, when a consumer runs.
    pub consumed: Option<u64>,
    /// Records acked but not yet read at the interval's end, when a consumer runs.
    pub lag: Option<u64>,
    pub ack_p50_ms: Option<f64>,
    pub ack_p99_ms: Option<f64>,
    pub ack_max_ms: Option<f64>,
    pub e2e_p50_ms: Option<f64>,
    pub e2e_p99_ms: Option<f64>,
    pub e2e_max_ms: Option<f64>,
}
