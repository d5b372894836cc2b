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
