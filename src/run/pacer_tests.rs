//! The schedule without a broker: times, totals and shares for constant rates, shapes, pauses,
//! ramps.

use std::time::Duration;

use super::{Pacer, Schedule, Share, Slot};
use crate::model::{RateSegment, RateSpec};

const MS: u64 = 1_000_000;

fn shape(segments: &[(f64, f64)]) -> RateSpec {
    RateSpec::Shape(
        segments
            .iter()
            .map(|&(per_sec, secs)| RateSegment {
                per_sec,
                ramp_to: None,
                duration: Duration::from_secs_f64(secs),
            })
            .collect(),
    )
}

/// Every due time of one share, in milliseconds, up to `limit` records.
fn due_ms(rate: &RateSpec, share: Share, limit: usize) -> Vec<u64> {
    let mut pacer = Pacer::new(rate, share, 0);
    let mut out = Vec::new();
    while out.len() < limit {
        match pacer.next_slot() {
            Slot::At(ns) => out.push((ns + MS / 2) / MS),
            Slot::Now => panic!("a paced schedule said `now`"),
            Slot::Done => break,
        }
    }
    out
}

#[test]
fn records_are_due_where_the_integral_of_the_rate_reaches_their_index() {
    let cases: &[(&str, RateSpec, &[u64])] = &[
        (
            "a constant rate spaces records evenly from zero",
            RateSpec::Fixed(4.0),
            &[0, 250, 500, 750, 1000],
        ),
        (
            "a shape changes spacing at a segment boundary",
            shape(&[(2.0, 1.0), (4.0, 1.0)]),
            &[0, 500, 1000, 1250, 1500, 1750],
        ),
        (
            "a fractional boundary carries the unused part of the integral into the next segment",
            shape(&[(2.5, 1.0), (1.0, 2.0)]),
            &[0, 400, 800, 1500],
        ),
        (
            "a pause sends nothing and the next record is due when it ends",
            shape(&[(2.0, 1.0), (0.0, 1.0), (2.0, 1.0)]),
            &[0, 500, 2000, 2500],
        ),
        (
            "a shape that starts with a pause sends first when it ends",
            shape(&[(0.0, 1.5), (1.0, 2.0)]),
            &[1500, 2500],
        ),
    ];
    for (name, rate, want) in cases {
        assert_eq!(
            &due_ms(rate, Share::WHOLE, want.len() + 1).as_slice()[..want.len()],
            *want,
            "{name}"
        );
    }
}

#[test]
fn a_shape_sends_exactly_the_floor_of_its_integral() {
    let cases: &[(&str, RateSpec, u64)] = &[
        (
            "3/s for 2s, then 7/s for 1s",
            shape(&[(3.0, 2.0), (7.0, 1.0)]),
            13,
        ),
        ("10/s for 1s", shape(&[(10.0, 1.0)]), 10),
        ("2.5/s for 1s", shape(&[(2.5, 1.0)]), 2),
        (
            "2.5/s for 1s, then 2.5/s for 1s",
            shape(&[(2.5, 1.0), (2.5, 1.0)]),
            5,
        ),
        (
            "0.1/s for 30s (not exact in binary)",
            shape(&[(0.1, 30.0)]),
            3,
        ),
        (
            "0.7/s for 3s, a pause, 0.3/s for 1s",
            shape(&[(0.7, 3.0), (0.0, 5.0), (0.3, 1.0)]),
            2,
        ),
        ("only a pause", shape(&[(0.0, 2.0)]), 0),
    ];
    for (name, rate, total) in cases {
        assert_eq!(Schedule::new(rate).total(), Some(*total), "{name}: total");
        assert_eq!(
            due_ms(rate, Share::WHOLE, 1_000).len() as u64,
            *total,
            "{name}: records the pacer gives"
        );
    }
}

#[test]
fn the_shares_of_p_senders_together_are_exactly_the_single_schedule() {
    let rates = [
        RateSpec::Fixed(1_000.0),
        RateSpec::Fixed(3.0),
        shape(&[(3.0, 2.0), (7.0, 1.0)]),
        shape(&[(2.5, 1.0), (0.0, 0.5), (1.5, 3.0), (100.0, 0.25)]),
    ];
    for rate in &rates {
        let single: Vec<u64> = {
            let mut p = Pacer::new(rate, Share::WHOLE, 0);
            (0..200)
                .map_while(|_| match p.next_slot() {
                    Slot::At(t) => Some(t),
                    _ => None,
                })
                .collect()
        };
        for of in 1..=5u64 {
            let mut union: Vec<u64> = Vec::new();
            for index in 0..of {
                let mut p = Pacer::new(rate, Share { index, of }, 0);
                let count = Share { index, of }.count_of(single.len() as u64);
                for _ in 0..count {
                    match p.next_slot() {
                        Slot::At(t) => union.push(t),
                        other => panic!("{rate:?}, share {index}/{of}: {other:?}"),
                    }
                }
            }
            union.sort_unstable();
            assert_eq!(union, single, "{rate:?} over {of} senders");
        }
    }
}

