//! `--junit FILE`: one test case per evaluated assertion, for CI systems.
//!
//! An interrupted invocation is never a pass: it adds an `error` test case, and a verdict on a
//! run that was cut short is `skipped` (its figures are partial), with the reason.

use std::io::{self, Write};

use crate::assert::Verdict;
use crate::plan::Plan;
use crate::run::Execution;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What the invocation's own test case (`run`) reports, when it did not simply finish.
fn run_error(exec: &Execution) -> Option<String> {
    match (&exec.failure, exec.interrupted) {
        (Some(f), _) => Some(f.to_string()),
        (None, true) => Some(
            "interrupted by a signal: the runs after the interrupt did not execute, and the \
             figures of the one it cut short are partial"
                .into(),
        ),
        (None, false) => None,
    }
}

pub fn write(
    p: &Plan,
    exec: &Execution,
    verdicts: &[Verdict],
    out: &mut dyn Write,
) -> io::Result<()> {
    let cut: Vec<&str> = exec
        .results
        .iter()
        .filter(|r| !r.complete)
        .map(|r| r.label.as_str())
        .collect();
    let skipped_because = |v: &Verdict| {
        v.runs
            .iter()
            .find(|l| cut.contains(&l.as_str()))
            .map(|l| format!("run `{l}` was cut short: its figures are partial"))
    };
    let error = run_error(exec);
    let skipped = verdicts
        .iter()
        .filter(|v| skipped_because(v).is_some())
        .count();
    let failures = verdicts
        .iter()
        .filter(|v| !v.pass && skipped_because(v).is_none())
        .count();
    let errors = usize::from(error.is_some());
    let tests = verdicts.len() + errors;
    let counts =
        format!(r#"tests="{tests}" failures="{failures}" errors="{errors}" skipped="{skipped}""#);
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(out, r#"<testsuites name="kafkabench" {counts}>"#)?;
    writeln!(out, r#"  <testsuite name="{}" {counts}>"#, esc(&p.scenario))?;
    for v in verdicts {
        let name = format!("{} [{}]", v.assertion, v.runs.join(" vs "));
        write!(
            out,
            r#"    <testcase classname="kafkabench.{}" name="{}""#,
            esc(&p.scenario),
            esc(&name)
        )?;
        if let Some(reason) = skipped_because(v) {
            writeln!(out, ">")?;
            writeln!(out, r#"      <skipped message="{}"/>"#, esc(&reason))?;
            writeln!(out, "    </testcase>")?;
        } else if v.pass {
            writeln!(out, "/>")?;
        } else {
            writeln!(out, ">")?;
            let msg = v.detail.clone().unwrap_or_default();
            writeln!(
                out,
                r#"      <failure message="{}">{}</failure>"#,
                esc(&msg),
                esc(&format!("measured {} bound {}", v.measured, v.bound))
            )?;
            writeln!(out, "    </testcase>")?;
        }
    }
    if let Some(e) = error {
        writeln!(
            out,
            r#"    <testcase classname="kafkabench.{}" name="run">"#,
            esc(&p.scenario)
        )?;
        writeln!(out, r#"      <error message="{}"/>"#, esc(&e))?;
        writeln!(out, "    </testcase>")?;
    }
    writeln!(out, "  </testsuite>")?;
    writeln!(out, "</testsuites>")
}
