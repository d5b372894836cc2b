//! Stage 7, report. Every reporter writes to any `Write`, so tests can read what a user sees.

mod capacity;
mod churn;
pub(crate) mod compaction;
pub(crate) mod compare;
mod faults;
pub(crate) mod history;
pub(crate) mod html;
pub mod json;
pub(crate) mod junit;
pub(crate) mod openmetrics;
pub(crate) mod places;
mod plan_clients;
mod plan_text;
pub(crate) mod share;
pub mod table;
mod trials;
pub mod verdict;

pub use plan_text::{plan_text, plan_text_with_defaults, workload_text};

use std::io::{self, Write};

use crate::assert::Verdict;

/// PASS/FAIL per assertion: one line when every run it covers passed, and each failing run
/// spelled out with its measured value and bound.
pub fn verdicts_text(v: &[Verdict], out: &mut dyn Write) -> io::Result<()> {
    if v.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let passed = v.iter().filter(|x| x.pass).count();
    writeln!(out, "expect: {passed} of {} checks held", v.len())?;
    let mut order: Vec<&str> = Vec::new();
    for x in v {
        if !order.contains(&x.assertion.as_str()) {
            order.push(&x.assertion);
        }
    }
    for text in order {
        let group: Vec<&Verdict> = v.iter().filter(|x| x.assertion == text).collect();
        let failed: Vec<&&Verdict> = group.iter().filter(|x| !x.pass).collect();
        if failed.is_empty() {
            // A comparison between runs shows both sides: its bound was measured too.
            let shown: Vec<String> = group
                .iter()
                .map(|x| match x.runs.len() {
                    1 => verdict::measured(x),
                    _ => format!("{} {}", verdict::measured(x), verdict::bound(x)),
                })
                .collect();
            let measured = if shown.len() > 4 {
                format!("{} … {}", shown[..2].join(", "), shown[shown.len() - 1])
            } else {
                shown.join(", ")
            };
            let runs = if group.len() == 1 {
                format!("[{}]", verdict::runs(group[0]))
            } else if group.iter().all(|x| x.broker.is_some()) {
                format!("{} brokers", group.len())
            } else {
                format!("{} runs", group.len())
            };
            writeln!(out, "  PASS  {text}  ({runs}; measured {measured})")?;
        } else {
            let what = if group.iter().all(|x| x.broker.is_some()) {
                "brokers"
            } else {
                "runs"
            };
            writeln!(
                out,
                "  FAIL  {text}  ({} of {} {what} failed)",
                failed.len(),
                group.len()
            )?;
            for x in failed {
                writeln!(
                    out,
                    "        [{}] {}",
                    verdict::runs(x),
                    verdict::detail(x).unwrap_or_default()
                )?;
            }
        }
    }
    Ok(())
}
