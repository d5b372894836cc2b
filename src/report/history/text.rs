//! A history in words: each series with its setting, its results' span and versions, the
//! table of its change points (when, which figure, the summary before and after, the change,
//! the p-value), the significant changes too small to show counted, then every bound a recent
//! change went past.

use std::io::{self, Write};

use super::{Breach, Change, Figure, History, Series};
use crate::format::plural;
use crate::report::compare::shown_amount;

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const BOLD_RED: &str = "\x1b[1;31m";
const RESET: &str = "\x1b[0m";

/// Writes the history: a header, each series and its change points, each bound exceeded, and
/// one closing line.
pub(crate) fn write(h: &History, color: bool, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", header(h))?;
    for n in &h.notes {
        writeln!(out, "note: {n}")?;
    }
    for s in &h.series {
        writeln!(out)?;
        write_series(s, h, color, out)?;
    }
    writeln!(out)?;
    for u in &h.unchecked {
        writeln!(out, "note: {u}")?;
    }
    for b in &h.breaches {
        let (on, off) = if color { (BOLD_RED, RESET) } else { ("", "") };
        writeln!(out, "{on}FAIL{off}  {}", breach_text(b))?;
    }
    let found: usize = (h.series.iter())
        .flat_map(|s| &s.figures)
        .map(|f| f.change_points.len())
        .sum();
    let gate = match (h.checks, h.breaches.len()) {
        (0, _) => String::new(),
        (n, 0) => format!(
            "; no change past a bound among the last {} results ({n} check{})",
            h.last,
            plural(n)
        ),
        (n, k) => format!("; {k} of {n} bound check{} failed", plural(n)),
    };
    writeln!(
        out,
        "history: {found} change point{} in {} series{gate}",
        plural(found),
        h.series.len()
    )
}

/// The first line: what was read and how it was searched.
pub(crate) fn header(h: &History) -> String {
    let small = if h.min_effect > 0.0 {
        format!(
            "; changes under {} not shown",
            percent(h.min_effect * 100.0)
        )
    } else {
        String::new()
    };
    format!(
        "history: {} result file{}, {} series; change points significant at α = {} over each \
         series' figures (Holm; at least {} permutations), with at least {} results on each \
         side{small}",
        h.files,
        plural(h.files),
        h.series.len(),
        h.alpha,
        h.permutations,
        h.min_size
    )
}