#[test]
fn sender_k_of_p_starts_k_records_into_the_schedule_so_senders_are_staggered() {
    let rate = RateSpec::Fixed(100.0);
    for index in 0..4 {
        let first = Pacer::new(&rate, Share { index, of: 4 }, 0).next_slot();
        assert_eq!(first, Slot::At(index * 10 * MS));
    }
}

#[test]
fn the_pacer_agrees_with_the_pure_schedule_and_counts_from_its_origin() {
    let rate = shape(&[(3.0, 2.0), (0.0, 1.0), (7.0, 1.0), (0.5, 3.0)]);
    let schedule = Schedule::new(&rate);
    let origin = 5 * MS;
    let mut pacer = Pacer::new(&rate, Share::WHOLE, origin);
    for i in 0..=schedule.total().unwrap() {
        let want = match schedule.slot(i) {
            Slot::At(t) => Slot::At(origin + t),
            other => other,
        };
        assert_eq!(pacer.next_slot(), want, "record {i}");
    }
}

#[test]
fn no_rate_means_every_record_is_due_now() {
    let mut pacer = Pacer::new(&RateSpec::Unlimited, Share { index: 1, of: 3 }, 42);
    assert!((0..5).all(|_| pacer.next_slot() == Slot::Now));
    assert_eq!(Schedule::new(&RateSpec::Unlimited).total(), None);
}

#[test]
fn a_count_splits_over_shares_with_nothing_lost_or_doubled() {
    for total in [0, 1, 7, 10, 1_000_003] {
        for of in 1..=6 {
            let sum: u64 = (0..of)
                .map(|index| Share { index, of }.count_of(total))
                .sum();
            assert_eq!(sum, total, "{total} over {of}");
        }
    }
}

/// `ramp from/s to to/s over secs`, as one segment of a shape.
fn ramp(from: f64, to: f64, secs: f64) -> RateSegment {
    RateSegment {
        per_sec: from,
        ramp_to: Some(to),
        duration: Duration::from_secs_f64(secs),
    }
}

/// Every due time of the whole schedule, in nanoseconds.
fn due_ns(rate: &RateSpec) -> Vec<u64> {
    let mut pacer = Pacer::new(rate, Share::WHOLE, 0);
    std::iter::from_fn(|| match pacer.next_slot() {
        Slot::At(ns) => Some(ns),
        _ => None,
    })
    .collect()
}

/// When the integral of a ramp from `a`/s to `b`/s over `secs` reaches `k`, from its closed
/// form `a·t + (b - a)·t²/(2·secs) = k`.
fn ramp_closed_form_ns(a: f64, b: f64, secs: f64, k: f64) -> f64 {
    if a == b {
        return k / a * 1e9;
    }
    let c = (b - a) / (2.0 * secs);
    (-a + (a * a + 4.0 * c * k).sqrt()) / (2.0 * c) * 1e9
}

#[test]
fn a_ramp_sends_exactly_the_floor_of_its_integral() {
    let cases: &[(&str, Vec<RateSegment>, u64)] = &[
        (
            "ramp 1000/s to 20000/s over 30s",
            vec![ramp(1000.0, 20000.0, 30.0)],
            315_000,
        ),
        ("ramp 0/s to 10/s over 3s", vec![ramp(0.0, 10.0, 3.0)], 15),
        ("ramp 10/s to 0/s over 3s", vec![ramp(10.0, 0.0, 3.0)], 15),
        (
            "ramp 1/s to 2/s over 3s (4.5)",
            vec![ramp(1.0, 2.0, 3.0)],
            4,
        ),
        (
            "ramp 0/s to 3/s over 1s, then 3/s for 1s, then ramp 3/s to 0/s over 1s",
            vec![
                ramp(0.0, 3.0, 1.0),
                RateSegment {
                    per_sec: 3.0,
                    ramp_to: None,
                    duration: Duration::from_secs(1),
                },
                ramp(3.0, 0.0, 1.0),
            ],
            6,
        ),
        ("ramp 5/s to 5/s over 2s", vec![ramp(5.0, 5.0, 2.0)], 10),
        ("ramp 0/s to 0/s over 2s", vec![ramp(0.0, 0.0, 2.0)], 0),
    ];
    for (name, segments, total) in cases {
        let rate = RateSpec::Shape(segments.clone());
        assert_eq!(Schedule::new(&rate).total(), Some(*total), "{name}: total");
        assert_eq!(
            due_ns(&rate).len() as u64,
            *total,
            "{name}: records the pacer gives"
        );
    }
}

#[test]
fn a_ramps_due_times_are_monotone_and_match_the_closed_form_of_its_integral() {
    for (a, b, secs) in [(1000.0, 20000.0, 30.0), (0.0, 50.0, 2.0), (80.0, 5.0, 4.0)] {
        let rate = RateSpec::Shape(vec![ramp(a, b, secs)]);
        let due = due_ns(&rate);
        assert!(
            due.windows(2).all(|w| w[0] <= w[1]),
            "ramp {a}/s to {b}/s: times go backwards"
        );
        for (i, &ns) in due.iter().enumerate() {
            let want = ramp_closed_form_ns(a, b, secs, i as f64);
            // The closed form and the schedule differ only by float rounding (well below 1µs).
            assert!(
                (ns as f64 - want).abs() < 1_000.0,
                "ramp {a}/s to {b}/s, record {i}: {ns} ns, closed form {want} ns"
            );
        }
        let last = *due.last().expect("a ramp sends") as f64;
        assert!(last <= secs * 1e9, "the last record is due within the ramp");
    }
}

