//! A compacted topic checked after the run (`compaction = verify`), as a stage of one run:
//! compaction forced, the topic read whole until the cleaner has been through it, and the
//! read compared with every key's last write (`measure::compaction`).
//!
//! Kafka cleans only closed segments, only when enough of the log is dirty, and removes a
//! tombstone only in a pass after `delete.retention.ms`. So the check sets the topic's
//! `segment.ms` short and `min.cleanable.dirty.ratio` to 0, and every round writes one
//! marker record (its own key, a null value) to each partition: a marker rolls the segment
//! before it, which makes the run's last records cleanable and keeps the log dirty for the
//! tombstones' later pass. Each round reads the topic and stops once every key is read once
//! and no tombstone of the run is left; `within` bounds it all.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Message, Offset, TopicPartitionList};

use super::blocking::blocking;
use super::shared::Shared;
use crate::measure::compaction::{CompactionFigures, KeyTable, SplitKeys, TopicRead};
use crate::plan::{RunNo, RunPlan};
use crate::wire::admin::{alter_topic_configs, bootstrap_list};

/// The key of the check's roll markers: not a key any pattern writes (`key-N`).
pub(crate) const MARKER: &[u8] = b"kafkabench.compaction.roll";

/// Between rounds: the broker's `log.cleaner.backoff.ms` is 15 s by default, so a shorter
/// wait only reads the same log again.
const ROUND: Duration = Duration::from_secs(1);

/// The most one read of the topic may take; a longer one is cut by the check's own bound.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The check as a stage after the run, against every key's last write as the producers'
/// delivery reports told it (`tables`, one per producer). Not after a run cut short, nor on
/// a shard: what was written last is then not known.
pub(super) async fn after_run<'a>(
    rp: &RunPlan,
    brokers: &[String],
    shared: &Arc<Shared>,
    sharded: bool,
    mut tables: impl Iterator<Item = &'a KeyTable>,
    notes: &mut Vec<String>,
) -> Option<CompactionFigures> {
    rp.workload.compaction.as_ref()?;
    let why = if shared.interrupted() || shared.lost() {
        Some("the run was cut short")
    } else if sharded {
        // Every shard writes the same keys: one shard's last writes are not the run's.
        Some("a shard knows only its own writes of each key")
    } else {
        None
    };
    if let Some(why) = why {
        notes.push(format!(
            "run {}: no compaction check: {why}",
            RunNo(rp.index)
        ));
        return None;
    }
    let mut table = tables.next()?.clone();
    tables.for_each(|t| table.absorb(t));
    let (rp, brokers, sh) = (rp.clone(), brokers.to_vec(), shared.clone());
    let (figures, note) = blocking(move || verify(&rp, &brokers, &table, &|| sh.interrupted()))
        .await
        .unwrap_or((None, None));
    notes.extend(note);
    figures
}

/// Compaction forced and checked; the figures with a note when the bound passed first, or
/// a note alone when the check could not ask the cluster.
fn verify(
    rp: &RunPlan,
    brokers: &[String],
    table: &KeyTable,
    stopping: &dyn Fn() -> bool,
) -> (Option<CompactionFigures>, Option<String>) {
    let Some(check) = &rp.workload.compaction else {
        return (None, None);
    };
    let run = RunNo(rp.index);
    match force_and_read(rp, brokers, table, check.within, stopping) {
        Ok((f, None)) => (Some(f), None),
        Ok((f, Some(why))) => (Some(f), Some(format!("run {run}: compaction check: {why}"))),
        Err(e) => (None, Some(format!("run {run}: no compaction check: {e}"))),
    }
}

