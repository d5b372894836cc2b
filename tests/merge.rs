//! `kafkabench merge` as a user runs it: shards' result files in, one report out, `expect`
//! judged once on the merged figures. The broker-free tests build result files from known
//! histograms; the last one splits a real run against the local broker.

use std::path::{Path, PathBuf};

use crate::common::{self, expect_exit, fixture, hdr, kafkabench, text};
use kafkabench::measure::{new_histogram, record, Delivery, LatencySummary, RunResult, RunStatus};
use kafkabench::measure::{SeriesPoint, TimeSeries};
use kafkabench::report::json::{IncludedFile, ResultFile, SCHEMA_VERSION};

const MS: u64 = 1_000_000;
const SHARD: &str = "merge/shard.kbs";

fn summary(values: impl Iterator<Item = u64>) -> LatencySummary {
    let mut h = new_histogram();
    for v in values {
        record(&mut h, v);
    }
    LatencySummary::from_histogram(&h)
}

/// Shard `k`'s result of the fixture: 1000 records acked, latencies of its own shape.
fn shard_run(k: u64) -> RunResult {
    let lat = || (0..1000u64).map(move |i| (k + 1) * MS + i * 10_000 * (k + 1));
    RunResult {
        index: 0,
        label: "run".into(),
        topic: "kb-test-merge-r1".into(),
        status: RunStatus::Complete,
        sent: 1000,
        acked: 1000,
        key_value_bytes: 100_000,
        elapsed_secs: 0.5 + k as f64 / 100.0,
        achieved_rate: 2000.0,
        target_rate: Some(2000.0),
        ack: summary(lat()),
        service: summary(lat()),
        send_delay: summary(std::iter::empty()),
        e2e: Some(summary(lat().map(|v| v + MS))),
        delivery: Some(Delivery {
            consumed: 1000,
            lost: Some(0),
            ..Delivery::default()
        }),
        disk_bytes: Some(140_000 + k),
        series: Some(TimeSeries {
            interval_secs: 1.0,
            points: vec![SeriesPoint {
                sent: 1000,
                acked: 1000,
                consumed: Some(1000),
                span_secs: 0.5,
                bytes: 100_000,
                ack_histogram: Some(encode_interval(lat())),
                e2e_histogram: Some(encode_interval(lat().map(|v| v + MS))),
                ..SeriesPoint::default()
            }],
        }),
        ..RunResult::default()
    }
}

fn encode_interval(values: impl Iterator<Item = u64>) -> String {
    let mut h = hdr::interval_histogram();
    for v in values {
        record(&mut h, v);
    }
    hdr::encode(&h)
}

/// A result file as a shard would write it, carrying the fixture's texts.
fn shard_file(runs: Vec<RunResult>) -> ResultFile {
    let read = |p: &str| std::fs::read_to_string(common::repo().join(fixture(p))).unwrap();
    ResultFile {
        schema_version: SCHEMA_VERSION,
        kafkabench_version: "0.1.0".into(),
        librdkafka_version: None,
        scenario: "merge_shard".into(),
        scenario_text: Some(read(SHARD)),
        scenario_includes: vec![IncludedFile {
            path: fixture("merge/common/cluster.kbs"),
            text: read("merge/common/cluster.kbs"),
        }],
        description: None,
        run_id: "r1".into(),
        started_at: Some("2026-11-30T12:00:00.000Z".into()),
        scale: 1.0,
        interval_secs: Some(1.0),
        planned_runs: 1,
        outcome: "assertion_failed".into(),
        exit_code: 1,
        failure: None,
        interrupted: false,
        runs,
        assertions: vec![],
        notes: vec![],
        environment: Some(kafkabench::measure::Environment {
            kafkabench: "0.1.0".into(),
            librdkafka: "2.12.1".into(),
            cluster: None,
            host: None,
        }),
        shard_environments: Vec::new(),
    }
}

fn write(dir: &Path, name: &str, f: &ResultFile) -> String {
    let path = dir.join(name);
    let mut file = std::fs::File::create(&path).unwrap();
    f.write(&mut file).unwrap();
    path.display().to_string()
}

fn two_shards(dir: &Path) -> (String, String) {
    (
        write(dir, "shard-0.json", &shard_file(vec![shard_run(0)])),
        write(dir, "shard-1.json", &shard_file(vec![shard_run(1)])),
    )
}

fn json(path: &PathBuf) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn two_shards_merge_into_one_table_and_verdicts_judged_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_shards(dir.path());
    let out = kafkabench(&["merge", &a, &b]);
    let stdout = expect_exit(&out, 0);
    assert_eq!(stdout.matches("PASS  acked == 2000").count(), 1, "{stdout}");
    insta::assert_snapshot!(stdout);
}

