//! `kafkabench plan` as data to diff and keep, `--run-id`, and the help text: no broker needed.

use std::path::Path;

use crate::common::{self, expect_exit, kafkabench, text};
use clap::CommandFactory;

fn shipped() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(common::repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "kbs"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    files
}

fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

/// A scenario with every kind of workload value the plan serializes as a word.
const WORDS: &str = r#"scenario "words" {
  topic "t" { partitions = 1 }
  workload {
    warmup  = 2s
    rate    = 100/s for 10s, then 0/s for 5s, then 50/s for 2s
    payload = json(size: 200B)
    key     = zipf(1000, 1.1)
  }
  expect { failed == 0 }
}
"#;

#[test]
fn two_plans_of_one_file_are_identical_in_text_json_and_yaml() {
    for f in shipped() {
        for format in ["text", "json", "yaml"] {
            let a = kafkabench(&["plan", &f, "--format", format]);
            let b = kafkabench(&["plan", &f, "--format", format]);
            let a = expect_exit(&a, 0);
            assert_eq!(a, expect_exit(&b, 0), "{f} as {format}");
            assert!(a.contains("<run-id>"), "{f} as {format}: {a}");
        }
    }
}

#[test]
fn a_given_run_id_suffixes_topics_and_groups() {
    let out = kafkabench(&[
        "plan",
        "scenarios/promo_friday.kbs",
        "--run-id",
        "ci-42.shard_3",
    ]);
    let s = expect_exit(&out, 0);
    assert!(s.contains("brew.orders.v1-l0ms-none-ci-42.shard_3"), "{s}");
    assert!(!s.contains("<run-id>"), "{s}");
}

#[test]
fn a_run_id_a_topic_name_cannot_hold_is_refused_naming_the_character() {
    for (id, needle) in [
        ("ci/42", "`/` (character 3) cannot be in a run id"),
        ("", "cannot be empty"),
        (&"x".repeat(33), "at most 32 characters"),
    ] {
        for cmd in ["plan", "run"] {
            let out = kafkabench(&[cmd, "scenarios/promo_friday.kbs", "--run-id", id]);
            assert_eq!(out.status.code(), Some(2), "{cmd} --run-id {id:?}");
            let err = text(&out.stderr);
            assert!(err.contains(needle), "{cmd} --run-id {id:?}: {err}");
        }
    }
}

#[test]
fn a_run_id_that_makes_a_topic_name_too_long_is_refused_naming_the_topic() {
    let dir = tempfile::tempdir().unwrap();
    let name = "t".repeat(230);
    let f = write(
        dir.path(),
        "long.kbs",
        &format!("scenario \"s\" {{\n  topic \"{name}\" {{}}\n  workload {{ messages = 1 }}\n}}\n"),
    );
    let out = kafkabench(&["plan", &f, "--run-id", &"a".repeat(30)]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("would have 261 characters, over Kafka's 249") && err.contains("at most 18"),
        "{err}"
    );
}

#[test]
fn the_json_plan_carries_schema_version_and_lower_case_words() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "words.kbs", WORDS);
    let out = kafkabench(&["plan", &f, "--format", "json"]);
    let s = expect_exit(&out, 0);
    for internal in [
        "\"Duration\"",
        "\"Shape\"",
        "\"Json\"",
        "\"Zipf\"",
        "\"Unlimited\"",
    ] {
        assert!(!s.contains(internal), "{internal} in {s}");
    }
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["schema_version"], 1);
    let w = &v["runs"][0]["workload"];
    assert_eq!(w["warmup"]["duration"], 2.0);
    assert_eq!(w["rate"]["shape"][2]["per_sec"], 50.0);
    assert_eq!(w["payload"]["json"]["size"], 200);
    assert_eq!(w["key"]["zipf"]["n"], 1000);
    let y = kafkabench(&["plan", &f, "--format", "yaml"]);
    let y = expect_exit(&y, 0);
    assert!(
        y.contains("schema_version: 1") && y.contains("      zipf:\n") && !y.contains('!'),
        "enums as maps, not YAML tags: {y}"
    );
}

