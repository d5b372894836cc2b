//! One producer client on its own OS thread: the send loop.
//!
//! It allocates nothing per record (unless the scenario asks for headers or a consumer, which
//! need a header per record), sends each record when the schedule says (`pacer`), never early
//! and never skipping one, and records latency from the intended time, so a stalled sender
//! shows up in the figures instead of hiding (no coordinated omission). It sends and serves
//! events through `native` (see there for why).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, NoCustomPartitioner, ProducerContext};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientContext;

use super::events::{self, Events};
use super::pacer::{Pacer, Share, Slot};
use super::payload::{KeyGen, PayloadGen, Seeds};
use super::recorder::Recorder;
use super::shard::Partitioner;
use super::shared::{meet, skip_meetings, Shared};
use super::spread::Layout;
use super::stamp::{self, Stamp};

pub(super) mod finish;
mod start;
use super::txn::{self, Txn};
use crate::measure::compaction::KeyTable;
use crate::measure::{new_histogram, record, ProducerRecording, TopicTally};
use crate::model::{RateSpec, Warmup, Workload};
use crate::native::producer as native;
use crate::plan::STATS_INTERVAL_MS;
use crate::random::Rng;

/// A wait at least this long blocks on the event queue (millisecond granularity, so it wakes
/// a millisecond early and finishes with a sleep): delivery reports that arrive meanwhile are
/// stamped when they arrive, not when the wait ends.
const BLOCK_ON_EVENTS_NS: u64 = 2_000_000;
/// A shorter wait down to this sleeps (precise to about a microsecond with the thread's timer
/// slack set to 1 µs); below it a sleep's own wake-up cost exceeds the wait, so it spins.
const SLEEP_NS: u64 = 5_000;
/// The shared `sent` counter (progress only) moves once per this many records, so the hot
/// path does not write a shared cache line per record. A power of two: the test is a mask.
const PROGRESS_BATCH: u64 = 64;
/// Events are served every this many records even when there is no wait, so delivery reports
/// are stamped promptly at unlimited rate and librdkafka's queue does not fill up.
const SERVE_EVERY: u64 = 32;

pub(super) struct ProducerJob {
    pub config: ClientConfig,
    pub topic: String,
    /// Every topic of the run, `topic` first (`topics = N`; see `spread.rs`).
    pub topics: Vec<String>,
    pub workload: Workload,
    /// Which records of the schedule (and of the message count) this producer sends; its
    /// index is also its id in the end-to-end stamp.
    pub share: Share,
    /// This producer's number among the run's producers on this machine (the stamp's).
    pub ordinal: u32,
    /// A shard's own partitions: its records go only there (None: the partitioner decides).
    pub partitions: Option<Vec<i32>>,
    /// Stamp each record for the consumer.
    pub e2e: bool,
    pub shared: Arc<Shared>,
    /// Two waits: warm-up done, then go (the orchestrator measures disk in between).
    pub barrier: Arc<Barrier>,
    /// The run's consumers read committed records only (`Txn::new`).
    pub readers_skip_aborted: bool,
    pub flush_timeout: Duration,
    /// Width of the time series' intervals, and whether latency is kept by due time too.
    pub interval: Duration,
    pub by_due: bool,
}

/// What one producer measured, and why it could not finish if it could not.
pub(super) struct ProducerOutcome {
    pub recording: ProducerRecording,
    pub error: Option<String>,
    /// Every key's last write (`compaction = verify`).
    pub keys: Option<KeyTable>,
}

