//! One producer on a worker (clients/PROTOCOL.md): the worker runs the schedule and its
//! client; this thread, the producer's own, meets the run's barriers, tells the worker each
//! phase, and turns the completion stream into the producer's recording with the recorder
//! librdkafka's delivery reports fill.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{json, Value};

use super::super::error::WorkerError;
use super::completions::{self, Tally};
use super::frame::{self, Next};
use super::internals;
use super::process::Worker;
use super::setup::{self, Origin};
use super::Built;
use crate::measure::placed::PlaceRecorder;
use crate::model::{Backlog, RateSpec, Warmup};
use crate::run::clock::Clock;
use crate::run::payload::Seeds;
use crate::run::producer::finish::{recording, Parts};
use crate::run::producer::{ProducerJob, ProducerOutcome};
use crate::run::recorder::Recorder;
use crate::run::shared::{meet, skip_meetings, Shared};

/// How long a worker may take to create its client and learn the leaders.
const READY_WITHIN: Duration = Duration::from_secs(60);
/// How long a drain may still take once the run is stopping (librdkafka's producer cuts its
/// own the same way).
const STOPPING_DRAIN: Duration = Duration::from_secs(5);
/// How long a worker may take to close its client (Java's `close()` waits for its sender).
const CLOSE_WITHIN: Duration = Duration::from_secs(30);

/// What a phase's `phase_done` said.
struct Done {
    sent: u64,
    first_ns: u64,
    last_ns: u64,
    sender_cpu_ns: u64,
    drained: bool,
    outstanding: u64,
    internals: Value,
}

/// The driver of one producer worker.
struct Driver<'a> {
    w: Worker,
    job: &'a ProducerJob,
    rec: Recorder,
    tally: Tally,
    clock: Clock,
    /// `stop` was sent.
    stopped: bool,
    /// Measured records sent, as the worker's progress said (for the shared counter).
    progress: u64,
    measuring: bool,
}

/// Runs producer `job` on the worker `built`, from its start to its recording.
pub(crate) fn run(built: &Built, job: ProducerJob) -> ProducerOutcome {
    let shared = job.shared.clone();
    let mut d = match start(built, &job) {
        Ok(d) => d,
        Err(e) => {
            shared.backlog_written_by_one();
            skip_meetings(&job.barrier);
            return ProducerOutcome::failed_to_start(e.to_string());
        }
    };
    match d.phases() {
        Ok(out) => out,
        // The worker broke off: whatever it measured is not trusted.
        Err(e) => ProducerOutcome::failed_to_start(e.to_string()),
    }
}

/// The worker started, set up and ready (connected, leaders known).
fn start<'a>(built: &Built, job: &'a ProducerJob) -> Result<Driver<'a>, WorkerError> {
    let w = &job.workload;
    let mut worker = Worker::of(built)?;
    if let Some(why) = setup::unsupported(w) {
        return Err(worker.failed(format!("cannot run this workload: {why}")));
    }
    if !worker.hello.roles.iter().any(|r| r == "producer") {
        return Err(worker.failed("has no producer role"));
    }
    let shared = &job.shared;
    let clock = Clock::new(shared.t0);
    let unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
        .saturating_sub(shared.t0.elapsed().as_millis() as u64);
    let origin = Origin {
        monotonic_ns: clock.origin_monotonic_ns(),
        unix_ms,
    };
    let seeds = Seeds::of(w.seed.unwrap_or(unix_ms), job.share.index);
    worker.send(&setup::producer(job, &origin, seeds))?;
    if let Some(lines) = setup::lines(w) {
        worker.send_lines(lines)?;
    }
    worker.expect("ready", READY_WITHIN, &|| shared.stopping())?;
    let paced = !matches!(w.rate, RateSpec::Unlimited);
    let mut rec = Recorder::new(paced, job.interval.as_nanos() as u64, job.by_due);
    if w.payload.sizes_vary() {
        rec.sizes = Some(crate::measure::new_histogram());
    }
    // By partition, from each completion's partition; not by broker, which the Java client
    // does not say (`completions::absorb`).
    rec.placed = Some(PlaceRecorder::of_run(job.topics.len(), job.partition_count));
    rec.live = (shared.live.as_ref())
        .and_then(|l| l.ack.get(job.ordinal as usize))
        .cloned();
    Ok(Driver {
        w: worker,
        job,
        rec,
        tally: Tally::new(job.topics.len(), job.e2e),
        clock,
        stopped: false,
        progress: 0,
        measuring: false,
    })
}

