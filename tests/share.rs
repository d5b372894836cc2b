//! Share groups (KIP-932) against the real broker: more members than partitions, an explicit
//! acknowledgement mix, and a member that stops holding records. What kafkabench counts is
//! held against the broker's own account of the group (`kafka-share-groups --describe
//! --offsets`: nothing left to deliver) and against arithmetic on the produced sequences.

use std::process::Command;

use crate::common::reader::kafka_tool;
use crate::common::{self, expect_exit, fixture, repo};
use kafkabench::model::{AckClass, AckMode};

/// Runs a share fixture with its topics kept, returns (stdout, its one run, topic, group).
fn run(name: &str) -> (String, serde_json::Value, String, String) {
    common::require_broker();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970")
        .subsec_nanos();
    let id = format!("{:06x}", nanos & 0xff_ffff);
    let out = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args([
            "run",
            &fixture(&format!("share/{name}.kbs")),
            "--quiet",
            "--keep-topics",
            "--run-id",
            &id,
            "--json",
            json.to_str().expect("a UTF-8 temp path"),
        ])
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .output()
        .expect("the kafkabench binary runs");
    let stdout = expect_exit(&out, 0);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("the result file")).expect("JSON");
    let run = v["runs"][0].clone();
    let topic = run["topic"].as_str().expect("a topic").to_string();
    let group = format!("kafkabench-share-{id}-1");
    (stdout, run, topic, group)
}

/// Per partition, the share group's lag as the broker describes it: records not yet in a
/// final state (accepted, rejected or archived).
fn broker_lag(group: &str) -> Vec<u64> {
    let b = common::bootstrap();
    let text = kafka_tool(
        "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
        &[
            "--bootstrap-server",
            &b,
            "--describe",
            "--group",
            group,
            "--offsets",
        ],
    );
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let head: Vec<&str> = lines
        .by_ref()
        .find(|l| l.contains("PARTITION"))
        .unwrap_or_else(|| panic!("no table in:\n{text}"))
        .split_whitespace()
        .collect();
    let lag = head.iter().position(|c| *c == "LAG").expect("a LAG column");
    lines
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.get(lag)
                .and_then(|x| x.parse().ok())
                .unwrap_or_else(|| panic!("no lag in {l:?} of:\n{text}"))
        })
        .collect()
}

fn drop_topic(topic: &str) {
    let b = common::bootstrap();
    kafka_tool(
        "org.apache.kafka.tools.TopicCommand",
        &["--bootstrap-server", &b, "--delete", "--topic", topic],
    );
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn more_members_than_partitions_accept_every_record_once_and_the_broker_agrees() {
    let (stdout, run, topic, group) = run("members");
    assert!(stdout.contains("3 of 3 checks held"), "{stdout}");
    let s = &run["share"];
    assert_eq!(s["members"], 4, "{s}");
    assert_eq!(u(&s["accepted"]), u(&run["acked"]), "{s}");
    assert_eq!(u(&s["redelivered"]), 0, "{s}");
    assert_eq!(run["delivery"]["lost"], 0);
    assert!(u(&s["ack"]["count"]) >= u(&run["acked"]), "{s}");
    // Four members on one partition: the broker spread the records over more than one.
    assert!(stdout.contains("share group of"), "{stdout}");
    let lag = broker_lag(&group);
    drop_topic(&topic);
    assert_eq!(lag, vec![0], "the broker still has records to deliver");
}

#[test]
fn an_explicit_mix_gives_exactly_the_expected_redeliveries_and_archives() {
    let (stdout, run, topic, group) = run("mix");
    assert!(stdout.contains("3 of 3 checks held"), "{stdout}");
    let n = u(&run["acked"]);
    assert_eq!(n, 2000);
    // The classes of the records one producer wrote (sequences 0..n), as the mix decides.
    let mode = AckMode::Explicit {
        release: 0.1,
        reject: 0.1,
        retry: 0.1,
    };
    let count = |c| (0..n).filter(|s| mode.class(0, *s) == c).count() as u64;
    let (reject, poison, retry) = (
        count(AckClass::Reject),
        count(AckClass::Poison),
        count(AckClass::Retry),
    );
    let limit = 3;
    let s = &run["share"];
    assert_eq!(u(&s["rejected"]), reject, "{s}");
    assert_eq!(u(&s["archived"]), poison, "{s}");
    // Poison: released at each of its 3 deliveries; retry: released once.
    assert_eq!(u(&s["released"]), poison * limit + retry, "{s}");
    assert_eq!(u(&s["redelivered"]), poison * (limit - 1) + retry, "{s}");
    assert_eq!(u(&s["accepted"]), n - reject - poison, "{s}");
    assert_eq!(s["delivery_counts"][2], retry, "{s}");
    assert_eq!(u(&s["lock_timeouts"]), 0, "{s}");
    let lag = broker_lag(&group);
    drop_topic(&topic);
    assert!(
        lag.iter().all(|l| *l == 0),
        "the broker still has records to deliver: {lag:?}"
    );
}

#[test]
fn a_stopped_members_records_come_back_after_the_lock_and_nothing_is_lost() {
    let (stdout, run, topic, group) = run("stopped");
    assert!(stdout.contains("2 of 2 checks held"), "{stdout}");
    let s = &run["share"];
    assert_eq!(u(&s["accepted"]), u(&run["acked"]), "{s}");
    // What member 1 held when it vanished was delivered again, to member 2, once its lock
    // expired: redeliveries no member asked for.
    assert!(u(&s["lock_timeouts"]) > 0, "{s}");
    assert_eq!(u(&s["lock_timeouts"]), u(&s["redelivered"]), "{s}");
    let lag = broker_lag(&group);
    drop_topic(&topic);
    assert_eq!(lag, vec![0]);
}
