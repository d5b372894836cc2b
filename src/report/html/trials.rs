//! A repeated run's trials on the page: for each headline figure, every trial as a point in
//! the order they ran, the median as a line and its interval as a band, so a reader sees the
//! spread the `±` in the table summarises and which trial stood out.

use std::fmt::Write as _;

use super::plots::{axes, ACK, AREA, E2E, H, W};
use super::svg::{Anchor, Kind, Scale, Svg};
use crate::measure::trials::{TrialFigure, Trials, LEVEL};

const BAND: &str = "#dbe9f6";
const OUTLIER: &str = "#a40e26";

/// The figures plotted, with their unit on the axis and how a value is scaled to it.
const PLOTTED: &[(&str, &str, f64)] = &[
    ("throughput", "records / s", 1.0),
    ("ack.p50", "ms", 1e3),
    ("ack.p99", "ms", 1e3),
    ("e2e.p99", "ms", 1e3),
    ("capacity", "records / s", 1.0),
];

/// The trials section of a run's part of the page.
pub(super) fn section(h: &mut String, t: &Trials) {
    let _ = write!(
        h,
        "<h3>{} trials</h3><p class=\"note\">Each point is a trial, in the order they ran; the \
         line is the median, the band its {}% interval (order statistics: {} trials cover the \
         median with {:.1}%). Counts are summed over the trials, figures are medians.</p>\
         <div class=\"plots\">",
        t.results.len(),
        LEVEL * 100.0,
        t.results.len(),
        t.figures.first().map_or(0.0, |f| f.coverage * 100.0)
    );
    for (name, unit, scale) in PLOTTED {
        if let Some(f) = t.figures.iter().find(|f| f.metric == *name) {
            h.push_str(&plot(f, unit, *scale));
        }
    }
    h.push_str("</div>");
}

fn plot(f: &TrialFigure, unit: &str, scale: f64) -> String {
    let title = format!("{} over the trials", f.metric);
    let mut svg = Svg::new(W, H, &title);
    let (l, t, r, b) = AREA;
    svg.text((W / 2.0, 24.0), &title, 16.0, Anchor::Middle, "title");
    let vals: Vec<f64> = f.values.iter().map(|v| v * scale).collect();
    let (lo, hi, med) = (f.lo * scale, f.hi * scale, f.median * scale);
    let max = vals.iter().copied().fold(hi, f64::max);
    let n = vals.len().max(1) as f64;
    let xs = Scale::fit(Kind::Linear, 0.0, n + 1.0, (l, r), false);
    let ys = Scale::fit(Kind::Linear, 0.0, max, (b, t), true);
    axes(
        &mut svg,
        &xs,
        &ys,
        "trial",
        &format!("{} ({unit})", f.metric),
    );
    let band = format!(
        "{}% interval of the median: {}..{}",
        LEVEL * 100.0,
        super::svg::number(lo),
        super::svg::number(hi)
    );
    svg.rect(
        (l, ys.px(hi)),
        (r - l, ys.px(lo) - ys.px(hi)),
        BAND,
        Some(&band),
    );
    svg.polyline(&[(l, ys.px(med)), (r, ys.px(med))], ACK, 1.5, true);
    svg.text(
        (r - 4.0, ys.px(med) - 6.0),
        &format!("median {}", super::svg::number(med)),
        12.0,
        Anchor::End,
        "label",
    );
    for (i, v) in vals.iter().enumerate() {
        let out = f.outliers.contains(&i);
        let tip = format!(
            "trial {}: {}{}",
            i + 1,
            super::svg::number(*v),
            if out { " (far from the others)" } else { "" }
        );
        let colour = if out { OUTLIER } else { E2E };
        svg.marker(
            (xs.px(i as f64 + 1.0), ys.px(*v)),
            5.0,
            colour,
            true,
            "trial",
            &tip,
        );
    }
    svg.finish()
}
