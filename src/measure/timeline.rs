//! Counts per partition over time (the heat map's data): records acknowledged, and measured
//! records read back, per partition per column of the run's report intervals, with each
//! partition's lag at the columns' ends derived from the two.
//!
//! Bounded: a timeline has at most [`column_limit`] columns (256, fewer when partitions are
//! many, so that partitions × columns stays within [`MAX_CELLS`]). A run longer than that many
//! intervals coarsens: two neighbouring columns become one, and a column is then 2, 4, 8 …
//! intervals wide. Threads and shards share the interval origin and width, so they merge
//! exactly (the finer one is coarsened to the wider, then counts add).

use serde::{Deserialize, Serialize};

/// Partitions × columns kept at most (about 1 MB of u32 per thread while recording); a
/// topic with more than `MAX_CELLS / MIN_COLUMNS` partitions keeps `MIN_COLUMNS` each.
pub(crate) const MAX_CELLS: usize = 1 << 18;
pub(crate) const MAX_COLUMNS: usize = 256;
pub(crate) const MIN_COLUMNS: usize = 8;

/// The most columns a timeline of `partitions` partitions keeps: the same in every thread
/// and shard of a run, so that their coarsening agrees.
pub(crate) fn column_limit(partitions: usize) -> usize {
    (MAX_CELLS / partitions.max(1)).clamp(MIN_COLUMNS, MAX_COLUMNS)
}

/// One thread's (or a merge's) counts: column-major, `counts[column * partitions + p]`, so a
/// new interval grows the vector by one column (once per interval, never per record).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PartitionTimeline {
    partitions: usize,
    /// Intervals per column, as a power of two.
    shift: u32,
    counts: Vec<u32>,
}

impl PartitionTimeline {
    /// A timeline of `partitions` partitions; room for 16 columns is allocated now.
    pub fn new(partitions: usize) -> PartitionTimeline {
        PartitionTimeline {
            partitions,
            shift: 0,
            counts: Vec::with_capacity(partitions * 16),
        }
    }

    pub fn partitions(&self) -> usize {
        self.partitions
    }

    pub fn columns(&self) -> usize {
        self.counts.len() / self.partitions.max(1)
    }

    /// Report intervals per column.
    pub fn per_column(&self) -> u64 {
        1 << self.shift
    }

    /// One record of `partition` in report interval `interval` (from the measured start).
    #[inline]
    pub fn add(&mut self, partition: usize, interval: usize) {
        if partition >= self.partitions {
            return;
        }
        let mut col = interval >> self.shift;
        if col >= column_limit(self.partitions) {
            self.coarsen_for(interval);
            col = interval >> self.shift;
        }
        let i = col * self.partitions + partition;
        if i >= self.counts.len() {
            self.grow(col + 1);
        }
        self.counts[i] = self.counts[i].saturating_add(1);
    }

    #[cold]
    fn grow(&mut self, columns: usize) {
        self.counts.resize(columns * self.partitions, 0);
    }

    /// Coarsens until `interval` falls within the column limit.
    #[cold]
    fn coarsen_for(&mut self, interval: usize) {
        while interval >> self.shift >= column_limit(self.partitions) {
            self.coarsen();
        }
    }

    /// Two neighbouring columns become one.
    fn coarsen(&mut self) {
        let (n, cols) = (self.partitions, self.columns());
        let mut out = vec![0u32; cols.div_ceil(2) * n];
        for c in 0..cols {
            for p in 0..n {
                let o = &mut out[(c / 2) * n + p];
                *o = o.saturating_add(self.counts[c * n + p]);
            }
        }
        self.counts = out;
        self.shift += 1;
    }

    /// The count of `partition` in column `col` (0 past the end).
    pub fn get(&self, partition: usize, col: usize) -> u32 {
        if partition >= self.partitions {
            return 0;
        }
        self.counts
            .get(col * self.partitions + partition)
            .copied()
            .unwrap_or(0)
    }

    /// Another thread's or shard's timeline of the same intervals, added exactly: the finer
    /// of the two is coarsened to the other's columns first.
    pub fn absorb(&mut self, o: &PartitionTimeline) {
        let mut o = o.clone();
        if o.partitions > self.partitions {
            self.widen(o.partitions);
        } else if o.partitions < self.partitions {
            o.widen(self.partitions);
        }
        while self.shift < o.shift {
            self.coarsen();
        }
        while o.shift < self.shift {
            o.coarsen();
        }
        if o.counts.len() > self.counts.len() {
            self.counts.resize(o.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a = a.saturating_add(*b);
        }
    }

    /// More partitions (a shard that knew fewer): the columns re-laid out.
    fn widen(&mut self, partitions: usize) {
        let cols = self.columns();
        let mut out = vec![0u32; cols * partitions];
        for c in 0..cols {
            for p in 0..self.partitions {
                out[c * partitions + p] = self.counts[c * self.partitions + p];
            }
        }
        self.partitions = partitions;
        self.counts = out;
        // A wider timeline may keep fewer columns.
        let limit = column_limit(partitions);
        while self.columns() > limit {
            self.coarsen();
        }
    }

    /// Each partition's row, as the result file keeps it.
    fn rows(&self) -> Vec<Vec<u32>> {
        (0..self.partitions)
            .map(|p| (0..self.columns()).map(|c| self.get(p, c)).collect())
            .collect()
    }

    fn of_rows(rows: &[Vec<u32>], shift: u32) -> PartitionTimeline {
        let partitions = rows.len();
        let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut counts = vec![0u32; cols * partitions];
        for (p, row) in rows.iter().enumerate() {
            for (c, n) in row.iter().enumerate() {
                counts[c * partitions + p] = *n;
            }
        }
        PartitionTimeline {
            partitions,
            shift,
            counts,
        }
    }
}

/// The counts over time as the result file keeps them (`runs[].partition_counts`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PartitionCounts {
    /// The run's report interval, seconds, and how many of them make one column (a power of
    /// two: 1 until the run outlasts the column limit).
    pub interval_secs: f64,
    pub per_column: u64,
    /// Per partition (by number), records acknowledged in each column, from the measured
    /// start.
    pub acked: Vec<Vec<u32>>,
    /// Per partition, measured records read back (first reads) in each column; empty without
    /// a librdkafka or Java reader.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<Vec<u32>>,
}

