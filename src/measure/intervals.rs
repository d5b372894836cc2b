//! Per-thread interval buckets: what one thread recorded in each fixed interval of the
//! measured phase, kept apart per thread so the series merges exactly at the end.
//!
//! The hot path stays lock-free and allocation-free per record: counting is an add into the
//! current interval's slot (one range compare while time stays in it), a latency is an add into
//! a flat array of the interval histogram's buckets (`FlatHistogram`: HdrHistogram's own
//! `record` costs the producer thread ~55 instructions per record). Allocation happens only
//! when a new interval starts: its slot of counters, and the closed interval's histogram built
//! and serialized (HdrHistogram V2, not deflated: cheap, and a histogram of one interval is
//! sparse, a few hundred bytes), so a thread holds one live interval histogram however long the
//! run is.
//!
//! Interval histograms keep 2 significant digits (values within 1 %), not the run's 3: about
//! 2 × 37 KB live per thread (the flat counts and the histogram they are closed into) instead
//! of about 0.3 MB each. The run's own histograms stay at 3 digits.

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;

use super::due::DueRecorder;
use super::flat_histogram::FlatHistogram;
use super::MAX_NS;

/// Significant digits of every interval histogram (1 % resolution).
pub(crate) const INTERVAL_DIGITS: u8 = 2;

/// A histogram for one interval: nanoseconds, 1 ns to one hour, 2 significant digits.
pub(crate) fn new_interval_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, INTERVAL_DIGITS)
        .expect("static histogram bounds are valid")
}

/// One thread's counts in one interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntervalCounts {
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    /// Key and value bytes of the records acked in the interval.
    pub bytes: u64,
    pub consumed: u64,
    /// Backlog records read (written before the clock started: no latency, but lag).
    pub backlog_read: u64,
    /// Acknowledged records that no consumer of the run will read, known in this interval:
    /// those of a transaction aborted in it, when the consumers read committed records only.
    pub unreadable: u64,
    /// Records of aborted transactions read (read_uncommitted): acknowledged, and read.
    pub aborted_read: u64,
}

/// Adds `from`'s counts into `into`, interval by interval, growing it: the one sum of interval
/// counts, for a group's consumers and for threads' and shards' merged buckets alike.
pub(crate) fn add_counts(into: &mut Vec<IntervalCounts>, from: &[IntervalCounts]) {
    if from.len() > into.len() {
        into.resize(from.len(), IntervalCounts::default());
    }
    for (c, x) in into.iter_mut().zip(from) {
        c.sent += x.sent;
        c.acked += x.acked;
        c.failed += x.failed;
        c.bytes += x.bytes;
        c.consumed += x.consumed;
        c.backlog_read += x.backlog_read;
        c.unreadable += x.unreadable;
        c.aborted_read += x.aborted_read;
    }
}

/// Records one thread's measured phase interval by interval. A producer records ack latency
/// into its histograms, the consumer end-to-end latency.
pub struct IntervalRecorder {
    origin_ns: u64,
    width_ns: u64,
    /// The interval the last record fell in, where it starts and how long it is: the fast
    /// path (one subtraction and one compare).
    cur: usize,
    cur_start: u64,
    cur_len: u64,
    counts: Vec<IntervalCounts>,
    /// The interval whose latencies `hist` holds.
    open: usize,
    hist: FlatHistogram,
    /// Where a closed interval's latencies become an HdrHistogram to serialize.
    closing: Histogram<u64>,
    closed: Vec<(usize, Vec<u8>)>,
    serializer: V2Serializer,
    last_ns: u64,
    /// Latencies by due interval too, for a run whose windows ask for them (`by_due`).
    due: Option<Box<DueRecorder>>,
}

impl IntervalRecorder {
    /// Intervals `width_ns` wide; `start` sets where the first begins. Allocates the one live
    /// histogram, so call it before the hot path.
    pub fn new(width_ns: u64) -> IntervalRecorder {
        IntervalRecorder {
            origin_ns: 0,
            width_ns: width_ns.max(1),
            cur: 0,
            cur_start: 0,
            cur_len: 0,
            counts: Vec::new(),
            open: 0,
            hist: FlatHistogram::new(INTERVAL_DIGITS),
            closing: new_interval_histogram(),
            closed: Vec::new(),
            serializer: V2Serializer::new(),
            last_ns: 0,
            due: None,
        }
    }

    /// Keeps latencies by when each record was due as well (`measure::due`): a run with fault
    /// windows or a marked phase. Allocates; call it before the hot path.
    pub fn by_due(mut self, on: bool) -> IntervalRecorder {
        self.due = on.then(|| Box::new(DueRecorder::new()));
        self
    }

