//! Change points in a series of results: where a figure's distribution changed, found with
//! E-Divisive with means and its permutation test (Matteson & James, "A Nonparametric Approach
//! for Multiple Change Point Analysis of Multivariate Data", JASA 2014), the method of MongoDB's
//! performance CI and Apache Otava (formerly DataStax's Hunter). Pure: no I/O, no clock; the
//! permutations come from a seeded [`Rng`], so the same series and seed give the same answer.
//!
//! - **The statistic** is the energy divergence between two adjacent segments X = Z[s..τ) and
//!   Y = Z[τ..κ) of a cluster [s, e): Q̂ = mk/(m+k) · (2/(mk)·Σ|x−y| − Σ|x−x'|/C(m,2) −
//!   Σ|y−y'|/C(k,2)), the average distance between the segments less the average distances
//!   within them (the exponent is 1). It is zero in expectation when both come from one
//!   distribution and grows with any difference between them, of location or of shape. Y may
//!   end before the cluster does (κ < e), as in the paper, so a later change does not blur an
//!   earlier one. The best (τ, κ) over all clusters is the candidate (`scan.rs`).
//! - **The significance test permutes** (`permutation.rs`). The points are shuffled within
//!   each cluster and the best candidate found again; the p-value is the share of permutations
//!   whose best is at least the observed one. Under no change the points are exchangeable, so
//!   the test's size is at most its level whatever the distribution — skewed latencies
//!   included. A candidate that clearly cannot reach its level stops early (Besag & Clifford's
//!   sequential p-value), so the last test of every series, which fails, costs a few
//!   permutations; one that can runs at least [`PERMUTATIONS`]. A candidate that no
//!   permutation reached gets its p-value below 1 / (R + 1) extrapolated from the
//!   permutations' tail, for ranking only: the decision is the permutation p-value's.
//! - **Hierarchical, as the paper does:** a significant candidate splits its cluster and the
//!   search starts again over every cluster; the first candidate that is not significant ends
//!   it. Otava (after Hunter) instead runs the search in sliding windows of 50 points with a
//!   Student t-test at p < 0.001 computed after the split is chosen; a history here holds tens
//!   to a few hundred runs, where the whole series is cheap and the permutation test is exact.
//! - **The figures of a series are one family** (`family.rs`): a series tests 5–11 figures,
//!   and each at α would give a quiet history five to eleven chances. Holm's step-down orders
//!   the figures by their strongest candidate's p-value and tests them at α/K, α/(K−1), …;
//!   on pure noise the chance that any figure shows a change is then at most α.
//! - **A point may hold several values** (a repeated run's trials). Distances are between
//!   values, a split falls only between points, and a permutation moves a point's values
//!   together: trials of one run share its conditions and are not exchangeable with another
//!   run's.
//! - **A segment has at least [`MIN_SIZE`] points**: a single odd run is an outlier, not a new
//!   level, and a change at the newest runs shows once that many runs have followed it.
//! - **A segment is summarised as the search sees it:** by its median, or for a figure searched
//!   on a log scale (latencies) by its geometric mean, the mean on that scale. A mean would be
//!   pulled up by the one trial stalled at 100× that the log scale keeps from hiding a change.
//! - **A change smaller than [`MIN_EFFECT`] is not reported**, significant or not: a history of
//!   a few hundred runs finds changes of a fraction of a per cent that change no decision.

mod family;
mod permutation;
mod scan;

use serde::{Deserialize, Serialize};

pub use family::{family, Found, Input, Segment};

/// The family-wise significance level over a series' figures. On Gaussian noise of σ, with
/// one value a run, a shift of 1σ, 2σ and 3σ is found alone within ±1 result in 28 %, 81 % and
/// 96 % of series of 30–200 results at level α (one figure), and in 21 %, 75 % and 96 % at
/// α/8 (the strongest of eight figures under Holm). On pure noise 0.88 % of series of eight figures show a change in any of them (5 000
/// series; bench/changepoint.sh, docs/results.md).
pub const ALPHA: f64 = 0.01;

