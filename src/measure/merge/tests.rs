//! Merging without a broker: exact percentiles, counts and rates, series, and what is refused.

use std::time::Duration;

use super::*;
use crate::measure::intervals::new_interval_histogram;
use crate::measure::series::{SeriesPoint, TimeSeries};
use crate::measure::{codec, record};
use crate::model::{RateSpec, Stat};

const MS: u64 = 1_000_000;

fn unlimited() -> Planned<'static> {
    static RATE: RateSpec = RateSpec::Unlimited;
    Planned {
        rate: &RATE,
        duration: None,
        messages: None,
        backlog: 0,
    }
}

fn summary(values: &[u64]) -> LatencySummary {
    let mut h = new_histogram();
    for v in values {
        record(&mut h, *v);
    }
    LatencySummary::from_histogram(&h)
}

/// A shard's result whose ack latencies are `values` (nanoseconds), one record each.
fn shard(values: &[u64]) -> RunResult {
    let n = values.len() as u64;
    RunResult {
        index: 1,
        label: "codec=zstd".into(),
        status: RunStatus::Complete,
        sent: n,
        acked: n,
        key_value_bytes: n * 100,
        elapsed_secs: 2.0,
        ack: summary(values),
        service: summary(values),
        send_delay: summary(&[]),
        ..RunResult::default()
    }
}

/// Three shards' latencies, far apart in shape: a merge that averaged percentiles would miss.
fn three_value_sets() -> [Vec<u64>; 3] {
    let a = (0..5_000u64).map(|i| 200_000 + i * 37).collect();
    let b = (0..3_000u64)
        .map(|i| 1_000_000 + i * i % 9_999_991)
        .collect();
    let c = (0..100u64).map(|i| 250 * MS + i * MS).collect();
    [a, b, c]
}

#[test]
fn merged_percentiles_equal_those_of_one_histogram_fed_every_shards_values() {
    let sets = three_value_sets();
    let shards: Vec<RunResult> = sets.iter().map(|v| shard(v)).collect();
    let refs: Vec<&RunResult> = shards.iter().collect();
    let merged = merge(&refs, &unlimited()).unwrap();
    let mut one = new_histogram();
    for v in sets.iter().flatten() {
        record(&mut one, *v);
    }
    let expected = LatencySummary::from_histogram(&one);
    let m = &merged.ack;
    assert_eq!(m.count, one.len());
    for (got, want) in [
        (m.min_ms, expected.min_ms),
        (m.mean_ms, expected.mean_ms),
        (m.p50_ms, expected.p50_ms),
        (m.p90_ms, expected.p90_ms),
        (m.p99_ms, expected.p99_ms),
        (m.p999_ms, expected.p999_ms),
        (m.max_ms, expected.max_ms),
    ] {
        assert_eq!(got, want, "exactly, not approximately");
    }
    for p in [1.0, 25.0, 50.0, 75.0, 95.0, 99.0, 99.9, 99.99] {
        let s = Stat::Percentile(p);
        assert_eq!(m.stat_secs(s), expected.stat_secs(s), "p{p}");
    }
    assert_eq!(
        m.histogram, expected.histogram,
        "the merged histogram itself is the same"
    );
}

#[test]
fn counters_add_up_and_rates_come_from_the_merged_counts_over_the_longest_span() {
    let mut a = shard(&[MS; 1_000]);
    a.achieved_rate = 999.0 / 1.0; // sent over 1 s
    a.failed = 2;
    a.failed_by_kind.insert("timed out".into(), 2);
    let mut b = shard(&[MS; 3_000]);
    b.achieved_rate = 2_999.0 / 1.5;
    b.elapsed_secs = 2.5;
    b.failed_by_kind.insert("timed out".into(), 1);
    b.failed_by_kind.insert("refused".into(), 4);
    let rate = RateSpec::Fixed(2_000.0);
    let schedule = Planned {
        rate: &rate,
        duration: Some(Duration::from_secs(2)),
        messages: None,
        backlog: 0,
    };
    let m = merge(&[&a, &b], &schedule).unwrap();
    assert_eq!((m.sent, m.acked, m.failed), (4_000, 4_000, 2));
    assert_eq!(m.key_value_bytes, 400_000);
    assert_eq!(m.failed_by_kind["timed out"], 3);
    assert_eq!(m.failed_by_kind["refused"], 4);
    assert_eq!(
        m.elapsed_secs, 2.5,
        "the barrier's instant to the last shard's end"
    );
    assert_eq!(m.throughput_msgs, 4_000.0 / 2.5);
    assert_eq!(m.throughput_bytes, 400_000.0 / 2.5);
    assert!(
        (m.achieved_rate - 3_999.0 / 1.5).abs() < 1e-6,
        "{}",
        m.achieved_rate
    );
    assert_eq!(
        m.target_rate,
        Some(2_000.0),
        "the whole schedule's, from the plan"
    );
    assert_eq!(m.schedule_slip_secs, Some(0.5));
}

