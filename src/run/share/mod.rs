//! A share group reading the run (KIP-932): `workload.consumers` members, each on its own
//! thread with its own `wire::ShareConsumer`, acquire records, spend the scenario's
//! processing time on each, and acknowledge each as the scenario's mix says. Every record is
//! verified: accepted exactly once, or accounted as rejected or archived (released at the
//! delivery count limit) — nothing lost, and every redelivery attributed to its cause.
//!
//! An acknowledgement counts only once the broker has taken it: a member whose acquisition
//! lock expired is refused, and the record is someone else's by then.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

mod start;

pub(super) use start::{start, watermarks, Members, DEFAULT_CLIENT_ID};

use super::consumer::{ConsumerOutcome, Layout, Reads};
use super::shared::{meet, skip_meetings, Shared};
use super::stamp;
use crate::measure::{record, ConsumerRecording, InDoubt, IntervalRecorder, ShareRecording};
use crate::model::{Ack, ShareSpec};
// NETWORK_EXCEPTION: what the wire settles an acknowledgement lost with its request with;
// the broker's answer never came, so the broker may have taken it.
use crate::wire::{AckKind, AckReport, ShareConfig, ShareConsumer, NETWORK_EXCEPTION};

/// How long members wait for an assignment before the clock starts without them.
const READY_BOUND: Duration = Duration::from_secs(20);

pub(super) struct ShareJob {
    pub config: ShareConfig,
    pub spec: ShareSpec,
    pub layout: Arc<Layout>,
    /// Member i of the group; bit i of `Shared.consumer_stopped` stops it.
    pub index: u32,
    pub producers: u32,
    pub shared: Arc<Shared>,
    pub reads: Arc<Reads>,
    pub barrier: Arc<Barrier>,
    /// Once nothing more is accounted for this long after the producers finish, stop.
    pub drain: Duration,
    pub interval: Duration,
    /// Per run partition, the first offset this run wrote: what lies below was in an
    /// `existing` topic before, and is read and settled, not verified.
    pub base: Arc<Vec<i64>>,
    /// Records of an existing topic to drain (`backlog = existing`), and how many of them
    /// the group has settled so far.
    pub existing: u64,
    pub settled_existing: Arc<AtomicU64>,
}

/// An acknowledgement on its way: what it is for, until the broker answers.
#[derive(Clone, Copy)]
struct Pending {
    topic: usize,
    partition: i32,
    offset: i64,
    producer: u32,
    seq: u64,
    ack: Ack,
    delivery: u16,
    /// Measured (not warm-up) or backlog: verified.
    counted: bool,
    /// In an existing topic before the run: settled and counted, not verified.
    existing: bool,
    backlog: bool,
    acquired_ns: u64,
}

struct Member<'j> {
    job: &'j ShareJob,
    rec: ConsumerRecording,
    share: ShareRecording,
    intervals: IntervalRecorder,
    /// Decided in the last poll, acknowledged with the next.
    decided: Vec<Pending>,
    /// Sent with the last poll, answered by the next report.
    sent: Vec<Pending>,
    limit: u16,
    measuring: bool,
    pending_verified: u64,
    pending_existing: u64,
    /// When this member last settled a record (ns on the run's clock).
    last_settled_ns: u64,
    error: Option<String>,
}

