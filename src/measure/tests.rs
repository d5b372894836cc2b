//! Figures from recordings without a broker: delivery accounting, cut-short runs, slip, series.

use super::*;
use crate::model::Ack;

/// A producer that sent `0..sent`, of which `failed` were reported failed.
fn producer(sent: u64, failed: &[u64]) -> ProducerRecording {
    let mut p = ProducerRecording::empty();
    p.raw.sent = sent;
    p.raw.failed = failed.len() as u64;
    p.raw.acked = sent - p.raw.failed;
    p.failed_seqs = failed.to_vec();
    p
}

/// A consumer that read these sequence numbers of each producer.
fn consumer(read: &[&[u64]]) -> ConsumerRecording {
    let mut c = ConsumerRecording::empty();
    for (id, seqs) in read.iter().enumerate() {
        for s in *seqs {
            c.seen_mut(id).insert(*s);
            c.consumed += 1;
        }
    }
    c
}

#[test]
fn a_failed_record_read_back_does_not_hide_a_lost_acked_one() {
    // Records 0..10; 7 failed (timed out) but was written; acked 3 was never read.
    let producers = [producer(10, &[7])];
    let c = consumer(&[&[0, 1, 2, 4, 5, 6, 7, 8, 9]]);
    // acked − consumed would say 9 − 9 = 0 lost.
    assert_eq!(account(&producers, &c), (1, 1));
}

#[test]
fn failed_records_are_matched_to_their_own_producer() {
    // Producer 1's failed seq 2 was not written; producer 0's seq 2 (acked) was read.
    let producers = [producer(3, &[]), producer(3, &[2])];
    let c = consumer(&[&[0, 1, 2], &[0, 1]]);
    assert_eq!(account(&producers, &c), (0, 0));
}

#[test]
fn every_acked_record_read_back_is_no_loss() {
    let producers = [producer(4, &[1, 3])];
    let c = consumer(&[&[0, 1, 2, 3]]);
    assert_eq!(account(&producers, &c), (0, 2));
}

#[test]
fn a_cut_short_run_reports_delivery_incomplete_never_lost() {
    let producers = [producer(100, &[])];
    let c = consumer(&[&[0, 1, 2]]);
    let mut r = RunResult::default();
    r.derive_figures(&Recordings {
        producers: &producers,
        consumer: Some(&c),
        rate: &RateSpec::Unlimited,
        disk_bytes: None,
        duration: None,
        messages: None,
        cut_short: true,
        backlog: 0,
        read_side: None,
        shares: 1,
    });
    let d = r.delivery.clone().expect("a consumer ran");
    assert_eq!((d.lost, d.incomplete), (None, true));
    assert_eq!(
        r.metric(Metric::Lost),
        None,
        "no assertion judges it as loss"
    );
}

#[test]
fn the_run_gets_the_series_of_its_threads_merged() {
    let ms = 1_000_000;
    let recorder = |acks: &[u64]| {
        let mut r = IntervalRecorder::new(100 * ms);
        r.start(0);
        for t in acks {
            r.sent(*t);
            r.acked(*t, ms, 10);
        }
        let mut p = producer(acks.len() as u64, &[]);
        p.raw.intervals = Intervals::of_thread(&r.finish(), false);
        p
    };
    let producers = [recorder(&[0, 150 * ms]), recorder(&[10 * ms])];
    let mut r = RunResult::default();
    r.derive_figures(&Recordings {
        producers: &producers,
        consumer: None,
        rate: &RateSpec::Fixed(20.0),
        disk_bytes: None,
        duration: None,
        messages: Some(3),
        cut_short: false,
        backlog: 0,
        read_side: None,
        shares: 1,
    });
    let s = r.series.expect("a series");
    let acked: Vec<u64> = s.points.iter().map(|p| p.acked).collect();
    assert_eq!(acked, [2, 1]);
    assert_eq!(s.points.iter().map(|p| p.bytes).sum::<u64>(), 30);
    // 20/s for 3 records: 2 due in the first 100 ms, the last at 100 ms.
    assert_eq!(s.points[0].target_rate, Some(20.0));
    assert_eq!(s.points[1].target_rate, Some(10.0));
}

#[test]
fn a_run_that_ends_past_its_duration_reports_the_slip() {
    let mut p = producer(10, &[]);
    p.raw.span = SendSpan {
        start_ns: Some(0),
        first_send_ns: Some(1),
        last_send_ns: 2_000_000_000,
        last_ack_ns: 5_000_000_000,
    };
    let mut r = RunResult::default();
    r.derive_figures(&Recordings {
        producers: &[p],
        consumer: None,
        rate: &RateSpec::Unlimited,
        disk_bytes: None,
        duration: Some(Duration::from_secs(2)),
        messages: None,
        cut_short: false,
        backlog: 0,
        read_side: None,
        shares: 1,
    });
    assert_eq!(r.schedule_slip_secs, Some(3.0));
}

#[test]
fn a_sequence_read_by_two_group_members_is_one_duplicate_and_one_consumed() {
    // Member a read seqs 0..3, member b read 2 (a retry written at another offset) and 3..5.
    let (a, b) = (consumer(&[&[0, 1, 2]]), consumer(&[&[2, 3, 4]]));
    let merged = ConsumerRecording::merge(vec![a, b]);
    assert_eq!(merged.consumed, 5);
    assert_eq!(merged.duplicated, 1);
    let producers = [producer(5, &[])];
    assert_eq!(account(&producers, &merged), (0, 0), "nothing lost");
}

#[test]
fn an_unanswered_acknowledgement_is_accounted_once_whether_or_not_its_record_came_back() {
    let doubt = |seq, ack, delivery| InDoubt {
        producer: 0,
        seq,
        backlog: false,
        ack,
        delivery,
        archived: false,
    };
    // Member a's answers for 3, 4 and 5 were lost; 4 came back and member b accepted it; 5
    // was a release below the limit (taken, it would have come back). 0..3 were answered.
    let mut a = consumer(&[&[0, 1, 2]]);
    a.share = Some(ShareRecording {
        accepted: 3,
        unanswered: 3,
        in_doubt: vec![
            doubt(3, Ack::Accept, 1),
            doubt(4, Ack::Accept, 1),
            doubt(5, Ack::Release, 1),
        ],
        ..ShareRecording::default()
    });
    let mut b = consumer(&[&[4]]);
    b.share = Some(ShareRecording {
        accepted: 1,
        ..ShareRecording::default()
    });
    let merged = ConsumerRecording::merge(vec![a, b]);
    let share = merged.share.as_ref().unwrap();
    assert_eq!((merged.consumed, merged.duplicated), (5, 0));
    assert_eq!(
        (share.accepted, share.unanswered, share.unanswered_taken),
        (5, 3, 1)
    );
    assert!(share.in_doubt.is_empty());
    assert_eq!(
        share.deliveries,
        vec![0, 1],
        "the taken record, at delivery 1"
    );
    // 5 was never settled: lost, as it is.
    assert_eq!(account(&[producer(6, &[])], &merged), (1, 0));
}
