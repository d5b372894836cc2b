//! The long phase (`hold`): how long a rate holds, asked of long probes once the short ones
//! have answered. A short probe ends before its writes reach the disk (a broker host's page
//! cache keeps dirty data for `vm.dirty_expire_centisecs`, 30 s by default), so the short
//! answer is a burst capacity; a long probe pays for its own writes, as a sustained load does.
//!
//! Long and short probes measure different things, so they share no fit: the phase keeps its
//! own outcomes. It starts at the short answer and probes each rate up to [`HOLD_PROBES`]
//! times: [`HOLD_MET`] passes confirm it, more than `HOLD_PROBES − HOLD_MET` failures (or one
//! overload) reject it, and the next rate is [`HOLD_STEP`] of it, for at most [`HOLD_RATES`]
//! rates and never below `from`. A handful of long probes cannot close a band, so the answer
//! is a stated confirmation ("holds 310k/s: 3 of 4 probes of 60s met the SLO"), not a band.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::search::{round3, Step, Verdict};
use crate::model::capacity::{HOLD_MET, HOLD_PROBES, HOLD_RATES, HOLD_STEP};

/// What the long phase found.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Held {
    /// `passes` of the `probes` long probes at `rate` met the SLO.
    Holds { rate: f64, passes: u32, probes: u32 },
    /// No rate from `high` down to `low` held.
    NotHeld { high: f64, low: f64 },
    /// No short probe passed: no rate to start from.
    NothingToHold,
    /// Stopped (an interrupt, the budget, a lost cluster) before a rate was confirmed or every
    /// rate rejected.
    Unfinished,
}

/// The long phase in progress.
#[derive(Clone, Debug)]
pub struct Hold {
    length: Duration,
    /// The rate being probed; None when there was nothing to start from.
    rate: Option<f64>,
    floor: f64,
    /// Every long probe: its rate and verdict, in order.
    outcomes: Vec<(f64, Verdict)>,
    done: Option<Held>,
}

impl Hold {
    /// Long probes of `length`, from `start` (None: nothing passed) down to no lower than
    /// `floor`.
    pub(super) fn new(length: Duration, start: Option<f64>, floor: f64) -> Hold {
        Hold {
            length,
            rate: start,
            floor,
            outcomes: Vec::new(),
            done: start.is_none().then_some(Held::NothingToHold),
        }
    }

    /// Whether no long probe has run yet.
    pub(super) fn unstarted(&self) -> bool {
        self.outcomes.is_empty()
    }

    /// The long probe to run next, or `Done`.
    pub(super) fn next(&self) -> Step {
        match (self.done, self.rate) {
            (None, Some(rate)) => Step::Probe {
                rate,
                trial: self.at(rate).count() as u32 + 1,
                length: self.length,
            },
            _ => Step::Done,
        }
    }

    fn at(&self, rate: f64) -> impl Iterator<Item = &(f64, Verdict)> {
        self.outcomes.iter().filter(move |o| o.0 == rate)
    }

    /// The outcome of the long probe [`Hold::next`] asked for.
    pub(super) fn record(&mut self, verdict: Verdict) {
        let (None, Some(rate)) = (self.done, self.rate) else {
            return;
        };
        self.outcomes.push((rate, verdict));
        let passes = self.at(rate).filter(|o| o.1 == Verdict::Pass).count() as u32;
        let fails = self.at(rate).count() as u32 - passes;
        let overload = verdict == Verdict::Overload;
        if passes >= HOLD_MET {
            self.done = Some(Held::Holds {
                rate,
                passes,
                probes: passes + fails,
            });
        } else if fails > HOLD_PROBES - HOLD_MET || overload {
            let tried = self.rates().len() as u32;
            let lower = round3(rate * HOLD_STEP);
            if tried >= HOLD_RATES || lower < self.floor {
                self.done = Some(Held::NotHeld {
                    high: self.outcomes[0].0,
                    low: rate,
                });
            } else {
                self.rate = Some(lower);
            }
        }
    }

    /// The rates tried, highest (first) first.
    fn rates(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self.outcomes.iter().map(|o| o.0).collect();
        v.dedup();
        v
    }

    /// What the long phase found so far: unfinished until a rate is confirmed or every rate
    /// it may try is rejected.
    pub fn answer(&self) -> Held {
        self.done.unwrap_or(Held::Unfinished)
    }

    /// The long probes' length.
    pub fn length(&self) -> Duration {
        self.length
    }

    /// Every long probe's rate and verdict, in order.
    pub fn outcomes(&self) -> &[(f64, Verdict)] {
        &self.outcomes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(start: f64, holds_below: f64) -> (Hold, Vec<f64>) {
        let mut h = Hold::new(Duration::from_secs(60), Some(start), 1_000.0);
        let mut rates = Vec::new();
        while let Step::Probe { rate, length, .. } = h.next() {
            assert_eq!(length, Duration::from_secs(60));
            rates.push(rate);
            h.record(Verdict::from(rate <= holds_below));
            assert!(rates.len() <= (HOLD_PROBES * HOLD_RATES) as usize);
        }
        (h, rates)
    }

    #[test]
    fn the_long_phase_steps_down_until_three_of_four_hold() {
        // 388k does not hold, nor 349k; 314k holds: two failures reject a rate, three passes
        // confirm one.
        let (h, rates) = drive(388_000.0, 320_000.0);
        assert_eq!(
            rates,
            [388_000.0, 388_000.0, 349_000.0, 349_000.0, 314_000.0, 314_000.0, 314_000.0]
        );
        assert_eq!(
            h.answer(),
            Held::Holds {
                rate: 314_000.0,
                passes: 3,
                probes: 3
            }
        );
    }

    #[test]
    fn a_rate_that_fails_once_in_four_holds_and_an_overload_rejects_at_once() {
        let mut h = Hold::new(Duration::from_secs(60), Some(100_000.0), 1_000.0);
        for v in [Verdict::Pass, Verdict::Fail, Verdict::Pass, Verdict::Pass] {
            h.record(v);
        }
        assert_eq!(
            h.answer(),
            Held::Holds {
                rate: 100_000.0,
                passes: 3,
                probes: 4
            }
        );
        let mut h = Hold::new(Duration::from_secs(60), Some(100_000.0), 1_000.0);
        h.record(Verdict::Overload);
        assert!(matches!(h.next(), Step::Probe { rate, trial: 1, .. } if rate == 90_000.0));
    }

    #[test]
    fn the_long_phase_gives_up_after_its_rates_or_at_the_floor() {
        let (h, rates) = drive(100_000.0, 1.0);
        assert_eq!(rates.len() as u32, 2 * HOLD_RATES);
        assert_eq!(
            h.answer(),
            Held::NotHeld {
                high: 100_000.0,
                low: 59_000.0
            }
        );
        let mut h = Hold::new(Duration::from_secs(60), Some(1_050.0), 1_000.0);
        h.record(Verdict::Fail);
        h.record(Verdict::Fail);
        assert_eq!(h.next(), Step::Done);
        assert!(matches!(h.answer(), Held::NotHeld { .. }));
        assert_eq!(
            Hold::new(Duration::from_secs(60), None, 1.0).answer(),
            Held::NothingToHold
        );
    }
}
