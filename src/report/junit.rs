//! `--junit FILE`: one test case per evaluated assertion, for CI systems; a suite of files is
//! one JUnit file with a `<testsuite>` per scenario.
//!
//! An interrupted invocation is never a pass: it adds an `error` test case, and a verdict on a
//! run that was cut short is `skipped` (its figures are partial), with the reason. So is an
//! assertion instance that reads a run `--only` left out.

use std::io::{self, Write};

use crate::assert::Verdict;
use crate::plan::Plan;
use crate::run::Execution;

use super::verdict;

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

/// One scenario of a suite: a `<testsuite>` of its own.
pub(crate) struct Suite<'a> {
    pub plan: &'a Plan,
    pub exec: &'a Execution,
    pub verdicts: &'a [Verdict],
    /// Assertion instances not judged because `--only` left out a run they read: the
    /// assertion and the runs (labels), and why.
    pub skipped: &'a [Skipped],
}

/// An assertion instance that was not judged, and why.
#[derive(Clone, Debug)]
pub(crate) struct Skipped {
    pub assertion: String,
    pub runs: Vec<String>,
    pub reason: String,
}

/// A single scenario's JUnit file.
pub(crate) fn write(
    p: &Plan,
    exec: &Execution,
    verdicts: &[Verdict],
    out: &mut dyn Write,
) -> io::Result<()> {
    write_suites(
        &[Suite {
            plan: p,
            exec,
            verdicts,
            skipped: &[],
        }],
        out,
    )
}

/// Counts of one suite, or of all of them.
#[derive(Default)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

impl Counts {
    fn attrs(&self) -> String {
        format!(
            r#"tests="{}" failures="{}" errors="{}" skipped="{}""#,
            self.tests, self.failures, self.errors, self.skipped
        )
    }
}

/// One JUnit file for a suite: a `<testsuite>` per scenario, a `<testcase>` per assertion
/// instance.
pub(crate) fn write_suites(suites: &[Suite], out: &mut dyn Write) -> io::Result<()> {
    let mut body = Vec::new();
    let mut all = Counts::default();
    for s in suites {
        let c = suite(s, &mut body)?;
        all.tests += c.tests;
        all.failures += c.failures;
        all.errors += c.errors;
        all.skipped += c.skipped;
    }
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(out, r#"<testsuites name="kafkabench" {}>"#, all.attrs())?;
    out.write_all(&body)?;
    writeln!(out, "</testsuites>")
}

fn suite(s: &Suite, out: &mut dyn Write) -> io::Result<Counts> {
    let (p, exec, verdicts) = (s.plan, s.exec, s.verdicts);
    let cut = exec.cut_short();
    let skipped_because = |v: &Verdict| {
        v.runs
            .iter()
            .find(|r| cut.contains(&r.index))
            .map(|r| format!("run `{}` was cut short: its figures are partial", r.label))
    };
    let error = run_error(exec);
    let skipped = verdicts
        .iter()
        .filter(|v| skipped_because(v).is_some())
        .count()
        + s.skipped.len();
    let failures = verdicts
        .iter()
        .filter(|v| !v.pass && skipped_because(v).is_none())
        .count();
    let errors = usize::from(error.is_some());
    let counts = Counts {
        tests: verdicts.len() + s.skipped.len() + errors,
        failures,
        errors,
        skipped,
    };
    let class = esc(&p.scenario);
    writeln!(out, r#"  <testsuite name="{class}" {}>"#, counts.attrs())?;
    for v in verdicts {
        let name = format!("{} [{}]", v.assertion, verdict::runs(v));
        write!(
            out,
            r#"    <testcase classname="kafkabench.{class}" name="{}""#,
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
            let msg = verdict::detail(v).unwrap_or_default();
            let (measured, bound) = (verdict::measured(v), verdict::bound(v));
            writeln!(
                out,
                r#"      <failure message="{}">{}</failure>"#,
                esc(&msg),
                esc(&format!("measured {measured} bound {bound}"))
            )?;
            writeln!(out, "    </testcase>")?;
        }
    }
    for x in s.skipped {
        let name = format!("{} [{}]", x.assertion, x.runs.join(" vs "));
        writeln!(
            out,
            r#"    <testcase classname="kafkabench.{class}" name="{}">"#,
            esc(&name)
        )?;
        writeln!(out, r#"      <skipped message="{}"/>"#, esc(&x.reason))?;
        writeln!(out, "    </testcase>")?;
    }
    if let Some(e) = error {
        writeln!(
            out,
            r#"    <testcase classname="kafkabench.{class}" name="run">"#
        )?;
        writeln!(out, r#"      <error message="{}"/>"#, esc(&e))?;
        writeln!(out, "    </testcase>")?;
    }
    writeln!(out, "  </testsuite>")?;
    Ok(counts)
}