#[test]
fn disk_bytes_are_the_largest_measured_not_the_sum_and_older_internals_weigh_by_batches() {
    let mut a = shard(&[MS; 100]);
    a.disk_bytes = Some(9_000);
    a.internals.batch_records_avg = Some(10.0);
    a.internals.produce_requests = 5;
    let mut b = shard(&[MS; 300]);
    b.disk_bytes = Some(20_000);
    b.internals.batch_records_avg = Some(50.0);
    b.internals.produce_requests = 7;
    let m = merge(&[&a, &b], &unlimited()).unwrap();
    assert_eq!(m.disk_bytes, Some(20_000));
    assert_eq!(m.disk_ratio, Some(40_000.0 / 20_000.0));
    // Files without sums: each shard's batches estimated as acked / records per batch (10 and
    // 6), so the average is records over batches, as one machine's is.
    assert_eq!(
        m.internals.batch_records_avg,
        Some(25.0),
        "(100 + 300) / (100/10 + 300/50)"
    );
    assert_eq!(m.internals.batch_bytes_avg, None);
    assert_eq!(m.internals.produce_requests, 12);
}

#[test]
fn delivery_is_summed_and_a_shard_without_it_leaves_nothing_called_lost() {
    let with = |consumed, lost| Delivery {
        consumed,
        lost: Some(lost),
        duplicated: 1,
        ..Delivery::default()
    };
    let (mut a, mut b, c) = (shard(&[MS]), shard(&[MS]), shard(&[MS]));
    a.delivery = Some(with(10, 1));
    b.delivery = Some(with(20, 2));
    a.e2e = Some(summary(&[5 * MS]));
    b.e2e = Some(summary(&[7 * MS]));
    let m = merge(&[&a, &b], &unlimited()).unwrap();
    let d = m.delivery.unwrap();
    assert_eq!((d.consumed, d.lost, d.duplicated), (30, Some(3), 2));
    assert_eq!(m.e2e.unwrap().count, 2);
    let partial = merge(&[&a, &b, &c], &unlimited())
        .unwrap()
        .delivery
        .unwrap();
    assert!(partial.incomplete);
    assert_eq!(partial.lost, None);
}

#[test]
fn a_shard_without_histograms_is_refused_and_named() {
    let a = shard(&[MS; 10]);
    let mut b = shard(&[MS; 10]);
    b.ack = serde_json::from_str(
        r#"{"count":10,"min_ms":1,"mean_ms":1,"p50_ms":1,"p90_ms":1,"p99_ms":1,
            "p999_ms":1,"max_ms":1}"#,
    )
    .unwrap();
    let e = merge(&[&a, &b], &unlimited()).unwrap_err();
    assert_eq!(e.shard, 1);
    assert!(
        e.to_string()
            .contains("ack latency has 10 records and no histogram"),
        "{e}"
    );
}

#[test]
fn results_of_different_runs_are_refused() {
    let a = shard(&[MS]);
    let mut b = shard(&[MS]);
    b.label = "codec=lz4".into();
    let e = merge(&[&a, &b], &unlimited()).unwrap_err();
    assert_eq!(e.shard, 1);
    assert!(e.to_string().contains("not the same planned run"), "{e}");
}

fn point(sent: u64, acked: u64, consumed: Option<u64>, ack_ns: &[u64]) -> SeriesPoint {
    let mut h = new_interval_histogram();
    for v in ack_ns {
        record(&mut h, *v);
    }
    let mut e2e = new_interval_histogram();
    for _ in 0..consumed.unwrap_or(0) {
        record(&mut e2e, 10 * MS);
    }
    SeriesPoint {
        sent,
        acked,
        consumed,
        span_secs: 1.0,
        ack_histogram: (!h.is_empty()).then(|| codec::encode(&h)),
        e2e_histogram: (!e2e.is_empty()).then(|| codec::encode(&e2e)),
        ..SeriesPoint::default()
    }
}

