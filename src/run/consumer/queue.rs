//! How far the reader is behind its own fetchers. librdkafka's statistics say, every 500 ms,
//! up to which offset each partition has been fetched; the reader notes when it then reads
//! that offset. The time between is how long the last record fetched waited in kafkabench's
//! own queue, not for the cluster. (The statistics document itself jumps the queue: librdkafka
//! queues it at high priority, so its own age says nothing.)
//!
//! The last offset fetched is not always a record the reader gets: a transaction's marker, or
//! an aborted record a read_committed reader never sees. So a mark is also settled when the
//! queue is known to be empty (the statistics say so, or a poll found nothing): everything
//! fetched by then was handed over, the last of it when the partition's last record was read.

use rdkafka::statistics::Statistics;
use rdkafka::ClientConfig;

use super::group::Layout;
use crate::measure::ReaderQueue;

/// No offset awaited on a partition.
const NONE: i64 = i64::MAX;

/// The reader's watch over its queue: librdkafka's thresholds, and per run partition the
/// fetched offset it waits to read and when that offset had been fetched (ns, run's clock),
/// and the last offset it read and when.
pub(super) struct QueueWatch {
    records: i64,
    bytes: u64,
    marks: Vec<(i64, u64)>,
    last: Vec<(i64, u64)>,
}

impl QueueWatch {
    /// From the consumer's properties (the plan writes both thresholds; librdkafka's defaults
    /// otherwise), for `partitions` run partitions.
    pub(super) fn new(config: &ClientConfig, partitions: usize) -> QueueWatch {
        let get = |k: &str, default: u64| {
            config
                .get(k)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(default)
        };
        QueueWatch {
            records: get("queued.min.messages", 100_000) as i64,
            // librdkafka multiplies by 1000, not 1024 (`rd_kafka_new`'s config fixups).
            bytes: get("queued.max.messages.kbytes", 65_536) * 1000,
            marks: vec![(NONE, 0); partitions],
            last: vec![(-1, 0); partitions],
        }
    }

    /// One statistics document, taken by the reader at `now_ns` on the run's clock (whose
    /// clock, like librdkafka's `ts`, is the monotonic one).
    pub(super) fn sample(
        &mut self,
        q: &mut ReaderQueue,
        s: &Statistics,
        layout: &Layout,
        now_ns: u64,
    ) {
        let age_ns =
            (super::super::cpu::monotonic().as_micros() as i64 - s.ts).max(0) as u64 * 1000;
        let written_ns = now_ns.saturating_sub(age_ns);
        q.samples += 1;
        // Every partition forwards to the consumer's one queue and reports its size.
        let parts = || (s.topics.values()).flat_map(|t| t.partitions.values());
        let queued = parts()
            .filter(|p| p.partition >= 0)
            .map(|p| p.fetchq_cnt)
            .max();
        let queued_bytes = parts()
            .filter(|p| p.partition >= 0)
            .map(|p| p.fetchq_size)
            .max();
        if queued.unwrap_or(0) >= self.records || queued_bytes.unwrap_or(0) >= self.bytes {
            q.full += 1;
        }
        if queued == Some(0) {
            // Nothing waited in the queue when the statistics were written.
            self.drained(q);
            return;
        }
        for (name, t) in &s.topics {
            for p in t.partitions.values().filter(|p| p.partition >= 0) {
                let Some((_, part)) = layout.index(name.as_bytes(), p.partition) else {
                    continue;
                };
                self.fetched(part, p.next_offset - 1, written_ns);
            }
        }
    }

    /// The queue is empty: every mark is settled by its partition's last read (no wait when
    /// that came before the mark; the offset marked was one the reader never gets).
    pub(super) fn drained(&mut self, q: &mut ReaderQueue) {
        for (mark, &(_, read_at)) in self.marks.iter_mut().zip(&self.last) {
            if mark.0 != NONE {
                q.wait_max_ns = q.wait_max_ns.max(read_at.saturating_sub(mark.1));
                *mark = (NONE, 0);
            }
        }
    }

    /// Offsets up to `fetched` of run partition `part` had been fetched at `at_ns`: watch for
    /// the read of the last, when it was not read yet and no earlier mark still waits (its
    /// wait is the longer one).
    fn fetched(&mut self, part: usize, fetched: i64, at_ns: u64) {
        if fetched > self.last[part].0 && self.marks[part].0 == NONE {
            self.marks[part] = (fetched, at_ns);
        }
    }

    /// The record at `offset` of run partition `part` was read at `now_ns`.
    #[inline]
    pub(super) fn read(&mut self, q: &mut ReaderQueue, part: usize, offset: i64, now_ns: u64) {
        self.last[part] = (offset, now_ns);
        let (mark, at) = self.marks[part];
        if offset >= mark {
            q.wait_max_ns = q.wait_max_ns.max(now_ns.saturating_sub(at));
            self.marks[part] = (NONE, 0);
        }
    }

    /// Marks from before the clock's start say nothing of the measured phase.
    pub(super) fn forget(&mut self) {
        self.marks.iter_mut().for_each(|m| *m = (NONE, 0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch() -> QueueWatch {
        let mut c = ClientConfig::new();
        c.set("queued.max.messages.kbytes", "1024");
        QueueWatch::new(&c, 2)
    }

    #[test]
    fn the_thresholds_are_librdkafkas_units() {
        let w = watch();
        assert_eq!(w.bytes, 1_024_000);
        assert_eq!(w.records, 100_000);
    }

    #[test]
    fn the_wait_runs_from_the_fetch_to_the_read_of_the_last_offset_fetched() {
        let (mut w, mut q) = (watch(), ReaderQueue::default());
        w.fetched(1, 99, 1_000);
        w.read(&mut q, 1, 98, 5_000); // still before it
        w.read(&mut q, 0, 500, 6_000); // another partition
        assert_eq!(q.wait_max_ns, 0);
        w.read(&mut q, 1, 99, 9_000);
        assert_eq!(q.wait_max_ns, 8_000);
        w.read(&mut q, 1, 100, 90_000); // no mark any more
        assert_eq!(q.wait_max_ns, 8_000);
    }

    #[test]
    fn nothing_fetched_beyond_what_was_read_is_not_watched() {
        // A quiet partition: its next record may come long after the statistics.
        let (mut w, mut q) = (watch(), ReaderQueue::default());
        w.read(&mut q, 0, 41, 1_000);
        w.fetched(0, 41, 2_000); // everything fetched was read
        w.read(&mut q, 0, 42, 5_000_000_000);
        assert_eq!(q.wait_max_ns, 0);
    }

    #[test]
    fn a_last_offset_never_handed_over_is_settled_when_the_queue_is_empty() {
        // Offset 99 is a transaction's marker: the reader gets 98, never 99, and the next
        // record comes with the next transaction, long after.
        let (mut w, mut q) = (watch(), ReaderQueue::default());
        w.fetched(1, 99, 1_000);
        w.read(&mut q, 1, 98, 4_000);
        w.drained(&mut q);
        assert_eq!(q.wait_max_ns, 3_000);
        w.read(&mut q, 1, 150, 9_000_000_000);
        assert_eq!(q.wait_max_ns, 3_000);
        // A mark after the partition's last read settles with no wait.
        w.fetched(0, 10, 20_000);
        w.drained(&mut q);
        assert_eq!(q.wait_max_ns, 3_000);
        assert!(w.marks.iter().all(|m| m.0 == NONE));
    }
}
