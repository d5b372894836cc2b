//! What one producer's delivery reports and statistics told, kept by its own thread.
//!
//! Only the producer's own thread serves its events, so this is a plain struct: no lock and
//! no atomic per record.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use rdkafka::statistics::Statistics;

use crate::measure::compaction::KeyTable;
use crate::measure::flat_histogram::FlatHistogram;
use crate::measure::placed::PlaceRecorder;
use crate::measure::{
    new_histogram, record, AckTimeline, IntervalRecorder, ProducerStats, TopicTally,
};

pub(super) struct Recorder {
    /// Statistics windows count towards the run from the measured phase on.
    pub measuring: bool,
    /// Paced runs keep service time (send → ack) apart from ack latency (intended → ack). At
    /// unlimited rate the two are the same instant, so the per-record clock read is skipped.
    pub paced: bool,
    /// Ack latency, 3 digits as every run histogram; flat: recorded once per record.
    pub ack: FlatHistogram,
    pub service: Histogram<u64>,
    /// Reports received, warm-up included (for in-flight limits).
    pub delivered: u64,
    pub acked: u64,
    pub failed: u64,
    pub failed_by_kind: BTreeMap<String, u64>,
    /// Sequence numbers of the measured records reported failed (stamped runs only): some
    /// may have been written all the same, which only the consumer can tell. Failures are
    /// rare, so this grows only on the failure path.
    pub failed_seqs: Vec<u64>,
    pub key_value_bytes: u64,
    pub last_ack_ns: u64,
    /// The measured phase per interval: counts and ack latency.
    pub intervals: IntervalRecorder,
    /// Silences between acknowledgements, and failures by time: the fault figures.
    pub ack_timeline: AckTimeline,
    stats: StatsCounters,
    /// Statistics events seen, so the end of a run can wait for one more window.
    pub stats_seen: u64,
    /// Per topic, for a producer that writes several topics record by record (`spread.rs`);
    /// empty otherwise, and then nothing per record looks at topics.
    pub by_topic: Vec<TopicTally>,
    /// This thread's live ack-latency buckets (`--metrics`).
    pub live: Option<std::sync::Arc<super::live::LiveHistogram>>,
    /// Every key's last write, when the run checks its compacted topic afterwards.
    pub keys: Option<KeyTable>,
    /// The value size of every measured record sent, when sizes vary (`PayloadSpec::sizes_vary`).
    pub sizes: Option<Histogram<u64>>,
    /// By broker that acknowledged and by partition; None when the client does not say which
    /// broker acknowledged (a worker's).
    pub placed: Option<PlaceRecorder>,
}

/// librdkafka's cumulative counters: their values when the measured phase starts (the
/// baseline) and the latest, plus batch sizes summed over measured windows only.
#[derive(Default, Clone, Copy)]
struct StatsCounters {
    base_txmsgs: i64,
    base_txbytes: i64,
    base_reqs: i64,
    txmsgs: i64,
    txbytes: i64,
    reqs: i64,
    batch_bytes_sum: i64,
    batch_bytes_cnt: i64,
    batch_records_sum: i64,
    batch_records_cnt: i64,
}

impl Recorder {
    /// Allocates the histograms (the interval one too): before the hot path.
    pub(super) fn new(paced: bool, interval_ns: u64, by_due: bool) -> Recorder {
        Recorder {
            measuring: false,
            paced,
            ack: FlatHistogram::new(3),
            service: new_histogram(),
            delivered: 0,
            acked: 0,
            failed: 0,
            failed_by_kind: BTreeMap::new(),
            failed_seqs: Vec::new(),
            key_value_bytes: 0,
            last_ack_ns: 0,
            intervals: IntervalRecorder::new(interval_ns).by_due(by_due),
            ack_timeline: AckTimeline::default(),
            stats: StatsCounters::default(),
            stats_seen: 0,
            live: None,
            keys: None,
            by_topic: Vec::new(),
            sizes: None,
            placed: None,
        }
    }

    /// One acknowledged measured record: ack latency from its intended send time, returned.
    #[inline]
    pub(super) fn acked(&mut self, now_ns: u64, intended_ns: u64, key_value_bytes: u64) -> u64 {
        self.key_value_bytes += key_value_bytes;
        let latency = now_ns.saturating_sub(intended_ns);
        self.ack.record(latency);
        self.intervals.acked(now_ns, latency, key_value_bytes);
        if let Some(l) = &self.live {
            l.observe(latency);
        }
        latency
    }

    /// One paced record's service time (produce → ack), as librdkafka measured it.
    #[inline]
    pub(super) fn service(&mut self, us: i64) {
        if us >= 0 {
            record(&mut self.service, us as u64 * 1000);
        }
    }

    /// One statistics window.
    pub(super) fn stats(&mut self, s: &Statistics) {
        let reqs: i64 = s
            .brokers
            .values()
            .map(|b| b.req.get("Produce").copied().unwrap_or(0))
            .sum();
        let acc = &mut self.stats;
        if self.measuring {
            for t in s.topics.values() {
                acc.batch_bytes_sum += t.batchsize.sum;
                acc.batch_bytes_cnt += t.batchsize.cnt;
                acc.batch_records_sum += t.batchcnt.sum;
                acc.batch_records_cnt += t.batchcnt.cnt;
            }
        } else {
            acc.base_txmsgs = s.txmsgs;
            acc.base_txbytes = s.txmsg_bytes;
            acc.base_reqs = reqs;
        }
        acc.txmsgs = s.txmsgs;
        acc.txbytes = s.txmsg_bytes;
        acc.reqs = reqs;
        self.stats_seen += 1;
    }

    /// Batching as the statistics saw it over the measured phase, as sums: the run's averages
    /// are ratios of the threads' sums.
    pub(super) fn stats_sums(&self) -> ProducerStats {
        let acc = &self.stats;
        let n = |v: i64| v.max(0) as u64;
        ProducerStats {
            batch_bytes: n(acc.batch_bytes_sum),
            batch_bytes_batches: n(acc.batch_bytes_cnt),
            batch_records: n(acc.batch_records_sum),
            batch_records_batches: n(acc.batch_records_cnt),
            records: n(acc.txmsgs - acc.base_txmsgs),
            record_bytes: n(acc.txbytes - acc.base_txbytes),
            produce_requests: n(acc.reqs - acc.base_reqs),
        }
    }
}
