//! The search's steps, as a state machine with no clock and no cluster: the run stage asks
//! [`Search::next`] what to probe and tells [`Search::record`] whether it passed; the tests
//! drive it against simulated systems. "Probe at this rate for this long, get a pass or fail
//! back" is the whole interface, so where a probe runs does not matter to the search.
//!
//! Meeting the SLO is a probability that depends on the rate, not a step: the capacity is the
//! rate at which it holds in `reliability` of probes (`logistic.rs` fits that over every
//! probe, with a band calibrated to cover at its stated level: `coverage.rs`).
//!
//! 1. **Bracket.** Probe `from`, then double until a rate fails. A failure is never doubled
//!    past: the search looks above it once, by [`LOOK_ABOVE`] (half a doubling), for a fluke
//!    or a failing region below the capacity; if that passes, the bracket grows on from there,
//!    and it ends at the next failure. An overload (a probe that did not carry its rate) ends
//!    the bracket at once, as does `to`.
//! 2. **Refine.** Fit the pass probability over every probe so far and probe the rate whose
//!    outcome is expected to narrow the band most, until the probes locate the edge within
//!    `precision` or the probe budget is spent. It steers by a band of its own
//!    ([`STEERING_CUTOFF`], no slope floor and no margin: no number of probes narrows those),
//!    so the band it states changes what it claims, never a probe it runs. No candidate lies
//!    at or above the lowest overload. Each rate chosen gets `trials` probes in a row. A rate
//!    that failed its only probe and bounds the band from above is probed once more first:
//!    one sporadic failure must not stand for the edge. An overload is not sporadic, and is
//!    not probed again.
//! 3. **Hold** (with `hold`): long probes step down from the answer until a rate holds
//!    (`hold.rs`). They measure something else than the short ones, so the fit never sees
//!    them.
//!
//! **Recovery.** A probe over the edge leaves the cluster a hangover (a backlog to write back, a
//! log to roll) that fails the next probes whatever their rate, and every model here assumes
//! probes are independent. So after a failed probe the search asks for *canaries*: probes at
//! a rate known to pass (`canary_rate`), which are not outcomes of the search, until one
//! passes (at most [`CANARIES_AFTER_FAILURE`] in a row, [`Search::budget`] in all). The long
//! phase starts only once the cluster has recovered from the last short probe.
//!
//! What the probes say is `answer.rs`.

use std::time::Duration;

use super::hold::Hold;
use super::logistic::{Fit, Model, Obs};
use crate::model::capacity::GROWTH;
use crate::model::CapacitySearch;

/// After the first failure, the bracket probes once this much above it, not a doubling: a
/// failure at 640k/s followed by 1.28M/s left the broker gigabytes to write back (issue 50),
/// while half a doubling still tells a fluke, or a failing region below the capacity, from
/// the edge.
pub const LOOK_ABOVE: f64 = std::f64::consts::SQRT_2;

/// The deviance cutoff of the band the search steers by (where to probe next, when the edge
/// is located), whatever band it states: 8, the cutoff its probes were tested with on the
/// broker, so a stated band can be calibrated over the same searches (`coverage.rs` answers
/// each again at every band it explores, exactly).
pub(crate) const STEERING_CUTOFF: f64 = 8.0;

/// How a band is made and claimed: the deviance cutoff of the band, and the slope the probes
/// must rule out, by how much (`logistic.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BandRule {
    pub cutoff: f64,
    pub min_slope: f64,
    pub steep_cutoff: f64,
    pub floor: f64,
    pub low_margin: f64,
}

impl Default for BandRule {
    /// The calibrated band.
    fn default() -> BandRule {
        use super::logistic::{CUTOFF, FLOOR, LOW_MARGIN, MIN_SLOPE, STEEP_CUTOFF};
        BandRule {
            cutoff: CUTOFF,
            min_slope: MIN_SLOPE,
            steep_cutoff: STEEP_CUTOFF,
            floor: FLOOR,
            low_margin: LOW_MARGIN,
        }
    }
}

