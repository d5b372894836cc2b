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
    /// The last time a client heard from the cluster (an acknowledgement, a record read, the
    /// last receive its statistics saw: `Hearing`), ns since `t0`: where a period of
    /// unavailability begins.
    last_heard_ns: AtomicU64,
    /// The longest a client can take to find every broker down (its `socket.timeout.ms`),
    /// ns: a period never begins earlier than this before the event (an idle client's last
    /// answer is old news).
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
    /// The period begins with the last answer any client had (librdkafka says so only once a
    /// request timed out, `socket.timeout.ms`, or every connection failed), but not before
    /// the reporting client began asking (`asking_since`, `Hearing`): a client idle after
    /// its last answer was not asking, so the silence cannot be dated from it. Without
    /// statistics to tell, no earlier than a client's timeout allows.
    pub(crate) fn brokers_down(&self, asking_since: Option<u64>) {
        let now = self.t0.elapsed().as_nanos() as u64;
        let heard = self.last_heard_ns.load(Ordering::Relaxed);
        let window = self.down_window_ns.load(Ordering::Relaxed);
        let since = match asking_since.filter(|a| *a <= now) {
            Some(asked) => heard.min(now).max(asked),
            None if heard > 0 && heard <= now => heard.max(now.saturating_sub(window)),
            None => now,
        }
        .max(1);
        let _ = self
            .down_since_ns
            .compare_exchange(0, since, Ordering::AcqRel, Ordering::Acquire);
    }

    /// No broker answered the availability probe: a period begins at `since` (the last answer
    /// a client or the probe had), unless one is open already.
    pub(crate) fn unreachable_since(&self, since: u64) {
        let _ = self.down_since_ns.compare_exchange(
            0,
            since.max(1),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }

    /// The last answer any client had (ns since `t0`, 0 before the first).
    pub(crate) fn last_heard(&self) -> u64 {
        self.last_heard_ns.load(Ordering::Relaxed)
    }

    /// How long a client may take to report every broker down (`socket.timeout.ms`).
    pub(crate) fn set_down_window(&self, window: std::time::Duration) {
        self.down_window_ns
            .store(window.as_nanos() as u64, Ordering::Relaxed);
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

/// A client's last answer, from its statistics: each broker's `rxidle` is how long before the
/// document its connection last received anything (µs; -1 for a broker not connected), and
/// the document's `ts` is when it was made, on librdkafka's clock, CLOCK_MONOTONIC: the run's
/// own. So the last answer is `ts` less the smallest `rxidle`, whatever the statistics
/// interval: a document made a second into a silence still says when the silence began (an
/// earlier way, taking the previous document's time once answers stopped growing, began
/// periods 0.26–0.49 s late at 500 ms documents). An idle consumer's empty fetches are
/// answers too.
///
/// And since when the client has been asking without an answer: from its last answer when it
/// was asking (requests waiting, records to deliver, a connection being made) in every
/// document since, or from the last document in which it was not (an idle client's first
/// question came after that one). A period of unavailability
/// that this client reports does not begin before it.
#[derive(Default)]
pub(crate) struct Hearing {
    last_ns: Option<u64>,
    asking: Option<u64>,
    /// The previous document's time on the run's clock.
    prev_ns: u64,
}

impl Hearing {
    /// One statistics document, seen at `now_ns`.
    pub(crate) fn stats(
        &mut self,
        s: &rdkafka::statistics::Statistics,
        now_ns: u64,
        shared: &Shared,
    ) {
        // Asking: requests waiting, records still to deliver, or a connection being made
        // (after a timeout the requests go back to a queue while the client reconnects).
        let waiting = s.msg_cnt > 0
            || s.brokers.values().any(|b| {
                b.waitresp_cnt > 0
                    || b.outbuf_cnt > 0
                    || (b.source != "internal" && !matches!(b.state.as_str(), "UP" | "INIT"))
            });
        let answer = last_answer_ns(s, shared.t0_monotonic_ns, now_ns);
        let at = doc_ns(s, shared.t0_monotonic_ns).unwrap_or(now_ns);
        match answer.filter(|a| self.last_ns.map_or(true, |l| *a > l)) {
            Some(a) => {
                shared.heard(a);
                self.last_ns = Some(a);
                self.asking = waiting.then_some(a);
            }
            // A client never answered has no silence to date (the fallback's window does).
            None if waiting && self.last_ns.is_some() => {
                self.asking.get_or_insert(self.prev_ns);
            }
            None => self.asking = None,
        }
        self.prev_ns = at;
    }

    /// Since when this client has been asking without an answer (ns since `t0`); None while
    /// it asks nothing, or before its first statistics.
    pub(crate) fn asking_since(&self) -> Option<u64> {
        self.asking
    }
}

/// When the document was made, ns since the run's `t0` (Linux: librdkafka's clock is
/// CLOCK_MONOTONIC); None elsewhere or before `t0`.
fn doc_ns(s: &rdkafka::statistics::Statistics, t0_monotonic_ns: u64) -> Option<u64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    u64::try_from(s.ts)
        .ok()?
        .checked_mul(1000)?
        .checked_sub(t0_monotonic_ns)
}

/// When a client last received anything from a broker, ns since the run's `t0`; None when no
/// connected broker has answered yet (or the answer was before `t0`).
fn last_answer_ns(
    s: &rdkafka::statistics::Statistics,
    t0_monotonic_ns: u64,
    now_ns: u64,
) -> Option<u64> {
    let idle_us = s
        .brokers
        .values()
        .map(|b| b.rxidle)
        .filter(|i| *i >= 0)
        .min()?;
    if cfg!(target_os = "linux") {
        let at_us = u64::try_from(s.ts.checked_sub(idle_us)?).ok()?;
        at_us.checked_mul(1000)?.checked_sub(t0_monotonic_ns)
    } else {
        // librdkafka's clock is not CLOCK_MONOTONIC everywhere: the document's age is taken
        // as nothing.
        now_ns.checked_sub(u64::try_from(idle_us).ok()?.checked_mul(1000)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(ts_us: i64, rxidle_us: &[i64]) -> rdkafka::statistics::Statistics {
        let mut s = rdkafka::statistics::Statistics {
            ts: ts_us,
            ..Default::default()
        };
        for (i, idle) in rxidle_us.iter().enumerate() {
            let b = rdkafka::statistics::Broker {
                rxidle: *idle,
                state: "UP".into(),
                ..Default::default()
            };
            s.brokers.insert(format!("b{i}"), b);
        }
        s
    }

    #[test]
    fn the_last_answer_is_the_documents_time_less_the_smallest_idle() {
        // t0 at 5 s on the monotonic clock; the document made at 12 s; one broker last
        // answered 700 ms before it, another 2 s before, a third never connected.
        let s = stats(12_000_000, &[2_000_000, 700_000, -1]);
        let at = last_answer_ns(&s, 5_000_000_000, 0);
        if cfg!(target_os = "linux") {
            assert_eq!(at, Some(6_300_000_000));
        }
        assert_eq!(last_answer_ns(&stats(12_000_000, &[-1, -1]), 0, 0), None);
    }

    fn doc(ts_ms: i64, rxidle_ms: i64, waiting: bool) -> rdkafka::statistics::Statistics {
        let mut s = stats(ts_ms * 1000, &[rxidle_ms * 1000]);
        for b in s.brokers.values_mut() {
            b.waitresp_cnt = i64::from(waiting);
        }
        s
    }

    #[test]
    fn a_busy_client_asks_from_its_last_answer_an_idle_one_from_its_first_question() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let shared = Shared::new(Arc::new(AtomicBool::new(false)));
        let t0 = shared.t0_monotonic_ns / 1_000_000;
        // `m` ms after the whole millisecond the documents count from, on the run's clock.
        let ms = |m: u64| (t0 + m) * 1_000_000 - shared.t0_monotonic_ns;
        // Busy: answered every few ms until 1 210 ms, then asking unanswered.
        let mut busy = Hearing::default();
        busy.stats(&doc(t0 as i64 + 1000, 3, true), 0, &shared);
        busy.stats(&doc(t0 as i64 + 1500, 290, true), 0, &shared);
        busy.stats(&doc(t0 as i64 + 2000, 790, true), 0, &shared);
        assert_eq!(busy.asking_since(), Some(ms(1210)));
        // Idle after an answer at 997 ms, asking again between 3 000 and 3 500 ms.
        let mut idle = Hearing::default();
        idle.stats(&doc(t0 as i64 + 1000, 3, false), 0, &shared);
        idle.stats(&doc(t0 as i64 + 3000, 2003, false), 0, &shared);
        assert_eq!(idle.asking_since(), None);
        idle.stats(&doc(t0 as i64 + 3500, 2503, true), 0, &shared);
        assert_eq!(idle.asking_since(), Some(ms(3000)));
    }
}
