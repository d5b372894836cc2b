//! One consumer's read loop: polling, the records it verifies and times, its group's events
//! and commits, and how it ends.

use std::sync::atomic::Ordering;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::statistics::Statistics;
use rdkafka::{Offset, TopicPartitionList};

use super::super::shared::Hearing;
use super::*;
use crate::measure::{ConsumerRecording, IntervalRecorder};
use crate::native::consumer::{self as native, EventKind};

/// One consumer at work: its client, what it verifies, its membership.
pub(super) struct Reader<'c> {
    pub(super) job: &'c ConsumerJob,
    pub(super) consumer: &'c BaseConsumer,
    pub(super) native: native::Consumer<'c>,
    pub(super) v: Verifier,
    pub(super) m: Membership,
    /// Reading has started for the measured phase.
    pub(super) measuring: bool,
    pub(super) subscribed: bool,
    /// Per run partition: the consumer's own, and read (or found at its end) since assigned.
    pub(super) mine: Vec<bool>,
    pub(super) reached: Vec<bool>,
    /// Per run partition: its leader's broker id as learned before assigning (-1: unknown).
    pub(super) leader: Vec<i32>,
    /// Per run partition: when its last record was read (ns on the run's clock).
    pub(super) last_read: Vec<u64>,
    /// The last record's topic handle and its topic index: most records repeat it.
    pub(super) topic_cache: (usize, usize),
    /// How long records wait in the reader's own queue (`queue.rs`).
    pub(super) queue: queue::QueueWatch,
    /// A pause after every record read (`KAFKABENCH_TEST_HOLD_READER_US`): a reader held back
    /// on purpose, so the tests can show that a run names a slow reader as the limit.
    pub(super) hold_back: Option<Duration>,
    pub(super) hearing: Hearing,
    /// The backlog's drain was seen over: its fetch round trips are all taken.
    pub(super) trips_taken: bool,
    pub(super) error: Option<String>,
}

