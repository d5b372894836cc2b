//! The search's steps, as a state machine with no clock and no cluster: the run stage asks
//! [`Search::next`] what to probe and tells [`Search::record`] whether it passed; the tests
//! drive it against simulated systems.
//!
//! 1. **Bracket.** Probe `from`, then double until a rate fails. One failure does not end the
//!    bracket: the next doubling is probed too, and the bracket ends at two failures in a row
//!    (or at `to`). A pass above a failure is kept and reported as non-monotone, never hidden.
//! 2. **Bisect** between the highest rate that passed and the lowest failure above it, at their
//!    geometric mean, until they are within `precision` of each other.
//! 3. **Trials.** A rate passes when `trials` probes in a row pass; its first failing probe
//!    fails it. At the end, the lowest failure above the capacity is probed again `trials - 1`
//!    times: a pass there is reported as noise at the boundary.
//!
//! The capacity is the highest rate that passed all its trials.

use super::{Bracket, NonMonotone};
use crate::model::capacity::GROWTH;

/// What to do next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Probe `rate` (records per second); it is this rate's `trial`th probe, from 1.
    Probe { rate: f64, trial: u32 },
    /// The search is over.
    Done,
}

/// One rate and how its probes went.
#[derive(Clone, Copy, Debug)]
struct Tally {
    rate: f64,
    passes: u32,
    fails: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Growing; how many rates failed in a row.
    Bracket {
        fails_in_a_row: u32,
    },
    Bisect,
    /// Re-probing the boundary's failure: how many re-probes are left.
    Recheck {
        left: u32,
    },
    Done,
}

/// A capacity search in progress.
#[derive(Clone, Debug)]
pub struct Search {
    to: f64,
    precision: f64,
    trials: u32,
    phase: Phase,
    /// The rate being probed.
    current: f64,
    tallies: Vec<Tally>,
}

impl Search {
    pub fn new(from: f64, to: f64, precision: f64, trials: u32) -> Search {
        Search {
            to: to.max(from),
            precision,
            trials: trials.max(1),
            phase: Phase::Bracket { fails_in_a_row: 0 },
            current: from,
            tallies: Vec::new(),
        }
    }

    /// The probe to run next, or `Done`.
    pub fn next(&self) -> Step {
        if self.phase == Phase::Done {
            return Step::Done;
        }
        let t = self.tally(self.current);
        let trial = t.map_or(1, |t| t.passes + t.fails + 1);
        Step::Probe {
            rate: self.current,
            trial,
        }
    }

    /// The outcome of the probe [`Search::next`] asked for.
    pub fn record(&mut self, pass: bool) {
        if self.phase == Phase::Done {
            return;
        }
        let rate = self.current;
        let i = match self.tallies.iter().position(|t| t.rate == rate) {
            Some(i) => i,
            None => {
                self.tallies.push(Tally {
                    rate,
                    passes: 0,
                    fails: 0,
                });
                self.tallies.len() - 1
            }
        };
        let t = &mut self.tallies[i];
        if pass {
            t.passes += 1;
        } else {
            t.fails += 1;
        }
        if let Phase::Recheck { left } = self.phase {
            self.phase = if left > 1 {
                Phase::Recheck { left: left - 1 }
            } else {
                Phase::Done
            };
            return;
        }
        // A rate still collecting its trials is probed again.
        if pass && t.passes < self.trials {
            return;
        }
        self.advance(pass);
    }

    /// The rate just resolved (passed all its trials, or failed one): choose the next.
    fn advance(&mut self, passed: bool) {
        let rate = self.current;
        if let Phase::Bracket { fails_in_a_row } = self.phase {
            let fails = if passed { 0 } else { fails_in_a_row + 1 };
            if rate < self.to && fails < 2 {
                self.phase = Phase::Bracket {
                    fails_in_a_row: fails,
                };
                self.current = (rate * GROWTH).min(self.to);
                return;
            }
            self.phase = Phase::Bisect;
        }
        self.bisect();
    }

    fn bisect(&mut self) {
        let Some(Bracket { pass, fail }) = self.bracket() else {
            // Nothing passed, or the upper bound did.
            self.phase = Phase::Done;
            return;
        };
        if fail / pass > 1.0 + self.precision {
            self.phase = Phase::Bisect;
            self.current = (pass * fail).sqrt();
            return;
        }
        self.current = fail;
        self.phase = if self.trials > 1 {
            Phase::Recheck {
                left: self.trials - 1,
            }
        } else {
            Phase::Done
        };
    }

    fn tally(&self, rate: f64) -> Option<&Tally> {
        self.tallies.iter().find(|t| t.rate == rate)
    }

    fn passed(t: &Tally, trials: u32) -> bool {
        t.fails == 0 && t.passes >= trials
    }

    /// The highest rate that passed all its trials.
    pub fn capacity(&self) -> Option<f64> {
        self.tallies
            .iter()
            .filter(|t| Self::passed(t, self.trials))
            .map(|t| t.rate)
            .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))
    }

    /// The capacity and the lowest failure above it; None when nothing passed or nothing
    /// above the capacity failed.
    pub fn bracket(&self) -> Option<Bracket> {
        let pass = self.capacity()?;
        let fail = self
            .tallies
            .iter()
            .filter(|t| t.fails > 0 && t.rate > pass)
            .map(|t| t.rate)
            .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.min(r))))?;
        Some(Bracket { pass, fail })
    }

    /// Whether the search ended by passing its upper bound.
    pub fn reached_upper_bound(&self) -> bool {
        self.capacity().is_some_and(|c| c >= self.to)
    }

    /// Every failed rate below a rate that passed all its trials, each with the highest such
    /// pass.
    pub fn non_monotone(&self) -> Vec<NonMonotone> {
        let mut failed: Vec<f64> = self
            .tallies
            .iter()
            .filter(|t| t.fails > 0)
            .map(|t| t.rate)
            .collect();
        failed.sort_by(f64::total_cmp);
        failed
            .into_iter()
            .filter_map(|f| {
                let above = self
                    .tallies
                    .iter()
                    .filter(|t| Self::passed(t, self.trials) && t.rate > f)
                    .map(|t| t.rate)
                    .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))?;
                Some(NonMonotone {
                    failed: f,
                    passed: above,
                })
            })
            .collect()
    }

    /// Rates whose probes disagreed (some passed, some failed), lowest first.
    pub fn noisy(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self
            .tallies
            .iter()
            .filter(|t| t.passes > 0 && t.fails > 0)
            .map(|t| t.rate)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