/// `5%`, `0.5%`
fn percent(p: f64) -> String {
    let s = format!("{p:.2}");
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

/// A p-value as the table shows it: three decimals, or two significant digits below 0.001
/// (the tail's estimates, which rank changes no permutation reached).
pub(crate) fn p_text(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else if p > 0.0 {
        format!("{p:.1e}")
    } else {
        "0".into()
    }
}

/// `2 significant changes under 5% not shown (ack.p999 −2.1% at #26, …); --min-effect 0
/// shows them`
fn held_back(s: &Series, min_effect: f64) -> Option<String> {
    let all: Vec<String> = (s.figures.iter())
        .flat_map(|f| f.held_back.iter().map(move |c| (f, c)))
        .map(|(f, c)| {
            let by = c.change_pct.map_or("-".into(), |p| format!("{p:+.1}%"));
            format!("{} {by} at #{}", f.shown_name(), c.index + 1)
        })
        .collect();
    (!all.is_empty()).then(|| {
        format!(
            "{} significant change{} under {} not shown ({}); --min-effect 0 shows {}",
            all.len(),
            plural(all.len()),
            percent(min_effect * 100.0),
            all.join(", "),
            if all.len() == 1 { "it" } else { "them" }
        )
    })
}

/// `2026-12-02 17:32:00` from `2026-12-02T17:32:00.842Z`: to the second, as people read it.
pub(crate) fn when(started_at: &str) -> String {
    match started_at.get(..19) {
        Some(t) if started_at.len() >= 20 => t.replacen('T', " ", 1),
        _ => started_at.to_string(),
    }
}

fn write_series(s: &Series, h: &History, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let (n, min) = (s.results.len(), h.min_size);
    writeln!(out, "{}, run `{}`: {}", s.scenario, s.run, span(s))?;
    writeln!(out, "  setting: {}", s.setting.describe())?;
    match (s.versions.is_empty(), s.results.first()) {
        (true, Some(p)) => writeln!(
            out,
            "  versions: kafkabench {}, librdkafka {} throughout",
            p.kafkabench,
            p.librdkafka.as_deref().unwrap_or("unknown")
        )?,
        _ => {
            for v in &s.versions {
                writeln!(
                    out,
                    "  versions: {} {} → {} from result #{} ({})",
                    v.what,
                    v.from,
                    v.to,
                    v.index + 1,
                    when(&s.results[v.index].started_at)
                )?;
            }
        }
    }
    for l in &s.left_out {
        writeln!(out, "  left out: {}: {}", l.file, l.reason)?;
    }
    let rows: Vec<(&Figure, &Change)> = (s.figures.iter())
        .flat_map(|f| f.change_points.iter().map(move |c| (f, c)))
        .collect();
    if rows.is_empty() {
        let why = if n < 2 * min {
            format!(
                "too few results to tell ({n}): a change point needs at least {min} on each side"
            )
        } else {
            "no change point in any figure".to_string()
        };
        writeln!(out, "  {why}")?;
    } else {
        write_table(&rows, color, out)?;
    }
    if let Some(note) = held_back(s, h.min_effect) {
        writeln!(out, "  note: {note}")?;
    }
    Ok(())
}

/// `40 results from 2026-12-02 17:32:32 to 2026-12-02 17:38:20, 3 trials each`
fn span(s: &Series) -> String {
    let n = s.results.len();
    let (Some(first), Some(last)) = (s.results.first(), s.results.last()) else {
        return "no complete result".into();
    };
    let trials = {
        let (lo, hi) = (s.results.iter().map(|p| p.trials))
            .fold((usize::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
        match (lo, hi) {
            (1, 1) => String::new(),
            (lo, hi) if lo == hi => format!(", {lo} trials each"),
            (lo, hi) => format!(", {lo} to {hi} trials each"),
        }
    };
    format!(
        "{n} result{} from {} to {}{trials}",
        plural(n),
        when(&first.started_at),
        when(&last.started_at)
    )
}

/// The change points, newest last, one row each.
fn write_table(rows: &[(&Figure, &Change)], color: bool, out: &mut dyn Write) -> io::Result<()> {
    let mut rows = rows.to_vec();
    rows.sort_by_key(|(_, c)| c.index);
    let head = [
        "when", "result", "figure", "before", "after", "change", "p-value", "",
    ];
    let mut cells: Vec<([String; 8], Option<&'static str>)> = Vec::new();
    let mut last_index = None;
    for (f, c) in &rows {
        let first = last_index != Some(c.index);
        last_index = Some(c.index);
        let (time, at) = if first {
            (when(&c.started_at), format!("#{}", c.index + 1))
        } else {
            (String::new(), String::new())
        };
        let change = c.change_pct.map_or("-".into(), |p| format!("{p:+.1}%"));
        let colour = match c.verdict {
            "worse" => Some(RED),
            "better" => Some(GREEN),
            _ => None,
        };
        cells.push((
            [
                time,
                at,
                f.shown_name(),
                f.shown(c.before),
                f.shown(c.after),
                change,
                p_text(c.p_tail.unwrap_or(c.p_value)),
                c.verdict.to_string(),
            ],
            colour,
        ));
    }
    let mut width = head.map(|h| h.chars().count());
    for (row, _) in &cells {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // Names left, figures right: the digits line up.
    let cell = |i: usize, text: &str| {
        let pad = " ".repeat(width[i] - text.chars().count());
        if (3..=6).contains(&i) {
            format!("{pad}{text}")
        } else {
            format!("{text}{pad}")
        }
    };
    let line = |cells: Vec<String>| format!("  {}", cells.join("  ").trim_end());
    writeln!(out, "{}", line((0..8).map(|i| cell(i, head[i])).collect()))?;
    writeln!(
        out,
        "{}",
        line(width.iter().map(|w| "-".repeat(*w)).collect())
    )?;
    for ((row, colour), (_, c)) in cells.iter().zip(&rows) {
        let shown: Vec<String> = (0..8)
            .map(|i| {
                let text = cell(i, &row[i]);
                match colour {
                    Some(on) if color && i >= 5 => format!("{on}{text}{RESET}"),
                    _ => text,
                }
            })
            .collect();
        writeln!(out, "{}", line(shown))?;
        for v in &c.versions {
            writeln!(out, "  {:w$}  ({v})", "", w = width[0] + width[1] + 2)?;
        }
    }
    Ok(())
}

/// `history_linger, run `run`: ack.p50 rose 7683.1% from result #26 (2026-12-02 17:36:16;
/// 221µs → 17.2ms), more than the +10% allowed by `ack.p50:+10%``
pub(crate) fn breach_text(b: &Breach) -> String {
    let verb = if b.change >= 0.0 { "rose" } else { "fell" };
    let by = if b.percent {
        if b.change.is_infinite() {
            "∞%".to_string()
        } else {
            format!("{:.1}%", b.change.abs())
        }
    } else {
        format!("by {}", shown_amount(b.metric, b.change.abs()))
    };
    format!(
        "{}, run `{}`: {} {verb} {by} from result #{} ({}; {} → {}), past the bound `{}`",
        b.scenario,
        b.run,
        b.figure,
        b.index + 1,
        when(&b.started_at),
        shown_amount(b.metric, b.before),
        shown_amount(b.metric, b.after),
        b.bound
    )
}
