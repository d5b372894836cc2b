//! Steady state (`steady_after`): how far into the measured phase a run's per-interval series
//! stopped settling, so a figure over the measured phase is known to describe a settled
//! system — or is said not to.
//!
//! The rule is a heuristic of our own, not MSER-5. It starts from MSER's statistic (White
//! 1997): the squared standard error of the mean of what remains after a truncation, over
//! batch means of 5 intervals. Then it departs from the published rule (White, Cobb & Spratt
//! 2000) in four ways, each measured against it on the same simulated series
//! (steady_mser5_tests.rs, docs/results.md):
//! - the batches start at the truncation tried, not at the series' start, so the cut has the
//!   resolution of one interval;
//! - MSER's minimum is taken as a point inside the steady state, and the start is found by
//!   walking back from it to the last two stray windows in a row;
//! - the search ends at half the series, and "never steady" comes from a trend test of what
//!   remains, not from a minimum in the second half: published MSER-5 calls 42 % of flat
//!   series of 100 intervals never steady, because a short series' last batches are often
//!   quiet by chance;
//! - a departure counts only past a floor (5 % of a rate, 10 % of a latency).
//!
//! Each series (the achieved rate, or for a planned rate its deviation from the plan; ack
//! p50 and p99; end-to-end p50 and p99 when a consumer reads, unless the plan's rate changes,
//! which changes latency on purpose) gets its own start; `steady_after` is the latest of them.

use serde::{Deserialize, Serialize};

use super::series::{SeriesPoint, TimeSeries};

/// Points batched into one mean: batching damps the autocorrelation of adjacent intervals,
/// which would otherwise make a quiet stretch look like the settled state.
const BATCH: usize = 5;

/// Fewer intervals than this (12 batches) are too short to tell: with half of them the most a
/// truncation may take, the rest are too few batches for their variance to mean much (at
/// 40 intervals, a flat simulated series was called unsteady one time in three).
pub const MIN_POINTS: usize = 60;

/// A series needs twice this many batches to be weighed: the truncation takes at most half.
const MIN_TAIL_BATCHES: usize = 4;

/// Standard errors by which a window must stray from the steady mean to count.
const Z: f64 = 3.5;

/// Standard errors of the slope that make a trend (the batch means still correlate a little,
/// which the slope's standard error ignores: hence more than `Z`).
const Z_NEVER: f64 = 4.0;

/// Longer series are averaged down to about this many points first: the search is quadratic.
const MAX_POINTS: usize = 2_000;

/// What the measured phase's series say about steadiness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SteadyAfter {
    /// Every series was steady from `secs` into the measured phase on; `series` is the one
    /// that settled last.
    Steady { secs: f64, series: SteadySeries },
    /// `series` did not settle within the first half of the measured phase.
    Never { series: SteadySeries },
    /// Fewer than `MIN_POINTS` intervals of the measured phase: too short to tell.
    TooShort { points: usize },
}

/// A series the detector judges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadySeries {
    /// Acknowledged records per second (unlimited rate).
    Rate,
    /// Acknowledged records per interval less those the plan asked for, over the plan's
    /// mean: a shape or ramp is non-stationary on purpose, keeping to it is not.
    RateVsPlan,
    AckP50,
    AckP99,
    E2eP50,
    E2eP99,
}

impl SteadySeries {
    /// In the report's words.
    pub fn words(self) -> &'static str {
        match self {
            SteadySeries::Rate => "the rate",
            SteadySeries::RateVsPlan => "the rate against the plan",
            SteadySeries::AckP50 => "ack p50",
            SteadySeries::AckP99 => "ack p99",
            SteadySeries::E2eP50 => "e2e p50",
            SteadySeries::E2eP99 => "e2e p99",
        }
    }
}

impl SteadyAfter {
    /// Seconds into the measured phase, when it became steady.
    pub fn secs(&self) -> Option<f64> {
        match self {
            SteadyAfter::Steady { secs, .. } => Some(*secs),
            _ => None,
        }
    }
}

/// Where the rule put the truncation of one series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Truncation {
    /// Steady from this point (index) on.
    At(usize),
    /// The best truncation lies past the first half: never steady.
    Never,
}