#[test]
fn a_ramp_up_sends_its_records_ever_closer_together() {
    let due = due_ns(&RateSpec::Shape(vec![ramp(10.0, 100.0, 2.0)]));
    let gaps: Vec<u64> = due.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.windows(2).all(|g| g[1] <= g[0] + 1), "{gaps:?}");
    // At 10/s a gap would be 100ms, but the rate already rises within the first one
    // (10·t + 22.5·t² = 1 at t ≈ 84ms); at the end, near 100/s, about 10ms.
    assert!((80 * MS..100 * MS).contains(&gaps[0]), "{:?}", gaps[0]);
    assert!(*gaps.last().unwrap() < 11 * MS, "{:?}", gaps.last());
}

#[test]
fn a_ramp_after_a_segment_carries_the_unused_part_of_the_integral() {
    // 2.5/s for 1s sends records 0, 1, 2 and leaves half a record: record 3 is due once the
    // ramp 0/s to 2/s over 2s has added 0.5, which its integral t²/2 reaches at t = 1s.
    let rate = RateSpec::Shape(vec![
        RateSegment {
            per_sec: 2.5,
            ramp_to: None,
            duration: Duration::from_secs(1),
        },
        ramp(0.0, 2.0, 2.0),
    ]);
    assert_eq!(Schedule::new(&rate).total(), Some(4));
    let ms: Vec<u64> = due_ns(&rate).iter().map(|ns| (ns + MS / 2) / MS).collect();
    assert_eq!(ms, [0, 400, 800, 2000]);
}

#[test]
fn the_shares_of_p_senders_of_a_ramp_together_are_exactly_the_single_schedule() {
    let rate = RateSpec::Shape(vec![ramp(0.0, 40.0, 3.0), ramp(40.0, 10.0, 2.0)]);
    let single = due_ns(&rate);
    for of in 1..=4u64 {
        let mut union: Vec<u64> = (0..of)
            .flat_map(|index| {
                let mut p = Pacer::new(&rate, Share { index, of }, 0);
                std::iter::from_fn(move || match p.next_slot() {
                    Slot::At(ns) => Some(ns),
                    _ => None,
                })
            })
            .collect();
        union.sort_unstable();
        assert_eq!(union, single, "over {of} senders");
    }
}

/// Each run's rate of a scenario written as a user writes it, through parse and check: the
/// habits (tests/habits.rs) become these schedules.
fn checked_rates(body: &str) -> Vec<RateSpec> {
    let text =
        format!("scenario \"habits\" {{\ntopic \"orders\" {{ existing = true }}\n{body}\n}}\n");
    let mut sources = crate::source::Sources::default();
    let file = sources.add("habits.kbs".into(), text.clone());
    let ast = crate::syntax::parse(file, &text).unwrap_or_else(|d| panic!("{body}: {d:?}"));
    let scenario = crate::check::check(&ast, &sources).unwrap_or_else(|d| {
        let shown = crate::diagnostic::render_text(&d, &sources, false, 100);
        panic!("{body}\n{shown}")
    });
    scenario
        .cells
        .iter()
        .map(|c| c.spec.workload.rate.clone())
        .collect()
}

#[test]
fn the_habits_rates_schedule_the_records_people_expect() {
    let totals = |body: &str| -> Vec<Option<u64>> {
        checked_rates(body)
            .iter()
            .map(|r| Schedule::new(r).total())
            .collect()
    };
    assert_eq!(
        totals("workload { rate = ramp 1000/s to 20000/s over 30s }"),
        [Some(315_000)]
    );
    assert_eq!(
        totals(
            "workload { rate = {r} } matrix { r = [100/s for 10s, ramp 10/s to 100/s over 10s] }"
        ),
        [Some(1000), Some(550)]
    );
    assert_eq!(
        totals("workload { messages = 300k  rate = {r} } matrix { r = [100k/s, ramp 1k/s to 20k/s over 30s] }"),
        [None, Some(315_000)]
    );
}

#[test]
fn after_a_pause_in_a_habits_shape_the_next_record_is_due_when_the_pause_ends() {
    let rates = checked_rates(
        "workload { rate = ramp 0/s to 100/s over 10s, then 100/s for 10s, then 0/s for 5s, then ramp 100/s to 0/s over 10s }",
    );
    let schedule = Schedule::new(&rates[0]);
    assert_eq!(schedule.total(), Some(500 + 1000 + 500));
    // The first record after the pause is due when it ends, 25s in.
    assert_eq!(schedule.slot(1500), Slot::At(25_000_000_000));
}
