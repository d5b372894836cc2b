//! Several scenario files as one test run (`kafkabench test DIR`, `kafkabench run A B`), and
//! `--only`. The refusals need no broker; the runs use the local one.

use std::path::Path;

use crate::common::{self, expect_exit, fixture, kafkabench, text};

fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

#[test]
fn every_file_is_checked_before_anything_runs_and_all_problems_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let bad1 = write(
        dir.path(),
        "bad1.kbs",
        "scenario \"a\" {\n  topic \"t\" {}\n  workload { mesages = 1 }\n}\n",
    );
    let bad2 = write(
        dir.path(),
        "bad2.kbs",
        "scenario \"b\" {\n  topic \"t\" {}\n  workload { messages = 1  rate = fast }\n}\n",
    );
    let good = fixture("suite/a_pass.kbs");
    // A cluster nobody listens on: were anything run, it would fail with 3, not 2.
    let out = kafkabench(&["run", &good, &bad1, &bad2, "--bootstrap", "127.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "nothing ran");
    let err = text(&out.stderr);
    assert!(
        err.contains("bad1.kbs") && err.contains("bad2.kbs"),
        "{err}"
    );
    assert!(err.contains("did you mean `messages`?"), "{err}");
}

#[test]
fn a_directory_without_scenarios_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = kafkabench(&["test", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("has no .kbs files"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn an_only_value_no_run_has_is_refused_with_what_exists() {
    for (only, needle) in [
        ("codec=zstdd", "did you mean `zstd`?"),
        (
            "codec=brotli",
            "the values of `codec` are: `none`, `lz4`, `zstd`",
        ),
        ("codex=zstd", "did you mean `codec`?"),
        ("step=baseline", "the variables are: `linger`, `codec`"),
    ] {
        let out = kafkabench(&["run", "scenarios/promo_friday.kbs", "--only", only]);
        assert_eq!(out.status.code(), Some(2), "--only {only}");
        let err = text(&out.stderr);
        assert!(err.contains(needle), "--only {only}: {err}");
    }
    let out = kafkabench(&["run", "scenarios/promo_friday.kbs", "--only", "zstd"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is not `var=value`"));
}

#[test]
fn several_files_with_json_need_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "taken.json", "{}");
    let out = kafkabench(&["test", "tests/fixtures/suite", "--json", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("names a directory"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_suite_prints_a_table_per_file_a_summary_one_junit_and_exits_1() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let json = dir.path().join("results");
    let out = kafkabench(&[
        "test",
        "tests/fixtures/suite",
        "--quiet",
        "--junit",
        junit.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let s = expect_exit(&out, 1);
    assert!(s.contains("== tests/fixtures/suite/a_pass.kbs =="), "{s}");
    assert!(s.contains("== tests/fixtures/suite/b_fail.kbs =="), "{s}");
    assert_eq!(
        s.matches("scenario suite_").count(),
        2,
        "one table per file: {s}"
    );
    assert!(
        s.ends_with("\n4 passed, 1 failed, 0 skipped (2 files)\n"),
        "{s}"
    );
    let x = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(x.matches("<testsuite ").count(), 2, "{x}");
    assert!(
        x.contains(r#"<testsuites name="kafkabench" tests="5" failures="1""#),
        "{x}"
    );
    assert!(
        x.contains(r#"<testsuite name="suite_fail" tests="2" failures="1""#),
        "{x}"
    );
    for f in ["a_pass.json", "b_fail.json"] {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(json.join(f)).unwrap()).unwrap();
        assert_eq!(v["schema_version"], 6, "{f}");
    }
}

#[test]
fn only_runs_the_selected_runs_and_skips_assertions_on_the_others() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let out = kafkabench(&[
        "run",
        &fixture("suite/a_pass.kbs"),
        "--quiet",
        "--only",
        "codec=zstd",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let s = expect_exit(&out, 0);
    assert!(s.contains("--only: 1 of 2 runs selected"), "{s}");
    assert!(s.contains("scenario suite_pass (1 of 2 runs)"), "{s}");
    assert!(
        s.contains(" codec=zstd |") && !s.contains(" codec=none |"),
        "{s}"
    );
    assert!(s.contains("PASS  failed == 0  ([codec=zstd]"), "{s}");
    assert!(
        s.contains("SKIP  failed == 0  (1 check: --only left out a run it reads)"),
        "{s}"
    );
    assert!(
        s.contains("SKIP  acked[codec=zstd] == acked[codec=none]  (1 check: --only left out a run it reads)"),
        "{s}"
    );
    assert!(
        s.ends_with("\n1 passed, 0 failed, 2 skipped (1 file)\n"),
        "{s}"
    );
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(
        x.contains(r#"tests="3" failures="0" errors="0" skipped="2""#),
        "{x}"
    );
    assert!(x.contains("--only left out run `codec=none`"), "{x}");
}

#[test]
fn only_on_a_variable_one_file_lacks_leaves_that_file_out() {
    common::require_broker();
    let out = kafkabench(&[
        "test",
        "tests/fixtures/suite",
        "--quiet",
        "--only",
        "codec=none",
    ]);
    let s = expect_exit(&out, 0);
    assert!(s.contains("--only: 0 of 1 run selected"), "{s}");
    assert!(s.contains("SKIP  ack.p99 < 1ns  (1 check"), "{s}");
    assert!(
        !s.contains("scenario suite_fail"),
        "no table for a file without runs: {s}"
    );
    assert!(
        s.ends_with("\n1 passed, 0 failed, 4 skipped (2 files)\n"),
        "{s}"
    );
}

#[test]
fn a_failed_run_in_one_file_outranks_a_failed_assertion_in_another_and_the_suite_goes_on() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let out = kafkabench(&[
        "run",
        &fixture("run/nothing_delivered.kbs"),
        &fixture("suite/b_fail.kbs"),
        "--quiet",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let s = expect_exit(&out, 3);
    assert!(
        s.contains("scenario suite_fail"),
        "the next file still ran: {s}"
    );
    assert!(s.contains("FAIL  ack.p99 < 1ns"), "{s}");
    assert!(s.ends_with("(2 files, 1 with a failed run)\n"), "{s}");
    assert!(text(&out.stderr).contains("nothing was delivered"));
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(
        x.contains(r#"errors="1""#) && x.contains(r#"failures="1""#),
        "{x}"
    );
}
