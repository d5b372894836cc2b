//! Runs on the client workers, end to end as a user runs them (`client = java`): delivery on
//! each client checked against Kafka's GetOffsetShell and an independent reader, the same
//! records on each client for the same seed, and the deletion control per client. Needs a JDK
//! and Go 1.26+ (scripts/setup; each worker is built on first use, into .cache/workers/).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::common::{self, reader};

/// The clients a producer can be on.
const CLIENTS: &[&str] = &["librdkafka", "java", "franz-go"];

/// The client that reads what `producer` wrote in the deletion control: the producer's own,
/// but franz-go's reader, which kafkabench does not drive yet (`check` refuses it), and whose
/// records the Java client reads.
fn reader_of(producer: &str) -> &str {
    match producer {
        "franz-go" => "java",
        c => c,
    }
}

/// Kafka's GetOffsetShell: the sum over `topic`'s partitions of the offset at `time`.
fn offsets(topic: &str, time: i64) -> i64 {
    reader::offset_shell(&common::bootstrap(), topic, time)
        .iter()
        .map(|(_, o)| o)
        .sum()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// A keyed, compressed, paced workload on each client, read by kafkabench's reader (its
/// verifying consumer, librdkafka): nothing lost or duplicated, and the reader counts every
/// record the client acknowledged, which is what GetOffsetShell counts in the topic.
#[test]
fn every_client_delivers_a_keyed_compressed_paced_workload_whole() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let name = common::unique("kb-clients");
    let text = format!(
        r#"
scenario "clients" {{
  topic "{name}-{{client}}" {{ partitions = 3 }}
  matrix {{ client = [{}] }}
  producer {{ client = {{client}}  compression.type = lz4  linger.ms = 5 }}
  consumer {{ }}
  workload {{
    duration = 3s
    warmup   = 0s
    rate     = 2000/s
    payload  = random(size: 300B, compressibility: 50%)
    key      = uniform(100)
  }}
}}
"#,
        CLIENTS.join(", ")
    );
    let (said, v) = common::run_json_with(dir.path(), &name, &text, &["--keep-topics"], 0);
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), CLIENTS.len(), "{said}");
    for (r, client) in runs.iter().zip(CLIENTS) {
        let topic = r["topic"].as_str().unwrap().to_string();
        let (acked, failed) = (u(&r["acked"]), u(&r["failed"]));
        let d = &r["delivery"];
        eprintln!(
            "{client}: acked {acked} failed {failed} consumed {} lost {} duplicated {} ack.p99 {} ms e2e.p99 {} ms",
            d["consumed"], d["lost"], d["duplicated"], r["ack"]["p99_ms"], r["e2e"]["p99_ms"]
        );
        assert_eq!(r["producer_client"]["name"], *client, "{r}");
        assert_eq!(r["consumer_client"]["name"], "librdkafka", "{r}");
        assert!(acked >= 5_000, "{client}: 3 s at 2000/s, {acked} acked");
        assert_eq!(failed, 0, "{client}");
        assert_eq!(d["lost"], 0, "{client}");
        assert_eq!(d["duplicated"], 0, "{client}");
        assert_eq!(
            u(&d["consumed"]),
            acked,
            "{client}: the reader counts every ack"
        );
        // Kafka's own count: every acked record took an offset (no warm-up here), and an
        // independent reader finds each measured record once.
        assert_eq!(
            offsets(&topic, -1) as u64,
            acked,
            "{client}: GetOffsetShell"
        );
        let read = reader::read_topic(&common::bootstrap(), &topic, "read_committed");
        assert_eq!(
            read.distinct_measured(),
            acked,
            "{client}: the independent reader"
        );
        per_place(client, r, &v, &topic);
        assert_eq!(read.duplicates(), 0, "{client}");
        reader::delete_topic(&common::bootstrap(), &topic);
    }
}

