//! A search cell on the page: latency against the throughput each probe achieved (the curve
//! that bends as the cluster nears its limit), the SLO and the capacity drawn over it, and
//! the probe table in the words the terminal uses (`report/capacity.rs`).

use std::fmt::Write as _;

use super::plots::{axes, legend, ACK, AREA, E2E, H, W};
use super::svg::{esc, Anchor, Kind, Scale, Svg};
use crate::format::{human_duration, plural};
use crate::measure::capacity::{CapacityFigures, Limit, Probe};
use crate::measure::LatencySummary;
use crate::report::capacity as words;

/// Over this ratio between the highest and lowest latency (two decades), the y axis is
/// logarithmic: a p50 of 2 ms under a p99.9 of 900 ms would otherwise lie flat on the axis.
const LOG_SPAN: f64 = 100.0;

const SLO: &str = "#a40e26";
const CAPACITY: &str = "#116329";
/// The capacity's band: the capacity's green, faint.
const BAND: &str = "rgba(17, 99, 41, 0.10)";

/// One latency series: which family and percentile, its colour, dashed or not.
struct Series {
    name: &'static str,
    color: &'static str,
    dash: bool,
    pick: fn(&Probe) -> Option<f64>,
}

fn ms(s: Option<&LatencySummary>, f: fn(&LatencySummary) -> f64) -> Option<f64> {
    s.map(f).filter(|v| *v > 0.0 && v.is_finite())
}

/// Each family in its hue (the page's ack blue and e2e orange), lighter at p50 and dashed at
/// p99.9, so six lines stay apart without a legend lookup for each.
const SERIES: &[Series] = &[
    Series {
        name: "ack p50",
        color: "#56b4e9",
        dash: false,
        pick: |p| ms(Some(&p.result.ack), |s| s.p50_ms),
    },
    Series {
        name: "ack p99",
        color: ACK,
        dash: false,
        pick: |p| ms(Some(&p.result.ack), |s| s.p99_ms),
    },
    Series {
        name: "ack p99.9",
        color: ACK,
        dash: true,
        pick: |p| ms(Some(&p.result.ack), |s| s.p999_ms),
    },
    Series {
        name: "e2e p50",
        color: "#e69f00",
        dash: false,
        pick: |p| ms(p.result.e2e.as_ref(), |s| s.p50_ms),
    },
    Series {
        name: "e2e p99",
        color: E2E,
        dash: false,
        pick: |p| ms(p.result.e2e.as_ref(), |s| s.p99_ms),
    },
    Series {
        name: "e2e p99.9",
        color: E2E,
        dash: true,
        pick: |p| ms(p.result.e2e.as_ref(), |s| s.p999_ms),
    },
];

/// A series' points: achieved rate, latency in ms, and the probe they are of.
type Points<'a> = Vec<(f64, f64, &'a Probe)>;

/// Latency families a plot of milliseconds can draw an SLO bound on.
const LATENCY_FAMILIES: &[&str] = &["ack.", "e2e.", "service.", "send_delay.", "txn.commit."];

/// The SLO's latency bounds, in milliseconds, with their conditions.
fn slo_lines(c: &CapacityFigures) -> Vec<(String, f64)> {
    c.slo_lines
        .iter()
        .filter(|l| LATENCY_FAMILIES.iter().any(|f| l.metric.starts_with(f)))
        .filter(|l| l.bound.is_finite() && l.bound > 0.0)
        .map(|l| (l.condition.clone(), l.bound * 1e3))
        .collect()
}

