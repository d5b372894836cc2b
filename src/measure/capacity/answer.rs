//! What a search's short probes say: a capacity with its band, or why none is claimed (not
//! narrowed, no stable rate, nothing passed, everything passed), and the rates that turn the
//! curve or disagree.
//!
//! **A claim** needs a band (at the calibrated cutoff) bounded on both sides and at most a
//! doubling wide ([`NARROWED`]); a rule on the fitted slope (`logistic::MIN_SLOPE`, off) can
//! also be asked of it. The band's ends are rounded outward to three significant
//! digits, as the report prints them.

use super::logistic::Fit;
use super::search::{round3, scaled3, Search};
use super::{Bracket, NonMonotone};
use crate::model::capacity::GROWTH;

/// What the short probes found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    /// The SLO holds in `reliability` of probes up to `rate`, within the band (its ends
    /// rounded outward).
    Capacity { rate: f64, low: f64, high: f64 },
    /// Every probe passed (or the top of the range did): the capacity is at least `rate`.
    AtLeast { rate: f64 },
    /// No probe passed.
    NonePassed,
    /// The band is bounded but no capacity is claimed: it spans more than the bracket's
    /// doubling when the probes ran out, or the probes cannot rule out a curve shallower than
    /// a band can be trusted at (`shallow`: by how much they do, `Fit::steepness`, below the
    /// cutoff). The capacity is somewhere in `low`–`high` (`estimate` the fit's best guess).
    NotNarrowed {
        estimate: f64,
        low: f64,
        high: f64,
        shallow: Option<f64>,
    },
    /// No rate was shown to reach the reliability: the SLO was met in `passes` of `probes`
    /// probes between `low` and `high`.
    Unstable {
        passes: u32,
        probes: u32,
        low: f64,
        high: f64,
    },
}

/// The widest band (high ÷ low) a capacity is claimed with. A band wider than the bracket's
/// doubling says no more than the bracket did before any refining: on this project's quiet
/// machine the probes ran out with bands 2.2–4× wide, and one such answer was 20 % below a
/// rate that met the SLO 10 of 10 (docs/results.md).
pub const NARROWED: f64 = GROWTH;

impl Search {
    /// Whether a fit is shown steep enough for its band to be claimed: the probes rule out
    /// a curve no steeper than `MIN_SLOPE` by `STEEP_CUTOFF`.
    pub fn steep(&self, f: &Fit) -> bool {
        f.steepness >= self.model.steep_cutoff
    }

    /// What the short probes so far say.
    pub fn answer(&self) -> Answer {
        self.answer_with(self.fit())
    }

    /// What the short probes say with the fit `f` of them (one of `Search::fits`).
    pub fn answer_with(&self, f: Option<Fit>) -> Answer {
        let (passes, fails) = self.counts();
        let highest_pass =
            |r: &[(f64, bool)]| r.iter().filter(|o| o.1).map(|o| o.0).fold(0.0, f64::max);
        if passes == 0 {
            return Answer::NonePassed;
        }
        if fails == 0 {
            return Answer::AtLeast {
                rate: highest_pass(&self.outcomes),
            };
        }
        let Some(f) = f else {
            return Answer::NonePassed;
        };
        let top = self.probed_range().map_or(0.0, |r| r.1);
        let top_passed = self.outcomes.iter().filter(|o| o.0 == top).all(|o| o.1);
        if f.high_open && !f.low_open && top >= self.to && top_passed {
            return Answer::AtLeast { rate: self.to };
        }
        if f.low_open || f.high_open {
            return self.unstable();
        }
        let (low, high) = (scaled3(f.low, f64::floor), scaled3(f.high, f64::ceil));
        if high / low > NARROWED || !self.steep(&f) {
            return Answer::NotNarrowed {
                estimate: round3(f.estimate),
                low,
                high,
                shallow: (!self.steep(&f)).then_some(f.steepness),
            };
        }
        Answer::Capacity {
            rate: f.estimate,
            low,
            high,
        }
    }

