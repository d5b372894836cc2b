//! The report's plots as inline SVG: line charts (the percentile distribution on the nines
//! axis; throughput and latency over time are drawn by `over_time.rs`) and bar charts
//! comparing runs, each with axes, units, grid and legend.

use super::svg::{nines, number, Anchor, Kind, Scale, Svg};
use crate::measure::{LatencySummary, RunResult};

pub(super) const W: f64 = 660.0;
pub(super) const H: f64 = 380.0;
/// Plot area: left, top, right, bottom; room above it for two rows of legend, to the right
/// for the last tick label.
pub(super) const AREA: (f64, f64, f64, f64) = (74.0, 84.0, 616.0, 322.0);
const GRID: &str = "#d8dee4";
const AXIS: &str = "#57606a";

/// Colours per latency family, the same in every plot (colour-blind-safe Okabe–Ito hues).
pub(super) const ACK: &str = "#0072b2";
pub(super) const E2E: &str = "#d55e00";
pub(super) const SERVICE: &str = "#009e73";
pub(super) const TARGET: &str = "#6e7781";

/// One series of a line chart; a None value breaks the line (an interval with no data).
pub(super) struct Line {
    pub name: String,
    pub color: &'static str,
    pub dash: bool,
    pub points: Vec<(f64, Option<f64>)>,
}

/// A line chart: a title, two labelled axes, the lines and their legend.
pub(super) struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x: Kind,
    pub y: Kind,
    pub lines: Vec<Line>,
}

impl Chart {
    pub(super) fn render(&self) -> String {
        let mut svg = Svg::new(W, H, &self.title);
        let (l, t, r, b) = AREA;
        svg.text((W / 2.0, 24.0), &self.title, 16.0, Anchor::Middle, "title");
        let values = || {
            self.lines
                .iter()
                .flat_map(|l| l.points.iter())
                .filter_map(|(x, y)| Some((*x, (*y)?)))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
        };
        if values().next().is_none() {
            svg.text(
                ((l + r) / 2.0, (t + b) / 2.0),
                "nothing was recorded",
                14.0,
                Anchor::Middle,
                "empty",
            );
            return svg.finish();
        }
        let fold = |f: fn(&(f64, f64)) -> f64| {
            values()
                .map(|p| f(&p))
                .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)))
        };
        let (x_min, x_max) = fold(|p| p.0);
        // A log axis starts at the smallest positive value.
        let positive = |(_, hi): (f64, f64)| {
            let lo = values()
                .map(|p| p.1)
                .filter(|v| *v > 0.0)
                .fold(hi, f64::min);
            (lo.min(hi), hi)
        };
        let (y_min, y_max) = match self.y {
            Kind::Log => positive(fold(|p| p.1)),
            _ => fold(|p| p.1),
        };
        let xs = Scale::fit(self.x, x_min, x_max, (l, r), false);
        let ys = Scale::fit(self.y, y_min, y_max, (b, t), true);
        axes(&mut svg, &xs, &ys, &self.x_label, &self.y_label);
        for line in &self.lines {
            // Split at gaps, and clip a log axis's zeros (nothing to draw at 0 on a log scale).
            let mut run: Vec<(f64, f64)> = Vec::new();
            let mut runs = Vec::new();
            for (x, y) in &line.points {
                let drawable = |v: &f64| v.is_finite() && (self.y != Kind::Log || *v > 0.0);
                match y.filter(drawable).filter(|_| x.is_finite()) {
                    Some(y) => run.push((xs.px(*x), ys.px(y))),
                    None => runs.push(std::mem::take(&mut run)),
                }
            }
            runs.push(run);
            for part in runs {
                if part.len() == 1 {
                    svg.circle(part[0], 2.5, line.color);
                }
                svg.polyline(&part, line.color, 2.0, line.dash);
            }
        }
        legend(
            &mut svg,
            self.lines
                .iter()
                .map(|l| (l.name.as_str(), l.color, l.dash)),
        );
        svg.finish()
    }
}