fn force_and_read(
    rp: &RunPlan,
    brokers: &[String],
    table: &KeyTable,
    within: Duration,
    stopping: &dyn Fn() -> bool,
) -> Result<(CompactionFigures, Option<String>), String> {
    let start = Instant::now();
    let deadline = start + within;
    let topic = rp.topics[0].as_str();
    let partitions = rp.topic.partitions;
    let security = super::logdirs::security(&rp.admin).map_err(|e| e.to_string())?;
    let bytes = || {
        super::logdirs::topics_bytes(brokers, &security, &[topic.to_string()], partitions)
            .ok()
            .and_then(|b| b.first().copied())
    };
    let bytes_before = bytes();
    alter_topic_configs(
        &bootstrap_list(&rp.bootstrap),
        &security,
        topic,
        &[
            ("segment.ms", "100"),
            ("min.cleanable.dirty.ratio", "0"),
            ("min.compaction.lag.ms", "0"),
        ],
    )
    .map_err(|e| format!("cannot set the topic's configs to force compaction: {e}"))?;
    let config = super::admin::config(&rp.admin);
    let producer: BaseProducer = config
        .clone()
        .set("acks", "all")
        .create()
        .map_err(|e| format!("cannot create the marker producer: {e}"))?;
    let deleted_keys = table.latest().iter().any(|l| l.offset >= 0 && l.tombstone);
    let mut cleaned_at = None;
    let (figures, why) = loop {
        mark(&producer, topic, partitions)?;
        let read = read_topic(
            &config,
            topic,
            partitions,
            table,
            deadline.min(Instant::now() + READ_TIMEOUT),
        )?;
        let f = CompactionFigures::derive(table, &read);
        // No cleaner merges two partitions: waiting would only run out the bound.
        if let Some(split) = SplitKeys::of(table, &read, partitions) {
            break (f, Some(split.words()));
        }
        if read.repeated == 0 && cleaned_at.is_none() {
            cleaned_at = Some(start.elapsed());
        }
        let done = cleaned_at.is_some() && (!deleted_keys || f.tombstones_left == 0);
        if done {
            break (f, None);
        }
        if stopping() {
            break (
                f,
                Some("interrupted before the cleaner finished".to_string()),
            );
        }
        if Instant::now() + ROUND >= deadline {
            let why = format!(
                "the cleaner had not finished within {}s: {} records of keys read more than once, {} tombstones left (the figures are those of the last read)",
                within.as_secs(),
                read.repeated,
                f.tombstones_left
            );
            break (f, Some(why));
        }
        std::thread::sleep(ROUND);
    };
    Ok((
        CompactionFigures {
            bytes_before,
            bytes_after: bytes(),
            cleaner_secs: cleaned_at.map(|d| d.as_secs_f64()),
            finished: why.is_none(),
            ..figures
        },
        why,
    ))
}

/// One marker per partition, acknowledged before the round reads.
fn mark(producer: &BaseProducer, topic: &str, partitions: i32) -> Result<(), String> {
    for p in 0..partitions {
        producer
            .send(BaseRecord::<[u8], [u8]>::to(topic).partition(p).key(MARKER))
            .map_err(|(e, _)| format!("cannot write a roll marker: {e}"))?;
    }
    producer
        .flush(Duration::from_secs(10))
        .map_err(|e| format!("the roll markers were not acknowledged: {e}"))
}

/// The whole topic, from each partition's start to its end when the read began.
fn read_topic(
    config: &ClientConfig,
    topic: &str,
    partitions: i32,
    table: &KeyTable,
    deadline: Instant,
) -> Result<TopicRead, String> {
    let consumer: BaseConsumer = config
        .clone()
        .set("group.id", "kafkabench-compaction-check")
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("enable.partition.eof", "false")
        .create()
        .map_err(|e| format!("cannot create the reader: {e}"))?;
    let mut ends = Vec::with_capacity(partitions as usize);
    let mut done = Vec::with_capacity(partitions as usize);
    let mut list = TopicPartitionList::new();
    for p in 0..partitions {
        let (low, high) = consumer
            .fetch_watermarks(topic, p, Duration::from_secs(10))
            .map_err(|e| format!("cannot ask partition {p}'s offsets: {e}"))?;
        ends.push(high);
        // An empty partition is read to its end already.
        done.push(high <= low);
        if high > low {
            list.add_partition_offset(topic, p, Offset::Beginning)
                .map_err(|e| e.to_string())?;
        }
    }
    let mut left = done.iter().filter(|d| !**d).count();
    consumer
        .assign(&list)
        .map_err(|e| format!("cannot assign the topic's partitions: {e}"))?;
    let mut read = TopicRead::new(table.len());
    while left > 0 {
        if Instant::now() >= deadline {
            return Err(format!(
                "the read of the whole topic did not finish in time ({left} partitions unread to their end)"
            ));
        }
        let m = match consumer.poll(Duration::from_millis(200)) {
            None => continue,
            Some(Err(KafkaError::PartitionEOF(_))) => continue,
            Some(Err(e)) => return Err(format!("the read failed: {e}")),
            Some(Ok(m)) => m,
        };
        let p = m.partition() as usize;
        if p >= done.len() || done[p] {
            continue;
        }
        let key = m.key();
        if key != Some(MARKER) {
            read.record(
                key.and_then(|k| table.index(k)),
                m.partition(),
                m.offset(),
                m.payload().is_none(),
            );
        }
        if m.offset() + 1 >= ends[p] {
            done[p] = true;
            left -= 1;
        }
    }
    Ok(read)
}