pub(super) fn run(job: ShareJob) -> ConsumerOutcome {
    let mut m = Member {
        job: &job,
        rec: ConsumerRecording::empty(),
        share: ShareRecording::default(),
        intervals: IntervalRecorder::new(1),
        decided: Vec::with_capacity(1024),
        sent: Vec::with_capacity(1024),
        limit: job.spec.delivery_limit(),
        measuring: false,
        pending_verified: 0,
        pending_existing: 0,
        last_settled_ns: 0,
        error: None,
    };
    m.rec.consumed_by_topic = vec![0; job.layout.topics.len()];
    for id in 0..job.producers as usize {
        m.rec.seen_mut(id);
    }
    let mut consumer = match ShareConsumer::join(job.config.clone()) {
        Ok(c) => Some(c),
        Err(e) => {
            skip_meetings(&job.barrier);
            return ConsumerOutcome {
                recording: ConsumerRecording::empty(),
                error: Some(format!("share consumer cannot join: {e}")),
                busy: None,
            };
        }
    };
    // Ready when the member has its partitions (a share group assigns every member; there
    // may be more members than partitions). Nothing is fetched before the clock.
    let ready_by = Instant::now() + READY_BOUND;
    while let Some(c) = consumer.as_mut() {
        if !c.assignment().is_empty() || Instant::now() >= ready_by || job.shared.stopping() {
            break;
        }
        // The assignment comes with a heartbeat; a few a second while waiting for it, not a
        // stream of them at the coordinator.
        std::thread::sleep(Duration::from_millis(200));
        if let Err(e) = c.heartbeat() {
            m.note(format!("share consumer: {e}"));
            break;
        }
    }
    meet(&job.barrier);
    meet(&job.barrier);
    m.start_measuring();
    let (cpu, from) = (super::cpu::thread(), Instant::now());
    m.read_until_done(&mut consumer);
    if let Some(mut c) = consumer.take() {
        // The last poll's decisions go out with the close.
        for p in &m.decided {
            c.ack(p.topic, p.partition, p.offset, kind(p.ack));
        }
        m.sent = std::mem::take(&mut m.decided);
        match c.close() {
            Ok(report) => m.answered(&report),
            Err(e) => {
                m.unanswered();
                m.note(format!("share consumer close: {e}"));
            }
        }
    }
    m.flush();
    let busy = super::cpu::busy_since(cpu, from.elapsed().as_nanos() as u64);
    let mut recording = std::mem::replace(&mut m.rec, ConsumerRecording::empty());
    recording.intervals = m.intervals.finish();
    recording.share = Some(std::mem::take(&mut m.share));
    ConsumerOutcome {
        recording,
        error: m.error.take(),
        busy,
    }
}

