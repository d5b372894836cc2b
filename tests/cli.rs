//! The binary as a user runs it: check and plan, exit codes, bad files.

mod common;

use std::time::{Duration, Instant};

use common::{fixture, kafkabench, text};

#[test]
fn every_shipped_scenario_checks_clean() {
    let mut files: Vec<String> = std::fs::read_dir(common::repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "kbs"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut args = vec!["check"];
    args.extend(files.iter().map(|s| s.as_str()));
    let out = kafkabench(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).matches(": ok").count(), files.len());
}

#[test]
fn five_mistakes_exit_2_with_five_problems() {
    let out = kafkabench(&["check", &fixture("invalid/five_mistakes.kbs")]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("5 problems found"), "{err}");
    assert!(
        err.contains("five_mistakes.kbs:8:25"),
        "file, line and column: {err}"
    );
}

#[test]
fn json_diagnostics_are_the_same_data() {
    let out = kafkabench(&[
        "check",
        "--format",
        "json",
        &fixture("invalid/five_mistakes.kbs"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let d = &v["files"][0]["diagnostics"];
    assert_eq!(d.as_array().unwrap().len(), 5);
    assert_eq!(d[0]["code"], "kb::variable");
    assert_eq!(d[0]["line"], 8);
    assert_eq!(d[0]["help"], "did you mean `linger`?");
}

#[test]
fn plan_lists_the_nine_promo_cells_with_settings() {
    let out = kafkabench(&["plan", "scenarios/promo_friday.kbs"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("9 runs"), "{s}");
    for l in ["0ms", "5ms", "50ms"] {
        for c in ["none", "lz4", "zstd"] {
            assert!(
                s.contains(&format!("linger={l} codec={c}")),
                "missing cell {l}/{c}:\n{s}"
            );
        }
    }
    assert!(
        s.contains("linger.ms=50 compression.type=zstd batch.size=1048576"),
        "{s}"
    );
    let y = kafkabench(&["plan", "--format", "yaml", "scenarios/promo_friday.kbs"]);
    assert_eq!(y.status.code(), Some(0));
    assert!(text(&y.stdout).contains("scenario: promo_friday"));
}

#[test]
fn scale_shrinks_counts_not_rates() {
    let out = kafkabench(&["plan", "--scale", "0.01", "scenarios/promo_friday.kbs"]);
    assert!(
        text(&out.stdout).contains("1000 messages"),
        "{}",
        text(&out.stdout)
    );
}

fn quick_failure(args: &[&str], needle: &str) {
    let t = Instant::now();
    let out = kafkabench(args);
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = text(&out.stderr);
    assert!(err.contains(needle), "{args:?}: {err}");
}

#[test]
fn bad_files_fail_fast_and_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.kbs");
    std::fs::write(&empty, "").unwrap();
    let binary = dir.path().join("bin.kbs");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x80]).unwrap();
    let garbage = dir.path().join("garbage.kbs");
    let mut rng = kafkabench::random::Rng::new(1);
    let junk: String = (0..10_000_000)
        .map(|_| (b' ' + (rng.next_u64() % 94) as u8) as char)
        .collect();
    std::fs::write(&garbage, junk).unwrap();

    quick_failure(&["check", "tests/fixtures/nope.kbs"], "no such file");
    quick_failure(&["check", empty.to_str().unwrap()], "expected");
    quick_failure(&["check", binary.to_str().unwrap()], "not UTF-8");
    quick_failure(&["check", garbage.to_str().unwrap()], "unexpected");
}

#[test]
fn help_documents_exit_codes() {
    let out = kafkabench(&["--help"]);
    let s = text(&out.stdout);
    assert!(s.contains("Exit codes") && s.contains("130"), "{s}");
    let run = text(&kafkabench(&["run", "--help"]).stdout);
    assert!(
        run.contains("--scale") && run.contains("--json") && run.contains("--junit"),
        "{run}"
    );
}