impl PartitionCounts {
    /// The file's form of the run's timelines. Both are brought to one column width.
    pub fn of(
        interval_secs: f64,
        acked: Option<&PartitionTimeline>,
        read: Option<&PartitionTimeline>,
    ) -> Option<PartitionCounts> {
        let (mut a, mut r) = (acked?.clone(), read.cloned());
        if let Some(r) = &mut r {
            while r.shift < a.shift {
                r.coarsen();
            }
            while a.shift < r.shift {
                a.coarsen();
            }
        }
        Some(PartitionCounts {
            interval_secs,
            per_column: a.per_column(),
            acked: a.rows(),
            read: r.map(|r| r.rows()).unwrap_or_default(),
        })
    }

    /// The timelines back, to merge (shards): acked, and read when kept.
    pub fn timelines(&self) -> (PartitionTimeline, Option<PartitionTimeline>) {
        let shift = self.per_column.max(1).trailing_zeros();
        let read = (!self.read.is_empty()).then(|| PartitionTimeline::of_rows(&self.read, shift));
        (PartitionTimeline::of_rows(&self.acked, shift), read)
    }

    /// Width of a column, seconds.
    pub fn column_secs(&self) -> f64 {
        self.interval_secs * self.per_column as f64
    }

    /// Each partition's highest lag at a column's end: records acknowledged up to then less
    /// measured records read back up to then (the run's lag, partition by partition). None
    /// without read counts.
    pub fn lag_max(&self) -> Option<Vec<u64>> {
        if self.read.is_empty() {
            return None;
        }
        let lag = |p: usize| {
            let (a, r) = (&self.acked[p], self.read.get(p));
            let cols = a.len().max(r.map_or(0, Vec::len));
            let (mut acked, mut read, mut max) = (0u64, 0u64, 0u64);
            for c in 0..cols {
                acked += u64::from(a.get(c).copied().unwrap_or(0));
                read += u64::from(r.and_then(|r| r.get(c)).copied().unwrap_or(0));
                max = max.max(acked.saturating_sub(read));
            }
            max
        };
        Some((0..self.acked.len()).map(lag).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarsening_keeps_every_count_and_bounds_the_columns() {
        let mut t = PartitionTimeline::new(3);
        for i in 0..1000 {
            t.add(i % 3, i);
        }
        assert!(t.columns() <= column_limit(3));
        assert_eq!(t.per_column(), 4, "1000 intervals in 256 columns of 4");
        let sums: Vec<u64> = (0..3)
            .map(|p| (0..t.columns()).map(|c| u64::from(t.get(p, c))).sum())
            .collect();
        assert_eq!(sums, [334, 333, 333]);
    }

    #[test]
    fn a_coarse_and_a_fine_timeline_merge_exactly() {
        let mut fine = PartitionTimeline::new(2);
        fine.add(0, 1);
        fine.add(1, 3);
        let mut coarse = PartitionTimeline::new(2);
        for i in 0..600 {
            coarse.add(0, i);
        }
        fine.absorb(&coarse);
        assert_eq!(fine.per_column(), coarse.per_column());
        // Interval 1 and 3 are in column 0 of 4 intervals each.
        assert_eq!(fine.get(0, 0), 5);
        assert_eq!(fine.get(1, 0), 1);
        let total: u64 = (0..fine.columns()).map(|c| u64::from(fine.get(0, c))).sum();
        assert_eq!(total, 601);
    }

    #[test]
    fn lag_is_acknowledged_less_read_at_each_columns_end() {
        let mut acked = PartitionTimeline::new(2);
        let mut read = PartitionTimeline::new(2);
        for _ in 0..10 {
            acked.add(0, 0);
            acked.add(1, 0);
        }
        for _ in 0..4 {
            read.add(0, 0);
        }
        for _ in 0..6 {
            read.add(0, 1);
        }
        for _ in 0..10 {
            read.add(1, 0);
        }
        let c = PartitionCounts::of(1.0, Some(&acked), Some(&read)).unwrap();
        assert_eq!(c.lag_max(), Some(vec![6, 0]));
        let json = serde_json::to_string(&c).unwrap();
        let back: PartitionCounts = serde_json::from_str(&json).unwrap();
        let (a, r) = back.timelines();
        assert_eq!(a, acked);
        assert_eq!(r.unwrap(), read);
    }
}
