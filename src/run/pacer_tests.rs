//! The schedule without a broker: times, totals and shares for constant rates, shapes, pauses.

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
