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
            let unreachable = !r.unavailable.is_empty();
            writeln!(
                out,
                "    {}",
                figures_line(f, r.target_rate.is_some(), unreachable)
            )?;
        }
    }
    Ok(())
}

/// `at 15s kill broker leader(partition 0) for 10s → broker 2: fired 15.01s, ended 25.3s, ok`.
/// A command acts on whatever it acts on: the broker it was handed (`KB_BROKER_ID`, partition
/// 0's leader) is said as that, not as its target.
fn action_line(a: &FaultRecord) -> String {
    let command = a.action.starts_with("run ");
    let target = match a.target.as_deref() {
        Some(t) if command => t
            .strip_prefix("broker ")
            .map(|id| format!(" (KB_BROKER_ID={id})"))
            .unwrap_or_default(),
        Some(t) => format!(" → {t}"),
        None => String::new(),
    };
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

/// `unavailable 2.1s, recovery 1s; records due in the fault windows (2 000): ack p50 … p99 …,
/// 12 failed (…)`. Without a period no broker answered, `unavailable.time` is only the longest
/// stretch between acknowledgements, and says so.
fn figures_line(f: &FaultFigures, paced: bool, unreachable: bool) -> String {
    let silence = f.unavailable_secs.map_or("-".to_string(), secs);
    let mut parts = vec![if unreachable || f.unavailable_secs.is_none() {
        format!("unavailable {silence}")
    } else {
        format!("unavailable {silence} (the longest stretch without an acknowledgement: no broker was unreachable)")
    }];
    if paced {
        parts.push(match (f.recovery_secs, f.windows.is_empty()) {
            (Some(r), _) => format!("recovery {}", secs(r)),
            (None, true) => "recovery - (no fault window)".to_string(),
            (None, false) => "recovery - (not back at the target rate before the run ended)".into(),
        });
    }
    let mut within = Vec::new();
    if let Some(l) = &f.ack {
        within.push(format!("ack {} ({} records)", latency(l), l.count));
    }
    if let Some(l) = &f.e2e {
        within.push(format!("e2e {} ({} read)", latency(l), l.count));
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
        "{}; the records due in the fault windows: {}",
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
