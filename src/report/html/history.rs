//! A history on one page (`kafkabench history --html`): per series, each figure over its
//! results — every result's median with its trials' range as a band, each stretch between
//! change points summarised as the search sees it (median, or geometric mean for latencies),
//! the change points and version changes as vertical lines — and the table of change points. Inline SVG from the same primitives as the run report; no script.

use std::fmt::Write as _;

use super::plots::{axes, legend, ACK, AREA, E2E, H, TARGET, W};
use super::svg::{esc, number, Anchor, Kind, Scale, Svg};
use super::STYLE;
use crate::model::{Metric, Unit};
use crate::report::history::text::{breach_text, header, p_text, when};
use crate::report::history::{Figure, History, Series};

const BAND: &str = "#b6d4ee";
const CHANGE: &str = "#a40e26";
const VERSION: &str = "#8250df";

/// The page as a string.
pub(crate) fn page(h: &History) -> String {
    let mut p = String::new();
    let _ = write!(
        p,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>kafkabench · history</title><style>{STYLE}</style></head><body><main>\
         <h1>history</h1>"
    );
    let found: usize = (h.series.iter())
        .flat_map(|s| &s.figures)
        .map(|f| f.change_points.len())
        .sum();
    let meta = [
        ("result files", h.files.to_string()),
        ("series", h.series.len().to_string()),
        ("change points", found.to_string()),
        (
            "method",
            format!(
                "E-Divisive with means{}",
                header(h).split_once(';').map_or("", |(_, rest)| rest)
            ),
        ),
    ];
    p.push_str("<dl class=\"meta\">");
    for (k, v) in meta {
        let _ = write!(p, "<dt>{k}</dt><dd>{}</dd>", esc(&v));
    }
    p.push_str("</dl>");
    for b in &h.breaches {
        let _ = write!(
            p,
            "<p><span class=\"outcome fail\">FAIL</span> {}</p>",
            esc(&breach_text(b))
        );
    }
    for n in h.notes.iter().chain(&h.unchecked) {
        let _ = write!(p, "<p class=\"note\">note: {}</p>", esc(n));
    }
    for (i, s) in h.series.iter().enumerate() {
        series(&mut p, i, s);
    }
    p.push_str("</main></body></html>\n");
    p
}

fn series(p: &mut String, i: usize, s: &Series) {
    let _ = write!(
        p,
        "<section class=\"run\" id=\"series-{}\"><h2>{}, run <code>{}</code></h2>\
         <dl class=\"meta\"><dt>setting</dt><dd>{}</dd><dt>results</dt><dd>{}</dd>",
        i + 1,
        esc(&s.scenario),
        esc(&s.run),
        esc(&s.setting.describe()),
        s.results.len()
    );
    if let (Some(a), Some(b)) = (s.results.first(), s.results.last()) {
        let _ = write!(
            p,
            "<dt>from</dt><dd>{}</dd><dt>to</dt><dd>{}</dd>",
            esc(&when(&a.started_at)),
            esc(&when(&b.started_at))
        );
    }
    for v in &s.versions {
        let _ = write!(
            p,
            "<dt>{}</dt><dd>{} → {} from result #{}</dd>",
            v.what,
            esc(&v.from),
            esc(&v.to),
            v.index + 1
        );
    }
    p.push_str("</dl>");
    for l in &s.left_out {
        let _ = write!(
            p,
            "<p class=\"note\">left out: {}: {}</p>",
            esc(&l.file),
            esc(&l.reason)
        );
    }
    table(p, s);
    p.push_str("<div class=\"plots\">");
    let mut flat = Vec::new();
    for f in &s.figures {
        let all_zero = f.values.iter().flatten().all(|v| *v == 0.0);
        if all_zero && f.change_points.is_empty() {
            flat.push(f.name.as_str());
            continue;
        }
        let _ = write!(p, "<figure>{}</figure>", plot(s, f));
    }
    p.push_str("</div>");
    if !flat.is_empty() {
        let _ = write!(
            p,
            "<p class=\"note\">0 in every result: {}</p>",
            esc(&flat.join(", "))
        );
    }
    p.push_str("</section>");
}

fn table(p: &mut String, s: &Series) {
    let mut rows: Vec<(&Figure, &crate::report::history::Change)> = (s.figures.iter())
        .flat_map(|f| f.change_points.iter().map(move |c| (f, c)))
        .collect();
    if rows.is_empty() {
        p.push_str("<p>No change point in any figure.</p>");
        return;
    }
    rows.sort_by_key(|(_, c)| c.index);
    p.push_str(
        "<table><tr><th>when</th><th>result</th><th>figure</th><th>before</th><th>after</th>\
         <th>change</th><th>p-value</th><th></th><th>versions</th></tr>",
    );
    for (f, c) in rows {
        let class = match c.verdict {
            "worse" => " class=\"fail\"",
            "better" => " class=\"pass\"",
            _ => "",
        };
        let _ = write!(
            p,
            "<tr><td>{}</td><td class=\"num\">#{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td{class}>{}</td><td>{}</td></tr>",
            esc(&when(&c.started_at)),
            c.index + 1,
            esc(&f.shown_name()),
            esc(&f.shown(c.before)),
            esc(&f.shown(c.after)),
            c.change_pct.map_or("-".into(), |x| format!("{x:+.1}%")),
            p_text(c.p_tail.unwrap_or(c.p_value)),
            c.verdict,
            esc(&c.versions.join("; "))
        );
    }
    p.push_str("</table>");
}

