//! The read side's figures: what a group of consumers (or the verification consumer) did.

use serde::{Deserialize, Serialize};

use hdrhistogram::Histogram;

use super::stalls::{length, measured, within};
use super::{new_histogram, IntervalRecording, LatencySummary, SeqSet};

/// Figures of the consumers of one run; None on a run without consumers.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ConsumeFigures {
    /// Consumer clients (1 for the verification consumer).
    pub consumers: u32,
    /// Every record read, of every phase and producer (the backlog included).
    pub records: u64,
    pub bytes: u64,
    /// Records and bytes read per second, first record read → last.
    pub throughput_msgs: f64,
    pub throughput_bytes: f64,
    /// Highest lag (records written and not yet read) at an interval's end.
    pub lag_max: Option<u64>,
    /// The longest a partition went unread in a rebalance that reached into the measured
    /// phase (`measure::stalls`), whole: from when its member gave it up (or the group's
    /// first join) to the first record its next member read of it.
    pub rebalance_secs: Option<f64>,
    pub rebalances: u64,
    /// Each partition's stall (one per partition per rebalance that moved or stopped it), for
    /// the report.
    #[serde(default)]
    pub rebalance: Option<LatencySummary>,
    /// The stalls within the measured phase added up, partition by partition: seconds of
    /// partitions unread because of rebalances (12 partitions stopped for 1 s: 12 s).
    #[serde(default)]
    pub stall_secs: Option<f64>,
    /// Records read again after a rebalance (same partition and offset).
    pub redelivered: u64,
    /// librdkafka statistics, summed over the consumers.
    pub fetch_requests: Option<u64>,
    pub fetch_bytes_avg: Option<f64>,
    /// Consumer start → every partition read to its end.
    pub drain_secs: Option<f64>,
    /// Records of aborted transactions read anyway (read_committed violated).
    pub aborted_read: u64,
    /// The commit policy, as a user would write it.
    pub commit: String,
    /// A cold backlog: the share of the records the topics held at the clock's start that
    /// were in remote storage only (0 to 1), and the clock's start → the first record read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_share: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_record_secs: Option<f64>,
    /// With a backlog: the consumers' fetch round trips while it drained (librdkafka's
    /// statistics), their mean and the longest, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch_rtt_secs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch_rtt_max_secs: Option<f64>,
}

/// Fetch round trips, from librdkafka's statistics: the `rtt` window of each partition
/// leader a consumer fetches from (the group coordinator's requests go to a logical broker of
/// their own), taken while a backlog drains. Records are waiting then, so a fetch returns as
/// soon as the broker has read them, and its round trip is the read's latency, not a long poll
/// for records not yet written. Sums, counts and maxima: they merge exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchTrips {
    pub sum_us: u64,
    pub count: u64,
    pub max_us: u64,
}

impl FetchTrips {
    /// One statistics window's round trips (µs), as librdkafka reports them.
    pub fn window(&mut self, sum_us: i64, count: i64, max_us: i64) {
        if count > 0 && sum_us >= 0 {
            self.sum_us += sum_us as u64;
            self.count += count as u64;
            self.max_us = self.max_us.max(max_us.max(0) as u64);
        }
    }

    /// Another consumer's (or shard's) round trips.
    pub fn absorb(&mut self, o: &FetchTrips) {
        self.sum_us += o.sum_us;
        self.count += o.count;
        self.max_us = self.max_us.max(o.max_us);
    }

    /// The mean and the longest round trip, in seconds; None without one.
    fn figures(&self) -> Option<(f64, f64)> {
        (self.count > 0).then(|| {
            (
                self.sum_us as f64 / self.count as f64 / 1e6,
                self.max_us as f64 / 1e6,
            )
        })
    }
}

/// What a run knows of its read side beyond what its consumers recorded.
pub struct ReadSide {
    pub consumers: u32,
    /// The commit policy as written (`auto(5s)`, `every(1000)`, `off`).
    pub commit: String,
    /// Where the measured phase began, on the run's clock (ns).
    pub origin_ns: u64,
    /// When every partition had been read to its end, on the run's clock; None without a
    /// backlog, or when that never happened.
    pub drained_ns: Option<u64>,
    /// The rebalances the group went through: the distinct assignment epochs its members
    /// were given partitions in (`group_rebalances`).
    pub rebalances: u64,
    /// A share group read the run: what its figures are reported with.
    pub share: Option<ShareSide>,
    /// A cold backlog: the records in remote storage only when the clock started, and the
    /// records the topics held then (`run::offload`).
    pub cold: Option<(u64, u64)>,
}

