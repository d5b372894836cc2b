//! franz-go as the producer (`client = franz-go`, its worker in clients/franz-go): each test
//! makes kafkabench's figures meet a count kafkabench did not make. A keyed, compressed, paced
//! workload read back by kafkabench's consumer loses nothing and duplicates nothing, and
//! every record franz-go acknowledged is one the independent reader (tests/common/reader.rs)
//! and GetOffsetShell find; the same seed on librdkafka and on franz-go writes the same keys,
//! values and stamps to the same partitions, read back here byte for byte; and records
//! deleted before they were read are counted lost, exactly (delivery.rs's control, on
//! franz-go).
//!
//! The first test that runs builds the worker into .cache/workers/ (Go 1.26+, `go build`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde_json::Value;

use crate::common::reader::{delete_topic, offset_shell, read_topic};
use crate::common::{self, run_json_with};

fn count(v: &Value, what: &str) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{what} is not a count: {v}"))
}

#[test]
fn a_keyed_compressed_paced_workload_on_franz_go_loses_nothing_and_every_ack_is_on_the_broker()
{
    common::require_broker();
    let bootstrap = common::bootstrap();
    let dir = tempfile::tempdir().unwrap();
    let (_, doc) = run_json_with(
        dir.path(),
        "franz",
        r#"
scenario "franz-go delivery" {
  topic "kb-franz-delivery" { partitions = 3 }
  producer {
    client           = franz-go
    compression.type = lz4
    linger.ms        = 5
  }
  consumer { }
  workload {
    duration = 4s
    rate     = 2000/s
    warmup   = 0s
    key      = uniform(500)
    payload  = json(size: 300B)
  }
}
"#,
        &["--keep-topics"],
        0,
    );
    let r = &doc["runs"][0];
    let d = &r["delivery"];
    let topic = r["topic"].as_str().expect("the run's topic").to_string();
    let (acked, failed) = (count(&r["acked"], "acked"), count(&r["failed"], "failed"));
    assert_eq!(d["incomplete"], false, "{d}");
    assert_eq!(failed, 0, "{r}");
    assert_eq!(count(&d["lost"], "lost"), 0, "{d}");
    assert_eq!(count(&d["duplicated"], "duplicated"), 0, "{d}");
    assert_eq!(count(&d["consumed"], "consumed"), acked, "{d}");
    // A paced run of 4 s at 2000/s: about 8000 records, all of them acknowledged.
    assert!(acked > 4000, "acked {acked}");
    // The broker's count: every acknowledged record took an offset, and no other did.
    let latest: i64 = offset_shell(&bootstrap, &topic, -1)
        .iter()
        .map(|(_, o)| o)
        .sum();
    assert_eq!(latest as u64, acked, "GetOffsetShell's latest offsets");
    // An independent reader finds every one of them, once, stamped by franz-go's worker.
    let read = read_topic(&bootstrap, &topic, "read_committed");
    assert_eq!(read.distinct_measured(), acked);
    assert_eq!(read.duplicates(), 0);
    assert_eq!(read.unstamped, 0);
    delete_topic(&bootstrap, &topic);
}

/// One record as the topic holds it: where, its key, its value and its stamp less the time.
#[derive(Debug, PartialEq, Eq)]
struct Written {
    partition: i32,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    /// The stamp's producer id, sequence number and flags (its first 8 bytes are the
    /// record's intended send time, which is the run's own).
    stamp_rest: Vec<u8>,
}

/// Every record of `topic`, by (producer, seq) from its stamp.
fn written(bootstrap: &str, topic: &str) -> BTreeMap<(u32, u64), Written> {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "kafkabench-franz-go-test")
        .set("enable.auto.commit", "false")
        .create()
        .expect("a consumer");
    let md = c
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .expect("metadata");
    let partitions = md.topics()[0].partitions().len() as i32;
    let mut tpl = TopicPartitionList::new();
    let mut left = 0;
    for p in 0..partitions {
        let (low, high) = c
            .fetch_watermarks(topic, p, Duration::from_secs(10))
            .expect("watermarks");
        left += high - low;
        tpl.add_partition_offset(topic, p, Offset::Offset(low))
            .unwrap();
    }
    c.assign(&tpl).expect("assign");
    let mut out = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while left > 0 {
        assert!(Instant::now() < deadline, "{topic} not read in 60 s");
        let Some(m) = c.poll(Duration::from_millis(200)) else {
            continue;
        };
        let m = m.expect("a record");
        left -= 1;
        let stamp = m
            .headers()
            .and_then(|h| h.iter().find(|h| h.key == "kb").and_then(|h| h.value))
            .expect("a stamped record")
            .to_vec();
        assert_eq!(stamp.len(), 21);
        let producer = u32::from_le_bytes(stamp[8..12].try_into().unwrap());
        let seq = u64::from_le_bytes(stamp[12..20].try_into().unwrap());
        let w = Written {
            partition: m.partition(),
            key: m.key().map(<[u8]>::to_vec),
            value: m.payload().map(<[u8]>::to_vec),
            stamp_rest: stamp[8..].to_vec(),
        };
        assert!(out.insert((producer, seq), w).is_none(), "a copy in {topic}");
    }
    out
}

