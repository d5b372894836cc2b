//! The send loop's state and its phases: pacing to the schedule (block, sleep or spin),
//! closed-loop waits, warm-up until settled, and the hot loop that sends and records each
//! record from its intended time.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hdrhistogram::Histogram;
use rdkafka::types::RDKafkaErrorCode;

use super::super::events::{self, Events};
use super::super::pacer::{Pacer, Slot};
use super::super::payload::{KeyGen, PayloadGen};
use super::super::shard::Partitioner;
use super::super::spread::Layout;
use super::super::stamp::{self, Stamp};

use super::super::txn::Txn;
use super::*;
use crate::measure::record;
use crate::model::{RateSpec, Warmup};
use crate::native::producer as native;
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

pub(super) enum Phase {
    /// `backlog = M`: written before warm-up, unpaced and unmeasured, for the consumers to
    /// drain once the clock starts.
    Backlog,
    Warmup,
    Measured,
}

/// What a phase sent: how many, and the first and last send times (ns since t0; 0 when none).
pub(super) struct Sent {
    pub(super) count: u64,
    pub(super) first_ns: u64,
    pub(super) last_ns: u64,
}

pub(super) struct Sender<'a> {
    pub(super) ev: Events<'a>,
    pub(super) job: &'a ProducerJob,
    pub(super) unix_ms_at_t0: u64,
    pub(super) payload: PayloadGen,
    pub(super) keys: KeyGen,
    /// `tombstones = f`: a record is a tombstone when its draw is at most f × 2^64 − 1.
    pub(super) tombstone_at_most: Option<u64>,
    pub(super) tombstones: Rng,
    pub(super) seq: u64,
    pub(super) issued: u64,
    pub(super) queue_full: u64,
    pub(super) enqueue_failed: u64,
    pub(super) enqueue_failed_by_kind: BTreeMap<String, u64>,
    pub(super) send_delay: Histogram<u64>,
    /// The transaction schedule, when the workload has `transaction`.
    pub(super) txn: Option<Txn>,
    /// The transaction call that failed: the producer stops and the run fails.
    pub(super) txn_error: Option<String>,
    /// Where this producer's records go over a run's topics.
    pub(super) layout: Layout,
    /// A shard's: the partition of each record among the shard's own.
    pub(super) partitioner: Option<Partitioner>,
}

impl Sender<'_> {
    #[inline]
    pub(super) fn now_ns(&self) -> u64 {
        self.ev.now_ns()
    }

    /// Waits until `t`, serving events meanwhile; never sends early.
    pub(super) fn wait_until(&mut self, t: u64) {
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

    pub(super) fn in_flight_wait(&mut self, limit: u32) {
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
    pub(super) fn warm_until_settled(&mut self, max: Duration) {
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
            slices.push(super::super::warmup::Slice {
                sent: sent.count,
                reported: self.ev.rec.delivered - before,
            });
            if super::super::warmup::settled(&slices) {
                break;
            }
        }
    }

    pub(super) fn run_phase(
        &mut self,
        phase: Phase,
        count: Option<u64>,
        duration: Option<Duration>,
    ) -> Sent {
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
    pub(super) fn txn_step<T>(
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

    pub(super) fn phase<const TXN: bool>(
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
