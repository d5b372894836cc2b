//! The comparison in words: a header per side, the table of changes (each called better,
//! worse, negligible or no change within noise), and every bound exceeded.

use std::io::{self, Write};

use super::{better, bound, noise, Better, Breach, Comparison, Figure, NOISE_PCT};
use crate::format::plural;
use crate::report::json::ResultFile;

/// Where the compared files came from, for the header.
pub(crate) struct Sides<'a> {
    pub baseline: (&'a str, &'a ResultFile),
    pub current: (&'a str, &'a ResultFile),
}

pub(super) const GREEN: &str = "\x1b[32m";
pub(super) const RED: &str = "\x1b[31m";
pub(super) const BOLD_RED: &str = "\x1b[1;31m";
pub(super) const RESET: &str = "\x1b[0m";

/// Writes the comparison: a header per side, the table of changes, runs found on one side
/// only, and each bound exceeded with the run, the metric, baseline → current and by how much.
pub(crate) fn write(
    c: &Comparison,
    sides: &Sides,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    for (role, (path, f)) in [("baseline", sides.baseline), ("current ", sides.current)] {
        writeln!(out, "{role} {path}: {}", describe(f))?;
    }
    for n in &c.notes {
        writeln!(out, "note: {n}")?;
    }
    writeln!(out)?;
    if c.runs.is_empty() {
        writeln!(
            out,
            "no run is found in both files (runs are matched by label)"
        )?;
    } else {
        write_table(c, color, out)?;
    }
    for (labels, side, other) in [
        (&c.only_baseline, "baseline", "current"),
        (&c.only_current, "current", "baseline"),
    ] {
        for l in labels {
            writeln!(
                out,
                "only in {side}: run `{l}` (no run of that label in the {other} file)"
            )?;
        }
    }
    for u in &c.unchecked {
        writeln!(out, "note: {u}")?;
    }
    for w in &c.within_noise {
        writeln!(out, "within noise: {w}")?;
    }
    for br in &c.breaches {
        let (on, off) = if color { (BOLD_RED, RESET) } else { ("", "") };
        writeln!(out, "{on}FAIL{off}  {}", breach_text(br))?;
    }
    let runs = format!("{} run{} compared", c.runs.len(), plural(c.runs.len()));
    let verdict = match (c.checks, c.breaches.len()) {
        (0, _) => String::new(),
        (n, 0) => format!("; every bound held ({n} check{})", plural(n)),
        (n, k) => format!("; {k} of {n} bound check{} failed", plural(n)),
    };
    writeln!(out, "compare: {runs}{verdict}")
}

/// `scenario promo (run 1a2b3c, 2026-11-30T12:00:00Z, kafkabench 0.1.0), 9 runs`
fn describe(f: &ResultFile) -> String {
    let mut about = vec![format!("run {}", f.run_id)];
    if let Some(t) = &f.started_at {
        about.push(t.clone());
    }
    about.push(format!("kafkabench {}", f.kafkabench_version));
    let cut = if f.interrupted { ", interrupted" } else { "" };
    format!(
        "scenario {} ({}), {} run{}{cut}",
        f.scenario,
        about.join(", "),
        f.runs.len(),
        plural(f.runs.len())
    )
}

/// `ack.p50 rose 58.3% (1.2ms → 1.9ms), more than the +50% allowed by ack.p50:+50%`
pub(crate) fn breach_text(br: &Breach) -> String {
    let b = &br.bound;
    let verb = if br.change >= 0.0 { "rose" } else { "fell" };
    let by = if b.percent {
        format!("{}%", shown_pct(br.change.abs()))
    } else {
        format!("by {}", bound::shown_amount(b.metric, br.change.abs()))
    };
    let allowed = if b.percent {
        format!("{}%", bound::trim(b.amount))
    } else {
        bound::shown_amount(b.metric, b.amount)
    };
    format!(
        "run `{}`: {} {verb} {by} ({} → {}), more than the {allowed} allowed by `{}`",
        br.label,
        br.name,
        bound::shown_amount(b.metric, br.baseline),
        bound::shown_amount(b.metric, br.current),
        b.text
    )
}

fn shown_pct(p: f64) -> String {
    if p.is_infinite() {
        "∞".into()
    } else {
        format!("{p:.1}")
    }
}