#[test]
fn the_merged_result_file_adds_up_and_holds_the_merged_histograms() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_shards(dir.path());
    let (out_json, junit, html) = (
        dir.path().join("merged.json"),
        dir.path().join("junit.xml"),
        dir.path().join("merged.html"),
    );
    let out = kafkabench(&[
        "merge",
        &a,
        &b,
        "--json",
        out_json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    expect_exit(&out, 0);
    let v = json(&out_json);
    let run = &v["runs"][0];
    assert_eq!(
        (run["sent"].as_u64(), run["acked"].as_u64()),
        (Some(2000), Some(2000))
    );
    assert_eq!(run["ack"]["count"], 2000);
    assert_eq!(run["e2e"]["count"], 2000);
    assert_eq!(run["delivery"]["consumed"], 2000);
    assert_eq!(
        run["disk_bytes"], 140_001,
        "the largest measured, not the sum"
    );
    assert_eq!(run["series"]["points"][0]["acked"], 2000);
    assert_eq!(
        run["elapsed_secs"], 0.51,
        "the barrier to the last shard's end"
    );
    assert_eq!(v["outcome"], "ok");
    assert_eq!(v["assertions"].as_array().unwrap().len(), 4);
    // Each shard's machine is kept, and no one machine is claimed for the merge.
    assert_eq!(v["shard_environments"].as_array().unwrap().len(), 2);
    assert!(v["environment"].is_null());
    let merged: ResultFile = ResultFile::read(&out_json).unwrap();
    let mut one = new_histogram();
    for k in 0..2u64 {
        for i in 0..1000u64 {
            record(&mut one, (k + 1) * MS + i * 10_000 * (k + 1));
        }
    }
    assert_eq!(
        merged.runs[0].ack.p99_ms,
        one.value_at_quantile(0.99) as f64 / 1e6
    );
    let junit = std::fs::read_to_string(junit).unwrap();
    assert_eq!(
        junit.matches("<testcase").count(),
        4,
        "one per assertion, judged once: {junit}"
    );
    assert!(std::fs::read_to_string(html).unwrap().contains("<svg"));
    let again = kafkabench(&["report", out_json.to_str().unwrap()]);
    assert!(expect_exit(&again, 0).contains("PASS  acked == 2000"));
}

#[test]
fn a_file_of_another_scenario_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = two_shards(dir.path());
    let mut other = shard_file(vec![shard_run(1)]);
    other.scenario_text = Some(other.scenario_text.unwrap().replace("2000/s", "3000/s"));
    let b = write(dir.path(), "other.json", &other);
    let out = kafkabench(&["merge", &a, &b]);
    expect_exit(&out, 2);
    let err = text(&out.stderr);
    assert!(
        err.contains("other.json is of another scenario than"),
        "{err}"
    );
}

#[test]
fn a_file_without_histograms_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = two_shards(dir.path());
    let mut v: serde_json::Value = serde_json::to_value(shard_file(vec![shard_run(1)])).unwrap();
    v["runs"][0]["ack"]["histogram"] = serde_json::Value::Null;
    let b = dir.path().join("old.json");
    std::fs::write(&b, v.to_string()).unwrap();
    let out = kafkabench(&["merge", &a, b.to_str().unwrap()]);
    expect_exit(&out, 2);
    let err = text(&out.stderr);
    assert!(
        err.contains("old.json: run 1 (run): its ack latency has 1000 records and no histogram"),
        "{err}"
    );
    assert!(err.contains("re-run"), "{err}");
}

#[test]
fn a_shard_that_failed_makes_exit_3_naming_it_with_the_rest_merged() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "shard-0.json", &shard_file(vec![shard_run(0)]));
    let mut failed = shard_file(vec![]);
    failed.failure = Some("run 1 (run): topic kb-test-merge-r1 has no leader".into());
    let b = write(dir.path(), "shard-1.json", &failed);
    let out = kafkabench(&["merge", &a, &b]);
    let stdout = expect_exit(&out, 3);
    assert!(
        stdout.contains("FAIL  acked == 2000"),
        "the rest is reported: {stdout}"
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("shard-1.json: run 1 (run): topic kb-test-merge-r1 has no leader"),
        "{err}"
    );
    assert!(err.contains("shard-1.json has no result for it"), "{err}");
}

#[test]
fn scenario_on_disk_must_be_the_one_the_results_ran() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_shards(dir.path());
    let same = kafkabench(&["merge", &a, &b, "--scenario", &fixture(SHARD)]);
    expect_exit(&same, 0);
    let other = kafkabench(&["merge", &a, &b, "--scenario", &fixture("run/bound_ok.kbs")]);
    expect_exit(&other, 2);
    assert!(text(&other.stderr).contains("bound_ok.kbs is not the scenario the results ran"));
}

#[test]
fn a_report_file_that_cannot_be_written_is_said_before_anything_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_shards(dir.path());
    let out = kafkabench(&["merge", &a, &b, "--json", "/nonexistent/dir/m.json"]);
    expect_exit(&out, 2);
    assert!(text(&out.stderr).contains("cannot write --json /nonexistent/dir/m.json"));
}

/// A real run split in two: the fixture run twice against the local broker under one run id,
/// each invocation one shard's share; each alone fails `acked == 2000`, the merge holds it.
#[test]
fn a_real_run_split_in_two_merges_into_its_totals() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for k in 0..2 {
        let path = dir.path().join(format!("shard-{k}.json"));
        let out = kafkabench(&[
            "run",
            &fixture(SHARD),
            "--quiet",
            "--run-id",
            "kbmerge",
            "--json",
            path.to_str().unwrap(),
        ]);
        expect_exit(&out, 1);
        files.push(path.display().to_string());
    }
    let merged = dir.path().join("merged.json");
    let out = kafkabench(&[
        "merge",
        &files[0],
        &files[1],
        "--json",
        merged.to_str().unwrap(),
    ]);
    let stdout = expect_exit(&out, 0);
    assert_eq!(stdout.matches("acked == 2000").count(), 1, "{stdout}");
    let v = json(&merged);
    let run = &v["runs"][0];
    assert_eq!(run["sent"], 2000);
    assert_eq!(run["acked"], 2000);
    assert_eq!(run["delivery"]["consumed"], 2000);
    assert_eq!(run["delivery"]["lost"], 0);
    let points = run["series"]["points"].as_array().unwrap();
    let acked: u64 = points.iter().map(|p| p["acked"].as_u64().unwrap()).sum();
    assert_eq!(acked, 2000, "the series adds up too");
}
