//! Windows over due time on synthetic recordings: a pause's held-up records counted in its
//! window (not the few acknowledged within it), failures by when they were due, a drain and
//! the same seconds of the run without one.

use super::*;
use crate::measure::consume::ReadSums;
use crate::measure::due::DueLatency;
use crate::measure::intervals::IntervalRecorder;
use crate::measure::{FaultRecord, FaultSums};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

#[test]
fn a_window_takes_every_due_interval_it_overlaps() {
    assert_eq!(spans(&[(5.0, 25.0)]), [(50, 250)]);
    assert_eq!(spans(&[(5.03, 25.01)]), [(50, 251)]);
    // Overlapping and touching windows merge; an instant takes its interval.
    assert_eq!(
        spans(&[(3.0, 3.5), (1.0, 2.0), (3.4, 4.0), (7.0, 7.0)]),
        [(10, 20), (30, 40), (70, 71)]
    );
    assert!(spans(&[]).is_empty());
}

/// One producer at 1 000/s for `secs`, acked 2 ms after it was due, except the records due in
/// `[pause_from, pause_to)` s: all acknowledged when the pause ends. Returns the due-time
/// recording as a file keeps it, and how many were acknowledged within the pause.
fn paused_producer(secs: u64, pause_from: u64, pause_to: u64) -> (DueSeries, u64) {
    let mut r = IntervalRecorder::new(S).by_due(true);
    r.start(0);
    let mut held = Vec::new();
    let mut within = 0;
    for k in 0..secs * 1_000 {
        let due = k * MS;
        if (pause_from * S..pause_to * S).contains(&due) {
            held.push(due);
            continue;
        }
        if due == pause_to * S {
            for d in held.drain(..) {
                r.acked(due + 5 * MS, due + 5 * MS - d, 100);
            }
        }
        if (pause_from * S..pause_to * S).contains(&(due + 2 * MS)) {
            within += 1;
        }
        r.acked(due + 2 * MS, 2 * MS, 100);
    }
    let rec = r.finish();
    let due = DueLatency::of_thread(rec.due.as_deref().unwrap(), false).file();
    (due, within)
}

fn fired(action: &str, at: f64, ended: f64) -> FaultRecord {
    FaultRecord {
        action: action.into(),
        at_secs: at,
        fired_secs: Some(at),
        target: Some("broker 1".into()),
        ended_secs: Some(ended),
        outcome: "ok".into(),
        consumer: None,
    }
}

#[test]
fn a_pauses_figures_are_the_records_it_held_up() {
    let (due, within) = paused_producer(30, 5, 25);
    let r = RunResult {
        elapsed_secs: 30.0,
        recording: crate::measure::run_recording::RunRecording {
            due: Some(due),
            ..Default::default()
        },
        ..RunResult::default()
    };
    let sums = FaultSums {
        actions: vec![fired("pause broker 1 for 20s", 5.0, 25.0)],
        ..FaultSums::default()
    };
    let f = sums.figures(&r);
    let ack = f.ack.expect("records were due in the window");
    // The 20 000 records due in the pause, each waiting until it ended: 10 s at the median,
    // 19.8 s at p99. Acknowledged within the pause: the two that were sent just before it.
    assert_eq!(ack.count, 20_000);
    assert!(within < 5, "{within}");
    assert!((ack.p50_ms - 10_000.0).abs() < 150.0, "{}", ack.p50_ms);
    assert!((ack.p99_ms - 19_805.0).abs() < 250.0, "{}", ack.p99_ms);
    assert!(f.e2e.is_none(), "no consumer");
    // Without a due-time recording (a file of an older kafkabench): none, not the whole run.
    let old = RunResult {
        elapsed_secs: 30.0,
        ..RunResult::default()
    };
    assert!(sums.figures(&old).ack.is_none());
}

