//! The fault figures from synthetic recordings and series: gaps intersected across producers,
//! the recovery window, failures by kind, churn (the windows over due time: `fault/windows`).

use super::*;
use crate::measure::intervals::IntervalRecorder;
use crate::measure::series::{self, Planned};
use crate::model::RateSpec;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// A producer acknowledged at each of `acks` (ns), measured from 0, last send at `last_send`.
fn producer(acks: &[u64], last_send: u64) -> ProducerRecording {
    let mut p = ProducerRecording::empty();
    for a in acks {
        p.ack_timeline.acked(*a);
    }
    p.raw.span.last_send_ns = last_send;
    p.raw.intervals = Some(crate::measure::Intervals {
        width_ns: S,
        ..Default::default()
    });
    p
}

fn every(from: u64, to: u64, step: u64) -> Vec<u64> {
    (from..to).step_by(step as usize).collect()
}

fn record(action: &str, fired: f64, ended: Option<f64>) -> FaultRecord {
    FaultRecord {
        action: action.into(),
        at_secs: fired,
        fired_secs: Some(fired),
        target: None,
        ended_secs: ended,
        outcome: "ok".into(),
        consumer: None,
    }
}

#[test]
fn only_a_silence_longer_than_the_threshold_is_a_gap() {
    let mut t = AckTimeline::default();
    for now in [S, S + 50 * MS, S + 90 * MS, 2 * S, 2 * S + 10 * MS] {
        t.acked(now);
    }
    assert_eq!(t.first_ns, S);
    assert_eq!(t.gaps, [(S + 90 * MS, 2 * S)]);
    assert_eq!(t.last_ns, 2 * S + 10 * MS);
}

#[test]
fn stretches_intersect_where_both_are_silent() {
    let a = [(0, 10), (20, 30), (40, 50)];
    let b = [(5, 25), (45, 60)];
    assert_eq!(intersect(&a, &b), [(5, 10), (20, 25), (45, 50)]);
    assert!(intersect(&a, &[]).is_empty());
}

/// Acks every 10 ms over 10 s but in the silences given (seconds).
fn acks_but(silent: &[(f64, f64)]) -> Vec<u64> {
    let ns = |secs: f64| (secs * 1e9) as u64;
    every(0, 10 * S, 10 * MS)
        .into_iter()
        .filter(|t| !silent.iter().any(|(a, b)| ns(*a) <= *t && *t < ns(*b)))
        .collect()
}

#[test]
fn unavailable_is_the_longest_stretch_no_producer_got_an_ack() {
    // A: silent from 3 s to 8 s. B: silent from 5 s to 7 s, and 8.5 s to 9.5 s (A acks then).
    let a = acks_but(&[(3.0, 8.0)]);
    let b = acks_but(&[(5.0, 7.0), (8.5, 9.5)]);
    let producers = [producer(&a, 10 * S), producer(&b, 10 * S)];
    let u = unavailable(&producers).unwrap();
    assert!((u - 2.0).abs() < 0.02, "{u}");
}

/// `unavailable.time` as a run derives it: from its producers' sums.
fn unavailable(producers: &[ProducerRecording]) -> Option<f64> {
    let sums = FaultSums::of(Vec::new(), producers);
    sums.figures(&RunResult::default()).unavailable_secs
}

#[test]
fn shards_silences_intersect_as_one_machines_producers_do() {
    // Two producers, one per shard, each silent for 3 s, overlapping for 1 s: nothing was
    // acknowledged anywhere for 1 s, as one machine with both producers says. The shortest
    // shard's figure (what merges took before) would say 3 s.
    let a = acks_but(&[(3.0, 6.0)]);
    let b = acks_but(&[(5.0, 8.0)]);
    let one = FaultSums::of(Vec::new(), &[producer(&a, 10 * S), producer(&b, 10 * S)]);
    let mut merged = FaultSums::of(Vec::new(), &[producer(&a, 10 * S)]);
    merged.absorb(&FaultSums::of(Vec::new(), &[producer(&b, 10 * S)]));
    assert_eq!(merged, one);
    let u = merged
        .figures(&RunResult::default())
        .unavailable_secs
        .unwrap();
    assert!((u - 1.0).abs() < 0.02, "{u}");
    // Failures of both sides count; the actions are the side's that executed them.
    let mut x = producer(&a, 10 * S);
    x.ack_timeline.failed(4 * S, 4 * S, "MsgTimedOut");
    let mut y = producer(&b, 10 * S);
    y.ack_timeline.failed(6 * S, 6 * S, "MsgTimedOut");
    let mut m = FaultSums::of(vec![record("pause broker 1 for 4s", 3.0, Some(7.0))], &[x]);
    m.absorb(&FaultSums::of(Vec::new(), &[y]));
    let f = m.figures(&RunResult {
        elapsed_secs: 10.0,
        ..RunResult::default()
    });
    assert_eq!(f.actions.len(), 1);
    assert_eq!(f.failed, 2);
}

