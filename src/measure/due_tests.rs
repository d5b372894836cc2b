//! The due-time recorder against histograms recorded directly by due interval: a pause's late
//! acks, interleaved partitions, more intervals than may be open, and the file's round trip.

use super::*;
use crate::measure::record;

const MS: u64 = 1_000_000;
const W: u64 = DUE_WIDTH_NS;

/// What a direct recording by due interval holds: (due interval, latency) → histograms.
fn direct(records: &[(u64, u64)], origin: u64) -> Vec<Option<Histogram<u64>>> {
    let mut out: Vec<Option<Histogram<u64>>> = Vec::new();
    for &(now, latency) in records {
        let i = ((now - latency).saturating_sub(origin) / W) as usize;
        if i >= out.len() {
            out.resize_with(i + 1, || None);
        }
        record(out[i].get_or_insert_with(new_interval_histogram), latency);
    }
    out
}

/// The recorder's chunks, merged.
fn recorded(records: &[(u64, u64)], origin: u64) -> (Vec<Option<Histogram<u64>>>, usize) {
    let mut r = DueRecorder::new();
    r.start(origin);
    let mut most_open = 0;
    for &(now, latency) in records {
        r.record(now, latency);
        most_open = most_open.max(r.open.len());
    }
    (DueLatency::of_thread(&r.finish(), false).ack, most_open)
}

fn same(a: &[Option<Histogram<u64>>], b: &[Option<Histogram<u64>>]) {
    let len = a.len().max(b.len());
    for i in 0..len {
        let (x, y) = (a.get(i).cloned().flatten(), b.get(i).cloned().flatten());
        match (x, y) {
            (None, None) => {}
            (Some(x), Some(y)) => assert!(x == y, "interval {i}: {} vs {}", x.len(), y.len()),
            (x, y) => panic!(
                "interval {i}: {:?} vs {:?}",
                x.map(|h| h.len()),
                y.map(|h| h.len())
            ),
        }
    }
}

#[test]
fn a_pauses_late_acks_count_where_their_records_were_due() {
    // 1 000/s for 10 s, each acked 3 ms after it was due, but those due from 2 s to 7 s: all
    // acked at 7.2 s, in the order of three partitions read in turn.
    let origin = 1_000 * MS;
    let mut records = Vec::new();
    let mut held = Vec::new();
    for k in 0..10_000u64 {
        let due = origin + k * MS;
        if (2_000..7_000).contains(&k) {
            held.push(due);
        } else {
            records.push((due + 3 * MS, 3 * MS));
        }
        if k == 7_200 {
            let now = origin + 7_200 * MS;
            for p in 0..3 {
                for due in held.iter().skip(p).step_by(3) {
                    records.push((now, now - due));
                }
            }
        }
    }
    records.sort_by_key(|r| r.0);
    let (got, most_open) = recorded(&records, origin);
    same(&got, &direct(&records, origin));
    // Interval 30 (3.0–3.1 s) holds its own 100 records, each waiting 4.1–4.2 s.
    let h = got[30].as_ref().expect("interval 30");
    assert_eq!(h.len(), 100);
    assert!(h.min() >= 4_100 * MS - 50 * MS && h.max() <= 4_200 * MS + 50 * MS);
    assert!(most_open <= MAX_OPEN, "{most_open}");
}

#[test]
fn more_intervals_than_may_be_open_still_add_up_exactly() {
    // 200 due intervals acked round robin, one record of each in turn, ten times: every
    // interval is closed and opened again many times.
    let mut records = Vec::new();
    let now0 = 300 * W;
    for round in 0..10u64 {
        for i in 0..200u64 {
            let now = now0 + (round * 200 + i) * 1_000;
            records.push((now, now - i * W - round));
        }
    }
    let (got, most_open) = recorded(&records, 0);
    assert!(most_open <= MAX_OPEN);
    same(&got, &direct(&records, 0));
    assert_eq!(got.iter().flatten().map(Histogram::len).sum::<u64>(), 2_000);
}

#[test]
fn without_a_fault_only_a_few_intervals_stay_open() {
    let mut r = DueRecorder::new();
    r.start(0);
    let mut most_open = 0;
    for k in 0..100_000u64 {
        // 10 000/s, acked 2–9 ms late, out of order within a few ms.
        let due = k * 100_000;
        r.record(due + (2 + k % 8) * MS, (2 + k % 8) * MS);
        most_open = most_open.max(r.open.len());
    }
    assert!(most_open <= 4, "{most_open} open at once");
    let chunks = r.finish();
    let total: u64 = DueLatency::of_thread(&chunks, false)
        .ack
        .iter()
        .flatten()
        .map(Histogram::len)
        .sum();
    assert_eq!(total, 100_000);
    // About one chunk per interval, not one per visit.
    assert!(
        chunks.len() < 120,
        "{} chunks for 100 intervals",
        chunks.len()
    );
}

#[test]
fn threads_and_the_file_merge_exactly() {
    let records_a: Vec<(u64, u64)> = (0..3_000u64).map(|k| (k * MS + 7 * MS, 7 * MS)).collect();
    let records_b: Vec<(u64, u64)> = (0..3_000u64)
        .map(|k| (k * MS + 900 * MS, 900 * MS))
        .collect();
    let (mut a, mut b) = (DueRecorder::new(), DueRecorder::new());
    a.start(0);
    b.start(0);
    records_a.iter().for_each(|&(n, l)| a.record(n, l));
    records_b.iter().for_each(|&(n, l)| b.record(n, l));
    let mut all = DueLatency::of_thread(&a.finish(), false);
    all.absorb(&DueLatency::of_thread(&b.finish(), true));
    let both: Vec<(u64, u64)> = records_a.iter().chain(&records_b).copied().collect();
    same(&all.ack, &direct(&records_a, 0));
    same(&all.e2e, &direct(&records_b, 0));
    let file = all.file();
    let back = file.read_back().unwrap();
    same(&back.ack, &all.ack);
    same(&back.e2e, &all.e2e);
    // Intervals 10 to 20 (1.0–2.0 s): 1 000 records of each side.
    let ack = file.sum(false, &[(10, 20)]).unwrap();
    assert_eq!(ack.len(), 1_000);
    assert_eq!(file.sum(true, &[(10, 15), (15, 20)]).unwrap().len(), 1_000);
    assert!(file.sum(false, &[(40, 50)]).is_none());
    assert_eq!(both.len(), 6_000);
}
