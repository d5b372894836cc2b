//! The verifier on constructed streams: records fed as a consumer reads them (partition,
//! offset, stamp), the consumers' recordings merged as the run merges them, and the delivery
//! figures derived as the run derives them. Every test checks exact counts, and at least one
//! that is not zero.

use super::*;
use crate::measure::{ProducerRecording, Recordings, RunResult, TxnRecording};
use crate::model::RateSpec;
use crate::run::stamp::Stamp;

/// A record as read: the run partition, its offset, its stamp (None: no stamp header).
type Rec = (usize, i64, Option<Stamp>);

#[derive(Clone, Copy)]
enum Kind {
    Measured,
    WarmUp,
    Backlog,
    Aborted,
}

fn stamp(kind: Kind, producer: u32, seq: u64) -> Option<Stamp> {
    Some(Stamp {
        intended_ns: 1_000,
        producer,
        seq,
        measured: matches!(kind, Kind::Measured | Kind::Aborted),
        aborted: matches!(kind, Kind::Aborted),
        backlog: matches!(kind, Kind::Backlog),
    })
}

/// Measured records of `producer` with these sequence numbers.
fn seqs(producer: u32, seqs: &[u64]) -> Vec<Option<Stamp>> {
    of(Kind::Measured, producer, seqs)
}

fn of(kind: Kind, producer: u32, seqs: &[u64]) -> Vec<Option<Stamp>> {
    seqs.iter().map(|s| stamp(kind, producer, *s)).collect()
}

/// Records of partition `part` at consecutive offsets from `first`.
fn log(part: usize, first: i64, stamps: &[Option<Stamp>]) -> Vec<Rec> {
    (first..)
        .zip(stamps)
        .map(|(offset, s)| (part, offset, *s))
        .collect()
}

/// One consumer of a run with one topic, `partitions` partitions starting at `base`.
fn verifier(producers: usize, base: &[i64]) -> Verifier {
    let mut v = Verifier::new(producers, base.len(), 1, base.to_vec());
    v.intervals = IntervalRecorder::new(1_000_000_000);
    v
}

/// Feeds `recs` in order; what each turned out to be.
fn feed(v: &mut Verifier, reads: &Reads, recs: &[Rec]) -> Vec<Read> {
    let out = recs
        .iter()
        .enumerate()
        .map(|(i, &(part, offset, s))| {
            let at = At {
                topic: 0,
                part,
                offset,
                bytes: 100,
                now: 2_000 + i as u64,
            };
            v.check(at, || s, reads)
        })
        .collect();
    v.flush(reads);
    out
}

