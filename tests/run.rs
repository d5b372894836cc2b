//! `kafkabench run` end to end against the real local broker, as a user runs it.

mod common;

use common::{expect_exit, fixture, kafkabench, text};

#[test]
fn reachable_bound_exits_0_and_json_holds_every_figure() {
    common::require_broker();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let junit = dir.path().join("junit.xml");
    let out = kafkabench(&[
        "run",
        &fixture("run/bound_ok.kbs"),
        "--quiet",
        "--json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let stdout = expect_exit(&out, 0);
    assert!(stdout.contains("ack p99"), "{stdout}");
    assert!(stdout.contains("PASS  ack.p99 < 30s"), "{stdout}");

    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("valid JSON");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["outcome"], "ok");
    let run = &v["runs"][0];
    assert_eq!(run["sent"], 2000);
    assert_eq!(run["acked"], 2000);
    for k in ["p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"] {
        assert!(run["ack"][k].as_f64().unwrap() > 0.0, "ack.{k} in {run}");
    }
    assert!(
        run["disk_bytes"].as_u64().unwrap() > 200_000,
        "disk bytes measured: {run}"
    );
    assert!(run["throughput_msgs"].as_f64().unwrap() > 0.0);
    let cfg = run["producer_config"].to_string();
    assert!(
        cfg.contains("bootstrap.servers"),
        "effective config recorded: {cfg}"
    );
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(
        junit.contains("<testcase") && junit.contains("failures=\"0\""),
        "{junit}"
    );
}

#[test]
fn impossible_bound_exits_1_and_says_by_how_much() {
    common::require_broker();
    let out = kafkabench(&["run", &fixture("run/bound_fail.kbs"), "--quiet"]);
    let stdout = expect_exit(&out, 1);
    assert!(stdout.contains("FAIL  ack.p99 < 1ns"), "{stdout}");
    assert!(
        stdout.contains("measured") && stdout.contains('%'),
        "says by how much: {stdout}"
    );
    assert!(stdout.contains("PASS  failed == 0"), "{stdout}");
}

#[test]
fn fixed_rate_is_achieved_within_two_percent() {
    common::require_broker();
    let out = kafkabench(&["run", &fixture("run/rate_2000.kbs"), "--quiet"]);
    expect_exit(&out, 0);
}

#[test]
fn timers_land_on_the_leg_they_belong_to() {
    common::require_broker();
    let out = kafkabench(&["run", &fixture("run/timers.kbs"), "--quiet"]);
    expect_exit(&out, 0);
}

#[test]
fn unreachable_cluster_exits_3_naming_the_address() {
    let started = std::time::Instant::now();
    let out = kafkabench(&[
        "run",
        &fixture("run/bound_ok.kbs"),
        "--quiet",
        "--bootstrap",
        "127.0.0.1:1",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr:\n{stderr}");
    assert!(
        stderr.contains("127.0.0.1:1") && stderr.contains("scripts/kafka-local up"),
        "{stderr}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
}
