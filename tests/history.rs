//! `kafkabench history`: a directory of result files searched for change points, the gate on
//! the newest change, unreadable files said at once, the committed history of a real change
//! (bench/history.sh), and the README's CI example run as written against the local broker.

use std::path::{Path, PathBuf};

use crate::common::{self, expect_exit, fixture, kafkabench, text};
use kafkabench::measure::environment::{ClusterPrint, Environment, Host};
use kafkabench::measure::{RunResult, RunStatus};
use kafkabench::random::Rng;
use kafkabench::report::json::{ResultFile, SCHEMA_VERSION};

/// Result file `i` of a synthetic history: throughput 1000/s with 1 % noise, 10 % less from
/// result `drop_at` on; started `i` minutes after 10:00.
fn result(i: usize, drop_at: usize, rng: &mut Rng) -> ResultFile {
    let level = if i >= drop_at { 900.0 } else { 1000.0 };
    let mut run = RunResult {
        label: "linger=5ms".into(),
        status: RunStatus::Complete,
        throughput_msgs: level * (1.0 + 0.01 * (rng.next_f64() - 0.5)),
        ..RunResult::default()
    };
    run.ack.count = 1000;
    run.ack.p50_ms = 2.0;
    run.ack.p99_ms = 9.0;
    ResultFile {
        schema_version: SCHEMA_VERSION,
        kafkabench_version: "0.1.0".into(),
        librdkafka_version: Some("2.12.1".into()),
        scenario: "nightly".into(),
        scenario_text: None,
        scenario_includes: vec![],
        description: None,
        run_id: format!("run{i:02}"),
        started_at: Some(format!("2026-12-01T10:{i:02}:00.000Z")),
        scale: 1.0,
        interval_secs: None,
        planned_runs: 1,
        outcome: "ok".into(),
        exit_code: 0,
        failure: None,
        interrupted: false,
        runs: vec![run],
        assertions: vec![],
        notes: vec![],
        environment: Some(Environment {
            kafkabench: "0.1.0".into(),
            librdkafka: "2.12.1".into(),
            // A fresh CI cluster every night: not a new series.
            cluster: Some(ClusterPrint {
                cluster_id: Some(format!("cluster-{i}")),
                brokers: 1,
                api: vec!["Produce v13".into()],
                configs: None,
            }),
            host: Some(Host {
                cpu: Some("Xeon".into()),
                cores: 2,
                ..Host::default()
            }),
        }),
        shard_environments: Vec::new(),
    }
}

fn save(path: &Path, f: &ResultFile) {
    let mut text = Vec::new();
    f.write(&mut text).expect("written");
    std::fs::write(path, text).expect("saved");
}

/// A directory of 40 result files, written in another order than they ran.
fn history(drop_at: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut rng = Rng::new(5);
    for i in 0..40 {
        // Named backwards: the order comes from the start times.
        save(
            &dir.path().join(format!("{:02}.json", 39 - i)),
            &result(i, drop_at, &mut rng),
        );
    }
    dir
}

/// `history` with its paths shown as DIR.
fn run_history(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["history", dir.to_str().expect("a UTF-8 path")];
    args.extend_from_slice(extra);
    let out = kafkabench(&args);
    let shown = dir.display().to_string();
    std::process::Output {
        stdout: text(&out.stdout).replace(&shown, "DIR").into_bytes(),
        stderr: text(&out.stderr).replace(&shown, "DIR").into_bytes(),
        ..out
    }
}

#[test]
fn a_drop_shows_as_a_change_point_and_a_bound_on_it_exits_1() {
    let dir = history(34);
    let stdout = expect_exit(&run_history(dir.path(), &[]), 0);
    assert!(
        stdout.contains("nightly, run `linger=5ms`: 40 results"),
        "{stdout}"
    );
    let out = run_history(dir.path(), &["--fail-on", "throughput:-5%"]);
    let stdout = expect_exit(&out, 1);
    insta::assert_snapshot!(stdout);
    // The same drop, older than the last 5 results: history, not news.
    expect_exit(
        &run_history(dir.path(), &["--fail-on", "throughput:-5%", "--last", "5"]),
        0,
    );
    // A looser bound holds.
    expect_exit(
        &run_history(dir.path(), &["--fail-on", "throughput:-15%"]),
        0,
    );
}

