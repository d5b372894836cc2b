//! One reader on a worker (clients/PROTOCOL.md): the worker's client reads the run's topics
//! and streams each record it handed out; this thread, the reader's own, verifies each with
//! the `Verifier` librdkafka's reads go through (lost, duplicated, reordered, end-to-end
//! latency from the worker's own read time), keeps the group's membership as librdkafka's
//! reader does, and meets the run as it does (`run::consumer::run`).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::super::error::WorkerError;
use super::frame::{self, Next};
use super::process::Worker;
use super::setup::Origin;
use super::Built;
use crate::measure::{ConsumerRecording, IntervalRecorder};
use crate::model::CommitPolicy;
use crate::run::clock::Clock;
use crate::run::consumer::{At, ConsumerJob, ConsumerOutcome, DrainEnd, Membership, Verifier};
use crate::run::stamp;

/// As librdkafka's reader: how long it waits to be ready before the clock starts without it.
const READY_BOUND: Duration = Duration::from_secs(20);
/// Shared counts move once per this many records read.
const FLUSH_EVERY: u64 = 64;
/// Bytes per read record.
const RECORD: usize = 48;

struct Driver<'a> {
    w: Worker,
    job: &'a ConsumerJob,
    clock: Clock,
    v: Verifier,
    m: Membership,
    measuring: bool,
    subscribed: bool,
    mine: Vec<bool>,
    reached: Vec<bool>,
    last_read: Vec<u64>,
    error: Option<String>,
}

/// Runs reader `job` on the worker `built`, from its start to its recording.
pub(crate) fn run(built: &Built, job: ConsumerJob) -> ConsumerOutcome {
    let mut d = match start(built, &job) {
        Ok(d) => d,
        Err(e) => return not_started(&job, e.to_string()),
    };
    match d.read() {
        Ok(out) => out,
        Err(e) => ConsumerOutcome {
            recording: ConsumerRecording::empty(),
            error: Some(e.to_string()),
            busy: None,
        },
    }
}

fn not_started(job: &ConsumerJob, error: String) -> ConsumerOutcome {
    job.ready.wait();
    ConsumerOutcome {
        recording: ConsumerRecording::empty(),
        error: Some(error),
        busy: None,
    }
}

fn big(v: i64) -> Value {
    Value::String(v.to_string())
}

fn start<'a>(built: &Built, job: &'a ConsumerJob) -> Result<Driver<'a>, WorkerError> {
    let mut w = Worker::of(built)?;
    if !w.hello.roles.iter().any(|r| r == "reader") {
        return Err(w.failed("has no reader role"));
    }
    let shared = &job.shared;
    let clock = Clock::new(shared.t0);
    let origin = Origin {
        monotonic_ns: clock.origin_monotonic_ns(),
        unix_ms: 0,
    };
    let layout = &job.layout;
    let n = layout.len();
    let mut assign = Vec::new();
    if !job.group {
        for t in 0..layout.topics.len() {
            for p in 0..layout.partitions {
                if job.shard.is_some_and(|s| !s.owns(p)) {
                    continue;
                }
                let base = job.base[t * layout.partitions as usize + p as usize];
                let at = if job.from_beginning || base == 0 {
                    -2
                } else {
                    base
                };
                assign.push(json!([t, p, big(at)]));
            }
        }
    }
    let commit = match &job.commit {
        _ if !job.group => json!({"kind": "off"}),
        CommitPolicy::Auto { interval } => {
            json!({"kind": "auto", "interval_ms": interval.as_millis() as u64})
        }
        CommitPolicy::Every { records, sync } => {
            json!({"kind": "every", "records": records, "sync": sync})
        }
        CommitPolicy::Off => json!({"kind": "off"}),
    };
    let properties: std::collections::BTreeMap<String, String> = job
        .config
        .config_map()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    w.send(&json!({
        "msg": "setup",
        "role": "reader",
        "origin_monotonic_ns": origin.monotonic_ns.to_string(),
        "unix_ms_at_origin": origin.unix_ms.to_string(),
        "properties": properties,
        "topics": layout.topics,
        "partitions": layout.partitions,
        "group": job.group,
        "assign": assign,
        "commit": commit,
        "paused": job.backlog,
    }))?;
    w.expect("ready", Duration::from_secs(60), &|| shared.stopping())?;
    let mut v = Verifier::new(
        job.producers as usize,
        n,
        layout.topics.len(),
        job.base.to_vec(),
    );
    v.counts_aborted = job.reads_aborted;
    v.skips_unreadable = !job.transactions;
    v.live = (shared.live.as_ref())
        .and_then(|l| l.e2e.get(job.index as usize))
        .cloned();
    let classic =
        !(job.config.get("group.protocol")).is_some_and(|p| p.eq_ignore_ascii_case("consumer"));
    let mut d = Driver {
        w,
        job,
        clock,
        v,
        m: Membership::new(job.commit.clone(), n, classic),
        measuring: false,
        subscribed: job.group,
        mine: vec![false; n],
        reached: vec![false; n],
        last_read: vec![0; n],
        error: None,
    };
    if job.group {
        let now = d.clock.now_ns();
        d.m.joining(&job.reads.handovers, now);
    } else {
        let parts: Vec<usize> = (0..n)
            .filter(|part| {
                let p = (part % layout.partitions.max(1) as usize) as i32;
                !job.shard.is_some_and(|s| !s.owns(p))
            })
            .collect();
        d.assigned(&parts, None);
    }
    Ok(d)
}

