//! Figures per broker and per partition (issue 52 item 3), on the tests' own 3-node cluster
//! (tests/common/cluster.rs; scripts/test runs this module in its cluster lane, and the pause
//! test alone, after the others: it compares brokers' latencies, which a loaded machine
//! delays by seconds on every broker):
//! - broker 2 paused for 2 s fails `ack.p99 of every broker < 200ms`, and the failure names
//!   broker 2;
//! - with idempotence, no warm-up and no leader moving, each broker's record count is the sum
//!   of the log end offsets (GetOffsetShell) of the partitions it leads (librdkafka's metadata,
//!   read by the test), and each partition's count is its log end offset.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use serde_json::Value;

use crate::common::cluster::NODES;
use crate::common::reader::offset_shell;
use crate::common::{repo, text, unique};

/// kafkabench run on `body` against the cluster, with `--keep-topics` and `--json`; returns
/// the exit code, stdout and the result file.
fn run(body: &str) -> (i32, String, Value) {
    NODES.up();
    NODES.wait_whole(Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let (file, json) = (dir.path().join("s.kbs"), dir.path().join("out.json"));
    std::fs::write(&file, body).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(["run", file.to_str().unwrap(), "--keep-topics", "--json"])
        .arg(&json)
        .args(["--bootstrap", &NODES.bootstrap()])
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("KAFKA_LOCAL_HOME", NODES.home())
        .stdin(Stdio::null())
        .output()
        .expect("kafkabench runs");
    let stdout = text(&out.stdout);
    let doc = std::fs::read(&json)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| panic!("no result file:\n{stdout}\n{}", text(&out.stderr)));
    (out.status.code().unwrap_or(-1), stdout, doc)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Each partition's leader, as librdkafka's metadata tells the test.
fn leaders(topic: &str) -> BTreeMap<i32, i32> {
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", NODES.bootstrap())
        .create()
        .unwrap();
    let md = c
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .unwrap();
    md.topics()[0]
        .partitions()
        .iter()
        .map(|p| (p.id(), p.leader()))
        .collect()
}

#[test]
fn a_paused_broker_fails_every_brokers_p99_and_the_failure_names_it() {
    let name = unique("kb-bybroker-pause");
    // One replica: only the partitions broker 2 leads wait for it.
    let body = format!(
        r#"
scenario "bybroker" {{
  topic "{name}" {{ partitions = 6  replication = 1 }}
  producer {{ linger.ms = 5ms  acks = all }}
  workload {{
    duration = 8s
    warmup   = 0s
    rate     = 1000/s
    payload  = random(size: 200B)
  }}
  faults {{ at 3s pause broker 2 for 2s }}
  expect {{ ack.p99 of every broker < 200ms }}
}}
"#
    );
    let (code, stdout, doc) = run(&body);
    assert_eq!(code, 1, "the assertion fails:\n{stdout}");
    let r = &doc["runs"][0];
    let brokers = r["brokers"].as_array().expect("figures per broker");
    let ids: Vec<i64> = brokers.iter().map(|b| b["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [1, 2, 3], "{brokers:?}");
    let p99 = |id: i64| {
        brokers.iter().find(|b| b["id"] == id).unwrap()["ack"]["p99_ms"]
            .as_f64()
            .unwrap()
    };
    // Records due in the pause waited for it: well over 200 ms, and the slowest broker.
    assert!(p99(2) > 1000.0, "broker 2's ack p99 {} ms", p99(2));
    assert!(p99(2) > p99(1) && p99(2) > p99(3), "{brokers:?}");
    let verdicts: Vec<&Value> = doc["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["assertion"] == "ack.p99 of every broker < 200ms")
        .collect();
    assert_eq!(verdicts.len(), 3, "one verdict per broker: {verdicts:?}");
    let failed: Vec<i64> = verdicts
        .iter()
        .filter(|v| v["pass"] == false)
        .map(|v| v["broker"].as_i64().unwrap())
        .collect();
    assert!(failed.contains(&2), "{verdicts:?}");
    assert!(
        stdout.contains("broker 2]"),
        "the report names it:\n{stdout}"
    );
    // The records add up to the run's.
    let sum: u64 = brokers.iter().map(|b| u(&b["records"])).sum();
    assert_eq!(sum, u(&r["acked"]));
}

#[test]
fn each_brokers_records_are_the_log_end_offsets_of_the_partitions_it_leads() {
    let name = unique("kb-bybroker-leo");
    let body = format!(
        r#"
scenario "bybroker" {{
  topic "{name}" {{ partitions = 9  replication = 3  min.insync.replicas = 2 }}
  producer {{ acks = all  enable.idempotence = true  linger.ms = 5ms }}
  workload {{
    duration = 4s
    warmup   = 0s
    rate     = 3000/s
    payload  = random(size: 100B)
  }}
}}
"#
    );
    let (code, stdout, doc) = run(&body);
    assert_eq!(code, 0, "{stdout}");
    let r = &doc["runs"][0];
    let topic = r["topic"].as_str().unwrap();
    assert_eq!(u(&r["failed"]), 0);
    let leos: BTreeMap<i32, i64> = offset_shell(&NODES.bootstrap(), topic, -1)
        .into_iter()
        .collect();
    let leaders = leaders(topic);
    assert_eq!(leos.len(), 9);
    let mut expected: BTreeMap<i64, u64> = BTreeMap::new();
    for (p, leo) in &leos {
        *expected.entry(i64::from(leaders[p])).or_default() += *leo as u64;
    }
    let measured: BTreeMap<i64, u64> = r["brokers"]
        .as_array()
        .expect("figures per broker")
        .iter()
        .map(|b| (b["id"].as_i64().unwrap(), u(&b["records"])))
        .collect();
    assert_eq!(measured, expected, "leaders {leaders:?}, offsets {leos:?}");
    let parts: BTreeMap<i32, i64> = r["partitions"]
        .as_array()
        .expect("figures per partition")
        .iter()
        .map(|p| (p["id"].as_i64().unwrap() as i32, u(&p["records"]) as i64))
        .collect();
    assert_eq!(parts, leos);
    assert!(u(&r["acked"]) > 10_000, "{}", r["acked"]);
    // Cleaned up here: the run kept it to be counted.
    let _ = crate::common::reader::kafka_tool(
        "org.apache.kafka.tools.TopicCommand",
        &[
            "--bootstrap-server",
            &NODES.bootstrap(),
            "--delete",
            "--topic",
            topic,
        ],
    );
}
