//! The fault timeline as a language: `check` diagnostics (each fixture of tests/fixtures/faults
//! its own snapshot), `plan` in text and JSON, `--scale`, `fmt`, and the report's fault lines.
//! No broker needed.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{expect_exit, fixture, kafkabench};
use kafkabench::diagnostic::render_text;
use kafkabench::measure::{
    ChurnEvent, FaultFigures, FaultRecord, LatencySummary, RunResult, RunStatus,
};
use kafkabench::model::{BrokerTarget, FaultAction};
use kafkabench::source::Sources;

/// One `#[test]` per invalid fixture; its snapshot is `fault_language__<name>.snap`.
macro_rules! each_invalid_fixture {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                diagnostics_render_like_the_snapshot(stringify!($name));
            }
        )*
    };
}

each_invalid_fixture!(
    mistakes,
    overlaps,
    misplaced,
    metrics_without_faults,
    unpaced_recovery,
    syntax,
    deletes,
    delete_existing,
);

fn diagnostics_render_like_the_snapshot(name: &str) {
    let path = Path::new("tests/fixtures/faults").join(format!("{name}.kbs"));
    let mut sources = Sources::default();
    let diags = kafkabench::check::load(&path, &mut sources)
        .err()
        .unwrap_or_else(|| panic!("{} should be invalid", path.display()));
    let text = render_text(&diags, &sources, false, 100);
    assert!(
        !text.contains("rule") && !text.contains("EOI") && !text.contains("fault_"),
        "pest internals leaked:\n{text}"
    );
    insta::assert_snapshot!(name, text);
}

fn timeline() -> kafkabench::model::Scenario {
    let mut sources = Sources::default();
    kafkabench::check::load(Path::new(&fixture("faults/timeline.kbs")), &mut sources)
        .expect("the timeline fixture checks")
}

#[test]
fn a_timeline_checks_into_typed_actions_per_cell() {
    let s = timeline();
    // steps × victim: baseline has an empty timeline, crash the scenario's with its victim.
    assert_eq!(s.cells.len(), 4);
    assert!(
        s.cells[0].spec.faults.is_empty(),
        "baseline: `faults {{ }}`"
    );
    let crash = &s.cells[3].spec.faults;
    assert_eq!(crash.len(), 4);
    assert_eq!(crash[0].action, FaultAction::Kill(BrokerTarget::Leader(0)));
    assert_eq!(crash[0].at.as_secs(), 15);
    assert_eq!(crash[0].lasts.map(|d| d.as_secs()), Some(15));
    assert_eq!(crash[1].action, FaultAction::Pause(BrokerTarget::Id(3)));
    assert_eq!(crash[2].action, FaultAction::Restart(BrokerTarget::Id(1)));
    assert_eq!(crash[2].lasts, None);
    assert_eq!(
        crash[3].action,
        FaultAction::Run("kafka-topics --describe --topic faults-crash-3".into()),
        "a matrix variable fills the command"
    );
    assert_eq!(crash[1].text, "pause broker 3 for 5s");
}

#[test]
fn a_ladder_step_carries_its_timeline_to_the_steps_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ladder.kbs");
    std::fs::write(
        &f,
        r#"scenario "ladder" {
  topic "t-{step}" { }
  workload { duration = 10s  rate = 100/s }
  ladder {
    calm { }
    hit { faults { at 2s pause broker 1 for 1s } }
    more { producer.linger.ms = 5 }
    quiet { faults { } }
  }
}
"#,
    )
    .unwrap();
    let mut sources = Sources::default();
    let s = kafkabench::check::load(&f, &mut sources).expect("checks");
    let counts: Vec<usize> = s.cells.iter().map(|c| c.spec.faults.len()).collect();
    assert_eq!(counts, [0, 1, 1, 0]);
}

#[test]
fn times_are_not_checked_when_the_run_has_no_known_length() {
    // A count at an unlimited rate: the length is known only when the run ends.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("unlimited.kbs");
    std::fs::write(
        &f,
        r#"scenario "unlimited" {
  topic "t" { }
  workload { messages = 100k }
  faults { at 1h kill broker 1 for 1h }
}
"#,
    )
    .unwrap();
    let out = kafkabench(&["check", f.to_str().unwrap()]);
    expect_exit(&out, 0);
}

#[test]
fn plan_shows_the_timeline_of_each_run() {
    let out = kafkabench(&["plan", &fixture("faults/timeline.kbs")]);
    insta::assert_snapshot!("plan_timeline", expect_exit(&out, 0));
}

