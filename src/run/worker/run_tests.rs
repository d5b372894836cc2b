//! Runs on the Java worker against the local broker (KAFKA_BOOTSTRAP, default
//! 127.0.0.1:9092), driven through `RunPlan.producer_client`/`consumer_client` as the plan sets
//! them: delivery checked against Kafka's GetOffsetShell, the same records as librdkafka's for
//! the same seed, and the deletion control. Needs a JDK (the worker is built on first use).

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Headers;
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};

use crate::measure::RunResult;
use crate::model::ClientKind;
use crate::plan::{Plan, PlanOptions, Selection};
use crate::run::{execute, RunOptions};

fn bootstrap() -> String {
    std::env::var("KAFKA_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:9092".into())
}

/// The scenario `text`, checked and planned with a fresh run id.
pub(crate) fn plan_of(text: &str) -> Plan {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("s.kbs");
    std::fs::write(&path, text).expect("write the scenario");
    let mut sources = crate::source::Sources::default();
    let scenario = crate::check::load(&path, &mut sources).expect("the scenario checks");
    let opts = PlanOptions {
        bootstrap: Some(bootstrap()),
        run_id: crate::plan::new_run_id(),
        ..PlanOptions::default()
    };
    crate::plan::plan(&scenario, &opts)
}

/// Every run of `plan` with its sides on these clients; the topics kept for reading back.
pub(crate) fn run_on(
    plan: &mut Plan,
    producer: ClientKind,
    consumer: ClientKind,
) -> Vec<RunResult> {
    for r in &mut plan.runs {
        r.producer_client = producer;
        r.consumer_client = consumer;
        r.producer_version = producer.default_version();
        r.consumer_version = consumer.default_version();
    }
    let opts = RunOptions {
        keep_topics: true,
        ..RunOptions::default()
    };
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let exec = rt.block_on(execute(
        plan,
        &Selection::all(plan),
        &opts,
        Arc::new(AtomicBool::new(false)),
    ));
    assert!(
        exec.failure.is_none(),
        "{:?} {:?}",
        exec.failure,
        exec.notes
    );
    exec.results
}

/// Kafka's GetOffsetShell: the sum over `topic`'s partitions of the offset at `time` (-1
/// latest, -2 earliest).
pub(crate) fn offset_shell(topic: &str, time: i64) -> i64 {
    let tool = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka-local");
    let out = Command::new(tool)
        .args([
            "tool",
            "org.apache.kafka.tools.GetOffsetShell",
            "--bootstrap-server",
            &bootstrap(),
            "--topic",
            topic,
            "--time",
            &time.to_string(),
        ])
        .output()
        .expect("GetOffsetShell runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.rsplit(':').next()?.trim().parse::<i64>().ok())
        .sum()
}

/// One record as read back with rust-rdkafka's own consumer: key, value, and the stamp's
/// producer, sequence and flags and its intended time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Read {
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub producer: u32,
    pub seq: u64,
    pub flags: u8,
    pub intended_ns: u64,
}

/// Every record of `topic`, read back whole.
pub(crate) fn read_back(topic: &str, partitions: i32) -> Vec<Read> {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set(
            "group.id",
            format!("kb-readback-{}", crate::plan::new_run_id()),
        )
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .create()
        .expect("a consumer");
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .expect("a partition");
    }
    c.assign(&tpl).expect("assign");
    let mut out = Vec::new();
    let mut ended = 0;
    let by = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while ended < partitions && std::time::Instant::now() < by {
        match c.poll(std::time::Duration::from_millis(200)) {
            Some(Ok(m)) => {
                let stamp = m
                    .headers()
                    .and_then(|h| h.iter().find(|x| x.key == "kb").and_then(|x| x.value))
                    .map(<[u8]>::to_vec)
                    .unwrap_or_default();
                assert_eq!(stamp.len(), 21, "every record is stamped");
                let u64_at = |i: usize| u64::from_le_bytes(stamp[i..i + 8].try_into().unwrap());
                out.push(Read {
                    key: m.key().map(<[u8]>::to_vec),
                    value: m.payload().map(<[u8]>::to_vec),
                    producer: u32::from_le_bytes(stamp[8..12].try_into().unwrap()),
                    seq: u64_at(12),
                    flags: stamp[20],
                    intended_ns: u64_at(0),
                });
            }
            Some(Err(rdkafka::error::KafkaError::PartitionEOF(_))) => ended += 1,
            _ => {}
        }
    }
    out
}

pub(crate) fn delete_topic(topic: &str) {
    let tool = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka-local");
    let _ = Command::new(tool)
        .args([
            "tool",
            "kafka.admin.TopicCommand",
            "--bootstrap-server",
            &bootstrap(),
            "--delete",
            "--topic",
            topic,
        ])
        .output();
}

const KEYED: &str = r#"
scenario "clients" {
  topic "kb-clients" { partitions = 3 }
  producer { compression.type = lz4 }
  consumer { }
  workload {
    duration = 3s
    rate     = 2000/s
    warmup   = 500ms
    payload  = random(size: 300B, compressibility: 50%)
    key      = uniform(100)
  }
}
"#;