#[test]
fn franz_go_writes_what_librdkafka_writes_for_the_same_seed() {
    common::require_broker();
    let bootstrap = common::bootstrap();
    let dir = tempfile::tempdir().unwrap();
    // Counted, not timed, so both runs write the same records; two producers, so each one's
    // share of the schedule and its own generators are compared too. librdkafka is given
    // murmur2 (the Java client's partitioner, and franz-go's for keys) so each key lands on
    // the same partition; random payloads with a compressible half, uniform keys and
    // tombstones exercise every generator.
    let scenario = |client: &str, partitioner: &str| {
        format!(
            r#"
scenario "same seed" {{
  topic "kb-franz-same-{client}" {{ partitions = 4 }}
  producer {{
    client           = {client}
    compression.type = zstd
    {partitioner}
  }}
  consumer {{ }}
  workload {{
    messages   = 3000
    producers  = 2
    rate       = 3000/s
    warmup     = 0s
    seed       = 20261205
    key        = uniform(300)
    payload    = random(size: 200B, compressibility: 50%)
    tombstones = 5%
    headers {{ source = "kafkabench" }}
  }}
}}
"#
        )
    };
    let mut topics = Vec::new();
    for (client, partitioner) in [
        ("librdkafka", "partitioner = murmur2_random"),
        ("franz-go", ""),
    ] {
        let (_, doc) = run_json_with(
            dir.path(),
            client,
            &scenario(client, partitioner),
            &["--keep-topics"],
            0,
        );
        let r = &doc["runs"][0];
        assert_eq!(count(&r["acked"], "acked"), 3000, "{client}: {r}");
        assert_eq!(count(&r["delivery"]["lost"], "lost"), 0, "{client}");
        topics.push(r["topic"].as_str().expect("a topic").to_string());
    }
    let rdkafka = written(&bootstrap, &topics[0]);
    let franz = written(&bootstrap, &topics[1]);
    assert_eq!(rdkafka.len(), 3000);
    assert_eq!(franz.len(), 3000);
    let tombstones = franz.values().filter(|w| w.value.is_none()).count();
    assert!(tombstones > 50, "{tombstones} tombstones of 3000 at 5 %");
    for (id, w) in &rdkafka {
        assert_eq!(franz.get(id), Some(w), "record {id:?}");
    }
    for t in &topics {
        delete_topic(&bootstrap, t);
    }
}

#[test]
fn records_deleted_before_franz_go_wrote_them_were_read_are_lost_exactly() {
    common::require_broker();
    let bootstrap = common::bootstrap();
    let dir = tempfile::tempdir().unwrap();
    // delivery.rs's positive control with franz-go writing: the one consumer is stopped from
    // the start, so partition 0's first 500 records are deleted unread; exactly those are lost.
    let (_, doc) = run_json_with(
        dir.path(),
        "deleted",
        r#"
scenario "franz-go deleted" {
  topic "kb-franz-deleted" { partitions = 2 }
  producer { client = franz-go }
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
  expect {
    lost == 500
  }
}
"#,
        &["--keep-topics"],
        0,
    );
    let r = &doc["runs"][0];
    let topic = r["topic"].as_str().expect("a topic").to_string();
    let acked = count(&r["acked"], "acked");
    assert_eq!(count(&r["failed"], "failed"), 0, "{r}");
    assert_eq!(count(&r["delivery"]["lost"], "lost"), 500, "{}", r["delivery"]);
    assert_eq!(offset_shell(&bootstrap, &topic, -2), vec![(0, 500), (1, 0)]);
    let latest: i64 = offset_shell(&bootstrap, &topic, -1)
        .iter()
        .map(|(_, o)| o)
        .sum();
    assert_eq!(latest as u64, acked, "every acked record took an offset");
    let read = read_topic(&bootstrap, &topic, "read_committed");
    assert_eq!(read.distinct_measured(), acked - 500);
    delete_topic(&bootstrap, &topic);
}