/// Permutations per test, at least: with them the smallest p-value is 0.001, Holm's level
/// for 10 figures at α = 0.01. More when a family needs it (R + 1 ≥ K / α).
pub const PERMUTATIONS: usize = 999;

/// The fewest points on either side of a change point.
pub const MIN_SIZE: usize = 3;

/// The smallest change reported: 5 % of the figure's level before it. The precision that
/// `repeat = auto` aims a figure at (its median known within ±5 %); a change smaller than
/// what a run can be known to is real perhaps, but no reason to act.
pub const MIN_EFFECT: f64 = 0.05;

/// How the search runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// The family-wise significance level.
    pub alpha: f64,
    /// Permutations per test, at least (more when the family needs them).
    pub permutations: usize,
    /// The fewest points in a segment (at least 1).
    pub min_size: usize,
    /// The smallest relative change reported (0: every significant one).
    pub min_effect: f64,
    /// Seeds the permutations.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            alpha: ALPHA,
            permutations: PERMUTATIONS,
            min_size: MIN_SIZE,
            min_effect: MIN_EFFECT,
            seed: 0x6b62_6368_616e_6765,
        }
    }
}

impl Settings {
    /// The permutations a family of `k` figures draws for a candidate that can reach its
    /// level: enough for 1 / (R + 1) ≤ α / k, and never fewer than [`Settings::permutations`].
    pub fn permutations_for(&self, k: usize) -> usize {
        let needed = (k.max(1) as f64 / self.alpha).ceil() as usize;
        self.permutations
            .max(needed.saturating_sub(1))
            .min(1_000_000)
    }
}

/// How a figure's values are compared and summarised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// As they are; a segment's summary is its median.
    #[default]
    Linear,
    /// Their logarithms (positive values whose rare stalls of 100× would otherwise outweigh
    /// a change of the level); a segment's summary is its geometric mean.
    Log,
}

/// A change point: the series is split before point `index`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The first point after the change (from 0).
    pub index: usize,
    /// The permutation test's p-value when the point was found.
    pub p_value: f64,
    /// When no permutation reached the statistic: the p-value extrapolated beyond them
    /// (smaller than `p_value`, which is then 1 / (R + 1)), so strong changes rank.
    pub p_tail: Option<f64>,
    /// The level the test was held to (Holm's, within the series' figures).
    pub level: f64,
    /// Permutations drawn.
    pub permutations: usize,
    /// The energy statistic Q̂ of the split.
    pub statistic: f64,
    /// The summary (median, or geometric mean on a log scale) of every value from the
    /// previous change point (or the start) to this one, and from this one to the next (or
    /// the end).
    pub before: f64,
    pub after: f64,
    /// How many points those segments hold.
    pub points_before: usize,
    pub points_after: usize,
}

impl ChangePoint {
    /// after / before − 1 (a fraction); None when the summary before is 0.
    pub fn change(&self) -> Option<f64> {
        let r = self.after / self.before - 1.0;
        (self.before != 0.0 && r.is_finite()).then_some(r)
    }

    /// The p-value to show and rank by: the extrapolated one when no permutation reached the
    /// statistic, else the permutation p-value.
    pub fn p_shown(&self) -> f64 {
        self.p_tail.unwrap_or(self.p_value)
    }
}

/// The change points of one series (a family of one, at level α) whose points each hold one
/// or more values (NaN values are left out), in order of index.
pub fn change_points(points: &[Vec<f64>], s: &Settings) -> Vec<ChangePoint> {
    change_points_on(points, Scale::Linear, s)
}

/// [`change_points`] on `scale`.
pub fn change_points_on(points: &[Vec<f64>], scale: Scale, s: &Settings) -> Vec<ChangePoint> {
    let input = Input {
        points,
        scale,
        seed: s.seed,
    };
    family(&[input], s)
        .pop()
        .map(|f| f.change_points)
        .unwrap_or_default()
}

#[cfg(test)]
mod search_tests;

#[cfg(test)]
mod family_tests;

#[cfg(test)]
mod bench_tests;