/// Latency against achieved throughput, one point per probe on each series.
pub(super) fn plot(label: &str, c: &CapacityFigures) -> String {
    let title = format!("Latency against throughput · {label}");
    let mut svg = Svg::new(W, H, &title);
    let (l, t, r, b) = AREA;
    svg.text(
        (W / 2.0, 24.0),
        "Latency against throughput",
        16.0,
        Anchor::Middle,
        "title",
    );
    let series: Vec<(&Series, Points)> = SERIES
        .iter()
        .map(|s| {
            let mut pts: Points = c
                .probes
                .iter()
                .filter(|p| p.achieved.is_finite() && p.achieved >= 0.0)
                .filter_map(|p| Some((p.achieved, (s.pick)(p)?, p)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (s, pts)
        })
        .filter(|(_, pts)| !pts.is_empty())
        .collect();
    if series.is_empty() {
        svg.text(
            ((l + r) / 2.0, (t + b) / 2.0),
            "no probe recorded a latency",
            14.0,
            Anchor::Middle,
            "empty",
        );
        return svg.finish();
    }
    let slo = slo_lines(c);
    let ys_all = series
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|p| p.1))
        .chain(slo.iter().map(|s| s.1));
    let (y_min, y_max) = ys_all.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let x_max = series
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|p| p.0))
        .chain(c.capacity)
        .chain(c.band.map(|b| b.high))
        .fold(0.0, f64::max);
    let log = y_max / y_min > LOG_SPAN;
    let y_kind = if log { Kind::Log } else { Kind::Linear };
    let xs = Scale::fit(Kind::Linear, 0.0, x_max, (l, r), true);
    let ys = Scale::fit(y_kind, y_min, y_max, (b, t), true);
    let y_label = if log {
        "latency (ms, log scale)"
    } else {
        "latency (ms)"
    };
    axes(
        &mut svg,
        &xs,
        &ys,
        "achieved throughput (acknowledged records/s)",
        y_label,
    );
    // The band under everything else: where the capacity lies, claimed or not narrowed.
    if let Some(band) = c.band {
        let (x0, x1) = (xs.px(band.low), xs.px(band.high));
        let tip = format!(
            "95% band of the capacity: {}–{}",
            crate::format::compact_rate(band.low),
            crate::format::compact_rate(band.high)
        );
        svg.rect((x0, t), (x1 - x0, b - t), BAND, Some(&tip));
    }
    for (condition, bound) in &slo {
        let y = ys.px(*bound);
        svg.polyline(&[(l, y), (r, y)], SLO, 1.5, true);
        svg.text((r - 4.0, y - 5.0), condition, 12.0, Anchor::End, "slo");
    }
    if let Some(cap) = c.capacity {
        let x = xs.px(cap);
        svg.line((x, t), (x, b), CAPACITY, 2.0);
        let text = if c.limit == Limit::UpperBound {
            format!("capacity ≥ {}", crate::format::compact_rate(cap))
        } else {
            format!("capacity {}", crate::format::compact_rate(cap))
        };
        // The label on the side of the line with room for it.
        let (tx, anchor) = if x > (l + r) / 2.0 {
            (x - 5.0, Anchor::End)
        } else {
            (x + 5.0, Anchor::Start)
        };
        svg.text((tx, t + 14.0), &text, 12.0, anchor, "capacity");
    }
    for (s, pts) in &series {
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (xs.px(p.0), ys.px(p.1))).collect();
        svg.polyline(&line, s.color, 1.8, s.dash);
        for ((x, y), (_, v, p)) in line.iter().zip(pts) {
            let verdict = if p.pass { "pass" } else { "fail" };
            let tip = tip(p, s.name, *v);
            svg.marker(
                (*x, *y),
                4.0,
                s.color,
                p.pass,
                &format!("probe {verdict}"),
                &tip,
            );
        }
    }
    legend(
        &mut svg,
        series.iter().map(|(s, _)| (s.name, s.color, s.dash)),
    );
    svg.finish()
}

/// A point's hover text: the probe, its rates, this series' value and the verdict.
fn tip(p: &Probe, series: &str, ms: f64) -> String {
    let mut s = format!(
        "probe {} (trial {}): target {}, achieved {}, {series} {}",
        p.number,
        p.trial,
        crate::format::compact_rate(p.target),
        crate::format::compact_rate(p.achieved),
        human_duration(ms / 1e3)
    );
    if p.pass {
        s += ": passed";
    } else {
        let why = words::reasons(p);
        s += ": failed";
        if !why.is_empty() {
            s += &format!(" ({})", why.join("; "));
        }
    }
    s
}

/// The search's block in a run's section: what it found, the plot, every probe, its caveats.
pub(super) fn section(h: &mut String, label: &str, c: &CapacityFigures) {
    let _ = write!(
        h,
        "<h3>Capacity search</h3><p class=\"capacity\">capacity <strong>{}</strong>, \
         limited by {} · bracket {} · {} probe{} in {}</p>",
        esc(&words::headline(c)),
        esc(c.limit.word()),
        esc(&words::bracket(c)),
        c.probes.len(),
        plural(c.probes.len()),
        esc(&human_duration(c.elapsed_secs)),
    );
    if !c.slo.is_empty() {
        let _ = write!(h, "<p>slo: <code>{}</code></p>", esc(&c.slo.join(", ")));
    }
    let _ = write!(
        h,
        "<figure class=\"wide capacity-plot\">{}<figcaption class=\"note\">One point per \
         probe, at the throughput it achieved: filled passed, hollow failed. Dashed red lines: \
         the SLO's latency bounds; the green line: the capacity; the shaded span: its 95 % band. \
         Short probes only: long ones (<code>hold</code>) are in their own table.</figcaption></figure>",
        plot(label, c)
    );
    probes(h, c);
    for n in words::notes(c) {
        let _ = write!(h, "<p class=\"note\">note: {}</p>", esc(&n));
    }
    h.push_str(
        "<p class=\"note\">The plots and configuration below are those of the last probe at \
         the capacity.</p>",
    );
}

/// The short probes' table, then the long probes' (`hold`) under a caption of their own.
fn probes(h: &mut String, c: &CapacityFigures) {
    let cols = words::ProbeColumns::of(c);
    table(h, &cols, &c.probes);
    if let Some(hold) = c.hold.as_ref().filter(|l| !l.probes.is_empty()) {
        let _ = write!(
            h,
            "<p>long probes, {} each:</p>",
            esc(&human_duration(hold.secs))
        );
        table(h, &cols, &hold.probes);
    }
}

fn table(h: &mut String, cols: &words::ProbeColumns, probes: &[Probe]) {
    if probes.is_empty() {
        return;
    }
    h.push_str("<table class=\"probes\"><tr>");
    for head in cols.head().into_iter().chain(["why"]) {
        let _ = write!(h, "<th>{}</th>", esc(head));
    }
    h.push_str("</tr>");
    for p in probes {
        let row = cols.row(p);
        let last = row.len() - 1;
        h.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = match (i == last, p.pass) {
                (false, _) => "num",
                (true, true) => "pass",
                (true, false) => "fail",
            };
            let _ = write!(h, "<td class=\"{class}\">{}</td>", esc(cell));
        }
        let _ = write!(h, "<td>{}</td></tr>", esc(&words::reasons(p).join("; ")));
    }
    h.push_str("</table>");
}