#[test]
fn json_and_html_say_the_same_as_the_table() {
    let dir = history(20);
    let out_dir = tempfile::tempdir().expect("tempdir");
    let (json, html) = (out_dir.path().join("h.json"), out_dir.path().join("h.html"));
    let out = run_history(
        dir.path(),
        &[
            "--json",
            json.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    expect_exit(&out, 0);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["history_version"], 2);
    assert_eq!(v["outcome"], "ok");
    let s = &v["series"][0];
    assert_eq!(s["results"].as_array().unwrap().len(), 40);
    let throughput = &s["figures"][0];
    assert_eq!(throughput["name"], "throughput");
    assert_eq!(throughput["change_points"][0]["index"], 20);
    assert_eq!(throughput["change_points"][0]["run_id"], "run20");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("throughput over 40 results"));
    // The change point marked with its change and p-value, as the table says them.
    let c = &throughput["change_points"][0];
    let (change, p) = (
        c["change_pct"].as_f64().unwrap(),
        c["p_tail"].as_f64().unwrap(),
    );
    let label = format!("{change:+.1}% (p {p:.1e})");
    assert!(
        (change + 10.0).abs() < 0.5 && page.contains(&label),
        "the change point is marked: {label}"
    );
    // Each stretch is drawn at its median: the page's summary line and the document agree.
    let segments = throughput["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 2);
    assert!(page.contains("median between changes"));
    assert!(!page.contains("<script"), "no script on the page");
}

#[test]
fn every_unreadable_file_and_bad_bound_is_said_at_once_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let mut rng = Rng::new(1);
    save(&d.join("good.json"), &result(0, 99, &mut rng));
    std::fs::write(d.join("cut.json"), "{\"schema_version\": 2, \"runs\": [").unwrap();
    std::fs::write(d.join("other.json"), "{\"hello\": 1}").unwrap();
    std::fs::write(d.join("old.json"), "{\"schema_version\": 1}").unwrap();
    let mut no_start = result(1, 99, &mut rng);
    no_start.started_at = None;
    save(&d.join("no_start.json"), &no_start);
    let mut odd_start = result(2, 99, &mut rng);
    odd_start.started_at = Some("yesterday".into());
    save(&d.join("odd_start.json"), &odd_start);
    std::fs::write(d.join("notes.txt"), "not read: not *.json").unwrap();
    std::fs::create_dir(d.join("empty")).unwrap();
    let empty = d.join("empty");
    let missing = d.join("missing.json");
    let out = run_history(
        d,
        &[
            empty.to_str().unwrap(),
            missing.to_str().unwrap(),
            "--fail-on",
            "throughput:+5%",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    assert!(out.stdout.is_empty(), "nothing is analysed");
    insta::assert_snapshot!(stderr.replace(&d.display().to_string(), "DIR"));
}

#[test]
fn an_output_that_cannot_be_written_is_found_before_anything_is_read() {
    let dir = history(20);
    let out = run_history(dir.path(), &["--json", "/nonexistent/dir/h.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot write --json /nonexistent/dir/h.json"));
}

#[test]
fn a_gate_on_fewer_results_than_a_change_point_needs_is_refused() {
    let dir = history(20);
    let out = run_history(dir.path(), &["--fail-on", "throughput:-5%", "--last", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("at least 3"),
        "{}",
        text(&out.stderr)
    );
}

/// The history bench/history.sh made on the local broker: 40 runs of 3 trials, `linger.ms` 0
/// for the first 25 and 20 from the 26th on, trimmed and gzipped.
const LINGER: &str = "history/linger";
const LINGER_CHANGE: u64 = 26;

#[test]
fn the_committed_history_of_a_real_linger_change_has_that_change_point_and_no_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("h.json");
    let out = kafkabench(&[
        "history",
        &fixture(LINGER),
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = expect_exit(&out, 0);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["files"], 40);
    let mut found = Vec::new();
    for f in v["series"][0]["figures"].as_array().unwrap() {
        for c in f["change_points"].as_array().unwrap() {
            found.push((
                f["name"].as_str().unwrap().to_string(),
                c["index"].as_u64().unwrap() + 1,
            ));
        }
    }
    assert!(
        found.iter().any(|(n, _)| n == "ack.p50"),
        "{found:?}\n{stdout}"
    );
    for (name, at) in &found {
        assert!(
            at.abs_diff(LINGER_CHANGE) <= 1,
            "{name} changed at #{at}, not near #{LINGER_CHANGE}\n{stdout}"
        );
    }
    let figures = v["series"][0]["figures"].as_array().unwrap();
    let figure = |name: &str| figures.iter().find(|f| f["name"] == name).unwrap();
    // The paced run's throughput is judged against its 1 000/s: 100.0 % of it, then 99.6 %,
    // a change held back as too small, not a change point.
    let throughput = figure("throughput");
    assert!(throughput["against_plan"].is_array(), "{throughput}");
    assert!(
        throughput["change_points"].as_array().unwrap().is_empty(),
        "{stdout}"
    );
    // ack.p50 moved from about 1 ms to about 12 ms (geometric means: a trial stalled at 250 ms
    // before the change no longer drags the level before it to 4.46 ms).
    let c = &figure("ack.p50")["change_points"][0];
    let (before, after) = (c["before"].as_f64().unwrap(), c["after"].as_f64().unwrap());
    assert!((0.0008..0.0015).contains(&before), "{c}");
    assert!((0.010..0.014).contains(&after), "{c}");
    assert!(
        stdout.contains("ack.p50      1.15ms  12.07ms"),
        "the table says it so\n{stdout}"
    );
    // Every change point's p-value is its own: they rank.
    let mut shown: Vec<String> = (figures.iter())
        .flat_map(|f| f["change_points"].as_array().unwrap().clone())
        .map(|c| {
            format!(
                "{:.1e}",
                c["p_tail"].as_f64().or(c["p_value"].as_f64()).unwrap()
            )
        })
        .collect();
    let all = shown.len();
    shown.sort();
    shown.dedup();
    assert!(all >= 3 && shown.len() == all, "{shown:?}\n{stdout}");
    // The gate: the change is 15 results old; among the last 20 it fails a bound on ack.p50.
    let gated = kafkabench(&["history", &fixture(LINGER), "--fail-on", "ack.p50:+10%"]);
    expect_exit(&gated, 0);
    let gated = kafkabench(&[
        "history",
        &fixture(LINGER),
        "--fail-on",
        "ack.p50:+10%",
        "--last",
        "20",
    ]);
    let stdout = expect_exit(&gated, 1);
    assert!(
        stdout.contains("FAIL  history_linger, run `run`: ack.p50 rose"),
        "{stdout}"
    );
}

/// The commands of the README's CI example: every `run: |` block of its GitHub Actions
/// workflow, and every `script:` item of its GitLab job.
fn readme_ci_commands() -> (Vec<String>, Vec<String>) {
    let readme = std::fs::read_to_string(common::repo().join("README.md")).expect("README.md");
    let blocks: Vec<&str> = readme
        .split("```yaml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .collect();
    let github = blocks
        .iter()
        .find(|b| b.contains("actions/cache/restore"))
        .expect("the GitHub workflow");
    let gitlab = blocks
        .iter()
        .find(|b| b.contains("script:"))
        .expect("the GitLab job");
    let mut gh = Vec::new();
    let mut in_run: Option<usize> = None;
    for line in github.lines() {
        let indent = line.len() - line.trim_start().len();
        match in_run {
            Some(i) if indent > i && !line.trim().is_empty() => gh.push(line.trim().to_string()),
            _ => in_run = None,
        }
        if line.trim() == "run: |" {
            in_run = Some(indent);
        }
    }
    let mut gl = Vec::new();
    let mut in_script = false;
    for line in gitlab.lines() {
        if line.trim() == "script:" {
            in_script = true;
        } else if in_script {
            match line.trim().strip_prefix("- ") {
                Some(cmd) => gl.push(cmd.to_string()),
                None => in_script = false,
            }
        }
    }
    (gh, gl)
}

#[test]
fn the_readme_ci_example_runs_as_written() {
    common::require_broker();
    let (github, gitlab) = readme_ci_commands();
    assert_eq!(
        github, gitlab,
        "the GitHub and GitLab examples run the same commands"
    );
    assert!(
        github.iter().any(|c| c.starts_with("kafkabench history")),
        "{github:?}"
    );
    // One CI workspace whose history directory survives between runs, as the cache keeps it.
    let work = tempfile::tempdir().expect("tempdir");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kafkabench"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let scenario = common::repo().join(fixture("history/ci.kbs"));
    for ci_run in 1..=2 {
        let out = std::process::Command::new("bash")
            .args(["-euo", "pipefail", "-c", &github.join("\n")])
            .current_dir(work.path())
            .env("PATH", &path)
            .env("SCENARIO", &scenario)
            .env("KAFKA_BOOTSTRAP", common::bootstrap())
            .env("NO_COLOR", "1")
            .output()
            .expect("bash runs");
        let stdout = expect_exit(&out, 0);
        assert!(
            stdout.contains(&format!("history_ci, run `run`: {ci_run} result")),
            "CI run {ci_run}:\n{stdout}"
        );
    }
    // The date names a file to the second, and a run takes longer (its warm-up alone is 2 s).
    let files = std::fs::read_dir(work.path().join("kafkabench-history"))
        .unwrap()
        .count();
    assert_eq!(files, 2);
    assert!(work.path().join("history.html").exists());
}