impl Reader<'_> {
    pub(super) fn now(&self) -> u64 {
        self.job.shared.t0.elapsed().as_nanos() as u64
    }
    /// Subscribes, or assigns every partition by hand (paused until the clock starts when a
    /// backlog waits for it).
    pub(super) fn join(&mut self) -> Result<(), String> {
        let job = self.job;
        if job.group {
            self.subscribe()
                .map_err(|e| format!("cannot subscribe: {e}"))?;
            return Ok(());
        }
        self.learn_leaders();
        let mut tpl = TopicPartitionList::new();
        let mut all = Vec::new();
        for (t, name) in job.layout.topics.iter().enumerate() {
            for p in 0..job.layout.partitions {
                if job.shard.is_some_and(|s| !s.owns(p)) {
                    continue;
                }
                let base = job.base[t * job.layout.partitions as usize + p as usize];
                let at = if job.from_beginning || base == 0 {
                    Offset::Beginning
                } else {
                    Offset::Offset(base)
                };
                let _ = tpl.add_partition_offset(name, p, at);
                all.push((name.clone(), p));
            }
        }
        self.consumer
            .assign(&tpl)
            .map_err(|e| format!("cannot assign partitions: {e}"))?;
        self.assigned(all, false, None);
        Ok(())
    }

    pub(super) fn subscribe(&mut self) -> Result<(), String> {
        let topics: Vec<&str> = self.job.layout.topics.iter().map(String::as_str).collect();
        self.consumer
            .subscribe(&topics)
            .map_err(|e| e.to_string())?;
        self.subscribed = true;
        let now = self.now();
        self.m.joining(&self.job.reads.handovers, now);
        Ok(())
    }

    pub(super) fn ready(&self) -> bool {
        self.job.ready(|| self.own_reached())
    }

    pub(super) fn mark_ready(&self) {
        self.job
            .mark_ready(self.m.has_assignment, || self.own_reached());
    }

    pub(super) fn start_measuring(&mut self) {
        let origin = self.job.shared.measure_origin();
        self.v.intervals =
            IntervalRecorder::new(self.job.interval.as_nanos() as u64).by_due(self.job.by_due);
        self.v.intervals.start(origin);
        // What was read before the clock (warm-up records) is not the measured phase's.
        self.v.rec.records = 0;
        self.v.rec.bytes = 0;
        self.v.rec.consumed_by_topic.iter_mut().for_each(|n| *n = 0);
        // The read rate's window opens with the first record read after this (as
        // rdkafka_performance's does); the wait for it stays in drain.time.
        self.v.rec.first_read_ns = 0;
        self.v.rec.last_read_ns = origin;
        self.m.fetch_base = self.m.fetch_last;
        self.queue.forget();
        self.measuring = true;
        if self.job.backlog {
            let tpl = self.list(|_| true);
            if let Err(e) = self.consumer.resume(&tpl) {
                self.note(format!("cannot resume reading: {e}"));
            }
            self.wake_fetchers();
        }
    }

    /// Reads until every record the producers reported (and the backlog) is read, or nothing
    /// more comes for the drain time once they are done, or the run stops.
    pub(super) fn read_until_done(&mut self) {
        let job = self.job;
        let mut end = super::DrainEnd::new();
        loop {
            if job.shared.interrupted() || job.shared.lost() {
                break;
            }
            if job.group {
                self.follow_stop_bit();
            }
            if job.shared.producers_done.load(Ordering::Acquire) {
                self.flush();
                if end.done(job) {
                    break;
                }
                self.step(10);
            } else {
                self.step(100);
            }
        }
        self.flush();
    }

    /// `Shared.consumer_stopped`: leave the group while the bit is set, rejoin once cleared.
    pub(super) fn follow_stop_bit(&mut self) {
        let bit = 1u64 << (self.job.index % 64);
        let stopped = self.job.shared.consumer_stopped.load(Ordering::Relaxed) & bit != 0;
        if stopped && self.subscribed {
            self.m.store(self.consumer, &self.job.layout);
            self.m.leaving(&self.job.reads.handovers);
            self.consumer.unsubscribe();
            self.subscribed = false;
        } else if !stopped && !self.subscribed {
            if let Err(e) = self.subscribe() {
                self.note(format!("cannot rejoin the group: {e}"));
            }
        }
    }

    /// Serves one event, waiting at most `timeout_ms` for it.
    #[inline]
    pub(super) fn step(&mut self, timeout_ms: i32) {
        let Some(ev) = self.native.next_event(timeout_ms) else {
            self.queue.drained(&mut self.v.rec.queue);
            self.flush();
            if self.measuring && self.job.backlog && !self.job.reads.drained() {
                self.ends_by_watermark();
            }
            return;
        };
        match ev.kind() {
            EventKind::Fetch => {
                // The orchestrator marks the clock's start before it lets the producers send
                // a measured record, so none is read before this sees it.
                if !self.measuring && self.job.shared.measuring() {
                    self.start_measuring();
                }
                if let Some(m) = ev.message() {
                    self.record(&m);
                }
                if let Some(d) = self.hold_back {
                    std::thread::sleep(d);
                }
            }
            EventKind::Rebalance(assign) => self.rebalance(&ev, assign),
            EventKind::Stats => {
                let parsed = ev.stats_json().map(serde_json::from_str::<Statistics>);
                if let Some(Ok(s)) = parsed {
                    if self.measuring {
                        let (layout, now) = (&self.job.layout, self.now());
                        self.queue.sample(&mut self.v.rec.queue, &s, layout, now);
                    }
                    self.m.stats(&s, self.measuring);
                    self.hearing.stats(&s, self.now(), &self.job.shared);
                    if self.job.backlog && self.measuring && !self.trips_taken {
                        // The window in which the drain ended holds its last fetches.
                        self.trips_taken = self.job.reads.drained();
                        group::fetch_trips(&mut self.v.rec.fetch_trips, &s);
                    }
                }
            }
            EventKind::Error => {
                let (code, reason, fatal) = ev.error();
                if code == rdkafka::types::RDKafkaErrorCode::AllBrokersDown {
                    self.job.shared.brokers_down(self.hearing.asking_since());
                } else if native::is_partition_eof(code) {
                    let layout = &self.job.layout;
                    if let Some(Some((_, part))) = ev.with_partition(|t, p| layout.index(t, p)) {
                        self.partition_end(part);
                    }
                } else if fatal || self.error.is_none() {
                    self.note(format!("consumer: {reason}"));
                }
            }
            EventKind::Other => {}
        }
    }

    #[inline]
    pub(super) fn record(&mut self, m: &native::Message<'_>) {
        let layout = &self.job.layout;
        let id = m.topic_id();
        let topic = if id == self.topic_cache.0 {
            self.topic_cache.1
        } else {
            match layout.index(m.topic_name(), 0) {
                Some((t, _)) => {
                    self.topic_cache = (id, t);
                    t
                }
                None => return,
            }
        };
        let partition = m.partition();
        if let Some(code) = m.error() {
            if native::is_partition_eof(code) {
                if (0..layout.partitions).contains(&partition) {
                    self.partition_end(topic * layout.partitions as usize + partition as usize);
                }
            } else if self.error.is_none() {
                self.note(format!("consumer: {code}"));
            }
            return;
        }
        if !(0..layout.partitions).contains(&partition) {
            return;
        }
        let part = topic * layout.partitions as usize + partition as usize;
        let now = self.now();
        self.queue
            .read(&mut self.v.rec.queue, part, m.offset(), now);
        self.v.read(m, topic, part, now, &self.job.reads);
        self.reached[part] = true;
        self.last_read[part] = now;
        if self.job.group {
            self.m.record_read(&self.job.reads.handovers, part, now);
            self.m.processed(self.consumer, layout, part, m.offset());
        }
        if self.job.prompt {
            self.job.shared.consumed_any.fetch_add(1, Ordering::Release);
        }
        if self.v.unflushed() >= FLUSH_EVERY {
            self.flush();
        }
    }

    pub(super) fn partition_end(&mut self, part: usize) {
        if let Some(r) = self.reached.get_mut(part) {
            *r = true;
        }
        self.m.nothing_there(&self.job.reads.handovers, part);
        if self.measuring {
            let origin = self.job.shared.measure_origin();
            let at = match self.last_read.get(part) {
                Some(t) if *t > origin => *t,
                _ => self.now(),
            };
            self.job.reads.partition_end(part, at);
        } else {
            self.mark_ready();
        }
    }

    pub(super) fn rebalance(&mut self, ev: &native::Event, assign: bool) {
        let now = self.now();
        if !assign {
            // What was processed is committed before the partitions go to another member.
            self.m.store(self.consumer, &self.job.layout);
            let bit = 1u64 << (self.job.index % 64);
            self.job.reads.ready.fetch_and(!bit, Ordering::AcqRel);
        }
        // The epoch is read before the answer: librdkafka holds the group still until the
        // application answers, and may rejoin (a new generation) as soon as it has.
        let epoch = (assign && self.job.group)
            .then(|| self.native.generation())
            .flatten();
        match self.native.answer(ev, assign) {
            Ok((parts, cooperative)) => {
                if assign {
                    if !cooperative {
                        self.mine.iter_mut().for_each(|m| *m = false);
                    }
                    self.assigned(parts, cooperative, epoch);
                } else {
                    let given_up: Vec<usize> = parts
                        .iter()
                        .filter_map(|(t, p)| self.job.layout.index(t.as_bytes(), *p))
                        .map(|(_, part)| part)
                        .collect();
                    for &part in &given_up {
                        self.mine[part] = false;
                    }
                    if !cooperative {
                        self.mine.iter_mut().for_each(|m| *m = false);
                    }
                    self.m.revoked(&self.job.reads.handovers, &given_up, now);
                    self.m.assigned.retain(|(t, p)| {
                        cooperative && !parts.iter().any(|(u, q)| u == t && q == p)
                    });
                }
            }
            Err(e) => self.note(format!("rebalance: {e}")),
        }
    }

    /// Partitions now this consumer's (added to its own under the cooperative protocol).
    pub(super) fn assigned(&mut self, parts: Vec<(String, i32)>, add: bool, epoch: Option<i32>) {
        let mut taken = Vec::with_capacity(parts.len());
        for (t, p) in &parts {
            if let Some((_, part)) = self.job.layout.index(t.as_bytes(), *p) {
                self.mine[part] = true;
                self.reached[part] = false;
                taken.push(part);
            }
        }
        let paused = self.job.backlog && !self.measuring;
        if paused && !parts.is_empty() {
            let mut tpl = TopicPartitionList::new();
            for (t, p) in &parts {
                tpl.add_partition(t, *p);
            }
            if let Err(e) = self.consumer.pause(&tpl) {
                self.note(format!("cannot pause reading until the clock starts: {e}"));
            }
        }
        if add {
            self.m.assigned.extend(parts);
        } else {
            self.m.assigned = parts;
        }
        self.m.has_assignment = true;
        if self.job.group {
            let now = self.now();
            self.m
                .assigned_at(&self.job.reads.handovers, &taken, now, paused, epoch);
        }
        if !self.measuring {
            self.mark_ready();
        }
    }

    /// The consumer's partitions that `keep` says, as a list for librdkafka.
    pub(super) fn list(&self, keep: impl Fn(&(String, i32)) -> bool) -> TopicPartitionList {
        let mut tpl = TopicPartitionList::new();
        for tp in self.m.assigned.iter().filter(|tp| keep(tp)) {
            tpl.add_partition(&tp.0, tp.1);
        }
        tpl
    }

    pub(super) fn flush(&mut self) {
        let n = self.v.unflushed();
        if n > 0 && !self.job.prompt {
            self.job.shared.consumed_any.fetch_add(n, Ordering::Release);
        }
        if n > 0 {
            self.job.shared.heard(self.v.rec.last_read_ns);
        }
        self.v.flush(&self.job.reads);
    }

    pub(super) fn note(&mut self, e: String) {
        self.error.get_or_insert(e);
    }

    pub(super) fn finish(mut self) -> ConsumerOutcome {
        if self.job.group && self.subscribed {
            self.m.store(self.consumer, &self.job.layout);
        }
        let mut recording = std::mem::replace(&mut self.v.rec, ConsumerRecording::empty());
        recording.intervals = self.v.intervals.finish();
        recording.stalls = std::mem::take(&mut self.m.stalls);
        recording.generations = self.m.epochs();
        if let Some((requests, bytes)) = self.m.fetched() {
            recording.fetch_requests = Some(requests);
            recording.fetch_bytes = Some(bytes);
        }
        ConsumerOutcome {
            recording,
            error: self.error.take(),
            busy: None,
        }
    }
}
