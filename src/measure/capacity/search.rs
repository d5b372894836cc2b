//! The search's steps, as a state machine with no clock and no cluster: the run stage asks
//! [`Search::next`] what to probe and tells [`Search::record`] whether it passed; the tests
//! drive it against simulated systems. "Probe at this rate, get a pass or fail back" is the
//! whole interface, so where a probe runs does not matter to the search.
//!
//! Meeting the SLO is a probability that depends on the rate, not a step: the capacity is the
//! rate at which it holds in `reliability` of probes (`logistic.rs` fits that over every
//! probe, with a 95 % band).
//!
//! 1. **Bracket.** Probe `from`, then double until a rate fails. One failure does not end the
//!    bracket: the next doubling is probed too (a failing region below the capacity shows as
//!    such), and the bracket ends at two failures in a row, at an overload (a probe that did
//!    not carry its rate), or at `to`.
//! 2. **Refine.** Fit the pass probability over every probe so far and probe the rate whose
//!    outcome is expected to narrow the band most, until the band is within `precision` or the
//!    probe budget is spent. Each rate chosen gets `trials` probes in a row. A rate that
//!    failed its only probe and bounds the band from above is probed once more first: one
//!    sporadic failure must not stand for the edge. An overload is not sporadic, and is not
//!    probed again.
//!
//! **Recovery.** A probe over the edge leaves the cluster a hangover (a backlog to write back, a
//! log to roll) that fails the next probes whatever their rate, and every model here assumes
//! probes are independent. So after a failed probe the search asks for *canaries*: probes at
//! a rate known to pass (`canary_rate`), which are not outcomes of the search, until one
//! passes (at most [`CANARIES_AFTER_FAILURE`] in a row, [`Search::budget`] in all).
//!
//! **The answer** is a capacity with its band only when the band is narrower than a doubling
//! ([`NARROWED`]); a wider one is reported as *not narrowed*, with its band and no capacity.
//!
//! A rate that passes above one that failed is reported as non-monotone (batching makes a
//! higher rate's latency lower); the fit's band widens with it rather than hide it.

use super::logistic::{Fit, Model, Obs};
use super::{Bracket, NonMonotone};
use crate::model::capacity::GROWTH;
use crate::model::CapacitySearch;

/// What to do next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Probe `rate` (records per second); it is this rate's `trial`th probe, from 1.
    Probe { rate: f64, trial: u32 },
    /// Probe `rate`, a rate known to pass, only to learn whether the cluster has recovered from
    /// a failed probe: its outcome is not one of the search's. The `nth` since that failure.
    Canary { rate: f64, nth: u32 },
    /// The search is over.
    Done,
}

/// A probe's outcome as the search weighs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    Pass,
    /// It carried the rate and broke the SLO.
    Fail,
    /// It did not carry the rate (acked too little): a hard failure, never a sporadic one, and
    /// the costliest to repeat, since the backlog it leaves fails the next probes.
    Overload,
}

