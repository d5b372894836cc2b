//! Stage 4, run: executes a [`Plan`] against a real cluster. tokio orchestrates (topics, phases,
//! progress, Ctrl-C); producers and the consumer run on dedicated OS threads.

pub mod admin;
pub mod consumer;
pub mod logdirs;
pub mod payload;
pub mod producer;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use crate::cli::RunArgs;
use crate::exit::Outcome;
use crate::measure::{new_histogram, Delivery, LatencySummary, RunResult};
use crate::model::{Props, RateSpec};
use crate::plan::{plan, Plan, PlanOptions, RunPlan};

/// State shared by the threads of one run and the orchestrator.
pub struct Shared {
    pub t0: Instant,
    interrupt: Arc<AtomicBool>,
    lost: AtomicBool,
    lost_reason: Mutex<Option<String>>,
    pub sent: AtomicU64,
    pub acked: AtomicU64,
    pub failed: AtomicU64,
    pub producers_done: AtomicBool,
    /// Records the consumer has read (warm-up included), for `in_flight_until = consumed`.
    pub consumed_any: AtomicU64,
    /// Acked measured records, known once producers are done: what the consumer must see.
    pub expected: AtomicU64,
}

impl Shared {
    fn new(interrupt: Arc<AtomicBool>) -> Shared {
        Shared {
            t0: Instant::now(),
            interrupt,
            lost: AtomicBool::new(false),
            lost_reason: Mutex::new(None),
            sent: AtomicU64::new(0),
            acked: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            producers_done: AtomicBool::new(false),
            consumed_any: AtomicU64::new(0),
            expected: AtomicU64::new(u64::MAX),
        }
    }

    /// Stop producing: Ctrl-C, or the cluster is gone.
    #[inline]
    pub fn stopping(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed) || self.lost.load(Ordering::Relaxed)
    }

    pub fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }

    /// The cluster is gone: nothing more will be delivered, so nothing waits for it.
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::Relaxed)
    }

    pub fn cluster_lost(&self, reason: String) {
        if !self.lost.swap(true, Ordering::AcqRel) {
            *self.lost_reason.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
        }
    }

    fn lost_reason(&self) -> Option<String> {
        self.lost_reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Everything `run` produced: the results so far and why it stopped early, if it did.
pub struct Execution {
    pub results: Vec<RunResult>,
    pub failure: Option<String>,
    pub interrupted: bool,
    pub notes: Vec<String>,
}

#[derive(Clone)]
pub struct RunOptions {
    pub keep_topics: bool,
    pub progress: bool,
}

/// `kafkabench run`: load, check, plan, execute, assert, report.
pub fn command(a: &RunArgs) -> Outcome {
    let (sources, result) = crate::cli::load(&a.file);
    let scenario = match result {
        Ok(s) => s,
        Err(d) => {
            crate::cli::print_diagnostics(&d, &sources);
            return Outcome::Invalid;
        }
    };
    let p = plan(
        &scenario,
        &PlanOptions {
            bootstrap: a.scaling.bootstrap.clone(),
            scale: a.scaling.scale,
            ..PlanOptions::default()
        },
    );
    let opts = RunOptions {
        keep_topics: a.keep_topics,
        progress: !a.quiet && std::io::stderr().is_terminal(),
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return Outcome::RunFailed;
        }
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    let exec = rt.block_on(execute(&p, &opts, interrupt));
    let verdicts = crate::assert::evaluate(&p, &exec.results);
    let mut out = std::io::stdout().lock();
    let _ = crate::report::table::write(&p, &exec, &mut out);
    let _ = crate::report::verdicts_text(&verdicts, &mut out);
    let _ = out.flush();
    let outcome = crate::assert::outcome(&exec, &verdicts);
    if let Some(path) = &a.json {
        if let Err(e) = std::fs::File::create(path)
            .and_then(|mut f| crate::report::json::write(&p, &exec, &verdicts, outcome, &mut f))
        {
            eprintln!("error: cannot write {}: {e}", path.display());
        }
    }
    if let Some(path) = &a.junit {
        if let Err(e) = std::fs::File::create(path)
            .and_then(|mut f| crate::report::junit::write(&p, &exec, &verdicts, &mut f))
        {
            eprintln!("error: cannot write {}: {e}", path.display());
        }
    }
    if let Some(f) = &exec.failure {
        eprintln!("error: {f}");
    }
    if exec.interrupted {
        eprintln!("interrupted: the report above covers what was measured before Ctrl-C");
    }
    outcome
}

/// Runs every planned run in order; stops at the first run the cluster fails.
pub async fn execute(p: &Plan, opts: &RunOptions, interrupt: Arc<AtomicBool>) -> Execution {
    {
        let flag = interrupt.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::SeqCst);
            }
        });
    }
    let mut exec = Execution {
        results: Vec::new(),
        failure: None,
        interrupted: false,
        notes: Vec::new(),
    };
    for rp in &p.runs {
        if interrupt.load(Ordering::SeqCst) {
            exec.interrupted = true;
            break;
        }
        match run_one(rp, p.runs.len(), opts, interrupt.clone(), &mut exec.notes).await {
            Ok(r) => {
                let complete = r.complete;
                let error = r.error.clone();
                exec.results.push(r);
                if interrupt.load(Ordering::SeqCst) {
                    exec.interrupted = true;
                    break;
                }
                if !complete {
                    exec.failure = Some(format!(
                        "run {} ({}) failed: {}",
                        rp.index + 1,
                        rp.label,
                        error.unwrap_or_default()
                    ));
                    break;
                }
            }
            Err(e) => {
                exec.failure = Some(format!("run {} ({}): {e}", rp.index + 1, rp.label));
                break;
            }
        }
    }
    exec
}

