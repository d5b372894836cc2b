//! A repeated run in words: `±3%` after a figure (half its interval's width, as a share of
//! the median), and the notes on trials that spread or stand out.

use crate::format::plural;
use crate::measure::sequential::{AutoOutcome, Stop};
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
    if let Some(a) = results
        .iter()
        .find_map(|r| r.trials.as_ref().and_then(|t| t.auto.as_ref()))
    {
        return Some(format!(
            "repeat = auto(±{}, max {}): trials per run until every judged figure's interval is \
             within ±{} of its median; counts of records are sums, other figures medians ± half their {}% \
             interval ({} at each of {} looks)",
            percent(a.within),
            a.max,
            percent(a.within),
            a.level * 100.0,
            percent(a.look_level),
            a.looks.len()
        ));
    }
    let n = results
        .iter()
        .filter_map(|r| r.trials.as_ref().map(|t| t.results.len()))
        .max()?;
    let reaches = results
        .iter()
        .filter_map(|r| figure(r, "throughput"))
        .all(|f| f.coverage >= LEVEL);
    Some(format!(
        "{n} trials per run: counts of records are sums, other figures medians ± half their {}% interval{}",
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
    if let Some(a) = &t.auto {
        out.push(auto_note(&r.label, t.results.len(), a));
    }
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

/// `5%`, `2.5%`, `99%`: a share as the scenario writes it.
fn percent(x: f64) -> String {
    let p = x * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// An auto-repeated run: how many trials ran, the interval they reached and why they stopped.
pub(crate) fn auto_note(label: &str, trials: usize, a: &AutoOutcome) -> String {
    let reached = match a.reached {
        Some(w) if w.is_finite() => format!("±{:.1}%", w * 100.0),
        Some(_) => "no finite interval".into(),
        None => "no look yet".into(),
    };
    let why = match a.stop {
        Stop::Reached => format!("reached ±{}", percent(a.within)),
        Stop::Max => format!("max {} trials", a.max),
        Stop::Cut => "cut short".into(),
    };
    format!(
        "{label}: {trials} trials, {} {reached} ({why})",
        a.figures.join(", ")
    )
}