/// A producer that sent `0..sent`, of which `failed` were reported failed.
fn producer(sent: u64, failed: &[u64]) -> ProducerRecording {
    let mut p = ProducerRecording::empty();
    p.raw.sent = sent;
    p.raw.failed = failed.len() as u64;
    p.raw.acked = sent - p.raw.failed;
    p.failed_seqs = failed.to_vec();
    p
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Figures {
    records: u64,
    consumed: u64,
    lost: u64,
    duplicated: u64,
    reordered: u64,
    redelivered: u64,
    aborted_read: u64,
    backlog_read: u64,
    failed_but_delivered: u64,
    /// End-to-end latencies recorded.
    e2e: u64,
}

/// The run's figures: the consumers' recordings merged (`ConsumerRecording::merge`, as
/// `run::workers` does), delivery derived (`RunResult::derive_figures`, which calls
/// `measure::account`) with `backlog` records written before the clock.
fn figures(producers: &[ProducerRecording], backlog: u64, consumers: Vec<Verifier>) -> Figures {
    let recordings = consumers
        .into_iter()
        .map(|mut v| {
            v.rec.intervals = v.intervals.finish();
            v.rec
        })
        .collect();
    let c = ConsumerRecording::merge(recordings);
    let mut r = RunResult::default();
    r.derive_figures(&Recordings {
        producers,
        consumer: Some(&c),
        rate: &RateSpec::Unlimited,
        disk_bytes: None,
        duration: None,
        messages: None,
        cut_short: false,
        backlog,
        read_side: None,
        shares: 1,
    });
    let d = r.delivery.expect("a consumer ran");
    Figures {
        records: c.records,
        consumed: d.consumed,
        lost: d.lost.expect("the run finished"),
        duplicated: d.duplicated,
        reordered: d.reordered,
        redelivered: c.redelivered,
        aborted_read: c.aborted_read,
        backlog_read: c.backlog_read,
        failed_but_delivered: d.failed_but_delivered,
        e2e: c.e2e.len(),
    }
}

/// One consumer reads `recs` of a run of `producers` producers over `partitions` partitions.
fn one(producers: &[ProducerRecording], partitions: usize, recs: &[Rec]) -> Figures {
    let reads = Reads::new(partitions);
    let mut v = verifier(producers.len(), &vec![0; partitions]);
    feed(&mut v, &reads, recs);
    figures(producers, 0, vec![v])
}

#[test]
fn every_record_read_once_in_order_is_consumed_and_nothing_else() {
    let f = one(
        &[producer(5, &[])],
        1,
        &log(0, 0, &seqs(0, &[0, 1, 2, 3, 4])),
    );
    let want = Figures {
        records: 5,
        consumed: 5,
        e2e: 5,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn a_gap_is_lost_exactly() {
    // Offsets 3..6 (sequences 3, 4, 5) never read.
    let mut recs = log(0, 0, &seqs(0, &[0, 1, 2]));
    recs.extend(log(0, 6, &seqs(0, &[6, 7, 8, 9])));
    let f = one(&[producer(10, &[])], 1, &recs);
    let want = Figures {
        records: 7,
        consumed: 7,
        lost: 3,
        e2e: 7,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn a_gap_in_one_producer_is_lost_while_another_is_complete() {
    // Producer 0's 0..6 complete on partition 0; producer 1's 2 and 5 missing on partition 1.
    let mut recs = log(0, 0, &seqs(0, &[0, 1, 2, 3, 4, 5]));
    recs.extend(log(1, 0, &seqs(1, &[0, 1])));
    recs.extend(log(1, 3, &seqs(1, &[3, 4])));
    let f = one(&[producer(6, &[]), producer(6, &[])], 2, &recs);
    let want = Figures {
        records: 10,
        consumed: 10,
        lost: 2,
        e2e: 10,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn a_record_read_again_at_a_new_offset_is_a_duplicate() {
    // A producer's retry wrote sequence 3 twice, at offsets 3 and 4.
    let reads = Reads::new(1);
    let mut v = verifier(1, &[0]);
    let got = feed(&mut v, &reads, &log(0, 0, &seqs(0, &[0, 1, 2, 3, 3, 4, 5])));
    assert!(got.iter().all(|r| *r == Read::Verified));
    let f = figures(&[producer(6, &[])], 0, vec![v]);
    let want = Figures {
        records: 7,
        consumed: 6,
        duplicated: 1,
        e2e: 6,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn a_record_two_consumers_read_at_two_offsets_is_one_duplicate() {
    // Sequence 2 was written to partitions 0 and 1; each consumer has one partition.
    let reads = Reads::new(2);
    let (mut a, mut b) = (verifier(1, &[0, 0]), verifier(1, &[0, 0]));
    feed(&mut a, &reads, &log(0, 0, &seqs(0, &[0, 1, 2, 3, 4])));
    feed(&mut b, &reads, &log(1, 0, &seqs(0, &[2, 5, 6, 7])));
    assert_eq!((a.rec.duplicated, b.rec.duplicated), (0, 0));
    assert_eq!(reads.verified.load(Ordering::Acquire), 9);
    let f = figures(&[producer(8, &[])], 0, vec![a, b]);
    let want = Figures {
        records: 9,
        consumed: 8,
        duplicated: 1,
        e2e: 9,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn sequences_out_of_order_within_a_partition_are_reordered() {
    // 1, 2 and 3 arrive after 4: three records before an earlier one.
    let f = one(
        &[producer(6, &[])],
        1,
        &log(0, 0, &seqs(0, &[0, 4, 1, 2, 3, 5])),
    );
    let want = Figures {
        records: 6,
        consumed: 6,
        reordered: 3,
        e2e: 6,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn the_same_sequences_interleaved_across_partitions_are_not_reordered() {
    // Odd sequences on partition 1, read before the even ones on partition 0: in order within
    // each partition, which is all Kafka promises.
    let mut recs = log(1, 0, &seqs(0, &[1, 3, 5]));
    recs.extend(log(0, 0, &seqs(0, &[0, 2, 4])));
    let f = one(&[producer(6, &[])], 2, &recs);
    let want = Figures {
        records: 6,
        consumed: 6,
        e2e: 6,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn several_producers_are_kept_apart() {
    // Three producers' sequences 0..4 in one partition, interleaved: the same numbers are no
    // duplicates; only producer 1's 0 after its 1 is out of order; producer 2's 3 is missing.
    let mut s = Vec::new();
    for seq in 0..4 {
        s.extend(seqs(0, &[seq]));
        s.extend(seqs(1, &[[1, 0, 2, 3][seq as usize]]));
        if seq != 3 {
            s.extend(seqs(2, &[seq]));
        }
    }
    let producers = [producer(4, &[]), producer(4, &[]), producer(4, &[])];
    let f = one(&producers, 1, &log(0, 0, &s));
    let want = Figures {
        records: 11,
        consumed: 11,
        lost: 1,
        reordered: 1,
        e2e: 11,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn an_aborted_record_read_is_counted_and_makes_up_for_no_committed_one() {
    // Eight records, 2 and 3 in an aborted transaction; committed 7 never read, aborted 2
    // read (a read_committed consumer must not see it).
    let mut p = producer(8, &[]);
    let aborted = 2..4;
    p.txn = Some(TxnRecording {
        aborted: 1,
        aborted_records: 2,
        aborted_seqs: vec![aborted],
        ..TxnRecording::default()
    });
    let mut s = seqs(0, &[0, 1]);
    s.extend(of(Kind::Aborted, 0, &[2]));
    s.extend(seqs(0, &[4, 5, 6]));
    let f = one(&[p], 1, &log(0, 0, &s));
    let want = Figures {
        records: 6,
        consumed: 5,
        lost: 1,
        aborted_read: 1,
        e2e: 5,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn a_record_read_again_at_its_offset_is_redelivered_not_duplicated() {
    // Consumer a reads offsets 0..5, then 2..5 again (a rewind); consumer b reads 3 again.
    let reads = Reads::new(1);
    let (mut a, mut b) = (verifier(1, &[0]), verifier(1, &[0]));
    let all = log(0, 0, &seqs(0, &[0, 1, 2, 3, 4]));
    feed(&mut a, &reads, &all);
    let again = feed(&mut a, &reads, &all[2..]);
    assert_eq!(again, vec![Read::Redelivered; 3]);
    assert_eq!(feed(&mut b, &reads, &all[3..4]), vec![Read::Redelivered]);
    let f = figures(&[producer(5, &[])], 0, vec![a, b]);
    let want = Figures {
        records: 9,
        consumed: 5,
        redelivered: 4,
        e2e: 5,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn warm_up_records_are_read_not_counted() {
    // Sequences 0..3 were sent in the warm-up; the measured phase's three follow.
    let reads = Reads::new(1);
    let mut v = verifier(1, &[0]);
    let mut s = of(Kind::WarmUp, 0, &[0, 1, 2]);
    s.extend(seqs(0, &[3, 4, 5]));
    feed(&mut v, &reads, &log(0, 0, &s));
    assert!(!v.rec.seen[0].contains(0) && v.rec.seen[0].contains(3));
    assert_eq!(reads.verified.load(Ordering::Acquire), 3);
    let f = figures(&[producer(3, &[])], 0, vec![v]);
    let want = Figures {
        records: 6,
        consumed: 3,
        e2e: 3,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn backlog_records_are_verified_without_latency_and_a_missing_one_is_lost() {
    // Backlog sequences 0..5 (2 never read), then the measured 5..8.
    let mut s = of(Kind::Backlog, 0, &[0, 1]);
    s.extend(of(Kind::Backlog, 0, &[3, 4]));
    s.extend(seqs(0, &[5, 6, 7]));
    let reads = Reads::new(1);
    let mut v = verifier(1, &[0]);
    feed(&mut v, &reads, &log(0, 0, &s));
    assert_eq!(reads.verified.load(Ordering::Acquire), 7);
    let f = figures(&[producer(3, &[])], 5, vec![v]);
    let want = Figures {
        records: 7,
        consumed: 3,
        lost: 1,
        backlog_read: 4,
        e2e: 3,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn records_below_the_partitions_base_are_counted_not_verified() {
    // An existing topic held offsets 0..5 (stamped by an earlier run, sequences 0..5); this
    // run wrote its 0..3 from offset 5. Verified, the earlier ones would be duplicates.
    let reads = Reads::new(1);
    let mut v = verifier(1, &[5]);
    let mut recs = log(0, 0, &seqs(0, &[0, 1, 2, 3, 4]));
    recs.extend(log(0, 5, &seqs(0, &[0, 1, 2])));
    let got = feed(&mut v, &reads, &recs);
    assert_eq!(got[..5], [Read::Unverified; 5]);
    assert_eq!(got[5..], [Read::Verified; 3]);
    let f = figures(&[producer(3, &[])], 0, vec![v]);
    let want = Figures {
        records: 8,
        consumed: 3,
        e2e: 3,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn a_producer_id_out_of_range_or_no_stamp_is_counted_not_verified() {
    let reads = Reads::new(1);
    let mut v = verifier(2, &[0]);
    let mut s = seqs(0, &[0]);
    s.extend(seqs(7, &[1]));
    s.push(None);
    s.extend(seqs(1, &[0]));
    let got = feed(&mut v, &reads, &log(0, 0, &s));
    assert_eq!(
        got,
        [
            Read::Verified,
            Read::Unverified,
            Read::Unverified,
            Read::Verified
        ]
    );
    let f = figures(&[producer(1, &[]), producer(1, &[])], 0, vec![v]);
    let want = Figures {
        records: 4,
        consumed: 2,
        e2e: 2,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn failed_records_read_back_are_failed_but_delivered() {
    // 1 and 4 reported failed (timed out), written all the same.
    let f = one(
        &[producer(6, &[1, 4])],
        1,
        &log(0, 0, &seqs(0, &[0, 1, 2, 3, 4, 5])),
    );
    let want = Figures {
        records: 6,
        consumed: 6,
        failed_but_delivered: 2,
        e2e: 6,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn a_failed_record_read_back_does_not_hide_a_lost_acked_one() {
    // 4 failed but was written; acked 3 never read: 5 read of 5 acked, yet one is lost.
    let mut recs = log(0, 0, &seqs(0, &[0, 1, 2]));
    recs.extend(log(0, 4, &seqs(0, &[4, 5])));
    let f = one(&[producer(6, &[4])], 1, &recs);
    let want = Figures {
        records: 5,
        consumed: 5,
        lost: 1,
        failed_but_delivered: 1,
        e2e: 5,
        ..Figures::default()
    };
    assert_eq!(f, want);
}

#[test]
fn a_read_uncommitted_consumer_waits_for_the_aborted_records_a_read_committed_one_never_sees() {
    let recs = [
        log(0, 0, &seqs(0, &[0, 1])),
        log(0, 2, &of(Kind::Aborted, 0, &[2, 3, 4])),
    ]
    .concat();
    // read_committed: an aborted record is a violation, not a record it waits for.
    let reads = Reads::new(1);
    let mut v = verifier(1, &[0]);
    feed(&mut v, &reads, &recs);
    assert_eq!(reads.verified.load(Ordering::Acquire), 2);
    // read_uncommitted: the run's drain waits for them too (`Shared::expected_aborted`), so
    // each one read counts toward what was verified.
    let reads = Reads::new(1);
    let mut v = verifier(1, &[0]);
    v.counts_aborted = true;
    feed(&mut v, &reads, &recs);
    assert_eq!(reads.verified.load(Ordering::Acquire), 5);
    assert_eq!(v.rec.aborted_read, 3);
    assert_eq!(v.rec.consumed, 2);
}
