//! `--junit FILE`: one test case per evaluated assertion, for CI systems.

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

pub fn write(
    p: &Plan,
    exec: &Execution,
    verdicts: &[Verdict],
    out: &mut dyn Write,
) -> io::Result<()> {
    let failures =
        verdicts.iter().filter(|v| !v.pass).count() + usize::from(exec.failure.is_some());
    let tests = verdicts.len() + usize::from(exec.failure.is_some());
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="kafkabench" tests="{tests}" failures="{failures}">"#
    )?;
    writeln!(
        out,
        r#"  <testsuite name="{}" tests="{tests}" failures="{failures}">"#,
        esc(&p.scenario)
    )?;
    for v in verdicts {
        let name = format!("{} [{}]", v.assertion, v.runs.join(" vs "));
        write!(
            out,
            r#"    <testcase classname="kafkabench.{}" name="{}""#,
            esc(&p.scenario),
            esc(&name)
        )?;
        if v.pass {
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
    if let Some(f) = &exec.failure {
        writeln!(
            out,
            r#"    <testcase classname="kafkabench.{}" name="run">"#,
            esc(&p.scenario)
        )?;
        writeln!(out, r#"      <error message="{}"/>"#, esc(&f.to_string()))?;
        writeln!(out, "    </testcase>")?;
    }
    writeln!(out, "  </testsuite>")?;
    writeln!(out, "</testsuites>")
}
