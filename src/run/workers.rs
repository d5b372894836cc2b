//! The measured part of one run: its producer and consumer threads, the barriers around
//! warm-up, the disk size before and after, and the merge of what they recorded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use super::admin;
use super::blocking::blocking;
use super::clients::Client;
use super::consumer::{self, ConsumerJob, ConsumerOutcome, Layout, Reads};
use super::error::RunError;
use super::faults;
use super::live::LiveLatency;
use super::options::RunOptions;
use super::progress::{Position, Ticker};
use super::shard::{Coordination, Phase, Shard};
use super::shared::Shared;
use super::topic::{self, Disk};
use crate::measure::consume::{group_rebalances, ReadSide, ShareSide};
use crate::measure::{ConsumerRecording, GeneratorLoad, Recordings, RunResult};
use crate::model::Backlog;
use crate::plan::RunNo;
use crate::plan::RunPlan;

mod about;
mod producers;
mod registry;

use about::{commit_text, ended, unmeasured};
use producers::{join_producers, start_producers, warm_up};

/// librdkafka's default `delivery.timeout.ms`, when the scenario does not set it.
const DEFAULT_DELIVERY_TIMEOUT_MS: u64 = 300_000;
/// librdkafka's default `fetch.wait.max.ms`.
const DEFAULT_FETCH_WAIT_MS: u64 = 500;

/// What every thread of one run shares with the orchestrator.
struct Threads {
    shared: Arc<Shared>,
    /// Every producer, every share-group member and the orchestrator meet twice
    /// (`shared::meet`): all connected, then warm-up done; a sharded run's barriers sit at
    /// those two points.
    barrier: Arc<Barrier>,
    /// librdkafka's consumers and the orchestrator meet once, when the consumers are ready;
    /// they read through warm-up rather than wait at `barrier` (`consumer::run` says why).
    readers: Arc<Barrier>,
    layout: Arc<Layout>,
    reads: Arc<Reads>,
    shard: Option<Shard>,
    consumers: u32,
}

/// Where the measured phase starts: the disk baseline, its instant, and whether the shards met.
struct Start {
    /// Where the topics' size is asked (None for a shard: the collector measures it).
    disk: Option<Disk>,
    disk_before: Option<Result<Vec<u64>, String>>,
    started_at: SystemTime,
    coordination: Result<(), RunError>,
}

