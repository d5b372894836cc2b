//! The read side's figures from recordings made by hand.

use super::*;

const MS: u64 = 1_000_000;

/// The figures a run derives: through the sums its result file keeps.
fn derive(
    c: &ConsumerRecording,
    side: &ReadSide,
    series: Option<&crate::measure::TimeSeries>,
) -> ConsumeFigures {
    ReadSums::of(c, side).figures(series)
}

fn side(origin_ns: u64, drained_ns: Option<u64>) -> ReadSide {
    ReadSide {
        consumers: 1,
        commit: "auto(5s)".into(),
        origin_ns,
        drained_ns,
        rebalances: 1,
        share: None,
        cold: None,
    }
}

fn read(records: u64, first_ns: u64, last_ns: u64) -> ConsumerRecording {
    let mut c = ConsumerRecording::empty();
    c.records = records;
    c.bytes = records * 100;
    c.first_read_ns = first_ns;
    c.last_read_ns = last_ns;
    c
}

#[test]
fn the_read_rate_counts_from_the_first_record_read_not_from_the_clocks_start() {
    // The clock starts at 1 s, the first record comes 100 ms later, the last 500 ms after it.
    let f = derive(
        &read(1_000_000, 1_100 * MS, 1_600 * MS),
        &side(1_000 * MS, Some(1_600 * MS)),
        None,
    );
    assert!((f.throughput_msgs - 2_000_000.0).abs() < 1.0);
    assert!((f.throughput_bytes - 200_000_000.0).abs() < 100.0);
}

#[test]
fn the_drain_time_keeps_the_wait_for_the_first_record() {
    let f = derive(
        &read(1_000_000, 1_100 * MS, 1_600 * MS),
        &side(1_000 * MS, Some(1_600 * MS)),
        None,
    );
    assert_eq!(f.drain_secs, Some(0.6));
}

#[test]
fn a_single_record_is_timed_from_the_clocks_start() {
    let f = derive(
        &read(1, 1_100 * MS, 1_100 * MS),
        &side(1_000 * MS, None),
        None,
    );
    assert!((f.throughput_msgs - 10.0).abs() < 1e-6);
}

#[test]
fn a_cold_backlogs_share_is_remote_over_held_and_shards_keep_the_later_answer() {
    let mut a = ReadSums {
        consumers: 1,
        first_read_ns: Some(90_000_000),
        cold_records: Some(800),
        cold_held: Some(1000),
        ..ReadSums::default()
    };
    let f = a.figures(None);
    assert_eq!(f.cold_share, Some(0.8));
    assert_eq!(f.first_record_secs, Some(0.09));
    // Another shard asked a little later, when more had left local disk.
    a.absorb(&ReadSums {
        consumers: 1,
        first_read_ns: Some(50_000_000),
        cold_records: Some(900),
        cold_held: Some(1000),
        ..ReadSums::default()
    });
    let f = a.figures(None);
    assert_eq!(f.cold_share, Some(0.9));
    assert_eq!(f.first_record_secs, Some(0.05));
    // Without a cold backlog neither figure exists, whatever was read.
    let warm = ReadSums {
        consumers: 1,
        first_read_ns: Some(10),
        ..ReadSums::default()
    };
    assert_eq!(warm.figures(None).cold_share, None);
    assert_eq!(warm.figures(None).first_record_secs, None);
}

#[test]
fn fetch_round_trips_merge_as_sums_over_consumers_and_shards() {
    // Two members: one saw 10 fetches of 2 ms and 2 of 40 ms, the other 4 of 5 ms; a
    // window without a fetch (count 0) adds nothing.
    let member = |windows: &[(i64, i64, i64)]| {
        let mut c = ConsumerRecording::empty();
        for &(sum, count, max) in windows {
            c.fetch_trips.window(sum, count, max);
        }
        c
    };
    let a = member(&[(20_000, 10, 2_500), (80_000, 2, 41_000), (0, 0, 0)]);
    let b = member(&[(20_000, 4, 6_000)]);
    let group = ConsumerRecording::merge(vec![a, b]);
    let mut sums = ReadSums::of(&group, &side(0, Some(MS)));
    let f = sums.figures(None);
    // The mean of the 16 fetches, not the mean of the two members' means (4.6 ms).
    assert_eq!(f.fetch_rtt_secs, Some(120_000.0 / 16.0 / 1e6));
    assert_eq!(f.fetch_rtt_max_secs, Some(0.041));
    // Another shard's 4 fetches of 30 ms: still the ratio of the sums.
    sums.absorb(&ReadSums {
        fetch_trips: Some(FetchTrips {
            sum_us: 120_000,
            count: 4,
            max_us: 31_000,
        }),
        ..ReadSums::default()
    });
    let f = sums.figures(None);
    assert_eq!(f.fetch_rtt_secs, Some(240_000.0 / 20.0 / 1e6));
    assert_eq!(f.fetch_rtt_max_secs, Some(0.041));
    // No fetch taken (no backlog): no figure, and nothing in the result file.
    let none = ReadSums::of(&ConsumerRecording::empty(), &side(0, None));
    assert_eq!(none.fetch_trips, None);
    assert_eq!(none.figures(None).fetch_rtt_secs, None);
}

#[test]
fn the_group_rebalances_are_its_epochs_not_the_most_one_member_saw() {
    // Member a joins alone (generation 1), b and c join (2), a is stopped (3) and
    // rejoins (4): no member was in all four.
    let member = |gens: &[i32]| {
        let mut c = ConsumerRecording::empty();
        c.generations = gens.to_vec();
        c
    };
    let (a, b, c) = (member(&[1, 2, 4]), member(&[2, 3, 4]), member(&[2, 3, 4]));
    assert_eq!(group_rebalances(&[&a, &b, &c]), 4);
}

#[test]
fn stalls_are_summed_within_the_measured_phase_and_the_longest_counts_whole() {
    // The clock starts at 10 s. The join's first rebalance (1 s → 9 s) ended before it:
    // not the run's. Its second (9.5 s → 10.5 s) reaches into it, and two partitions of a
    // member stopped at 13 s are read again at 14 s and 15 s.
    let mut c = read(10, 11_100 * MS, 16_000 * MS);
    c.stalls = vec![
        (1_000 * MS, 9_000 * MS),
        (9_500 * MS, 10_500 * MS),
        (13_000 * MS, 14_000 * MS),
        (13_000 * MS, 15_000 * MS),
    ];
    let f = derive(&c, &side(10_000 * MS, None), None);
    assert_eq!(f.rebalance_secs, Some(2.0));
    assert_eq!(f.stall_secs, Some(3.5));
    assert_eq!(f.rebalance.map(|r| r.count), Some(3));
    // Only the join's, all before the clock: nothing stalled in the run, not unknown.
    c.stalls.truncate(1);
    let f = derive(&c, &side(10_000 * MS, None), None);
    assert_eq!((f.rebalance_secs, f.stall_secs), (Some(0.0), Some(0.0)));
    assert!(f.rebalance.is_none());
}

#[test]
fn nothing_read_is_no_rate() {
    let f = derive(&read(0, 0, 1_000 * MS), &side(1_000 * MS, None), None);
    assert_eq!(f.throughput_msgs, 0.0);
}