#[test]
fn the_plan_json_carries_each_runs_timeline_in_seconds() {
    let out = kafkabench(&["plan", &fixture("faults/timeline.kbs"), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&expect_exit(&out, 0)).unwrap();
    assert!(
        v["runs"][0].get("faults").is_none(),
        "no timeline, no field"
    );
    let f = &v["runs"][2]["faults"];
    assert_eq!(f[0]["at"], 15.0);
    assert_eq!(f[0]["lasts"], 15.0);
    assert_eq!(f[0]["action"]["kill"]["leader"], 0);
    assert_eq!(f[1]["action"]["pause"]["id"], 2);
    assert_eq!(f[2]["lasts"], serde_json::Value::Null);
    assert_eq!(
        f[3]["text"],
        "run \"kafka-topics --describe --topic faults-crash-2\""
    );
}

#[test]
fn scale_moves_and_stretches_the_timeline_with_the_run() {
    let out = kafkabench(&[
        "plan",
        &fixture("faults/timeline.kbs"),
        "--scale",
        "0.1",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&expect_exit(&out, 0)).unwrap();
    let f = &v["runs"][2]["faults"][0];
    assert!((f["at"].as_f64().unwrap() - 1.5).abs() < 1e-9, "{f}");
    assert!((f["lasts"].as_f64().unwrap() - 1.5).abs() < 1e-9, "{f}");
    assert_eq!(f["text"], "kill broker leader(partition 0) for 1.5s");
}

#[test]
fn fmt_keeps_a_timeline_intact_and_canonical() {
    let messy = r#"scenario "fmt" {
  topic "t" { }
  workload { duration = 1m }
  faults {
      at 15s    kill broker leader( partition 0 )   for 15s   # the busiest
    # then a pause
    at 40s pause broker 2 for 5s
    at 50s run   "echo {step}"
  }
  steps { a { } b { faults { at 1s restart broker 1 } } }
}
"#;
    let formatted = kafkabench::syntax::fmt::format(kafkabench::source::FileId(0), messy).unwrap();
    insta::assert_snapshot!("fmt_timeline", formatted);
    let again = kafkabench::syntax::fmt::format(kafkabench::source::FileId(0), &formatted).unwrap();
    assert_eq!(again, formatted, "formatting is idempotent");
    let before = kafkabench::syntax::parse(kafkabench::source::FileId(0), messy).unwrap();
    let after = kafkabench::syntax::parse(kafkabench::source::FileId(0), &formatted).unwrap();
    assert_eq!(before, after, "the same tree");
}

#[test]
fn delete_records_checks_into_a_typed_action_plans_and_formats_back() {
    let text = r#"scenario "deletes" {
  topic "t" { partitions = 2 }
  workload { duration = 10s  rate = 100/s }
  faults {
      at 2s   delete  records of   partition 1 before 500
    at 3s delete records of partition 0
  }
}
"#;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("deletes.kbs");
    std::fs::write(&f, text).unwrap();
    let mut sources = Sources::default();
    let s = kafkabench::check::load(&f, &mut sources).expect("it checks");
    let faults = &s.cells[0].spec.faults;
    assert_eq!(
        faults[0].action,
        FaultAction::DeleteRecords {
            partition: 1,
            before: Some(500)
        }
    );
    assert_eq!(faults[0].text, "delete records of partition 1 before 500");
    assert_eq!(
        faults[1].action,
        FaultAction::DeleteRecords {
            partition: 0,
            before: None
        }
    );
    let plan = expect_exit(&kafkabench(&["plan", f.to_str().unwrap()]), 0);
    assert!(
        plan.contains("at 2s delete records of partition 1 before 500\n"),
        "{plan}"
    );
    let formatted = kafkabench::syntax::fmt::format(kafkabench::source::FileId(0), text).unwrap();
    assert!(
        formatted.contains("    at 2s delete records of partition 1 before 500\n"),
        "{formatted}"
    );
    let before = kafkabench::syntax::parse(kafkabench::source::FileId(0), text).unwrap();
    let after = kafkabench::syntax::parse(kafkabench::source::FileId(0), &formatted).unwrap();
    assert_eq!(before, after, "the same tree");
}

#[test]
fn the_report_lists_every_action_and_the_fault_figures() {
    let summary = |p50: f64, p99: f64, max: f64| {
        let mut s = LatencySummary::default();
        (s.count, s.p50_ms, s.p99_ms, s.max_ms) = (10, p50, p99, max);
        s
    };
    let faults = FaultFigures {
        actions: vec![
            FaultRecord {
                action: "kill broker leader(partition 0) for 15s".into(),
                at_secs: 15.0,
                fired_secs: Some(15.004),
                target: Some("broker 2".into()),
                ended_secs: Some(30.2),
                outcome: "ok".into(),
                consumer: None,
            },
            FaultRecord {
                action: "run \"false\"".into(),
                at_secs: 20.0,
                fired_secs: Some(20.0),
                target: None,
                ended_secs: Some(20.01),
                outcome: "exit status 1: nothing to do".into(),
                consumer: None,
            },
            FaultRecord {
                action: "stop consumer 2 for 10s".into(),
                at_secs: 35.0,
                fired_secs: Some(35.0),
                target: Some("consumer 2".into()),
                ended_secs: Some(45.0),
                outcome: "ok".into(),
                consumer: Some(2),
            },
            FaultRecord {
                action: "pause broker 3 for 5s".into(),
                at_secs: 50.0,
                outcome: "not fired: the run ended first".into(),
                ..FaultRecord::default()
            },
        ],
        windows: vec![[15.004, 30.2]],
        unavailable_secs: Some(2.35),
        recovery_secs: Some(1.0),
        ack: Some(summary(3.0, 1200.0, 2100.0)),
        e2e: None,
        failed: 12,
        failed_by_kind: BTreeMap::from([("MsgTimedOut".to_string(), 12)]),
        churn: vec![
            ChurnEvent {
                event: "consumer 2 left".into(),
                at_secs: 35.0,
                stalls: 12,
                stalled_secs: 4.1,
                longest_secs: 1.9,
                redelivered: 420,
                lag_back_secs: Some(3.0),
                join: false,
            },
            ChurnEvent {
                event: "consumer 2 rejoined".into(),
                at_secs: 45.0,
                stalls: 1,
                stalled_secs: 0.5,
                longest_secs: 0.5,
                redelivered: 0,
                lag_back_secs: Some(0.0),
                join: false,
            },
        ],
    };
    let run = RunResult {
        label: "crash".into(),
        status: RunStatus::Complete,
        target_rate: Some(1000.0),
        faults: Some(faults),
        ..RunResult::default()
    };
    let mut out = Vec::new();
    kafkabench::report::table::write_results("faults", 1, &[run], &[], &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: String = text
        .lines()
        .skip_while(|l| !l.contains("faults of"))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("report_fault_lines", lines);
}