/// Starts the threads, runs warm-up and the measured phase, and merges their recordings.
pub(super) async fn measure(
    rp: &RunPlan,
    at: Position,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
    brokers: &[String],
    partitions: i32,
    notes: &mut Vec<String>,
) -> Result<RunResult, RunError> {
    let w = &rp.workload;
    // Before any thread starts: a timeline that cannot act fails the run unmeasured.
    let timeline = faults::prepare(rp, &opts.live_faults)
        .await
        .map_err(RunError::Faults)?;
    // Before any thread starts too: records carry the registered schema's id.
    let framed = registry::frame(rp).await?;
    // Each side's client ready (a worker built on first use), before any thread starts.
    let clients = super::clients::for_run(rp).await?;
    let t = threads(rp, opts, interrupt, partitions);
    let shared = t.shared.clone();
    let watch = super::availability::watch(rp, brokers, shared.clone());
    let consumer_handles = start_consumers(rp, opts, &t, &clients.reader).await?;
    let producer_handles = start_producers(
        rp,
        framed.as_ref().unwrap_or(&rp.workload),
        (opts, &clients.producer),
        &t,
        partitions,
    )?;
    let stopped_at_start = timeline
        .as_ref()
        .map_or(0, |t| t.consumers_stopped_at_start());
    // From warm-up on (its snapshots say so); dropped with the run on an early return.
    let ticker = opts
        .progress
        .clone()
        .map(|sink| Ticker::start(sink, shared.clone(), at, rp));
    let cold_wait = super::cold::spawn_wait(rp, &shared);
    let start = warm_up(rp, opts, &t, brokers, partitions, stopped_at_start).await?;
    let (cpu_from, wall_from) = (super::cpu::process(), std::time::Instant::now());
    // Dropped on any early return below (an error, a panic): it undoes its faults then.
    let running = timeline.map(|t| t.start(shared.clone()));

    let prods = join_producers(producer_handles, &shared).await?;
    // The clients' workers are kafkabench's load too (their CPU, not only this process's).
    let workers_cpu = shared.worker_cpu_ns.load(Ordering::Acquire) as f64 / 1e9;
    let process_cores = ((super::cpu::process().saturating_sub(cpu_from)).as_secs_f64()
        + workers_cpu)
        / wall_from.elapsed().as_secs_f64().max(1e-3);
    // Before the consumer's drain: it reads from a whole cluster.
    let fault_actions = match running {
        Some(running) => {
            let (actions, fault_notes) = running.finish().await;
            notes.extend(
                fault_notes
                    .into_iter()
                    .map(|n| format!("run {}: {n}", RunNo(rp.index))),
            );
            Some(actions)
        }
        None => None,
    };
    let outcomes = join_consumers(consumer_handles).await?;
    drop(watch);
    if let Some(h) = cold_wait {
        let _ = blocking(move || h.join()).await;
    }
    let cold = super::cold::found(rp, &shared, notes);
    let reader_busy = outcomes.iter().filter_map(|o| o.busy).fold(0.0, f64::max);
    let read_side = (rp.consumer.is_some()).then(|| read_side(rp, &t, &outcomes, cold));
    if let Some(t) = ticker {
        t.finish();
    }

    if let Err(e) = start.coordination {
        // (An interrupt at the barrier is reported as one, with what was measured.)
        if !shared.interrupted() {
            return Err(e);
        }
    }
    let (disk_by_topic, disk_bytes) =
        disk_growth_of(rp, &shared, start.disk, start.disk_before, notes).await?;
    let compaction = super::compaction::after_run(
        rp,
        brokers,
        &t.shared,
        t.shard.is_some(),
        prods.iter().filter_map(|p| p.keys.as_ref()),
        notes,
    )
    .await;
    for e in outcomes.iter().filter_map(|c| c.error.as_ref()) {
        let note = format!("run {}: {e}", RunNo(rp.index));
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    let cons = (rp.consumer.is_some())
        .then(|| ConsumerRecording::merge(outcomes.into_iter().map(|o| o.recording).collect()));
    let reader_queue = cons.as_ref().map(|c| c.queue).unwrap_or_default();

    let mut r = unmeasured(rp, start.started_at);
    let (recordings, errors): (Vec<_>, Vec<_>) =
        prods.into_iter().map(|o| (o.recording, o.error)).unzip();
    let recorded = Recordings {
        producers: &recordings,
        consumer: cons.as_ref(),
        rate: &w.rate,
        disk_bytes,
        duration: w.duration,
        messages: w.messages,
        cut_short: shared.interrupted() || shared.lost(),
        backlog: shared.backlog_written.load(Ordering::Acquire),
        read_side: read_side.as_ref(),
        // A shard's target is its share of the schedule (the collector's merge takes the
        // whole schedule's again).
        shares: t.shard.map_or(1, |s| s.count),
    };
    if let Some(actions) = fault_actions {
        r.recording.faults = Some(crate::measure::FaultSums::of(actions, &recordings));
    }
    // Every side's figures, the fault timeline's included, derived once.
    r.derive_figures(&recorded);
    r.generator = Some(GeneratorLoad {
        sender_busy: recordings.iter().filter_map(|p| p.busy).fold(0.0, f64::max),
        reader_busy,
        process_cores,
        cores: super::cpu::cores(),
        reader_wait_secs: reader_queue.wait_max_ns as f64 / 1e9,
        reader_queue_full: reader_queue.full,
        shard: None,
    });
    r.compaction = compaction;
    r.unavailable = super::availability::outages(&shared, shared.measure_origin());
    if let (Some(crate::model::Warmup::Auto { max }), Some((took, bound))) =
        (&w.warmup, shared.auto_warmup())
    {
        r.warmup_auto = Some(crate::measure::AutoWarmup {
            secs: took.as_secs_f64(),
            max_secs: max.as_secs_f64(),
            settled: !bound,
        });
    }
    r.stamp_origin_monotonic_ns = Some(shared.t0_monotonic_ns);
    r.derive_topics(
        &rp.topics,
        &recordings,
        cons.as_ref(),
        disk_by_topic.as_deref(),
    );

    r.status = ended(
        &r,
        shared.lost_reason(),
        shared.interrupted(),
        errors.into_iter().flatten().collect(),
        w.messages,
        || shared.first_client_error(),
    );
    Ok(r)
}

/// The shared state of one run's threads, before any starts.
fn threads(
    rp: &RunPlan,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
    partitions: i32,
) -> Threads {
    let consumers = if rp.consumer.is_some() {
        rp.workload.consumers.unwrap_or(1)
    } else {
        0
    };
    let layout = Arc::new(Layout {
        topics: rp.topics.clone(),
        partitions,
    });
    let reads = Arc::new(Reads::new(layout.len()));
    let shard = opts.shard.as_ref().map(|s| s.shard());
    if let Some(s) = shard {
        // Another shard's partitions are not this one's to read (or to wait for).
        for part in 0..layout.len() {
            if !s.owns((part % partitions.max(1) as usize) as i32) {
                reads.not_read(part);
            }
        }
    }
    let producers = rp.workload.producers as usize;
    let live = opts
        .live_latency
        .then(|| LiveLatency::new(producers, consumers as usize));
    // A share group's members fetch for themselves: nothing queues while they wait.
    let (members, readers) = if rp.share.is_some() {
        (consumers as usize, 0)
    } else {
        (0, consumers as usize)
    };
    Threads {
        shared: Arc::new(Shared::with_live(interrupt, live)),
        barrier: Arc::new(Barrier::new(producers + members + 1)),
        readers: Arc::new(Barrier::new(readers + 1)),
        layout,
        reads,
        shard,
        consumers,
    }
}

/// The consumer threads, connecting (none without a consumer).
async fn start_consumers(
    rp: &RunPlan,
    opts: &RunOptions,
    t: &Threads,
    client: &Arc<dyn Client>,
) -> Result<Vec<JoinHandle<ConsumerOutcome>>, RunError> {
    let Some(c) = &rp.consumer else {
        return Ok(Vec::new());
    };
    let w = &rp.workload;
    if let Some(spec) = &rp.share {
        // An existing topic: what it holds is drained (`backlog = existing`) or skipped.
        let (base, existing) = if rp.topic.existing {
            let (cfg, l) = (admin::config(c), t.layout.clone());
            let marks = blocking(move || super::share::watermarks(&cfg, &l))
                .await?
                .map_err(RunError::TopicLookup)?;
            let drain = w.backlog == Some(Backlog::Existing);
            let existing = marks.iter().map(|(lo, hi)| (hi - lo).max(0) as u64).sum();
            let ends = marks.iter().map(|(_, hi)| *hi).collect();
            (ends, if drain { existing } else { 0 })
        } else {
            (vec![0; t.layout.len()], 0)
        };
        let members = super::share::Members {
            base: Arc::new(base),
            existing,
            layout: &t.layout,
            shared: &t.shared,
            reads: &t.reads,
            barrier: &t.barrier,
            count: t.consumers,
            interval: opts.interval,
        };
        return super::share::start(rp, spec, members).await;
    }
    let fetch_wait: u64 = c
        .get("fetch.wait.max.ms")
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_FETCH_WAIT_MS);
    let (c, group_configs) = c.split_group_configs();
    super::group_configs::set(rp, &c, group_configs).await?;
    let mut config = admin::config(&c);
    // Partition ends tell a consumer it is ready (its fetchers run) and a backlog drained.
    config.set("enable.partition.eof", "true");
    let base = if rp.topic.existing {
        let (cfg, l) = (config.clone(), t.layout.clone());
        blocking(move || consumer::ends(&cfg, &l))
            .await?
            .map_err(RunError::TopicLookup)?
    } else {
        vec![0; t.layout.len()]
    };
    let base = Arc::new(base);
    let mut handles = Vec::new();
    for index in 0..t.consumers {
        let job = ConsumerJob {
            config: config.clone(),
            layout: t.layout.clone(),
            base: base.clone(),
            index,
            of: t.consumers,
            group: w.consumers.is_some(),
            commit: w.commit.clone(),
            backlog: w.backlog.is_some(),
            from_beginning: w.backlog == Some(Backlog::Existing),
            producers: w.producers,
            prompt: w.in_flight_until_consumed,
            reads_aborted: config.get("isolation.level") == Some("read_uncommitted"),
            transactions: w.transaction.is_some(),
            shared: t.shared.clone(),
            reads: t.reads.clone(),
            ready: t.readers.clone(),
            drain: Duration::from_secs(10) + Duration::from_millis(fetch_wait * 2),
            interval: opts.interval,
            by_due: by_due(rp, opts),
            shard: t.shard,
        };
        let client = client.clone();
        let h = std::thread::Builder::new()
            .name(format!("kb-consumer-{index}"))
            .spawn(move || client.read(job))
            .map_err(|source| RunError::ThreadStart {
                thread: "a consumer thread",
                source,
            })?;
        handles.push(h);
    }
    Ok(handles)
}

