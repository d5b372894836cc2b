//! One consumer's verification of what it reads: each record's stamp checked against what was
//! read before (by it, and by the run's other consumers at the same offset), end-to-end
//! latency recorded, and the counts a recording keeps. Nothing here allocates per record or
//! looks anything up in a map: per-partition and per-(producer, partition) state live in
//! vectors indexed by the run's partition number and the producer id.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

use super::super::stamp;
use crate::measure::{record, ConsumerRecording, IntervalRecorder, ReadPlaces};
use crate::native::consumer::Message;

/// What the consumers of one run share: the highest offset read per partition (a record read
/// again at an offset already read is a redelivery), and how far they have come together.
pub(crate) struct Reads {
    /// Per partition of the run (topic index × partitions + partition): the next offset after
    /// the highest read, 0 before any.
    next: Vec<AtomicI64>,
    /// Distinct stamped records of this run read (measured and backlog), all consumers.
    pub verified: AtomicU64,
    /// Every record read, all consumers: progress, for the drain's give-up rule.
    pub records: AtomicU64,
    /// Per run partition: read to its end since the clock started; how many are, and when
    /// the last one was (ns on the run's clock, 0 before): the backlog's drain.
    ends: Vec<AtomicBool>,
    ended: AtomicUsize,
    drain_end: AtomicU64,
    pub drained_ns: AtomicU64,
    /// Bit i: consumer i has its partitions and is reading them (the group is settled when
    /// every bit is set).
    pub ready: AtomicU64,
    /// A group's partitions: since when each has gone unread (its rebalances' stalls).
    pub handovers: super::group::Handovers,
}

impl Reads {
    pub(crate) fn new(partitions: usize) -> Reads {
        Reads {
            next: (0..partitions).map(|_| AtomicI64::new(0)).collect(),
            verified: AtomicU64::new(0),
            records: AtomicU64::new(0),
            ends: (0..partitions).map(|_| AtomicBool::new(false)).collect(),
            ended: AtomicUsize::new(0),
            drain_end: AtomicU64::new(0),
            drained_ns: AtomicU64::new(0),
            ready: AtomicU64::new(0),
            handovers: super::group::Handovers::new(partitions),
        }
    }

    /// Partition `part` read to its end, its last record read at `at` (ns on the run's
    /// clock; the end itself is known up to a fetch wait later): the drain ends with the last
    /// record of the last partition.
    pub(crate) fn partition_end(&self, part: usize, at: u64) {
        let Some(e) = self.ends.get(part) else {
            return;
        };
        if !e.swap(true, Ordering::AcqRel) {
            self.drain_end.fetch_max(at.max(1), Ordering::AcqRel);
            if self.ended.fetch_add(1, Ordering::AcqRel) + 1 == self.ends.len() {
                let end = self.drain_end.load(Ordering::Acquire);
                self.drained_ns.store(end, Ordering::Release);
            }
        }
    }

    /// Partition `part` is not this process's to read (another shard's): it counts as
    /// drained from the start.
    pub(crate) fn not_read(&self, part: usize) {
        if let Some(e) = self.ends.get(part) {
            if !e.swap(true, Ordering::AcqRel) {
                self.ended.fetch_add(1, Ordering::AcqRel);
            }
        }
    }

    /// Partition `part` has been read to its end since the clock started.
    pub(crate) fn ended(&self, part: usize) -> bool {
        self.ends
            .get(part)
            .is_some_and(|e| e.load(Ordering::Acquire))
    }

    /// The next offset after the highest read at partition `part` (0 before any).
    pub(crate) fn next(&self, part: usize) -> i64 {
        self.next.get(part).map_or(0, |n| n.load(Ordering::Acquire))
    }

    /// Every partition has been read to its end since the clock started.
    pub(crate) fn drained(&self) -> bool {
        self.drained_ns.load(Ordering::Acquire) > 0
    }
}

/// Where a record's partition stands before this run: offsets below `base` were in the topic
/// already (an existing topic), read and counted, never verified.
pub(in crate::run) struct Verifier {
    pub rec: ConsumerRecording,
    pub intervals: IntervalRecorder,
    producers: usize,
    partitions: usize,
    /// Per run partition: the first offset this run wrote.
    base: Vec<i64>,
    /// Per (producer, run partition): the last sequence read, u64::MAX before any.
    last_seq: Vec<u64>,
    /// Counts not yet added to the shared ones (they move in batches).
    pending_verified: u64,
    pending_records: u64,
    /// The consumer reads uncommitted: an aborted record read is one it waits for, and
    /// counts toward `Reads::verified` (read_committed never hands one out).
    pub counts_aborted: bool,
    /// Offsets skipped within a partition are records that cannot be read any more (deleted
    /// before they were read): they leave the lag. Not with transactions, whose markers and
    /// aborted records skip offsets too (an abort leaves the lag when it happens).
    pub skips_unreadable: bool,
    /// This thread's live end-to-end buckets (`--metrics`).
    pub live: Option<std::sync::Arc<crate::run::live::LiveHistogram>>,
}

/// What one record turned out to be, for the caller's bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::run) enum Read {
    /// Read before at this offset (by this consumer or another).
    Redelivered,
    /// Counted, not verified: a record that was in the topic before the run, or not ours.
    Unverified,
    /// A stamped record of the run, checked.
    Verified,
}