#[test]
fn failures_count_by_when_their_records_were_due() {
    let f = |reported: f64, due: f64, kind: &str| FailureAt {
        reported_ns: (reported * 1e9) as u64,
        due_ns: (due * 1e9) as u64,
        kind: kind.into(),
        records: 2,
    };
    let failures = [
        f(11.0, 3.0, "MsgTimedOut"), // due in the window, reported after it
        f(4.0, 1.0, "NotLeaderForPartition"), // reported in it, due before it
        f(8.0, 5.05, "MsgTimedOut"), // due in the window's last interval
    ];
    let by_kind = failed(&failures, &spans(&[(2.0, 5.01)]));
    assert_eq!(by_kind.get("MsgTimedOut"), Some(&4));
    assert_eq!(by_kind.get("NotLeaderForPartition"), None);
}

/// A run at 1 000/s for 10 s whose records due in the first `slow` seconds took `ms`.
fn run(index: usize, step: &str, drained: Option<f64>, slow: f64, ms: u64) -> RunResult {
    let mut r = IntervalRecorder::new(S).by_due(true);
    r.start(0);
    for k in 0..10_000u64 {
        let due = k * MS;
        let l = (if (due as f64) < slow * 1e9 { ms } else { 2 }) * MS;
        r.acked(due + l, l, 100);
    }
    let due = DueLatency::of_thread(r.finish().due.as_deref().unwrap(), false).file();
    let mut res = RunResult {
        index,
        label: step.into(),
        coords: [
            ("step".to_string(), step.to_string()),
            ("codec".to_string(), "lz4".to_string()),
        ]
        .into(),
        recording: crate::measure::run_recording::RunRecording {
            due: Some(due),
            read: drained.map(|d| ReadSums {
                drained_ns: Some((d * 1e9) as i64),
                ..ReadSums::default()
            }),
            ..Default::default()
        },
        ..RunResult::default()
    };
    res.drain = drain(&res);
    res
}

#[test]
fn a_drain_is_measured_beside_the_same_seconds_of_the_run_without_one() {
    // The replay drains for 3 s, its live records due then taking 40 ms; the live-only run's
    // first seconds take 9 ms (a start-up), which is what the replay is compared with.
    let mut all = vec![
        run(0, "live_only", None, 3.0, 9),
        run(1, "replay", Some(3.0), 3.0, 40),
    ];
    pair_drains(&mut all);
    let d = all[1].drain.as_ref().expect("the replay drained");
    assert_eq!((d.from_secs, d.to_secs), (0.0, 3.0));
    let ack = d.ack.as_ref().unwrap();
    assert_eq!(ack.count, 3_000);
    assert!((ack.p99_ms - 40.0).abs() < 0.5, "{}", ack.p99_ms);
    let beside = d.beside.as_ref().expect("the live-only run beside it");
    assert_eq!((beside.run, beside.label.as_str()), (0, "live_only"));
    let b = beside.ack.as_ref().unwrap();
    assert_eq!(b.count, 3_000, "the same seconds, not its whole run");
    assert!((b.p99_ms - 9.0).abs() < 0.1, "{}", b.p99_ms);
    assert!(all[0].drain.is_none(), "the live-only run drained nothing");
    // Read through a selector from the replay, the live-only run's figure is the same.
    let p99 = Stat::Percentile(99.0);
    let x = drain_metric(&all[0], &all[1], LatencyKind::Ack, p99).unwrap();
    assert!((x - 0.009).abs() < 1e-4, "{x}");
    assert_eq!(drain_metric(&all[0], &all[0], LatencyKind::Ack, p99), None);
}

#[test]
fn a_drain_beside_two_candidates_is_beside_none() {
    let mut all = vec![
        run(0, "live_only", None, 3.0, 9),
        run(1, "replay", Some(3.0), 3.0, 40),
        run(2, "live_twice", None, 3.0, 9),
    ];
    pair_drains(&mut all);
    assert!(all[1].drain.as_ref().unwrap().beside.is_none());
}
