//! The producer's event server: delivery reports, statistics and errors off its event queue.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::types::RDKafkaErrorCode;

use super::clock::Clock;
use super::recorder::Recorder;
use super::shared::{Hearing, Shared};
use super::stamp;
use crate::native::producer::{self as native, EventKind};

/// Set in the delivery opaque for warm-up records, which are sent but not measured. Intended
/// times are nanoseconds since the run started, far below 2^63.
const WARMUP_BIT: usize = 1 << 63;

/// The delivery opaque of a record: its intended send time, and whether it is measured.
#[inline]
pub(super) fn opaque(intended_ns: u64, measured: bool) -> usize {
    intended_ns as usize | if measured { 0 } else { WARMUP_BIT }
}

/// How long an interrupted run still waits for the delivery reports of what it sent.
const INTERRUPTED_DRAIN: Duration = Duration::from_secs(5);

/// How many events one `serve` takes at most, so a flood of reports cannot starve the sender.
const EVENTS_PER_SERVE: usize = 64;

/// The producer's native handles and what its events told; a value of its own so the send
/// loop can serve events while it holds a borrowed payload.
pub(super) struct Events<'a> {
    pub producer: native::Producer<'a>,
    pub rec: Recorder,
    clock: Clock,
    shared: Arc<Shared>,
    hearing: Hearing,
}

impl<'a> Events<'a> {
    pub(super) fn new(
        producer: native::Producer<'a>,
        rec: Recorder,
        shared: Arc<Shared>,
    ) -> Events<'a> {
        Events {
            producer,
            rec,
            clock: Clock::new(shared.t0),
            shared,
            hearing: Hearing::default(),
        }
    }

    /// Nanoseconds since the run's clock origin.
    #[inline]
    pub(super) fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    /// Serves the producer's events: waits up to `timeout_ms` for the first, then takes what
    /// is already queued.
    pub(super) fn serve(&mut self, timeout_ms: i32) {
        let mut wait = timeout_ms;
        for _ in 0..EVENTS_PER_SERVE {
            let Some(ev) = self.producer.next_event(wait) else {
                return;
            };
            wait = 0;
            match ev.kind() {
                EventKind::Delivery => self.delivered(&ev),
                EventKind::Stats => {
                    if let Some(s) = ev.stats_json().and_then(|j| serde_json::from_str(j).ok()) {
                        self.rec.stats(&s);
                        let now = self.now_ns();
                        self.hearing.stats(&s, now, &self.shared);
                    }
                }
                EventKind::Error => {
                    let (code, reason) = ev.error();
                    if code == RDKafkaErrorCode::AllBrokersDown {
                        // Unavailability, measured; the run ends only at its bound.
                        self.shared.brokers_down(self.hearing.asking_since());
                    } else {
                        // Kept to explain a run that delivered nothing (e.g. authentication).
                        self.shared.client_error(format!("{code:?}: {reason}"));
                    }
                }
                EventKind::Other => {}
            }
        }
    }

    /// One event's delivery reports. They were all acknowledged by the same response, so one
    /// clock read stamps them all.
    fn delivered(&mut self, ev: &native::Event) {
        let now = self.now_ns();
        let r = &mut self.rec;
        let (mut acked, mut failed) = (0u64, 0u64);
        let by_topic = !r.by_topic.is_empty();
        let mut topic = 0;
        // One response acknowledged the event's records: its broker is looked up once.
        let mut broker = None;
        for d in ev.deliveries() {
            r.delivered += 1;
            let opaque = d.opaque();
            let error = d.error();
            // Every write counts for a compacted topic's keys, warm-up and backlog too.
            if let (Some(t), None) = (&mut r.keys, error) {
                let ((key, null), (p, o)) = (d.key_and_null(), d.position());
                t.note(key, p, o, null);
            }
            if opaque & WARMUP_BIT != 0 {
                continue;
            }
            if by_topic {
                tally_topic(
                    &self.producer,
                    &mut r.by_topic,
                    &d,
                    &mut topic,
                    error.is_none(),
                );
            }
            match error {
                None => {
                    acked += 1;
                    let bytes = d.key_value_bytes();
                    let latency = r.acked(now, opaque as u64, bytes);
                    if let Some(p) = &mut r.placed {
                        let b = *broker.get_or_insert_with(|| p.broker(d.broker_id()));
                        let interval = r.intervals.current();
                        p.acked(d.position().0, b, latency, bytes, interval);
                    }
                    if r.paced {
                        r.service(d.latency_us());
                    }
                }
                Some(code) => {
                    failed += 1;
                    let kind = format!("{code:?}");
                    r.ack_timeline.failed(now, opaque as u64, &kind);
                    *r.failed_by_kind.entry(kind).or_default() += 1;
                    if let Some(s) = d.header(stamp::HEADER_C).and_then(stamp::decode) {
                        r.failed_seqs.push(s.seq);
                    }
                }
            }
        }
        // The shared counters move once per event, not per record.
        if acked > 0 {
            self.shared.heard(now);
            r.acked += acked;
            r.last_ack_ns = now;
            r.ack_timeline.acked(now);
            self.shared.acked.fetch_add(acked, Ordering::Relaxed);
        }
        if failed > 0 {
            r.failed += failed;
            r.intervals.failed(now, failed);
            self.shared.failed.fetch_add(failed, Ordering::Relaxed);
        }
    }

    /// Sends what lingers and serves events until every record is delivered or `timeout`
    /// passes; false when records are still outstanding.
    /// With the cluster lost, what is outstanding is purged and reported failed at once; once
    /// interrupted, the wait is cut to `INTERRUPTED_DRAIN` (a person is waiting for the report).
    pub(super) fn drain(&mut self, timeout: Duration) -> bool {
        self.producer.begin_flush();
        let mut deadline = Instant::now() + timeout;
        let mut purged = false;
        let mut cut = false;
        while self.producer.outq_len() > 0 {
            if self.shared.interrupted() && !cut {
                cut = true;
                deadline = deadline.min(Instant::now() + INTERRUPTED_DRAIN);
            }
            if self.shared.lost() && !purged {
                self.producer.purge();
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

/// One measured record's report on its topic's tally (a producer writing several topics
/// record by record); `topic` is the previous record's, tried first.
#[inline]
fn tally_topic(
    producer: &native::Producer,
    by_topic: &mut [crate::measure::TopicTally],
    d: &native::Delivery,
    topic: &mut usize,
    ok: bool,
) {
    if let Some(t) = producer.topic_of(d, *topic) {
        *topic = t;
        if ok {
            by_topic[t].acked += 1;
        } else {
            by_topic[t].failed += 1;
        }
    }
}