/// Whether the run keeps latency by due time (`measure::due`): for its fault windows, its
/// backlog's drain, or the drain of another run of its scenario to be compared with.
fn by_due(rp: &RunPlan, opts: &RunOptions) -> bool {
    !rp.faults.is_empty() || rp.workload.backlog.is_some() || opts.by_due
}

/// The read side's run-level facts.
fn read_side(
    rp: &RunPlan,
    t: &Threads,
    outcomes: &[ConsumerOutcome],
    cold: Option<(u64, u64)>,
) -> ReadSide {
    let w = &rp.workload;
    ReadSide {
        consumers: t.consumers,
        // The verification consumer commits nothing; a share group acknowledges instead.
        commit: match (w.consumers, &rp.share) {
            (_, Some(s)) => format!("ack {}", s.ack.text()),
            (Some(_), None) => commit_text(&w.commit),
            (None, None) => "off".into(),
        },
        origin_ns: t.shared.measure_origin(),
        drained_ns: w
            .backlog
            .as_ref()
            .map(|_| t.reads.drained_ns.load(Ordering::Acquire))
            .filter(|t| *t > 0),
        rebalances: group_rebalances(&outcomes.iter().map(|o| &o.recording).collect::<Vec<_>>()),
        share: rp.share.as_ref().map(|s| ShareSide {
            ack_mode: s.ack.text(),
            processing_ms: s.processing.as_secs_f64() * 1e3,
            delivery_limit: s.delivery_limit(),
        }),
        cold,
    }
}

