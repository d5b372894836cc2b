//! A run's raw recording: what its producer figures are derived from (counters, librdkafka's
//! statistics as sums, latency histograms, the send span, the interval buckets). Threads'
//! recordings and shards' merge into one with the same [`Recording::absorb`], and the figures
//! are derived once, from the merged recording: an average is a ratio of sums, never an
//! average of averages.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::client::ClientSums;
use super::placed::Placed;
use super::series::{Intervals, Planned};
use super::{new_histogram, Internals, LatencySummary, RunResult, SizeSummary};

/// Everything the producer figures of a run (or of one thread, or one shard) come from.
#[derive(Clone, Debug)]
pub struct Recording {
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    pub failed_by_kind: BTreeMap<String, u64>,
    pub queue_full: u64,
    pub key_value_bytes: u64,
    pub ack: Histogram<u64>,
    pub service: Histogram<u64>,
    pub send_delay: Histogram<u64>,
    /// End-to-end latency, when a consumer read (None without one).
    pub e2e: Option<Histogram<u64>>,
    /// The value size of every measured record sent, when sizes vary (None otherwise).
    pub sizes: Option<Histogram<u64>>,
    pub span: SendSpan,
    pub stats: ProducerStats,
    /// A worker's client's own internals (None for librdkafka, whose are `stats`).
    pub client: Option<ClientSums>,
    /// The measured phase interval by interval; None when nothing was recorded per interval.
    pub intervals: Option<Intervals>,
    /// By broker that acknowledged and by partition (`measure::placed`); None when the
    /// client does not tell them (a worker's).
    pub placed: Option<Placed>,
}

/// When the measured phase started, sent and ended, in nanoseconds on the run's clock (a
/// result file's are relative to the measured start, which the shards' barrier makes one
/// instant).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendSpan {
    /// None for a thread that never reached the measured phase.
    pub start_ns: Option<u64>,
    /// None when nothing was sent.
    pub first_send_ns: Option<u64>,
    pub last_send_ns: u64,
    pub last_ack_ns: u64,
}

/// librdkafka's producer statistics over the measured phase, as sums (windows summed, cumulative
/// counters less their value when the phase began), so that merged they are still exact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProducerStats {
    /// Compressed batch (MessageSet) bytes (`batchsize.sum`), and how many batches it sums.
    pub batch_bytes: u64,
    pub batch_bytes_batches: u64,
    /// Records in those batches (`batchcnt.sum`), and how many batches it sums.
    pub batch_records: u64,
    pub batch_records_batches: u64,
    /// Records and their key and value bytes handed to the brokers (`txmsgs`, `txmsg_bytes`).
    pub records: u64,
    pub record_bytes: u64,
    /// Produce requests sent.
    pub produce_requests: u64,
}

/// The producer side's recording as a result file keeps it (`recording.producer`): the
/// counters, the send span (relative to the measured start) and the statistics. Its latency
/// histograms are the run's `ack`, `service`, `send_delay` and `e2e` summaries' (encoded
/// there, as in every version), and its intervals are the time series'.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RawSums {
    pub span: SendSpan,
    pub stats: ProducerStats,
    /// The counters (absent in version 2 files, whose run fields held them).
    #[serde(default)]
    pub sent: u64,
    #[serde(default)]
    pub acked: u64,
    #[serde(default)]
    pub failed: u64,
    #[serde(default)]
    pub failed_by_kind: BTreeMap<String, u64>,
    #[serde(default)]
    pub queue_full: u64,
    #[serde(default)]
    pub key_value_bytes: u64,
    /// A worker's client's own internals (absent for librdkafka and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientSums>,
}

impl RawSums {
    /// The producer figures that come from the counters and the span alone, the same for a
    /// run, a merge and a file read back: counts, elapsed time, throughput, achieved rate and
    /// librdkafka's averages.
    pub fn apply(&self, r: &mut RunResult) {
        r.sent = self.sent;
        r.acked = self.acked;
        r.failed = self.failed;
        r.failed_by_kind = self.failed_by_kind.clone();
        r.queue_full = self.queue_full;
        r.key_value_bytes = self.key_value_bytes;
        r.elapsed_secs = self.span.elapsed_ns() as f64 / 1e9;
        let (tm, tb) = if r.elapsed_secs > 0.0 {
            (
                r.acked as f64 / r.elapsed_secs,
                r.key_value_bytes as f64 / r.elapsed_secs,
            )
        } else {
            (0.0, 0.0)
        };
        r.throughput_msgs = tm;
        r.throughput_bytes = tb;
        r.achieved_rate = self.span.achieved_rate(self.sent);
        r.internals = self.stats.internals();
        r.internals.client = self
            .client
            .as_ref()
            .map(ClientSums::figures)
            .unwrap_or_default();
    }
}

impl SendSpan {
    fn absorb(&mut self, o: &SendSpan) {
        self.start_ns = min_some(self.start_ns, o.start_ns);
        self.first_send_ns = min_some(self.first_send_ns, o.first_send_ns);
        self.last_send_ns = self.last_send_ns.max(o.last_send_ns);
        self.last_ack_ns = self.last_ack_ns.max(o.last_ack_ns);
    }

    /// Sends per second over the gaps between sends: n records span n - 1 intervals.
    fn achieved_rate(&self, sent: u64) -> f64 {
        match self.first_send_ns {
            Some(first) if sent > 1 && self.last_send_ns > first => {
                (sent - 1) as f64 / ((self.last_send_ns - first) as f64 / 1e9)
            }
            _ => 0.0,
        }
    }

    /// From the measured start to the last send or acknowledgement, nanoseconds.
    fn elapsed_ns(&self) -> u64 {
        let end = self.last_ack_ns.max(self.last_send_ns);
        self.start_ns.map_or(0, |s| end.saturating_sub(s))
    }

