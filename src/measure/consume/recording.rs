//! What a consumer thread records while it reads, and how the run's consumers merge.

use hdrhistogram::Histogram;

use super::super::new_histogram;
use super::{FetchTrips, IntervalRecording, ReadPlaces, SeqSet};

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
    pub share: Option<crate::measure::ShareRecording>,
    /// How far behind its own fetchers the reader was, over the measured phase.
    pub queue: ReaderQueue,
    /// With a backlog: the fetch round trips while it drained.
    pub fetch_trips: FetchTrips,
    /// By partition, for a run over one topic (`consume::places`); empty otherwise.
    pub partitions: ReadPlaces,
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
            partitions: ReadPlaces::default(),
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
            out.partitions.absorb(&c.partitions);
            if first {
                out.intervals = c.intervals;
                first = false;
            } else {
                out.intervals.absorb(c.intervals);
            }
        }
        // A share group's unanswered acknowledgements: known only over every member's reads.
        crate::measure::share::settle_unanswered(&mut out);
        out
    }
}

pub(super) fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}