    /// The measured phase starts at `origin_ns` (the run's clock): interval 0 begins there.
    pub fn start(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
        if let Some(d) = &mut self.due {
            d.start(origin_ns);
        }
        // Empty range: the first record resolves its interval.
        self.cur_start = 0;
        self.cur_len = 0;
    }

    // Always: a call (about 10 instructions) cost as much as the slot itself in the consumer.
    #[inline(always)]
    fn slot(&mut self, now_ns: u64) -> &mut IntervalCounts {
        // Before the start wraps around to a large offset: outside too.
        if now_ns.wrapping_sub(self.cur_start) >= self.cur_len {
            self.move_to(now_ns);
        }
        self.last_ns = self.last_ns.max(now_ns);
        &mut self.counts[self.cur]
    }

    /// A record in another interval than the last one: find it, growing the slots.
    #[cold]
    fn move_to(&mut self, now_ns: u64) {
        let i = (now_ns.saturating_sub(self.origin_ns) / self.width_ns) as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, IntervalCounts::default());
        }
        self.cur = i;
        // Anything before the origin counts in interval 0.
        self.cur_start = if i == 0 {
            0
        } else {
            self.origin_ns + i as u64 * self.width_ns
        };
        self.cur_len = self.origin_ns + (i as u64 + 1) * self.width_ns - self.cur_start;
    }

    /// Makes the current interval the one the histogram collects: the previous one is closed
    /// (serialized). Intervals only move forward on one thread's clock; were one to come back,
    /// its latencies would be closed twice under the same index, which the merge adds anyway.
    #[inline]
    fn latency(&mut self, ns: u64) {
        if self.cur != self.open {
            self.close_open();
            self.open = self.cur;
        }
        self.hist.record(ns);
    }

    #[cold]
    fn close_open(&mut self) {
        if self.hist.is_empty() {
            return;
        }
        self.closing.reset();
        self.hist.drain_into(&mut self.closing);
        let mut bytes = Vec::new();
        // Into memory, with fixed bounds: cannot fail.
        let _ = self.serializer.serialize(&self.closing, &mut bytes);
        self.closed.push((self.open, bytes));
    }

    /// The interval the last record counted in (from the measured start): where the counts
    /// per partition over time put the same record.
    #[inline]
    pub fn current(&self) -> usize {
        self.cur
    }

    /// A measured record sent at `now_ns`.
    #[inline]
    pub fn sent(&mut self, now_ns: u64) {
        self.slot(now_ns).sent += 1;
    }

    /// A measured record acknowledged at `now_ns`, `latency_ns` after its intended time.
    #[inline]
    pub fn acked(&mut self, now_ns: u64, latency_ns: u64, key_value_bytes: u64) {
        let s = self.slot(now_ns);
        s.acked += 1;
        s.bytes += key_value_bytes;
        self.latency(latency_ns);
        if let Some(d) = &mut self.due {
            d.record(now_ns, latency_ns);
        }
    }

    /// `n` measured records reported failed at `now_ns`.
    #[inline]
    pub fn failed(&mut self, now_ns: u64, n: u64) {
        self.slot(now_ns).failed += n;
    }

    /// A measured record read back at `now_ns`, `latency_ns` after its intended time.
    #[inline]
    pub fn consumed(&mut self, now_ns: u64, latency_ns: u64) {
        self.slot(now_ns).consumed += 1;
        self.latency(latency_ns);
        if let Some(d) = &mut self.due {
            d.record(now_ns, latency_ns);
        }
    }

    /// A backlog record read at `now_ns`.
    #[inline]
    pub fn backlog_read(&mut self, now_ns: u64) {
        self.slot(now_ns).backlog_read += 1;
    }

    /// `n` acknowledged records became unreadable at `now_ns` (their transaction aborted).
    pub fn unreadable(&mut self, now_ns: u64, n: u64) {
        self.slot(now_ns).unreadable += n;
    }

    /// A record of an aborted transaction read at `now_ns` (read_uncommitted).
    pub fn aborted_read(&mut self, now_ns: u64) {
        self.slot(now_ns).aborted_read += 1;
    }

    /// Closes the last interval and hands the recording over, leaving this one empty.
    pub fn finish(&mut self) -> IntervalRecording {
        self.close_open();
        IntervalRecording {
            origin_ns: self.origin_ns,
            width_ns: self.width_ns,
            counts: std::mem::take(&mut self.counts),
            histograms: std::mem::take(&mut self.closed),
            last_ns: self.last_ns,
            due: self.due.as_mut().map(|d| d.finish()),
        }
    }
}

