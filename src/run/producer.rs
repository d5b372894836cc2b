//! One producer client on its own OS thread. The send loop allocates nothing per record (unless
//! the scenario asks for headers or a consumer, which need a header per record), paces from a
//! schedule of intended send times, and records latency from the intended time, so a stalled
//! sender shows up in the figures instead of hiding (no coordinated omission). It sends and
//! serves events through `native` (see there for why).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, NoCustomPartitioner, Producer, ProducerContext};
use rdkafka::statistics::Statistics;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientContext;

use super::payload::{KeyGen, PayloadGen};
use super::Shared;
use crate::measure::{new_histogram, record, Internals};
use crate::model::{RateSpec, Warmup, Workload};
use crate::native::producer::{self as native, EventKind};
use crate::plan::STATS_INTERVAL_MS;

/// Set in the delivery opaque for warm-up records, which are sent but not measured.
const WARMUP_BIT: usize = 1 << 63;
/// Header carrying what the consumer needs: intended send time, producer, sequence, phase.
pub const E2E_HEADER: &str = "kb";
pub const E2E_HEADER_LEN: usize = 21;

pub struct ProducerJob {
    pub id: u32,
    pub config: ClientConfig,
    pub topic: String,
    pub workload: Workload,
    /// This producer's share of the message count.
    pub messages: Option<u64>,
    /// This producer's share of the rate (1 / number of producers).
    pub rate_share: f64,
    /// Stamp each record for the consumer.
    pub e2e: bool,
    pub shared: Arc<Shared>,
    /// Two waits: warm-up done, then go (the orchestrator measures disk in between).
    pub barrier: Arc<Barrier>,
    pub flush_timeout: Duration,
}

/// Everything the delivery reports and statistics tell, kept by the producer's own thread:
/// it is the only one that serves the producer's events, so nothing here is shared or locked.
struct Recorder {
    measuring: bool,
    /// Paced runs keep service time (send → ack) apart from ack latency (intended → ack). At
    /// unlimited rate the two are the same instant, so the per-record clock read is skipped.
    paced: bool,
    ack: Histogram<u64>,
    service: Histogram<u64>,
    /// Reports received, warm-up included (for in-flight limits).
    delivered: u64,
    acked: u64,
    failed: u64,
    failed_by_kind: BTreeMap<String, u64>,
    payload_bytes: u64,
    last_ack_ns: u64,
    stats: StatsAcc,
    stats_seen: u64,
}

#[derive(Default, Clone, Copy)]
struct StatsAcc {
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
    fn stats(&mut self, s: &Statistics) {
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
}

/// The client's context: librdkafka's log lines are not kafkabench's output (errors reach the
/// run as events, see `Events::serve`).
struct Quiet;

impl ClientContext for Quiet {
    fn log(&self, _: rdkafka::config::RDKafkaLogLevel, _: &str, _: &str) {}
}

impl ProducerContext for Quiet {
    type DeliveryOpaque = ();
    fn delivery(&self, _: &rdkafka::producer::DeliveryResult<'_>, _: ()) {}
}

/// What one producer measured.
pub struct ProducerOutcome {
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    pub failed_by_kind: BTreeMap<String, u64>,
    pub queue_full: u64,
    pub payload_bytes: u64,
    pub ack: Histogram<u64>,
    pub service: Histogram<u64>,
    pub send_delay: Histogram<u64>,
    pub start_ns: u64,
    pub first_send_ns: u64,
    pub last_send_ns: u64,
    pub last_ack_ns: u64,
    pub internals: Internals,
    pub error: Option<String>,
}

impl ProducerOutcome {
    fn failed_to_start(error: String) -> ProducerOutcome {
        ProducerOutcome {
            sent: 0,
            acked: 0,
            failed: 0,
            failed_by_kind: BTreeMap::new(),
            queue_full: 0,
            payload_bytes: 0,
            ack: new_histogram(),
            service: new_histogram(),
            send_delay: new_histogram(),
            start_ns: 0,
            first_send_ns: 0,
            last_send_ns: 0,
            last_ack_ns: 0,
            internals: Internals::default(),
            error: Some(error),
        }
    }
}

/// Intended send times. `None` from `next` ends the workload (a shape ran out).
struct Pacer {
    kind: PaceKind,
    next_ns: f64,
}

enum PaceKind {
    Unlimited,
    Fixed {
        interval_ns: f64,
    },
    /// (end of segment since start, interval or None for a pause).
    Shape {
        segs: Vec<(f64, Option<f64>)>,
        idx: usize,
    },
}

impl Pacer {
    fn new(rate: &RateSpec, share: f64, start_ns: u64, stagger: f64) -> Pacer {
        let kind = match rate {
            RateSpec::Unlimited => PaceKind::Unlimited,
            RateSpec::Fixed(r) => PaceKind::Fixed {
                interval_ns: 1e9 / (r * share),
            },
            RateSpec::Shape(segs) => {
                let mut end = 0.0;
                let segs = segs
                    .iter()
                    .map(|s| {
                        end += s.duration.as_nanos() as f64;
                        (
                            start_ns as f64 + end,
                            (s.per_sec > 0.0).then(|| 1e9 / (s.per_sec * share)),
                        )
                    })
                    .collect();
                PaceKind::Shape { segs, idx: 0 }
            }
        };
        // Producers start offset by a fraction of an interval so they do not send in lockstep.
        let first_interval = match &kind {
            PaceKind::Fixed { interval_ns } => *interval_ns,
            PaceKind::Shape { segs, .. } => segs.first().and_then(|s| s.1).unwrap_or(0.0),
            PaceKind::Unlimited => 0.0,
        };
        Pacer {
            kind,
            next_ns: start_ns as f64 + stagger * first_interval,
        }
    }

