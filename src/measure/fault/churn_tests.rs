//! Churn rows from synthetic actions, stalls and series: each stall in exactly one row, the
//! join's own row, members stopped at 0 s leaving before the clock, the lag's way back.

use super::*;
use crate::measure::ReadSums;

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

fn s(secs: f64) -> i64 {
    (secs * 1e9).round() as i64
}

/// `stop consumer n` planned at `at`, fired at `fired` (before the clock for a member stopped
/// at 0 s), started again at `ended`.
fn stop(n: u32, at: f64, fired: f64, ended: f64) -> FaultRecord {
    let mut r = record(&format!("stop consumer {n}"), fired, Some(ended));
    r.at_secs = at;
    r.consumer = Some(n);
    r
}

/// The run's `rebalance.stall`, as the read side's figures derive it from the same stalls.
fn stalled(stalls: &[(i64, i64)]) -> f64 {
    let sums = ReadSums {
        consumers: 6,
        rebalances: 3,
        stalls: stalls.to_vec(),
        ..ReadSums::default()
    };
    sums.figures(None)
        .stall_secs
        .expect("a group's stall figure")
}

fn rows_sum(rows: &[ChurnEvent]) -> f64 {
    rows.iter().map(|r| r.stalled_secs).sum()
}

#[test]
fn each_leave_and_rejoin_owns_the_stalls_that_began_until_the_next_and_its_lags_way_back() {
    // Consumer 2 leaves at 3 s and rejoins at 6 s; a producer stop is no churn.
    let mut stop = record("stop consumer 2", 3.0, Some(6.0));
    stop.consumer = Some(2);
    let actions = [record("pause broker 1", 1.0, Some(1.5)), stop];
    let stalls = [
        // The join, reaching 0.1 s into the measured phase: the join's row.
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
    let mut c = churn(&actions, &stalls, &redeliveries, Some(&series));
    assert_eq!(c.len(), 3);
    let join = c.remove(0);
    assert_eq!(join.event, "the group's join before the clock");
    assert!(join.join);
    assert_eq!((join.at_secs, join.stalls, join.redelivered), (-0.5, 1, 7));
    // Its partition-seconds from the clock's start, its longest whole.
    assert!((join.stalled_secs - 0.1).abs() < 1e-9, "{join:?}");
    assert!((join.longest_secs - 0.6).abs() < 1e-9, "{join:?}");
    assert_eq!(join.lag_back_secs, None);
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
    assert_eq!(churn(&actions, &stalls, &[], None)[1].lag_back_secs, None);
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
    let actions = [
        stop(5, 0.0, 0.0003, 8.0001),
        stop(2, 0.0, 0.0001, 8.0),
        stop(3, 0.0, 0.0002, 8.03),
        stop(4, 0.0, 0.0002, 8.02),
        stop(1, 12.0, 12.0, 15.0),
        stop(2, 12.0, 12.01, 15.02),
        stop(0, 16.0, 16.0, 17.0),
    ];
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

/// group_scale_out.kbs's eager step as measured (2026-12-05): four members stopped at 0 s
/// leave 17 ms before the clock; eight partitions wait for the remaining two until 2.56 s
/// and four more move in a second generation at 2.36 s; the four rejoin at 15 s. The join's
/// stalls ended before the clock.
#[test]
fn members_stopped_at_the_first_instant_own_the_stalls_their_leave_began_before_the_clock() {
    let actions = [2, 3, 4, 5].map(|n| stop(n, 0.0, -0.017, 15.0));
    let mut stalls = vec![(s(-4.807), s(-1.219)); 12];
    stalls.extend([(s(-0.009), s(2.555)); 8]);
    stalls.extend([(s(2.359), s(2.382)); 4]);
    stalls.extend([(s(15.403), s(15.42)); 12]);
    let c = churn(&actions, &stalls, &[], None);
    let rows: Vec<(&str, u64)> = c.iter().map(|e| (e.event.as_str(), e.stalls)).collect();
    assert_eq!(
        rows,
        [
            ("consumers 2, 3, 4 and 5 left", 12),
            ("consumers 2, 3, 4 and 5 rejoined", 12)
        ]
    );
    assert_eq!(c[0].at_secs, -0.017);
    assert!((c[0].longest_secs - 2.564).abs() < 1e-9, "{c:?}");
    // 8 × 2.555 s within the phase, 4 × 23 ms, 12 × 17 ms: the run's whole `stalled`.
    assert!((rows_sum(&c) - stalled(&stalls)).abs() < 1e-9, "{c:?}");
    assert!((stalled(&stalls) - (8.0 * 2.555 + 4.0 * 0.023 + 12.0 * 0.017)).abs() < 1e-9);
    // Nothing measured before the leave: no level for its lag to come back to.
    let series = TimeSeries {
        interval_secs: 1.0,
        points: (0..20)
            .map(|i| SeriesPoint {
                t_secs: i as f64,
                span_secs: 1.0,
                lag: Some(if i < 3 { 5000 } else { 100 }),
                ..Default::default()
            })
            .collect(),
    };
    assert_eq!(
        churn(&actions, &stalls, &[], Some(&series))[0].lag_back_secs,
        None
    );
}

/// group_protocols.kbs's cooperative step: no member stopped at 0 s, and the join's second
/// rebalance kept six partitions unread from 20 ms before the clock to 3.1 s after it. Those
/// partition-seconds are in `stalled`, so they are in a row: the join's.
#[test]
fn the_joins_stalls_that_reach_into_the_measured_phase_are_a_row_of_their_own() {
    let actions = [stop(2, 15.0, 15.0, 35.0)];
    let mut stalls = vec![(s(-2.5), s(-2.4)); 12];
    stalls.extend([(s(-0.02), s(3.1)); 6]);
    stalls.extend([(s(16.9), s(19.9)); 3]);
    stalls.extend([(s(36.0), s(39.0)); 3]);
    let c = churn(&actions, &stalls, &[], None);
    assert_eq!(c.len(), 3);
    assert!(c[0].join);
    assert_eq!(c[0].event, "the group's join before the clock");
    assert_eq!((c[0].stalls, c[0].at_secs), (6, -0.02));
    assert!((c[0].stalled_secs - 6.0 * 3.1).abs() < 1e-9, "{c:?}");
    assert!((rows_sum(&c) - stalled(&stalls)).abs() < 1e-9, "{c:?}");
    // A stall of its own after the clock and before the first event: still the join's row,
    // named for what it holds.
    stalls.push((s(5.0), s(5.5)));
    let c = churn(&actions, &stalls, &[], None);
    assert_eq!(
        c[0].event,
        "the group's join and its rebalances before the first event"
    );
    assert!((rows_sum(&c) - stalled(&stalls)).abs() < 1e-9, "{c:?}");
    // Without a member leaving or rejoining there are no rows at all.
    assert!(churn(&[], &stalls, &[], None).is_empty());
}

/// Whatever the events and stalls, the rows' partition-seconds add up to `stalled`, and every
/// stall that reaches into the measured phase is counted in exactly one row.
#[test]
fn every_partition_second_of_stalled_is_in_exactly_one_row() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for _ in 0..500 {
        let mut actions = Vec::new();
        for k in 0..=next(4) {
            let at = next(30) as f64 - 2.0;
            // A stop planned at 0 s fires before the clock; others at their time.
            let fired = if at < 0.0 {
                -(next(50) as f64) / 1000.0
            } else {
                at
            };
            actions.push(stop(
                k as u32 + 1,
                at.max(0.0),
                fired,
                fired + 1.0 + next(10) as f64,
            ));
        }
        let stalls: Vec<(i64, i64)> = (0..next(40))
            .map(|_| {
                let from = next(40_000) as i64 - 8_000;
                (from * 1_000_000, (from + next(6_000) as i64) * 1_000_000)
            })
            .collect();
        let c = churn(&actions, &stalls, &[], None);
        let counted: u64 = c.iter().map(|e| e.stalls).sum();
        let measured = stalls.iter().filter(|s| s.1 > 0).count() as u64;
        assert_eq!(counted, measured, "{actions:?} {stalls:?} {c:?}");
        assert!(
            (rows_sum(&c) - stalled(&stalls)).abs() < 1e-6,
            "{actions:?} {stalls:?} {c:?}"
        );
    }
}
