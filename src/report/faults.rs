//! The fault lines under the table: every action of a run's timeline with its time, target
//! and outcome, then the figures that describe the faults.

use std::io::{self, Write};

use crate::format::human_duration;
use crate::measure::{FaultFigures, FaultRecord, LatencySummary, RunResult};

/// One block per run that had a fault timeline; nothing for runs without one.
pub(super) fn write(results: &[RunResult], out: &mut dyn Write) -> io::Result<()> {
    for r in results {
        if let Some(f) = &r.faults {
            // A repeated run's timeline is its shown trial's.
            let trial = r.trials.as_ref().map_or(String::new(), |t| {
                let n = t.results.len();
                format!(" (trial {} of {n}, the median by throughput)", t.shown + 1)
            });
            writeln!(out, "  faults of {}{trial}:", r.label)?;
            for a in &f.actions {
                writeln!(out, "    {}", action_line(a))?;
            }
            for c in super::churn::lines(r, &f.churn) {
                writeln!(out, "    {c}")?;
            }
            writeln!(out, "    {}", figures_line(f, r.target_rate.is_some()))?;
        }
    }
    Ok(())
}

/// `at 15s kill broker leader(partition 0) for 10s → broker 2: fired 15.01s, ended 25.3s, ok`.
fn action_line(a: &FaultRecord) -> String {
    let target = a
        .target
        .as_ref()
        .map(|t| format!(" → {t}"))
        .unwrap_or_default();
    let head = format!("at {} {}{target}", secs(a.at_secs), a.action);
    let outcome = if a.outcome.is_empty() {
        "no outcome recorded"
    } else {
        &a.outcome
    };
    match (a.fired_secs, a.ended_secs) {
        // The outcome says why (the run ended first, it was interrupted).
        (None, _) if a.outcome.is_empty() => format!("{head}: not fired"),
        (None, _) => format!("{head}: {outcome}"),
        (Some(f), None) => format!("{head}: fired {}, {outcome}", fired(f)),
        (Some(f), Some(e)) => format!("{head}: fired {}, ended {}, {outcome}", fired(f), secs(e)),
    }
}

/// `unavailable 2.1s, recovery 1s; within the windows: ack p50 … p99 …, 12 failed (…)`.
fn figures_line(f: &FaultFigures, paced: bool) -> String {
    let mut parts = vec![format!(
        "unavailable {}",
        f.unavailable_secs.map_or("-".to_string(), secs)
    )];
    if paced {
        parts.push(match (f.recovery_secs, f.windows.is_empty()) {
            (Some(r), _) => format!("recovery {}", secs(r)),
            (None, true) => "recovery - (no fault window)".to_string(),
            (None, false) => "recovery - (not back at the target rate before the run ended)".into(),
        });
    }
    let mut within = Vec::new();
    if let Some(l) = &f.ack {
        within.push(format!("ack {}", latency(l)));
    }
    if let Some(l) = &f.e2e {
        within.push(format!("e2e {}", latency(l)));
    }
    let kinds: Vec<String> = f
        .failed_by_kind
        .iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect();
    within.push(if kinds.is_empty() {
        format!("{} failed", f.failed)
    } else {
        format!("{} failed ({})", f.failed, kinds.join(", "))
    });
    format!(
        "{}; within the fault windows: {}",
        parts.join(", "),
        within.join(", ")
    )
}

fn latency(l: &LatencySummary) -> String {
    let ms = |x: f64| human_duration(x / 1e3);
    format!(
        "p50 {} p99 {} max {}",
        ms(l.p50_ms),
        ms(l.p99_ms),
        ms(l.max_ms)
    )
}

/// When an action fired: a consumer stopped from the first instant is stopped before the
/// clock, so that it reads no measured record.
fn fired(s: f64) -> String {
    if s < 0.0 {
        format!("{} before the clock", secs(-s))
    } else {
        secs(s)
    }
}

fn secs(s: f64) -> String {
    if s == 0.0 {
        "0s".into()
    } else {
        human_duration(s)
    }
}