/// How one figure moved: the change column's text and its colour.
fn change_cells(f: &Figure, alpha: f64) -> (String, String, Option<&'static str>) {
    let (Some(b), Some(cur)) = (f.baseline, f.current) else {
        return ("-".into(), String::new(), None);
    };
    let pct = bound::percent_change(b, cur);
    let change = if b == cur {
        "0%".to_string()
    } else if b == 0.0 {
        let sign = if cur > b { '+' } else { '-' };
        format!("{sign}{}", bound::shown_amount(f.metric, (cur - b).abs()))
    } else if pct.abs() < 0.1 {
        format!("{pct:+.2}%")
    } else {
        format!("{pct:+.1}%")
    };
    if let Some(n) = &f.noise {
        return noise_cells(f, n, change, alpha);
    }
    let direction = match better(f.metric) {
        _ if pct.abs() < NOISE_PCT => None,
        Better::Neither => None,
        Better::Higher => Some(cur > b),
        Better::Lower => Some(cur < b),
    };
    let (word, colour) = match (&f.breached, direction) {
        (Some(br), _) => (
            format!("worse, past {}", br.bound.shown_limit()),
            Some(BOLD_RED),
        ),
        (None, Some(true)) => ("better".into(), Some(GREEN)),
        (None, Some(false)) => ("worse".into(), Some(RED)),
        (None, None) => (String::new(), None),
    };
    (change, word, colour)
}

/// A figure with trials on both sides: the estimated change with its interval, and the
/// verdict of the test — worse, better, or no change within the noise.
fn noise_cells(
    f: &Figure,
    n: &crate::measure::stats::Change,
    plain: String,
    alpha: f64,
) -> (String, String, Option<&'static str>) {
    use crate::measure::stats::{smallest_p_value, Verdict};
    let change = noise::change_text(n).unwrap_or(plain);
    if f.breached.is_none() && smallest_p_value(n.n_baseline, n.n_current) > alpha {
        // No outcome of so few trials could be significant: "no change" would claim too much.
        return (
            change,
            format!(
                "too few trials to tell ({} and {})",
                n.n_baseline, n.n_current
            ),
            None,
        );
    }
    let p = n
        .p_value
        .map_or(String::new(), |p| format!(" (p = {p:.3})"));
    if let Some(br) = &f.breached {
        return (
            change,
            format!("worse{p}, past {}", br.bound.shown_limit()),
            Some(BOLD_RED),
        );
    }
    let higher = match better(f.metric) {
        Better::Higher => true,
        Better::Lower => false,
        Better::Neither => return (change, String::new(), None),
    };
    // As Criterion.rs has a noise threshold: a real but tiny change is not news.
    if n.ratio.is_some_and(|r| r.abs() < noise::NEGLIGIBLE) {
        return (
            change,
            format!("negligible (under {}%){p}", noise::NEGLIGIBLE * 100.0),
            None,
        );
    }
    match n.verdict(higher) {
        Verdict::Regressed => (change, format!("worse{p}"), Some(RED)),
        Verdict::Improved => (change, format!("better{p}"), Some(GREEN)),
        Verdict::NoChange => (change, "no change within noise".into(), None),
    }
}

fn write_table(c: &Comparison, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let head = ["run", "metric", "baseline", "current", "change", ""];
    let mut rows: Vec<([String; 6], Option<&'static str>)> = Vec::new();
    for r in &c.runs {
        for (i, f) in r.figures.iter().enumerate() {
            let label = match (i, r.complete) {
                (0, true) => r.label.clone(),
                (0, false) => format!("{} (incomplete)", r.label),
                _ => String::new(),
            };
            let shown = |v: Option<f64>| v.map_or("-".into(), |v| bound::shown_amount(f.metric, v));
            let (change, word, colour) = change_cells(f, c.alpha);
            rows.push((
                [
                    label,
                    f.name.clone(),
                    shown(f.baseline),
                    shown(f.current),
                    change,
                    word,
                ],
                colour,
            ));
        }
    }
    let mut width = head.map(|h| h.chars().count());
    for (row, _) in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // Names left, figures right: the digits line up.
    let cell = |i: usize, text: &str| {
        if i == 5 {
            return text.to_string();
        }
        let pad = " ".repeat(width[i] - text.chars().count());
        if (2..=4).contains(&i) {
            format!("{pad}{text}")
        } else {
            format!("{text}{pad}")
        }
    };
    let line = |cells: Vec<String>| cells.join("  ").trim_end().to_string();
    writeln!(out, "{}", line((0..6).map(|i| cell(i, head[i])).collect()))?;
    writeln!(
        out,
        "{}",
        width
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
    )?;
    for (row, colour) in &rows {
        let cells: Vec<String> = (0..6)
            .map(|i| {
                let text = cell(i, &row[i]);
                match colour {
                    Some(c) if color && i >= 4 && !row[i].is_empty() => format!("{c}{text}{RESET}"),
                    _ => text,
                }
            })
            .collect();
        writeln!(out, "{}", line(cells))?;
    }
    writeln!(out)
}
