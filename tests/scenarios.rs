//! Every scenario under scenarios/ runs against the real broker at CI scale and its assertions
//! (the seed article's finding) must hold. KB_SCENARIO_SCALE sets the scale (default 0.1);
//! `kafkabench run FILE` without --scale is the full experiment.
//!
//! One `kafkabench test scenarios/` as CI runs it: the suite exits 0 only when every file does
//! (its exit code is the most severe of the files'), and the JUnit file names every assertion
//! instance that did not pass.

mod common;

use common::{kafkabench, text};

#[test]
fn every_scenario_reproduces_its_finding_at_ci_scale() {
    common::require_broker();
    let scale = std::env::var("KB_SCENARIO_SCALE").unwrap_or_else(|_| "0.1".into());
    let dir = tempfile::tempdir().expect("tempdir");
    let junit = dir.path().join("junit.xml");
    let started = std::time::Instant::now();
    let out = kafkabench(&[
        "test",
        "scenarios/",
        "--scale",
        &scale,
        "--quiet",
        "--junit",
        junit.to_str().expect("a UTF-8 temp path"),
    ]);
    let stdout = text(&out.stdout);
    eprintln!(
        "exit {:?} in {:.1}s\n{stdout}",
        out.status.code(),
        started.elapsed().as_secs_f64()
    );
    let shipped = std::fs::read_dir(common::repo().join("scenarios"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|e| e == "kbs")
        })
        .count();
    assert_eq!(
        stdout.matches("\n== scenarios/").count() + usize::from(stdout.starts_with("== ")),
        shipped,
        "every shipped scenario ran:\n{stdout}"
    );
    let junit = std::fs::read_to_string(&junit).unwrap_or_default();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}\n{junit}",
        text(&out.stderr)
    );
    assert!(stdout.contains(" passed, 0 failed, 0 skipped"), "{stdout}");
}
