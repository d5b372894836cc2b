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

use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, NoCustomPartitioner, ProducerContext};
use rdkafka::ClientContext;

use super::events::Events;
use super::pacer::Share;
use super::payload::{KeyGen, PayloadGen, Seeds};
use super::recorder::Recorder;
use super::shard::Partitioner;
use super::shared::{meet, skip_meetings, Shared};
use super::spread::Layout;

pub(super) mod finish;
mod sender;
mod start;
use super::txn::{self, Txn};
use crate::measure::compaction::KeyTable;
use crate::measure::placed::PlaceRecorder;
use crate::measure::{new_histogram, ProducerRecording, TopicTally};
use crate::model::{RateSpec, Warmup, Workload};
use crate::native::producer as native;
use crate::plan::STATS_INTERVAL_MS;
use crate::random::Rng;
use sender::{Phase, Sender};

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
    /// The topic's partition count: the per-partition slots allocated before the clock.
    pub partition_count: i32,
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
    recorder.placed = Some(PlaceRecorder::of_run(job.topics.len(), job.partition_count));
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
