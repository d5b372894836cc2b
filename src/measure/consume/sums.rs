//! The read side's sums: what a result file keeps, and the one place its figures are derived.

use serde::{Deserialize, Serialize};

use super::super::stalls::{length, measured, within};
use super::recording::{add_opt, REDELIVERY_SLOT_NS};
use super::{ConsumeFigures, ConsumerRecording, FetchTrips, LatencySummary, ReadSide};

/// What a result file keeps of its read side beyond the figures: the sums its figures are
/// derived from, times relative to the measured start (which the shards' barrier makes one
/// instant). A run's consumers and a merge's shards both become one of these, and
/// [`ReadSums::figures`] derives the read side's figures from it, the one place that does.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadSums {
    pub consumers: u32,
    /// The commit policy as written (the same on every shard).
    pub commit: String,
    pub records: u64,
    pub bytes: u64,
    pub redelivered: u64,
    pub aborted_read: u64,
    pub fetch_requests: Option<u64>,
    pub fetch_bytes: Option<u64>,
    /// The first and the last record read (ns after the measured start; the first may be
    /// before it, in a warm-up); None when nothing was read.
    pub first_read_ns: Option<i64>,
    pub last_read_ns: Option<i64>,
    /// Every partition stall, (from, to) in ns after the measured start (the join's begin
    /// before it).
    pub stalls: Vec<(i64, i64)>,
    /// Redeliveries by when: (start of a 100 ms slot in ns after the measured start, records
    /// redelivered in it), the slots with any; absent in files of an older kafkabench.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redeliveries: Vec<(i64, u64)>,
    /// The group's rebalances (distinct assignment epochs).
    pub rebalances: u64,
    /// When every partition had been read to its end (ns after the measured start).
    pub drained_ns: Option<i64>,
    /// A cold backlog (`ReadSide::cold`): the records in remote storage only when the clock
    /// started, of those the topics held. The topics', so every shard sees the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_records: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_held: Option<u64>,
    /// With a backlog: the fetch round trips while it drained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch_trips: Option<FetchTrips>,
}