/// Grid, axis lines, tick labels and the axis titles.
pub(super) fn axes(svg: &mut Svg, xs: &Scale, ys: &Scale, x_label: &str, y_label: &str) {
    let (l, t, r, b) = AREA;
    for (v, label) in xs.ticks() {
        let x = xs.px(v);
        svg.line((x, t), (x, b), GRID, 1.0);
        svg.line((x, b), (x, b + 5.0), AXIS, 1.0);
        svg.text((x, b + 19.0), &label, 12.0, Anchor::Middle, "tick");
    }
    for (v, label) in ys.ticks() {
        let y = ys.px(v);
        svg.line((l, y), (r, y), GRID, 1.0);
        svg.line((l - 5.0, y), (l, y), AXIS, 1.0);
        svg.text((l - 8.0, y + 4.0), &label, 12.0, Anchor::End, "tick");
    }
    svg.line((l, b), (r, b), AXIS, 1.2);
    svg.line((l, t), (l, b), AXIS, 1.2);
    svg.text(
        ((l + r) / 2.0, H - 16.0),
        x_label,
        13.0,
        Anchor::Middle,
        "axis",
    );
    svg.text_up((18.0, (t + b) / 2.0), y_label, 13.0, "axis");
}

/// The legend under the title: a swatch and a name per series, wrapping to a second row.
pub(super) fn legend<'a>(
    svg: &mut Svg,
    items: impl Iterator<Item = (&'a str, &'static str, bool)>,
) {
    let mut x = AREA.0;
    let mut y = 46.0;
    for (name, color, dash) in items {
        // Roughly 7 px per character at 12 px: wide enough, never overlapping.
        let width = 28.0 + 7.0 * name.chars().count() as f64;
        if x > AREA.0 && x + width > W - 10.0 {
            x = AREA.0;
            y += 20.0;
        }
        if dash {
            svg.polyline(&[(x, y), (x + 22.0, y)], color, 2.5, true);
        } else {
            svg.line((x, y), (x + 22.0, y), color, 3.0);
        }
        svg.text((x + 28.0, y + 4.0), name, 12.0, Anchor::Start, "legend");
        x += width + 20.0;
    }
}

/// Points of a histogram's percentile curve on the nines axis, in milliseconds, up to the
/// deepest quantile its count supports (beyond it, every quantile is its maximum).
fn percentile_points(s: &LatencySummary) -> Vec<(f64, Option<f64>)> {
    let Some(h) = s.histogram().filter(|h| !h.is_empty()) else {
        return Vec::new();
    };
    let deepest = (h.len() as f64).log10().clamp(0.5, super::svg::NINES_MAX);
    // 40 points per nine, each tick (90 %, 99 %, …) among them, then the deepest quantile.
    let per_nine = 40.0;
    let mut out: Vec<(f64, Option<f64>)> = (0..)
        .map(|i| f64::from(i) / per_nine)
        .take_while(|x| *x < deepest)
        .chain([deepest])
        .map(|x| {
            let q = 1.0 - 10f64.powf(-x);
            (x, Some(h.value_at_quantile(q) as f64 / 1e6))
        })
        .collect();
    out.push((nines(1.0).min(deepest), Some(h.max() as f64 / 1e6)));
    out
}

/// The latency distribution of one run: ack, e2e and (when paced) service, overlaid.
pub(super) fn percentiles(run: &RunResult) -> String {
    let mut lines = vec![Line {
        name: "ack (intended send → ack)".into(),
        color: ACK,
        dash: false,
        points: percentile_points(&run.ack),
    }];
    // Unpaced, service time is the ack latency: a second identical line says nothing.
    if run.target_rate.is_some() {
        lines.push(Line {
            name: "service (produce → ack)".into(),
            color: SERVICE,
            dash: false,
            points: percentile_points(&run.service),
        });
    }
    if let Some(e2e) = &run.e2e {
        lines.push(Line {
            name: "e2e (intended send → consumed)".into(),
            color: E2E,
            dash: false,
            points: percentile_points(e2e),
        });
    }
    lines.retain(|l| !l.points.is_empty());
    Chart {
        title: "Latency by percentile".into(),
        x_label: "percentile (log scale of 1/(1−q))".into(),
        y_label: "latency (ms, log scale)".into(),
        x: Kind::Nines,
        y: Kind::Log,
        lines,
    }
    .render()
}

/// Okabe–Ito hues for one line per broker, in node-id order (cycled past eight).
const BROKERS: [&str; 8] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442",
];

/// The ack latency distribution of each broker that acknowledged, overlaid: a slow broker's
/// line stands apart. None with fewer than two brokers (the run's own plot is theirs).
pub(super) fn by_broker(run: &RunResult) -> Option<String> {
    if run.brokers.len() < 2 {
        return None;
    }
    let mut lines: Vec<Line> = run
        .brokers
        .iter()
        .enumerate()
        .map(|(i, b)| Line {
            name: format!("broker {} ({} records)", b.id, b.records),
            color: BROKERS[i % BROKERS.len()],
            dash: false,
            points: percentile_points(&b.ack),
        })
        .collect();
    lines.retain(|l| !l.points.is_empty());
    Some(
        Chart {
            title: "Ack latency by broker (the one that acknowledged)".into(),
            x_label: "percentile (log scale of 1/(1−q))".into(),
            y_label: "latency (ms, log scale)".into(),
            x: Kind::Nines,
            y: Kind::Log,
            lines,
        }
        .render(),
    )
}

