//! Latency keyed by when each record was due (its intended send time), not by when its ack or
//! read came: what a fault window or a marked phase asks about. A record due during a 20 s
//! pause is acknowledged after it; keyed by its ack it would count in no window at all.
//!
//! The interval recorder keeps one latency histogram open, the interval acks arrive in, since
//! arrival time only moves forward. Due time does not: after a pause, the acks of every
//! interval of the pause arrive together, interleaved by partition. So this recorder keeps a
//! few histograms open at once, one per due interval that is still being acknowledged, each a
//! `FlatHistogram` (an add per record, as the run's own). A histogram is closed (serialized,
//! its counts kept for the next interval) once no record has come for it for [`IDLE_NS`] on
//! the recorder's clock, or when [`MAX_OPEN`] are open and another is needed (the one left
//! longest ago goes). A record whose interval was closed opens it again: its chunks are added
//! at the merge, so the result is exact however often that happens; the bounds only cap
//! memory (at most `MAX_OPEN` × 37 KB per thread) and the bytes written. How many are open is
//! bounded anyway by how late a record can come (`message.timeout.ms`, 30 s by default) over
//! [`DUE_WIDTH_NS`]; in a run without a fault, two.
//!
//! The intervals are [`DUE_WIDTH_NS`] wide whatever the series' interval is: a window's edges
//! are placed to that (a 20 s pause's window takes the records due up to 100 ms after it).

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::codec;
use super::flat_histogram::FlatHistogram;
use super::intervals::{new_interval_histogram, INTERVAL_DIGITS};

/// Width of a due interval: the resolution of every window over due time.
pub(crate) const DUE_WIDTH_NS: u64 = 100_000_000;

/// A due interval's histogram is closed when no record has come for it for this long.
const IDLE_NS: u64 = 2 * DUE_WIDTH_NS;

/// At most this many due intervals open at once per thread.
const MAX_OPEN: usize = 64;

/// One due interval being recorded.
struct Open {
    index: usize,
    hist: FlatHistogram,
    /// When the recorder last moved away from it (its clock): how long it has been idle.
    left_ns: u64,
}

/// One thread's latencies by due interval.
pub(crate) struct DueRecorder {
    origin_ns: u64,
    /// `open[cur]` takes records due in `[cur_start, cur_start + cur_len)`: the fast path.
    cur: usize,
    cur_start: u64,
    cur_len: u64,
    open: Vec<Open>,
    /// Closed histograms' arrays, emptied, for the next interval to open.
    spare: Vec<FlatHistogram>,
    closing: Histogram<u64>,
    serializer: V2Serializer,
    closed: Vec<(usize, Vec<u8>)>,
}

impl DueRecorder {
    /// Allocates one histogram; call it before the hot path.
    pub(crate) fn new() -> DueRecorder {
        DueRecorder {
            origin_ns: 0,
            cur: 0,
            cur_start: 0,
            cur_len: 0,
            open: Vec::new(),
            spare: vec![FlatHistogram::new(INTERVAL_DIGITS)],
            closing: new_interval_histogram(),
            serializer: V2Serializer::new(),
            closed: Vec::new(),
        }
    }

    /// Due interval 0 begins at `origin_ns` (the measured phase's start).
    pub(crate) fn start(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
        self.cur_len = 0;
    }

    /// A record handled at `now_ns`, `latency_ns` after it was due.
    #[inline(always)]
    pub(crate) fn record(&mut self, now_ns: u64, latency_ns: u64) {
        let due = now_ns.saturating_sub(latency_ns);
        if due.wrapping_sub(self.cur_start) >= self.cur_len {
            self.move_to(now_ns, due);
        }
        self.open[self.cur].hist.record(latency_ns);
    }

    /// A record of another due interval than the last one's: find its histogram, or open one.
    #[cold]
    fn move_to(&mut self, now_ns: u64, due: u64) {
        let index = (due.saturating_sub(self.origin_ns) / DUE_WIDTH_NS) as usize;
        // `cur` is a slot only while the fast path has a range (a close resets both).
        if self.cur_len > 0 {
            if let Some(o) = self.open.get_mut(self.cur) {
                o.left_ns = now_ns;
            }
        }
        // Close what has been idle, but never the one this record needs.
        let mut k = 0;
        while k < self.open.len() {
            let o = &self.open[k];
            if o.index != index && now_ns.saturating_sub(o.left_ns) > IDLE_NS {
                self.close(k);
            } else {
                k += 1;
            }
        }
        self.cur = match self.open.iter().position(|o| o.index == index) {
            Some(k) => k,
            None => {
                if self.open.len() >= MAX_OPEN {
                    let oldest = (0..self.open.len())
                        .min_by_key(|&k| self.open[k].left_ns)
                        .unwrap_or(0);
                    self.close(oldest);
                }
                let hist = self
                    .spare
                    .pop()
                    .unwrap_or_else(|| FlatHistogram::new(INTERVAL_DIGITS));
                self.open.push(Open {
                    index,
                    hist,
                    left_ns: now_ns,
                });
                self.open.len() - 1
            }
        };
        // Interval 0 also takes anything due before the origin.
        self.cur_start = if index == 0 {
            0
        } else {
            self.origin_ns + index as u64 * DUE_WIDTH_NS
        };
        self.cur_len = self.origin_ns + (index as u64 + 1) * DUE_WIDTH_NS - self.cur_start;
    }

