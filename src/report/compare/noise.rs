//! A change judged against the noise: when both files repeated a run (`repeat = N`), each
//! figure's trials on both sides go through `measure::stats::change` (the exact Mann–Whitney
//! test for whether it moved, a bootstrap interval for how far). A bound then fails only when
//! the change is significant at the level asked and past the bound; with one trial on a side
//! there is nothing to tell noise by, and the gate is the plain comparison it always was.

use crate::measure::stats::{self, Change};
use crate::measure::RunResult;
use crate::model::Metric;

/// The significance level when `--alpha` is not given.
pub(crate) const ALPHA: f64 = 0.05;
/// A significant change smaller than this (a fraction) is called negligible, not better or
/// worse: a paced run's throughput is 0.4 % lower with a 20 ms linger, and that is not news.
pub(crate) const NEGLIGIBLE: f64 = 0.01;
/// The level of the change's interval.
pub(crate) const LEVEL: f64 = 0.95;
/// Resampling is seeded: the same two files compare the same way every time.
const SEED: u64 = 0x006b_626e_6f69_7365;

/// Each trial's value of `m`, for a run repeated at least twice.
fn trials(r: &RunResult, m: Metric) -> Option<Vec<f64>> {
    r.trials
        .as_ref()
        .map(|t| t.values(m))
        .filter(|v| v.len() >= 2)
}

/// The change of `m` between the sides' trials; None when either side has fewer than two, or
/// for a count (compared as totals: a loss is a loss, whatever the noise).
pub(crate) fn change(b: &RunResult, cur: &RunResult, m: Metric, alpha: f64) -> Option<Change> {
    if m.summed() {
        return None;
    }
    let (bv, cv) = (trials(b, m)?, trials(cur, m)?);
    Some(stats::change(&bv, &cv, alpha, LEVEL, SEED))
}

/// How many trials a side has (1 for a run that was not repeated).
pub(crate) fn count(r: &RunResult) -> usize {
    r.trials.as_ref().map_or(1, |t| t.results.len().max(1))
}

/// `+3.1% (−2.0%..+8.4%)`: the estimated change and its interval.
pub(crate) fn change_text(c: &Change) -> Option<String> {
    let pct = |x: f64| format!("{:+.1}%", x * 100.0);
    let r = c.ratio?;
    Some(match (c.lo, c.hi) {
        (Some(lo), Some(hi)) => format!("{} ({}..{})", pct(r), pct(lo), pct(hi)),
        _ => pct(r),
    })
}
