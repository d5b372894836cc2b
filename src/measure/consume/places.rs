//! The read side by partition: records read, measured records read back and their end-to-end
//! latency, per partition of a run over one topic, merged exactly across a group's members
//! and shards; the partitions' lag comes from the counts over time (`measure::timeline`).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::super::placed::PARTITION_DIGITS;
use super::super::timeline::{PartitionCounts, PartitionTimeline};
use super::super::{record, LatencySummary, RunResult, MAX_NS};

/// One partition's read figures, as the result file keeps them (`runs[].read_partitions`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ReadPlaceFigures {
    /// The partition's number.
    pub id: i32,
    /// Records read at an offset no consumer of the run had read before: every phase's
    /// (warm-up, backlog, records already in the topic), each offset once.
    pub records: u64,
    /// Distinct measured records read back, and their end-to-end latency (2 significant
    /// digits, with its histogram).
    pub consumed: u64,
    pub e2e: LatencySummary,
    /// The partition's highest lag at a column's end of the counts over time
    /// (`partition_counts`): records acknowledged less measured records read back. None when
    /// the run's lag per partition is not measured (a backlog, transactions, records deleted
    /// before they were read, a producer that does not say where records landed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_max: Option<u64>,
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, PARTITION_DIGITS).expect("static bounds are valid")
}

/// One partition's raw recording.
#[derive(Clone, Debug)]
pub struct ReadSlot {
    pub records: u64,
    pub consumed: u64,
    pub e2e: Histogram<u64>,
}

impl ReadSlot {
    fn new() -> ReadSlot {
        ReadSlot {
            records: 0,
            consumed: 0,
            e2e: histogram(),
        }
    }
}

/// A reader's (or a group's, or a merge's) figures by partition; slots allocated before the
/// hot path, indexed by partition number.
#[derive(Clone, Debug, Default)]
pub struct ReadPlaces {
    pub slots: Vec<ReadSlot>,
    /// Measured records read back per partition per report interval.
    pub over_time: Option<PartitionTimeline>,
}