#[test]
fn the_plan_estimates_each_run_and_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "words.kbs", WORDS);
    let v: serde_json::Value = serde_json::from_str(&expect_exit(
        &kafkabench(&["plan", &f, "--format", "json"]),
        0,
    ))
    .unwrap();
    let e = &v["runs"][0]["estimate"];
    // Warm-up: 2 s of the shape (200 records); then the whole shape: 17 s, 1101 records.
    assert_eq!(e["warmup"]["seconds"], 2.0);
    assert_eq!(e["warmup"]["records"], 200);
    assert_eq!(e["measured"]["seconds"], 17.0);
    assert_eq!(e["measured"]["records"], 1100);
    assert_eq!(e["seconds"], 19.0);
    assert_eq!(v["estimate"]["seconds"], 19.0);
    assert_eq!(v["estimate"]["unknown_runs"], 0);
    let t = expect_exit(&kafkabench(&["plan", &f]), 0);
    assert!(t.contains("estimated sending time about 19s"), "{t}");
    assert!(
        t.contains("estimate  about 19s: warm-up 2s (200 records), then 17s (1100 records)"),
        "{t}"
    );
}

#[test]
fn an_unlimited_rate_count_is_estimated_as_unknown_with_its_records() {
    let out = kafkabench(&["plan", "scenarios/promo_friday.kbs", "--scale", "0.1"]);
    let s = expect_exit(&out, 0);
    assert!(
        s.contains("estimate  unknown (10000 records at an unlimited rate)"),
        "{s}"
    );
    let j = kafkabench(&["plan", "scenarios/promo_friday.kbs", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&expect_exit(&j, 0)).unwrap();
    assert!(v["runs"][0]["estimate"]["seconds"].is_null());
    assert_eq!(v["runs"][0]["estimate"]["measured"]["records"], 100_000);
    assert_eq!(v["estimate"]["unknown_runs"], 9);
}

#[test]
fn the_plan_shows_which_runs_each_assertion_reads() {
    let s = expect_exit(&kafkabench(&["plan", "scenarios/promo_friday.kbs"]), 0);
    assert!(
        s.contains("  disk.ratio > 1.6x when codec == zstd\n    on runs 3, 6, 9\n"),
        "{s}"
    );
    assert!(
        s.contains(
            "    [codec=zstd] → run 6 (linger=5ms codec=zstd) vs [codec=lz4] → run 5 (linger=5ms codec=lz4)"
        ),
        "{s}"
    );
    let j = kafkabench(&["plan", "scenarios/promo_friday.kbs", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&expect_exit(&j, 0)).unwrap();
    let a = &v["assertions"][4];
    assert_eq!(
        a["text"],
        "disk.bytes[codec=zstd] < 0.7 * disk.bytes[codec=lz4]"
    );
    assert_eq!(a["instances"].as_array().unwrap().len(), 3);
    let i = &a["instances"][0];
    assert_eq!(i["refs"][0]["select"][0], "codec=zstd");
    assert_eq!(i["refs"][0]["run"], 2);
    assert_eq!(i["refs"][1]["run"], 1);
    assert_eq!(i["runs"], serde_json::json!([2, 1]));
}

#[test]
fn every_argument_and_option_has_a_help_line() {
    let mut missing = Vec::new();
    let root = kafkabench::cli::Cli::command();
    let mut commands = vec![root.clone()];
    commands.extend(root.get_subcommands().cloned());
    for c in &commands {
        for a in c.get_arguments() {
            let id = a.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            if a.get_help().is_none() && a.get_long_help().is_none() {
                missing.push(format!("{} {id}", c.get_name()));
            }
        }
        for s in c.get_subcommands() {
            if s.get_name() != "help" && s.get_about().is_none() {
                missing.push(format!("{} {}", c.get_name(), s.get_name()));
            }
        }
    }
    assert!(missing.is_empty(), "without a help line: {missing:?}");
}

#[test]
fn help_says_kafkabench_whatever_the_binary_is_called() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("kb-copy");
    std::fs::copy(env!("CARGO_BIN_EXE_kafkabench"), &copy).unwrap();
    for args in [&["--help"][..], &["run", "--help"], &["plan", "--help"]] {
        let out = std::process::Command::new(&copy)
            .args(args)
            .output()
            .unwrap();
        let s = text(&out.stdout);
        assert!(s.contains("Usage: kafkabench"), "{args:?}: {s}");
        assert!(!s.contains("kb-copy"), "{args:?}: {s}");
    }
    let plan = text(&kafkabench(&["plan", "--help"]).stdout);
    for format in ["text:", "json:", "yaml:", "docs/plan-format.md"] {
        assert!(
            plan.contains(format),
            "plan --help documents {format}: {plan}"
        );
    }
}

#[test]
fn a_plan_to_diff_reads_as_snapshotted() {
    // Text only: the JSON fields are held by the tests above, so a field another change adds
    // does not churn a snapshot.
    let f = common::fixture("plan/estimates.kbs");
    let out = kafkabench(&["plan", &f, "--bootstrap", "127.0.0.1:9092"]);
    insta::assert_snapshot!("plan_text", expect_exit(&out, 0));
}
