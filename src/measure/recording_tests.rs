//! Recordings merged from threads or shards give the same figures: the same records, split
//! differently, derive the same run; and the producer internals are ratios of sums.

use std::time::Duration;

use super::*;
use crate::measure::intervals::IntervalRecorder;
use crate::measure::merge::merge;
use crate::measure::RunStatus;
use crate::measure::{record, ProducerRecording, Recordings};
use crate::model::RateSpec;

const MS: u64 = 1_000_000;
/// The measured phase's start on the run's clock (not 0, so relative spans are exercised).
const ORIGIN: u64 = 7 * MS;

/// One record: when it was due, sent and acknowledged (None: reported failed).
struct Rec {
    /// librdkafka's queue was full when it was first produced.
    queue_full: bool,
    due_ns: u64,
    sent_ns: u64,
    acked_ns: Option<u64>,
    bytes: u64,
}

/// One batch as librdkafka's statistics counted it.
struct Batch {
    bytes: u64,
    records: u64,
    uncompressed: u64,
    /// It went out in a Produce request of its own (else with the batch before).
    own_request: bool,
}

/// 3 000 records at 1 000/s with latencies of several shapes, every 97th failed, and 400
/// batches of uneven sizes.
fn records() -> (Vec<Rec>, Vec<Batch>) {
    let recs = (0..3_000u64)
        .map(|i| {
            let due_ns = ORIGIN + i * MS;
            let sent_ns = due_ns + (i * 7_919) % 900_000;
            let service = MS + (i * i * 31) % (40 * MS) + if i % 500 == 0 { 300 * MS } else { 0 };
            Rec {
                queue_full: i % 101 == 5,
                due_ns,
                sent_ns,
                acked_ns: (i % 97 != 0).then_some(sent_ns + service),
                bytes: 100 + i % 50,
            }
        })
        .collect();
    let batches = (0..400u64)
        .map(|j| Batch {
            bytes: 500 + (j * j * 13) % 20_000,
            records: 1 + (j * 17) % 40,
            uncompressed: 900 + (j * 101) % 30_000,
            own_request: j % 3 != 0,
        })
        .collect();
    (recs, batches)
}

/// One producer thread's recording of `recs` and `batches`.
fn thread(recs: &[&Rec], batches: &[&Batch]) -> ProducerRecording {
    let mut iv = IntervalRecorder::new(250 * MS);
    iv.start(ORIGIN);
    let mut raw = Recording::empty();
    raw.span.start_ns = Some(ORIGIN);
    for r in recs {
        raw.sent += 1;
        raw.queue_full += u64::from(r.queue_full);
        iv.sent(r.sent_ns);
        raw.span.first_send_ns = Some(
            raw.span
                .first_send_ns
                .map_or(r.sent_ns, |f| f.min(r.sent_ns)),
        );
        raw.span.last_send_ns = raw.span.last_send_ns.max(r.sent_ns);
        record(&mut raw.send_delay, r.sent_ns - r.due_ns);
        match r.acked_ns {
            Some(at) => {
                raw.acked += 1;
                raw.key_value_bytes += r.bytes;
                record(&mut raw.ack, at - r.due_ns);
                record(&mut raw.service, at - r.sent_ns);
                iv.acked(at, at - r.due_ns, r.bytes);
                raw.span.last_ack_ns = raw.span.last_ack_ns.max(at);
            }
            None => {
                raw.failed += 1;
                *raw.failed_by_kind.entry("timed out".into()).or_default() += 1;
                iv.failed(r.sent_ns + 30 * MS, 1);
            }
        }
    }
    for b in batches {
        let s = &mut raw.stats;
        s.batch_bytes += b.bytes;
        s.batch_bytes_batches += 1;
        s.batch_records += b.records;
        s.batch_records_batches += 1;
        s.records += b.records;
        s.record_bytes += b.uncompressed;
        s.produce_requests += u64::from(b.own_request);
    }
    let mut p = ProducerRecording::empty();
    raw.intervals = Intervals::of_thread(&iv.finish(), false);
    p.raw = raw;
    p
}