/// Where and when a record was read, and its size: what `Verifier::check` needs of it besides
/// its stamp.
#[derive(Debug, Clone, Copy)]
pub(in crate::run) struct At {
    /// The topic's index in the run's list.
    pub topic: usize,
    /// The partition in the run's numbering (topic index × partitions + partition).
    pub part: usize,
    pub offset: i64,
    /// Key and value bytes.
    pub bytes: u64,
    /// ns on the run's clock.
    pub now: u64,
}

impl Verifier {
    pub(in crate::run) fn new(
        producers: usize,
        partitions: usize,
        topics: usize,
        base: Vec<i64>,
    ) -> Verifier {
        let mut rec = ConsumerRecording::empty();
        rec.consumed_by_topic = vec![0; topics];
        // By partition for a run over one topic (several would mix their numbers).
        if topics == 1 {
            rec.partitions = ReadPlaces::new(partitions);
        }
        for id in 0..producers {
            rec.seen_mut(id);
        }
        Verifier {
            rec,
            intervals: IntervalRecorder::new(1),
            producers,
            partitions,
            base,
            last_seq: vec![u64::MAX; producers * partitions],
            pending_verified: 0,
            counts_aborted: false,
            skips_unreadable: false,
            pending_records: 0,
            live: None,
        }
    }

    /// One record of topic `topic` (index into the run's list) at partition `part` (the run's
    /// numbering), read at `now` (ns on the run's clock).
    #[inline]
    pub(in crate::run) fn read(
        &mut self,
        m: &Message<'_>,
        topic: usize,
        part: usize,
        now: u64,
        reads: &Reads,
    ) -> Read {
        let at = At {
            topic,
            part,
            offset: m.offset(),
            bytes: m.key_value_bytes(),
            now,
        };
        self.check(
            at,
            || m.header(stamp::HEADER_C).and_then(stamp::decode),
            reads,
        )
    }

    /// The per-record checks on plain values. The stamp is looked up only when the record
    /// needs it (not for a redelivery, nor below the partition's base), as `read` did inline.
    #[inline]
    pub(in crate::run) fn check(
        &mut self,
        at: At,
        stamp: impl FnOnce() -> Option<stamp::Stamp>,
        reads: &Reads,
    ) -> Read {
        let At {
            topic,
            part,
            offset,
            bytes,
            now,
        } = at;
        let r = &mut self.rec;
        r.records += 1;
        r.bytes += bytes;
        r.consumed_by_topic[topic] += 1;
        if r.first_read_ns == 0 {
            r.first_read_ns = now;
        }
        r.last_read_ns = now;
        self.pending_records += 1;
        let next = reads.next[part].fetch_max(offset + 1, Ordering::AcqRel);
        if next > offset {
            r.redelivered_now(now);
            return Read::Redelivered;
        }
        r.partitions.first_read(part);
        if offset < self.base[part] {
            return Read::Unverified;
        }
        // Offsets skipped are records no one can read (deleted before they were read): lost,
        // not lag. Before the partition's first read, the gap runs from the run's first
        // offset, and counts only when a measured record ends it (warm-up's are not in lag).
        let first = next <= self.base[part];
        if self.skips_unreadable && !first && offset > next {
            self.intervals.unreadable(now, (offset - next) as u64);
        }
        let Some(s) = stamp() else {
            return Read::Unverified;
        };
        if self.skips_unreadable && first && s.measured && offset > self.base[part] {
            self.intervals
                .unreadable(now, (offset - self.base[part]) as u64);
        }
        let producer = s.producer as usize;
        if producer >= self.producers {
            return Read::Unverified;
        }
        if s.aborted {
            // read_committed should never hand these out: a violation, not a delivery.
            r.aborted_read += 1;
            if self.counts_aborted && s.measured {
                self.pending_verified += 1;
                self.intervals.aborted_read(now);
            }
            return Read::Verified;
        }
        if !s.measured && !s.backlog {
            return Read::Verified; // a warm-up record
        }
        if r.seen[producer].insert(s.seq) {
            r.duplicated += 1;
            return Read::Verified;
        }
        self.pending_verified += 1;
        if s.backlog {
            r.backlog_read += 1;
            self.intervals.backlog_read(now);
        } else {
            r.consumed += 1;
            let e2e = now.saturating_sub(s.intended_ns);
            record(&mut r.e2e, e2e);
            self.intervals.consumed(now, e2e);
            r.partitions.consumed(part, e2e, self.intervals.current());
            if let Some(l) = &self.live {
                l.observe(e2e);
            }
        }
        let last = &mut self.last_seq[producer * self.partitions + part];
        if *last != u64::MAX && s.seq < *last {
            r.reordered += 1;
        } else {
            *last = s.seq;
        }
        Read::Verified
    }

    /// Adds this consumer's counts since the last flush to the shared ones.
    pub(in crate::run) fn flush(&mut self, reads: &Reads) {
        if self.pending_verified > 0 {
            reads
                .verified
                .fetch_add(self.pending_verified, Ordering::AcqRel);
            self.pending_verified = 0;
        }
        if self.pending_records > 0 {
            reads
                .records
                .fetch_add(self.pending_records, Ordering::Relaxed);
            self.pending_records = 0;
        }
    }

    /// Records read since the last flush.
    #[inline]
    pub(in crate::run) fn unflushed(&self) -> u64 {
        self.pending_records
    }
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