/// The consumers' outcomes, once each has drained.
async fn join_consumers(
    handles: Vec<JoinHandle<ConsumerOutcome>>,
) -> Result<Vec<ConsumerOutcome>, RunError> {
    let joined =
        blocking(move || handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()).await?;
    let mut outcomes = Vec::new();
    for o in joined {
        outcomes.push(o.map_err(|_| RunError::ThreadPanicked("a consumer thread"))?);
    }
    Ok(outcomes)
}

/// The topics' growth on disk over the measured phase, per topic and summed; None (with a note
/// saying why) when it could not be measured, or for a shard (the collector measures it).
async fn disk_growth_of(
    rp: &RunPlan,
    shared: &Shared,
    disk: Option<Disk>,
    disk_before: Option<Result<Vec<u64>, String>>,
    notes: &mut Vec<String>,
) -> Result<(Option<Vec<u64>>, Option<u64>), RunError> {
    // Local disk is not what a topic in remote storage holds once segments have left it.
    if rp.topic.tiered() && disk.is_some() && !shared.lost() {
        let local = super::cold::LocalDisk::of(rp);
        if let Some(note) = blocking(move || local.left()).await? {
            notes.push(note);
            return Ok((None, None));
        }
    }
    let disk_after = match disk {
        None => None,
        Some(_) if shared.lost() => Some(Err("the cluster was lost during the run".to_string())),
        Some(d) => Some(blocking(move || d.bytes()).await?),
    };
    Ok(match (disk_before, disk_after) {
        (Some(b), Some(a)) => match topic::growth(b, a) {
            Ok((each, total)) => (Some(each), Some(total)),
            Err(e) => {
                notes.push(format!(
                    "run {}: on-disk size unavailable: {e}",
                    RunNo(rp.index)
                ));
                (None, None)
            }
        },
        _ => (None, None),
    })
}

/// A sharded run's barrier before `phase` (nothing without shards). When it fails, the
/// run's threads are stopped (they are released by the orchestrator's next wait).
fn meet_shards(
    s: Option<&dyn Coordination>,
    phase: Phase,
    shared: &Shared,
) -> Result<(), RunError> {
    let Some(s) = s else {
        return Ok(());
    };
    let met = s.barrier(phase, &|| shared.stopping());
    if let Err(why) = &met {
        if !shared.interrupted() {
            shared.cluster_lost(why.to_string());
        }
    }
    met
}
