//! Partitions as a heat map of records acknowledged over time (`runs[].partition_counts`):
//! a row per partition, a column per interval, darker where more records landed. A hot or a
//! starved partition is a row that stands out.
//!
//! Readable at any partition count: past `MAX_ROWS` partitions a row is a group of
//! neighbouring partitions showing its busiest one (so one hot partition still shows), past
//! `MAX_COLS` columns neighbouring columns are summed. Neighbouring cells of one shade are one
//! rectangle, which keeps the SVG small at 1 000 partitions.

use super::plots::W;
use super::svg::{number, Anchor, Svg};
use crate::measure::timeline::PartitionCounts;

const MAX_ROWS: usize = 48;
const MAX_COLS: usize = 120;
/// Plot area: left, top, right; the bottom follows from the rows.
const LEFT: f64 = 86.0;
const TOP: f64 = 64.0;
const RIGHT: f64 = 616.0;
/// Shades from none to the most records, light to dark (ColorBrewer's Blues, 9 classes):
/// readable in grey too.
const SHADES: [&str; 9] = [
    "#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c",
    "#08306b",
];
const EMPTY: &str = "#ffffff";

/// Rows of partitions: (first partition, last partition) each.
fn row_groups(partitions: usize) -> Vec<(usize, usize)> {
    let per = partitions.div_ceil(MAX_ROWS).max(1);
    (0..partitions)
        .step_by(per)
        .map(|p| (p, (p + per - 1).min(partitions - 1)))
        .collect()
}

/// The heat map of a run's counts over time; None without counts (or without records).
/// `end_secs` is where the run's last record was (the series' end): the last column's rate
/// is over the part of it the run covered, and left out under a tenth of it, as the plots
/// over time leave out such an interval.
pub(super) fn partitions_over_time(c: &PartitionCounts, end_secs: Option<f64>) -> Option<String> {
    let n = c.acked.len();
    let cols = c.acked.iter().map(Vec::len).max().unwrap_or(0);
    if n == 0 || cols == 0 {
        return None;
    }
    let per_col = cols.div_ceil(MAX_COLS).max(1);
    let col_secs = c.column_secs() * per_col as f64;
    let covered =
        |k: usize| end_secs.map_or(col_secs, |e| (e - k as f64 * col_secs).clamp(0.0, col_secs));
    let mut shown_cols = cols.div_ceil(per_col);
    if shown_cols > 1 && covered(shown_cols - 1) < col_secs / 10.0 {
        shown_cols -= 1;
    }
    let rows = row_groups(n);
    // A cell: the busiest partition of the row's group, records/s over the shown column.
    let cell = |(first, last): (usize, usize), col: usize| -> (f64, usize) {
        (first..=last)
            .map(|p| {
                let sum: u64 = (col * per_col..((col + 1) * per_col).min(cols))
                    .map(|k| u64::from(c.acked[p].get(k).copied().unwrap_or(0)))
                    .sum();
                (sum as f64 / covered(col).max(1e-9), p)
            })
            .fold((0.0, first), |a, b| if b.0 > a.0 { b } else { a })
    };
    let grid: Vec<Vec<(f64, usize)>> = rows
        .iter()
        .map(|&r| (0..shown_cols).map(|k| cell(r, k)).collect())
        .collect();
    let max = grid.iter().flatten().map(|c| c.0).fold(0.0, f64::max);
    if max <= 0.0 {
        return None;
    }
    // Shades on a log scale from the quietest cell that had records to the busiest: one hot
    // cell would leave every other in the palest shade on a linear one.
    let lo = (grid.iter().flatten().map(|c| c.0))
        .filter(|v| *v > 0.0)
        .fold(max, f64::min);
    let classes = (SHADES.len() - 1) as f64;
    let span = (max / lo).ln();
    let bound = |k: f64| lo * (max / lo).powf(k / classes);
    let row_h = (360.0 / rows.len() as f64).clamp(6.0, 22.0);
    let bottom = TOP + row_h * rows.len() as f64;
    let height = bottom + 78.0;
    let col_w = (RIGHT - LEFT) / shown_cols as f64;
    let grouped = rows.len() < n;
    let title = "Records acknowledged per partition over time";
    let mut svg = Svg::new(W, height, title);
    svg.text((W / 2.0, 24.0), title, 16.0, Anchor::Middle, "title");
    let sub = if grouped {
        format!(
            "{n} partitions, {} per row (its busiest shown); records/s per {}",
            rows[0].1 + 1,
            secs(col_secs)
        )
    } else {
        format!("records/s per {}", secs(col_secs))
    };
    let sub = format!("{sub}, log shades");
    svg.text((W / 2.0, 44.0), &sub, 12.0, Anchor::Middle, "legend");
    let shade = |v: f64| {
        if v <= 0.0 {
            return (EMPTY, 0usize);
        }
        let k = if span > 0.0 {
            1 + ((v / lo).ln() / span * classes).floor().min(classes - 1.0) as usize
        } else {
            SHADES.len() - 1
        };
        (SHADES[k], k)
    };
    let label_every = rows.len().div_ceil(16).max(1);
    for (i, (&(first, last), cells)) in rows.iter().zip(&grid).enumerate() {
        let y = TOP + i as f64 * row_h;
        // Runs of one shade become one rectangle.
        let mut k = 0;
        while k < cells.len() {
            let (fill, level) = shade(cells[k].0);
            let mut end = k + 1;
            while end < cells.len() && shade(cells[end].0).1 == level {
                end += 1;
            }
            let peak = cells[k..end]
                .iter()
                .fold(cells[k], |a, b| if b.0 > a.0 { *b } else { a });
            let tip = format!(
                "{}, {}–{}: up to {}/s (partition {})",
                name(first, last),
                secs(k as f64 * col_secs),
                secs(end as f64 * col_secs),
                number(peak.0),
                peak.1
            );
            svg.rect(
                (LEFT + k as f64 * col_w, y),
                (col_w * (end - k) as f64 + 0.3, row_h + 0.3),
                fill,
                Some(&tip),
            );
            k = end;
        }
        if i % label_every == 0 {
            svg.text(
                (LEFT - 6.0, y + row_h / 2.0 + 4.0),
                &name(first, last),
                11.0,
                Anchor::End,
                "tick",
            );
        }
    }
    // Time ticks: about six.
    let total = shown_cols as f64 * col_secs;
    let step = nice_step(total / 6.0);
    let mut t = 0.0;
    while t <= total + 1e-9 {
        let x = LEFT + (t / total) * (RIGHT - LEFT);
        svg.line((x, bottom), (x, bottom + 5.0), "#57606a", 1.0);
        svg.text((x, bottom + 18.0), &secs(t), 11.0, Anchor::Middle, "tick");
        t += step;
    }
    svg.text(
        ((LEFT + RIGHT) / 2.0, bottom + 36.0),
        "time since the measured start",
        13.0,
        Anchor::Middle,
        "axis",
    );
    // The shade legend: none, then each class's upper bound.
    let lx = LEFT;
    let ly = bottom + 50.0;
    let sw = (RIGHT - LEFT) / (SHADES.len() + 1) as f64;
    svg.rect((lx, ly), (sw, 10.0), EMPTY, Some("none"));
    svg.text(
        (lx + sw / 2.0, ly + 23.0),
        "0",
        10.0,
        Anchor::Middle,
        "legend",
    );
    for (i, s) in SHADES.iter().enumerate().skip(1) {
        let x = lx + i as f64 * sw;
        svg.rect((x, ly), (sw, 10.0), s, None);
        let hi = bound(i as f64);
        svg.text(
            (x + sw / 2.0, ly + 23.0),
            &format!("≤{}", number(hi)),
            10.0,
            Anchor::Middle,
            "legend",
        );
    }
    Some(svg.finish())
}

