//! Progress in a CI log: with stderr a pipe, `kafkabench run` writes plain lines (no bars, no
//! cursor movement) at each run's start and end and every few seconds, each with the time left.

use crate::common::{self, expect_exit, fixture, kafkabench, text};

#[test]
fn a_ci_log_gets_plain_progress_lines_at_start_end_and_every_few_seconds() {
    common::require_broker();
    let out = kafkabench(&["run", &fixture("run/progress_two_steps.kbs")]);
    let stdout = expect_exit(&out, 0);
    assert!(
        stdout.contains("slow"),
        "the table is unchanged on stdout: {stdout}"
    );
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains('\r') && !stderr.contains('\x1b'),
        "no redraws in a log: {stderr:?}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines.iter().all(|l| l.starts_with("progress: run ")),
        "{stderr}"
    );
    let of = |run: &str, phase: &str| -> Vec<&str> {
        let head = format!("progress: {run} {phase}: ");
        lines
            .iter()
            .copied()
            .filter(|l| l.starts_with(&head))
            .collect()
    };
    // The first run lasts 6 s: its start line, at least one periodic line, its end.
    let slow = of("run 1 of 2 (slow)", "producing");
    assert!(slow.len() >= 2, "{stderr}");
    // The first line comes as the run starts: how many records a busy machine had
    // acknowledged by then (0, or the first few) is not the point, its form is.
    let start = slow[0]
        .strip_prefix("progress: run 1 of 2 (slow) producing: ")
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        start.contains(" of 3000 records, ")
            && start.contains(" msg/s, ")
            && start.contains("; about ")
            && start.ends_with(" s left"),
        "{stderr}"
    );
    let periodic = slow[1];
    assert!(
        periodic.contains(" of 3000 records, ") && periodic.contains(" msg/s, "),
        "{periodic}"
    );
    let done = of("run 1 of 2 (slow)", "done");
    assert_eq!(done.len(), 1, "{stderr}");
    assert!(done[0].contains("done: 3000 of 3000 records, "), "{stderr}");
    assert!(done[0].contains(" s left"), "a run remains: {stderr}");
    let last = of("run 2 of 2 (fast)", "done");
    assert_eq!(last.len(), 1, "{stderr}");
    assert!(
        !last[0].contains("left"),
        "nothing left after the last run: {stderr}"
    );
}

#[test]
fn quiet_means_no_progress_at_all() {
    common::require_broker();
    let out = kafkabench(&["run", &fixture("run/progress_two_steps.kbs"), "--quiet"]);
    expect_exit(&out, 0);
    assert_eq!(text(&out.stderr), "");
}