#[test]
fn a_keyed_compressed_paced_run_on_java_loses_and_duplicates_nothing() {
    let mut plan = plan_of(KEYED);
    let r = run_on(&mut plan, ClientKind::Java, ClientKind::Java).remove(0);
    let topic = plan.runs[0].topic.name.clone();
    let d = r.delivery.clone().expect("a consumer read");
    eprintln!(
        "java: sent {} acked {} failed {} consumed {} lost {:?} dup {} ack.p99 {:?} e2e.p99 {:?}",
        r.sent,
        r.acked,
        r.failed,
        d.consumed,
        d.lost,
        d.duplicated,
        r.ack.p99_ms,
        r.e2e.as_ref().map(|e| e.p99_ms)
    );
    assert!(r.acked >= 5_000, "3 s at 2000/s: {}", r.acked);
    assert_eq!(r.failed, 0);
    assert_eq!(d.lost, Some(0));
    assert_eq!(d.duplicated, 0);
    assert_eq!(
        d.consumed, r.acked,
        "the reader counts every acknowledged record"
    );
    // Kafka's own count: warm-up's records and the measured ones took an offset each.
    let latest = offset_shell(&topic, -1);
    let read = read_back(&topic, 3);
    assert_eq!(
        latest as usize,
        read.len(),
        "GetOffsetShell against the topic read back"
    );
    let measured = read.iter().filter(|x| x.flags & 1 != 0).count() as u64;
    assert_eq!(
        measured, r.acked,
        "every acked measured record is in the topic once"
    );
    assert!(r.internals.batch_bytes_avg.is_some(), "{:?}", r.internals);
    delete_topic(&topic);
}

/// Each producer's records by sequence: key, value, flags, and the intended time from the
/// producer's first (the schedule's offsets; the origin itself is an instant of each run).
fn by_producer_seq(reads: &[Read]) -> std::collections::BTreeMap<(u32, u64), Read> {
    let mut first = std::collections::BTreeMap::new();
    for r in reads {
        let f = first.entry(r.producer).or_insert(u64::MAX);
        *f = (*f).min(r.intended_ns);
    }
    reads
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.intended_ns -= first[&r.producer];
            ((r.producer, r.seq), r)
        })
        .collect()
}

#[test]
fn the_same_seed_writes_the_same_records_on_librdkafka_and_java() {
    let text = r#"
scenario "same_seed" {
  topic "kb-clients-seed" { partitions = 2 }
  producer { compression.type = zstd }
  consumer { }
  workload {
    messages  = 3000
    rate      = 3000/s
    producers = 2
    payload   = random(size: 200B, compressibility: 30%)
    key       = zipf(500)
    headers { source = "kafkabench" }
  }
}
"#;
    let mut reads = Vec::new();
    for client in [ClientKind::Librdkafka, ClientKind::Java] {
        let mut plan = plan_of(text);
        plan.runs[0].workload.seed = Some(0x5eed);
        let r = run_on(&mut plan, client, ClientKind::Librdkafka).remove(0);
        assert_eq!(r.acked, 3000, "{client}");
        let topic = plan.runs[0].topic.name.clone();
        reads.push(by_producer_seq(&read_back(&topic, 2)));
        delete_topic(&topic);
    }
    let (rd, java) = (&reads[0], &reads[1]);
    assert_eq!(rd.len(), 3000);
    assert_eq!(
        rd.keys().collect::<Vec<_>>(),
        java.keys().collect::<Vec<_>>(),
        "the same producers and sequence numbers"
    );
    let differ: Vec<_> = rd
        .iter()
        .filter(|(k, r)| java.get(k) != Some(r))
        .map(|(k, r)| (k, r, java.get(k)))
        .take(3)
        .collect();
    assert!(differ.is_empty(), "records that differ: {differ:?}");
}

#[test]
fn records_deleted_before_they_are_read_are_lost_exactly_on_java() {
    // tests/delivery.rs's control, both sides on the Java client: the one group member is
    // stopped from the first instant, 500 records of partition 0 are deleted at 2 s, it
    // rejoins at 3 s and reads from the new log start: exactly 500 acked records are lost.
    let mut plan = plan_of(
        r#"
scenario "deleted" {
  topic "kb-clients-deleted" { partitions = 2 }
  consumer { }
  workload {
    duration  = 4s
    rate      = 2000/s
    warmup    = 0s
    consumers = 1
  }
  faults {
    at 0s stop consumer 1 for 3s
    at 2s delete records of partition 0 before 500
  }
}
"#,
    );
    let r = run_on(&mut plan, ClientKind::Java, ClientKind::Java).remove(0);
    let topic = plan.runs[0].topic.name.clone();
    let d = r.delivery.clone().expect("a consumer read");
    eprintln!(
        "deleted: acked {} failed {} consumed {} lost {:?}",
        r.acked, r.failed, d.consumed, d.lost
    );
    assert_eq!(r.failed, 0, "nothing may fail for the count to be exact");
    assert_eq!(d.lost, Some(500));
    assert_eq!(offset_shell(&topic, -1) as u64, r.acked);
    assert_eq!(offset_shell(&topic, -2), 500, "partition 0 starts at 500");
    assert_eq!(d.consumed, r.acked - 500);
    delete_topic(&topic);
}