    /// Some(None): send now (unlimited). Some(Some(t)): send at t. None: the shape is over.
    #[inline]
    fn next(&mut self) -> Option<Option<u64>> {
        match &mut self.kind {
            PaceKind::Unlimited => Some(None),
            PaceKind::Fixed { interval_ns } => {
                let t = self.next_ns;
                self.next_ns += *interval_ns;
                Some(Some(t as u64))
            }
            PaceKind::Shape { segs, idx } => loop {
                let (end, interval) = *segs.get(*idx)?;
                if self.next_ns >= end {
                    *idx += 1;
                    continue;
                }
                match interval {
                    None => {
                        self.next_ns = end;
                        *idx += 1;
                    }
                    Some(iv) => {
                        let t = self.next_ns;
                        self.next_ns += iv;
                        return Some(Some(t as u64));
                    }
                }
            },
        }
    }
}

struct Sender<'a> {
    ev: Events<'a>,
    job: &'a ProducerJob,
    unix_ms_at_t0: u64,
    payload: PayloadGen,
    keys: KeyGen,
    seq: u64,
    issued: u64,
    queue_full: u64,
    enqueue_failed: u64,
    enqueue_failed_by_kind: BTreeMap<String, u64>,
    send_delay: Histogram<u64>,
}

/// The producer's native handles and what its events told; a field of its own so the send
/// loop can serve events while it holds a borrowed payload.
struct Events<'a> {
    p: native::Producer<'a>,
    rec: Recorder,
    t0: Instant,
    shared: Arc<Shared>,
}

enum Phase {
    Warmup,
    Measured,
}