impl ProducerOutcome {
    pub(super) fn failed_to_start(error: String) -> ProducerOutcome {
        ProducerOutcome {
            recording: ProducerRecording::empty(),
            error: Some(error),
            keys: None,
        }
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

enum Phase {
    /// `backlog = M`: written before warm-up, unpaced and unmeasured, for the consumers to
    /// drain once the clock starts.
    Backlog,
    Warmup,
    Measured,
}

/// What a phase sent: how many, and the first and last send times (ns since t0; 0 when none).
struct Sent {
    count: u64,
    first_ns: u64,
    last_ns: u64,
}

struct Sender<'a> {
    ev: Events<'a>,
    job: &'a ProducerJob,
    unix_ms_at_t0: u64,
    payload: PayloadGen,
    keys: KeyGen,
    /// `tombstones = f`: a record is a tombstone when its draw is at most f × 2^64 − 1.
    tombstone_at_most: Option<u64>,
    tombstones: Rng,
    seq: u64,
    issued: u64,
    queue_full: u64,
    enqueue_failed: u64,
    enqueue_failed_by_kind: BTreeMap<String, u64>,
    send_delay: Histogram<u64>,
    /// The transaction schedule, when the workload has `transaction`.
    txn: Option<Txn>,
    /// The transaction call that failed: the producer stops and the run fails.
    txn_error: Option<String>,
    /// Where this producer's records go over a run's topics.
    layout: Layout,
    /// A shard's: the partition of each record among the shard's own.
    partitioner: Option<Partitioner>,
}

impl Sender<'_> {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.ev.now_ns()
    }

    /// Waits until `t`, serving events meanwhile; never sends early.
    fn wait_until(&mut self, t: u64) {
        loop {
            self.ev.serve(0);
            let now = self.now_ns();
            if now >= t {
                return;
            }
            let rem = t - now;
            if rem >= BLOCK_ON_EVENTS_NS {
                self.ev.serve((rem / 1_000_000) as i32 - 1);
            } else if rem > SLEEP_NS {
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

    /// Sends this producer's share of the schedule until the phase's count or duration ends
    /// (or the shape does), then ends its open transaction. The loop is compiled twice, with
    /// and without transactions, so a run without them pays nothing for them per record.
    /// `warmup = auto`: warm-up slices until the rate has settled (`run::warmup`) or `max`
    /// has passed; a bound reached is told to the run.
    fn warm_until_settled(&mut self, max: Duration) {
        let start = std::time::Instant::now();
        self.job.shared.warmup_started();
        let mut slices = Vec::new();
        loop {
            let left = max.saturating_sub(start.elapsed());
            if left.is_zero() {
                self.job.shared.warmup_bound_reached();
                break;
            }
            if self.job.shared.stopping() {
                break;
            }
            let before = self.ev.rec.delivered;
            let sent = self.run_phase(Phase::Warmup, None, Some(Warmup::AUTO_SLICE.min(left)));
            slices.push(super::warmup::Slice {
                sent: sent.count,
                reported: self.ev.rec.delivered - before,
            });
            if super::warmup::settled(&slices) {
                break;
            }
        }
    }

    fn run_phase(&mut self, phase: Phase, count: Option<u64>, duration: Option<Duration>) -> Sent {
        let Some(t) = self.txn.as_mut() else {
            return self.phase::<false>(phase, count, duration);
        };
        t.start_phase(matches!(phase, Phase::Measured));
        let sent = self.phase::<true>(phase, count, duration);
        if self.txn_error.is_none() {
            self.txn_step(|t, ev, seq| t.end(ev, seq));
        }
        sent
    }

    /// One step of the transaction schedule; a failure stops the producer (None).
    #[inline]
    fn txn_step<T>(
        &mut self,
        f: impl FnOnce(&mut Txn, &mut Events, u64) -> Result<T, String>,
    ) -> Option<T> {
        let t = self.txn.as_mut()?;
        match f(t, &mut self.ev, self.seq) {
            Ok(v) => Some(v),
            Err(e) => {
                self.txn_error = Some(e);
                None
            }
        }
    }

    fn phase<const TXN: bool>(
        &mut self,
        phase: Phase,
        count: Option<u64>,
        duration: Option<Duration>,
    ) -> Sent {
        let w = &self.job.workload;
        let start = self.now_ns();
        let backlog = matches!(phase, Phase::Backlog);
        let rate = if backlog {
            &RateSpec::Unlimited
        } else {
            &w.rate
        };
        let mut pacer = Pacer::new(rate, self.job.share, start);
        let end_ns = duration.map(|d| start + d.as_nanos() as u64);
        let measured = matches!(phase, Phase::Measured);
        let mut sent = 0u64;
        let (mut first, mut last) = (0u64, 0u64);
        let mut stamp_buf = [0u8; stamp::LEN];
        let stamped = self.job.e2e;
        let user_headers = !w.headers.is_empty();
        let paced = self.ev.rec.paced;
        let no_copy = self.payload.is_shared();
        let spreading = matches!(self.layout, Layout::RoundRobin(_));
        loop {
            if count.is_some_and(|c| sent >= c) || self.job.shared.stopping() {
                break;
            }
            if TXN && self.txn_error.is_some() {
                break;
            }
            let slot = pacer.next_slot();
            if slot == Slot::Done {
                break;
            }
            if let Some(limit) = w.in_flight.filter(|_| !backlog) {
                self.in_flight_wait(limit);
            }
            // One clock read per record at unlimited rate, where intended and actual send
            // time are the same instant; paced records read it again after the wait.
            let (intended, actual) = match slot {
                Slot::At(t) => {
                    if end_ns.is_some_and(|e| t >= e) {
                        break;
                    }
                    // A transaction bounded by time ends on time, also while the sender waits.
                    if TXN {
                        let due = self.txn.as_ref().and_then(Txn::due).filter(|d| *d < t);
                        if let Some(d) = due {
                            self.wait_until(d);
                            if self.txn_step(|t, ev, seq| t.end(ev, seq)).is_none() {
                                break;
                            }
                        }
                    }
                    self.wait_until(t);
                    (t, self.now_ns())
                }
                Slot::Now | Slot::Done => {
                    let now = self.now_ns();
                    if end_ns.is_some_and(|e| now >= e) {
                        break;
                    }
                    (now, now)
                }
            };
            let mut aborted = false;
            if TXN {
                match self.txn_step(|t, ev, seq| t.before(ev, actual, seq)) {
                    Some(a) => aborted = a,
                    None => break,
                }
            }
            let unix_ms = self.unix_ms_at_t0 + intended / 1_000_000;
            let seq = self.seq;
            let tombstone = self
                .tombstone_at_most
                .is_some_and(|t| self.tombstones.next_u64() <= t);
            // A tombstone has no value: none is generated for it.
            let value = if tombstone {
                &[][..]
            } else {
                self.payload.next(seq, unix_ms)
            };
            let value_len = value.len() as u64;
            let key = self.keys.next(seq, unix_ms);
            if let Some(p) = &mut self.partitioner {
                self.ev.producer.set_partition(p.pick(key));
            }
            let opaque = events::opaque(intended, measured);
            let mut headers = (stamped || user_headers).then(|| {
                let mut h = native::Headers::with_capacity(1 + w.headers.len());
                if stamped {
                    let s = Stamp {
                        intended_ns: intended,
                        producer: self.job.ordinal,
                        seq,
                        measured,
                        aborted,
                        backlog,
                    };
                    stamp::encode(&s, &mut stamp_buf);
                    h.add(stamp::HEADER, &stamp_buf);
                }
                for (k, v) in &w.headers {
                    h.add(k, v.as_bytes());
                }
                h
            });
            let topic = if spreading {
                next_topic(&mut self.layout, &mut self.ev.producer)
            } else {
                0
            };
            loop {
                let res = if tombstone {
                    self.ev.producer.produce_tombstone(key, opaque, headers)
                } else if no_copy {
                    // Constant and file payloads are handed to librdkafka by reference: no
                    // copy and no allocation per record, which is most of the hot path's
                    // cost at large payloads.
                    // SAFETY: shared payloads point into the spec's Arc data, which `run`
                    // keeps alive until after the producer is destroyed (`_payload_data`).
                    unsafe { self.ev.producer.produce_shared(value, key, opaque, headers) }
                } else {
                    self.ev.producer.produce(value, key, opaque, headers)
                };
                match res {
                    Ok(()) => {
                        if measured {
                            self.ev.rec.intervals.sent(actual);
                            if spreading {
                                tally_sent(&mut self.ev.rec.by_topic, topic, true);
                            }
                            if let Some(h) = self.ev.rec.sizes.as_mut().filter(|_| !tombstone) {
                                record(h, value_len);
                            }
                        }
                        sent += 1;
                        self.issued += 1;
                        self.seq += 1;
                        if TXN {
                            // A failure is seen at the top of the loop.
                            self.txn_step(|t, ev, seq| t.after(ev, seq));
                        }
                        break;
                    }
                    Err((RDKafkaErrorCode::QueueFull, back)) => {
                        // librdkafka's queue is full: serve delivery reports to make room,
                        // then send the same record (never skip it).
                        self.queue_full += 1;
                        headers = back;
                        self.ev.serve(1);
                        if self.job.shared.stopping() {
                            break;
                        }
                    }
                    Err((code, _)) => {
                        if measured {
                            self.ev.rec.intervals.failed(actual, 1);
                        }
                        if spreading {
                            tally_sent(&mut self.ev.rec.by_topic, topic, false);
                        }
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
            if measured {
                if paced {
                    record(&mut self.send_delay, actual.saturating_sub(intended));
                }
                if first == 0 {
                    first = actual.max(1);
                }
                last = actual;
                if sent % PROGRESS_BATCH == 0 {
                    self.job
                        .shared
                        .sent
                        .fetch_add(PROGRESS_BATCH, Ordering::Relaxed);
                }
            }
            if sent % SERVE_EVERY == 0 {
                self.ev.serve(0);
            }
        }
        if measured {
            // The records since the last full batch.
            self.job
                .shared
                .sent
                .fetch_add(sent % PROGRESS_BATCH, Ordering::Relaxed);
            if !paced {
                // Unlimited: every record is sent the moment it is due.
                let _ = self.send_delay.record_n(0, sent);
            }
        }
        Sent {
            count: sent,
            first_ns: first,
            last_ns: last,
        }
    }
}

/// A producer that cannot start still meets the others at every point, and counts as done
/// with its share of a cold backlog, which the others wait on (`Shared::cold_ready`).
fn give_up(job: &ProducerJob, shared: &Shared) {
    shared.backlog_written_by_one();
    skip_meetings(&job.barrier);
}

pub(super) fn run(job: ProducerJob) -> ProducerOutcome {
    let shared = job.shared.clone();
    // Constant and file payloads are sent without a copy, straight from this data: declared
    // before the producer, so it is dropped after it (and after every record in its queues).
    let _payload_data = job.workload.payload.clone();
    // A transactional producer needs its transactional.id at creation.
    let txn_config = (job.workload.transaction.as_ref())
        .map(|_| txn::with_transactional_id(&job.config, &job.topic, job.share));
    let created: Result<BaseProducer<Quiet, NoCustomPartitioner>, _> = txn_config
        .as_ref()
        .unwrap_or(&job.config)
        .create_with_context(Quiet);
    let producer = match created {
        Ok(p) => p,
        Err(e) => {
            give_up(&job, &shared);
            return ProducerOutcome::failed_to_start(format!("cannot create producer: {e}"));
        }
    };
    start::learn_leaders(&producer, &job, &shared);
    let native = match start::topic_handles(&producer, &job) {
        Ok(p) => p,
        Err(e) => {
            give_up(&job, &shared);
            return ProducerOutcome::failed_to_start(e);
        }
    };
    // Transactions are initialised once, before the clock: it fences an earlier instance of
    // the same transactional.id and waits for its coordinator.
    let txn = match &job.workload.transaction {
        Some(spec) => {
            let init = txn::call(&shared, job.flush_timeout, |ms| {
                native.init_transactions(ms)
            });
            if let Err(e) = init {
                give_up(&job, &shared);
                return ProducerOutcome::failed_to_start(format!(
                    "init_transactions failed: {}",
                    txn::explain(&e)
                ));
            }
            Some(Txn::new(
                spec,
                job.flush_timeout,
                shared.clone(),
                job.readers_skip_aborted,
            ))
        }
        None => None,
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
    // The run's seed (`seed = …`, else the clock's when the plan took none).
    let seeds = Seeds::of(job.workload.seed.unwrap_or(unix_ms_at_t0), job.share.index);
    let paced = !matches!(job.workload.rate, RateSpec::Unlimited);
    let layout = Layout::of(job.share.index, job.share.of, job.topics.len());
    let mut recorder = Recorder::new(paced, job.interval.as_nanos() as u64, job.by_due);
    if job.workload.compaction.is_some() {
        recorder.keys = KeyTable::new(&job.workload.key);
    }
    if job.workload.payload.sizes_vary() {
        recorder.sizes = Some(new_histogram());
    }
    recorder.live = (shared.live.as_ref())
        .and_then(|l| l.ack.get(job.ordinal as usize))
        .cloned();
    let mut s = Sender {
        ev: Events::new(native, recorder, shared.clone()),
        job: &job,
        unix_ms_at_t0,
        payload: PayloadGen::new(&job.workload.payload, seeds.payload),
        keys: KeyGen::new(&job.workload.key, seeds.key),
        tombstone_at_most: tombstone_threshold(job.workload.tombstones),
        tombstones: Rng::new(seeds.tombstone),
        seq: 0,
        issued: 0,
        queue_full: 0,
        enqueue_failed: 0,
        enqueue_failed_by_kind: BTreeMap::new(),
        send_delay: new_histogram(),
        txn,
        txn_error: None,
        layout,
        partitioner: job.partitions.clone().map(Partitioner::new),
    };
    match layout {
        Layout::Bound(t) => s.ev.producer.select(t),
        Layout::RoundRobin(_) => s.ev.rec.by_topic = vec![TopicTally::default(); job.topics.len()],
    }

    // Every thread connected (and, sharded, every shard): backlog and warm-up start.
    meet(&job.barrier);
    if let Some(n) = job.workload.backlog.as_ref().and_then(|b| b.records()) {
        let before = s.ev.rec.delivered;
        s.run_phase(Phase::Backlog, Some(job.share.count_of(n)), None);
        s.ev.drain(job.flush_timeout);
        shared
            .backlog_written
            .fetch_add(s.ev.rec.delivered - before, Ordering::Release);
        if matches!(
            job.workload.backlog,
            Some(crate::model::Backlog::Cold { .. })
        ) {
            // Nothing more is written until the backlog is in remote storage (the
            // orchestrator's wait, `offload`): warm-up and the clock begin with it cold.
            shared.backlog_written_by_one();
            while !shared.cold_ready() && !shared.stopping() {
                s.ev.serve(50);
            }
        }
    }
    if let Some(w) = &job.workload.warmup {
        match w {
            Warmup::Messages(n) => {
                s.run_phase(Phase::Warmup, Some(job.share.count_of(*n)), None);
            }
            Warmup::Duration(d) => {
                s.run_phase(Phase::Warmup, None, Some(*d));
            }
            Warmup::Auto { max } => s.warm_until_settled(*max),
        }
        s.ev.drain(job.flush_timeout);
    }
    // Statistics windows from here on count towards the run; the counters' values up to now
    // are the baseline.
    s.ev.serve(0);
    meet(&job.barrier);
    s.ev.rec.measuring = true;
    s.ev.rec.intervals.start(shared.measure_origin());
    let start_ns = s.now_ns();
    let cpu = super::cpu::thread();
    let messages = job.workload.messages.map(|m| job.share.count_of(m));
    let sent = s.run_phase(Phase::Measured, messages, job.workload.duration);
    let busy = super::cpu::busy_since(cpu, s.now_ns().saturating_sub(start_ns));
    if s.txn_error.is_some() {
        // The transaction cannot be committed: what is still queued would only wait for it.
        s.ev.producer.purge();
    }

    // Drain: every record gets its delivery report, bounded by the delivery timeout.
    let flushed = s.ev.drain(job.flush_timeout);
    // Records of aborted transactions are never read by a read_committed consumer: it must
    // not wait for them.
    let aborted = s.txn.as_ref().map_or(0, |t| t.rec.aborted_records);
    let reported = (s.ev.rec.acked + s.ev.rec.failed_seqs.len() as u64).saturating_sub(aborted);
    shared.producer_drained(reported, aborted, u64::from(job.workload.producers));
    // One more statistics window so the tail of the run is in the producer internals.
    let seen = s.ev.rec.stats_seen;
    let deadline = Instant::now() + Duration::from_millis(STATS_INTERVAL_MS * 2 + 200);
    while s.ev.rec.stats_seen == seen && Instant::now() < deadline {
        s.ev.serve(10);
    }
    let mut out = finish::finish(s, start_ns, sent, flushed);
    out.recording.busy = busy;
    out
}

/// The highest draw that makes a record a tombstone, for a fraction `f` of them (None: none).
pub(super) fn tombstone_threshold(f: f64) -> Option<u64> {
    (f > 0.0).then(|| ((f.min(1.0) * 2f64.powi(64)) as u64).saturating_sub(1))
}

/// The topic of the next record, selected: a round-robin producer's only work per record
/// for its topics (a bound producer's topic was selected once).
#[inline]
fn next_topic(layout: &mut Layout, producer: &mut native::Producer) -> usize {
    match layout {
        Layout::Bound(t) => *t,
        Layout::RoundRobin(s) => {
            let t = s.next();
            producer.select(t);
            t
        }
    }
}

/// A record sent (`ok`) or refused on enqueue, on its topic's tally.
#[inline]
fn tally_sent(by_topic: &mut [TopicTally], topic: usize, ok: bool) {
    if let Some(t) = by_topic.get_mut(topic) {
        if ok {
            t.sent += 1;
        } else {
            t.failed += 1;
        }
    }
}
