//! `topics = N`: a run over several topics of one configuration. Its diagnostics and plan need
//! no broker; against the real one, a 10-topic run reports each topic and their totals and
//! leaves no topic behind, interrupted or not.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{self, expect_exit, fixture, kafkabench, text};
use kafkabench::diagnostic::render_text;
use kafkabench::source::Sources;

/// The rendered diagnostics of a fixture under tests/fixtures/topics, as `kafkabench check`
/// shows them (no colour, 100 columns).
fn diagnostics(name: &str) -> String {
    let path = Path::new("tests/fixtures/topics").join(format!("{name}.kbs"));
    let mut sources = Sources::default();
    let diags = kafkabench::check::load(&path, &mut sources)
        .err()
        .unwrap_or_else(|| panic!("{} should be invalid", path.display()));
    render_text(&diags, &sources, false, 100)
}

#[test]
fn zero_too_many_a_fraction_or_a_size_of_topics_is_refused_at_its_value() {
    insta::assert_snapshot!("counts", diagnostics("counts"));
}

#[test]
fn several_topics_with_an_existing_topic_are_refused_with_the_two_ways_out() {
    insta::assert_snapshot!("existing", diagnostics("existing"));
}

#[test]
fn topics_whose_partitions_add_up_past_the_bound_are_refused_with_the_count_that_fits() {
    insta::assert_snapshot!("partitions", diagnostics("partitions"));
}

#[test]
fn a_name_with_room_for_the_run_suffix_but_not_the_index_is_refused_with_its_length() {
    insta::assert_snapshot!("long_name", diagnostics("long_name"));
}

#[test]
fn the_plan_names_the_first_and_last_topic_and_lists_every_one_as_data() {
    let out = kafkabench(&["plan", &fixture("topics/ten.kbs"), "--run-id", "abc"]);
    let s = expect_exit(&out, 0);
    assert!(
        s.contains("topic     kb-topics-abc-0 … kb-topics-abc-9 (10 topics)  partitions=2"),
        "{s}"
    );
    assert!(s.contains("3 producers, over 10 topics"), "{s}");
    let out = kafkabench(&[
        "plan",
        &fixture("topics/ten.kbs"),
        "--run-id",
        "abc",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&expect_exit(&out, 0)).expect("JSON");
    let run = &v["runs"][0];
    let names: Vec<&str> = run["topics"]
        .as_array()
        .expect("a list of topics")
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let want: Vec<String> = (0..10).map(|i| format!("kb-topics-abc-{i}")).collect();
    assert_eq!(names, want);
    assert_eq!(run["topic"]["name"], "kb-topics-abc-0", "the first topic");
    assert_eq!(run["workload"]["topics"], 10);
}

#[test]
fn a_run_id_too_long_for_the_indexed_names_is_refused_naming_the_last_topic() {
    let id = "x".repeat(32);
    let long = "t".repeat(215);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.kbs");
    std::fs::write(
        &file,
        format!(
            "scenario \"s\" {{\n  topic \"{long}\" {{ }}\n  workload {{\n    messages = 10\n    topics = 100\n  }}\n}}\n"
        ),
    )
    .unwrap();
    let out = kafkabench(&["plan", file.to_str().unwrap(), "--run-id", &id]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("topic `{long}-{id}-99` would have 251 characters")),
        "{err}"
    );
    assert!(
        err.contains("use a run id of at most 30 characters"),
        "{err}"
    );
}

/// A finished run over `n` topics of 100 acked records each (topic i's disk 1 KiB × (i + 1)).
fn run_over(n: u64) -> kafkabench::measure::RunResult {
    use kafkabench::measure::{RunResult, RunStatus, TopicFigures};
    RunResult {
        label: format!("n={n}"),
        status: RunStatus::Complete,
        sent: 100 * n,
        acked: 100 * n,
        elapsed_secs: 1.0,
        throughput_msgs: 100.0 * n as f64,
        topics: (0..n)
            .map(|i| TopicFigures {
                topic: format!("t-abc-{i:02}"),
                sent: 100,
                acked: 100,
                failed: 0,
                throughput_msgs: 100.0,
                consumed: None,
                disk_bytes: Some(1024 * (i + 1)),
            })
            .collect(),
        ..RunResult::default()
    }
}

fn table(results: &[kafkabench::measure::RunResult]) -> String {
    let mut out = Vec::new();
    kafkabench::report::table::write_results("s", results.len(), results, &[], &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_table_lists_every_topic_of_a_run_over_ten_and_summarizes_a_hundred_in_three_lines() {
    let ten = table(&[run_over(10)]);
    assert!(
        ten.contains("n=10: 10 topics (the row above is their total)"),
        "{ten}"
    );
    for i in 0..10 {
        assert!(ten.contains(&format!("t-abc-{i:02}")), "{ten}");
    }
    assert!(!ten.contains("consumed"), "no consumer, no column: {ten}");
    let hundred = table(&[run_over(100)]);
    assert!(
        hundred.contains("n=100: 100 topics, t-abc-00 … t-abc-99"),
        "{hundred}"
    );
    let lines: Vec<&str> = hundred.lines().collect();
    assert!(lines.len() < 15, "compact at 100 topics:\n{hundred}");
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("a {name} row in\n{hundred}"))
            .to_string()
    };
    assert!(row("min").contains("1KiB"), "{hundred}");
    assert!(row("median").contains("51KiB"), "{hundred}");
    assert!(row("max").contains("100KiB"), "{hundred}");
    let one = table(&[run_over(1)]);
    assert!(!one.contains("topics"), "one topic, no breakdown: {one}");
}