    /// Where the passes and the failures mix: from the lowest failure to the highest pass
    /// (every rate probed when they do not mix), with the passes among its probes.
    fn unstable(&self) -> Answer {
        let lowest_fail = self.lowest_failure();
        let highest_pass = self
            .outcomes
            .iter()
            .filter(|o| o.1)
            .map(|o| o.0)
            .fold(0.0, f64::max);
        let (low, high) = if lowest_fail < highest_pass {
            (lowest_fail, highest_pass)
        } else {
            self.probed_range().unwrap_or((self.from, self.to))
        };
        let inside = self.outcomes.iter().filter(|o| o.0 >= low && o.0 <= high);
        Answer::Unstable {
            passes: inside.clone().filter(|o| o.1).count() as u32,
            probes: inside.count() as u32,
            low,
            high,
        }
    }

    /// The capacity: the rate the SLO holds at with the reliability, or the lower bound when
    /// every probe passed; None when nothing passed or no rate is stable.
    pub fn capacity(&self) -> Option<f64> {
        match self.answer() {
            Answer::Capacity { rate, .. } | Answer::AtLeast { rate } => Some(rate),
            Answer::NonePassed | Answer::Unstable { .. } | Answer::NotNarrowed { .. } => None,
        }
    }

    /// The highest pass at or below the capacity and the lowest failure above it; None when
    /// there is no capacity or nothing above it failed.
    pub fn bracket(&self) -> Option<Bracket> {
        let c = self.capacity()?;
        let pass = self
            .outcomes
            .iter()
            .filter(|o| o.1 && o.0 <= c * (1.0 + 1e-9))
            .map(|o| o.0)
            .fold(0.0, f64::max);
        let fail = self
            .outcomes
            .iter()
            .filter(|o| !o.1 && o.0 > c)
            .map(|o| o.0)
            .fold(f64::INFINITY, f64::min);
        (pass > 0.0 && fail.is_finite()).then_some(Bracket { pass, fail })
    }

    /// Whether the search ended by passing its upper bound.
    pub fn reached_upper_bound(&self) -> bool {
        self.capacity().is_some_and(|c| c >= self.to)
    }

    /// Rates whose probes all passed above a rate that failed, each failed rate with the
    /// highest such pass. With a band, only passes above it count (inside it, a pass above a
    /// failure is what a probability says, not a curve that turns), unless the failed rate lies
    /// below the band and failed every one of its probes, at least two: a failing region below
    /// the capacity, which a lapse does not explain.
    pub fn non_monotone(&self) -> Vec<NonMonotone> {
        let (low, above) = match self.answer() {
            Answer::Capacity { low, high, .. } | Answer::NotNarrowed { low, high, .. } => {
                (low, high)
            }
            _ => (0.0, 0.0),
        };
        let all_passed = |r: f64| self.outcomes.iter().filter(|o| o.0 == r).all(|o| o.1);
        let region = |r: f64| {
            let at = || self.outcomes.iter().filter(move |o| o.0 == r);
            r < low && at().count() >= 2 && at().all(|o| !o.1)
        };
        let mut failed: Vec<f64> = self.outcomes.iter().filter(|o| !o.1).map(|o| o.0).collect();
        failed.sort_by(f64::total_cmp);
        failed.dedup();
        failed
            .into_iter()
            .filter_map(|f| {
                let passed = self
                    .outcomes
                    .iter()
                    .filter(|o| o.0 > f && (o.0 > above || region(f)) && all_passed(o.0))
                    .map(|o| o.0)
                    .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))?;
                Some(NonMonotone { failed: f, passed })
            })
            .collect()
    }

    /// Rates whose probes disagreed (some passed, some failed), lowest first.
    pub fn noisy(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self
            .outcomes
            .iter()
            .map(|o| o.0)
            .filter(|&r| {
                let at = self.outcomes.iter().filter(|o| o.0 == r);
                at.clone().any(|o| o.1) && at.clone().any(|o| !o.1)
            })
            .collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    }
}
