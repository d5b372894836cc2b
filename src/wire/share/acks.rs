//! Acknowledgements waiting to go out, per partition, and what the broker made of them.
//! Buffers are kept per partition and reused, so acking allocates nothing per record.

use kafka_protocol::messages::share_acknowledge_request::AcknowledgementBatch as AckBatch;
use kafka_protocol::messages::share_fetch_request::AcknowledgementBatch as FetchAckBatch;

/// What to do with an acquired record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AckKind {
    /// Processed: never delivered again.
    Accept,
    /// Give it back: delivered again (to any member) with the delivery count raised.
    Release,
    /// Unprocessable: never delivered again (archived).
    Reject,
}

/// Acknowledge types on the wire (KIP-932).
pub(super) const GAP: i8 = 0;
const ACCEPT: i8 = 1;
const RELEASE: i8 = 2;
const REJECT: i8 = 3;

impl AckKind {
    fn wire(self) -> i8 {
        match self {
            AckKind::Accept => ACCEPT,
            AckKind::Release => RELEASE,
            AckKind::Reject => REJECT,
        }
    }
}

/// What became of acknowledgements sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AckReport {
    pub accepted: u64,
    pub released: u64,
    pub rejected: u64,
    /// Offsets the broker refused: (topic index, partition, offset, Kafka error code), e.g.
    /// INVALID_RECORD_STATE (121) when the acquisition lock had expired.
    pub refused: Vec<(usize, i32, i64, i16)>,
}

impl AckReport {
    #[cfg(test)]
    pub(crate) fn merge(&mut self, other: AckReport) {
        self.accepted += other.accepted;
        self.released += other.released;
        self.rejected += other.rejected;
        self.refused.extend(other.refused);
    }

    /// Acknowledgements settled, either way.
    pub(crate) fn settled(&self) -> u64 {
        self.accepted + self.released + self.rejected + self.refused.len() as u64
    }
}

/// One partition's acknowledgements: queued, and those in the request now in flight.
#[derive(Debug)]
pub(super) struct PartAcks {
    pub topic: usize,
    pub partition: i32,
    queued: Vec<(i64, i8)>,
    sending: Vec<(i64, i8)>,
}

/// Every partition's acknowledgements.
#[derive(Debug, Default)]
pub(super) struct Acks {
    parts: Vec<PartAcks>,
    /// The last partition acked: consecutive acks mostly hit the same one.
    last: usize,
}

impl Acks {
    fn slot(&mut self, topic: usize, partition: i32) -> usize {
        if let Some(p) = self.parts.get(self.last) {
            if p.topic == topic && p.partition == partition {
                return self.last;
            }
        }
        let i = match self
            .parts
            .iter()
            .position(|p| p.topic == topic && p.partition == partition)
        {
            Some(i) => i,
            None => {
                self.parts.push(PartAcks {
                    topic,
                    partition,
                    queued: Vec::new(),
                    sending: Vec::new(),
                });
                self.parts.len() - 1
            }
        };
        self.last = i;
        i
    }

    pub(super) fn push(&mut self, topic: usize, partition: i32, offset: i64, kind: AckKind) {
        let i = self.slot(topic, partition);
        self.parts[i].queued.push((offset, kind.wire()));
    }

    /// An acquired offset that holds no record (a transaction marker, a compacted record).
    pub(super) fn push_gap(&mut self, topic: usize, partition: i32, offset: i64) {
        let i = self.slot(topic, partition);
        self.parts[i].queued.push((offset, GAP));
    }

    pub(super) fn has_queued(&self, topic: usize, partition: i32) -> bool {
        self.parts
            .iter()
            .any(|p| p.topic == topic && p.partition == partition && !p.queued.is_empty())
    }