impl Member<'_> {
    fn now(&self) -> u64 {
        self.job.shared.t0.elapsed().as_nanos() as u64
    }

    fn note(&mut self, e: String) {
        self.error.get_or_insert(e);
    }

    fn start_measuring(&mut self) {
        let origin = self.job.shared.measure_origin();
        self.intervals = IntervalRecorder::new(self.job.interval.as_nanos() as u64);
        self.intervals.start(origin);
        self.rec.last_read_ns = origin;
        self.measuring = true;
    }

    /// Polls until every record is accounted for, or nothing more comes for the drain time
    /// once the producers are done, or the run stops. A stopped member (the fault timeline)
    /// vanishes without a word, as a crashed one would: what it held comes back to the
    /// others when its acquisition locks expire.
    fn read_until_done(&mut self, consumer: &mut Option<ShareConsumer>) {
        let job = self.job;
        let bit = 1u64 << (job.index % 64);
        let mut progress = (u64::MAX, Instant::now());
        loop {
            if job.shared.interrupted() || job.shared.lost() {
                break;
            }
            let stopped = job.shared.consumer_stopped.load(Ordering::Relaxed) & bit != 0;
            if stopped && consumer.is_some() {
                // Dropped without closing: no acknowledgement, no leave.
                *consumer = None;
                self.decided.clear();
                self.sent.clear();
            } else if !stopped && consumer.is_none() {
                match ShareConsumer::join(job.config.clone()) {
                    Ok(c) => *consumer = Some(c),
                    Err(e) => self.note(format!("share consumer cannot rejoin: {e}")),
                }
            }
            if job.shared.producers_done.load(Ordering::Acquire) {
                self.flush();
                let expected = job
                    .shared
                    .expected
                    .load(Ordering::Acquire)
                    .saturating_add(job.shared.backlog_written.load(Ordering::Acquire));
                let verified = job.reads.verified.load(Ordering::Acquire);
                let existing = job.settled_existing.load(Ordering::Acquire);
                if verified >= expected && existing >= job.existing && self.decided.is_empty() {
                    // The group settled everything: a backlog's drain ends with this member's
                    // last record (each member stores its own; the latest one stands).
                    if self.last_settled_ns > 0 {
                        job.reads
                            .drained_ns
                            .fetch_max(self.last_settled_ns, Ordering::AcqRel);
                    }
                    break;
                }
                if verified + existing != progress.0 {
                    progress = (verified + existing, Instant::now());
                } else if progress.1.elapsed() >= job.drain {
                    break;
                }
                // The last records are in this member's hands: acknowledge them now, with a
                // ShareAcknowledge the broker answers at once, not on a fetch it would hold
                // for `fetch.max.wait.ms` since nothing is left to acquire.
                let left = (expected - verified.min(expected))
                    + (job.existing - existing.min(job.existing));
                if !self.decided.is_empty() && left <= self.decided.len() as u64 {
                    if let Some(c) = consumer.as_mut() {
                        self.commit(c);
                        continue;
                    }
                }
            }
            match consumer.as_mut() {
                Some(c) => {
                    if let Err(e) = self.poll(c) {
                        self.note(format!("share consumer: {e}"));
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        self.flush();
    }

    /// The last poll's decisions, acknowledged now (ShareAcknowledge).
    fn commit(&mut self, c: &mut ShareConsumer) {
        for p in &self.decided {
            c.ack(p.topic, p.partition, p.offset, kind(p.ack));
        }
        self.sent = std::mem::take(&mut self.decided);
        match c.commit() {
            Ok(report) => self.answered(&report),
            Err(e) => {
                self.unanswered();
                self.note(format!("share consumer: {e}"));
            }
        }
        self.flush();
    }

    /// One poll: the last poll's decisions go out with it, its answer settles them, and
    /// each record it acquires is processed and decided.
    fn poll(&mut self, c: &mut ShareConsumer) -> Result<(), crate::wire::WireError> {
        for p in &self.decided {
            c.ack(p.topic, p.partition, p.offset, kind(p.ack));
        }
        std::mem::swap(&mut self.sent, &mut self.decided);
        let mut batch = std::mem::take(&mut self.decided);
        batch.clear();
        let processing = self.job.spec.processing;
        let t0 = self.job.shared.t0;
        let (base, partitions) = (&self.job.base, self.job.layout.partitions.max(1) as usize);
        let (e2e, intervals) = (&mut self.rec.e2e, &mut self.intervals);
        let (mut bytes, measuring) = (0u64, self.measuring);
        let result = c.poll(|r| {
            if !processing.is_zero() {
                std::thread::sleep(processing);
            }
            let now = t0.elapsed().as_nanos() as u64;
            let part = r.topic * partitions + r.partition.max(0) as usize;
            let existing = base.get(part).is_some_and(|b| r.offset < *b);
            let stamp = if existing {
                None
            } else {
                r.header(stamp::HEADER.as_bytes()).and_then(stamp::decode)
            };
            bytes += (r.key.map_or(0, <[u8]>::len) + r.value.map_or(0, <[u8]>::len)) as u64;
            let delivery = r.delivery_count.max(1) as u16;
            // End-to-end latency: intended send time → first acquired.
            if let Some(s) = stamp.filter(|s| delivery == 1 && s.measured && !s.backlog) {
                if measuring {
                    let ns = now.saturating_sub(s.intended_ns);
                    record(e2e, ns);
                    intervals.consumed(now, ns);
                }
            }
            batch.push(Pending {
                topic: r.topic,
                partition: r.partition,
                offset: r.offset,
                producer: stamp.map_or(u32::MAX, |s| s.producer),
                seq: stamp.map_or(0, |s| s.seq),
                ack: Ack::Accept,
                delivery,
                counted: stamp.is_some_and(|s| (s.measured || s.backlog) && !s.aborted),
                existing,
                backlog: stamp.is_some_and(|s| s.backlog),
                acquired_ns: now,
            });
        });
        self.decided = batch;
        self.rec.bytes += bytes;
        let outcome = match result {
            Ok(o) => o,
            Err(e) => {
                // Whether the broker took what was sent is unknown: settled at the end.
                self.unanswered();
                return Err(e);
            }
        };
        self.answered(&outcome.acks);
        let now = self.now();
        for i in 0..self.decided.len() {
            self.acquired(i, now);
        }
        Ok(())
    }

    /// A record just acquired: counted, its redelivery attributed, its acknowledgement decided.
    fn acquired(&mut self, i: usize, now: u64) {
        let p = &mut self.decided[i];
        let r = &mut self.rec;
        r.records += 1;
        if let Some(n) = r.consumed_by_topic.get_mut(p.topic) {
            *n += 1;
        }
        if r.first_read_ns == 0 && self.measuring {
            r.first_read_ns = now;
        }
        r.last_read_ns = now;
        if p.delivery > 1 {
            self.share.redelivered += 1;
            // Did a member release it last time? The mix says so from the record alone.
            let released = p.producer != u32::MAX
                && self.job.spec.ack.decide(p.producer, p.seq, p.delivery - 1) == Ack::Release;
            if !released {
                self.share.lock_timeouts += 1;
            }
        }
        p.ack = if p.producer == u32::MAX {
            Ack::Accept
        } else {
            self.job.spec.ack.decide(p.producer, p.seq, p.delivery)
        };
    }

    /// The broker's answer to the acknowledgements sent with the last poll.
    fn answered(&mut self, report: &AckReport) {
        let refused: HashMap<(usize, i32, i64), i16> = report
            .refused
            .iter()
            .map(|&(t, p, o, code)| ((t, p, o), code))
            .collect();
        // Every acknowledgement sent with a poll is answered by it; were one left for later,
        // it would be counted here as taken: say so rather than count silently.
        if report.settled() != self.sent.len() as u64 {
            self.note(format!(
                "share consumer: {} acknowledgements sent, {} answered",
                self.sent.len(),
                report.settled()
            ));
        }
        let now = self.now();
        let sent = std::mem::take(&mut self.sent);
        for p in &sent {
            match refused.get(&(p.topic, p.partition, p.offset)) {
                Some(&NETWORK_EXCEPTION) => {
                    self.in_doubt(p);
                    continue;
                }
                Some(_) => {
                    self.share.refused += 1;
                    continue;
                }
                None => {}
            }
            record(&mut self.share.ack, now.saturating_sub(p.acquired_ns));
            let accounted = match p.ack {
                Ack::Accept => {
                    self.share.accepted += 1;
                    self.share.accepted_at(p.delivery);
                    true
                }
                Ack::Reject => {
                    self.share.rejected += 1;
                    true
                }
                Ack::Release => {
                    self.share.released += 1;
                    let archived = p.delivery >= self.limit;
                    if archived {
                        self.share.archived += 1;
                    }
                    archived
                }
            };
            if accounted && p.counted && p.producer != u32::MAX {
                self.account(p, now);
            } else if accounted && p.existing {
                self.pending_existing += 1;
                self.last_settled_ns = now;
            }
        }
        self.sent = sent;
        self.sent.clear();
    }

    /// The acknowledgements sent with a request whose answer was lost: each in doubt.
    fn unanswered(&mut self) {
        let sent = std::mem::take(&mut self.sent);
        for p in &sent {
            self.in_doubt(p);
        }
        self.sent = sent;
        self.sent.clear();
    }

    /// An acknowledgement the broker may or may not have taken. Its record, if the broker
    /// did not take it, comes back to the group and is accounted then; the merge of the
    /// members' reads settles the rest as taken (`measure::share::settle_unanswered`).
    fn in_doubt(&mut self, p: &Pending) {
        self.share.unanswered += 1;
        if p.counted && p.producer != u32::MAX {
            self.share.in_doubt.push(InDoubt {
                producer: p.producer,
                seq: p.seq,
                backlog: p.backlog,
                ack: p.ack,
                delivery: p.delivery,
                archived: p.ack == Ack::Release && p.delivery >= self.limit,
            });
        }
    }

    /// A record of the run settled for good: accepted, rejected or archived, once.
    fn account(&mut self, p: &Pending, now: u64) {
        let r = &mut self.rec;
        if (p.producer as usize) >= r.seen.len() {
            return;
        }
        if r.seen[p.producer as usize].insert(p.seq) {
            r.duplicated += 1;
            return;
        }
        self.pending_verified += 1;
        self.last_settled_ns = now;
        if p.backlog {
            r.backlog_read += 1;
            self.intervals.backlog_read(now);
        } else {
            r.consumed += 1;
        }
    }

    fn flush(&mut self) {
        if self.pending_existing > 0 {
            self.job
                .settled_existing
                .fetch_add(self.pending_existing, Ordering::AcqRel);
            self.pending_existing = 0;
        }
        if self.pending_verified > 0 {
            self.job
                .reads
                .verified
                .fetch_add(self.pending_verified, Ordering::AcqRel);
            self.job
                .shared
                .consumed_any
                .fetch_add(self.pending_verified, Ordering::Release);
            self.pending_verified = 0;
        }
    }
}

fn kind(a: Ack) -> AckKind {
    match a {
        Ack::Accept => AckKind::Accept,
        Ack::Release => AckKind::Release,
        Ack::Reject => AckKind::Reject,
    }
}