impl ReadPlaces {
    /// Slots for `partitions` partitions (0: none kept).
    pub fn new(partitions: usize) -> ReadPlaces {
        ReadPlaces {
            slots: (0..partitions).map(|_| ReadSlot::new()).collect(),
            over_time: (partitions > 0).then(|| PartitionTimeline::new(partitions)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// A record read at an offset not read before.
    #[inline]
    pub fn first_read(&mut self, part: usize) {
        if let Some(s) = self.slots.get_mut(part) {
            s.records += 1;
        }
    }

    /// A measured record read back, `e2e_ns` after its intended time, in report interval
    /// `interval`.
    #[inline]
    pub fn consumed(&mut self, part: usize, e2e_ns: u64, interval: usize) {
        if let Some(s) = self.slots.get_mut(part) {
            s.consumed += 1;
            record(&mut s.e2e, e2e_ns);
            if let Some(t) = &mut self.over_time {
                t.add(part, interval);
            }
        }
    }

    /// Another member's (or shard's) recording, partition by partition.
    pub fn absorb(&mut self, o: &ReadPlaces) {
        if self.slots.len() < o.slots.len() {
            self.slots.resize_with(o.slots.len(), ReadSlot::new);
        }
        for (a, b) in self.slots.iter_mut().zip(&o.slots) {
            a.records += b.records;
            a.consumed += b.consumed;
            // One precision everywhere: adding cannot fail.
            let _ = a.e2e.add(&b.e2e);
        }
        match (&mut self.over_time, &o.over_time) {
            (Some(a), Some(b)) => a.absorb(b),
            (None, Some(b)) => self.over_time = Some(b.clone()),
            _ => {}
        }
    }

    /// Every partition's figures, the lag from `lag_max` (by partition) when measured.
    pub fn figures(&self, lag_max: Option<&[u64]>) -> Vec<ReadPlaceFigures> {
        self.slots
            .iter()
            .enumerate()
            .map(|(p, s)| ReadPlaceFigures {
                id: p as i32,
                records: s.records,
                consumed: s.consumed,
                e2e: LatencySummary::from_histogram(&s.e2e),
                lag_max: lag_max.and_then(|l| l.get(p).copied()),
            })
            .collect()
    }

    /// A result file's figures back as a recording (the counts over time come separately);
    /// None when a partition that read measured records kept no histogram.
    pub fn of_figures(f: &[ReadPlaceFigures]) -> Option<ReadPlaces> {
        let mut slots = Vec::with_capacity(f.len());
        for x in f {
            let e2e = match x.e2e.histogram() {
                Some(h) => h.clone(),
                None if x.consumed == 0 => histogram(),
                None => return None,
            };
            let at = x.id.max(0) as usize;
            if slots.len() <= at {
                slots.resize_with(at + 1, ReadSlot::new);
            }
            slots[at] = ReadSlot {
                records: x.records,
                consumed: x.consumed,
                e2e,
            };
        }
        Some(ReadPlaces {
            slots,
            over_time: None,
        })
    }
}

/// The run's lag per partition is measured: no backlog (written before the clock, so not in
/// the acknowledged counts), no transactions and nothing deleted before it was read (whose
/// records leave the lag without being read), as the run's series says.
pub(crate) fn lag_measured(r: &RunResult, backlog: u64) -> bool {
    backlog == 0
        && r.recording.txn.is_none()
        && r.series.as_ref().is_some_and(|s| {
            s.points
                .iter()
                .all(|p| p.unreadable == 0 && p.aborted_read == 0 && p.backlog_read == 0)
        })
}

impl RunResult {
    /// The figures by partition of the read side and the counts over time, from the run's
    /// (or the shards' merged) recordings: `acked` per partition over time (any client's
    /// producer's), `read` the readers'. The lag per partition needs both, and `lag_measured`.
    pub(crate) fn set_by_partition(
        &mut self,
        acked: Option<&PartitionTimeline>,
        read: Option<&ReadPlaces>,
        interval_secs: f64,
        lag_measured: bool,
    ) {
        let read = read.filter(|r| !r.is_empty());
        let read_time = read.and_then(|r| r.over_time.as_ref());
        self.partition_counts = PartitionCounts::of(interval_secs, acked, read_time);
        let lag = self
            .partition_counts
            .as_ref()
            .filter(|_| lag_measured)
            .and_then(PartitionCounts::lag_max);
        self.read_partitions = read.map(|r| r.figures(lag.as_deref())).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(reads: &[(usize, u64)]) -> ReadPlaces {
        let mut r = ReadPlaces::new(3);
        for &(p, e2e) in reads {
            r.first_read(p);
            r.consumed(p, e2e, 0);
        }
        r
    }

    #[test]
    fn members_merge_by_partition_exactly_and_read_back() {
        let mut all = member(&[(0, 1_000_000), (1, 9_000_000)]);
        all.absorb(&member(&[(1, 2_000_000), (2, 3_000_000)]));
        let f = all.figures(Some(&[0, 4, 0]));
        let counts: Vec<u64> = f.iter().map(|p| p.consumed).collect();
        assert_eq!(counts, [1, 2, 1]);
        assert_eq!(f[1].e2e.count, 2);
        assert!(
            (f[1].e2e.max_ms / 9.0 - 1.0).abs() < 0.01,
            "{}",
            f[1].e2e.max_ms
        );
        assert_eq!(f[1].lag_max, Some(4));
        let json = serde_json::to_string(&f).unwrap();
        let back: Vec<ReadPlaceFigures> = serde_json::from_str(&json).unwrap();
        let again = ReadPlaces::of_figures(&back).unwrap();
        assert_eq!(again.slots[1].e2e, all.slots[1].e2e);
        assert_eq!(again.slots[2].records, 1);
    }

    #[test]
    fn a_partition_out_of_range_is_not_counted() {
        let r = member(&[(5, 1_000)]);
        assert!(r.slots.iter().all(|s| s.records == 0 && s.consumed == 0));
    }
}