/// The topics on the broker whose names start with `prefix`.
fn topics_named(prefix: &str) -> Vec<String> {
    common::broker_topics(|n| n.starts_with(prefix))
}

/// A run id of this test process's own, so its topics are told apart from any other.
fn run_id(tag: &str) -> String {
    format!("{tag}{}", kafkabench::plan::new_run_id())
}

#[test]
fn a_ten_topic_run_reports_each_topic_and_their_totals_and_deletes_every_topic() {
    common::require_broker();
    let id = run_id("m");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = kafkabench(&[
        "run",
        &fixture("topics/ten.kbs"),
        "--quiet",
        "--run-id",
        &id,
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = expect_exit(&out, 0);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let run = &v["runs"][0];
    let topics = run["topics"].as_array().expect("per-topic figures");
    assert_eq!(topics.len(), 10, "{run}");
    let sum = |k: &str| topics.iter().map(|t| t[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("acked"), run["acked"].as_u64().unwrap(), "{run}");
    assert_eq!(sum("sent"), run["sent"].as_u64().unwrap());
    assert_eq!(run["acked"], 30_000);
    assert_eq!(
        sum("consumed"),
        run["delivery"]["consumed"].as_u64().unwrap()
    );
    assert_eq!(sum("disk_bytes"), run["disk_bytes"].as_u64().unwrap());
    for (i, t) in topics.iter().enumerate() {
        assert_eq!(t["topic"], format!("kb-topics-{id}-{i}"));
        // Record i of the schedule goes to topic i mod 10: an equal share each.
        assert_eq!(t["acked"], 3000, "{t}");
        assert!(t["disk_bytes"].as_u64().unwrap() > 300_000, "{t}");
        assert!(t["throughput_msgs"].as_f64().unwrap() > 0.0, "{t}");
    }
    let rate: f64 = topics
        .iter()
        .map(|t| t["throughput_msgs"].as_f64().unwrap())
        .sum();
    assert!(
        (rate - run["throughput_msgs"].as_f64().unwrap()).abs() < 1.0,
        "{run}"
    );
    assert!(
        stdout.contains("10 topics (the row above is their total)"),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("kb-topics-{id}-9")), "{stdout}");
    assert_eq!(
        topics_named(&format!("kb-topics-{id}")),
        Vec::<String>::new()
    );
}

#[test]
fn an_interrupted_ten_topic_run_deletes_every_topic_too() {
    common::require_broker();
    let id = run_id("i");
    let prefix = format!("kb-topics-long-{id}");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args([
            "run",
            &fixture("topics/long_ten.kbs"),
            "--quiet",
            "--run-id",
            &id,
        ])
        .current_dir(common::repo())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("kafkabench starts");
    // Interrupted once all ten exist: while it measures.
    let deadline = Instant::now() + Duration::from_secs(30);
    while topics_named(&prefix).len() < 10 {
        assert!(
            Instant::now() < deadline,
            "the run's topics never all appeared"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: sends SIGINT to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let started = Instant::now();
    let status = child.wait().expect("it exits");
    assert_eq!(status.code(), Some(130));
    // Bounded by the deletion's own timeout (30 s), with room for a busy machine; not the
    // run's remaining time.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(topics_named(&prefix), Vec::<String>::new());
}

#[test]
fn a_near_miss_of_a_known_topic_config_is_refused_with_a_did_you_mean_and_a_vendors_is_not() {
    let out = diagnostics("near_miss");
    assert!(
        !out.contains("setting `redpanda.remote.read`"),
        "a vendor's passes: {out}"
    );
    assert!(
        !out.contains("setting `retention.msy`"),
        "`configs` passes any: {out}"
    );
    insta::assert_snapshot!("near_miss", out);
}

#[test]
fn a_vendor_config_reaches_the_broker_whose_refusal_names_it_before_any_run_sends() {
    common::require_broker();
    let id = run_id("v");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = kafkabench(&[
        "run",
        &fixture("topics/vendor_configs.kbs"),
        "--quiet",
        "--run-id",
        &id,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    // The broker's own words name the config too (Kafka: "Unknown topic config name: …").
    let said = "run 2 (diskless): the cluster refuses the topic config `diskless.enable = true`: ";
    assert!(err.contains(said), "{err}");
    let reason = err.split(said).nth(1).unwrap_or_default();
    assert!(
        reason.contains("diskless.enable"),
        "the broker's reason: {err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["runs"], serde_json::json!([]), "run 1 sent nothing: {v}");
    assert!(topics_named(&format!("kb-vendor-plain-{id}")).is_empty());
}