fn client_config(props: &Props) -> rdkafka::ClientConfig {
    admin::config(props)
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("internal task failed: {e}"))
}

async fn run_one(
    rp: &RunPlan,
    total: usize,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
    notes: &mut Vec<String>,
) -> Result<RunResult, String> {
    let (admin_props, bootstrap) = (rp.admin.clone(), rp.bootstrap.clone());
    let admin = Arc::new(blocking(move || admin::Admin::connect(&admin_props, &bootstrap)).await??);
    let brokers = {
        let a = admin.clone();
        blocking(move || a.brokers()).await??
    };
    let topic = rp.topic.name.clone();
    let mut partitions = rp.topic.partitions;
    if rp.topic.existing {
        let (n, exists) = admin.topic_exists(&topic).await?;
        if !exists {
            return Err(format!(
                "topic {topic} does not exist (the scenario says `existing = true`)"
            ));
        }
        partitions = n;
    } else {
        // Bounded here too: librdkafka's admin requests can outlive their own timeouts when no
        // broker answers at all.
        tokio::time::timeout(Duration::from_secs(45), admin.create_topic(&rp.topic))
            .await
            .map_err(|_| format!("creating topic {topic}: no answer within 45s"))??;
    }
    admin
        .wait_for_leaders(&topic, partitions, Duration::from_secs(30))
        .await?;
    let result = measured(rp, total, opts, interrupt, &brokers, partitions, notes).await;
    let lost = result.as_ref().is_ok_and(|r| r.cluster_lost);
    if !rp.topic.existing && !opts.keep_topics {
        if lost {
            notes.push(format!(
                "topic {topic} was not deleted: the cluster was lost during the run"
            ));
        } else {
            // Bounded: a cluster that stops answering now must not hold the report back.
            match tokio::time::timeout(Duration::from_secs(40), admin.delete_topic(&topic)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => notes.push(format!("could not delete topic {topic}: {e}")),
                Err(_) => notes.push(format!(
                    "could not delete topic {topic}: no answer within 40s"
                )),
            }
        }
    }
    result
}

