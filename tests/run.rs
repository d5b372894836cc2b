//! `kafkabench run` end to end against the real local broker, as a user runs it.

use crate::common::{self, expect_exit, fixture, kafkabench, text};

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
    assert_eq!(v["schema_version"], 6);
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
    // A few seconds at 1 s intervals: far fewer than the 60 steadiness is judged from.
    assert_eq!(run["steady_after"]["state"], "too_short", "{run}");
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
fn a_fixed_rate_run_sends_its_whole_schedule_and_never_ahead_of_it() {
    common::require_broker();
    // How close the achieved rate comes to the target is a figure of the machine: bench/
    // measures it. What holds anywhere: every scheduled record is sent (none skipped), and
    // none early.
    let (_, v) = common::run_fixture_json("run/rate_2000.kbs", 0);
    let run = &v["runs"][0];
    assert_eq!(run["sent"], 20_000, "{run}");
    assert_eq!(run["acked"], 20_000, "{run}");
    assert_eq!(run["target_rate"], 2000.0, "{run}");
    // Record 19 999 is due 9.9995 s after record 0, and none is sent before it is due: the span
    // between the first and the last send is at least that, less record 0's own send delay
    // (which a busy machine makes longer, never negative).
    let achieved = run["achieved_rate"].as_f64().unwrap();
    let late = run["send_delay"]["max_ms"].as_f64().unwrap() / 1000.0;
    let fastest = 19_999.0 / (9.9995 - late.min(9.0));
    assert!(achieved > 0.0 && achieved <= fastest * 1.001, "{run}");
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
    // README: exit 3 when the cluster cannot be reached within 10 s; the rest is the process
    // starting and reporting.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}, past the 10 s connect bound",
        started.elapsed()
    );
}

#[test]
fn a_report_file_in_a_missing_folder_exits_2_before_any_work() {
    let started = std::time::Instant::now();
    let out = kafkabench(&[
        "run",
        &fixture("run/bound_ok.kbs"),
        "--quiet",
        // Unreachable: were the cluster tried first, this would take the 10 s connect bound.
        "--bootstrap",
        "127.0.0.1:1",
        "--json",
        "no-such-folder/out.json",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    assert!(
        stderr.contains("cannot write --json no-such-folder/out.json"),
        "{stderr}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "took {:?}: the cluster was tried first",
        started.elapsed()
    );
}

#[test]
fn a_junit_path_that_is_a_folder_exits_2_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    // A folder: not writable as a file even by root (tests may run as root, where permission
    // bits do not stop a write).
    let folder = dir.path().to_str().unwrap();
    let out = kafkabench(&[
        "run",
        &fixture("run/bound_ok.kbs"),
        "--quiet",
        "--bootstrap",
        "127.0.0.1:1",
        "--json",
        json.to_str().unwrap(),
        "--junit",
        folder,
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!("cannot write --junit {folder}")),
        "{stderr}"
    );
    assert!(!json.exists(), "the writable one is not left behind");
}

#[test]
fn a_report_file_that_fails_while_written_exits_3_with_the_report_printed() {
    common::require_broker();
    // /dev/full opens for writing and then refuses every byte (ENOSPC).
    let out = kafkabench(&[
        "run",
        &fixture("run/bound_ok.kbs"),
        "--quiet",
        "--json",
        "/dev/full",
    ]);
    let stdout = expect_exit(&out, 3);
    assert!(stdout.contains("PASS  failed == 0"), "{stdout}");
    assert!(
        text(&out.stderr).contains("cannot write /dev/full"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_run_that_delivered_nothing_fails_with_the_cause() {
    common::require_broker();
    let out = kafkabench(&["run", &fixture("run/nothing_delivered.kbs"), "--quiet"]);
    expect_exit(&out, 3);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "nothing was delivered: all 20 records sent failed (MessageSizeTooLarge: 20)"
        ),
        "{stderr}"
    );
}

#[test]
fn a_duration_run_the_cluster_cannot_keep_up_with_says_how_far_it_slipped() {
    common::require_broker();
    let (stdout, v) = common::run_fixture_json("run/slow_drain.kbs", 0);
    let run = &v["runs"][0];
    let slip = run["schedule_slip_secs"].as_f64().expect("slip reported");
    let elapsed = run["elapsed_secs"].as_f64().unwrap();
    assert!(slip >= 1.0, "{run}");
    assert!(
        (elapsed - 2.0 - slip).abs() < 0.01,
        "slip = elapsed - duration: {run}"
    );
    assert!(
        stdout.contains("past its planned duration: the cluster could not keep up"),
        "{stdout}"
    );
}

#[test]
fn an_automatic_warm_up_ends_when_the_rate_settles_and_says_how_long_it_took() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let (table, v) = common::run_text_json(
        dir.path(),
        "warm",
        r#"scenario "warmup_auto" {
  topic "warmup-auto" { partitions = 2 }
  workload {
    rate     = 2k/s
    duration = 2s
    warmup   = auto(max: 20s)
  }
}
"#,
        0,
    );
    let w = &v["runs"][0]["warmup_auto"];
    let secs = w["secs"].as_f64().unwrap_or_else(|| panic!("{v}"));
    // Three looks of a second agree at the earliest; a paced 2k/s settles well before 20 s.
    assert!((2.9..20.0).contains(&secs), "{w}");
    assert_eq!(w["settled"], true, "{w}");
    assert_eq!(w["max_secs"].as_f64(), Some(20.0), "{w}");
    // The warm-up's records are not measured: the measured phase sent its own schedule.
    assert_eq!(v["runs"][0]["sent"].as_u64(), Some(4000), "{v}");
    assert!(
        table.contains("warm-up auto:") && table.contains("until the rate settled"),
        "{table}"
    );
}