/// `n` threads, thread k taking the records and batches whose index ≡ k (mod n), of those
/// `keep` selects.
fn threads(n: usize, keep: impl Fn(usize) -> bool) -> Vec<ProducerRecording> {
    let (recs, batches) = records();
    (0..n)
        .map(|k| {
            let mine = |i: usize| keep(i) && (i / 3) % n == k;
            let r: Vec<&Rec> = (recs.iter().enumerate())
                .filter(|(i, _)| mine(*i))
                .map(|(_, r)| r)
                .collect();
            let b: Vec<&Batch> = (batches.iter().enumerate())
                .filter(|(i, _)| mine(*i))
                .map(|(_, b)| b)
                .collect();
            thread(&r, &b)
        })
        .collect()
}

const RATE: RateSpec = RateSpec::Fixed(1_000.0);

fn run(producers: &[ProducerRecording], shares: u32) -> RunResult {
    let mut r = RunResult {
        label: "run".into(),
        status: RunStatus::Complete,
        ..RunResult::default()
    };
    r.derive_figures(&Recordings {
        producers,
        consumer: None,
        rate: &RATE,
        disk_bytes: None,
        duration: Some(Duration::from_secs(3)),
        messages: None,
        cut_short: false,
        backlog: 0,
        read_side: None,
        shares,
    });
    r
}

/// Every figure of `got` equals `want`'s, field by field (named when one differs).
fn same_figures(got: &RunResult, want: &RunResult, what: &str) {
    let (got, want) = (
        serde_json::to_value(got).unwrap(),
        serde_json::to_value(want).unwrap(),
    );
    let want = want.as_object().unwrap();
    for (key, value) in want {
        assert_eq!(&got[key], value, "{what}: `{key}`");
    }
    assert_eq!(got.as_object().unwrap().len(), want.len());
}

#[test]
fn the_same_records_give_the_same_figures_from_one_thread_four_threads_or_three_shards() {
    // Thread k of 4 gets every 4th triple of records (and batches): shares of unequal shape.
    let one = run(&threads(1, |_| true), 1);
    let four = run(&threads(4, |_| true), 1);
    // Three shards of two threads each, shard k taking the records ≡ k (mod 3), each written
    // to a result file and read back, as `kafkabench merge` reads them.
    let shards: Vec<RunResult> = (0..3)
        .map(|k| {
            let r = run(&threads(2, |i| i % 3 == k), 3);
            assert_eq!(r.target_rate, Some(1_000.0 / 3.0), "a shard's share");
            serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap()
        })
        .collect();
    let refs: Vec<&RunResult> = shards.iter().collect();
    let schedule = Planned {
        rate: &RATE,
        duration: Some(Duration::from_secs(3)),
        messages: None,
        backlog: 0,
    };
    let merged = merge(&refs, &schedule).unwrap();

    assert_eq!(one.sent, 3_000);
    assert_eq!(one.failed, 31);
    assert!(one.internals.batch_bytes_avg.is_some() && one.internals.wire_ratio.is_some());
    assert!(one.achieved_rate > 0.0 && one.series.as_ref().unwrap().points.len() > 10);
    assert!(one.queue_full > 0);
    // Every figure, the histograms, the series and the sums, as the result file has them.
    same_figures(&four, &one, "4 threads");
    same_figures(&merged, &one, "3 shards");
}

#[test]
fn internals_are_ratios_of_sums_not_averages_of_the_producers_averages() {
    // Producer a sent 1 000 small batches, b 10 large ones.
    let batch = |bytes, records| Batch {
        bytes,
        records,
        uncompressed: 2 * bytes,
        own_request: true,
    };
    let small: Vec<Batch> = (0..1_000).map(|_| batch(1_000, 2)).collect();
    let large: Vec<Batch> = (0..10).map(|_| batch(100_000, 200)).collect();
    let a = thread(&[], &small.iter().collect::<Vec<_>>());
    let b = thread(&[], &large.iter().collect::<Vec<_>>());
    let i = run(&[a, b], 1).internals;
    // 2 MB over 1 010 batches; the average of the two averages said 50 500 bytes, 25 times
    // the batch that was actually sent on average.
    let old = (1_000.0 + 100_000.0) / 2.0;
    assert_eq!(i.batch_bytes_avg, Some(2_000_000.0 / 1_010.0));
    assert!(old / i.batch_bytes_avg.unwrap() > 25.0);
    assert_eq!(
        i.batch_records_avg,
        Some(4_000.0 / 1_010.0),
        "not (2 + 200) / 2"
    );
    assert_eq!(i.records_per_request, Some(4_000.0 / 1_010.0));
    assert_eq!(i.wire_ratio, Some(2.0));
    assert_eq!(i.produce_requests, 1_010);
}