    /// Partitions with acknowledgements queued.
    pub(super) fn queued_partitions(&self) -> impl Iterator<Item = (usize, i32)> + '_ {
        self.parts
            .iter()
            .filter(|p| !p.queued.is_empty())
            .map(|p| (p.topic, p.partition))
    }

    /// Move `(topic, partition)`'s queued acknowledgements into flight and encode them as
    /// batches: consecutive offsets of one type make one batch. A second ack of one offset is
    /// refused here (the broker would refuse the whole request).
    pub(super) fn take_batches(
        &mut self,
        topic: usize,
        partition: i32,
        report: &mut AckReport,
    ) -> Vec<(i64, i64, i8)> {
        let i = self.slot(topic, partition);
        let p = &mut self.parts[i];
        std::mem::swap(&mut p.queued, &mut p.sending);
        p.queued.clear();
        if !p.sending.windows(2).all(|w| w[0].0 < w[1].0) {
            p.sending.sort_by_key(|a| a.0);
            let mut prev = None;
            p.sending.retain(|&(o, _)| {
                let dup = prev == Some(o);
                if dup {
                    report.refused.push((topic, partition, o, 42)); // INVALID_REQUEST
                }
                prev = Some(o);
                !dup
            });
        }
        let mut out: Vec<(i64, i64, i8)> = Vec::new();
        for &(o, t) in &p.sending {
            match out.last_mut() {
                Some(b) if b.1 + 1 == o && b.2 == t => b.1 = o,
                _ => out.push((o, o, t)),
            }
        }
        out
    }

    /// The broker answered for `(topic, partition)`'s acknowledgements in flight: `code` 0 took
    /// them all, anything else refused them all.
    pub(super) fn settle(
        &mut self,
        topic: usize,
        partition: i32,
        code: i16,
        report: &mut AckReport,
    ) {
        let i = self.slot(topic, partition);
        let p = &mut self.parts[i];
        for &(o, t) in &p.sending {
            if t == GAP {
                continue;
            }
            if code != 0 {
                report.refused.push((topic, partition, o, code));
                continue;
            }
            match t {
                ACCEPT => report.accepted += 1,
                RELEASE => report.released += 1,
                _ => report.rejected += 1,
            }
        }
        p.sending.clear();
    }

    /// Settle every acknowledgement still in flight with `code` (the request failed whole).
    pub(super) fn settle_all_sending(&mut self, code: i16, report: &mut AckReport) {
        let keys: Vec<(usize, i32)> = self
            .parts
            .iter()
            .filter(|p| !p.sending.is_empty())
            .map(|p| (p.topic, p.partition))
            .collect();
        for (t, p) in keys {
            self.settle(t, p, code, report);
        }
    }

    /// Refuse what is queued for `(topic, partition)` without sending it (no session can carry
    /// it), with `code`.
    pub(super) fn refuse_queued(
        &mut self,
        topic: usize,
        partition: i32,
        code: i16,
        report: &mut AckReport,
    ) {
        let i = self.slot(topic, partition);
        let p = &mut self.parts[i];
        std::mem::swap(&mut p.queued, &mut p.sending);
        p.queued.clear();
        self.settle(topic, partition, code, report);
    }
}

pub(super) fn fetch_batches(b: &[(i64, i64, i8)]) -> Vec<FetchAckBatch> {
    b.iter()
        .map(|&(first, last, t)| {
            FetchAckBatch::default()
                .with_first_offset(first)
                .with_last_offset(last)
                .with_acknowledge_types(vec![t])
        })
        .collect()
}

pub(super) fn ack_batches(b: &[(i64, i64, i8)]) -> Vec<AckBatch> {
    b.iter()
        .map(|&(first, last, t)| {
            AckBatch::default()
                .with_first_offset(first)
                .with_last_offset(last)
                .with_acknowledge_types(vec![t])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_offsets_of_one_type_make_one_batch() {
        let mut a = Acks::default();
        let mut r = AckReport::default();
        for o in [5, 3, 4, 6, 9, 10] {
            a.push(0, 1, o, AckKind::Accept);
        }
        a.push(0, 1, 7, AckKind::Release);
        a.push(0, 1, 8, AckKind::Reject);
        a.push(0, 1, 4, AckKind::Accept); // twice: refused here
        let b = a.take_batches(0, 1, &mut r);
        assert_eq!(
            b,
            vec![
                (3, 6, ACCEPT),
                (7, 7, RELEASE),
                (8, 8, REJECT),
                (9, 10, ACCEPT)
            ]
        );
        assert_eq!(r.refused, vec![(0, 1, 4, 42)]);
        a.settle(0, 1, 0, &mut r);
        assert_eq!((r.accepted, r.released, r.rejected), (6, 1, 1));
        a.push(0, 1, 11, AckKind::Accept);
        let _ = a.take_batches(0, 1, &mut r);
        a.settle(0, 1, 121, &mut r);
        assert_eq!(r.refused.last(), Some(&(0, 1, 11, 121)));
    }
}