impl Driver<'_> {
    /// Ready, through warm-up, the measured phase and the drain, as librdkafka's reader.
    fn read(&mut self) -> Result<ConsumerOutcome, WorkerError> {
        let job = self.job;
        let ready_by = Instant::now() + READY_BOUND;
        while !self.ready() && Instant::now() < ready_by && !job.shared.stopping() {
            self.step(20)?;
        }
        job.ready.wait();
        while !self.measuring && !job.shared.stopping() {
            if job.group {
                self.follow_stop_bit()?;
            }
            if job.shared.measuring() {
                self.start_measuring()?;
            } else {
                self.step(10)?;
            }
        }
        if !self.measuring {
            self.start_measuring()?;
        }
        let (from, cpu_from) = (Instant::now(), self.w.cpu());
        self.read_until_done()?;
        let wall = from.elapsed().as_nanos() as f64;
        if let (Some(a), Some(b)) = (cpu_from, self.w.cpu()) {
            let ns = b.saturating_sub(a).as_nanos() as u64;
            job.shared.worker_cpu_ns.fetch_add(ns, Ordering::AcqRel);
        }
        self.w.send(&json!({"msg": "stop"}))?;
        self.w.send(&json!({"msg": "close"}))?;
        let bye = loop {
            if let Some(v) = self.step(100)? {
                break v;
            }
        };
        let internals = super::internals::client_sums(&bye["internals"]).total;
        let cpu: f64 = bye["reader_cpu_ns"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.0);
        let mut recording = std::mem::replace(&mut self.v.rec, ConsumerRecording::empty());
        recording.intervals = self.v.intervals.finish();
        recording.stalls = std::mem::take(&mut self.m.stalls);
        recording.generations = self.m.epochs();
        recording.fetch_requests = internals.get("fetch-requests").map(|v| *v as u64);
        recording.fetch_bytes = internals.get("fetch-bytes").map(|v| *v as u64);
        Ok(ConsumerOutcome {
            recording,
            error: self.error.take(),
            busy: (wall > 0.0 && cpu > 0.0).then(|| (cpu / wall).min(1.0)),
        })
    }

    /// Reads until done by the one drain rule (`DrainEnd`), as librdkafka's reader does.
    fn read_until_done(&mut self) -> Result<(), WorkerError> {
        let job = self.job;
        let shared = &job.shared;
        let mut end = DrainEnd::new();
        loop {
            if shared.interrupted() || shared.lost() {
                break;
            }
            if job.group {
                self.follow_stop_bit()?;
            }
            if shared.producers_done.load(Ordering::Acquire) {
                self.flush();
                if end.done(job) {
                    break;
                }
                self.step(10)?;
            } else {
                self.step(100)?;
            }
        }
        self.flush();
        Ok(())
    }

    fn ready(&self) -> bool {
        self.job.ready(|| self.own_reached())
    }

    fn own_reached(&self) -> bool {
        (0..self.mine.len()).all(|p| !self.mine[p] || self.reached[p])
    }

    fn mark_ready(&self) {
        self.job
            .mark_ready(self.m.has_assignment, || self.own_reached());
    }

    fn start_measuring(&mut self) -> Result<(), WorkerError> {
        let origin = self.job.shared.measure_origin();
        self.v.intervals = IntervalRecorder::new(self.job.interval.as_nanos() as u64);
        self.v.intervals.start(origin);
        self.v.rec.records = 0;
        self.v.rec.bytes = 0;
        self.v.rec.consumed_by_topic.iter_mut().for_each(|n| *n = 0);
        self.v.rec.first_read_ns = 0;
        self.v.rec.last_read_ns = origin;
        self.measuring = true;
        self.w.send(&json!({"msg": "measure"}))
    }

    /// `Shared.consumer_stopped`: leave the group while the bit is set, rejoin once cleared.
    fn follow_stop_bit(&mut self) -> Result<(), WorkerError> {
        let bit = 1u64 << (self.job.index % 64);
        let stopped = self.job.shared.consumer_stopped.load(Ordering::Relaxed) & bit != 0;
        if stopped && self.subscribed {
            self.m.leaving(&self.job.reads.handovers);
            self.subscribed = false;
            self.w.send(&json!({"msg": "leave"}))?;
        } else if !stopped && !self.subscribed {
            self.subscribed = true;
            let now = self.clock.now_ns();
            self.m.joining(&self.job.reads.handovers, now);
            self.w.send(&json!({"msg": "rejoin"}))?;
        }
        Ok(())
    }

    /// Serves one frame of the worker's stream (waiting at most `timeout_ms`); `bye` is
    /// handed back.
    fn step(&mut self, timeout_ms: i32) -> Result<Option<Value>, WorkerError> {
        let got = match self.w.frames.next(timeout_ms) {
            Ok(Next::Frame(frame::READS, body)) => {
                if body.len() % RECORD != 0 {
                    Err(format!("wrote a read frame of {} bytes", body.len()))
                } else {
                    // The frame is copied out: `record` needs the driver whole.
                    let records = body.to_vec();
                    if !self.measuring && self.job.shared.measuring() {
                        self.start_measuring()?;
                    }
                    for r in records.chunks_exact(RECORD) {
                        self.record(r);
                    }
                    Ok(None)
                }
            }
            Ok(Next::Frame(frame::JSON, body)) => serde_json::from_slice::<Value>(body)
                .map(Some)
                .map_err(|e| format!("wrote a message that is not JSON ({e})")),
            Ok(Next::Frame(kind, _)) => Err(format!(
                "wrote a '{}' frame, which a reader does not",
                kind as char
            )),
            Ok(Next::Idle) => {
                self.flush();
                Ok(None)
            }
            Ok(Next::Closed) => Err(self.w.exited()),
            Err(e) => Err(format!("wrote a broken frame ({e})")),
        };
        let Some(v) = got.map_err(|what| self.w.failed(what))? else {
            return Ok(None);
        };
        let parts = |v: &Value| -> Vec<usize> {
            (v["parts"].as_array().into_iter().flatten())
                .filter_map(Value::as_u64)
                .map(|p| p as usize)
                .filter(|p| *p < self.mine.len())
                .collect()
        };
        match v["msg"].as_str().unwrap_or("") {
            "bye" => return Ok(Some(v)),
            "assigned" => {
                let g = v["generation"].as_i64().filter(|g| *g >= 0);
                let p = parts(&v);
                self.assigned(&p, g.map(|g| g as i32));
            }
            "revoked" => {
                let p = parts(&v);
                let now = self.clock.now_ns();
                for &part in &p {
                    self.mine[part] = false;
                }
                let bit = 1u64 << (self.job.index % 64);
                self.job.reads.ready.fetch_and(!bit, Ordering::AcqRel);
                self.m.revoked(&self.job.reads.handovers, &p, now);
            }
            "end" => {
                if let Some(part) = v["part"].as_u64().map(|p| p as usize) {
                    if part < self.mine.len() {
                        self.partition_end(part);
                    }
                }
            }
            "error" => {
                let msg = v["message"].as_str().unwrap_or("?").to_string();
                self.error.get_or_insert(format!("consumer: {msg}"));
            }
            "fail" => {
                return Err(self.w.failed(format!(
                    "failed: {}",
                    v["message"].as_str().unwrap_or("(no message)")
                )))
            }
            other => {
                return Err(self
                    .w
                    .failed(format!("wrote '{other}', which a reader does not")))
            }
        }
        Ok(None)
    }

    /// Partitions now this reader's (added to its own), in generation `g`.
    fn assigned(&mut self, parts: &[usize], g: Option<i32>) {
        for &part in parts {
            self.mine[part] = true;
            self.reached[part] = false;
        }
        self.m.has_assignment = true;
        if self.job.group {
            let now = self.clock.now_ns();
            let paused = self.job.backlog && !self.measuring;
            self.m
                .assigned_at(&self.job.reads.handovers, parts, now, paused, g);
        }
        if !self.measuring {
            self.mark_ready();
        }
    }

    fn partition_end(&mut self, part: usize) {
        self.reached[part] = true;
        self.m.nothing_there(&self.job.reads.handovers, part);
        if self.measuring {
            let origin = self.job.shared.measure_origin();
            let at = match self.last_read[part] {
                t if t > origin => t,
                _ => self.clock.now_ns(),
            };
            self.job.reads.partition_end(part, at);
        } else {
            self.mark_ready();
        }
    }

    /// One read record (clients/PROTOCOL.md, `R`).
    #[inline]
    fn record(&mut self, r: &[u8]) {
        let u64_at = |i: usize| u64::from_le_bytes(r[i..i + 8].try_into().unwrap_or_default());
        let u32_at = |i: usize| u32::from_le_bytes(r[i..i + 4].try_into().unwrap_or_default());
        let now = u64_at(0);
        let offset = u64_at(8) as i64;
        let part = u32_at(16) as usize;
        let partitions = self.job.layout.partitions.max(1) as usize;
        if part >= self.mine.len() {
            return;
        }
        let at = At {
            topic: part / partitions,
            part,
            offset,
            bytes: u64::from(u32_at(20)),
            now,
        };
        let stamp_bytes = &r[24..45];
        let has_stamp = r[45] == 1;
        self.v.check(
            at,
            || has_stamp.then(|| stamp::decode(stamp_bytes)).flatten(),
            &self.job.reads,
        );
        self.reached[part] = true;
        self.last_read[part] = now;
        if self.job.group {
            self.m.record_read(&self.job.reads.handovers, part, now);
        }
        if self.job.prompt {
            self.job.shared.consumed_any.fetch_add(1, Ordering::Release);
        }
        if self.v.unflushed() >= FLUSH_EVERY {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let n = self.v.unflushed();
        if n > 0 && !self.job.prompt {
            self.job.shared.consumed_any.fetch_add(n, Ordering::Release);
        }
        if n > 0 {
            self.job.shared.heard(self.v.rec.last_read_ns);
        }
        self.v.flush(&self.job.reads);
    }
}