/// The axis unit of a figure and the factor from its base unit.
fn unit(f: &Figure) -> (&'static str, f64) {
    if f.against_plan.is_some() {
        return ("% of plan", 100.0);
    }
    match f.metric {
        Metric::DiskRatio | Metric::WireRatio => ("×", 1.0),
        Metric::BacklogCold => ("%", 100.0),
        _ => match f.metric.unit() {
            Unit::Duration => ("ms", 1e3),
            Unit::Size => ("bytes", 1.0),
            Unit::Rate => ("records / s", 1.0),
            Unit::ByteRate => ("MB / s", 1e-6),
            Unit::Number => ("", 1.0),
        },
    }
}

/// One figure over the series' results.
fn plot(s: &Series, f: &Figure) -> String {
    let title = format!("{} over {} results", f.shown_name(), s.results.len());
    let mut svg = Svg::new(W, H, &title);
    let (l, t, r, b) = AREA;
    svg.text((W / 2.0, 24.0), &title, 16.0, Anchor::Middle, "title");
    let (unit, scale) = unit(f);
    let shown: Vec<Vec<f64>> = (f.values.iter())
        .map(|v| v.iter().map(|x| x * scale).collect())
        .collect();
    let all = || shown.iter().flatten().copied();
    let max = all().fold(f64::MIN, f64::max);
    let min_pos = all().filter(|v| *v > 0.0).fold(f64::MAX, f64::min);
    // Latencies that spike by orders of magnitude would flatten everything else on a linear
    // axis.
    let y_kind = if min_pos < f64::MAX && max / min_pos > 30.0 {
        Kind::Log
    } else {
        Kind::Linear
    };
    let n = s.results.len().max(1) as f64;
    // Results 1 … n, with half a step's room at either end.
    let xs = Scale {
        kind: Kind::Linear,
        lo: 0.0,
        hi: n + 1.0,
        px_lo: l,
        px_hi: r,
    };
    let ys = Scale::fit(y_kind, min_pos.min(max), max, (b, t), true);
    let y_label = if unit.is_empty() {
        f.shown_name()
    } else {
        format!("{} ({unit})", f.shown_name())
    };
    axes(&mut svg, &xs, &ys, "result (oldest first)", &y_label);
    let px_y = |v: f64| {
        ys.px(if y_kind == Kind::Log { v.max(ys.lo) } else { v })
            .clamp(t, b)
    };
    let step = xs.px(2.0) - xs.px(1.0);
    // Version changes and change points sit between two results.
    for v in &s.versions {
        let x = xs.px(v.index as f64 + 0.5);
        svg.polyline(&[(x, t), (x, b)], VERSION, 1.2, true);
        svg.text(
            (x + 3.0, b - 6.0),
            &format!("{} {}", v.what, v.to),
            10.0,
            Anchor::Start,
            "version",
        );
    }
    // Each stretch between change points as the search summarised it: through its points,
    // on a log axis too.
    for g in &f.segments {
        let y = px_y(g.summary * scale);
        let (x0, x1) = (xs.px(g.from as f64 + 0.5), xs.px(g.to as f64 + 0.5));
        svg.line((x0, y), (x1, y), E2E, 2.0);
    }
    for (k, c) in f.change_points.iter().enumerate() {
        let x = xs.px(c.index as f64 + 0.5);
        svg.polyline(&[(x, t), (x, b)], CHANGE, 1.6, true);
        let label = format!(
            "{} (p {})",
            c.change_pct
                .map_or("changed".into(), |p| format!("{p:+.1}%")),
            p_text(c.p_tail.unwrap_or(c.p_value))
        );
        // Labels of neighbouring change points take turns on two rows.
        let row = (k % 2) as f64 * 13.0;
        svg.text(
            (x + 3.0, t + 12.0 + row),
            &label,
            11.0,
            Anchor::Start,
            "change",
        );
    }
    let mut medians = Vec::new();
    for (&i, v) in f.results.iter().zip(&shown) {
        let x = xs.px(i as f64 + 1.0);
        let p = &s.results[i];
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
        if v.len() > 1 {
            let tip = format!(
                "result #{}: {} trials from {} to {}",
                i + 1,
                v.len(),
                number(lo),
                number(hi)
            );
            let w = (step * 0.6).clamp(2.0, 14.0);
            svg.rect(
                (x - w / 2.0, px_y(hi)),
                (w, px_y(lo) - px_y(hi)),
                BAND,
                Some(&tip),
            );
        }
        let med = crate::measure::stats::median(v).unwrap_or(lo);
        medians.push((x, px_y(med)));
        let tip = format!(
            "result #{} ({}, run {}, {}): {} {}{}",
            i + 1,
            when(&p.started_at),
            p.run_id,
            p.file,
            number(med),
            unit,
            if v.len() > 1 {
                " (median of the trials)"
            } else {
                ""
            }
        );
        svg.marker((x, px_y(med)), 3.0, ACK, true, "result", &tip);
    }
    svg.polyline(&medians, TARGET, 1.0, false);
    let between = format!("{} between changes", f.summary);
    let mut items = vec![("median", ACK, false), (between.as_str(), E2E, false)];
    if shown.iter().any(|v| v.len() > 1) {
        items.push(("trials' range", BAND, false));
    }
    if !f.change_points.is_empty() {
        items.push(("change point", CHANGE, true));
    }
    if !s.versions.is_empty() {
        items.push(("version change", VERSION, true));
    }
    legend(&mut svg, items.into_iter());
    svg.finish()
}
