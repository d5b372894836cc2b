//! Positive controls of the delivery figures: each test makes the event happen on a real
//! cluster (records deleted before they were read, acks=1 with the leader killed, a paused
//! leader that makes a producer without idempotence retry what was already written, requests
//! that time out after they were written) and checks that kafkabench reports it with the same
//! number that a count kafkabench did not make gives: the topic read afterwards by
//! tests/common/reader.rs (rust-rdkafka's own consumer, the stamps decoded by hand) and Kafka's
//! GetOffsetShell. A verifier that always said 0 fails every one of them.
//!
//! The deletion runs on CI's broker; what needs a leader paused or killed runs on the tests'
//! 3-node cluster (tests/common/cluster.rs), so CI's broker is never touched.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::cluster::NODES;
use crate::common::reader::{delete_topic, offset_shell, read_topic, Contents};
use crate::common::{self, repo, text, wait_bounded};
use serde_json::Value;

/// Runs `body` as a scenario against `bootstrap` with `--keep-topics` (the independent reader
/// reads the topic afterwards); the exit code, stdout and stderr, and the run's JSON.
fn run(dir: &Path, bootstrap: &str, home: Option<PathBuf>, body: &str) -> (i32, String, Value) {
    let path = dir.join("delivery.kbs");
    std::fs::write(&path, body).unwrap();
    let json = dir.join("out.json");
    let mut c = Command::new(env!("CARGO_BIN_EXE_kafkabench"));
    c.args(["run", path.to_str().unwrap(), "--quiet", "--keep-topics"])
        .args(["--json", json.to_str().unwrap(), "--bootstrap", bootstrap])
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(home) = home {
        c.env("KAFKA_LOCAL_HOME", home);
    }
    let (code, out, err, _) = wait_bounded(c.spawn().unwrap(), Duration::from_secs(240));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!("no result file ({e}); exit {code}\nstdout:\n{out}\nstderr:\n{err}")
    }))
    .unwrap();
    (code, format!("stdout:\n{out}\nstderr:\n{err}"), doc)
}

fn count(v: &Value, what: &str) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{what} is not a count: {v}"))
}

/// What kafkabench said of one run's delivery, beside what the independent reader found.
struct Checked {
    acked: u64,
    failed: u64,
    lost: u64,
    consumed: u64,
    duplicated: u64,
    reordered: u64,
    failed_but_delivered: u64,
    topic: String,
    read: Contents,
}

/// Reads the run's topic independently and checks the figures that need no knowledge of the
/// producer's acknowledgements: every distinct measured record read back, every extra copy,
/// every record read after a later one of its producer and partition.
fn check_against_reader(bootstrap: &str, run: &Value, context: &str) -> Checked {
    let d = &run["delivery"];
    assert_eq!(d["incomplete"], false, "{context}\n{d}");
    let topic = run["topic"].as_str().unwrap().to_string();
    let read = read_topic(bootstrap, &topic, "read_committed");
    let c = Checked {
        acked: count(&run["acked"], "acked"),
        failed: count(&run["failed"], "failed"),
        lost: count(&d["lost"], "lost"),
        consumed: count(&d["consumed"], "consumed"),
        duplicated: count(&d["duplicated"], "duplicated"),
        reordered: count(&d["reordered"], "reordered"),
        failed_but_delivered: count(&d["failed_but_delivered"], "failed_but_delivered"),
        topic,
        read,
    };
    let (distinct, dups, reord) = (
        c.read.distinct_measured(),
        c.read.duplicates(),
        c.read.reordered(),
    );
    eprintln!(
        "{context}: kafkabench acked {} failed {} consumed {} lost {} duplicated {} reordered {} \
         failed_but_delivered {}; the reader found {distinct} distinct, {dups} copies, {reord} \
         reordered",
        c.acked, c.failed, c.consumed, c.lost, c.duplicated, c.reordered, c.failed_but_delivered
    );
    assert_eq!(c.consumed, distinct, "{context}: consumed");
    assert_eq!(c.duplicated, dups, "{context}: duplicated");
    assert_eq!(c.reordered, reord, "{context}: reordered");
    // Everything read back was acked or reported failed (and then delivered all the same);
    // what was acked and is not there is lost.
    assert_eq!(
        c.lost,
        c.acked - (distinct - c.failed_but_delivered),
        "{context}: lost = acked − acked records read back"
    );
    c
}