fn series(points: Vec<SeriesPoint>) -> Option<TimeSeries> {
    Some(TimeSeries {
        interval_secs: 1.0,
        points,
    })
}

#[test]
fn time_series_align_by_interval_with_counts_summed_and_histograms_added() {
    let mut a = shard(&[MS]);
    a.series = series(vec![
        point(2, 2, Some(1), &[MS, 2 * MS]),
        point(1, 1, Some(2), &[9 * MS]),
    ]);
    let mut b = shard(&[MS]);
    let mut last = point(1, 1, Some(0), &[30 * MS]);
    last.span_secs = 0.25;
    b.series = series(vec![
        point(3, 3, Some(3), &[3 * MS; 3]),
        point(0, 0, Some(0), &[]),
        last,
    ]);
    let m = merge(&[&a, &b], &unlimited()).unwrap();
    let s = m.series.unwrap();
    let sent: Vec<u64> = s.points.iter().map(|p| p.sent).collect();
    assert_eq!(sent, [5, 1, 1]);
    let lag: Vec<Option<u64>> = s.points.iter().map(|p| p.lag).collect();
    assert_eq!(
        lag,
        [Some(1), Some(0), Some(1)],
        "acked so far less read so far"
    );
    let spans: Vec<f64> = s.points.iter().map(|p| p.span_secs).collect();
    assert_eq!(spans, [1.0, 1.0, 0.25]);
    let first = codec::decode(s.points[0].ack_histogram.as_deref().unwrap()).unwrap();
    assert_eq!(first.len(), 5);
    let mut one = new_interval_histogram();
    for v in [MS, 2 * MS, 3 * MS, 3 * MS, 3 * MS] {
        record(&mut one, v);
    }
    assert_eq!(
        s.points[0].ack_p50_ms,
        Some(one.value_at_quantile(0.5) as f64 / 1e6)
    );
    assert_eq!(s.points[2].ack_max_ms, Some(one_max(30 * MS)));
}

fn one_max(v: u64) -> f64 {
    let mut h = new_interval_histogram();
    record(&mut h, v);
    h.max() as f64 / 1e6
}

#[test]
fn series_of_different_interval_widths_are_refused() {
    let mut a = shard(&[MS]);
    a.series = series(vec![point(1, 1, None, &[MS])]);
    let mut b = a.clone();
    b.series.as_mut().unwrap().interval_secs = 0.5;
    let e = merge(&[&a, &b], &unlimited()).unwrap_err();
    assert_eq!(e.shard, 1);
    assert!(e.to_string().contains("same --interval"), "{e}");
}

#[test]
fn a_shard_with_no_cpu_to_spare_is_named_and_limits_the_merged_run() {
    use crate::measure::GeneratorLoad;
    let load = |sender_busy: f64, process_cores: f64, reader_wait_secs: f64| GeneratorLoad {
        sender_busy,
        process_cores,
        cores: 2,
        reader_wait_secs,
        ..GeneratorLoad::default()
    };
    let mut shards: Vec<RunResult> = (0..3).map(|_| shard(&[MS; 4])).collect();
    shards[0].generator = Some(load(0.40, 0.6, 0.01));
    shards[1].generator = Some(load(0.99, 1.1, 0.02));
    shards[2].generator = Some(load(0.30, 0.5, 0.30));
    let refs: Vec<&RunResult> = shards.iter().collect();
    let g = merge(&refs, &unlimited()).unwrap().generator.unwrap();
    assert_eq!(g.shard, Some(1), "the busiest machine is named");
    assert!(
        g.saturated(),
        "its sender saturated: the merged run is generator-bound"
    );
    assert_eq!(
        g.reader_wait_secs, 0.30,
        "any shard's reader that fell behind counts"
    );
    // None saturated: the merged run is not generator-bound either.
    shards[1].generator = Some(load(0.50, 0.7, 0.02));
    let refs: Vec<&RunResult> = shards.iter().collect();
    let g = merge(&refs, &unlimited()).unwrap().generator.unwrap();
    assert!(!g.saturated());
    assert_eq!(g.shard, Some(1));
}

#[test]
fn a_shard_that_failed_before_measuring_adds_nothing_and_does_not_block_the_merge() {
    let mut a = shard(&[MS; 4]);
    a.series = series(vec![point(4, 4, None, &[MS; 4])]);
    let failed = RunResult {
        index: 1,
        label: "codec=zstd".into(),
        status: RunStatus::Failed {
            cause: crate::measure::status::Cause::said("topic not ready"),
        },
        ..RunResult::default()
    };
    let m = merge(&[&a, &failed], &unlimited()).unwrap();
    assert_eq!(m.acked, 4);
    assert!(!m.status.is_complete());
    assert_eq!(
        m.status.reason().as_deref(),
        Some("shard 1: topic not ready")
    );
    assert_eq!(m.series.unwrap().points[0].acked, 4);
}

