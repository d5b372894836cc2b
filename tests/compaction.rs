//! A compacted topic checked after the run (`compaction = verify`), against the real broker:
//! an honest run keeps every key's last value, as an independent read of the compacted topic
//! confirms; a control run, in which Kafka's own console producer writes older values of 100
//! keys behind kafkabench's back, loses exactly those 100 last writes.

use std::collections::{BTreeSet, HashMap};
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
/// code): how many records of each `key-N`, how many of them are tombstones, and which
/// partitions each is in.
#[derive(Default, Debug)]
struct Keys {
    values: HashMap<Vec<u8>, u64>,
    tombstones: HashMap<Vec<u8>, u64>,
    partitions: HashMap<Vec<u8>, BTreeSet<i32>>,
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
            k.partitions
                .entry(key.to_vec())
                .or_default()
                .insert(m.partition());
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
/// into the scenario (a producer block, faults). Returns the run, its topic (kept) and the
/// invocation's notes.
fn compacted(dir: &Path, name: &str, workload: &str, extra: &str) -> (Value, String, Vec<String>) {
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
    let notes = v["notes"]
        .as_array()
        .map(|n| {
            n.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    (run, topic, notes)
}

#[test]
fn an_honest_run_keeps_every_keys_last_value_as_an_independent_read_finds() {
    let dir = tempfile::tempdir().unwrap();
    let (run, topic, _) = compacted(
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
    let (run, topic, _) = behind_its_back(
        dir.path(),
        "compact-control",
        "producer { partitioner = murmur2_random }\n  ",
    );
    let keys = read_keys(&topic);
    reader::delete_topic(&bootstrap(), &topic);
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

/// The same control with librdkafka's default partitioner (CRC32) against the console
/// producer's murmur2: most of the 100 keys now live in two partitions, which no cleaner
/// merges. The check says so at its first read, naming both partitioners, instead of waiting
/// out its 90 s; the keys it counts split are those an independent read finds in two
/// partitions, and the other foreign writes are still counted lost or resurrected.
#[test]
fn keys_another_partitioner_placed_elsewhere_are_named_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (run, topic, notes) = behind_its_back(dir.path(), "compact-split", "");
    let took = started.elapsed();
    let keys = read_keys(&topic);
    reader::delete_topic(&bootstrap(), &topic);
    let c = &run["compaction"];
    eprintln!("split: {c} in {took:?}; notes {notes:?}");
    let split = keys.partitions.values().filter(|p| p.len() > 1).count() as u64;
    assert!(
        split > 0,
        "the independent read finds keys in two partitions"
    );
    assert_eq!(u(&c["split_keys"]), split, "{c}");
    assert_eq!(c["finished"], false, "{c}");
    assert_eq!(
        u(&c["lost"]) + u(&c["resurrected"]) + split,
        100,
        "the 100 keys written behind kafkabench's back: {c}"
    );
    assert_eq!(u(&c["missing"]), 0, "{c}");
    let note = notes
        .iter()
        .find(|n| n.contains("in more than one partition"))
        .unwrap_or_else(|| panic!("no note names the split keys: {notes:?}"));
    assert!(
        note.contains(&format!("{split} keys are in more than one partition")),
        "{note}"
    );
    assert!(
        note.contains("kafkabench wrote them where CRC32")
            && note.contains("another writer where murmur2"),
        "{note}"
    );
    // The run is 12 s; waiting for a cleaner that cannot finish took 90 s more.
    assert!(took < Duration::from_secs(60), "the check waited: {took:?}");
}

/// `duration = 12s` of sequence keys at 500/s over three partitions, with the console
/// producer writing `key-0` … `key-99` again at 2 s (murmur2, the Java client's default);
/// `producer` sets kafkabench's partitioner or leaves librdkafka's default.
fn behind_its_back(dir: &Path, name: &str, producer: &str) -> (Value, String, Vec<String>) {
    let tool = common::repo().join("scripts/kafka-local");
    let command = format!(
        "seq 0 99 | sed 's/.*/key-&:older/' | '{}' tool org.apache.kafka.tools.ConsoleProducer --bootstrap-server \\\"$KB_BOOTSTRAP\\\" --topic \\\"$KB_TOPIC\\\" --reader-property parse.key=true --reader-property key.separator=:",
        tool.display()
    );
    let r = compacted(
        dir,
        name,
        "duration = 12s\n    rate = 500/s\n    key = sequence",
        &format!("{producer}faults {{\n    at 2s run \"{command}\"\n  }}"),
    );
    let action = &r.0["faults"]["actions"][0];
    assert!(
        action["outcome"]
            .as_str()
            .is_some_and(|o| o.starts_with("ok")),
        "the console producer wrote: {action}"
    );
    r
}