impl Events<'_> {
    /// Serves the producer's events: waits up to `timeout_ms` for the first, then takes what
    /// is already queued (bounded, so a flood of reports cannot starve the send loop).
    fn serve(&mut self, timeout_ms: i32) {
        let mut wait = timeout_ms;
        for _ in 0..64 {
            let Some(ev) = self.p.next_event(wait) else {
                return;
            };
            wait = 0;
            match ev.kind() {
                EventKind::Delivery => self.delivered(&ev),
                EventKind::Stats => {
                    if let Some(s) = ev.stats_json().and_then(|j| serde_json::from_str(j).ok()) {
                        self.rec.stats(&s);
                    }
                }
                EventKind::Error => {
                    let (code, reason) = ev.error();
                    if code == RDKafkaErrorCode::AllBrokersDown {
                        self.shared
                            .cluster_lost(format!("all brokers are down ({reason})"));
                    }
                }
                EventKind::Other => {}
            }
        }
    }

    /// One event's delivery reports. They were all acknowledged by the same response, so one
    /// clock read stamps them all.
    #[inline]
    fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn delivered(&mut self, ev: &native::Event) {
        let now = self.now_ns();
        let r = &mut self.rec;
        let (mut acked, mut failed) = (0u64, 0u64);
        for d in ev.deliveries() {
            r.delivered += 1;
            let opaque = d.opaque();
            if opaque & WARMUP_BIT != 0 {
                continue;
            }
            match d.error() {
                None => {
                    acked += 1;
                    r.payload_bytes += d.bytes();
                    record(&mut r.ack, now.saturating_sub(opaque as u64));
                    if r.paced {
                        let us = d.latency_us();
                        if us >= 0 {
                            record(&mut r.service, us as u64 * 1000);
                        }
                    }
                }
                Some(code) => {
                    failed += 1;
                    *r.failed_by_kind.entry(format!("{code:?}")).or_default() += 1;
                }
            }
        }
        if acked > 0 {
            r.acked += acked;
            r.last_ack_ns = now;
            self.shared.acked.fetch_add(acked, Ordering::Relaxed);
        }
        if failed > 0 {
            r.failed += failed;
            self.shared.failed.fetch_add(failed, Ordering::Relaxed);
        }
    }

    /// Sends what lingers and serves events until every record is delivered or `timeout`
    /// passes; false when records are still outstanding.
    /// With the cluster lost, what is outstanding is purged and reported failed at once.
    fn drain(&mut self, timeout: Duration) -> bool {
        self.p.begin_flush();
        let mut deadline = Instant::now() + timeout;
        let mut purged = false;
        while self.p.outq_len() > 0 {
            if self.shared.lost() && !purged {
                self.p.purge();
                purged = true;
                deadline = deadline.min(Instant::now() + Duration::from_secs(5));
            }
            if Instant::now() >= deadline {
                return false;
            }
            self.serve(10);
        }
        !purged
    }
}