impl From<bool> for Verdict {
    fn from(pass: bool) -> Verdict {
        if pass {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
}

/// What the search found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    /// The SLO holds in `reliability` of probes up to `rate`, within the 95 % band.
    Capacity { rate: f64, low: f64, high: f64 },
    /// Every probe passed (or the top of the range did): the capacity is at least `rate`.
    AtLeast { rate: f64 },
    /// No probe passed.
    NonePassed,
    /// The band is bounded but spans more than the bracket's doubling when the probes ran
    /// out: the capacity is somewhere in `low`–`high` (`estimate` the fit's best guess), which
    /// says no more than the bracket did, so no capacity is claimed.
    NotNarrowed { estimate: f64, low: f64, high: f64 },
    /// No rate was shown to reach the reliability: the SLO was met in `passes` of `probes`
    /// probes between `low` and `high`.
    Unstable {
        passes: u32,
        probes: u32,
        low: f64,
        high: f64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Growing; how many rates failed in a row.
    Bracket {
        fails_in_a_row: u32,
    },
    Refine,
    Done,
}

/// The widest band (high ÷ low) a capacity is claimed with. A band wider than the bracket's
/// doubling says no more than the bracket did before any refining: on this project's quiet
/// machine the probes ran out with bands 2.2–4× wide, and one such answer was 20 % below a
/// rate that met the SLO 10 of 10 (docs/results.md). Simulated searches over 24 probes end
/// narrower than this in about 95 % of runs.
const NARROWED: f64 = GROWTH;

/// How many candidate rates the design weighs per step.
const CANDIDATES: usize = 7;

/// The most canaries after one failed probe. The quiet machine's hangover after an overload
/// failed the next four probes (docs/results.md); a canary at a low rate loads the cluster
/// less than those did, so five is room to spare.
pub const CANARIES_AFTER_FAILURE: u32 = 5;

/// A canary: the probe it followed (how many probes had run), its rate, whether it passed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Canary {
    pub after: u32,
    pub rate: f64,
    pub pass: bool,
}

/// A capacity search in progress.
#[derive(Clone, Debug)]
pub struct Search {
    from: f64,
    to: f64,
    precision: f64,
    trials: u32,
    budget: u32,
    model: Model,
    phase: Phase,
    /// The rate being probed, and how many probes it has had since it was chosen.
    current: f64,
    run: u32,
    /// Every probe: its rate and whether it passed.
    outcomes: Vec<(f64, bool)>,
    /// The rates of the probes that were overloads.
    overloads: Vec<f64>,
    /// Set after a failed probe while the cluster is not known to have recovered: how many
    /// canaries have run since.
    recovering: Option<u32>,
    canaries: Vec<Canary>,
    /// The most canaries after one failure (0: none, for the tests that show why they exist).
    canaries_after_failure: u32,
}

impl Search {
    pub fn new(c: &CapacitySearch) -> Search {
        Search {
            from: c.from,
            to: c.to.max(c.from),
            precision: c.precision,
            trials: c.trials.max(1),
            budget: c.max_probes().max(1),
            model: Model::new(c.reliability, c.precision),
            phase: Phase::Bracket { fails_in_a_row: 0 },
            current: c.from,
            run: 0,
            outcomes: Vec::new(),
            overloads: Vec::new(),
            recovering: None,
            canaries: Vec::new(),
            canaries_after_failure: CANARIES_AFTER_FAILURE,
        }
    }

    /// The same search with at most `n` canaries after a failure.
    pub fn with_canaries(mut self, n: u32) -> Search {
        self.canaries_after_failure = n;
        self
    }

    /// The probe budget: the most probes, and the most canaries in all.
    pub fn budget(&self) -> u32 {
        self.budget
    }

    /// The probe to run next, or `Done`.
    pub fn next(&self) -> Step {
        if self.phase == Phase::Done || self.outcomes.len() as u32 >= self.budget {
            return Step::Done;
        }
        if let (Some(n), Some(rate)) = (self.recovering, self.canary_rate()) {
            return Step::Canary { rate, nth: n + 1 };
        }
        let trial = self.outcomes.iter().filter(|o| o.0 == self.current).count() as u32 + 1;
        Step::Probe {
            rate: self.current,
            trial,
        }
    }