#[test]
fn a_producer_silent_to_the_end_is_unavailable_until_its_last_send() {
    let a = every(0, 4 * S, 10 * MS);
    let u = unavailable(&[producer(&a, 10 * S)]).unwrap();
    assert!((u - 6.0).abs() < 0.02, "{u}");
    let never = unavailable(&[producer(&[], 10 * S)]).unwrap();
    assert_eq!(never, 10.0, "no ack at all: the whole phase");
    assert_eq!(
        unavailable(&[producer(&every(0, 10 * S, MS), 10 * S)]),
        Some(0.0)
    );
}

#[test]
fn windows_merge_where_they_overlap_and_an_open_one_lasts_to_the_end() {
    let actions = [
        record("kill broker 1 for 5s", 10.0, Some(15.0)),
        record("pause broker 2 for 5s", 12.0, Some(17.0)),
        record("run \"x\"", 20.0, Some(20.5)),
        record("kill broker 3", 25.0, None),
        FaultRecord {
            fired_secs: None,
            ..record("never fired", 1.0, None)
        },
    ];
    assert_eq!(
        windows(&actions, 30.0),
        [(10.0, 17.0), (20.0, 20.5), (25.0, 30.0)]
    );
}

/// A series of 1 s intervals at `rate`/s, acked as `acked[i]` in interval i, each interval's
/// acks `latency_ms[i]` late.
fn series(rate: f64, acked: &[u64], latency_ms: &[u64]) -> TimeSeries {
    let mut r = IntervalRecorder::new(S);
    r.start(0);
    for (i, (n, l)) in acked.iter().zip(latency_ms).enumerate() {
        for _ in 0..*n {
            r.acked(i as u64 * S + 500 * MS, l * MS, 100);
        }
        r.sent(i as u64 * S + 999 * MS);
    }
    let rec = r.finish();
    let spec = RateSpec::Fixed(rate);
    let planned = Planned {
        rate: &spec,
        duration: None,
        messages: None,
        backlog: 0,
    };
    series::Intervals::of_thread(&rec, false)
        .unwrap()
        .derive(&planned)
}

#[test]
fn recovery_ends_where_a_whole_second_is_back_at_the_target_rate() {
    // 100/s; the fault ends at 3 s; 3-4 s is a burst of the backlog, 4-5 s at 50, then 95.
    let s = series(100.0, &[100, 100, 0, 300, 50, 95, 100], &[1; 7]);
    let r = recovery(&s, &[(2.0, 3.0)], 7.0).unwrap();
    assert_eq!(r, 0.0, "the backlog's burst counts as back");
    let s = series(100.0, &[100, 100, 0, 20, 50, 95, 100], &[1; 7]);
    let r = recovery(&s, &[(2.0, 3.0)], 7.0).unwrap();
    assert_eq!(r, 2.0, "5 s is the first second at 90 % of the rate");
}

#[test]
fn recovery_is_none_when_never_back_or_not_paced() {
    let s = series(100.0, &[100, 0, 10, 10], &[1; 4]);
    assert_eq!(recovery(&s, &[(1.0, 2.0)], 4.0), None);
    let mut unpaced = series(100.0, &[100, 100, 100], &[1; 3]);
    for p in &mut unpaced.points {
        p.target_rate = None;
    }
    assert_eq!(recovery(&unpaced, &[(0.5, 1.0)], 3.0), None);
}

#[test]
fn derive_keeps_every_action_and_totals_the_failures() {
    let mut p = producer(&every(0, 3 * S, 10 * MS), 3 * S);
    p.ack_timeline.failed(2 * S, 2 * S, "MsgTimedOut");
    let result = RunResult {
        elapsed_secs: 3.0,
        ..RunResult::default()
    };
    let f =
        FaultSums::of(vec![record("pause broker 1 for 1s", 1.5, Some(2.5))], &[p]).figures(&result);
    assert_eq!(f.actions.len(), 1);
    assert_eq!(f.windows, [[1.5, 2.5]]);
    assert_eq!(f.failed, 1);
    assert_eq!(f.unavailable_secs, Some(0.0));
}

