//! What the threads of one run and the orchestrator share: stop flags and live counters.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

/// State shared by the threads of one run and the orchestrator. The counters are for progress
/// and for the consumer's stopping rule; the figures come from each thread's own recording.
pub(crate) struct Shared {
    /// The run's clock origin: every recorded time is nanoseconds since this instant.
    pub t0: Instant,
    /// The same instant on the machine's CLOCK_MONOTONIC (ns): what another process needs to
    /// read a stamp's intended time (`stamp_origin_monotonic_ns` in the result file).
    pub t0_monotonic_ns: u64,
    interrupt: Arc<AtomicBool>,
    lost: AtomicBool,
    lost_reason: Mutex<Option<String>>,
    /// Since when no broker has answered (ns since `t0`, 0 while one does): set by a client's
    /// all-brokers-down event, cleared by `run::availability` when a broker answers again.
    down_since_ns: AtomicU64,
    /// The periods no broker answered, (from, to) ns since `t0`; `to` 0 for one still open.
    outages: Mutex<Vec<(u64, u64)>>,
    /// The last time a client heard from the cluster (an acknowledgement, a record read, an
    /// answer its statistics counted), ns since `t0`: where a period of unavailability begins.
    last_heard_ns: AtomicU64,
    /// Since when a client has had requests waiting and no answer (ns since `t0`, 0 while
    /// answers come): the first evidence of a silence (`Hearing`).
    unanswered_since_ns: AtomicU64,
    /// The longest a client can take to find every broker down (its `socket.timeout.ms`),
    /// ns: without evidence of a silence (a connection refused after an idle stretch), a
    /// period never begins earlier than this before the event, for the last answer is old news.
    down_window_ns: AtomicU64,
    /// The first other error a client reported (authentication, TLS, a broker refusing).
    client_error: Mutex<Option<String>>,
    /// Measured records sent, updated in batches (see the producer's send loop).
    pub sent: AtomicU64,
    pub acked: AtomicU64,
    pub failed: AtomicU64,
    pub producers_done: AtomicBool,
    /// When the last producer had every record reported (ns since `t0`, 0 before): the end
    /// of sending, which the progress line's rate is taken over (not the consumers' drain).
    producers_done_ns: AtomicU64,
    /// Records the consumer has read (warm-up included), for `in_flight_until = consumed`.
    pub consumed_any: AtomicU64,
    /// Measured records reported acked or failed (a failed one may have been written all the
    /// same), known once producers are done: what the consumer waits to see, up to its drain.
    pub expected: AtomicU64,
    /// Records of aborted transactions among those reported: a read_uncommitted consumer
    /// reads them too, and waits for them as it waits for `expected`.
    pub expected_aborted: AtomicU64,
    /// Where the measured phase begins on the run's clock (ns since `t0`): the time series'
    /// t = 0 for every thread. Set by the orchestrator before it releases the threads.
    pub measure_origin_ns: AtomicU64,
    /// `warmup = auto`: when the first thread began its warm-up (ns since `t0`, 0 before), and
    /// whether a thread's warm-up ended at its bound rather than settled.
    warmup_started_ns: AtomicU64,
    warmup_bound: AtomicBool,
    /// Bit i set: the group's consumer i is stopped (a fault of the timeline); it leaves the
    /// group, and rejoins when the bit is cleared.
    pub consumer_stopped: AtomicU64,
    /// The consumers stopped from the first instant (`consumer_stopped`'s bits) and when
    /// (ns since `t0`): before the clock, so that they read no measured record.
    stopped_at_start: (AtomicU64, AtomicU64),
    /// Backlog records the producers wrote and had acknowledged before the clock started.
    pub backlog_written: AtomicU64,
    /// A cold backlog: the producers that have written their share of it, whether the wait
    /// for remote storage is over (they go on to warm-up then), and what it found.
    backlog_done: AtomicU64,
    cold_ready: AtomicBool,
    cold: Mutex<Option<Result<super::offload::Waited, String>>>,
    /// Producers whose measured records are all acknowledged or failed, and how many records
    /// they reported: the consumers learn the expected count from the last one at once,
    /// not when the producer threads end.
    drained: AtomicU64,
    reported: AtomicU64,
    reported_aborted: AtomicU64,
    /// Latency buckets counted as records are recorded, for `--metrics`; None without it.
    pub live: Option<super::live::LiveLatency>,
    /// CPU time the clients' worker processes spent over their measured phase (ns), added by
    /// each as it ends: kafkabench's own load includes them.
    pub worker_cpu_ns: AtomicU64,
}

