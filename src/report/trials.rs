//! A repeated run in words: `±3%` after a figure (half its interval's width, as a share of
//! the median), and the notes on trials that spread or stand out.

use crate::format::plural;
use crate::measure::trials::{TrialFigure, LEVEL};
use crate::measure::RunResult;

/// Trials spread more than this (robust coefficient of variation) are worth a note.
pub(crate) const SPREAD_NOTE: f64 = 0.10;

fn figure<'a>(r: &'a RunResult, metric: &str) -> Option<&'a TrialFigure> {
    r.trials
        .as_ref()?
        .figures
        .iter()
        .find(|f| f.metric == metric)
}

/// ` ±3%` for a figure of a repeated run, empty otherwise (or when its interval is degenerate).
pub(crate) fn pm(r: &RunResult, metric: &str) -> String {
    let Some(f) = figure(r, metric) else {
        return String::new();
    };
    if f.median == 0.0 || f.values.len() < 2 {
        return String::new();
    }
    let half = (f.hi - f.lo) / 2.0 / f.median.abs() * 100.0;
    if half < 0.05 {
        " ±<0.1%".into()
    } else if half < 0.5 {
        format!(" ±{half:.1}%")
    } else {
        format!(" ±{half:.0}%")
    }
}

/// What the table's figures are for repeated runs, said once above it; None without any.
pub(crate) fn header(results: &[RunResult]) -> Option<String> {
    let n = results
        .iter()
        .filter_map(|r| r.trials.as_ref().map(|t| t.results.len()))
        .max()?;
    let reaches = results
        .iter()
        .filter_map(|r| figure(r, "throughput"))
        .all(|f| f.coverage >= LEVEL);
    Some(format!(
        "{n} trials per run: counts are sums, figures medians ± half their {}% interval{}",
        LEVEL * 100.0,
        if reaches {
            String::new()
        } else {
            format!(
                " ({n} trials cover the median with {:.1}% at most)",
                results
                    .iter()
                    .filter_map(|r| figure(r, "throughput"))
                    .map(|f| f.coverage * 100.0)
                    .fold(0.0, f64::max)
            )
        }
    ))
}

/// Notes on a repeated run's trials: a headline figure spread more than [`SPREAD_NOTE`], and
/// any trial far outside the others.
pub(crate) fn notes(r: &RunResult) -> Vec<String> {
    let Some(t) = &r.trials else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for f in &t.figures {
        if let Some(s) = f.spread.filter(|s| *s > SPREAD_NOTE) {
            out.push(format!(
                "{}: {} varies {:.0}% between its {} trials (robust CV): a change smaller than that needs more trials to show",
                r.label,
                f.metric,
                s * 100.0,
                f.values.len()
            ));
        }
        if !f.outliers.is_empty() {
            let which: Vec<String> = f.outliers.iter().map(|i| (i + 1).to_string()).collect();
            out.push(format!(
                "{}: {} of trial{} {} is far from the others (outside 3 × IQR)",
                r.label,
                f.metric,
                plural(which.len()),
                which.join(", ")
            ));
        }
    }
    out
}
