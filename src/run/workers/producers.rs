//! The producer threads of a run: each one's job (its share of the schedule, its client, the
//! barriers it meets) started, the warm-up behind the barrier, and the threads joined.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use super::super::admin;
use super::super::blocking::blocking;
use super::super::clients::Client;
use super::super::error::RunError;
use super::super::options::RunOptions;
use super::super::pacer::Share;
use super::super::producer::{ProducerJob, ProducerOutcome};
use super::super::shard::Phase;
use super::super::shared::Shared;
use super::super::topic::Disk;
use crate::model::Workload;
use crate::plan::RunPlan;

use super::*;

/// The producer threads, connecting.
pub(super) fn start_producers(
    rp: &RunPlan,
    w: &Workload,
    (opts, client): (&RunOptions, &Arc<dyn Client>),
    t: &Threads,
    partitions: i32,
) -> Result<Vec<JoinHandle<ProducerOutcome>>, RunError> {
    let timeout_ms: u64 = rp
        .producer
        .get("delivery.timeout.ms")
        .or(rp.producer.get("message.timeout.ms"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_DELIVERY_TIMEOUT_MS);
    // A little past librdkafka's own timeout, so its failure reports arrive first.
    let flush_timeout = Duration::from_millis(timeout_ms) + Duration::from_secs(5);
    let mut handles = Vec::new();
    for index in 0..w.producers {
        let job = ProducerJob {
            config: admin::config(&rp.producer),
            topic: rp.topic.name.clone(),
            topics: rp.topics.clone(),
            workload: w.clone(),
            share: match t.shard {
                Some(s) => s.share(index, w.producers),
                None => Share {
                    index: u64::from(index),
                    of: u64::from(w.producers),
                },
            },
            ordinal: index,
            partitions: t.shard.map(|s| s.owned(partitions)),
            partition_count: partitions,
            e2e: rp.consumer.is_some(),
            shared: t.shared.clone(),
            barrier: t.barrier.clone(),
            readers_skip_aborted: rp.consumer.as_ref().is_some_and(|c| {
                rp.share.is_none() && c.get("isolation.level") != Some("read_uncommitted")
            }),
            flush_timeout,
            interval: opts.interval,
            by_due: by_due(rp, opts),
        };
        let client = client.clone();
        let h = std::thread::Builder::new()
            .name(format!("kb-producer-{index}"))
            .spawn(move || client.produce(job))
            .map_err(|source| RunError::ThreadStart {
                thread: "a producer thread",
                source,
            })?;
        handles.push(h);
    }
    Ok(handles)
}

/// Every consumer ready (and reading from then on) → every other thread connected → (a sharded
/// run's barrier) → warm-up → disk baseline → (a sharded run's barrier) → the measured phase's
/// t = 0, which the producers read after the last barrier and the consumers at their next step.
pub(super) async fn warm_up(
    rp: &RunPlan,
    opts: &RunOptions,
    t: &Threads,
    brokers: &[String],
    partitions: i32,
    stopped_at_start: u64,
) -> Result<Start, RunError> {
    let sharding = opts.shard.clone();
    let (b, readers, sh, s2) = (
        t.barrier.clone(),
        t.readers.clone(),
        t.shared.clone(),
        sharding.clone(),
    );
    let coordination = blocking(move || {
        // A consumer stopped from the first instant reads nothing at all: the readers read
        // through warm-up, so the bit is set before they are let go, not at the clock's start
        // (they would race the first measured records).
        sh.stop_consumers_at_start(stopped_at_start);
        readers.wait();
        sh.readers_let_go();
        b.wait();
        let met = meet_shards(s2.as_deref(), Phase::Warmup, &sh);
        b.wait();
        met
    })
    .await?;
    // A shard measures no disk: the collector measures the topics once, for every shard.
    let disk = opts
        .shard
        .is_none()
        .then(|| Disk::new(rp, brokers, partitions));
    let (b, d, sh) = (t.barrier.clone(), disk.clone(), t.shared.clone());
    blocking(move || {
        b.wait();
        let disk_before = d.as_ref().map(Disk::bytes);
        let coordination =
            coordination.and_then(|()| meet_shards(sharding.as_deref(), Phase::Measure, &sh));
        sh.start_measuring();
        let started_at = SystemTime::now();
        b.wait();
        Start {
            disk,
            disk_before,
            started_at,
            coordination,
        }
    })
    .await
    .map_err(RunError::from)
}

/// The producers' recordings, once every producer is done; tells the consumers how many
/// records to expect.
pub(super) async fn join_producers(
    handles: Vec<JoinHandle<ProducerOutcome>>,
    shared: &Shared,
) -> Result<Vec<ProducerOutcome>, RunError> {
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
    Ok(prods)
}