fn name(first: usize, last: usize) -> String {
    if first == last {
        format!("p{first}")
    } else {
        format!("p{first}–{last}")
    }
}

fn secs(s: f64) -> String {
    crate::format::human_duration(s)
}

/// 1, 2 or 5 × a power of ten, at least `x`.
fn nice_step(x: f64) -> f64 {
    let x = x.max(1e-3);
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= x)
        .unwrap_or(10.0 * p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(partitions: usize, cols: usize, hot: usize) -> PartitionCounts {
        PartitionCounts {
            interval_secs: 1.0,
            per_column: 1,
            acked: (0..partitions)
                .map(|p| vec![if p == hot { 900 } else { 100 }; cols])
                .collect(),
            read: Vec::new(),
        }
    }

    #[test]
    fn six_partitions_get_a_row_each_and_the_hot_one_the_darkest_shade() {
        let svg = partitions_over_time(&counts(6, 30, 4), None).unwrap();
        for p in 0..6 {
            assert!(svg.contains(&format!(">p{p}</text>")), "row p{p}");
        }
        assert!(svg.contains("(partition 4)"));
        // Each row's uniform cells merge: one rectangle per row, plus the legend's.
        assert!(svg.contains(SHADES[8]));
    }

    #[test]
    fn a_thousand_partitions_are_grouped_and_the_hot_one_still_shows() {
        let svg = partitions_over_time(&counts(1000, 256, 517), Some(256.0)).unwrap();
        assert!(svg.contains("1000 partitions, 21 per row"), "grouped rows");
        assert!(
            svg.contains("(partition 517)"),
            "its busiest partition named"
        );
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
    }

    #[test]
    fn a_last_column_the_run_barely_covered_is_left_out() {
        // A row of one rate is one rectangle, its tip the whole span.
        let whole = partitions_over_time(&counts(2, 10, 0), Some(10.0)).unwrap();
        assert!(whole.contains("p0, 0–10s"), "the tenth column is drawn");
        let short = partitions_over_time(&counts(2, 11, 0), Some(10.05)).unwrap();
        assert!(
            short.contains("p0, 0–10s"),
            "the eleventh, 50ms of it, is not"
        );
        assert!(!short.contains("11s"));
    }

    #[test]
    fn nothing_acknowledged_draws_nothing() {
        assert!(partitions_over_time(&counts(3, 0, 9), None).is_none());
    }
}