    /// The outcome of the probe (or canary) [`Search::next`] asked for.
    pub fn record(&mut self, verdict: impl Into<Verdict>) {
        let verdict = verdict.into();
        let pass = verdict == Verdict::Pass;
        if self.phase == Phase::Done {
            return;
        }
        if let (Some(n), Some(rate)) = (self.recovering, self.canary_rate()) {
            self.canaries.push(Canary {
                after: self.outcomes.len() as u32,
                rate,
                pass,
            });
            let spent = self.canaries.len() as u32 >= self.budget;
            self.recovering =
                (!pass && n + 1 < self.canaries_after_failure && !spent).then_some(n + 1);
            return;
        }
        self.outcomes.push((self.current, pass));
        if verdict == Verdict::Overload {
            self.overloads.push(self.current);
        }
        self.recovering = (!pass
            && self.canaries_after_failure > 0
            && (self.canaries.len() as u32) < self.budget)
            .then_some(0);
        self.run += 1;
        match self.phase {
            Phase::Bracket { fails_in_a_row } => {
                // A rate still collecting its trials is probed again; a failure ends it.
                if pass && self.run < self.trials {
                    return;
                }
                // An overload ends the bracket at once: twice its rate would only leave the
                // cluster a bigger backlog.
                let fails = match verdict {
                    Verdict::Pass => 0,
                    Verdict::Fail => fails_in_a_row + 1,
                    Verdict::Overload => 2,
                };
                if self.current < self.to && fails < 2 {
                    self.phase = Phase::Bracket {
                        fails_in_a_row: fails,
                    };
                    self.choose((self.current * GROWTH).min(self.to));
                } else {
                    self.refine();
                }
            }
            Phase::Refine if self.run < self.trials => {}
            Phase::Refine => self.refine(),
            Phase::Done => {}
        }
    }

    /// Where a canary runs: the highest rate that has passed every probe at it and is at most
    /// half the rate of the probe that failed (the lowest such rate when none is that low). A
    /// hangover holds back a heavy writer more than a light one (a page cache's dirty pages
    /// throttle the writers that dirty them), so a canary at a trickle passes on a cluster that
    /// still fails the next probe: on this project's broker, 32k/s canaries passed while every
    /// probe from 534k to 1.25M/s failed for 90 s after an overload at 1.28M/s, and 1.02M/s had
    /// passed before it. Half the failed rate keeps the canary clear of the edge and heavy
    /// enough to see the backlog. None before any rate passed (a canary must be a rate known
    /// to pass).
    fn canary_rate(&self) -> Option<f64> {
        let failed = self
            .outcomes
            .iter()
            .rev()
            .find(|o| !o.1)
            .map_or(f64::INFINITY, |o| o.0);
        let safe: Vec<f64> = self
            .outcomes
            .iter()
            .filter(|o| o.1)
            .map(|o| o.0)
            .filter(|&r| self.outcomes.iter().all(|o| o.0 != r || o.1))
            .collect();
        let light = safe.iter().copied().filter(|&r| r <= failed / 2.0);
        light
            .max_by(f64::total_cmp)
            .or_else(|| safe.iter().copied().min_by(f64::total_cmp))
    }

    /// The lowest rate that failed a probe; infinite when none did.
    fn lowest_failure(&self) -> f64 {
        self.outcomes
            .iter()
            .filter(|o| !o.1)
            .map(|o| o.0)
            .fold(f64::INFINITY, f64::min)
    }

    /// Every canary, in order.
    pub fn canaries(&self) -> &[Canary] {
        &self.canaries
    }

    fn choose(&mut self, rate: f64) {
        self.current = rate;
        self.run = 0;
    }

    /// The next rate from the fit, or the end: nothing passed, nothing failed, or the band is
    /// as narrow as asked.
    fn refine(&mut self) {
        let (passes, fails) = self.counts();
        let Some(f) = self.fit().filter(|_| passes > 0 && fails > 0) else {
            self.phase = Phase::Done;
            return;
        };
        if let Some(r) = self.unconfirmed_failure(&f) {
            self.phase = Phase::Refine;
            self.choose(r);
            return;
        }
        if !f.low_open && !f.high_open && f.ratio() <= 1.0 + self.precision {
            self.phase = Phase::Done;
            return;
        }
        self.phase = Phase::Refine;
        let (lo, hi) = (f.low.max(self.from), f.high.min(self.to));
        let candidates: Vec<f64> = (0..CANDIDATES)
            .map(|k| {
                let t = k as f64 / (CANDIDATES - 1) as f64;
                round3((lo.ln() + (hi / lo).ln().max(0.0) * t).exp())
            })
            .collect();
        let (glo, ghi) = self.grid();
        let next = self
            .model
            .most_telling(&self.observations(), glo, ghi, &candidates)
            .unwrap_or_else(|| round3(f.estimate.clamp(self.from, self.to)));
        self.choose(next);
    }

