//! `kafkabench compare` as a CI gate: result files compared run by run, bounds that exit 1 on a
//! regression, malformed bounds that exit 2. Synthetic result files need no broker; one test
//! measures a real regression (linger.ms raised to 200 ms) on the local broker.

use std::path::{Path, PathBuf};

use crate::common::{self, expect_exit, fixture, kafkabench, text};
use kafkabench::measure::{new_histogram, record, LatencySummary, RunResult, RunStatus};
use kafkabench::report::json::{ResultFile, SCHEMA_VERSION};

/// A run whose ack latencies are `ms` (each once), with the given throughput and failures.
fn run(label: &str, ack_ms: &[u64], throughput: f64, failed: u64) -> RunResult {
    let mut h = new_histogram();
    for ms in ack_ms {
        record(&mut h, ms * 1_000_000);
    }
    RunResult {
        label: label.into(),
        status: RunStatus::Complete,
        sent: ack_ms.len() as u64 + failed,
        acked: ack_ms.len() as u64,
        failed,
        throughput_msgs: throughput,
        ack: LatencySummary::from_histogram(&h),
        disk_ratio: Some(2.0),
        ..RunResult::default()
    }
}

fn file(runs: Vec<RunResult>) -> ResultFile {
    ResultFile {
        schema_version: SCHEMA_VERSION,
        kafkabench_version: "0.1.0".into(),
        librdkafka_version: None,
        scenario: "gate".into(),
        scenario_text: None,
        scenario_includes: vec![],
        description: None,
        run_id: "abc123".into(),
        started_at: None,
        scale: 1.0,
        interval_secs: None,
        planned_runs: runs.len(),
        outcome: "ok".into(),
        exit_code: 0,
        failure: None,
        interrupted: false,
        runs,
        assertions: vec![],
        notes: vec![],
        environment: None,
        shard_environments: Vec::new(),
    }
}

fn save(dir: &Path, name: &str, f: &ResultFile) -> PathBuf {
    let path = dir.join(name);
    let mut text = Vec::new();
    f.write(&mut text).expect("written");
    std::fs::write(&path, text).expect("saved");
    path
}