/// The truncation heuristic over `x` in time order: MSER's statistic, then two guards of our
/// own. MSER's cut `d` (at most half the series) minimises the squared standard error of the
/// mean of the batch means from `d` on; batches start at `d`, so the answer has the resolution
/// of one point, not of one batch. None when `x` is too short to weigh.
///
/// MSER alone, on a series as short as a benchmark's (tens of batches, not thousands), often
/// cuts far too late: a flat but noisy series' tail is as likely to be quiet by chance as its
/// start (a few times in ten on simulated series), and after a ramp it cuts anywhere up to
/// the middle. So MSER's cut is taken as a point inside the steady state, and two guards of
/// our own place and check it:
/// - walking back from the cut, the steady state begins after the last two windows of `BATCH`
///   points in a row whose means differ from the steady mean by more than `Z` standard errors;
/// - the series never became steady when what remains still has a trend: the slope of its
///   batch means is more than `Z_NEVER` standard errors from 0.
///
/// The standard errors come from the differences of successive batch means of the steady
/// part, which a slow trend does not inflate.
///
/// Only departures larger than `floor` (in the series' units) count: a statistically clear
/// shift too small to matter — a latency flipping between two buckets 10 % apart for a while —
/// is not a transient.
pub(crate) fn truncation(x: &[f64], floor: f64) -> Option<Truncation> {
    let n = x.len();
    if n < MIN_TAIL_BATCHES * BATCH * 2 {
        return None;
    }
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0.0);
    for v in x {
        prefix.push(prefix.last().copied().unwrap_or(0.0) + v);
    }
    let mean_of = |a: usize, b: usize| (prefix[b] - prefix[a]) / (b - a) as f64;
    let batches = |d: usize| -> Vec<f64> {
        (0..(n - d) / BATCH)
            .map(|j| mean_of(d + j * BATCH, d + (j + 1) * BATCH))
            .collect()
    };
    let mut best: Option<(usize, f64)> = None;
    for d in 0..=n / 2 {
        let means = batches(d);
        let k = means.len() as f64;
        let mean = means.iter().sum::<f64>() / k;
        let sse: f64 = means.iter().map(|m| (m - mean).powi(2)).sum();
        let stat = sse / (k * k);
        // The earliest of (numerically) equal minima: a constant series is steady from 0.
        if best.map_or(true, |(_, b)| stat < b * (1.0 - 1e-9) - 1e-300) {
            best = Some((d, stat));
        }
    }
    let (cut, _) = best?;
    // The variance of one batch mean, from successive differences (a trend adds little).
    let means = batches(cut);
    let diffs: f64 = means.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum();
    let var_batch = diffs / (2 * (means.len() - 1)) as f64;
    let steady = mean_of(cut, n);
    // A window of BATCH points differs from the steady mean (itself over n - cut points).
    let window_se = (var_batch * (1.0 + BATCH as f64 / (n - cut) as f64)).sqrt();
    let off = |a: usize, b: usize| {
        let gap = (mean_of(a, b) - steady).abs();
        gap > Z * window_se && gap > 1e-9 * steady.abs() && gap > floor
    };
    // Two windows in a row, not one: MSER cut where the points just before happened to
    // stray, and noise strays in single windows; a transient strays in several.
    let mut d = cut;
    while d >= 2 * BATCH && !(off(d - 2 * BATCH, d - BATCH) && off(d - BATCH, d)) {
        d -= 1;
    }
    if d < 2 * BATCH {
        // Too few points before for two windows: what is left is judged as one.
        d = if d > 0 && off(0, d) { d } else { 0 };
    } else {
        // The last stray window may end in steady points: it ends after its last point that
        // strays by itself (by as much as a window must), so a step is placed to the point.
        let strays = |i: usize| (x[i] - steady).abs() > (Z * window_se).max(floor);
        d = (d - BATCH..d)
            .rev()
            .find(|i| strays(*i))
            .map_or(d - BATCH, |i| i + 1);
    }
    // A trend through the steady part: the slope of its batch means against the scatter
    // about the fitted line (which a trend does not inflate).
    let means = batches(d);
    let (t, slope) = trend_t(&means);
    // A trend counts when it is clear and moves the series by more than the floor.
    Some(if t > Z_NEVER && slope.abs() * means.len() as f64 > floor {
        Truncation::Never
    } else {
        Truncation::At(d)
    })
}

/// The t statistic of the least-squares slope of `y` (by index), and the slope; 0 when it
/// cannot be fitted.
fn trend_t(y: &[f64]) -> (f64, f64) {
    let k = y.len() as f64;
    if y.len() < 3 {
        return (0.0, 0.0);
    }
    let xm = (k - 1.0) / 2.0;
    let ym = y.iter().sum::<f64>() / k;
    let sxx: f64 = (0..y.len()).map(|j| (j as f64 - xm).powi(2)).sum();
    let sxy: f64 = y
        .iter()
        .enumerate()
        .map(|(j, v)| (j as f64 - xm) * (v - ym))
        .sum();
    let b = sxy / sxx;
    let resid: f64 = y
        .iter()
        .enumerate()
        .map(|(j, v)| (v - ym - b * (j as f64 - xm)).powi(2))
        .sum();
    let se = (resid / (k - 2.0) / sxx).sqrt();
    let t = if se > 1e-12 * ym.abs().max(1e-300) {
        (b / se).abs()
    } else if b.abs() > 1e-12 * ym.abs() {
        f64::INFINITY // a noiseless line
    } else {
        0.0
    };
    (t, b)
}