impl ReadSums {
    /// The consumers' merged recording, as sums relative to `side`'s measured start.
    pub(crate) fn of(c: &ConsumerRecording, side: &ReadSide) -> ReadSums {
        let at = |ns: u64| ns as i64 - side.origin_ns as i64;
        // 0 on the run's clock: the consumer never read.
        let read = |ns: u64| (ns > 0).then(|| at(ns));
        ReadSums {
            consumers: side.consumers,
            commit: side.commit.clone(),
            records: c.records,
            bytes: c.bytes,
            redelivered: c.redelivered,
            aborted_read: c.aborted_read,
            fetch_requests: c.fetch_requests,
            fetch_bytes: c.fetch_bytes,
            first_read_ns: read(c.first_read_ns),
            last_read_ns: read(c.last_read_ns),
            stalls: c.stalls.iter().map(|&(f, t)| (at(f), at(t))).collect(),
            redeliveries: c
                .redelivered_at
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(i, n)| (at(i as u64 * REDELIVERY_SLOT_NS), *n))
                .collect(),
            rebalances: side.rebalances,
            drained_ns: side.drained_ns.map(|t| at(t).max(0)),
            cold_records: side.cold.map(|c| c.0),
            cold_held: side.cold.map(|c| c.1),
            fetch_trips: (c.fetch_trips.count > 0).then_some(c.fetch_trips),
        }
    }

    /// Another shard's read side: its consumers read other partitions at the same time.
    pub fn absorb(&mut self, o: &ReadSums) {
        let either = |a: Option<i64>, b: Option<i64>, f: fn(i64, i64) -> i64| match (a, b) {
            (Some(a), Some(b)) => Some(f(a, b)),
            (a, b) => a.or(b),
        };
        self.consumers += o.consumers;
        if self.commit.is_empty() {
            self.commit = o.commit.clone();
        }
        self.records += o.records;
        self.bytes += o.bytes;
        self.redelivered += o.redelivered;
        self.aborted_read += o.aborted_read;
        self.fetch_requests = add_opt(self.fetch_requests, o.fetch_requests);
        self.fetch_bytes = add_opt(self.fetch_bytes, o.fetch_bytes);
        self.first_read_ns = either(self.first_read_ns, o.first_read_ns, i64::min);
        self.last_read_ns = either(self.last_read_ns, o.last_read_ns, i64::max);
        self.stalls.extend_from_slice(&o.stalls);
        self.redeliveries.extend_from_slice(&o.redeliveries);
        // A sharded run has no group (each shard is assigned its partitions by hand).
        self.rebalances += o.rebalances;
        // The read side is drained when the last shard's is.
        self.drained_ns = either(self.drained_ns, o.drained_ns, i64::max);
        // Every shard asked about the same topics: the later answer holds more.
        self.cold_records = self.cold_records.max(o.cold_records);
        self.cold_held = self.cold_held.max(o.cold_held);
        self.fetch_trips = match (self.fetch_trips, o.fetch_trips) {
            (Some(mut a), Some(b)) => {
                a.absorb(&b);
                Some(a)
            }
            (a, b) => a.or(b),
        };
    }

    /// The read side's figures, with the lag read off the run's (or the merged) time series:
    /// the highest lag at an interval's end, so a merge's is the maximum over time of the
    /// shards' summed lag, not a sum of their maxima.
    pub fn figures(&self, series: Option<&crate::measure::TimeSeries>) -> ConsumeFigures {
        // The read rate's window: first record read → last (what rdkafka_performance -C
        // times), so librdkafka's start-up (an offset lookup's backoff, a resumed fetcher
        // waking up) is not counted as reading; drain.time keeps it. One record has no such
        // window.
        let last = self.last_read_ns.unwrap_or(0);
        let from = match self.first_read_ns {
            Some(first) if first >= 0 && last > first => first,
            _ => 0,
        };
        let reading_secs = (last - from).max(0) as f64 / 1e9;
        let per_sec = |n: u64| {
            if reading_secs > 0.0 {
                n as f64 / reading_secs
            } else {
                0.0
            }
        };
        // The stalls of the run: a stall of the join that ended before the clock is not one.
        let stalls: Vec<&(i64, i64)> = self.stalls.iter().filter(|s| measured(s)).collect();
        let mut times = crate::measure::new_histogram();
        for s in &stalls {
            crate::measure::record(&mut times, length(s) as u64);
        }
        let stalled_ns: i64 = stalls.iter().map(|s| within(s)).sum();
        ConsumeFigures {
            consumers: self.consumers,
            records: self.records,
            bytes: self.bytes,
            throughput_msgs: per_sec(self.records),
            throughput_bytes: per_sec(self.bytes),
            lag_max: series.and_then(|s| s.points.iter().filter_map(|p| p.lag).max()),
            rebalance_secs: (!self.stalls.is_empty())
                .then(|| stalls.iter().map(|s| length(s)).max().unwrap_or(0) as f64 / 1e9),
            rebalances: self.rebalances,
            rebalance: (!stalls.is_empty()).then(|| LatencySummary::from_histogram(&times)),
            stall_secs: (self.consumers > 0 && self.rebalances > 0)
                .then(|| stalled_ns as f64 / 1e9),
            redelivered: self.redelivered,
            fetch_requests: self.fetch_requests,
            // A ratio of sums, also over shards.
            fetch_bytes_avg: match (self.fetch_requests, self.fetch_bytes) {
                (Some(r), Some(b)) if r > 0 => Some(b as f64 / r as f64),
                _ => None,
            },
            drain_secs: self.drained_ns.map(|t| t.max(0) as f64 / 1e9),
            aborted_read: self.aborted_read,
            commit: self.commit.clone(),
            cold_share: match (self.cold_records, self.cold_held) {
                (Some(r), Some(h)) if h > 0 => Some(r as f64 / h as f64),
                (Some(_), Some(_)) => Some(0.0),
                _ => None,
            },
            // The consumers wait for the clock with a backlog: their first record is read after
            // it, from remote storage when the backlog is cold.
            first_record_secs: self
                .cold_held
                .and(self.first_read_ns)
                .map(|t| t.max(0) as f64 / 1e9),
            fetch_rtt_secs: self.fetch_trips.and_then(|f| f.figures()).map(|f| f.0),
            fetch_rtt_max_secs: self.fetch_trips.and_then(|f| f.figures()).map(|f| f.1),
        }
    }
}