/// What to do next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Probe `rate` (records per second) for `length`; it is this rate's `trial`th probe of
    /// that length, from 1.
    Probe {
        rate: f64,
        trial: u32,
        length: Duration,
    },
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
    /// It did not carry the rate (acked too little, or sending fell behind its schedule): a
    /// hard failure, never a sporadic one, and the costliest to repeat, since the backlog it
    /// leaves fails the next probes.
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

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Bracket,
    Refine,
    /// The short probes are over (the long phase may follow).
    Done,
}

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
    pub(super) from: f64,
    pub(super) to: f64,
    pub(super) precision: f64,
    trials: u32,
    budget: u32,
    pub(super) model: Model,
    phase: Phase,
    /// The short probes' length.
    length: Duration,
    /// The rate being probed, and how many probes it has had since it was chosen.
    current: f64,
    run: u32,
    /// Every short probe: its rate and whether it passed.
    pub(super) outcomes: Vec<(f64, bool)>,
    /// The rates of the probes that were overloads.
    overloads: Vec<f64>,
    /// Whether the bracket has looked above a failure.
    looked_above: bool,
    /// Set after a failed probe while the cluster is not known to have recovered: how many
    /// canaries have run since.
    recovering: Option<u32>,
    canaries: Vec<Canary>,
    /// The most canaries after one failure (0: none, for the tests that show why they exist).
    canaries_after_failure: u32,
    /// `hold`: the long probes' length, and once the short probes are over, the long phase.
    hold_length: Option<Duration>,
    hold: Option<Hold>,
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
            phase: Phase::Bracket,
            length: c.probe,
            current: c.from,
            run: 0,
            outcomes: Vec::new(),
            overloads: Vec::new(),
            looked_above: false,
            recovering: None,
            canaries: Vec::new(),
            canaries_after_failure: CANARIES_AFTER_FAILURE,
            hold_length: c.hold,
            hold: None,
        }
    }

    /// The same search with at most `n` canaries after a failure.
    pub fn with_canaries(mut self, n: u32) -> Search {
        self.canaries_after_failure = n;
        self
    }

    /// The same search with the band `band`, in place of the calibrated one: what
    /// `coverage.rs` calibrates it with.
    pub fn with_band(mut self, band: BandRule) -> Search {
        self.model.cutoff = band.cutoff;
        self.model.min_slope = band.min_slope;
        self.model.steep_cutoff = band.steep_cutoff;
        self.model.floor = band.floor;
        self.model.low_margin = band.low_margin;
        self
    }

    /// The probe budget: the most probes, and the most canaries in all.
    pub fn budget(&self) -> u32 {
        self.budget
    }

    /// Whether the short probes are over.
    fn short_done(&self) -> bool {
        self.phase == Phase::Done || self.outcomes.len() as u32 >= self.budget
    }

    /// Whether a canary is due: after a failed short probe, before the next probe (short, or
    /// the long phase's first).
    fn canary_due(&self) -> Option<(u32, f64)> {
        let n = self.recovering?;
        let before_next = !self.short_done() || self.hold.as_ref().is_some_and(Hold::unstarted);
        before_next.then_some(())?;
        Some((n, self.canary_rate()?))
    }

    /// The probe to run next, or `Done`.
    pub fn next(&self) -> Step {
        if let Some((n, rate)) = self.canary_due() {
            return Step::Canary { rate, nth: n + 1 };
        }
        if self.short_done() {
            return self.hold.as_ref().map_or(Step::Done, Hold::next);
        }
        let trial = self.outcomes.iter().filter(|o| o.0 == self.current).count() as u32 + 1;
        Step::Probe {
            rate: self.current,
            trial,
            length: self.length,
        }
    }

    /// The outcome of the probe (or canary) [`Search::next`] asked for.
    pub fn record(&mut self, verdict: impl Into<Verdict>) {
        let verdict = verdict.into();
        let pass = verdict == Verdict::Pass;
        if let Some((n, rate)) = self.canary_due() {
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
        if self.short_done() {
            if let Some(h) = self.hold.as_mut() {
                h.record(verdict);
            }
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
            Phase::Bracket => self.bracket_step(verdict),
            Phase::Refine if self.run < self.trials => {}
            Phase::Refine => self.refine(),
            Phase::Done => {}
        }
        if self.short_done() && self.hold.is_none() {
            self.hold = self
                .hold_length
                .map(|l| Hold::new(l, self.hold_start(), self.from));
        }
    }

    /// The bracket after a probe: grow on a pass, look above a first failure once, end at an
    /// overload, a second failure or `to`.
    fn bracket_step(&mut self, verdict: Verdict) {
        // A rate still collecting its trials is probed again; a failure ends it.
        if verdict == Verdict::Pass && self.run < self.trials {
            return;
        }
        let next = match verdict {
            Verdict::Pass => Some(self.current * GROWTH),
            Verdict::Fail if !self.looked_above => {
                self.looked_above = true;
                Some(round3(self.current * LOOK_ABOVE))
            }
            // An overload ends the bracket at once: a higher rate would only leave the
            // cluster a bigger backlog.
            Verdict::Fail | Verdict::Overload => None,
        };
        match next {
            Some(r) if self.current < self.to => self.choose(r.min(self.to)),
            _ => self.refine(),
        }
    }

    /// Where the long phase starts: the answer of the short probes (the estimate of a band
    /// not narrowed; the highest rate whose probes all passed when no rate is stable); None
    /// when nothing passed.
    fn hold_start(&self) -> Option<f64> {
        use super::answer::Answer;
        match self.answer() {
            Answer::Capacity { rate, .. } | Answer::AtLeast { rate } => Some(rate),
            Answer::NotNarrowed { estimate, .. } => Some(estimate),
            Answer::Unstable { .. } | Answer::NonePassed => self
                .outcomes
                .iter()
                .map(|o| o.0)
                .filter(|&r| self.outcomes.iter().all(|o| o.0 != r || o.1))
                .max_by(f64::total_cmp),
        }
        .map(round3)
    }

    /// The long phase, once the short probes are over (with `hold`).
    pub fn hold(&self) -> Option<&Hold> {
        self.hold.as_ref()
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
    pub(super) fn lowest_failure(&self) -> f64 {
        self.outcomes
            .iter()
            .filter(|o| !o.1)
            .map(|o| o.0)
            .fold(f64::INFINITY, f64::min)
    }

    /// The lowest rate a probe was overloaded at; infinite when none was.
    fn lowest_overload(&self) -> f64 {
        self.overloads.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Every canary, in order.
    pub fn canaries(&self) -> &[Canary] {
        &self.canaries
    }

    fn choose(&mut self, rate: f64) {
        self.current = rate;
        self.run = 0;
    }

    /// The next rate from the fit, or the end: nothing passed, nothing failed, or the edge is
    /// located as narrowly as asked.
    fn refine(&mut self) {
        let (passes, fails) = self.counts();
        let model = self.steering();
        let (grid_lo, grid_hi) = self.grid();
        let obs = self.observations();
        let Some(f) = model
            .fit(&obs, grid_lo, grid_hi)
            .filter(|_| passes > 0 && fails > 0)
        else {
            self.phase = Phase::Done;
            return;
        };
        if let Some(r) = self.unconfirmed_failure(&f) {
            self.phase = Phase::Refine;
            self.choose(r);
            return;
        }
        if !f.low_open && !f.high_open && f.ratio() <= 1.0 + self.precision && self.steep(&f) {
            self.phase = Phase::Done;
            return;
        }
        self.phase = Phase::Refine;
        // Never at or above an overload: it is not probed again, and nothing above it is.
        let ceiling = self.lowest_overload();
        let (lo, hi) = (f.low.max(self.from), f.high.min(self.to).min(ceiling));
        let mut candidates: Vec<f64> = (0..CANDIDATES)
            .map(|k| {
                let t = k as f64 / (CANDIDATES - 1) as f64;
                round3((lo.ln() + (hi / lo).ln().max(0.0) * t).exp())
            })
            .filter(|&r| r < ceiling)
            .collect();
        candidates.dedup();
        let below = |r: f64| {
            let r = round3(r.clamp(self.from, self.to));
            if r < ceiling {
                r
            } else {
                round3(ceiling / (1.0 + self.precision))
            }
        };
        let next = model
            .most_telling(&obs, &f, (grid_lo, grid_hi), &candidates)
            .unwrap_or_else(|| below(f.estimate));
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

    pub(super) fn counts(&self) -> (u32, u32) {
        let passes = self.outcomes.iter().filter(|o| o.1).count() as u32;
        (passes, self.outcomes.len() as u32 - passes)
    }

    /// The fit's grid: a doubling beyond the rates probed, never above `to`.
    fn grid(&self) -> (f64, f64) {
        let (lo, hi) = self.probed_range().unwrap_or((self.from, self.to));
        let g = GROWTH.ln();
        (lo.ln() - g, (hi.ln() + g).min(self.to.ln()).max(lo.ln()))
    }

    pub(super) fn probed_range(&self) -> Option<(f64, f64)> {
        let rates = self.outcomes.iter().map(|o| o.0);
        let lo = rates.clone().fold(f64::INFINITY, f64::min);
        let hi = rates.fold(0.0, f64::max);
        (hi > 0.0).then_some((lo, hi))
    }

    /// The model the search steers by: the stated one at [`STEERING_CUTOFF`], without the
    /// slope floor and the low end's margin.
    fn steering(&self) -> Model {
        Model {
            floor: 0.0,
            low_margin: 0.0,
            cutoff: STEERING_CUTOFF,
            ..self.model
        }
    }

    /// The pass probability fitted over every short probe so far: the band the answer states.
    pub fn fit(&self) -> Option<Fit> {
        let (lo, hi) = self.grid();
        self.model.fit(&self.observations(), lo, hi)
    }

    /// The fit of the short probes at each of `cutoffs` (for a calibration), with this
    /// search's least slope.
    pub fn fits(&self, cutoffs: &[f64]) -> Option<Vec<Fit>> {
        let (lo, hi) = self.grid();
        self.model.fits(&self.observations(), lo, hi, cutoffs)
    }

    /// Every short probe's rate and outcome, in order.
    pub fn outcomes(&self) -> &[(f64, bool)] {
        &self.outcomes
    }
}

/// A rate to three significant digits, as the report shows it: probes the design puts
/// close together share a rate, and their tallies show it.
pub(super) fn round3(r: f64) -> f64 {
    scaled3(r, f64::round)
}

/// `r` at three significant digits, rounded by `how` (`floor`, `ceil`, `round`).
pub(super) fn scaled3(r: f64, how: fn(f64) -> f64) -> f64 {
    if !(r > 0.0 && r.is_finite()) {
        return r;
    }
    let scale = 10f64.powi(r.log10().floor() as i32 - 2);
    // A rate already at three digits stays where it is whichever way it is rounded.
    let k = r / scale;
    let k = if (k - k.round()).abs() < 1e-9 {
        k.round()
    } else {
        how(k)
    };
    k * scale
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