/// Judges a run's series. Only whole intervals in which the run was sending count: the last
/// sending one is partial, and what follows it is the drain.
pub fn detect(series: &TimeSeries) -> SteadyAfter {
    let end = series.points.iter().rposition(|p| p.sent > 0).unwrap_or(0);
    let points = &series.points[..end];
    if points.len() < MIN_POINTS {
        return SteadyAfter::TooShort {
            points: points.len(),
        };
    }
    // Merged down when long, so the quadratic search stays within milliseconds.
    let group = points.len().div_ceil(MAX_POINTS);
    let mut latest: Option<(f64, SteadySeries)> = None;
    for (name, values) in judged(points) {
        let (times, xs) = coarsen(&values, group);
        let Some(t) = truncation(&xs, floor(name, &xs)) else {
            continue; // too few intervals with a value (latencies of a slow run)
        };
        match t {
            Truncation::Never => return SteadyAfter::Never { series: name },
            Truncation::At(d) => {
                let secs = times[d];
                if latest.map_or(true, |(s, _)| secs > s) {
                    latest = Some((secs, name));
                }
            }
        }
    }
    match latest {
        Some((secs, series)) => SteadyAfter::Steady { secs, series },
        None => SteadyAfter::TooShort {
            points: points.len(),
        },
    }
}

/// The smallest departure that counts, in a series' units: 5 % of the rate (of the plan's
/// mean, for the deviation from it), 10 % of a latency (on its log scale). Below these, a
/// shift is real perhaps but changes no conclusion: ack p50 at 2k/s flips between 3.6 and
/// 4.0 ms buckets for seconds at a time on a quiet broker.
fn floor(name: SteadySeries, xs: &[f64]) -> f64 {
    match name {
        SteadySeries::Rate => 0.05 * (xs.iter().sum::<f64>() / xs.len().max(1) as f64).abs(),
        SteadySeries::RateVsPlan => 0.05,
        _ => 1.1f64.ln(),
    }
}

/// Every series judged, as (start of the interval, value) pairs; intervals without a value
/// (no latency recorded, a pause in the plan) are left out.
fn judged(points: &[SeriesPoint]) -> Vec<(SteadySeries, Vec<(f64, f64)>)> {
    let mut out = Vec::new();
    let planned: Vec<f64> = points.iter().filter_map(|p| p.target_rate).collect();
    let rate = |p: &SeriesPoint| p.acked as f64 / p.span_secs.max(1e-9);
    if planned.is_empty() {
        out.push((
            SteadySeries::Rate,
            points.iter().map(|p| (p.t_secs, rate(p))).collect(),
        ));
    } else {
        // Over the plan's mean rather than each interval's target: a ramp's first intervals
        // plan few records, and a relative deviation there is mostly rounding.
        let mean = planned.iter().sum::<f64>() / planned.len() as f64;
        let deviation = points
            .iter()
            .filter_map(|p| {
                let target = p.target_rate.filter(|t| *t > 0.0)?;
                Some((p.t_secs, (rate(p) - target) / mean.max(1e-9)))
            })
            .collect();
        out.push((SteadySeries::RateVsPlan, deviation));
    }
    // A plan whose rate changes (a shape, a ramp) changes latency with it on purpose: only the
    // rate against the plan is judged then.
    let (lo, hi) = planned
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), r| (l.min(*r), h.max(*r)));
    if !planned.is_empty() && hi > lo * 1.01 {
        return out;
    }
    // Latency on a log scale: a percentile's noise grows with its level.
    let log = |f: fn(&SeriesPoint) -> Option<f64>| -> Vec<(f64, f64)> {
        points
            .iter()
            .filter_map(|p| Some((p.t_secs, f(p)?.max(1e-6).ln())))
            .collect()
    };
    out.push((SteadySeries::AckP50, log(|p| p.ack_p50_ms)));
    out.push((SteadySeries::AckP99, log(|p| p.ack_p99_ms)));
    out.push((SteadySeries::E2eP50, log(|p| p.e2e_p50_ms)));
    out.push((SteadySeries::E2eP99, log(|p| p.e2e_p99_ms)));
    out
}

/// `values` averaged in groups of `group` (1: as they are): each group's start time and mean.
fn coarsen(values: &[(f64, f64)], group: usize) -> (Vec<f64>, Vec<f64>) {
    values
        .chunks(group.max(1))
        .map(|c| (c[0].0, c.iter().map(|v| v.1).sum::<f64>() / c.len() as f64))
        .unzip()
}

#[cfg(test)]
#[path = "steady_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "steady_mser5_tests.rs"]
mod mser5_tests;
