//! Stage 5, measure: what one run measured, and how raw recordings become figures.
//! Latencies are recorded into per-thread HdrHistograms (nanoseconds, 3 significant digits)
//! and merged once at the end; nothing is stored per sample.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::model::{LatencyKind, Metric, Props, Stat};

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

/// Percentile summary of one latency distribution, in milliseconds for humans and JSON.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    #[serde(skip)]
    hist: Option<Histogram<u64>>,
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
            hist: Some(h.clone()),
        }
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
#[derive(Clone, Debug, Default, Serialize)]
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
}

/// Delivery as verified by the consumer.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Delivery {
    /// Distinct measured records read back.
    pub consumed: u64,
    /// Acked records never read back within the drain time.
    pub lost: u64,
    pub duplicated: u64,
    /// Records that arrived before an earlier one of the same producer and partition.
    pub reordered: u64,
}

/// Everything measured for one planned run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunResult {
    pub index: usize,
    pub label: String,
    pub coords: BTreeMap<String, String>,
    pub topic: String,
    /// Whether the run finished its measured phase (false when interrupted or the broker was lost).
    pub complete: bool,
    /// The cluster stopped answering during the run (librdkafka: all brokers down).
    pub cluster_lost: bool,
    pub error: Option<String>,
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    pub failed_by_kind: BTreeMap<String, u64>,
    pub queue_full: u64,
    pub payload_bytes: u64,
    pub elapsed_secs: f64,
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
}

impl RunResult {
    pub fn elapsed(&self) -> Duration {
        Duration::from_secs_f64(self.elapsed_secs)
    }

    /// A metric in base units (seconds, bytes, per second); None when it was not measured.
    pub fn metric(&self, m: Metric) -> Option<f64> {
        Some(match m {
            Metric::Sent => self.sent as f64,
            Metric::Acked => self.acked as f64,
            Metric::Failed => self.failed as f64,
            Metric::QueueFull => self.queue_full as f64,
            Metric::Consumed => self.delivery.as_ref()?.consumed as f64,
            Metric::Lost => self.delivery.as_ref()?.lost as f64,
            Metric::Duplicated => self.delivery.as_ref()?.duplicated as f64,
            Metric::Reordered => self.delivery.as_ref()?.reordered as f64,
            Metric::Elapsed => self.elapsed_secs,
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
                };
                s.stat_secs(stat)?
            }
            Metric::DiskBytes => self.disk_bytes? as f64,
            Metric::DiskRatio => self.disk_ratio?,
            Metric::BatchBytes => self.internals.batch_bytes_avg?,
            Metric::BatchRecords => self.internals.batch_records_avg?,
            Metric::RequestRecords => self.internals.records_per_request?,
            Metric::WireRatio => self.internals.wire_ratio?,
        })
    }
}