/// A shard whose consumer read `read[i]` of the `acked[i]` records acked in interval i, with
/// `requests` fetches of `fetched` bytes in all, its sums and figures as a run writes them.
fn reading_shard(acked: &[u64], read: &[u64], requests: u64, fetched: u64) -> RunResult {
    let mut s = shard(&vec![MS; acked.iter().sum::<u64>() as usize]);
    s.series = series(
        acked
            .iter()
            .zip(read)
            .map(|(&a, &r)| point(a, a, Some(r), &vec![MS; a as usize]))
            .collect(),
    );
    let records = read.iter().sum();
    let sums = ReadSums {
        consumers: 1,
        commit: "off".into(),
        records,
        bytes: records * 100,
        fetch_requests: Some(requests),
        fetch_bytes: Some(fetched),
        first_read_ns: Some(0),
        last_read_ns: Some(read.len() as i64 * 1_000_000_000),
        ..ReadSums::default()
    };
    s.consume = Some(sums.figures(None));
    s.recording.read = Some(sums);
    s
}

#[test]
fn a_merged_lag_max_is_the_highest_summed_lag_over_time_not_a_sum_of_peaks() {
    // Shard a's lag peaks in interval 0 (10 acked, none read), shard b's in interval 1.
    let a = reading_shard(&[10, 0, 0], &[0, 10, 0], 10, 1_000);
    let b = reading_shard(&[0, 10, 0], &[0, 0, 10], 1, 1_000);
    let lag = |r: &RunResult| -> Vec<u64> {
        r.series
            .as_ref()
            .unwrap()
            .points
            .iter()
            .map(|p| p.lag.unwrap_or(0))
            .collect()
    };
    // Each shard alone, as its own run derives it.
    let alone = |r: &RunResult| {
        let mut all = Recording::empty();
        all.absorb(&recording(r, series::intervals(&[r]).unwrap().remove(0)).unwrap());
        let mut m = RunResult::default();
        all.derive(&mut m, &unlimited(), 1);
        m
    };
    assert_eq!(lag(&alone(&a)), [10, 0, 0]);
    assert_eq!(lag(&alone(&b)), [0, 10, 0]);
    let m = merge(&[&a, &b], &unlimited()).unwrap();
    assert_eq!(lag(&m), [10, 10, 0]);
    let c = m.consume.as_ref().unwrap();
    assert_eq!(
        c.lag_max,
        Some(10),
        "the peaks fall in different intervals: not 20"
    );
    // The merged fetch average is all bytes over all requests (2000 / 11), not the mean of
    // the shards' averages (100 and 1000).
    assert_eq!(c.fetch_requests, Some(11));
    assert_eq!(c.fetch_bytes_avg, Some(2_000.0 / 11.0));
    assert_eq!(c.records, 20);
    assert_eq!(c.consumers, 2);
    // Both read over the same 3 s: the rates add up.
    assert!(
        (c.throughput_msgs - 20.0 / 3.0).abs() < 1e-9,
        "{}",
        c.throughput_msgs
    );
    // The file keeps the merged sums, so the figures re-derive from it.
    assert_eq!(
        m.recording
            .read
            .as_ref()
            .unwrap()
            .figures(m.series.as_ref())
            .lag_max,
        Some(10)
    );
}

#[test]
fn a_shard_file_without_read_sums_merges_from_its_figures() {
    let a = reading_shard(&[10, 0, 0], &[0, 10, 0], 10, 1_000);
    let mut older = reading_shard(&[0, 10, 0], &[0, 0, 10], 1, 1_000);
    older.recording.read = None;
    let m = merge(&[&a, &older], &unlimited()).unwrap();
    let c = m.consume.as_ref().unwrap();
    assert_eq!(c.lag_max, Some(10));
    assert_eq!(c.fetch_bytes_avg, Some(2_000.0 / 11.0));
    assert_eq!(c.records, 20);
}