impl Sender<'_> {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.ev.now_ns()
    }

    /// Waits until `t`, serving events meanwhile; never sends early. Long waits block on the
    /// event queue, so a delivery report is stamped when it arrives, not when the wait ends.
    fn wait_until(&mut self, t: u64) {
        loop {
            self.ev.serve(0);
            let now = self.now_ns();
            if now >= t {
                return;
            }
            let rem = t - now;
            if rem >= 2_000_000 {
                self.ev.serve((rem / 1_000_000) as i32 - 1);
            } else if rem > 5_000 {
                std::thread::sleep(Duration::from_nanos(rem));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    fn in_flight_wait(&mut self, limit: u32) {
        loop {
            let done = if self.job.workload.in_flight_until_consumed {
                self.job.shared.consumed_any.load(Ordering::Acquire)
            } else {
                self.ev.rec.delivered
            };
            if self.issued.saturating_sub(done) < limit as u64 || self.job.shared.stopping() {
                return;
            }
            self.ev.serve(1);
        }
    }

    /// Sends until the phase's end. Returns (sent, first send, last send) in ns since t0.
    fn phase(
        &mut self,
        phase: Phase,
        count: Option<u64>,
        duration: Option<Duration>,
    ) -> (u64, u64, u64) {
        let w = &self.job.workload;
        let start = self.now_ns();
        let stagger = self.job.id as f64 * self.job.rate_share;
        let mut pacer = Pacer::new(&w.rate, self.job.rate_share, start, stagger);
        let end_ns = duration.map(|d| start + d.as_nanos() as u64);
        let warm = matches!(phase, Phase::Warmup);
        let mut sent = 0u64;
        let (mut first, mut last) = (0u64, 0u64);
        let mut hdr = [0u8; E2E_HEADER_LEN];
        let stamp = self.job.e2e;
        let user_headers = !w.headers.is_empty();
        let paced = self.ev.rec.paced;
        let shared = self.payload.is_shared();
        loop {
            if count.is_some_and(|c| sent >= c) || self.job.shared.stopping() {
                break;
            }
            let Some(slot) = pacer.next() else { break };
            if let Some(limit) = w.in_flight {
                self.in_flight_wait(limit);
            }
            // One clock read per record at unlimited rate, where intended and actual send
            // time are the same instant; paced records read it again after the wait.
            let (intended, actual) = match slot {
                Some(t) => {
                    if end_ns.is_some_and(|e| t >= e) {
                        break;
                    }
                    self.wait_until(t);
                    (t, self.now_ns())
                }
                None => {
                    let now = self.now_ns();
                    if end_ns.is_some_and(|e| now >= e) {
                        break;
                    }
                    (now, now)
                }
            };
            let unix_ms = self.unix_ms_at_t0 + intended / 1_000_000;
            let seq = self.seq;
            let value = self.payload.next(seq, unix_ms);
            let key = self.keys.next(seq);
            let opaque = intended as usize | if warm { WARMUP_BIT } else { 0 };
            let mut headers = (stamp || user_headers).then(|| {
                let mut h = native::Headers::with_capacity(1 + w.headers.len());
                if stamp {
                    hdr[..8].copy_from_slice(&intended.to_le_bytes());
                    hdr[8..12].copy_from_slice(&self.job.id.to_le_bytes());
                    hdr[12..20].copy_from_slice(&seq.to_le_bytes());
                    hdr[20] = u8::from(!warm);
                    h.add(E2E_HEADER, &hdr);
                }
                for (k, v) in &w.headers {
                    h.add(k, v.as_bytes());
                }
                h
            });
            loop {
                let res = if shared {
                    // SAFETY: shared payloads point into the spec's Arc data, which `run`
                    // keeps alive until after the producer is destroyed (`_payload_data`).
                    unsafe { self.ev.p.produce_shared(value, key, opaque, headers) }
                } else {
                    self.ev.p.produce(value, key, opaque, headers)
                };
                match res {
                    Ok(()) => {
                        sent += 1;
                        self.issued += 1;
                        self.seq += 1;
                        break;
                    }
                    Err((RDKafkaErrorCode::QueueFull, back)) => {
                        // librdkafka's queue is full: serve delivery reports to make room.
                        self.queue_full += 1;
                        headers = back;
                        self.ev.serve(1);
                        if self.job.shared.stopping() {
                            break;
                        }
                    }
                    Err((code, _)) => {
                        self.enqueue_failed += 1;
                        *self
                            .enqueue_failed_by_kind
                            .entry(format!("{code:?}"))
                            .or_default() += 1;
                        self.seq += 1;
                        break;
                    }
                }
            }
            if !warm {
                if paced {
                    record(&mut self.send_delay, actual.saturating_sub(intended));
                }
                if first == 0 {
                    first = actual.max(1);
                }
                last = actual;
                if sent & 63 == 0 {
                    self.job.shared.sent.fetch_add(64, Ordering::Relaxed);
                }
            }
            if sent & 31 == 0 {
                self.ev.serve(0);
            }
        }
        if !warm {
            self.job.shared.sent.fetch_add(sent & 63, Ordering::Relaxed);
            if !paced {
                // Unlimited: every record is sent the moment it is due.
                let _ = self.send_delay.record_n(0, sent);
            }
        }
        (sent, first, last)
    }
}

pub fn run(job: ProducerJob) -> ProducerOutcome {
    let shared = job.shared.clone();
    // Constant and file payloads are sent without a copy, straight from this data: declared
    // before the producer, so it is dropped after it (and after every record in its queues).
    let _payload_data = job.workload.payload.clone();
    let created: Result<BaseProducer<Quiet, NoCustomPartitioner>, _> =
        job.config.create_with_context(Quiet);
    let producer = match created {
        Ok(p) => p,
        Err(e) => {
            // Still meet the orchestrator at both barriers so nothing waits forever.
            job.barrier.wait();
            job.barrier.wait();
            return ProducerOutcome::failed_to_start(format!("cannot create producer: {e}"));
        }
    };
    // Learn the partition leaders and connect before the clock starts: otherwise the first
    // records of a run wait for librdkafka's lazy metadata request, a start-up stall that would
    // be charged to the workload. A failure here is left to the run itself to report.
    let _ = producer
        .client()
        .fetch_metadata(Some(&job.topic), Duration::from_secs(10));
    let native = match native::Producer::new(&producer, &job.topic) {
        Ok(p) => p,
        Err(e) => {
            job.barrier.wait();
            job.barrier.wait();
            return ProducerOutcome::failed_to_start(e);
        }
    };
    // Sleep precisely when pacing: the default 50 µs timer slack would dominate at high rates.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_TIMERSLACK only changes this thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000u64);
    }
    let unix_ms_at_t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
        .saturating_sub(shared.t0.elapsed().as_millis() as u64);
    let seed = (job.id as u64 + 1).wrapping_mul(0x9E37_79B9) ^ unix_ms_at_t0;
    let mut s = Sender {
        ev: Events {
            p: native,
            rec: Recorder {
                measuring: false,
                paced: !matches!(job.workload.rate, RateSpec::Unlimited),
                ack: new_histogram(),
                service: new_histogram(),
                delivered: 0,
                acked: 0,
                failed: 0,
                failed_by_kind: BTreeMap::new(),
                payload_bytes: 0,
                last_ack_ns: 0,
                stats: StatsAcc::default(),
                stats_seen: 0,
            },
            t0: shared.t0,
            shared: shared.clone(),
        },
        job: &job,
        unix_ms_at_t0,
        payload: PayloadGen::new(&job.workload.payload, seed),
        keys: KeyGen::new(&job.workload.key, seed),
        seq: 0,
        issued: 0,
        queue_full: 0,
        enqueue_failed: 0,
        enqueue_failed_by_kind: BTreeMap::new(),
        send_delay: new_histogram(),
    };

    if let Some(w) = &job.workload.warmup {
        let share = |n: u64| (n as f64 * job.rate_share).ceil() as u64;
        match w {
            Warmup::Messages(n) => s.phase(Phase::Warmup, Some(share(*n)), None),
            Warmup::Duration(d) => s.phase(Phase::Warmup, None, Some(*d)),
        };
        s.ev.drain(job.flush_timeout);
    }
    // Statistics windows from here on count towards the run; the counters' values up to now
    // are the baseline.
    s.ev.serve(0);
    job.barrier.wait();
    job.barrier.wait();
    s.ev.rec.measuring = true;
    let start_ns = s.now_ns();
    let (sent, first, last) = s.phase(Phase::Measured, job.messages, job.workload.duration);

    // Drain: every record gets its delivery report, bounded by the delivery timeout.
    let flushed = s.ev.drain(job.flush_timeout);
    // One more statistics window so the tail of the run is in the producer internals.
    let seen = s.ev.rec.stats_seen;
    let deadline = Instant::now() + Duration::from_millis(STATS_INTERVAL_MS * 2 + 200);
    while s.ev.rec.stats_seen == seen && Instant::now() < deadline {
        s.ev.serve(10);
    }

    let r = &mut s.ev.rec;
    let acc = r.stats;
    let div = |a: i64, b: i64| (b > 0).then(|| a as f64 / b as f64);
    let internals = Internals {
        batch_bytes_avg: div(acc.batch_bytes_sum, acc.batch_bytes_cnt),
        batch_records_avg: div(acc.batch_records_sum, acc.batch_records_cnt),
        records_per_request: div(acc.txmsgs - acc.base_txmsgs, acc.reqs - acc.base_reqs),
        wire_ratio: div(acc.txbytes - acc.base_txbytes, acc.batch_bytes_sum),
        produce_requests: (acc.reqs - acc.base_reqs).max(0) as u64,
    };
    let mut failed_by_kind = std::mem::take(&mut r.failed_by_kind);
    for (k, v) in &s.enqueue_failed_by_kind {
        *failed_by_kind.entry(format!("enqueue: {k}")).or_default() += v;
    }
    let error = (!flushed).then(|| {
        format!(
            "{} records still undelivered after {}s",
            s.ev.p.outq_len(),
            job.flush_timeout.as_secs()
        )
    });
    let r = &mut s.ev.rec;
    let ack = std::mem::replace(&mut r.ack, new_histogram());
    ProducerOutcome {
        sent,
        acked: r.acked,
        failed: r.failed + s.enqueue_failed,
        failed_by_kind,
        queue_full: s.queue_full,
        payload_bytes: r.payload_bytes,
        // Unlimited: sent when due, so service time is the ack latency itself.
        service: if r.paced {
            std::mem::replace(&mut r.service, new_histogram())
        } else {
            ack.clone()
        },
        ack,
        send_delay: std::mem::replace(&mut s.send_delay, new_histogram()),
        start_ns,
        first_send_ns: first,
        last_send_ns: last,
        last_ack_ns: r.last_ack_ns,
        internals,
        error,
    }
}