    /// The same span with the measured start as its origin.
    fn relative(&self) -> SendSpan {
        let Some(start) = self.start_ns else {
            return SendSpan::default();
        };
        SendSpan {
            start_ns: Some(0),
            first_send_ns: self.first_send_ns.map(|t| t.saturating_sub(start)),
            last_send_ns: self.last_send_ns.saturating_sub(start),
            last_ack_ns: self.last_ack_ns.saturating_sub(start),
        }
    }
}

fn min_some(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl ProducerStats {
    fn absorb(&mut self, o: &ProducerStats) {
        self.batch_bytes += o.batch_bytes;
        self.batch_bytes_batches += o.batch_bytes_batches;
        self.batch_records += o.batch_records;
        self.batch_records_batches += o.batch_records_batches;
        self.records += o.records;
        self.record_bytes += o.record_bytes;
        self.produce_requests += o.produce_requests;
    }

    /// The averages, each a ratio of sums; None where the divisor is 0 (nothing reported).
    pub fn internals(&self) -> Internals {
        let div = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        Internals {
            batch_bytes_avg: div(self.batch_bytes, self.batch_bytes_batches),
            batch_records_avg: div(self.batch_records, self.batch_records_batches),
            records_per_request: div(self.records, self.produce_requests),
            wire_ratio: div(self.record_bytes, self.batch_bytes),
            produce_requests: self.produce_requests,
            client: BTreeMap::new(),
        }
    }
}

impl Recording {
    /// Nothing recorded: what a thread that could not start hands over, and the start of a
    /// merge.
    pub fn empty() -> Recording {
        Recording {
            sent: 0,
            acked: 0,
            failed: 0,
            failed_by_kind: BTreeMap::new(),
            queue_full: 0,
            key_value_bytes: 0,
            ack: new_histogram(),
            service: new_histogram(),
            send_delay: new_histogram(),
            e2e: None,
            sizes: None,
            span: SendSpan::default(),
            stats: ProducerStats::default(),
            client: None,
            intervals: None,
            placed: None,
        }
    }

    /// Adds `other` into this one: counters and statistics summed, histograms added (exact:
    /// every one has the same bounds), the span widened, the intervals aligned by index.
    pub fn absorb(&mut self, o: &Recording) {
        self.sent += o.sent;
        self.acked += o.acked;
        self.failed += o.failed;
        for (kind, n) in &o.failed_by_kind {
            *self.failed_by_kind.entry(kind.clone()).or_default() += n;
        }
        self.queue_full += o.queue_full;
        self.key_value_bytes += o.key_value_bytes;
        // Same bounds on every histogram, so adding cannot fail.
        let _ = self.ack.add(&o.ack);
        let _ = self.service.add(&o.service);
        let _ = self.send_delay.add(&o.send_delay);
        if let Some(h) = &o.e2e {
            let _ = self.e2e.get_or_insert_with(new_histogram).add(h);
        }
        if let Some(h) = &o.sizes {
            let _ = self.sizes.get_or_insert_with(new_histogram).add(h);
        }
        self.span.absorb(&o.span);
        self.stats.absorb(&o.stats);
        self.client = ClientSums::merged(self.client.as_ref(), o.client.as_ref());
        if let Some(p) = &o.placed {
            self.placed.get_or_insert_with(Placed::default).absorb(p);
        }
        if let Some(i) = &o.intervals {
            match &mut self.intervals {
                Some(mine) => mine.absorb(i),
                None => self.intervals = Some(i.clone()),
            }
        }
    }

    /// Every part merged into one.
    pub fn merge<'a>(parts: impl IntoIterator<Item = &'a Recording>) -> Recording {
        let mut all = Recording::empty();
        for p in parts {
            all.absorb(p);
        }
        all
    }

    /// The producer figures of `r`, once, from this (merged) recording. `shares` is how many
    /// shards split the schedule (1 unsharded): a shard's target is its share of the rate.
    pub fn derive(&self, r: &mut RunResult, planned: &Planned, shares: u32) {
        let sums = self.sums();
        sums.apply(r);
        r.recording.producer = Some(sums);
        r.target_rate = planned.rate.average().map(|t| t / f64::from(shares.max(1)));
        r.schedule_slip_secs = planned
            .duration
            .map(|d| (r.elapsed_secs - d.as_secs_f64()).max(0.0));
        r.ack = LatencySummary::from_histogram(&self.ack);
        r.service = LatencySummary::from_histogram(&self.service);
        r.send_delay = LatencySummary::from_histogram(&self.send_delay);
        r.e2e = self.e2e.as_ref().map(LatencySummary::from_histogram);
        r.sizes = self.sizes.as_ref().and_then(SizeSummary::from_histogram);
        (r.brokers, r.partitions) = self
            .placed
            .as_ref()
            .map(Placed::figures)
            .unwrap_or_default();
        r.series = self.intervals.as_ref().map(|i| i.derive(planned));
        r.recording.due = self
            .intervals
            .as_ref()
            .and_then(|i| i.due.as_ref())
            .map(super::due::DueLatency::file);
        // Judged on the series as the result file keeps it, for shards merged alike.
        r.steady_after = r.series.as_ref().map(super::steady::detect);
    }

    /// What a result file keeps of this recording besides its histograms and intervals.
    fn sums(&self) -> RawSums {
        RawSums {
            span: self.span.relative(),
            stats: self.stats,
            sent: self.sent,
            acked: self.acked,
            failed: self.failed,
            failed_by_kind: self.failed_by_kind.clone(),
            queue_full: self.queue_full,
            key_value_bytes: self.key_value_bytes,
            client: self.client.clone(),
        }
    }
}

#[cfg(test)]
#[path = "recording_tests.rs"]
mod tests;