/// A shard that acknowledged and read back records of partitions (partition, interval).
fn partitioned(acked: &[(usize, usize)], read: &[(usize, usize)]) -> RunResult {
    let mut r = shard(&[MS]);
    r.series = series(vec![point(1, 1, Some(1), &[MS]), point(0, 0, Some(0), &[])]);
    let mut a = crate::measure::timeline::PartitionTimeline::new(2);
    for &(p, i) in acked {
        a.add(p, i);
    }
    let mut rp = ReadPlaces::new(2);
    for &(p, i) in read {
        rp.first_read(p);
        rp.consumed(p, (p as u64 + 1) * MS, i);
    }
    r.set_by_partition(Some(&a), Some(&rp), 1.0, true);
    r
}

#[test]
fn shards_partitions_merge_exactly_with_the_lag_from_the_merged_counts() {
    let a = partitioned(
        &[(0, 0), (0, 0), (0, 0), (0, 1)],
        &[(0, 0), (0, 0), (0, 1), (0, 1)],
    );
    let b = partitioned(&[(1, 0); 5], &[(1, 0), (1, 1), (1, 1), (1, 1), (1, 1)]);
    let m = merge(&[&a, &b], &unlimited()).unwrap();
    let c = m
        .partition_counts
        .as_ref()
        .expect("counts over time merged");
    assert_eq!(c.acked, [vec![3, 1], vec![5, 0]]);
    assert_eq!(c.read, [vec![2, 2], vec![1, 4]]);
    let r = &m.read_partitions;
    let got: Vec<(u64, u64, u64, Option<u64>)> = r
        .iter()
        .map(|p| (p.records, p.consumed, p.e2e.count, p.lag_max))
        .collect();
    // Partition 0: acked 3, 4 against read 2, 4 by the columns' ends; partition 1: 5, 5
    // against 1, 5.
    assert_eq!(got, [(4, 4, 4, Some(1)), (5, 5, 5, Some(4))]);
    // 2 significant digits: within 1 % of the 2 ms recorded.
    assert!(
        (r[1].e2e.max_ms / 2.0 - 1.0).abs() < 0.01,
        "{}",
        r[1].e2e.max_ms
    );
    // A shard that acknowledged without counts per partition (and read nothing) leaves the
    // merge without counts over time, so without a lag per partition.
    let mut bare = shard(&[MS]);
    bare.series = a.series.clone();
    let m = merge(&[&a, &bare], &unlimited()).unwrap();
    assert!(m.partition_counts.is_none());
    assert_eq!(m.read_partitions[0].consumed, 4);
    assert!(m.read_partitions.iter().all(|p| p.lag_max.is_none()));
}

/// Shard `of` of 2 on partitions p ≡ `of` (mod 2) of 4, `per` records each; with `broker`,
/// acknowledged by it (librdkafka), else by no known broker (the Java client).
fn placed_shard(of: i32, per: u64, broker: Option<i32>) -> RunResult {
    use crate::measure::placed::{PlaceRecorder, NO_BROKER};
    let mut rec = PlaceRecorder::of_run(1, 4);
    let slot = broker.map_or(NO_BROKER, |b| rec.broker(b));
    for p in (of..4).step_by(2) {
        for i in 0..per {
            rec.acked(p, slot, MS + i * 1_000, 100, 0);
        }
    }
    let mut r = shard(&vec![MS; 2 * per as usize]);
    (r.brokers, r.partitions) = rec.finish().figures();
    r
}

#[test]
fn partitions_merge_exactly_across_shards_and_brokers_only_when_every_shard_kept_them() {
    let (a, b) = (placed_shard(0, 30, None), placed_shard(1, 70, None));
    let m = merge(&[&a, &b], &unlimited()).unwrap();
    let recs: Vec<u64> = m.partitions.iter().map(|p| p.records).collect();
    assert_eq!(
        recs,
        [30, 70, 30, 70],
        "each partition from the shard that owns it"
    );
    assert_eq!(recs.iter().sum::<u64>(), m.acked);
    assert_eq!(m.partitions[1].ack.count, 70);
    assert!(m.brokers.is_empty(), "no shard said which broker answered");
    // One shard on librdkafka, one on the Java client: the brokers would be short, the
    // partitions are whole.
    let c = placed_shard(1, 70, Some(1));
    let m = merge(&[&c, &a], &unlimited()).unwrap();
    assert!(m.brokers.is_empty());
    assert_eq!(m.partitions.iter().map(|p| p.records).sum::<u64>(), 200);
    let d = placed_shard(0, 30, Some(1));
    let m = merge(&[&c, &d], &unlimited()).unwrap();
    assert_eq!((m.brokers.len(), m.brokers[0].records), (1, 200));
}
