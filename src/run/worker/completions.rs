//! The completion stream of a producer worker (clients/PROTOCOL.md, `C` frames) into the
//! producer's `Recorder`: every record's completion, as librdkafka's delivery reports go into
//! it in `run::events`, so every client is measured by the same code.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use hdrhistogram::Histogram;

use crate::measure::placed;
use crate::measure::{new_histogram, record, TopicTally};
use crate::run::recorder::Recorder;
use crate::run::shared::Shared;

/// Bytes per completion record (protocol 2: the acknowledging broker at 44).
pub(crate) const RECORD: usize = 48;

/// `broker` when the worker's client does not say which broker acknowledged the record.
#[cfg(test)]
pub(crate) const NO_BROKER: i32 = -1;

/// `value_bytes` of a tombstone (a record with no value).
const NO_VALUE: u32 = u32::MAX;

const MEASURED: u8 = 1;
const REFUSED: u8 = 2;

/// One completion record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Completion {
    pub intended_ns: u64,
    pub done_ns: u64,
    /// The offset on success, the record's sequence number on failure.
    pub offset_or_seq: u64,
    pub send_delay_ns: u64,
    pub partition: i32,
    pub bytes: u32,
    pub topic: u16,
    pub error: u8,
    pub flags: u8,
    /// The value's length alone (`NO_VALUE` for a tombstone): the sizes sent, when they vary.
    pub value_bytes: u32,
    /// The node id of the broker that acknowledged the record (`NO_BROKER` when the client
    /// does not say, or the record failed).
    pub broker: i32,
}

impl Completion {
    #[inline]
    pub(crate) fn decode(b: &[u8]) -> Completion {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default());
        Completion {
            intended_ns: u64_at(0),
            done_ns: u64_at(8),
            offset_or_seq: u64_at(16),
            send_delay_ns: delay_ns(u32_at(24)),
            partition: u32_at(28) as i32,
            bytes: u32_at(32),
            topic: u16::from_le_bytes([b[36], b[37]]),
            error: b[38],
            flags: b[39],
            value_bytes: u32_at(40),
            broker: u32_at(44) as i32,
        }
    }

    /// As a worker writes it (the tests' side of the protocol).
    #[cfg(test)]
    pub(crate) fn encode(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..8].copy_from_slice(&self.intended_ns.to_le_bytes());
        b[8..16].copy_from_slice(&self.done_ns.to_le_bytes());
        b[16..24].copy_from_slice(&self.offset_or_seq.to_le_bytes());
        let d = if self.send_delay_ns < 1 << 31 {
            self.send_delay_ns as u32
        } else {
            (1 << 31) | (self.send_delay_ns / 1000).min(0x7fff_ffff) as u32
        };
        b[24..28].copy_from_slice(&d.to_le_bytes());
        b[28..32].copy_from_slice(&self.partition.to_le_bytes());
        b[32..36].copy_from_slice(&self.bytes.to_le_bytes());
        b[36..38].copy_from_slice(&self.topic.to_le_bytes());
        b[38] = self.error;
        b[39] = self.flags;
        b[40..44].copy_from_slice(&self.value_bytes.to_le_bytes());
        b[44..48].copy_from_slice(&self.broker.to_le_bytes());
        b
    }
}

/// A send delay as the record carries it: ns below 2^31, else µs with bit 31 set.
#[inline]
pub(crate) fn delay_ns(code: u32) -> u64 {
    if code & (1 << 31) == 0 {
        u64::from(code)
    } else {
        u64::from(code & 0x7fff_ffff) * 1000
    }
}

/// What the driver counts from completions beside the recorder: what the send loop counts
/// for librdkafka.
pub(crate) struct Tally {
    /// Error kinds by the id the worker gave them (`error_kind`).
    pub kinds: Vec<Option<String>>,
    pub enqueue_failed: u64,
    pub enqueue_failed_by_kind: BTreeMap<String, u64>,
    pub send_delay: Histogram<u64>,
    /// Per topic, when the run has several.
    pub by_topic: Vec<TopicTally>,
    /// Failed records' sequence numbers are kept for the reader (stamped runs).
    pub stamped: bool,
}

