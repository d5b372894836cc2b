//! A compacted topic checked after the run (`compaction = verify`), against the real broker:
//! an honest run keeps every key's last value, as an independent read of the compacted topic
//! confirms; a control run, in which Kafka's own console producer writes older values of 100
//! keys behind kafkabench's back, loses exactly those 100 last writes.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde_json::Value;

use crate::common::{self, bootstrap, reader};

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// What the topic holds per key, read here with rust-rdkafka's consumer (not kafkabench's
/// code): how many records of each `key-N`, and how many of them are tombstones.
#[derive(Default, Debug)]
struct Keys {
    values: HashMap<Vec<u8>, u64>,
    tombstones: HashMap<Vec<u8>, u64>,
}

fn read_keys(topic: &str) -> Keys {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("group.id", "kafkabench-independent-reader")
        .set("enable.auto.commit", "false")
        .create()
        .expect("a consumer");
    let md = c
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .expect("metadata");
    let partitions = md.topics()[0].partitions().len() as i32;
    let mut ends = HashMap::new();
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        let (low, high) = c
            .fetch_watermarks(topic, p, Duration::from_secs(10))
            .expect("watermarks");
        if high > low {
            ends.insert(p, high);
            tpl.add_partition_offset(topic, p, Offset::Beginning)
                .unwrap();
        }
    }
    c.assign(&tpl).expect("assign");
    let mut k = Keys::default();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ends.is_empty() {
        assert!(
            Instant::now() < deadline,
            "the read of {topic} took over 60 s"
        );
        let Some(m) = c.poll(Duration::from_millis(200)) else {
            continue;
        };
        let m = m.expect("a record");
        if let Some(key) = m.key().filter(|k| k.starts_with(b"key-")) {
            let into = if m.payload().is_none() {
                &mut k.tombstones
            } else {
                &mut k.values
            };
            *into.entry(key.to_vec()).or_default() += 1;
        }
        if ends
            .get(&m.partition())
            .is_some_and(|e| m.offset() + 1 >= *e)
        {
            ends.remove(&m.partition());
        }
    }
    k
}

/// A compacted topic of three partitions, 2000 keys uniformly, 5 % tombstones; `extra` goes
/// into the scenario (a producer block, faults). Returns the run and its topic (kept).
fn compacted(dir: &Path, name: &str, workload: &str, extra: &str) -> (Value, String) {
    common::require_broker();
    let text = format!(
        r#"
scenario "{name}" {{
  topic "kb-test-{name}" {{
    partitions          = 3
    cleanup.policy      = compact
    delete.retention.ms = 1000
  }}
  workload {{
    {workload}
    tombstones = 5%
    compaction = verify(within: 90s)
  }}
  {extra}
}}
"#
    );
    let (_, v) = common::run_json_with(dir, name, &text, &["--keep-topics"], 0);
    let run = v["runs"][0].clone();
    let topic = run["topic"].as_str().unwrap().to_string();
    (run, topic)
}

#[test]
fn an_honest_run_keeps_every_keys_last_value_as_an_independent_read_finds() {
    let dir = tempfile::tempdir().unwrap();
    let (run, topic) = compacted(
        dir.path(),
        "compact-honest",
        "messages = 20k\n    rate = 5000/s\n    key = uniform(2000)",
        "",
    );
    let keys = read_keys(&topic);
    reader::delete_topic(&bootstrap(), &topic);
    let c = &run["compaction"];
    eprintln!("honest: {c}");
    assert_eq!(c["finished"], true, "{c}");
    assert_eq!(u(&c["lost"]), 0, "{c}");
    assert_eq!(u(&c["missing"]), 0, "{c}");
    assert_eq!(u(&c["resurrected"]), 0, "{c}");
    assert_eq!(u(&c["tombstones_left"]), 0, "{c}");
    // 20k writes over 2000 keys: nearly every key written, about 5 % last deleted.
    let (written, live) = (u(&c["keys"]), u(&c["live"]));
    assert!(written > 1900 && written <= 2000, "{c}");
    assert!(live < written && live > written * 85 / 100, "{c}");
    // What the topic holds, by a read kafkabench did not make: one value of every live key,
    // no other record of a key, no tombstone.
    assert_eq!(keys.values.len() as u64, u(&c["surviving"]), "{keys:?}");
    assert_eq!(keys.values.len() as u64, live);
    assert!(keys.values.values().all(|n| *n == 1), "{keys:?}");
    assert!(keys.tombstones.is_empty(), "{keys:?}");
    // Compaction shrank the log, and the cleaner's time is measured.
    assert!(
        c["bytes_after"].as_u64() < c["bytes_before"].as_u64(),
        "{c}"
    );
    assert!(c["cleaner_secs"].as_f64().is_some_and(|t| t > 0.0), "{c}");
}

/// The control: keys are the sequence (`key-N` written once, at record N), and at 2 s Kafka's
/// console producer writes `key-0` … `key-99` again with a value of its own. Each of those
/// is now the key's last record, so compaction drops kafkabench's write: its last value is
/// lost, or, where kafkabench's last write was a tombstone, the key is resurrected. Both
/// producers hash keys with murmur2, so a key's records share a partition.
#[test]
fn older_values_written_behind_its_back_are_counted_lost_or_resurrected() {
    let dir = tempfile::tempdir().unwrap();
    let tool = common::repo().join("scripts/kafka-local");
    let command = format!(
        "seq 0 99 | sed 's/.*/key-&:older/' | '{}' tool org.apache.kafka.tools.ConsoleProducer --bootstrap-server \\\"$KB_BOOTSTRAP\\\" --topic \\\"$KB_TOPIC\\\" --reader-property parse.key=true --reader-property key.separator=:",
        tool.display()
    );
    let (run, topic) = compacted(
        dir.path(),
        "compact-control",
        "duration = 12s\n    rate = 500/s\n    key = sequence",
        &format!(
            "producer {{ partitioner = murmur2_random }}\n  faults {{\n    at 2s run \"{command}\"\n  }}"
        ),
    );
    let keys = read_keys(&topic);
    reader::delete_topic(&bootstrap(), &topic);
    let action = &run["faults"]["actions"][0];
    assert!(
        action["outcome"]
            .as_str()
            .is_some_and(|o| o.starts_with("ok")),
        "the console producer wrote: {action}"
    );
    let c = &run["compaction"];
    eprintln!("control: {c}");
    assert_eq!(c["finished"], true, "{c}");
    assert_eq!(
        u(&c["lost"]) + u(&c["resurrected"]),
        100,
        "the 100 keys written behind kafkabench's back: {c}"
    );
    assert!(u(&c["lost"]) > 0, "{c}");
    // Each of those keys holds the other writer's value: none is missing.
    assert_eq!(u(&c["missing"]), 0, "{c}");
    let older = (0..100)
        .filter(|n| keys.values.contains_key(format!("key-{n}").as_bytes()))
        .count();
    assert_eq!(
        older, 100,
        "the independent read finds the 100 older values"
    );
}