/// Compares two result files written into a temp dir; names them `base.json`/`cur.json`.
fn compare(base: &ResultFile, cur: &ResultFile, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let (b, c) = (
        save(dir.path(), "base.json", base),
        save(dir.path(), "cur.json", cur),
    );
    let mut args = vec!["compare", b.to_str().unwrap(), c.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = kafkabench(&args);
    // Paths differ per temp dir; the rest of the output is stable.
    let dir_text = dir.path().display().to_string();
    std::process::Output {
        stdout: text(&out.stdout).replace(&dir_text, "DIR").into_bytes(),
        ..out
    }
}

fn steady() -> Vec<u64> {
    (1..=100).collect()
}

fn slower() -> Vec<u64> {
    (1..=100).map(|v| v * 2).collect()
}

#[test]
fn the_same_file_twice_exits_0_with_every_change_zero() {
    let f = file(vec![run("codec=zstd", &steady(), 1000.0, 0)]);
    let out = compare(
        &f,
        &f,
        &["--fail-on", "ack.p99:+0%,throughput:-0%,failed:+0"],
    );
    let stdout = expect_exit(&out, 0);
    assert!(stdout.contains("every bound held (3 checks)"), "{stdout}");
    assert!(!stdout.contains("worse"), "{stdout}");
}

#[test]
fn a_latency_rise_past_its_bound_exits_1_naming_the_run_the_metric_and_the_change() {
    let base = file(vec![run("linger=0ms", &steady(), 1000.0, 0)]);
    let cur = file(vec![run("linger=0ms", &slower(), 990.0, 0)]);
    let out = compare(
        &base,
        &cur,
        &["--fail-on", "ack.p50:+50%", "--fail-on", "throughput:-5%"],
    );
    let stdout = expect_exit(&out, 1);
    insta::assert_snapshot!(stdout);
}

#[test]
fn a_bound_not_exceeded_exits_0_and_still_shows_what_got_worse() {
    let base = file(vec![run("run", &steady(), 1000.0, 0)]);
    let cur = file(vec![run("run", &slower(), 1000.0, 0)]);
    let stdout = expect_exit(&compare(&base, &cur, &["--fail-on", "ack.p50:+150%"]), 0);
    assert!(stdout.contains("+100.0%  worse"), "{stdout}");
    assert!(stdout.contains("every bound held (1 check)"), "{stdout}");
}

#[test]
fn an_absolute_bound_on_failures_exits_1_on_the_first_failure() {
    let base = file(vec![run("run", &steady(), 1000.0, 0)]);
    let cur = file(vec![run("run", &steady(), 1000.0, 3)]);
    let stdout = expect_exit(&compare(&base, &cur, &["--fail-on", "failed:+0"]), 1);
    assert!(
        stdout.contains(
            "FAIL  run `run`: failed rose by 3 (0 → 3), more than the 0 allowed by `failed:+0`"
        ),
        "{stdout}"
    );
}

#[test]
fn an_absolute_latency_bound_takes_a_unit() {
    let base = file(vec![run("run", &steady(), 1000.0, 0)]);
    let cur = file(vec![run("run", &slower(), 1000.0, 0)]);
    // p50 goes from 50 ms to 100 ms: 50 ms more.
    expect_exit(&compare(&base, &cur, &["--fail-on", "ack.p50:+60ms"]), 0);
    let stdout = expect_exit(&compare(&base, &cur, &["--fail-on", "ack.p50:+40ms"]), 1);
    // HdrHistogram keeps 3 significant digits: 100 ms reads back as 100.01 ms.
    assert!(
        stdout.contains("ack.p50 rose by 50ms (50ms → 100.01ms)"),
        "{stdout}"
    );
}

#[test]
fn p99_9_and_p999_name_the_same_bound() {
    let base = file(vec![run("run", &steady(), 1000.0, 0)]);
    let cur = file(vec![run("run", &slower(), 1000.0, 0)]);
    for spec in ["ack.p99.9:+20%", "ack.p999:+20%"] {
        let stdout = expect_exit(&compare(&base, &cur, &["--fail-on", spec]), 1);
        assert!(stdout.contains("ack.p999 rose 100.0%"), "{spec}: {stdout}");
    }
}

#[test]
fn runs_on_one_side_only_are_listed_not_dropped() {
    let base = file(vec![
        run("codec=none", &steady(), 1000.0, 0),
        run("codec=zstd", &steady(), 1000.0, 0),
    ]);
    let cur = file(vec![
        run("codec=zstd", &steady(), 1000.0, 0),
        run("codec=lz4", &steady(), 1000.0, 0),
    ]);
    let stdout = expect_exit(&compare(&base, &cur, &[]), 0);
    assert!(
        stdout.contains(
            "only in baseline: run `codec=none` (no run of that label in the current file)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "only in current: run `codec=lz4` (no run of that label in the baseline file)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("compare: 1 run compared"), "{stdout}");
}

#[test]
fn percentiles_come_from_the_histograms_when_both_sides_have_them() {
    // The histogram says p99.99 is 100 ms; no percentile field holds it, so it can only come
    // from the decoded histograms.
    let f = file(vec![run("run", &steady(), 1000.0, 0)]);
    let stdout = expect_exit(&compare(&f, &f, &["--fail-on", "ack.p9999:+1%"]), 0);
    assert!(stdout.contains("ack.p9999"), "{stdout}");
    assert!(stdout.contains("100.01ms"), "{stdout}");
}

#[test]
fn without_a_histogram_on_one_side_the_files_percentile_fields_are_compared() {
    let base = file(vec![run("run", &steady(), 1000.0, 0)]);
    let mut v = serde_json::to_value(file(vec![run("run", &slower(), 1000.0, 0)])).unwrap();
    v["runs"][0]["ack"]["histogram"] = serde_json::Value::Null;
    let cur: ResultFile = serde_json::from_value(v).unwrap();
    let stdout = expect_exit(&compare(&base, &cur, &["--fail-on", "ack.p50:+50%"]), 1);
    assert!(stdout.contains("(50ms → 100.01ms)"), "{stdout}");
    // A percentile no field holds cannot be compared without both histograms: said, not failed.
    let stdout = expect_exit(&compare(&base, &cur, &["--fail-on", "ack.p9999:+1%"]), 0);
    assert!(
        stdout.contains("`ack.p9999:+1%` not checked for run `run`: ack.p9999 needs the histograms of both files, and the current file has none"),
        "{stdout}"
    );
}

#[test]
fn every_malformed_bound_is_explained_at_once_and_exits_2() {
    let f = file(vec![run("run", &steady(), 1000.0, 0)]);
    let out = compare(
        &f,
        &f,
        &[
            "--fail-on",
            "thruput:-5%,ack.p99+10%",
            "--fail-on",
            "ack.p99:+5",
            "--fail-on",
            "throughput:+5%",
            "--fail-on",
            "failed:+0ms",
            "--fail-on",
            "e2e.p50:lots",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "nothing compared: {}",
        text(&out.stdout)
    );
    insta::assert_snapshot!(stderr);
}

#[test]
fn a_file_that_is_not_a_result_file_exits_2_saying_which() {
    let dir = tempfile::tempdir().unwrap();
    let good = save(
        dir.path(),
        "good.json",
        &file(vec![run("run", &steady(), 1.0, 0)]),
    );
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"schema_version": 1, "runs": []}"#).unwrap();
    let out = kafkabench(&["compare", good.to_str().unwrap(), bad.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: current: ") && stderr.contains("re-run"),
        "{stderr}"
    );
}

#[test]
fn no_colour_when_stdout_is_not_a_terminal() {
    let base = file(vec![run("run", &steady(), 1000.0, 0)]);
    let cur = file(vec![run("run", &slower(), 1000.0, 0)]);
    let stdout = expect_exit(&compare(&base, &cur, &[]), 0);
    assert!(!stdout.contains('\x1b'), "{stdout}");
}

/// Runs a fixture against the broker and returns its result file's path (kept in `dir`).
fn measure(dir: &Path, name: &str) -> PathBuf {
    let json = dir.join(format!("{name}.json"));
    let out = kafkabench(&[
        "run",
        &fixture(&format!("run/{name}.kbs")),
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ]);
    expect_exit(&out, 0);
    json
}

#[test]
fn raising_linger_to_200ms_fails_an_ack_p50_bound_and_says_by_how_much() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let base = measure(dir.path(), "compare_linger_0");
    let cur = measure(dir.path(), "compare_linger_200");
    let (b, c) = (base.to_str().unwrap(), cur.to_str().unwrap());

    let same = kafkabench(&["compare", b, b, "--fail-on", "ack.p50:+50%"]);
    let stdout = expect_exit(&same, 0);
    assert!(stdout.contains("every bound held"), "{stdout}");

    let out = kafkabench(&["compare", b, c, "--fail-on", "ack.p50:+50%"]);
    let stdout = expect_exit(&out, 1);
    assert!(
        stdout.contains("FAIL  run `run`: ack.p50 rose ")
            && stdout.contains("more than the 50% allowed by `ack.p50:+50%`"),
        "{stdout}"
    );
    assert!(stdout.contains("worse, past +50%"), "{stdout}");
}