#[test]
fn each_leave_and_rejoin_owns_the_stalls_that_began_until_the_next_and_its_lags_way_back() {
    // Consumer 2 leaves at 3 s and rejoins at 6 s; a producer stop is no churn.
    let mut stop = record("stop consumer 2", 3.0, Some(6.0));
    stop.consumer = Some(2);
    let actions = [record("pause broker 1", 1.0, Some(1.5)), stop];
    let s = |secs: f64| (secs * 1e9) as i64;
    let stalls = [
        // The join, before the clock: no event's.
        (s(-0.5), s(0.1)),
        // The leave: three partitions, 2 s, 1.9 s and 10 ms.
        (s(3.0), s(5.0)),
        (s(3.1), s(5.0)),
        (s(3.2), s(3.21)),
        // The rejoin: one partition moved, 0.5 s.
        (s(6.0), s(6.5)),
    ];
    // Records read twice: 7 in the join (before the clock), 40 + 2 after the leave, 5 after
    // the rejoin (its slot begins at the event itself).
    let redeliveries = [(s(-0.4), 7), (s(3.1), 40), (s(5.9), 2), (s(6.0), 5)];
    // Lag at each 1 s interval's end: about 100, up to 4000 after the leave, back at 5 s.
    let lags = [100, 120, 90, 2500, 4000, 80, 300, 110, 100, 100];
    let series = TimeSeries {
        interval_secs: 1.0,
        points: lags
            .iter()
            .enumerate()
            .map(|(i, l)| crate::measure::SeriesPoint {
                t_secs: i as f64,
                span_secs: 1.0,
                lag: Some(*l),
                ..Default::default()
            })
            .collect(),
    };
    let c = churn(&actions, &stalls, &redeliveries, Some(&series));
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].event, "consumer 2 left");
    assert_eq!((c[0].at_secs, c[0].stalls), (3.0, 3));
    assert!((c[0].stalled_secs - 3.91).abs() < 1e-6, "{c:?}");
    assert!((c[0].longest_secs - 2.0).abs() < 1e-6, "{c:?}");
    // The level before 3 s is the median of 100, 120, 90; lag is back at the end of 5–6 s.
    assert_eq!(c[0].lag_back_secs, Some(3.0));
    assert_eq!(c[1].event, "consumer 2 rejoined");
    assert_eq!((c[1].stalls, c[1].longest_secs), (1, 0.5));
    // The level before 6 s is the median of 120, 90, 2500, 4000, 80 (120, not the leave's
    // spike): 300 at 7 s, 110 at 8 s.
    assert_eq!(c[1].lag_back_secs, Some(2.0));
    assert_eq!((c[0].redelivered, c[1].redelivered), (42, 5));
    // Without a series the stalls still count.
    assert_eq!(churn(&actions, &stalls, &[], None)[0].lag_back_secs, None);
    // A lag that never rose above its level: back at once.
    let flat = TimeSeries {
        interval_secs: 1.0,
        points: (0..10)
            .map(|i| crate::measure::SeriesPoint {
                t_secs: i as f64,
                span_secs: 1.0,
                lag: Some(100),
                ..Default::default()
            })
            .collect(),
    };
    assert_eq!(
        churn(&actions, &[], &[], Some(&flat))[0].lag_back_secs,
        Some(0.0)
    );
}

#[test]
fn members_stopped_or_started_at_the_same_instant_are_one_event() {
    // A scale-out from 2 to 6: consumers 2–5 stopped from 0 s (they leave as the clock starts)
    // until 8 s; then consumers 1 and 2 leave together at 12 s and come back at 15 s, and 0
    // alone at 16 s.
    let stop = |n: u32, at: f64, fired: f64, ended: f64| {
        let mut r = record(&format!("stop consumer {n}"), fired, Some(ended));
        r.at_secs = at;
        r.consumer = Some(n);
        r
    };
    let actions = [
        stop(5, 0.0, 0.0003, 8.0001),
        stop(2, 0.0, 0.0001, 8.0),
        stop(3, 0.0, 0.0002, 8.03),
        stop(4, 0.0, 0.0002, 8.02),
        stop(1, 12.0, 12.0, 15.0),
        stop(2, 12.0, 12.01, 15.02),
        stop(0, 16.0, 16.0, 17.0),
    ];
    let s = |secs: f64| (secs * 1e9) as i64;
    let stalls = [(s(0.01), s(1.5)), (s(8.05), s(8.3)), (s(12.1), s(13.0))];
    let c = churn(&actions, &stalls, &[], None);
    let events: Vec<(&str, f64, u64)> = c
        .iter()
        .map(|e| (e.event.as_str(), e.at_secs, e.stalls))
        .collect();
    assert_eq!(
        events,
        [
            ("consumers 2, 3, 4 and 5 left", 0.0001, 1),
            ("consumers 2, 3, 4 and 5 rejoined", 8.0, 1),
            ("consumers 1 and 2 left", 12.0, 1),
            ("consumers 1 and 2 rejoined", 15.0, 0),
            ("consumer 0 left", 16.0, 0),
            ("consumer 0 rejoined", 17.0, 0),
        ]
    );
}