/// One group of bars in a comparison: a name, a colour, a value per run.
pub(super) struct Bars {
    pub name: String,
    pub color: &'static str,
    pub values: Vec<Option<f64>>,
}

/// Horizontal bars, one row per run (labels can be long), grouped per row.
pub(super) fn compare(title: &str, unit: &str, labels: &[String], groups: &[Bars]) -> String {
    let label_w = 12.0 + 7.0 * labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    let left = label_w.clamp(90.0, 300.0);
    let right = 1000.0 - 70.0;
    let bar = 14.0;
    let row = bar * groups.len() as f64 + 12.0;
    let top = 64.0;
    let bottom = top + row * labels.len() as f64;
    let height = bottom + 52.0;
    let mut svg = Svg::new(1000.0, height, title);
    svg.text((500.0, 24.0), title, 16.0, Anchor::Middle, "title");
    let max = groups
        .iter()
        .flat_map(|g| g.values.iter().flatten())
        .fold(0.0f64, |m, v| m.max(*v));
    let xs = Scale::fit(Kind::Linear, 0.0, max, (left, right), true);
    for (v, label) in xs.ticks() {
        let x = xs.px(v);
        svg.line((x, top), (x, bottom), GRID, 1.0);
        svg.text((x, bottom + 18.0), &label, 12.0, Anchor::Middle, "tick");
    }
    svg.text(
        ((left + right) / 2.0, height - 10.0),
        unit,
        13.0,
        Anchor::Middle,
        "axis",
    );
    for (i, label) in labels.iter().enumerate() {
        let y0 = top + row * i as f64 + 6.0;
        let shown = truncate(label, ((left - 12.0) / 7.0) as usize);
        svg.text(
            (left - 8.0, y0 + row / 2.0),
            &shown,
            12.0,
            Anchor::End,
            "run-label",
        );
        for (g, group) in groups.iter().enumerate() {
            let y = y0 + bar * g as f64;
            match group.values.get(i).copied().flatten() {
                Some(v) => {
                    let tip = format!("{label}: {} {} {unit}", group.name, number(v));
                    svg.rect(
                        (left, y),
                        (xs.px(v) - left, bar - 2.0),
                        group.color,
                        Some(&tip),
                    );
                    svg.text(
                        (xs.px(v) + 4.0, y + bar - 4.0),
                        &number(v),
                        11.0,
                        Anchor::Start,
                        "value",
                    );
                }
                None => svg.text(
                    (left + 4.0, y + bar - 4.0),
                    "not measured",
                    11.0,
                    Anchor::Start,
                    "value",
                ),
            }
        }
    }
    svg.line((left, top), (left, bottom), AXIS, 1.2);
    if groups.len() > 1 {
        let mut x = left;
        for g in groups {
            svg.rect((x, 38.0), (14.0, 12.0), g.color, None);
            svg.text((x + 20.0, 48.0), &g.name, 12.0, Anchor::Start, "legend");
            x += 40.0 + 7.0 * g.name.chars().count() as f64;
        }
    }
    svg.finish()
}

/// At most `n` characters, with an ellipsis when cut (the full label is in the bar's tip).
fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let cut: String = s.chars().take(n.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{new_histogram, record};

    #[test]
    fn the_percentile_curve_is_read_from_the_histogram_up_to_what_its_count_supports() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            record(&mut h, v * 1_000_000);
        }
        let points = percentile_points(&LatencySummary::from_histogram(&h));
        let at = |x: f64| {
            points
                .iter()
                .find(|p| (p.0 - x).abs() < 1e-9)
                .and_then(|p| p.1)
                .expect("a point there")
        };
        assert_eq!(at(1.0), h.value_at_quantile(0.9) as f64 / 1e6);
        assert_eq!(at(2.0), h.value_at_quantile(0.99) as f64 / 1e6);
        // 1000 records say nothing beyond 99.9 %: the curve ends there, at the maximum.
        let last = points.last().unwrap();
        assert!((last.0 - 3.0).abs() < 1e-9, "{last:?}");
        assert_eq!(last.1, Some(h.max() as f64 / 1e6));
    }
}