impl Shared {
    #[cfg(test)]
    pub(crate) fn new(interrupt: Arc<AtomicBool>) -> Shared {
        Shared::with_live(interrupt, None)
    }

    /// With live latency buckets (`--metrics`).
    pub(crate) fn with_live(
        interrupt: Arc<AtomicBool>,
        live: Option<super::live::LiveLatency>,
    ) -> Shared {
        let t0 = Instant::now();
        Shared {
            t0,
            t0_monotonic_ns: (super::cpu::monotonic().as_nanos() as u64)
                .saturating_sub(t0.elapsed().as_nanos() as u64),
            interrupt,
            lost: AtomicBool::new(false),
            lost_reason: Mutex::new(None),
            down_since_ns: AtomicU64::new(0),
            last_heard_ns: AtomicU64::new(0),
            unanswered_since_ns: AtomicU64::new(0),
            down_window_ns: AtomicU64::new(u64::MAX),
            outages: Mutex::new(Vec::new()),
            client_error: Mutex::new(None),
            sent: AtomicU64::new(0),
            acked: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            producers_done: AtomicBool::new(false),
            producers_done_ns: AtomicU64::new(0),
            consumed_any: AtomicU64::new(0),
            expected: AtomicU64::new(u64::MAX),
            measure_origin_ns: AtomicU64::new(0),
            warmup_started_ns: AtomicU64::new(0),
            warmup_bound: AtomicBool::new(false),
            consumer_stopped: AtomicU64::new(0),
            stopped_at_start: (AtomicU64::new(0), AtomicU64::new(0)),
            backlog_written: AtomicU64::new(0),
            backlog_done: AtomicU64::new(0),
            cold_ready: AtomicBool::new(false),
            cold: Mutex::new(None),
            drained: AtomicU64::new(0),
            reported: AtomicU64::new(0),
            reported_aborted: AtomicU64::new(0),
            worker_cpu_ns: AtomicU64::new(0),
            expected_aborted: AtomicU64::new(0),
            live,
        }
    }