/// A share group's settings, reported beside its figures.
pub struct ShareSide {
    pub ack_mode: String,
    pub processing_ms: f64,
    pub delivery_limit: u16,
}

/// The rebalances a group went through: the distinct assignment epochs in which any of its
/// members was given partitions (the first join included). Under the classic protocol the
/// epoch is the group generation; under the consumer protocol (KIP-848) the member epoch,
/// which is the epoch of the group's target assignment the member reconciled to: members
/// given partitions by one new assignment see the same number, a member whose partitions did
/// not change sees none. Counting per member (the most any one took part in) undercounts
/// when no member was in every rebalance: the first to join is alone in generation 1 and is
/// then stopped, say.
pub(crate) fn group_rebalances(members: &[&ConsumerRecording]) -> u64 {
    let epochs: std::collections::BTreeSet<i32> = members
        .iter()
        .flat_map(|c| c.generations.iter().copied())
        .collect();
    epochs.len() as u64
}

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
    pub fn figures(&self, series: Option<&super::TimeSeries>) -> ConsumeFigures {
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
        let mut times = super::new_histogram();
        for s in &stalls {
            super::record(&mut times, length(s) as u64);
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

/// What a consumer thread recorded (or the run's consumers together, `merge`d).
pub struct ConsumerRecording {
    pub e2e: Histogram<u64>,
    /// Per producer id (the index), the sequence numbers read back: measured and backlog
    /// records, each once.
    pub seen: Vec<SeqSet>,
    /// Distinct measured records read back.
    pub consumed: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Consumed and end-to-end latency per interval.
    pub intervals: IntervalRecording,
    /// Every record read, of every phase, redeliveries included, and their key and value bytes.
    pub records: u64,
    pub bytes: u64,
    /// Distinct backlog records read back (verified, no end-to-end latency).
    pub backlog_read: u64,
    /// Records read again at a (partition, offset) already read, by any consumer of the run.
    pub redelivered: u64,
    /// The same by when: per slot of [`REDELIVERY_SLOT_NS`] on the run's clock (grown only
    /// when a redelivery comes, so nothing per record).
    pub redelivered_at: Vec<u64>,
    /// Records of transactions their producer aborted, read anyway.
    pub aborted_read: u64,
    /// Records read per topic, in the order of the run's topic list.
    pub consumed_by_topic: Vec<u64>,
    /// Each partition stall this consumer ended (`run::consumer::group`): from when the
    /// partition went unread (its member gave it up, or the group's first join) to the first
    /// record this consumer read of it (or its assignment, with nothing to read), ns on the
    /// run's clock.
    pub stalls: Vec<(u64, u64)>,
    /// The assignment epoch of each of this consumer's assignments that gave it partitions
    /// (librdkafka's group generation, or member epoch under KIP-848): the group's
    /// rebalances are the distinct epochs over its members.
    pub generations: Vec<i32>,
    /// From librdkafka statistics over the measured phase: fetch requests and bytes fetched.
    pub fetch_requests: Option<u64>,
    pub fetch_bytes: Option<u64>,
    /// When this consumer read its first and its last record of the measured phase, on the
    /// run's clock (0: never).
    pub first_read_ns: u64,
    pub last_read_ns: u64,
    /// A share group member's acknowledgements and deliveries (None for librdkafka readers).
    pub share: Option<super::ShareRecording>,
    /// How far behind its own fetchers the reader was, over the measured phase.
    pub queue: ReaderQueue,
    /// With a backlog: the fetch round trips while it drained.
    pub fetch_trips: FetchTrips,
}

/// What waited in kafkabench's own reader: librdkafka's fetch queue, sampled by every
/// statistics document (each goes through the queue behind the records fetched before it)
/// over the measured phase. A prompt reader takes each document within microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReaderQueue {
    /// The longest a statistics document waited in the queue before the reader took it (ns):
    /// how long the records fetched just before it waited for the reader.
    pub wait_max_ns: u64,
    /// Documents read, and of those the ones that found the queue at a threshold
    /// (`queued.min.messages`, `queued.max.messages.kbytes`): librdkafka then stops fetching
    /// for `fetch.queue.backoff.ms`, and the records wait on the broker for the reader.
    pub samples: u64,
    pub full: u64,
}

impl ReaderQueue {
    /// Another reader's queue (a group's members): the longest wait, the samples added.
    pub fn absorb(&mut self, o: &ReaderQueue) {
        self.wait_max_ns = self.wait_max_ns.max(o.wait_max_ns);
        self.samples += o.samples;
        self.full += o.full;
    }
}

/// The resolution of redeliveries by when (`ConsumerRecording::redelivered_at`).
pub(crate) const REDELIVERY_SLOT_NS: u64 = 100_000_000;

impl ConsumerRecording {
    /// A record read again, at `now` on the run's clock.
    pub fn redelivered_now(&mut self, now: u64) {
        self.redelivered += 1;
        let slot = (now / REDELIVERY_SLOT_NS) as usize;
        if slot >= self.redelivered_at.len() {
            self.redelivered_at.resize(slot + 1, 0);
        }
        self.redelivered_at[slot] += 1;
    }

    /// A consumer that has read nothing yet.
    pub fn empty() -> ConsumerRecording {
        ConsumerRecording {
            e2e: new_histogram(),
            seen: Vec::new(),
            consumed: 0,
            duplicated: 0,
            reordered: 0,
            intervals: IntervalRecording::default(),
            records: 0,
            bytes: 0,
            backlog_read: 0,
            redelivered: 0,
            redelivered_at: Vec::new(),
            aborted_read: 0,
            consumed_by_topic: Vec::new(),
            stalls: Vec::new(),
            generations: Vec::new(),
            fetch_requests: None,
            fetch_bytes: None,
            first_read_ns: 0,
            last_read_ns: 0,
            share: None,
            queue: ReaderQueue::default(),
            fetch_trips: FetchTrips::default(),
        }
    }

    /// The sequence set of producer `id`, grown as needed.
    pub fn seen_mut(&mut self, id: usize) -> &mut SeqSet {
        if id >= self.seen.len() {
            self.seen.resize_with(id + 1, SeqSet::default);
        }
        &mut self.seen[id]
    }

    /// The recordings of a group's consumers as one: a record read by two of them at two
    /// offsets is a duplicate (redeliveries at one offset were never recorded twice), counts
    /// add up, histograms and intervals merge exactly.
    pub fn merge(all: Vec<ConsumerRecording>) -> ConsumerRecording {
        let mut out = ConsumerRecording::empty();
        let mut first = true;
        for c in all {
            // Read by two consumers at two offsets (a producer's retry): counted as consumed
            // by each, so one of the two is the duplicate.
            let mut both = 0;
            for (id, s) in c.seen.iter().enumerate() {
                both += out.seen_mut(id).absorb(s);
            }
            let _ = out.e2e.add(&c.e2e);
            out.consumed = (out.consumed + c.consumed).saturating_sub(both);
            out.duplicated += both;
            out.duplicated += c.duplicated;
            out.reordered += c.reordered;
            out.records += c.records;
            out.bytes += c.bytes;
            out.backlog_read += c.backlog_read;
            out.redelivered += c.redelivered;
            if out.redelivered_at.len() < c.redelivered_at.len() {
                out.redelivered_at.resize(c.redelivered_at.len(), 0);
            }
            for (o, n) in out.redelivered_at.iter_mut().zip(&c.redelivered_at) {
                *o += n;
            }
            out.aborted_read += c.aborted_read;
            if out.consumed_by_topic.len() < c.consumed_by_topic.len() {
                out.consumed_by_topic.resize(c.consumed_by_topic.len(), 0);
            }
            for (o, n) in out.consumed_by_topic.iter_mut().zip(&c.consumed_by_topic) {
                *o += n;
            }
            out.stalls.extend(&c.stalls);
            out.generations.extend(&c.generations);
            out.fetch_requests = add_opt(out.fetch_requests, c.fetch_requests);
            out.fetch_bytes = add_opt(out.fetch_bytes, c.fetch_bytes);
            out.fetch_trips.absorb(&c.fetch_trips);
            if c.first_read_ns > 0 {
                out.first_read_ns = match out.first_read_ns {
                    0 => c.first_read_ns,
                    f => f.min(c.first_read_ns),
                };
            }
            out.last_read_ns = out.last_read_ns.max(c.last_read_ns);
            if let Some(s) = &c.share {
                out.share.get_or_insert_with(Default::default).absorb(s);
            }
            out.queue.absorb(&c.queue);
            if first {
                out.intervals = c.intervals;
                first = false;
            } else {
                out.intervals.absorb(c.intervals);
            }
        }
        // A share group's unanswered acknowledgements: known only over every member's reads.
        super::share::settle_unanswered(&mut out);
        out
    }
}

fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

#[cfg(test)]
mod tests {
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
}