/// What one thread recorded per interval, ready to merge with the other threads'.
#[derive(Clone, Debug, Default)]
pub struct IntervalRecording {
    /// Where interval 0 begins, on the run's clock.
    pub origin_ns: u64,
    pub width_ns: u64,
    /// Counts, by interval index.
    pub counts: Vec<IntervalCounts>,
    /// Latency histograms (V2, not deflated) by interval index; intervals without a latency
    /// recorded have none.
    pub histograms: Vec<(usize, Vec<u8>)>,
    /// The last time anything was recorded (0 when nothing was).
    pub last_ns: u64,
    /// Latency histograms by due interval (`measure::due`), chunks that add up; None when the
    /// run did not ask for them.
    pub due: Option<Vec<(usize, Vec<u8>)>>,
}

impl IntervalRecording {
    /// Another thread's recording of the same intervals added into this one (a group's
    /// consumers as one reader): counts summed, histograms kept to be added at the merge.
    pub fn absorb(&mut self, other: IntervalRecording) {
        if self.width_ns == 0 {
            *self = other;
            return;
        }
        add_counts(&mut self.counts, &other.counts);
        self.histograms.extend(other.histograms);
        self.last_ns = self.last_ns.max(other.last_ns);
        if let Some(theirs) = other.due {
            self.due.get_or_insert_with(Vec::new).extend(theirs);
        }
    }

    /// Adds this thread's histogram of every interval into `into[index]`, growing it. Exact:
    /// histograms of one configuration add bucket by bucket.
    pub fn add_histograms_into(&self, into: &mut Vec<Option<Histogram<u64>>>) {
        let mut de = Deserializer::new();
        for (i, bytes) in &self.histograms {
            let Ok(h) = de.deserialize::<u64, _>(&mut bytes.as_slice()) else {
                continue; // written by `close_open` just before: cannot happen
            };
            if *i >= into.len() {
                into.resize_with(i + 1, || None);
            }
            let _ = into[*i].get_or_insert_with(new_interval_histogram).add(&h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::record;

    const MS: u64 = 1_000_000;

    #[test]
    fn records_count_in_the_interval_they_arrive_in() {
        let mut r = IntervalRecorder::new(100 * MS);
        r.start(1_000 * MS);
        r.sent(1_000 * MS);
        r.sent(1_099 * MS);
        r.acked(1_100 * MS, 5 * MS, 10);
        r.failed(1_350 * MS, 2);
        let rec = r.finish();
        let sent: Vec<u64> = rec.counts.iter().map(|c| c.sent).collect();
        assert_eq!(sent, [2, 0, 0, 0]);
        assert_eq!(rec.counts[1].acked, 1);
        assert_eq!(rec.counts[1].bytes, 10);
        assert_eq!(rec.counts[3].failed, 2);
        assert_eq!(rec.last_ns, 1_350 * MS);
    }

    #[test]
    fn each_interval_keeps_its_own_latencies() {
        let mut r = IntervalRecorder::new(100 * MS);
        r.start(0);
        for i in 0..100 {
            r.acked(10 * MS, MS + i, 1);
        }
        r.acked(250 * MS, 40 * MS, 1);
        let rec = r.finish();
        let mut hs = Vec::new();
        rec.add_histograms_into(&mut hs);
        assert_eq!(hs.len(), 3);
        assert_eq!(hs[0].as_ref().map(Histogram::len), Some(100));
        assert!(hs[1].is_none(), "nothing was acked in interval 1");
        let last = hs[2].as_ref().expect("interval 2 has one ack");
        assert!((last.max() as f64 - 40e6).abs() / 40e6 < 0.01);
    }

    #[test]
    fn threads_merge_exactly_into_one_histogram_per_interval() {
        let (mut a, mut b) = (IntervalRecorder::new(MS), IntervalRecorder::new(MS));
        let mut both = new_interval_histogram();
        for i in 0..1_000u64 {
            let (r, v) = if i % 2 == 0 {
                (&mut a, 1_000 + i * 37)
            } else {
                (&mut b, 2_000 + i * 91)
            };
            r.acked(0, v, 1);
            record(&mut both, v);
        }
        let mut hs = Vec::new();
        a.finish().add_histograms_into(&mut hs);
        b.finish().add_histograms_into(&mut hs);
        let merged = hs[0].as_ref().expect("interval 0");
        for q in [0.5, 0.99, 1.0] {
            assert_eq!(merged.value_at_quantile(q), both.value_at_quantile(q));
        }
    }

    #[test]
    fn a_record_before_the_origin_counts_in_the_first_interval() {
        let mut r = IntervalRecorder::new(MS);
        r.start(10 * MS);
        r.sent(9 * MS);
        assert_eq!(r.finish().counts[0].sent, 1);
    }
}