impl Tally {
    pub(crate) fn new(topics: usize, stamped: bool) -> Tally {
        Tally {
            kinds: vec![None; 256],
            enqueue_failed: 0,
            enqueue_failed_by_kind: BTreeMap::new(),
            send_delay: new_histogram(),
            by_topic: if topics > 1 {
                vec![TopicTally::default(); topics]
            } else {
                Vec::new()
            },
            stamped,
        }
    }

    fn kind(&self, id: u8) -> Result<&str, String> {
        self.kinds[id as usize]
            .as_deref()
            .ok_or_else(|| format!("used error kind {id} before naming it"))
    }
}

/// One `C` frame's records into the recorder; an error is a worker that broke the protocol.
pub(crate) fn absorb(
    rec: &mut Recorder,
    t: &mut Tally,
    body: &[u8],
    shared: &Shared,
) -> Result<(), String> {
    if body.len() % RECORD != 0 {
        return Err(format!(
            "wrote a completion frame of {} bytes (records are {RECORD})",
            body.len()
        ));
    }
    let (mut acked, mut failed, mut last_ack) = (0u64, 0u64, 0u64);
    for chunk in body.chunks_exact(RECORD) {
        let c = Completion::decode(chunk);
        let refused = c.flags & REFUSED != 0;
        if !refused {
            rec.delivered += 1;
        }
        if c.flags & MEASURED == 0 {
            continue;
        }
        let actual = c.intended_ns + c.send_delay_ns;
        if rec.paced {
            record(&mut t.send_delay, c.send_delay_ns);
        }
        if refused {
            // Refused by the send call: never handed to the network (librdkafka's enqueue
            // failures, counted the same way).
            let kind = t.kind(c.error.max(1))?.to_string();
            rec.intervals.failed(actual, 1);
            if let Some(tt) = t.by_topic.get_mut(c.topic as usize) {
                tt.failed += 1;
            }
            t.enqueue_failed += 1;
            *t.enqueue_failed_by_kind.entry(kind).or_default() += 1;
            continue;
        }
        rec.intervals.sent(actual);
        // The value sizes sent, as librdkafka's send loop records them (measured, handed to
        // the client, not a tombstone).
        if let Some(h) = rec.sizes.as_mut().filter(|_| c.value_bytes != NO_VALUE) {
            record(h, u64::from(c.value_bytes));
        }
        if c.error == 0 {
            if let Some(tt) = t.by_topic.get_mut(c.topic as usize) {
                tt.sent += 1;
                tt.acked += 1;
            }
            acked += 1;
            last_ack = last_ack.max(c.done_ns);
            let latency = rec.acked(c.done_ns, c.intended_ns, u64::from(c.bytes));
            if let Some(p) = &mut rec.placed {
                // The partition as the worker's client reported it; the broker that
                // acknowledged is not in a completion, and is not guessed from the leaders.
                let interval = rec.intervals.current();
                p.acked(
                    c.partition,
                    placed::NO_BROKER,
                    latency,
                    u64::from(c.bytes),
                    interval,
                );
            }
            rec.ack_timeline
                .acked(c.done_ns.max(rec.ack_timeline.last_ns));
            if rec.paced {
                record(&mut rec.service, c.done_ns.saturating_sub(actual));
            }
        } else {
            if let Some(tt) = t.by_topic.get_mut(c.topic as usize) {
                tt.sent += 1;
                tt.failed += 1;
            }
            failed += 1;
            let kind = t.kind(c.error)?;
            rec.ack_timeline.failed(c.done_ns, c.intended_ns, kind);
            *rec.failed_by_kind.entry(kind.to_string()).or_default() += 1;
            rec.intervals.failed(c.done_ns, 1);
            if t.stamped {
                rec.failed_seqs.push(c.offset_or_seq);
            }
        }
    }
    // The shared counters move once per frame, not per record.
    if acked > 0 {
        shared.heard(last_ack);
        rec.acked += acked;
        rec.last_ack_ns = rec.last_ack_ns.max(last_ack);
        shared.acked.fetch_add(acked, Ordering::Relaxed);
    }
    if failed > 0 {
        rec.failed += failed;
        shared.failed.fetch_add(failed, Ordering::Relaxed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn c(intended_ns: u64, done_ns: u64, error: u8, flags: u8) -> Completion {
        Completion {
            intended_ns,
            done_ns,
            offset_or_seq: 7,
            send_delay_ns: 1_500,
            partition: 2,
            bytes: 100,
            topic: 0,
            error,
            flags,
            value_bytes: 90,
            broker: 3,
        }
    }

    #[test]
    fn a_record_reads_back_as_written_and_long_delays_keep_microseconds() {
        let mut x = c(123, 456, 3, 1);
        x.send_delay_ns = 5_000_000_000;
        assert_eq!(Completion::decode(&x.encode()), x);
        x.send_delay_ns = (1 << 31) - 1;
        assert_eq!(Completion::decode(&x.encode()), x);
        x.broker = NO_BROKER;
        assert_eq!(Completion::decode(&x.encode()), x);
    }

    #[test]
    fn completions_count_as_delivery_reports_do() {
        let shared = Shared::new(Arc::new(AtomicBool::new(false)));
        let mut rec = Recorder::new(true, 1_000_000_000, false);
        rec.sizes = Some(new_histogram());
        rec.placed = Some(crate::measure::placed::PlaceRecorder::of_run(1, 3));
        rec.intervals.start(0);
        let mut t = Tally::new(1, true);
        t.kinds[1] = Some("TimeoutException".into());
        let mut body = Vec::new();
        for x in [
            c(1_000, 3_000_000, 0, 1), // measured, acked in 3 ms
            c(2_000, 4_000_000, 0, 0), // warm-up: delivered, not measured
            c(3_000, 9_000_000, 1, 1), // measured, failed
            c(4_000, 4_500, 1, 1 | 2), // refused by the send call
        ] {
            body.extend_from_slice(&x.encode());
        }
        absorb(&mut rec, &mut t, &body, &shared).expect("well formed");
        assert_eq!(rec.delivered, 3);
        assert_eq!((rec.acked, rec.failed), (1, 1));
        assert_eq!(rec.failed_by_kind["TimeoutException"], 1);
        assert_eq!(rec.failed_seqs, vec![7]);
        assert_eq!(t.enqueue_failed_by_kind["TimeoutException"], 1);
        let ack = rec.ack.take();
        assert_eq!(ack.len(), 1);
        assert!(
            ack.equivalent(ack.max(), 2_999_000),
            "ack from the intended time"
        );
        assert_eq!(t.send_delay.len(), 3);
        assert_eq!(rec.last_ack_ns, 3_000_000);
        // The two measured records handed to the client, of 90 B each.
        let sizes = rec.sizes.as_ref().expect("sizes recorded");
        assert_eq!((sizes.len(), sizes.max()), (2, 90));
        // The acked measured record counts for its partition, and for no broker.
        let placed = rec.placed.as_mut().expect("kept").finish();
        assert!(placed.brokers.is_empty());
        let recs: Vec<u64> = placed.partitions.iter().map(|p| p.records).collect();
        assert_eq!(recs, [0, 0, 1]);
        assert_eq!(placed.partitions[2].bytes, 100);
        assert!(absorb(&mut rec, &mut t, &body[..RECORD - 1], &shared).is_err());
        let mut unnamed = c(1, 2, 9, 1).encode().to_vec();
        unnamed.truncate(RECORD);
        assert!(absorb(&mut rec, &mut t, &unnamed, &shared).is_err());
    }
}
