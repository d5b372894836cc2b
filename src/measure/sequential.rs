//! `repeat = auto(±5%, max 20)`: when a repeated run has its answer. A group-sequential rule.
//!
//! The trials are looked at only at preset stages ([`STAGES`] below `max`, and `max`), and at
//! each look every judged figure's median gets its order-statistic interval (`stats`) at the
//! level 1 − α/K, K the number of looks. By Bonferroni over the looks, the chance that *any*
//! look's interval misses the true median is at most K · α/K = α; so the interval of the look
//! where the trials stop covers with probability ≥ 1 − α, however the stop was chosen. It is
//! distribution-free like the fixed-n interval, and conservative (the union bound ignores that
//! the looks share trials). A rule that looked after every trial at 1 − α would stop on a
//! luckily narrow interval and cover less than it says; the tests simulate both.
//!
//! It stops at the first look where every judged figure's interval lies within ±`within` of
//! its median (the larger of hi − median and median − lo: the whole interval, not only its mean
//! half-width), or at `max`.

use serde::{Deserialize, Serialize};

use super::stats::{median_interval, min_trials, Estimate};
use super::trials::HEADLINE;
use crate::model::Metric;

/// Where the trials may stop: few early looks (each costs level), then wider apart.
pub const STAGES: &[u32] = &[8, 10, 12, 16, 20, 25, 32, 40, 50, 64, 80, 100];

/// The fewest trials `max` may allow: the first stage. Below it no look could give an interval
/// at an adjusted level (at 99 %, the level of five looks, an interval needs 8 trials).
pub const FIRST_STAGE: u32 = crate::model::AutoRepeat::FIRST_LOOK;

/// The looks of a run and their level.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// Trials at each look, ascending; the last is `max`.
    pub looks: Vec<u32>,
    /// The coverage promised for the interval where the trials stop (0.95).
    pub level: f64,
    /// Each look's level: 1 − (1 − level)/K.
    pub look_level: f64,
}

/// The looks for at most `max` trials (≥ [`FIRST_STAGE`]) at the overall `level`.
pub fn schedule(max: u32, level: f64) -> Schedule {
    let mut looks: Vec<u32> = STAGES.iter().copied().filter(|&s| s < max).collect();
    looks.push(max);
    let look_level = 1.0 - (1.0 - level) / looks.len() as f64;
    // A stage too small for an interval at the look's level is dropped. α/K stays as counted
    // with it: fewer looks only cover more.
    let need = min_trials(look_level).map_or(u32::MAX, |n| n as u32);
    looks.retain(|&n| n >= need || n == max);
    Schedule {
        looks,
        level,
        look_level,
    }
}

/// Why the trials of an auto-repeated run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Every judged figure's interval was within the target.
    Reached,
    /// `max` trials ran without reaching it.
    Max,
    /// The run stopped before either (interrupted, or a trial failed).
    Cut,
}

/// What `repeat = auto` reached for a run, in its result (`Trials::auto`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutoOutcome {
    /// The target: the interval's half-extent relative to the median (0.05).
    pub within: f64,
    pub max: u32,
    /// The coverage of the intervals shown, over all looks (0.95).
    pub level: f64,
    /// The level each look's interval was made at (and the run's intervals are).
    pub look_level: f64,
    /// Trials at each planned look.
    pub looks: Vec<u32>,
    /// The figures judged (`throughput`, `ack.p99`).
    pub figures: Vec<String>,
    /// The widest judged figure's half-extent at the last look (relative); None before any look.
    pub reached: Option<f64>,
    pub stop: Stop,
}

impl AutoOutcome {
    /// The level each look needs for an interval that covers at `level` over all the looks
    /// (`with 99% confidence` on an auto-repeated run): the same Bonferroni share.
    pub fn adjusted(&self, level: f64) -> f64 {
        1.0 - (1.0 - level) * (1.0 - self.look_level) / (1.0 - self.level)
    }
}

/// The headline figures (`trials::HEADLINE`) `repeat = auto` judges of a run, given the metrics
/// the assertions read from it: those among the headline ones, and a capacity search's
/// `capacity` (its SLO is judged inside each probe; the search's answer is what a trial
/// measures). Throughput when that leaves none. The second list: metrics read that are not
/// headline figures, which no trial summarises and the rule cannot judge.
pub fn judged(read: &[Metric], capacity: bool) -> (Vec<(&'static str, Metric)>, Vec<Metric>) {
    let mut out: Vec<(&'static str, Metric)> = HEADLINE
        .iter()
        .filter(|(_, m)| read.contains(m) || (capacity && *m == Metric::Capacity))
        .copied()
        .collect();
    if out.is_empty() {
        out.push(("throughput", Metric::Throughput));
    }
    let left: Vec<Metric> = read
        .iter()
        .filter(|m| !HEADLINE.iter().any(|(_, h)| h == *m))
        .copied()
        .collect();
    (out, left)
}

/// A figure's interval as a share of its median: the larger of hi − median and median − lo,
/// over |median|. 0 for a point interval; infinite when the median is 0 and the interval not.
pub fn extent(e: &Estimate) -> f64 {
    let d = (e.hi - e.median).max(e.median - e.lo);
    if d == 0.0 {
        0.0
    } else if e.median == 0.0 || d.is_nan() {
        f64::INFINITY
    } else {
        d / e.median.abs()
    }
}

/// The widest extent among the figures' intervals at `level`; None when no figure has values.
pub fn widest<'a>(figures: impl IntoIterator<Item = &'a [f64]>, level: f64) -> Option<f64> {
    figures
        .into_iter()
        .filter_map(|v| median_interval(v, level))
        .map(|e| extent(&e))
        .reduce(f64::max)
}

/// What a look saw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look {
    /// The widest judged figure's extent; None when no figure had values.
    pub widest: Option<f64>,
    /// Why to stop here; None to go on.
    pub stop: Option<Stop>,
}

impl Schedule {
    /// After `n` trials: None when `n` is not a look, else what the look saw. `figures` are
    /// each judged figure's values so far.
    pub fn look<'a>(
        &self,
        n: u32,
        within: f64,
        figures: impl IntoIterator<Item = &'a [f64]>,
    ) -> Option<Look> {
        if !self.looks.contains(&n) {
            return None;
        }
        let widest = widest(figures, self.look_level);
        let max = self.looks.last().copied().unwrap_or(n);
        let stop = if widest.is_some_and(|w| w <= within) {
            Some(Stop::Reached)
        } else {
            (n >= max).then_some(Stop::Max)
        };
        Some(Look { widest, stop })
    }

    /// After `n` trials: None to go on, or why to stop and the widest extent looked at.
    pub fn decide<'a>(
        &self,
        n: u32,
        within: f64,
        figures: impl IntoIterator<Item = &'a [f64]>,
    ) -> Option<(Stop, Option<f64>)> {
        let l = self.look(n, within, figures)?;
        l.stop.map(|s| (s, l.widest))
    }
}

#[cfg(test)]
#[path = "sequential_tests.rs"]
mod tests;