/// Per partition, the records kafkabench counted from `client`'s acknowledgements are each
/// partition's log end offset (GetOffsetShell), summing to the acked count, and so are their
/// counts over time. Per broker, where
/// the client says which broker answered, the brokers' records sum to it too; where it does
/// not (the Java client), there are none, and the file's notes say why.
fn per_place(client: &str, r: &Value, file: &Value, topic: &str) {
    let mut kafka = reader::offset_shell(&common::bootstrap(), topic, -1);
    kafka.sort_unstable();
    let parts = r["partitions"].as_array();
    let counted: Vec<(i32, i64)> = (parts.unwrap_or_else(|| panic!("{client}: {r}")).iter())
        .map(|p| {
            (
                p["id"].as_i64().unwrap() as i32,
                p["records"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(counted, kafka, "{client}: records per partition");
    let sum: i64 = counted.iter().map(|(_, n)| n).sum();
    assert_eq!(sum as u64, u(&r["acked"]), "{client}");
    // The same counts over time (the heat map's), partition by partition.
    let rows = r["partition_counts"]["acked"].as_array();
    let over_time: Vec<(i32, i64)> = (rows.unwrap_or_else(|| panic!("{client}: {r}")).iter())
        .enumerate()
        .map(|(p, row)| {
            (
                p as i32,
                row.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_i64().unwrap())
                    .sum(),
            )
        })
        .collect();
    assert_eq!(
        over_time, kafka,
        "{client}: acknowledged per partition over time"
    );
    let brokers = r["brokers"].as_array().filter(|b| !b.is_empty());
    let said = (file["notes"].as_array().into_iter().flatten()).any(|n| {
        n.as_str()
            .is_some_and(|n| n.contains(&format!("no figures per broker: the {client} client")))
    });
    match brokers {
        Some(b) => {
            let on: u64 = b.iter().map(|x| u(&x["records"])).sum();
            assert_eq!(on, u(&r["acked"]), "{client}: records per broker");
            assert!(!said, "{client}");
        }
        None => {
            assert_ne!(client, "librdkafka", "librdkafka says the broker: {r}");
            assert!(said, "{client}: {}", file["notes"]);
        }
    }
}

/// A record as an independent reader sees it: key, value, headers in order (the stamp's
/// intended time made relative to its producer's first record: the schedule's offsets, the
/// origin being an instant of each run).
type Record = (Option<Vec<u8>>, Option<Vec<u8>>, Vec<(String, Vec<u8>)>);

fn records(topic: &str, partitions: i32) -> BTreeMap<(u32, u64), Record> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::{Headers, Message};
    use rdkafka::{Offset, TopicPartitionList};
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", common::bootstrap())
        .set("group.id", common::unique("kb-clients-reader"))
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .unwrap();
    }
    c.assign(&tpl).unwrap();
    let mut out = BTreeMap::new();
    let mut first: BTreeMap<u32, u64> = BTreeMap::new();
    let (mut ended, deadline) = (0, std::time::Instant::now() + Duration::from_secs(60));
    while ended < partitions && std::time::Instant::now() < deadline {
        match c.poll(Duration::from_millis(200)) {
            Some(Ok(m)) => {
                let headers: Vec<(String, Vec<u8>)> = m
                    .headers()
                    .map(|h| {
                        h.iter()
                            .map(|x| (x.key.to_string(), x.value.unwrap_or_default().to_vec()))
                            .collect()
                    })
                    .unwrap_or_default();
                let stamp = &headers.iter().find(|(k, _)| k == "kb").expect("a stamp").1;
                let producer = u32::from_le_bytes(stamp[8..12].try_into().unwrap());
                let seq = u64::from_le_bytes(stamp[12..20].try_into().unwrap());
                let intended = u64::from_le_bytes(stamp[..8].try_into().unwrap());
                let f = first.entry(producer).or_insert(u64::MAX);
                *f = (*f).min(intended);
                out.insert(
                    (producer, seq),
                    (
                        m.key().map(<[u8]>::to_vec),
                        m.payload().map(<[u8]>::to_vec),
                        headers,
                    ),
                );
            }
            Some(Err(rdkafka::error::KafkaError::PartitionEOF(_))) => ended += 1,
            _ => {}
        }
    }
    // The stamps' intended times from each producer's first.
    for ((producer, _), (_, _, headers)) in out.iter_mut() {
        for (k, v) in headers.iter_mut() {
            if k == "kb" {
                let t = u64::from_le_bytes(v[..8].try_into().unwrap()) - first[producer];
                v[..8].copy_from_slice(&t.to_le_bytes());
            }
        }
    }
    out
}

/// Two clients' topics written from the same seed hold byte-identical values, keys and
/// headers, the stamp's producer, sequence and flags included and its intended times the same
/// schedule.
#[test]
fn the_same_seed_writes_the_same_records_on_every_client() {
    same_records_on_every_client("random(size: 256B, compressibility: 40%)");
}

/// The same with each record's size drawn (`size: lognormal(…)`): the workers draw the same
/// sizes from the same seed, and record the sizes they sent as librdkafka's producer does.
#[test]
fn the_same_seed_draws_the_same_sizes_on_every_client() {
    let runs = same_records_on_every_client(
        "random(size: lognormal(median: 200B, sigma: 0.9, max: 4KiB), compressibility: 40%)",
    );
    let sizes = &runs[0]["sizes"];
    assert!(sizes["count"].as_u64().unwrap() > 2000, "{sizes}");
    assert!(
        sizes["max"].as_u64().unwrap() > sizes["p50"].as_u64().unwrap(),
        "{sizes}"
    );
    for (r, client) in runs.iter().zip(CLIENTS) {
        assert_eq!(&r["sizes"], sizes, "{client}'s sizes sent");
    }
}

/// Runs `payload` with the same seed on every client, compares the topics' records and gives
/// the runs' results.
fn same_records_on_every_client(payload: &str) -> Vec<Value> {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let name = common::unique("kb-clients-seed");
    let text = format!(
        r#"
scenario "seeded" {{
  topic "{name}-{{client}}" {{ partitions = 2 }}
  matrix {{ client = [{}] }}
  producer {{ client = {{client}}  compression.type = zstd }}
  consumer {{ }}
  workload {{
    messages   = 3000
    rate       = 3000/s
    producers  = 2
    payload    = {payload}
    key        = zipf(500)
    tombstones = 5%
    seed       = 1234
    headers {{ source = "kafkabench" }}
  }}
}}
"#,
        CLIENTS.join(", ")
    );
    let (said, v) = common::run_json_with(dir.path(), &name, &text, &["--keep-topics"], 0);
    let runs = v["runs"].as_array().expect("runs").clone();
    let mut all = Vec::new();
    for (r, client) in runs.iter().zip(CLIENTS) {
        assert_eq!(u(&r["acked"]), 3000, "{client}: {said}");
        assert_eq!(r["seed"], 1234);
        let topic = r["topic"].as_str().unwrap().to_string();
        all.push((client, records(&topic, 2)));
        reader::delete_topic(&common::bootstrap(), &topic);
    }
    let (base_client, base) = &all[0];
    assert_eq!(base.len(), 3000);
    let tombstones = base.values().filter(|(_, v, _)| v.is_none()).count();
    assert!(tombstones > 50, "{tombstones} tombstones of 5 %");
    for (client, other) in &all[1..] {
        assert_eq!(base.len(), other.len(), "{client}");
        let differ: Vec<_> = base
            .iter()
            .filter(|(k, r)| other.get(k) != Some(r))
            .map(|(k, _)| *k)
            .take(5)
            .collect();
        assert!(
            differ.is_empty(),
            "{client} wrote other records than {base_client} for (producer, seq) {differ:?}"
        );
    }
    runs
}

/// The deletion control on each client (tests/delivery.rs's on librdkafka): the one group
/// member is stopped from the first instant, 500 records of partition 0 are deleted at 2 s,
/// it rejoins at 3 s and reads from the new log start: exactly 500 acked records are lost.
/// The reader is the producer's client (Java's for franz-go's records: `reader_of`).
#[test]
fn records_deleted_before_they_are_read_are_lost_exactly_on_every_client() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    for client in CLIENTS {
        let name = common::unique(&format!("kb-clients-deleted-{client}"));
        let reads_with = reader_of(client);
        let text = format!(
            r#"
scenario "deleted" {{
  topic "{name}" {{ partitions = 2 }}
  producer {{ client = {client} }}
  consumer {{ client = {reads_with} }}
  workload {{
    duration  = 4s
    rate      = 2000/s
    warmup    = 0s
    consumers = 1
  }}
  faults {{
    at 0s stop consumer 1 for 3s
    at 2s delete records of partition 0 before 500
  }}
  expect {{
    lost == 500
  }}
}}
"#
        );
        let (said, v) = common::run_json_with(dir.path(), &name, &text, &["--keep-topics"], 0);
        let r = &v["runs"][0];
        let topic = r["topic"].as_str().unwrap().to_string();
        assert_eq!(
            r["failed"], 0,
            "{client}: nothing may fail for the count to be exact"
        );
        assert_eq!(r["delivery"]["lost"], 500, "{client}: {said}");
        assert_eq!(
            offsets(&topic, -2),
            500,
            "{client}: partition 0 starts at 500"
        );
        assert_eq!(offsets(&topic, -1) as u64, u(&r["acked"]), "{client}");
        let read = reader::read_topic(&common::bootstrap(), &topic, "read_committed");
        assert_eq!(read.distinct_measured(), u(&r["acked"]) - 500, "{client}");
        reader::delete_topic(&common::bootstrap(), &topic);
    }
}
