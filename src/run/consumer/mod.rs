//! The consumers: read the run's topics back on their own threads, measure end-to-end latency
//! from each record's intended send time, verify delivery (lost, duplicated, reordered), and,
//! as a group, measure what reading costs (rebalances, lag, fetches, a backlog's drain).
//!
//! Without `consumers`, one verification consumer assigns every partition by hand; with
//! `consumers = N`, N clients subscribe as one group. Both read through `native::consumer`
//! (the C API; see there for why) and verify through `verify`; `group` keeps a consumer's
//! membership, commits and statistics; `fetch` sees its fetchers start and partitions end.

mod fetch;
mod group;
mod queue;
mod reader;
mod verify;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::BaseConsumer;

pub(super) use fetch::ends;
pub(super) use group::{Layout, Membership};
use reader::Reader;
pub(super) use verify::{At, Reads, Verifier};

use super::shard::Shard;
use super::shared::{Hearing, Shared};
use crate::measure::ConsumerRecording;
use crate::model::CommitPolicy;
use crate::native::consumer::{self as native};

/// How long a consumer waits for its partitions (and the group to settle) before the clock
/// starts without it being ready.
const READY_BOUND: Duration = Duration::from_secs(20);
/// Shared counts move once per this many records read.
const FLUSH_EVERY: u64 = 64;

pub(super) struct ConsumerJob {
    pub config: ClientConfig,
    pub layout: Arc<Layout>,
    /// Per run partition, the first offset this run wrote (an existing topic's end; 0 for a
    /// topic the run created): records below it are read and counted, not verified.
    pub base: Arc<Vec<i64>>,
    /// Consumer i of the run; bit i of `Shared.consumer_stopped` stops it.
    pub index: u32,
    /// How many consumers read the run (the group's size).
    pub of: u32,
    /// Subscribe as a group member; false: partitions assigned by hand.
    pub group: bool,
    pub commit: CommitPolicy,
    /// A backlog waits for the clock: nothing is read before it starts, and the drain (every
    /// partition read to its end) is timed.
    pub backlog: bool,
    /// Read an existing topic from its beginning (its records are the backlog).
    pub from_beginning: bool,
    pub producers: u32,
    /// Count each read in `Shared.consumed_any` at once (`in_flight_until = consumed` waits).
    pub prompt: bool,
    /// read_uncommitted: the records of aborted transactions are read too, and waited for.
    pub reads_aborted: bool,
    /// The run's producers write transactions (their markers take offsets).
    pub transactions: bool,
    pub shared: Arc<Shared>,
    pub reads: Arc<Reads>,
    /// Met once, when the consumer is ready: it then reads through warm-up (see `run`).
    pub ready: Arc<Barrier>,
    /// Once nothing more is read for this long after the producers finish, stop.
    pub drain: Duration,
    /// Width of the time series' intervals; whether latency is kept by due time too.
    pub interval: Duration,
    pub by_due: bool,
    /// A shard reads only its own partitions (assigned by hand; a group is refused).
    pub shard: Option<Shard>,
}

impl ConsumerJob {
    /// Ready when it has its partitions and has read each (or found it empty); with a
    /// backlog, when it has them (paused); in a group, when every member is. The one rule for
    /// every client's reader: `own_reached` says whether this reader has read its partitions.
    pub(super) fn ready(&self, own_reached: impl FnOnce() -> bool) -> bool {
        if !self.group {
            return self.backlog || own_reached();
        }
        let all = if self.of >= 64 {
            u64::MAX
        } else {
            (1u64 << self.of) - 1
        };
        self.reads.ready.load(Ordering::Acquire) & all == all
    }

    /// A group member's part of `ready`: its bit, once it has an assignment and has read it.
    pub(super) fn mark_ready(&self, has_assignment: bool, own_reached: impl FnOnce() -> bool) {
        if self.group && has_assignment && (self.backlog || own_reached()) {
            let bit = 1u64 << (self.index % 64);
            self.reads.ready.fetch_or(bit, Ordering::AcqRel);
        }
    }
}

/// When a reader stops once the producers are done, whatever the client: every record
/// expected is verified (and a backlog drained), or nothing more was read for `drain`.
pub(super) struct DrainEnd {
    /// Records read at the last change, and when it was seen.
    progress: (u64, Instant),
}