async fn measured(
    rp: &RunPlan,
    total: usize,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
    brokers: &[String],
    partitions: i32,
    notes: &mut Vec<String>,
) -> Result<RunResult, String> {
    let topic = rp.topic.name.clone();
    let w = &rp.workload;
    let shared = Arc::new(Shared::new(interrupt));
    let n = w.producers;
    let has_consumer = rp.consumer.is_some();
    let barrier = Arc::new(Barrier::new(n as usize + usize::from(has_consumer) + 1));
    let timeout_ms: u64 = rp
        .producer
        .get("delivery.timeout.ms")
        .or(rp.producer.get("message.timeout.ms"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000);
    let flush_timeout = Duration::from_millis(timeout_ms) + Duration::from_secs(5);

    let consumer_handle = rp.consumer.as_ref().map(|c| {
        let fetch_wait: u64 = c
            .get("fetch.wait.max.ms")
            .and_then(|v| v.parse().ok())
            .unwrap_or(500);
        let job = consumer::ConsumerJob {
            config: client_config(c),
            topic: topic.clone(),
            partitions,
            shared: shared.clone(),
            barrier: barrier.clone(),
            drain: Duration::from_secs(10) + Duration::from_millis(fetch_wait * 2),
        };
        std::thread::Builder::new()
            .name("kb-consumer".into())
            .spawn(move || consumer::run(job))
    });
    let consumer_handle = match consumer_handle {
        Some(Ok(h)) => Some(h),
        Some(Err(e)) => return Err(format!("cannot start the consumer thread: {e}")),
        None => None,
    };

    let mut handles = Vec::new();
    for i in 0..n {
        let messages = w
            .messages
            .map(|m| m / n as u64 + u64::from((i as u64) < m % n as u64));
        let job = producer::ProducerJob {
            id: i,
            config: client_config(&rp.producer),
            topic: topic.clone(),
            workload: w.clone(),
            messages,
            rate_share: 1.0 / n as f64,
            e2e: has_consumer,
            shared: shared.clone(),
            barrier: barrier.clone(),
            flush_timeout,
        };
        let h = std::thread::Builder::new()
            .name(format!("kb-producer-{i}"))
            .spawn(move || producer::run(job))
            .map_err(|e| format!("cannot start a producer thread: {e}"))?;
        handles.push(h);
    }

    // Warm-up done → disk baseline → go.
    let (b, brs, t) = (barrier.clone(), brokers.to_vec(), topic.clone());
    let disk_before = blocking(move || {
        b.wait();
        let d = logdirs::topic_bytes(&brs, &t, partitions);
        b.wait();
        d
    })
    .await?;

    let progress = opts.progress.then(|| {
        let s = shared.clone();
        let label = format!("[{}/{}] {}", rp.index + 1, total, rp.label);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            let start = Instant::now();
            loop {
                tick.tick().await;
                let el = start.elapsed().as_secs_f64();
                let sent = s.sent.load(Ordering::Relaxed);
                let acked = s.acked.load(Ordering::Relaxed);
                let phase = if s.producers_done.load(Ordering::Relaxed) {
                    "draining"
                } else {
                    "producing"
                };
                eprint!(
                    "\r\x1b[2K{label}  {phase}  sent {sent}  acked {acked}  {:.0} msg/s  {el:.1}s",
                    acked as f64 / el.max(1e-3)
                );
                let _ = std::io::stderr().flush();
            }
        })
    });

    let outcomes =
        blocking(move || handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()).await?;
    let mut prods = Vec::new();
    for o in outcomes {
        prods.push(o.map_err(|_| "a producer thread panicked".to_string())?);
    }
    let acked_total: u64 = prods.iter().map(|o| o.acked).sum();
    shared.expected.store(acked_total, Ordering::Release);
    shared.producers_done.store(true, Ordering::Release);
    let cons = match consumer_handle {
        Some(h) => Some(
            blocking(move || h.join())
                .await?
                .map_err(|_| "the consumer thread panicked".to_string())?,
        ),
        None => None,
    };
    if let Some(p) = progress {
        p.abort();
        eprint!("\r\x1b[2K");
    }

    let (brs, t) = (brokers.to_vec(), topic.clone());
    let disk_after = if shared.lost() {
        Err("the cluster was lost during the run".to_string())
    } else {
        blocking(move || logdirs::topic_bytes(&brs, &t, partitions)).await?
    };
    let disk = match (disk_before, disk_after) {
        (Ok(b), Ok(a)) => Some(a.saturating_sub(b)),
        (Err(e), _) | (_, Err(e)) => {
            notes.push(format!(
                "run {}: on-disk size unavailable: {e}",
                rp.index + 1
            ));
            None
        }
    };

    // Merge per-thread recordings.
    let mut ack = new_histogram();
    let mut service = new_histogram();
    let mut send_delay = new_histogram();
    let mut r = RunResult {
        index: rp.index,
        label: rp.label.clone(),
        coords: rp
            .cell
            .coords
            .iter()
            .map(|c| (c.dim.clone(), c.text.clone()))
            .collect::<BTreeMap<_, _>>(),
        topic: topic.clone(),
        producer_config: rp.producer.masked(),
        consumer_config: rp.consumer.as_ref().map(Props::masked),
        ..RunResult::default()
    };
    let mut start = u64::MAX;
    let (mut first_send, mut last_send, mut last_ack) = (u64::MAX, 0u64, 0u64);
    let mut errors = Vec::new();
    let mut internals = Vec::new();
    for o in &prods {
        r.sent += o.sent;
        r.acked += o.acked;
        r.failed += o.failed;
        r.queue_full += o.queue_full;
        r.payload_bytes += o.payload_bytes;
        for (k, v) in &o.failed_by_kind {
            *r.failed_by_kind.entry(k.clone()).or_default() += v;
        }
        let _ = ack.add(&o.ack);
        let _ = service.add(&o.service);
        let _ = send_delay.add(&o.send_delay);
        start = start.min(o.start_ns);
        if o.first_send_ns > 0 {
            first_send = first_send.min(o.first_send_ns);
        }
        last_send = last_send.max(o.last_send_ns);
        last_ack = last_ack.max(o.last_ack_ns);
        if let Some(e) = &o.error {
            errors.push(e.clone());
        }
        internals.push(o.internals.clone());
    }
    r.internals = merge_internals(&internals);
    let end = last_ack.max(last_send);
    r.elapsed_secs = if end > start && start != u64::MAX {
        (end - start) as f64 / 1e9
    } else {
        0.0
    };
    if r.elapsed_secs > 0.0 {
        r.throughput_msgs = r.acked as f64 / r.elapsed_secs;
        r.throughput_bytes = r.payload_bytes as f64 / r.elapsed_secs;
    }
    r.achieved_rate = if r.sent > 1 && last_send > first_send {
        (r.sent - 1) as f64 / ((last_send - first_send) as f64 / 1e9)
    } else {
        0.0
    };
    r.target_rate = match &w.rate {
        RateSpec::Unlimited => None,
        RateSpec::Fixed(x) => Some(*x),
        RateSpec::Shape(segs) => {
            let secs: f64 = segs.iter().map(|s| s.duration.as_secs_f64()).sum();
            Some(
                segs.iter()
                    .map(|s| s.per_sec * s.duration.as_secs_f64())
                    .sum::<f64>()
                    / secs.max(1e-9),
            )
        }
    };
    r.ack = LatencySummary::from_histogram(&ack);
    r.service = LatencySummary::from_histogram(&service);
    r.send_delay = LatencySummary::from_histogram(&send_delay);
    if let Some(c) = &cons {
        r.e2e = Some(LatencySummary::from_histogram(&c.e2e));
        r.delivery = Some(Delivery {
            consumed: c.consumed,
            lost: r.acked.saturating_sub(c.consumed),
            duplicated: c.duplicated,
            reordered: c.reordered,
        });
        if let Some(e) = &c.error {
            notes.push(format!("run {}: {e}", rp.index + 1));
        }
    }
    r.disk_bytes = disk;
    r.disk_ratio = disk
        .filter(|d| *d > 0)
        .map(|d| r.payload_bytes as f64 / d as f64);

    let lost = shared.lost_reason();
    r.cluster_lost = lost.is_some();
    r.complete = lost.is_none() && !shared.interrupted() && errors.is_empty();
    r.error = lost.or_else(|| (!errors.is_empty()).then(|| errors.join("; ")));
    if shared.interrupted() {
        r.error = Some("interrupted".into());
    }
    Ok(r)
}

fn merge_internals(v: &[crate::measure::Internals]) -> crate::measure::Internals {
    let avg = |f: &dyn Fn(&crate::measure::Internals) -> Option<f64>| {
        let xs: Vec<f64> = v.iter().filter_map(f).collect();
        (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
    };
    crate::measure::Internals {
        batch_bytes_avg: avg(&|i| i.batch_bytes_avg),
        batch_records_avg: avg(&|i| i.batch_records_avg),
        records_per_request: avg(&|i| i.records_per_request),
        wire_ratio: avg(&|i| i.wire_ratio),
        produce_requests: v.iter().map(|i| i.produce_requests).sum(),
    }
}
