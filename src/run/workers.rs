//! The measured part of one run: its producer and consumer threads, the barriers around
//! warm-up, the disk size before and after, and the merge of what they recorded.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime};

use super::admin;
use super::consumer::{self, ConsumerJob, Layout, Reads};
use super::control::Phase;
use super::error::RunError;
use super::faults;
use super::lifecycle::blocking;
use super::logdirs;
use super::pacer::Share;
use super::producer::{self, ProducerJob};
use super::progress::Ticker;
use super::sharded::{self, ShardRun};
use super::shared::Shared;
use super::RunOptions;
use crate::measure::clock::rfc3339_utc;
use crate::measure::consume::{group_rebalances, ReadSide};
use crate::measure::topics::disk_growth;
use crate::measure::{ConsumerRecording, Recordings, RunResult, RunStatus, TopicConfig};
use crate::model::{Backlog, CommitPolicy, Props};
use crate::plan::RunPlan;

/// librdkafka's default `delivery.timeout.ms`, when the scenario does not set it.
const DEFAULT_DELIVERY_TIMEOUT_MS: u64 = 300_000;
/// librdkafka's default `fetch.wait.max.ms`.
const DEFAULT_FETCH_WAIT_MS: u64 = 500;

/// Starts the threads, runs warm-up and the measured phase, and merges their recordings.
pub async fn measure(
    rp: &RunPlan,
    runs: usize,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
    brokers: &[String],
    partitions: i32,
    notes: &mut Vec<String>,
) -> Result<RunResult, RunError> {
    let topic = rp.topic.name.clone();
    let w = &rp.workload;
    let shared = Arc::new(Shared::new(interrupt));
    let producers = w.producers;
    let has_consumer = rp.consumer.is_some();
    // Before any thread starts: a timeline that cannot act fails the run unmeasured.
    let timeline = faults::prepare(rp, &opts.live_faults).await?;
    let consumers = if has_consumer {
        w.consumers.unwrap_or(1)
    } else {
        0
    };
    // Every producer, every consumer and the orchestrator meet twice (`shared::meet`): all
    // connected, then warm-up done; a sharded run's barriers sit at those two points.
    let barrier = Arc::new(Barrier::new(producers as usize + consumers as usize + 1));
    let timeout_ms: u64 = rp
        .producer
        .get("delivery.timeout.ms")
        .or(rp.producer.get("message.timeout.ms"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_DELIVERY_TIMEOUT_MS);
    // A little past librdkafka's own timeout, so its failure reports arrive first.
    let flush_timeout = Duration::from_millis(timeout_ms) + Duration::from_secs(5);

    let layout = Arc::new(Layout {
        topics: rp.topics.clone(),
        partitions,
    });
    let reads = Arc::new(Reads::new(layout.len()));
    let shard = opts.shard.as_ref().map(|s| s.shard);
    if let Some(s) = shard {
        // Another shard's partitions are not this one's to read (or to wait for).
        for part in 0..layout.len() {
            if !s.owns((part % partitions.max(1) as usize) as i32) {
                reads.not_read(part);
            }
        }
    }
    let mut consumer_handles = Vec::new();
    if let Some(c) = &rp.consumer {
        let fetch_wait: u64 = c
            .get("fetch.wait.max.ms")
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_FETCH_WAIT_MS);
        let mut config = admin::config(c);
        // Partition ends tell a consumer it is ready (its fetchers run) and a backlog drained.
        config.set("enable.partition.eof", "true");
        let base = if rp.topic.existing {
            let (cfg, l) = (config.clone(), layout.clone());
            blocking(move || consumer::ends(&cfg, &l))
                .await?
                .map_err(RunError::TopicLookup)?
        } else {
            vec![0; layout.len()]
        };
        let base = Arc::new(base);
        for index in 0..consumers {
            let job = ConsumerJob {
                config: config.clone(),
                layout: layout.clone(),
                base: base.clone(),
                index,
                of: consumers,
                group: w.consumers.is_some(),
                commit: w.commit.clone(),
                backlog: w.backlog.is_some(),
                from_beginning: w.backlog == Some(Backlog::Existing),
                producers,
                prompt: w.in_flight_until_consumed,
                reads_aborted: config.get("isolation.level") == Some("read_uncommitted"),
                shared: shared.clone(),
                reads: reads.clone(),
                barrier: barrier.clone(),
                drain: Duration::from_secs(10) + Duration::from_millis(fetch_wait * 2),
                interval: opts.interval,
                shard,
            };
            let h = std::thread::Builder::new()
                .name(format!("kb-consumer-{index}"))
                .spawn(move || consumer::run(job))
                .map_err(|source| RunError::ThreadStart {
                    thread: "a consumer thread",
                    source,
                })?;
            consumer_handles.push(h);
        }
    }

    let mut handles = Vec::new();
    for index in 0..producers {
        let job = ProducerJob {
            config: admin::config(&rp.producer),
            topic: topic.clone(),
            topics: rp.topics.clone(),
            workload: w.clone(),
            share: match shard {
                Some(s) => s.share(index, producers),
                None => Share {
                    index: u64::from(index),
                    of: u64::from(producers),
                },
            },
            ordinal: index,
            partitions: shard.map(|s| s.owned(partitions)),
            e2e: has_consumer,
            shared: shared.clone(),
            barrier: barrier.clone(),
            flush_timeout,
            interval: opts.interval,
        };
        let h = std::thread::Builder::new()
            .name(format!("kb-producer-{index}"))
            .spawn(move || producer::run(job))
            .map_err(|source| RunError::ThreadStart {
                thread: "a producer thread",
                source,
            })?;
        handles.push(h);
    }

    // Every thread connected → (a sharded run's barrier) → warm-up.
    let sharding = opts.shard.clone();
    let (b, sh, s2, run) = (barrier.clone(), shared.clone(), sharding.clone(), rp.index);
    let coordination = blocking(move || {
        b.wait();
        let met = meet_shards(s2.as_deref(), run, Phase::Warmup, &sh);
        b.wait();
        met
    })
    .await?;
    // Warm-up done → disk baseline → (a sharded run's barrier) → go.
    // A shard measures no disk: the collector measures the topics once, for every shard.
    let disk_here = opts.shard.is_none();
    let plain = disk_here.then(|| logdirs::speaks(&rp.admin));
    let stopped_at_start = timeline
        .as_ref()
        .map_or(0, |t| t.consumers_stopped_at_start());
    let (b, brs, t, sh) = (
        barrier.clone(),
        brokers.to_vec(),
        rp.topics.clone(),
        shared.clone(),
    );
    let (disk_before, started_at, coordination) = blocking(move || {
        b.wait();
        let d = plain.map(|p| p.and_then(|()| logdirs::topics_bytes(&brs, &t, partitions)));
        let met =
            coordination.and_then(|()| meet_shards(sharding.as_deref(), run, Phase::Measure, &sh));
        // The time series' t = 0, the same instant for every thread: they read it after the
        // barrier below.
        sh.consumer_stopped
            .fetch_or(stopped_at_start, Ordering::AcqRel);
        sh.start_measuring();
        let started_at = SystemTime::now();
        b.wait();
        (d, started_at, met)
    })
    .await?;
    // Dropped on any early return below (an error, a panic): it undoes its faults then.
    let running = timeline.map(|t| t.start(shared.clone()));

    let ticker = opts
        .progress
        .clone()
        .map(|sink| Ticker::start(sink, shared.clone(), rp.index + 1, runs, rp.label.clone()));

    let joined =
        blocking(move || handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()).await?;
    let mut prods = Vec::new();
    for o in joined {
        prods.push(o.map_err(|_| RunError::ThreadPanicked("a producer thread"))?);
    }
    let reported: u64 = prods.iter().map(|o| o.recording.expected_reads()).sum();
    shared.expected.store(reported, Ordering::Release);
    let aborted: u64 = prods
        .iter()
        .filter_map(|o| o.recording.txn.as_ref())
        .map(|t| t.aborted_records)
        .sum();
    shared.expected_aborted.store(aborted, Ordering::Release);
    shared.producers_done.store(true, Ordering::Release);
    // Before the consumer's drain: it reads from a whole cluster.
    let fault_actions = match running {
        Some(running) => {
            let (actions, fault_notes) = running.finish().await;
            notes.extend(
                fault_notes
                    .into_iter()
                    .map(|n| format!("run {}: {n}", rp.index + 1)),
            );
            Some(actions)
        }
        None => None,
    };
    let joined = blocking(move || {
        consumer_handles
            .into_iter()
            .map(|h| h.join())
            .collect::<Vec<_>>()
    })
    .await?;
    let mut outcomes = Vec::new();
    for o in joined {
        outcomes.push(o.map_err(|_| RunError::ThreadPanicked("a consumer thread"))?);
    }
    let read_side = has_consumer.then(|| ReadSide {
        consumers,
        // The verification consumer commits nothing.
        commit: match w.consumers {
            Some(_) => commit_text(&w.commit),
            None => "off".into(),
        },
        origin_ns: shared.measure_origin(),
        drained_ns: w
            .backlog
            .as_ref()
            .map(|_| reads.drained_ns.load(Ordering::Acquire))
            .filter(|t| *t > 0),
        rebalances: group_rebalances(&outcomes.iter().map(|o| &o.recording).collect::<Vec<_>>()),
    });
    if let Some(t) = ticker {
        t.finish();
    }

    if let Err(why) = coordination {
        // (An interrupt at the barrier is reported as one, with what was measured.)
        if !shared.interrupted() {
            return Err(RunError::Coordination(why));
        }
    }
    let (brs, t) = (brokers.to_vec(), rp.topics.clone());
    let disk_after = if !disk_here {
        None
    } else if shared.lost() {
        Some(Err("the cluster was lost during the run".to_string()))
    } else if let Err(e) = logdirs::speaks(&rp.admin) {
        Some(Err(e.to_string()))
    } else {
        let bytes = blocking(move || logdirs::topics_bytes(&brs, &t, partitions)).await?;
        Some(bytes.map_err(|e| e.to_string()))
    };
    // Per topic, and summed over the topics.
    // Only a note says why the size is unknown.
    let disk_before = disk_before.map(|d| d.map_err(|e| e.to_string()));
    let (disk_by_topic, disk_bytes) = match (disk_before, disk_after) {
        (Some(Ok(b)), Some(Ok(a))) => {
            let (each, total) = disk_growth(&b, &a);
            (Some(each), Some(total))
        }
        (Some(Err(e)), _) | (_, Some(Err(e))) => {
            notes.push(format!(
                "run {}: on-disk size unavailable: {e}",
                rp.index + 1
            ));
            (None, None)
        }
        _ => (None, None),
    };
    for e in outcomes.iter().filter_map(|c| c.error.as_ref()) {
        let note = format!("run {}: {e}", rp.index + 1);
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    let cons = has_consumer
        .then(|| ConsumerRecording::merge(outcomes.into_iter().map(|o| o.recording).collect()));

    let mut r = RunResult {
        index: rp.index,
        label: rp.label.clone(),
        coords: rp
            .cell
            .coords
            .iter()
            .map(|c| (c.dim.clone(), c.text.clone()))
            .collect::<BTreeMap<_, _>>(),
        topic,
        producer_config: rp.producer.masked(),
        consumer_config: rp.consumer.as_ref().map(Props::masked),
        topic_config: Some(TopicConfig::of(&rp.topic)),
        started_at: Some(rfc3339_utc(started_at)),
        ..RunResult::default()
    };
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
    };
    r.derive_figures(&recorded);
    if let Some(s) = shard {
        // A shard's target is its share of the schedule (the collector's merge takes the
        // whole schedule's again).
        r.target_rate = r.target_rate.map(|t| t / f64::from(s.count));
    }
    if let Some(actions) = fault_actions {
        r.faults = Some(crate::measure::fault::derive(actions, &r, &recorded));
    }
    r.derive_topics(
        &rp.topics,
        &recordings,
        cons.as_ref(),
        disk_by_topic.as_deref(),
    );

    let errors: Vec<String> = errors.into_iter().flatten().collect();
    r.status = match (shared.lost_reason(), shared.interrupted()) {
        // The interrupt is the reason given, even when the cluster was lost too.
        (Some(_), true) => RunStatus::ClusterLost {
            reason: "interrupted".into(),
        },
        (Some(reason), false) => RunStatus::ClusterLost { reason },
        (None, true) => RunStatus::Interrupted,
        (None, false) if !errors.is_empty() => RunStatus::Failed {
            reason: errors.join("; "),
        },
        // (`messages = 0` sends nothing on purpose: the run only drains its backlog.)
        // Nothing delivered is a failed run, never a pass (`failed == 0` would hold for a run
        // that could not even send).
        (None, false) if r.acked == 0 && w.messages != Some(0) => RunStatus::Failed {
            reason: nothing_delivered(&r, shared.first_client_error()),
        },
        (None, false) => RunStatus::Complete,
    };
    Ok(r)
}