impl Driver<'_> {
    fn shared(&self) -> &Shared {
        &self.job.shared
    }

    /// Backlog, warm-up and the measured phase, with the run's barriers between them, as
    /// librdkafka's send loop has them (`run::producer::run`).
    fn phases(&mut self) -> Result<ProducerOutcome, WorkerError> {
        let job = self.job;
        let w = &job.workload;
        let shared = job.shared.clone();
        let drain = job.flush_timeout;
        meet(&job.barrier);
        if let Some(n) = w.backlog.as_ref().and_then(Backlog::records) {
            let before = self.rec.delivered;
            self.phase("backlog", Some(job.share.count_of(n)), None, Some(drain))?;
            shared
                .backlog_written
                .fetch_add(self.rec.delivered - before, Ordering::Release);
            if matches!(w.backlog, Some(Backlog::Cold { .. })) {
                shared.backlog_written_by_one();
                while !shared.cold_ready() && !shared.stopping() {
                    self.serve_for(Duration::from_millis(50))?;
                }
            }
        }
        match &w.warmup {
            Some(Warmup::Messages(n)) => {
                self.phase("warmup", Some(job.share.count_of(*n)), None, Some(drain))?;
            }
            Some(Warmup::Duration(t)) => {
                self.phase("warmup", None, Some(*t), Some(drain))?;
            }
            Some(Warmup::Auto { max }) => {
                self.warm_until_settled(*max)?;
                self.phase("warmup", Some(0), None, Some(drain))?;
            }
            None => {}
        }
        meet(&job.barrier);
        self.rec.measuring = true;
        self.measuring = true;
        self.rec.intervals.start(shared.measure_origin());
        let start_ns = self.clock.now_ns();
        let cpu_from = self.w.cpu();
        let messages = w.messages.map(|m| job.share.count_of(m));
        let done = self.phase("measured", messages, w.duration, Some(drain))?;
        if let (Some(from), Some(to)) = (cpu_from, self.w.cpu()) {
            let ns = to.saturating_sub(from).as_nanos() as u64;
            shared.worker_cpu_ns.fetch_add(ns, Ordering::AcqRel);
        }
        let wall = self.clock.now_ns().saturating_sub(start_ns);
        if !matches!(w.rate, RateSpec::Unlimited) {
            // (paced: each record's delay came with its completion)
        } else {
            let _ = self.tally.send_delay.record_n(0, done.sent);
        }
        let sent_now = done.sent.saturating_sub(self.progress);
        shared.sent.fetch_add(sent_now, Ordering::Relaxed);
        let reported = self.rec.acked + self.rec.failed_seqs.len() as u64;
        shared.producer_drained(reported, 0, u64::from(w.producers));
        let error = (!done.drained).then(|| {
            format!(
                "{} records still undelivered after {}s",
                done.outstanding,
                drain.as_secs()
            )
        });
        let client = internals::client_sums(&done.internals);
        let stats = internals::stats(&client, self.rec.key_value_bytes);
        let parts = Parts {
            start_ns,
            sent: done.sent,
            first_ns: done.first_ns,
            last_ns: done.last_ns,
            enqueue_failed: self.tally.enqueue_failed,
            enqueue_failed_by_kind: std::mem::take(&mut self.tally.enqueue_failed_by_kind),
            queue_full: 0,
            send_delay: std::mem::replace(
                &mut self.tally.send_delay,
                crate::measure::new_histogram(),
            ),
            bound_topic: None,
            topics: job.topics.len(),
            stats,
            txn: None,
        };
        self.rec.by_topic = std::mem::take(&mut self.tally.by_topic);
        let (mut recording, _) = recording(&mut self.rec, parts);
        recording.busy = (wall > 0).then(|| (done.sender_cpu_ns as f64 / wall as f64).min(1.0));
        recording.raw.client = Some(client);
        let closed = self.close_worker();
        Ok(ProducerOutcome {
            recording,
            error: error.or(closed.err().map(|e| e.to_string())),
            keys: None,
        })
    }

    /// `warmup = auto`: one-second phases until the rate has settled (`run::warmup`).
    fn warm_until_settled(&mut self, max: Duration) -> Result<(), WorkerError> {
        let start = std::time::Instant::now();
        self.shared().warmup_started();
        let mut slices = Vec::new();
        loop {
            let left = max.saturating_sub(start.elapsed());
            if left.is_zero() {
                self.shared().warmup_bound_reached();
                return Ok(());
            }
            if self.shared().stopping() {
                return Ok(());
            }
            let before = self.rec.delivered;
            let done = self.phase("warmup", None, Some(Warmup::AUTO_SLICE.min(left)), None)?;
            slices.push(crate::run::warmup::Slice {
                sent: done.sent,
                reported: self.rec.delivered - before,
            });
            if crate::run::warmup::settled(&slices) {
                return Ok(());
            }
        }
    }

    /// Runs one phase on the worker and serves its stream until `phase_done`.
    fn phase(
        &mut self,
        phase: &str,
        count: Option<u64>,
        duration: Option<Duration>,
        drain: Option<Duration>,
    ) -> Result<Done, WorkerError> {
        if self.shared().stopping() && count != Some(0) {
            // Nothing more is sent once the run stops; what was sent is still drained.
            return self.phase(phase, Some(0), None, drain);
        }
        self.progress = 0;
        self.w.send(&json!({
            "msg": "phase",
            "phase": phase,
            "count": count,
            "duration_ns": duration.map(|d| d.as_nanos().to_string()),
            "drain": drain.is_some(),
            "drain_timeout_ms": drain.map_or(0, |d| d.as_millis() as u64),
        }))?;
        loop {
            if let Some(v) = self.serve(100)? {
                if v["msg"] != "phase_done" {
                    return Err(self.w.failed("said bye in the middle of a phase"));
                }
                let n = |k: &str| v[k].as_u64().unwrap_or(0);
                let s = |k: &str| v[k].as_str().and_then(|x| x.parse().ok()).unwrap_or(0);
                return Ok(Done {
                    sent: n("sent"),
                    first_ns: s("first_send_ns"),
                    last_ns: s("last_send_ns"),
                    sender_cpu_ns: s("sender_cpu_ns"),
                    drained: v["drained"].as_bool().unwrap_or(false),
                    outstanding: n("outstanding"),
                    internals: v["internals"].clone(),
                });
            }
        }
    }

    /// Serves the worker's stream for `t` between phases (completions may still come).
    fn serve_for(&mut self, t: Duration) -> Result<(), WorkerError> {
        let by = std::time::Instant::now() + t;
        while std::time::Instant::now() < by {
            if let Some(v) = self.serve(10)? {
                return Err(self.w.failed(format!(
                    "wrote '{}' between phases",
                    v["msg"].as_str().unwrap_or("?")
                )));
            }
        }
        Ok(())
    }

    /// One frame of the worker's stream; `phase_done` is handed back, everything else served.
    fn serve(&mut self, timeout_ms: i32) -> Result<Option<Value>, WorkerError> {
        if self.shared().stopping() && !self.stopped {
            self.stopped = true;
            let cut = STOPPING_DRAIN.as_millis() as u64;
            self.w
                .send(&json!({"msg": "stop", "drain_timeout_ms": cut}))?;
        }
        let got = match self.w.frames.next(timeout_ms) {
            Ok(Next::Frame(frame::COMPLETIONS, body)) => {
                completions::absorb(&mut self.rec, &mut self.tally, body, &self.job.shared)
                    .map(|()| None)
            }
            Ok(Next::Frame(frame::JSON, body)) => serde_json::from_slice::<Value>(body)
                .map(Some)
                .map_err(|e| format!("wrote a message that is not JSON ({e})")),
            Ok(Next::Frame(kind, _)) => Err(format!(
                "wrote a '{}' frame, which a producer does not",
                kind as char
            )),
            Ok(Next::Idle) => Ok(None),
            Ok(Next::Closed) => Err(self.w.exited()),
            Err(e) => Err(format!("wrote a broken frame ({e})")),
        };
        let Some(v) = got.map_err(|what| self.w.failed(what))? else {
            return Ok(None);
        };
        match v["msg"].as_str().unwrap_or("") {
            "phase_done" | "bye" => Ok(Some(v)),
            "progress" => {
                let sent = v["sent"].as_u64().unwrap_or(0);
                if self.measuring && sent > self.progress {
                    let shared = &self.job.shared;
                    shared
                        .sent
                        .fetch_add(sent - self.progress, Ordering::Relaxed);
                    self.progress = sent;
                }
                Ok(None)
            }
            "error_kind" => {
                let id = v["id"].as_u64().filter(|i| (1..=255).contains(i));
                let name = v["name"].as_str();
                match (id, name) {
                    (Some(id), Some(name)) => {
                        self.tally.kinds[id as usize] = Some(name.to_string());
                        Ok(None)
                    }
                    _ => Err(self.w.failed(format!("named an error kind badly: {v}"))),
                }
            }
            "fail" => Err(self.w.failed(format!(
                "failed: {}",
                v["message"].as_str().unwrap_or("(no message)")
            ))),
            other => Err(self
                .w
                .failed(format!("wrote '{other}', which a producer does not"))),
        }
    }

    /// `close`, and the worker's `bye` (completions that come late are still served).
    fn close_worker(&mut self) -> Result<(), WorkerError> {
        self.w.send(&json!({"msg": "close"}))?;
        let by = std::time::Instant::now() + CLOSE_WITHIN;
        while std::time::Instant::now() < by {
            if let Some(v) = self.serve(100)? {
                return match v["msg"].as_str() {
                    Some("bye") => Ok(()),
                    other => Err(self
                        .w
                        .failed(format!("answered '{}' to close", other.unwrap_or("?")))),
                };
            }
        }
        Err(self.w.failed(format!(
            "did not answer close within {}s",
            CLOSE_WITHIN.as_secs()
        )))
    }
}