    /// The lowest rate that failed its one probe, not as an overload, and bounds the band from
    /// above: probed once more before the answer rests on it. A quiet machine fails a probe
    /// now and then at any rate; one such failure where the edge is expected reads as the edge
    /// (a lapse cannot outweigh it), and the rates above it, up to the real edge, are never
    /// probed.
    fn unconfirmed_failure(&self, f: &Fit) -> Option<f64> {
        let reach = f.high * (1.0 + self.precision);
        self.outcomes
            .iter()
            .filter(|o| !o.1 && o.0 <= reach && !self.overloads.contains(&o.0))
            .map(|o| o.0)
            .filter(|&r| self.outcomes.iter().filter(|o| o.0 == r).count() == 1)
            .min_by(f64::total_cmp)
    }

    fn observations(&self) -> Vec<Obs> {
        self.outcomes
            .iter()
            .map(|&(r, pass)| Obs { x: r.ln(), pass })
            .collect()
    }

    fn counts(&self) -> (u32, u32) {
        let passes = self.outcomes.iter().filter(|o| o.1).count() as u32;
        (passes, self.outcomes.len() as u32 - passes)
    }

    /// The fit's grid: a doubling beyond the rates probed, never above `to`.
    fn grid(&self) -> (f64, f64) {
        let (lo, hi) = self.probed_range().unwrap_or((self.from, self.to));
        let g = GROWTH.ln();
        (lo.ln() - g, (hi.ln() + g).min(self.to.ln()).max(lo.ln()))
    }

    fn probed_range(&self) -> Option<(f64, f64)> {
        let rates = self.outcomes.iter().map(|o| o.0);
        let lo = rates.clone().fold(f64::INFINITY, f64::min);
        let hi = rates.fold(0.0, f64::max);
        (hi > 0.0).then_some((lo, hi))
    }

    /// The pass probability fitted over every probe so far.
    pub fn fit(&self) -> Option<Fit> {
        let (lo, hi) = self.grid();
        self.model.fit(&self.observations(), lo, hi)
    }

    /// What the probes so far say.
    pub fn answer(&self) -> Answer {
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
        let Some(f) = self.fit() else {
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
        if f.ratio() > NARROWED {
            return Answer::NotNarrowed {
                estimate: f.estimate,
                low: f.low,
                high: f.high,
            };
        }
        Answer::Capacity {
            rate: f.estimate,
            low: f.low,
            high: f.high,
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

    /// Every probe's rate and outcome, in order.
    pub fn outcomes(&self) -> &[(f64, bool)] {
        &self.outcomes
    }

    /// Rates whose probes all passed above a rate that failed, each failed rate with the
    /// highest such pass. With a band, only passes above it count: inside it, a pass above a
    /// failure is what a probability says, not a curve that turns.
    pub fn non_monotone(&self) -> Vec<NonMonotone> {
        let above = match self.answer() {
            Answer::Capacity { high, .. } | Answer::NotNarrowed { high, .. } => high,
            _ => 0.0,
        };
        let all_passed = |r: f64| self.outcomes.iter().filter(|o| o.0 == r).all(|o| o.1);
        let mut failed: Vec<f64> = self.outcomes.iter().filter(|o| !o.1).map(|o| o.0).collect();
        failed.sort_by(f64::total_cmp);
        failed.dedup();
        failed
            .into_iter()
            .filter_map(|f| {
                let passed = self
                    .outcomes
                    .iter()
                    .filter(|o| o.0 > f && o.0 > above && all_passed(o.0))
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

/// A rate to three significant digits, as the report shows it: probes the design puts
/// close together share a rate, and their tallies show it.
fn round3(r: f64) -> f64 {
    if !(r > 0.0 && r.is_finite()) {
        return r;
    }
    let scale = 10f64.powi(r.log10().floor() as i32 - 2);
    (r / scale).round() * scale
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
