//! Transactions' figures.

use std::ops::Range;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::merge::{add_summary, Problem};
use super::{new_histogram, LatencySummary, SeqSet};

/// Figures of a transactional run; None on a run without transactions.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TxnFigures {
    pub committed: u64,
    pub aborted: u64,
    /// Records in committed and in aborted transactions.
    pub committed_records: u64,
    pub aborted_records: u64,
    /// commit_transaction() latency.
    pub commit: LatencySummary,
}

impl TxnFigures {
    /// Another side's transactions of the same run (each shard's producers have their own
    /// transactional ids): counts summed, commit latency histograms added.
    pub(crate) fn absorb(&mut self, o: &TxnFigures) -> Result<(), Problem> {
        self.committed += o.committed;
        self.aborted += o.aborted;
        self.committed_records += o.committed_records;
        self.aborted_records += o.aborted_records;
        let mut total = None;
        add_summary(&mut total, &self.commit, "transaction commit")?;
        add_summary(&mut total, &o.commit, "transaction commit")?;
        self.commit = total.map_or_else(LatencySummary::default, |h| {
            LatencySummary::from_histogram(&h)
        });
        Ok(())
    }

    /// The figures of these sums: the commit percentiles read off its histogram.
    pub(crate) fn summarised(&self) -> TxnFigures {
        let mut t = self.clone();
        if let Some(h) = self.commit.histogram() {
            t.commit = LatencySummary::from_histogram(&h.clone());
        }
        t
    }
}

/// What one transactional producer recorded over the measured phase.
#[derive(Clone, Debug)]
pub struct TxnRecording {
    /// Commit latency: the decision to commit → commit_transaction() returned (the flush of
    /// the transaction's records included, as an application waits for it).
    pub commit: Histogram<u64>,
    pub committed: u64,
    pub aborted: u64,
    pub committed_records: u64,
    pub aborted_records: u64,
    /// The producer's own sequence numbers of each aborted transaction, in order: one
    /// transaction's records are consecutive, so a range each. A read_committed consumer never
    /// reads them, so they are neither expected nor lost.
    pub aborted_seqs: Vec<Range<u64>>,
}

impl Default for TxnRecording {
    fn default() -> Self {
        TxnRecording {
            commit: new_histogram(),
            committed: 0,
            aborted: 0,
            committed_records: 0,
            aborted_records: 0,
            aborted_seqs: Vec::new(),
        }
    }
}

impl TxnRecording {
    /// Whether `seq` belongs to an aborted transaction (ranges are sorted and disjoint).
    pub fn is_aborted(&self, seq: u64) -> bool {
        let i = self.aborted_seqs.partition_point(|r| r.end <= seq);
        self.aborted_seqs.get(i).is_some_and(|r| r.contains(&seq))
    }

    /// Records of aborted transactions the consumer read anyway (in `seen`).
    pub fn aborted_seen(&self, seen: &SeqSet) -> u64 {
        self.aborted_seqs
            .iter()
            .flat_map(|r| r.clone())
            .filter(|s| seen.contains(*s))
            .count() as u64
    }
}

/// The producers' transactions together; None when no producer ran transactions.
pub(crate) fn merge<'a>(all: impl Iterator<Item = &'a TxnRecording>) -> Option<TxnFigures> {
    let mut commit = new_histogram();
    let mut out: Option<TxnFigures> = None;
    for t in all {
        let f = out.get_or_insert_with(TxnFigures::default);
        f.committed += t.committed;
        f.aborted += t.aborted;
        f.committed_records += t.committed_records;
        f.aborted_records += t.aborted_records;
        // Same bounds on every histogram, so adding cannot fail.
        let _ = commit.add(&t.commit);
    }
    let mut f = out?;
    f.commit = LatencySummary::from_histogram(&commit);
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{account, ConsumerRecording, ProducerRecording};

    #[test]
    fn a_sequence_is_aborted_only_inside_an_aborted_range() {
        let t = TxnRecording {
            aborted_seqs: vec![10..20, 40..41],
            ..TxnRecording::default()
        };
        let aborted: Vec<u64> = (0..50).filter(|s| t.is_aborted(*s)).collect();
        let expected: Vec<u64> = (10..20).chain([40]).collect();
        assert_eq!(aborted, expected);
    }

    /// A transactional producer that sent `0..sent`, all acked but `failed`, with one aborted
    /// transaction.
    fn producer(sent: u64, failed: &[u64], aborted: Range<u64>) -> ProducerRecording {
        let mut p = ProducerRecording::empty();
        p.raw.sent = sent;
        p.failed_seqs = failed.to_vec();
        p.raw.acked = sent - failed.len() as u64;
        p.txn = Some(TxnRecording {
            aborted: 1,
            aborted_records: aborted.end - aborted.start,
            aborted_seqs: vec![aborted],
            ..TxnRecording::default()
        });
        p
    }

    fn read(seqs: impl IntoIterator<Item = u64>) -> ConsumerRecording {
        let mut c = ConsumerRecording::empty();
        for s in seqs {
            c.seen_mut(0).insert(s);
            c.consumed += 1;
        }
        c
    }

    #[test]
    fn records_of_aborted_transactions_are_neither_expected_nor_lost() {
        let p = [producer(10, &[], 3..6)];
        assert_eq!(account(&p, &read((0..3).chain(6..10))), (0, 0));
        assert_eq!(p[0].expected_reads(), 7);
    }

    #[test]
    fn an_aborted_record_read_anyway_does_not_make_up_for_a_committed_one_missing() {
        // Committed 9 never arrived; aborted 4 was read (a read_committed violation).
        let p = [producer(10, &[], 3..6)];
        assert_eq!(account(&p, &read((0..3).chain([4]).chain(6..9))), (1, 0));
    }

    #[test]
    fn a_failed_record_of_an_aborted_transaction_is_not_failed_but_delivered() {
        // 4 failed inside the aborted transaction, 8 failed in a committed one: both read.
        let p = [producer(10, &[4, 8], 3..6)];
        let c = read((0..10).filter(|s| ![3, 5].contains(s)));
        assert_eq!(account(&p, &c), (0, 1));
        assert_eq!(p[0].expected_reads(), 7, "8 acked + 2 failed − 3 aborted");
    }

    #[test]
    fn producers_transactions_add_up_and_their_commit_latencies_merge() {
        let mut a = TxnRecording {
            committed: 3,
            committed_records: 300,
            ..TxnRecording::default()
        };
        let _ = a.commit.record(2_000_000);
        let mut b = TxnRecording {
            committed: 1,
            aborted: 1,
            committed_records: 100,
            aborted_records: 100,
            ..TxnRecording::default()
        };
        let _ = b.commit.record(4_000_000);
        let f = merge([&a, &b].into_iter()).expect("transactional");
        assert_eq!((f.committed, f.aborted), (4, 1));
        assert_eq!((f.committed_records, f.aborted_records), (400, 100));
        assert_eq!(f.commit.count, 2);
        assert!(merge(std::iter::empty()).is_none());
    }
}