impl DrainEnd {
    pub(super) fn new() -> DrainEnd {
        DrainEnd {
            progress: (u64::MAX, Instant::now()),
        }
    }

    /// Whether `job`'s reader is done, asked after the producers finished.
    pub(super) fn done(&mut self, job: &ConsumerJob) -> bool {
        let shared = &job.shared;
        let aborted = if job.reads_aborted {
            shared.expected_aborted.load(Ordering::Acquire)
        } else {
            0
        };
        let expected = (shared.expected.load(Ordering::Acquire))
            .saturating_add(shared.backlog_written.load(Ordering::Acquire))
            .saturating_add(aborted);
        let verified = job.reads.verified.load(Ordering::Acquire);
        if verified >= expected && (!job.backlog || job.reads.drained()) {
            return true;
        }
        let read = job.reads.records.load(Ordering::Relaxed);
        if read != self.progress.0 {
            self.progress = (read, Instant::now());
            false
        } else {
            self.progress.1.elapsed() >= job.drain
        }
    }
}

/// What the consumer measured, and the first error it met (reported as a note).
pub(super) struct ConsumerOutcome {
    pub recording: ConsumerRecording,
    pub error: Option<String>,
    /// The share of the measured phase the reading thread was on a CPU.
    pub busy: Option<f64>,
}

pub(super) fn run(job: ConsumerJob) -> ConsumerOutcome {
    let consumer: BaseConsumer = match job.config.create() {
        Ok(c) => c,
        Err(e) => return not_started(&job, format!("cannot create consumer: {e}")),
    };
    let n = job.layout.len();
    let mut r = Reader {
        job: &job,
        consumer: &consumer,
        native: native::Consumer::new(&consumer),
        v: Verifier::new(
            job.producers as usize,
            n,
            job.layout.topics.len(),
            job.base.to_vec(),
        ),
        m: Membership::new(job.commit.clone(), n, classic(&job.config)),
        measuring: false,
        subscribed: false,
        mine: vec![false; n],
        reached: vec![false; n],
        leader: vec![-1; n],
        last_read: vec![0; n],
        topic_cache: (0, usize::MAX),
        queue: queue::QueueWatch::new(&job.config, n),
        hold_back: std::env::var("KAFKABENCH_TEST_HOLD_READER_US")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_micros),
        hearing: Hearing::default(),
        trips_taken: false,
        error: None,
    };
    r.v.counts_aborted = job.reads_aborted;
    r.v.skips_unreadable = !job.transactions;
    r.v.live = (job.shared.live.as_ref())
        .and_then(|l| l.e2e.get(job.index as usize))
        .cloned();
    if let Err(e) = r.join() {
        drop(r);
        return not_started(&job, e);
    }
    // Ready before the clock: partitions assigned (the group settled) and the fetchers
    // started, so end-to-end latency does not include joining or connecting.
    let ready_by = Instant::now() + READY_BOUND;
    while !r.ready() && Instant::now() < ready_by && !job.shared.stopping() {
        r.step(20);
    }
    job.ready.wait();
    // Reading goes on through warm-up: a reader parked at a barrier lets librdkafka's fetch
    // queue fill and back off (`fetch.queue.backoff.ms`), a stall of kafkabench's own making.
    // The clock's start is seen at the first record after it (`step`), or here.
    while !r.measuring && !job.shared.stopping() {
        if job.group {
            r.follow_stop_bit(); // stopped from the first instant: it leaves before reading
        }
        if job.shared.measuring() {
            r.start_measuring();
        } else {
            r.step(10);
        }
    }
    if !r.measuring {
        r.start_measuring(); // stopped in warm-up: what follows only reports
    }
    let (cpu, from) = (super::cpu::thread(), Instant::now());
    r.read_until_done();
    let mut out = r.finish();
    out.busy = super::cpu::busy_since(cpu, from.elapsed().as_nanos() as u64);
    out
}

/// Whether the consumer's group uses the classic protocol (librdkafka's default).
fn classic(config: &ClientConfig) -> bool {
    !config
        .get("group.protocol")
        .is_some_and(|p| p.eq_ignore_ascii_case("consumer"))
}

fn not_started(job: &ConsumerJob, error: String) -> ConsumerOutcome {
    job.ready.wait();
    ConsumerOutcome {
        recording: ConsumerRecording::empty(),
        error: Some(error),
        busy: None,
    }
}