/// Runs `body` on the 3-node cluster, checks its figures against the reader, waits until the
/// cluster is whole again and deletes the topic: the figures, the exit code, what kafkabench
/// said, and its result file.
fn on_nodes(body: &str, context: &str) -> (Checked, i32, String, Value) {
    NODES.up();
    let bootstrap = NODES.bootstrap();
    let dir = tempfile::tempdir().unwrap();
    let (code, said, doc) = run(dir.path(), &bootstrap, Some(NODES.home()), body);
    assert!(code == 0 || code == 1, "{said}");
    let c = check_against_reader(&bootstrap, &doc["runs"][0], context);
    NODES.wait_whole(Duration::from_secs(60));
    delete_topic(&bootstrap, &c.topic);
    (c, code, said, doc)
}

#[test]
fn records_deleted_before_they_were_read_are_lost_exactly() {
    common::require_broker();
    let bootstrap = common::bootstrap();
    let dir = tempfile::tempdir().unwrap();
    // The one consumer is stopped from the first instant (before the clock starts), so it has
    // read nothing of partition 0 when its first 500 records are deleted; it rejoins at 3 s
    // and reads from the new log start. Nothing else fails: exactly 500 acked records are lost.
    let (code, said, doc) = run(
        dir.path(),
        &bootstrap,
        None,
        r#"
scenario "deleted" {
  topic "kb-delivery-deleted" { partitions = 2 }
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
    );
    assert_eq!(code, 0, "{said}");
    let r = &doc["runs"][0];
    let delete = &r["faults"]["actions"][1];
    assert_eq!(
        delete["outcome"], "ok; the partition starts at offset 500 now",
        "{delete}"
    );
    let c = check_against_reader(&bootstrap, r, "deleted");
    assert_eq!(
        c.failed, 0,
        "nothing may fail for the count to be exact: {said}"
    );
    assert_eq!(c.lost, 500, "{said}");
    // Lost, not lag: once the reader is past them, the deleted records are out of the lag.
    let points = r["series"]["points"].as_array().expect("series");
    let last = points.last().expect("a point");
    assert_eq!(last["lag"], 0, "{last}");
    // Kafka's own count: partition 0 starts at 500, partition 1 at 0.
    let earliest = offset_shell(&bootstrap, &c.topic, -2);
    assert_eq!(earliest, vec![(0, 500), (1, 0)]);
    let latest: i64 = offset_shell(&bootstrap, &c.topic, -1)
        .iter()
        .map(|(_, o)| o)
        .sum();
    assert_eq!(latest as u64, c.acked, "every acked record took an offset");
    assert_eq!(c.read.distinct_measured(), c.acked - 500);
    delete_topic(&bootstrap, &c.topic);
}

#[test]
fn acks_1_with_the_leader_killed_loses_what_the_reader_cannot_find() {
    // Whatever acks=1 loses to the kill (records the leader acknowledged before its followers
    // had them) is the count; it must be the reader's. A long message timeout keeps every
    // record acknowledged or lost, never failed.
    let (c, _, said, _) = on_nodes(
        r#"
scenario "acks1" {
  topic "kb-delivery-acks1" { partitions = 3  replication = 3 }
  producer {
    acks               = 1
    enable.idempotence = false
    linger.ms          = 5ms
    message.timeout.ms = 120s
  }
  consumer { }
  workload {
    duration = 8s
    rate     = 4000/s
    warmup   = 0s
  }
  faults {
    at 2s kill broker leader(partition 0) for 3s
  }
}
"#,
        "acks=1, leader killed",
    );
    assert_eq!(c.failed, 0, "{said}");
    assert_eq!(c.lost, c.acked - c.read.distinct_measured());
}

/// Idempotence off, retries on, five requests in flight, and the leader frozen for longer than
/// a request's timeout (`socket.timeout.ms`: librdkafka's own; `request.timeout.ms` is the
/// broker's): librdkafka gives up on requests the frozen broker already holds in its socket and
/// sends them again on a new connection, and the broker, continued, writes the first of them
/// as well as the retries. Those copies are the duplicates; the reader must find the same.
/// (The retries go out in order, so this makes no reordering: the next test makes one.)
#[test]
fn a_paused_leader_makes_a_producer_without_idempotence_write_duplicates() {
    let (c, _, said, _) = on_nodes(
        r#"
scenario "retries" {
  topic "kb-delivery-retries" { partitions = 1  replication = 3 }
  producer {
    acks                                  = 1
    enable.idempotence                    = false
    retries                               = 100
    max.in.flight.requests.per.connection = 5
    linger.ms                             = 2ms
    socket.timeout.ms                     = 1000
    retry.backoff.ms                      = 50ms
    message.timeout.ms                    = 60s
  }
  consumer { }
  workload {
    duration = 7s
    rate     = 3000/s
    warmup   = 0s
  }
  faults {
    at 2s pause broker leader(partition 0) for 3s
  }
}
"#,
        "paused leader, retries",
    );
    assert!(
        c.duplicated > 0,
        "the retries of written requests must have made duplicates: {said}"
    );
    assert_eq!(c.lost, 0, "{said}");
}

/// Records whose delivery timed out while the leader was frozen, but which the broker held in
/// its socket and wrote when continued: reported failed, read back all the same. They are
/// `failed_but_delivered`, and hide no loss (lost stays 0: acks=all, nothing else happened).
#[test]
fn records_that_time_out_after_they_were_sent_are_failed_but_delivered() {
    let (c, _, said, _) = on_nodes(
        r#"
scenario "timeouts" {
  topic "kb-delivery-timeouts" { partitions = 1  replication = 3 }
  producer {
    acks               = all
    enable.idempotence = false
    retries            = 0
    linger.ms          = 2ms
    message.timeout.ms = 1s
    request.timeout.ms = 1s
  }
  consumer { }
  workload {
    duration = 6s
    rate     = 2000/s
    warmup   = 0s
  }
  faults {
    at 2s pause broker leader(partition 0) for 3s
  }
}
"#,
        "timeouts after sending",
    );
    assert!(
        c.failed > 0,
        "records due in the pause must time out: {said}"
    );
    assert!(
        c.failed_but_delivered > 0,
        "the requests the frozen broker held are written when it continues: {said}"
    );
    assert_eq!(c.lost, 0, "{said}");
    // Independently: what the topic holds beyond the acked records is failed yet delivered.
    assert_eq!(c.failed_but_delivered, c.read.distinct_measured() - c.acked);
}

/// `restart broker` on a real 3-node cluster: the leader stopped cleanly and started again
/// mid-run; with acks=all and idempotence nothing is lost, duplicated or reordered, and the
/// reader agrees record by record.
#[test]
fn a_restarted_leader_loses_nothing_and_comes_back() {
    let (c, code, said, doc) = on_nodes(
        r#"
scenario "restart" {
  topic "kb-delivery-restart" {
    partitions          = 3
    replication         = 3
    min.insync.replicas = 2
  }
  producer { acks = all  enable.idempotence = true  linger.ms = 5ms }
  consumer { }
  workload {
    duration = 8s
    rate     = 2000/s
    warmup   = 0s
  }
  faults {
    at 2s restart broker leader(partition 0)
  }
  expect {
    lost == 0
    duplicated == 0
  }
}
"#,
        "restart",
    );
    assert_eq!(code, 0, "{said}");
    let action = &doc["runs"][0]["faults"]["actions"][0];
    assert!(
        action["outcome"].as_str().unwrap().starts_with("ok"),
        "{action}"
    );
    assert!(
        action["target"].as_str().unwrap().starts_with("broker "),
        "{action}"
    );
    assert_eq!((c.lost, c.duplicated, c.reordered), (0, 0, 0));
    assert_eq!(c.consumed, c.acked);
    let nodes = NODES.nodes();
    assert!(
        nodes.iter().all(|(_, _, s)| s == "running"),
        "{nodes:?}\n{}",
        text(&NODES.kafka_local(&["status"]).stdout)
    );
}

/// The stamp's layout (docs/result-format.md), written by hand: a copy of a record kafkabench
/// has not sent yet.
fn stamp(producer: u32, seq: u64) -> [u8; 21] {
    let mut b = [0u8; 21];
    b[..8].copy_from_slice(&0u64.to_le_bytes());
    b[8..12].copy_from_slice(&producer.to_le_bytes());
    b[12..20].copy_from_slice(&seq.to_le_bytes());
    b[20] = 1; // measured
    b
}

/// A record arriving ahead of its predecessors, as a pipeline that replays or forwards records
/// out of order writes it: while the run writes, the test reads the last record of the
/// partition and writes a copy of the record 6000 sequences later (3 s at the run's rate, so that
/// a busy machine still writes the copy before the run reaches its original; at 1000 one run
/// got there first, and the copy was only a duplicate). Every record of the run that
/// the consumer then reads with a lower sequence comes after a later one (reordered), and the
/// original of the copy, when it comes, is a duplicate. The counts depend on where the run was
/// when the copy landed; the reader must find exactly the same.
#[test]
fn a_record_written_ahead_of_its_turn_makes_reorderings_that_the_reader_finds_too() {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::{Header, OwnedHeaders};
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

    common::require_broker();
    let bootstrap = common::bootstrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ahead.kbs");
    std::fs::write(
        &path,
        r#"
scenario "ahead" {
  topic "kb-delivery-ahead" { partitions = 1 }
  consumer { }
  workload {
    duration = 8s
    rate     = 2000/s
    warmup   = 0s
  }
}
"#,
    )
    .unwrap();
    let json = dir.path().join("out.json");
    let run_id = format!("t{}", std::process::id());
    let topic = format!("kb-delivery-ahead-{run_id}");
    let child = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(["run", path.to_str().unwrap(), "--quiet", "--keep-topics"])
        .args(["--json", json.to_str().unwrap(), "--run-id", &run_id])
        .args(["--bootstrap", &bootstrap])
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // Once the run has written 2000 records: the last one's sequence, and a copy 6000 ahead.
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", "kafkabench-test-ahead")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let high = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the run wrote nothing"
        );
        match c.fetch_watermarks(&topic, 0, Duration::from_secs(5)) {
            Ok((_, high)) if high >= 2000 => break high,
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    let mut tpl = rdkafka::TopicPartitionList::new();
    tpl.add_partition_offset(&topic, 0, rdkafka::Offset::Offset(high - 1))
        .unwrap();
    c.assign(&tpl).unwrap();
    let last = loop {
        assert!(std::time::Instant::now() < deadline, "no last record");
        if let Some(m) = c.poll(Duration::from_millis(200)) {
            let m = m.unwrap();
            use rdkafka::message::{Headers, Message};
            let h = m.headers().unwrap();
            let v = h.iter().find(|h| h.key == "kb").unwrap().value.unwrap();
            break u64::from_le_bytes(v[12..20].try_into().unwrap());
        }
    };
    let copy = stamp(0, last + 6000);
    let p: BaseProducer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .unwrap();
    p.send(
        BaseRecord::<(), [u8]>::to(&topic)
            .partition(0)
            .payload(&b"a copy"[..])
            .headers(OwnedHeaders::new().insert(Header {
                key: "kb",
                value: Some(&copy[..]),
            })),
    )
    .unwrap();
    p.flush(Duration::from_secs(10)).unwrap();

    let (code, out, err, _) = wait_bounded(child, Duration::from_secs(120));
    let said = format!("stdout:\n{out}\nstderr:\n{err}");
    assert!(code == 0 || code == 1, "{said}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = check_against_reader(&bootstrap, &doc["runs"][0], "a copy ahead");
    assert!(c.reordered > 0, "records came after a later one: {said}");
    assert_eq!(c.duplicated, 1, "the copy's original: {said}");
    // The copy is no acked record: it cannot make up for one (and none is missing).
    assert_eq!(c.lost, 0, "{said}");
    delete_topic(&bootstrap, &c.topic);
}