/// A sharded run's barrier before `phase` (nothing without shards). When it fails, the
/// run's threads are stopped (they are released by the orchestrator's next wait).
fn meet_shards(
    s: Option<&ShardRun>,
    run: usize,
    phase: Phase,
    shared: &Shared,
) -> Result<(), String> {
    let Some(s) = s else {
        return Ok(());
    };
    let met = sharded::barrier(s, run, phase, &|| shared.stopping());
    if let Err(why) = &met {
        if !shared.interrupted() {
            shared.cluster_lost(why.clone());
        }
    }
    met
}

/// Why a run that finished delivered nothing, as far as the clients told.
fn nothing_delivered(r: &RunResult, client_error: Option<String>) -> String {
    let mut cause = if r.sent == 0 {
        "nothing was delivered: no record could be sent".to_string()
    } else {
        format!("nothing was delivered: all {} records sent failed", r.sent)
    };
    if !r.failed_by_kind.is_empty() {
        let kinds: Vec<String> = r
            .failed_by_kind
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect();
        cause.push_str(&format!(" ({})", kinds.join(", ")));
    }
    if let Some(e) = client_error {
        cause.push_str(&format!("; the client reported {e}"));
    }
    cause
}

/// A commit policy as the scenario writes it.
fn commit_text(c: &CommitPolicy) -> String {
    match c {
        CommitPolicy::Auto { interval } => {
            format!(
                "auto({})",
                crate::format::human_duration(interval.as_secs_f64())
            )
        }
        CommitPolicy::Every { records, sync } => {
            format!(
                "every({records}{})",
                if *sync { ", sync: true" } else { "" }
            )
        }
        CommitPolicy::Off => "off".into(),
    }
}
