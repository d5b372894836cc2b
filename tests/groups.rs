//! Consumer groups, backlogs and a group member stopped mid-run, against the real local broker;
//! and the check stage's diagnostics for `consumers`, `commit` and `backlog`.

use crate::common::{self, expect_exit, fixture, kafkabench, text};

/// Runs a groups fixture with `--json` (and extra environment), returns its one run.
fn run(name: &str, env: &[(&str, &str)]) -> (String, serde_json::Value) {
    common::require_broker();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args([
            "run",
            &fixture(&format!("groups/{name}.kbs")),
            "--quiet",
            "--json",
            json.to_str().expect("a UTF-8 temp path"),
        ])
        .current_dir(common::repo())
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("the kafkabench binary runs");
    let stdout = expect_exit(&out, 0);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("the result file")).expect("JSON");
    (stdout, v["runs"][0].clone())
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn a_group_of_three_reports_its_throughput_lag_and_rebalance_and_loses_nothing() {
    let (stdout, run) = run("group3", &[]);
    assert!(stdout.contains("4 of 4 checks held"), "{stdout}");
    let c = &run["consume"];
    assert_eq!(c["consumers"], 3, "{c}");
    assert!(c["throughput_msgs"].as_f64().unwrap() > 0.0, "{c}");
    assert!(c["lag_max"].is_u64(), "lag.max measured: {c}");
    // The join stalled every partition before the clock (the recording keeps it); only a
    // stall that reached into the measured phase is `rebalance.time`'s.
    let stalls = run["recording"]["read"]["stalls"].as_array().unwrap();
    assert!(
        stalls.len() >= 3,
        "the join's stalls are recorded: {stalls:?}"
    );
    let reached = stalls
        .iter()
        .filter(|s| s[1].as_i64().unwrap() > 0)
        .map(|s| (s[1].as_i64().unwrap() - s[0].as_i64().unwrap()) as f64 / 1e9)
        .fold(0.0, f64::max);
    let longest = c["rebalance_secs"].as_f64().unwrap();
    assert!(
        (longest - reached).abs() < 1e-6,
        "{longest} against {reached}: {c}"
    );
    assert!(u(&c["rebalances"]) >= 1, "{c}");
    assert!(u(&c["fetch_requests"]) > 0, "fetch statistics: {c}");
    let d = &run["delivery"];
    assert_eq!(d["lost"], 0, "{d}");
    assert_eq!(d["duplicated"], 0, "{d}");
    assert_eq!(d["reordered"], 0, "{d}");
    assert_eq!(u(&d["consumed"]), u(&run["acked"]), "{d}");
    let lags: Vec<_> = run["series"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["lag"].clone())
        .collect();
    assert!(
        lags.iter().all(|l| l.is_u64()),
        "lag per interval: {lags:?}"
    );
    assert!(
        stdout.contains("lag max"),
        "the table shows the read side: {stdout}"
    );
}

#[test]
fn a_backlog_is_drained_and_every_record_of_it_read() {
    let (_, run) = run("backlog", &[]);
    let c = &run["consume"];
    assert!(c["drain_secs"].as_f64().unwrap() > 0.0, "{c}");
    assert_eq!(
        u(&c["records"]),
        200_000,
        "every backlog record read once: {c}"
    );
    assert_eq!(run["delivery"]["lost"], 0, "{run}");
    assert_eq!(run["delivery"]["duplicated"], 0, "{run}");
    assert_eq!(run["sent"], 0, "a pure drain sends nothing measured");
}

#[test]
fn a_consumer_stopped_mid_run_causes_a_rebalance_and_redeliveries_never_loss() {
    // Consumer 2 leaves the group 1.5 s into the run and rejoins at 3.5 s (the fault
    // timeline); nothing commits, so whoever takes its partitions reads them again from the
    // start.
    let (_, run) = run("stop", &[]);
    let actions = &run["faults"]["actions"];
    assert_eq!(actions[0]["outcome"], "ok", "{actions}");
    let c = &run["consume"];
    assert!(u(&c["rebalances"]) >= 2, "the join and the stop: {c}");
    assert!(u(&c["redelivered"]) > 0, "{c}");
    let d = &run["delivery"];
    assert_eq!(d["lost"], 0, "{d}");
    assert_eq!(d["duplicated"], 0, "redeliveries are not duplicates: {d}");
    assert_eq!(u(&d["consumed"]), u(&run["acked"]), "{d}");
}

fn check_fixture(name: &str) -> String {
    let out = kafkabench(&["check", &fixture(&format!("groups/{name}.kbs"))]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    text(&out.stderr)
}

#[test]
fn the_read_side_keys_are_checked_with_their_fix() {
    insta::assert_snapshot!(check_fixture("invalid_keys"));
}

#[test]
fn the_read_side_keys_need_a_consumer_and_a_group() {
    insta::assert_snapshot!(check_fixture("invalid_needs"));
}

#[test]
fn every_commit_spelling_checks() {
    let out = kafkabench(&["plan", &fixture("groups/commits.kbs")]);
    let stdout = expect_exit(&out, 0);
    for want in [
        "auto.commit.interval.ms",
        "enable.auto.offset.store",
        "enable.auto.commit",
    ] {
        assert!(stdout.contains(want), "{want} in:\n{stdout}");
    }
}

#[test]
fn the_classic_protocols_properties_are_refused_under_the_consumer_protocol() {
    insta::assert_snapshot!(check_fixture("invalid_protocol"));
}

#[test]
fn a_cold_backlog_written_wrong_is_checked_with_its_fix() {
    insta::assert_snapshot!(check_fixture("invalid_cold"));
}