    /// Serializes `open[k]` and gives its array back to the spares.
    fn close(&mut self, k: usize) {
        let mut o = self.open.swap_remove(k);
        if !o.hist.is_empty() {
            self.closing.reset();
            o.hist.drain_into(&mut self.closing);
            let mut bytes = Vec::new();
            // Into memory, with fixed bounds: cannot fail.
            let _ = self.serializer.serialize(&self.closing, &mut bytes);
            self.closed.push((o.index, bytes));
        }
        self.spare.push(o.hist);
        // The fast path's slot may have moved: the next record finds it again.
        self.cur_len = 0;
        self.cur = 0;
    }

    /// Closes every histogram and hands them over, by due interval (an interval may come in
    /// several chunks, which add up).
    pub(crate) fn finish(&mut self) -> Vec<(usize, Vec<u8>)> {
        while !self.open.is_empty() {
            self.close(self.open.len() - 1);
        }
        std::mem::take(&mut self.closed)
    }
}

/// Latencies by due interval, decoded and merged (threads, consumers, shards): what the
/// windows are measured on. Interval i of every part is one interval (they share t = 0).
#[derive(Clone, Debug, Default)]
pub struct DueLatency {
    pub ack: Vec<Option<Histogram<u64>>>,
    pub e2e: Vec<Option<Histogram<u64>>>,
}

impl DueLatency {
    /// One thread's chunks, into the ack (a producer's) or end-to-end (a consumer's) side.
    pub(crate) fn of_thread(chunks: &[(usize, Vec<u8>)], consumer: bool) -> DueLatency {
        let mut hists = Vec::new();
        let mut de = Deserializer::new();
        for (i, bytes) in chunks {
            // Written by `close` just before: cannot fail.
            if let Ok(h) = de.deserialize::<u64, _>(&mut bytes.as_slice()) {
                add_at(&mut hists, *i, &h);
            }
        }
        if consumer {
            DueLatency {
                ack: Vec::new(),
                e2e: hists,
            }
        } else {
            DueLatency {
                ack: hists,
                e2e: Vec::new(),
            }
        }
    }

    /// Another part's added in, interval by interval (exact: same bounds and digits).
    pub(crate) fn absorb(&mut self, o: &DueLatency) {
        for (into, from) in [(&mut self.ack, &o.ack), (&mut self.e2e, &o.e2e)] {
            for (i, h) in from.iter().enumerate() {
                if let Some(h) = h {
                    add_at(into, i, h);
                }
            }
        }
    }

    /// As a result file keeps it.
    pub(crate) fn file(&self) -> DueSeries {
        let encode = |v: &[Option<Histogram<u64>>]| {
            v.iter()
                .enumerate()
                .filter_map(|(i, h)| {
                    let h = h.as_ref().filter(|h| !h.is_empty())?;
                    Some((i as u32, codec::encode(h)))
                })
                .collect()
        };
        DueSeries {
            width_secs: DUE_WIDTH_NS as f64 / 1e9,
            ack: encode(&self.ack),
            e2e: encode(&self.e2e),
        }
    }
}

fn add_at(into: &mut Vec<Option<Histogram<u64>>>, i: usize, h: &Histogram<u64>) {
    if i >= into.len() {
        into.resize_with(i + 1, || None);
    }
    let _ = into[i].get_or_insert_with(new_interval_histogram).add(h);
}

/// Latencies by due interval as a result file keeps them (`series.due`): the interval's index
/// and its histogram (HdrHistogram V2 deflate, base64, 2 digits), for the intervals with any.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DueSeries {
    /// Width of a due interval, seconds (0.1).
    pub width_secs: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ack: Vec<(u32, String)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub e2e: Vec<(u32, String)>,
}

impl DueSeries {
    /// Read back to merge (shards): None when a histogram is not one, or the width is not
    /// this kafkabench's.
    pub(crate) fn read_back(&self) -> Result<DueLatency, String> {
        if (self.width_secs * 1e9 - DUE_WIDTH_NS as f64).abs() > 1.0 {
            return Err(format!(
                "due intervals of {} s, not {} s",
                self.width_secs,
                DUE_WIDTH_NS as f64 / 1e9
            ));
        }
        let decode = |v: &[(u32, String)]| -> Result<Vec<Option<Histogram<u64>>>, String> {
            let mut out = Vec::new();
            for (i, text) in v {
                add_at(&mut out, *i as usize, &codec::decode(text)?);
            }
            Ok(out)
        };
        Ok(DueLatency {
            ack: decode(&self.ack)?,
            e2e: decode(&self.e2e)?,
        })
    }

    /// The histograms of one side's due intervals in any of `spans` (`[from, to)` by index),
    /// added; None when none holds a record.
    pub(crate) fn sum(&self, e2e: bool, spans: &[(u32, u32)]) -> Option<Histogram<u64>> {
        let side = if e2e { &self.e2e } else { &self.ack };
        let inside = |i: &u32| spans.iter().any(|(from, to)| (from..to).contains(&i));
        let mut sum: Option<Histogram<u64>> = None;
        for (_, text) in side.iter().filter(|(i, _)| inside(i)) {
            if let Ok(h) = codec::decode(text) {
                let _ = sum.get_or_insert_with(new_interval_histogram).add(&h);
            }
        }
        sum.filter(|h| !h.is_empty())
    }
}

#[cfg(test)]
#[path = "due_tests.rs"]
mod tests;