    /// Stop producing: Ctrl-C, or the cluster is gone.
    #[inline]
    pub(crate) fn stopping(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed) || self.lost.load(Ordering::Relaxed)
    }

    pub(crate) fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }

    /// The cluster is gone: nothing more will be delivered, so nothing waits for it.
    pub(crate) fn lost(&self) -> bool {
        self.lost.load(Ordering::Relaxed)
    }

    /// Marks the cluster lost; the first reason given is the one reported.
    pub(crate) fn cluster_lost(&self, reason: String) {
        if !self.lost.swap(true, Ordering::AcqRel) {
            *self.lost_reason.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
        }
    }

    /// A client found every broker down (librdkafka's all-brokers-down): the start of a period
    /// of unavailability, unless one is open already. Not the end of the run: that is
    /// `run::availability`'s to decide, at `cluster { lost_after }`.
    /// The period begins with the last answer a client had: librdkafka says so only once a
    /// request timed out (`socket.timeout.ms`) or every connection failed.
    pub(crate) fn brokers_down(&self) {
        let now = self.t0.elapsed().as_nanos() as u64;
        let heard = self.last_heard_ns.load(Ordering::Relaxed);
        let unanswered = self.unanswered_since_ns.load(Ordering::Relaxed);
        let window = self.down_window_ns.load(Ordering::Relaxed);
        // The silence began after the last answer, and no later than the first request left
        // unanswered; with no such request seen, no earlier than a client's timeout allows.
        let since = if heard > 0 && heard <= now {
            if unanswered > 0 && unanswered <= now {
                heard.max(unanswered)
            } else {
                heard.max(now.saturating_sub(window))
            }
        } else {
            now
        }
        .max(1);
        let _ = self
            .down_since_ns
            .compare_exchange(0, since, Ordering::AcqRel, Ordering::Acquire);
    }

    /// How long a client may take to report every broker down (`socket.timeout.ms`).
    pub(crate) fn set_down_window(&self, window: std::time::Duration) {
        self.down_window_ns
            .store(window.as_nanos() as u64, Ordering::Relaxed);
    }

    /// A client's requests have waited since `at_ns` with no answer (the first such time is
    /// kept until an answer comes).
    pub(crate) fn unanswered(&self, at_ns: u64) {
        let _ = self.unanswered_since_ns.compare_exchange(
            0,
            at_ns.max(1),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }

    /// A client had an answer: no silence is under way.
    pub(crate) fn answered(&self) {
        self.unanswered_since_ns.store(0, Ordering::Release);
    }

    /// A client heard from the cluster at `at_ns` (once per batch of acknowledgements or of
    /// records read, not per record).
    #[inline]
    pub(crate) fn heard(&self, at_ns: u64) {
        self.last_heard_ns.fetch_max(at_ns, Ordering::Relaxed);
    }

    /// Since when no broker has answered (ns since `t0`), while none does.
    pub(crate) fn down_since(&self) -> Option<u64> {
        Some(self.down_since_ns.load(Ordering::Acquire)).filter(|t| *t > 0)
    }

    /// A broker answered at `at_ns`: the period that began at `since_ns` ends.
    pub(crate) fn brokers_back(&self, since_ns: u64, at_ns: u64) {
        if self
            .down_since_ns
            .compare_exchange(since_ns, 0, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            // The answer that ended it is heard too: a second period starts after this one.
            self.heard(at_ns);
            self.answered();
            self.outages
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((since_ns, at_ns.max(since_ns)));
        }
    }

    /// The periods no broker answered, (from, to) ns since `t0`; one still open (the run
    /// ended, or the cluster was lost, before a broker answered) ends at 0.
    pub(crate) fn outages(&self) -> Vec<(u64, u64)> {
        let mut all = self
            .outages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(since) = self.down_since() {
            all.push((since, 0));
        }
        all
    }

    /// A producer has written its share of the backlog.
    pub(crate) fn backlog_written_by_one(&self) {
        self.backlog_done.fetch_add(1, Ordering::AcqRel);
    }

    /// How many producers have written their share of the backlog.
    pub(crate) fn backlog_writers_done(&self) -> u64 {
        self.backlog_done.load(Ordering::Acquire)
    }

    /// The wait for a cold backlog is over (with what it found): the producers go on.
    pub(crate) fn cold_waited(&self, found: Result<super::offload::Waited, String>) {
        *self.cold.lock().unwrap_or_else(|e| e.into_inner()) = Some(found);
        self.cold_ready.store(true, Ordering::Release);
    }

    pub(crate) fn cold_ready(&self) -> bool {
        self.cold_ready.load(Ordering::Acquire)
    }

    /// What the wait for a cold backlog found (None: no such wait, or it never ended).
    pub(crate) fn take_cold(&self) -> Option<Result<super::offload::Waited, String>> {
        self.cold.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Keeps the first client error; later ones are usually its consequences.
    pub(crate) fn client_error(&self, reason: String) {
        self.client_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(reason);
    }

    pub(crate) fn first_client_error(&self) -> Option<String> {
        self.client_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// One of `of` producers has every measured record acknowledged or failed (`reported`
    /// of them, and `aborted` more in aborted transactions); the last one sets what the
    /// consumers expect and marks the producers done.
    pub(crate) fn producer_drained(&self, reported: u64, aborted: u64, of: u64) {
        self.reported.fetch_add(reported, Ordering::AcqRel);
        self.reported_aborted.fetch_add(aborted, Ordering::AcqRel);
        if self.drained.fetch_add(1, Ordering::AcqRel) + 1 == of {
            self.expected_aborted.store(
                self.reported_aborted.load(Ordering::Acquire),
                Ordering::Release,
            );
            self.expected
                .store(self.reported.load(Ordering::Acquire), Ordering::Release);
            self.producers_done_ns
                .store(self.t0.elapsed().as_nanos() as u64, Ordering::Release);
            self.producers_done.store(true, Ordering::Release);
        }
    }

    /// How long the measured phase sent and had its records reported; None while it does.
    pub(crate) fn sending_time(&self) -> Option<std::time::Duration> {
        let done = self.producers_done_ns.load(Ordering::Acquire);
        (done > 0)
            .then(|| std::time::Duration::from_nanos(done.saturating_sub(self.measure_origin())))
    }

    /// An automatic warm-up begins (the first thread's start counts).
    pub(crate) fn warmup_started(&self) {
        let now = (self.t0.elapsed().as_nanos() as u64).max(1);
        let _ =
            self.warmup_started_ns
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire);
    }

    /// An automatic warm-up ended at its bound, not settled.
    pub(crate) fn warmup_bound_reached(&self) {
        self.warmup_bound.store(true, Ordering::Release);
    }

    /// What an automatic warm-up chose: its length up to the measured phase, and whether a
    /// thread reached the bound. None without one (or before the measured phase).
    pub(crate) fn auto_warmup(&self) -> Option<(std::time::Duration, bool)> {
        let (from, to) = (
            self.warmup_started_ns.load(Ordering::Acquire),
            self.measure_origin(),
        );
        (from > 0 && to >= from).then(|| {
            (
                std::time::Duration::from_nanos(to - from),
                self.warmup_bound.load(Ordering::Acquire),
            )
        })
    }

    /// Marks now as the start of the measured phase.
    pub(crate) fn start_measuring(&self) {
        // Never 0: 0 means warm-up still runs.
        let now = (self.t0.elapsed().as_nanos() as u64).max(1);
        self.measure_origin_ns.store(now, Ordering::Release);
    }

    /// Stops the consumers of `mask` before the clock starts (`at 0s stop consumer N`): they
    /// leave their group as soon as the readers are let go (`readers_let_go`).
    pub(crate) fn stop_consumers_at_start(&self, mask: u64) {
        self.stopped_at_start.0.store(mask, Ordering::Release);
        self.consumer_stopped.fetch_or(mask, Ordering::AcqRel);
    }

    /// The readers, every one ready, are let go: a consumer stopped from the first instant
    /// leaves its group now (its leave's time).
    pub(crate) fn readers_let_go(&self) {
        let now = self.t0.elapsed().as_nanos() as u64;
        self.stopped_at_start.1.store(now, Ordering::Release);
    }

    /// When consumer `bit` was stopped before the clock, in seconds from the measured
    /// phase's start (negative); None when it was not stopped from the first instant.
    pub(crate) fn stopped_before_clock(&self, bit: u64) -> Option<f64> {
        let at = self.stopped_at_start.1.load(Ordering::Acquire);
        (self.stopped_at_start.0.load(Ordering::Acquire) & bit != 0 && at > 0 && self.measuring())
            .then(|| (at as f64 - self.measure_origin() as f64) / 1e9)
    }

    pub(crate) fn measure_origin(&self) -> u64 {
        self.measure_origin_ns.load(Ordering::Acquire)
    }

    /// Whether the measured phase has begun (warm-up is over).
    pub(crate) fn measuring(&self) -> bool {
        self.measure_origin() > 0
    }

    /// Where the measured phase began, as time since `t0`.
    pub(crate) fn measure_origin_elapsed(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.measure_origin())
    }

    pub(crate) fn lost_reason(&self) -> Option<String> {
        self.lost_reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// One meeting of a run's threads and its orchestrator: all arrived (the orchestrator acts),
/// then go. Producers and share-group members meet twice: before warm-up and before the
/// measured phase (librdkafka's consumers meet only once, ready, and read on).
pub(super) fn meet(b: &Barrier) {
    b.wait();
    b.wait();
}

/// A thread that cannot take part still meets the orchestrator at every point, so nothing
/// waits for it forever.
pub(super) fn skip_meetings(b: &Barrier) {
    meet(b);
    meet(b);
}

/// A client's answers so far (the `rx` of librdkafka's statistics, over its brokers): when they
/// grow, a broker answered since the previous document, even with no record to show for it (a
/// consumer's empty fetches, an idle producer's metadata). When they do not while requests
/// wait, the silence has begun. An idle client, asking nothing, is evidence of neither: so a
/// period after an idle stretch begins at the first question left unanswered, not at the last
/// record.
#[derive(Default)]
pub(crate) struct Hearing {
    rx: u64,
    at_ns: u64,
}

impl Hearing {
    /// One statistics document, seen at `now_ns`: an answer since the previous one is taken
    /// at the previous one's time, and so is a request left waiting (the earliest either can
    /// have come).
    pub(crate) fn stats(
        &mut self,
        s: &rdkafka::statistics::Statistics,
        now_ns: u64,
        shared: &Shared,
    ) {
        let rx: u64 = s.brokers.values().map(|b| b.rx).sum();
        let waiting: i64 = s
            .brokers
            .values()
            .map(|b| b.waitresp_cnt.max(0) + b.outbuf_cnt.max(0))
            .sum();
        if self.at_ns > 0 {
            if rx > self.rx {
                shared.heard(self.at_ns);
                shared.answered();
            } else if waiting > 0 {
                shared.unanswered(self.at_ns);
            }
        }
        self.rx = rx;
        self.at_ns = now_ns;
    }
}
