//! The SLO as a probability: a logistic model of the pass probability against the rate, fitted
//! over every probe, with a profile-likelihood confidence band for the rate at which the SLO
//! holds with a stated reliability (the "capacity"), and the design rule that picks the rate
//! whose probe narrows that band most.
//!
//! The model, with x = ln(rate), q the reliability and L = logit(q):
//! P(pass at x) = σ(L + b·(θ − x)), so P = q exactly at x = θ (θ = ln capacity) and falls
//! with the rate at slope b ≥ 0. The slope is capped at `max_slope` (a step narrower than the
//! search's precision cannot be told from a step), which also keeps the fit finite when the
//! probes separate perfectly. θ is profiled on a grid: for each θ the likelihood is maximised
//! over b (concave in b), and the band is every θ whose deviance from the best is within a
//! cutoff. Wilks' χ²₁ quantile (3.84 for 95 %) is the asymptotic cutoff; with 24 probes, a
//! capped slope and a search that stops when its band happens to be narrow, it covers far less
//! than it says, so the cutoff is [`CUTOFF`] (8), calibrated by simulating the search
//! (`coverage.rs`, `bench/capacity-coverage.sh`). The band's ends are the first grid points
//! outside it, so rounding never narrows it.
//!
//! **A slope floor**, measured and off ([`FLOOR`]): the band is the union of its own and that
//! of the same model with the slope capped at the floor, each against its own best fit, so
//! that a shallow curve whose probes happened to separate cleanly (read as a step, too high)
//! is still covered. In simulation, floor 4 at Wilks' cutoff covers 98–100 % of claims on
//! slopes 6 and 10, where the cutoff of 8 alone covers 90 % on slope 6. But it cannot narrow a
//! limit that is a step: the floor's band reaches above the edge until probes there rule a
//! slope-4 curve out, and no probe runs above an overload, so a quota of 485/s with 19 passes
//! up to 484/s and failures from 514/s stayed *not narrowed*, 375–794/s (docs/results.md). The
//! search steers by a band of its own (`search::STEERING_CUTOFF`, no floor), so a stated band
//! changes what it claims, never its probes, and the simulation compares bands exactly.
//!
//! A quiet machine still fails a probe now and then at any rate (a stall, a log flush): one such
//! failure among passes is read by a pure logistic as a shallow curve through it, and it pulls
//! the capacity down to where it happened. So the model admits a lapse λ, a share of probes that
//! fail whatever the rate: P(pass at x) = (1 − λ)·σ(L_λ + b·(θ − x)) with L_λ = logit(q / (1 − λ)),
//! which still makes P = q at θ. λ is profiled over {0, λ_max} with θ and b; λ_max is small
//! (5 %, and at most a quarter of 1 − q), so a lapse explains a lone failure but never many.

/// One probe: its rate's natural log, and whether it passed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obs {
    pub x: f64,
    pub pass: bool,
}

/// χ²₁ at 0.95: Wilks' cutoff for a two-sided 95 % profile-likelihood interval, which the
/// search's band would be asymptotically.
pub const CHI2_95: f64 = 3.841_459;

/// The confidence the band states.
pub const LEVEL: f64 = 0.95;

/// The deviance cutoff of the band, calibrated with the search in the loop (its adaptive
/// probes, its budget, its stopping rule; `bench/capacity-coverage.sh`, docs/results.md, "The
/// band's coverage"): at Wilks' 3.84 the claimed bands of steep curves (slope 10 per unit of
/// ln rate) covered the true capacity in 85 % of claims; at 8 in 97–98 %, with and without a
/// 5 % lapse. On shallower curves the claims still cover less than stated whatever the
/// cutoff, but the search makes few of them there: a band this wide rarely narrows to a
/// doubling on a shallow curve.
pub const CUTOFF: f64 = 8.0;

/// A band is claimed only when the probes rule out a curve no steeper than this (per unit of
/// ln rate) by [`STEEP_CUTOFF`] (`Fit::steepness`); 0 turns the rule off, as it is. The rule
/// was tried at 1.5–8 by the calibration and made coverage worse at every setting: on a
/// shallow curve the claims it lets through are those whose probes happen to separate
/// cleanly, which are exactly the ones whose band is too narrow (docs/results.md). It stays
/// as a setting of the simulation (`--min-slope`, `--steep`).
pub const MIN_SLOPE: f64 = 0.0;

/// The deviance by which the probes must rule out a curve no steeper than [`MIN_SLOPE`]
/// for the band to be claimed (0: the rule is off).
pub const STEEP_CUTOFF: f64 = 0.0;

/// The shallowest curve the band answers for (slope per unit of ln rate), whatever the probes
/// say of the slope; 0: off. Off because a step-like limit's band then never narrows (above);
/// the simulation's best was 4 at Wilks' 3.84 (`bench/capacity-coverage.sh --floor 4 --cutoff
/// 3.84`, docs/results.md).
pub const FLOOR: f64 = 0.0;

/// The band's low end is stated this much lower than the profile puts it (0.18: divided by
/// 1.18). A search that stops when its band is narrow stops on a run of passes as readily as
/// on the truth, so the band it claims sits too high more often than too low: at the cutoff of
/// 8, the claims that missed on slope 6 had the truth 1–11 % below the low end in 14 of 17 and
/// above the high end in 3. Calibrated by the simulation (`--margins`, docs/results.md, "A
/// margin below the band"): 0.12 covered 95 % of 2 000 claims on slope 6 but 92.7 % with a
/// 5 % lapse; 0.18 covers 96.2–99.4 % of 2 000 claims on each of the four steep curves.
/// The search never steers by it.
pub const LOW_MARGIN: f64 = 0.18;

/// How a fit is made: the reliability, the slope cap and the grid of θ.
#[derive(Clone, Copy, Debug)]
pub struct Model {
    /// The pass probability the capacity has (0.8: met in 80 % of probes).
    pub reliability: f64,
    /// The steepest slope (per unit of ln rate) the model admits.
    pub max_slope: f64,
    /// The grid's spacing in ln rate.
    pub step: f64,
    /// The largest lapse (share of probes failing at any rate) the model admits.
    pub max_lapse: f64,
    /// The deviance within which a θ is in the band ([`CUTOFF`]).
    pub cutoff: f64,
    /// The slope a curve must be shown steeper than for its band to be claimed ([`MIN_SLOPE`]),
    /// and the deviance that shows it ([`STEEP_CUTOFF`]).
    pub min_slope: f64,
    pub steep_cutoff: f64,
    /// The shallowest slope the band answers for whatever the probes say of the slope (0:
    /// off): the band is the union of this model's band and the band of the same model with
    /// its slope capped here, each against its own best fit.
    pub floor: f64,
    /// How much lower the band's low end is stated than the profile puts it, as a share
    /// ([`LOW_MARGIN`]).
    pub low_margin: f64,
}

/// A fit: θ's estimate and band, in rates (records per second).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// The rate at which the SLO holds with the reliability: the likeliest θ.
    pub estimate: f64,
    /// The band's ends: the grid's first points outside it (at its ends when it is open), the
    /// low one less `Model::low_margin`.
    pub low: f64,
    pub high: f64,
    /// The band reached the grid's lower (upper) end: the probes cannot bound it there.
    pub low_open: bool,
    pub high_open: bool,
    /// The fitted slope at the estimate.
    pub slope: f64,
    /// The fitted lapse at the estimate.
    pub lapse: f64,
    /// How far the probes rule out a curve no steeper than `Model::min_slope`: the deviance
    /// of the best such curve from the best fit (a likelihood-ratio statistic, 0 when the
    /// best fit is that shallow).
    pub steepness: f64,
}

impl Fit {
    /// This fit with its band widened to cover `other`'s too: both ends, since with the floor
    /// at Wilks' cutoff the misses lay on both sides (docs/results.md).
    fn union(&self, other: &Fit) -> Fit {
        let (low, low_open) = if other.low < self.low {
            (other.low, other.low_open)
        } else {
            (self.low, self.low_open)
        };
        let (high, high_open) = if other.high > self.high {
            (other.high, other.high_open)
        } else {
            (self.high, self.high_open)
        };
        Fit {
            low,
            high,
            low_open,
            high_open,
            ..*self
        }
    }

    /// The band's width as a ratio (high / low).
    pub fn ratio(&self) -> f64 {
        self.high / self.low
    }
}

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

/// ln σ(z), stable for large |z|.
fn ln_sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        -(-z).exp().ln_1p()
    } else {
        z - z.exp().ln_1p()
    }
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

impl Model {
    /// A model for a search to within `precision` (0.05: 5 %): the slope cap lets the pass
    /// probability fall from 88 % to 12 % across one precision step at the steepest; the grid
    /// resolves a third of a step.
    pub fn new(reliability: f64, precision: f64) -> Model {
        let p = (1.0 + precision.max(0.001)).ln();
        Model {
            reliability,
            max_slope: 4.0 / p,
            step: p / 3.0,
            max_lapse: (0.25 * (1.0 - reliability)).clamp(0.0, 0.05),
            cutoff: CUTOFF,
            min_slope: MIN_SLOPE,
            steep_cutoff: STEEP_CUTOFF,
            floor: FLOOR,
            low_margin: LOW_MARGIN,
        }
    }

    /// The probability of a pass at ln rate `x` for (θ, b) and lapse λ.
    pub fn pass_probability(&self, theta: f64, b: f64, lapse: f64, x: f64) -> f64 {
        (1.0 - lapse) * sigmoid(self.offset(lapse) + b * (theta - x))
    }

    /// L_λ: the logit that makes the pass probability `reliability` at θ under lapse λ.
    fn offset(&self, lapse: f64) -> f64 {
        logit(self.reliability / (1.0 - lapse))
    }

    fn loglik(&self, obs: &[Group], theta: f64, b: f64, lapse: f64) -> f64 {
        let l = self.offset(lapse);
        if lapse == 0.0 {
            return obs
                .iter()
                .map(|o| {
                    let z = l + b * (theta - o.x);
                    let pass = if o.passes > 0.0 {
                        o.passes * ln_sigmoid(z)
                    } else {
                        0.0
                    };
                    let fail = if o.fails > 0.0 {
                        o.fails * ln_sigmoid(-z)
                    } else {
                        0.0
                    };
                    pass + fail
                })
                .sum();
        }
        let keep = (1.0 - lapse).ln();
        obs.iter()
            .map(|o| {
                let z = l + b * (theta - o.x);
                let pass = if o.passes > 0.0 {
                    o.passes * (keep + ln_sigmoid(z))
                } else {
                    0.0
                };
                // 1 − (1 − λ)σ(z) = λ + (1 − λ)σ(−z)
                let fail = if o.fails > 0.0 {
                    o.fails * (lapse + (1.0 - lapse) * sigmoid(-z)).ln()
                } else {
                    0.0
                };
                pass + fail
            })
            .sum()
    }

    /// The best (slope, lapse) for θ and its log-likelihood, and the best log-likelihood with
    /// a slope of at most `min_slope`.
    fn profile(&self, obs: &[Group], theta: f64) -> Point {
        let (b, ll) = self.profile_pure(obs, theta);
        // ℓ is concave in b without a lapse: at most `min_slope`, its best is there or at b.
        let shallow = if b <= self.min_slope {
            ll
        } else {
            self.loglik(obs, theta, self.min_slope, 0.0)
        };
        let pure = Point {
            theta,
            b,
            lapse: 0.0,
            ll,
            shallow,
        };
        if self.max_lapse <= 0.0 || obs.iter().all(|o| o.fails == 0.0) {
            return pure;
        }
        let lapse = self.max_lapse;
        let (bl, lll) = self.profile_lapse(obs, theta, lapse);
        // With a lapse ℓ need not be concave: the best of three slopes up to `min_slope`.
        let shallow = if bl <= self.min_slope {
            lll
        } else {
            [0.0, 0.5, 1.0]
                .map(|f| self.loglik(obs, theta, f * self.min_slope, lapse))
                .into_iter()
                .fold(f64::NEG_INFINITY, f64::max)
        }
        .max(pure.shallow);
        if lll > ll {
            Point {
                theta,
                b: bl,
                lapse,
                ll: lll,
                shallow,
            }
        } else {
            Point { shallow, ..pure }
        }
    }

    /// The best slope under lapse λ > 0. ℓ is no longer concave in b (a failure's term is
    /// bounded below by ln λ), so a scan finds the best region and a golden section refines it.
    fn profile_lapse(&self, obs: &[Group], theta: f64, lapse: f64) -> (f64, f64) {
        const SCAN: usize = 12;
        let at = |k: usize| self.max_slope * (k as f64 / SCAN as f64).powi(2);
        let ll = |b: f64| self.loglik(obs, theta, b, lapse);
        let (best, _) =
            (0..=SCAN)
                .map(|k| (k, ll(at(k))))
                .fold(
                    (0, f64::NEG_INFINITY),
                    |m, (k, v)| if v > m.1 { (k, v) } else { m },
                );
        let (mut lo, mut hi) = (at(best.saturating_sub(1)), at((best + 1).min(SCAN)));
        let g = 0.5 * (5f64.sqrt() - 1.0);
        let (mut c, mut d) = (hi - g * (hi - lo), lo + g * (hi - lo));
        let (mut fc, mut fd) = (ll(c), ll(d));
        for _ in 0..12 {
            if fc > fd {
                hi = d;
                (d, fd) = (c, fc);
                c = hi - g * (hi - lo);
                fc = ll(c);
            } else {
                lo = c;
                (c, fc) = (d, fd);
                d = lo + g * (hi - lo);
                fd = ll(d);
            }
        }
        let b = 0.5 * (lo + hi);
        let v = ll(b);
        let scanned = ll(at(best));
        if scanned > v {
            (at(best), scanned)
        } else {
            (b, v)
        }
    }

    /// The best slope for θ without a lapse and its log-likelihood: ℓ is concave in b, so its
    /// derivative Σ (y − p)(θ − x) falls with b; Newton's method, kept inside a bisection's
    /// bracket, finds its zero within [0, max_slope].
    fn profile_pure(&self, obs: &[Group], theta: f64) -> (f64, f64) {
        let l = logit(self.reliability);
        // The derivative of ℓ in b, and the second derivative.
        let slope = |b: f64| -> (f64, f64) {
            obs.iter().fold((0.0, 0.0), |(g, h), o| {
                let d = theta - o.x;
                let p = sigmoid(l + b * d);
                let n = o.passes + o.fails;
                (g + (o.passes - n * p) * d, h - n * p * (1.0 - p) * d * d)
            })
        };
        let b = if slope(0.0).0 <= 0.0 {
            0.0
        } else if slope(self.max_slope).0 >= 0.0 {
            self.max_slope
        } else {
            let (mut lo, mut hi) = (0.0, self.max_slope);
            let mut b = 0.5 * hi;
            for _ in 0..60 {
                let (g, h) = slope(b);
                if g > 0.0 {
                    lo = b
                } else {
                    hi = b
                }
                let newton = b - g / h;
                let next = if h < 0.0 && newton > lo && newton < hi {
                    newton
                } else {
                    0.5 * (lo + hi)
                };
                let done = (next - b).abs() < 1e-6 || hi - lo < 1e-6;
                b = next;
                if done {
                    break;
                }
            }
            b
        };
        (b, self.loglik(obs, theta, b, 0.0))
    }

    /// The fit over ln rates `[lo, hi]` (the grid's ends); None without probes.
    pub fn fit(&self, obs: &[Obs], lo: f64, hi: f64) -> Option<Fit> {
        self.fit_with(&group(obs), lo, hi, self.step)
    }

    /// The fit over a grid of θ from `lo` to `hi` at `step`. Every [`STRIDE`]th point is
    /// profiled first, then every point between two of those either of which comes within
    /// the cutoff and [`MARGIN`] of the best so far: the rest lie far outside the band, and
    /// profiling them would only say so (three times the work, in a simulation of thousands
    /// of searches).
    fn fit_with(&self, obs: &[Group], lo: f64, hi: f64, step: f64) -> Option<Fit> {
        self.fits_with(obs, (lo, hi, step), &[self.cutoff])
            .map(|mut f| f.remove(0))
    }

    /// The fit at each of `cutoffs` from one profile of the grid: what a calibration compares
    /// (`coverage.rs`). None without probes.
    pub fn fits(&self, obs: &[Obs], lo: f64, hi: f64, cutoffs: &[f64]) -> Option<Vec<Fit>> {
        self.fits_with(&group(obs), (lo, hi, self.step), cutoffs)
    }

    fn fits_with(
        &self,
        obs: &[Group],
        (lo, hi, step): (f64, f64, f64),
        cutoffs: &[f64],
    ) -> Option<Vec<Fit>> {
        if obs.is_empty() || hi <= lo || cutoffs.is_empty() {
            return None;
        }
        let widest = cutoffs.iter().copied().fold(0.0, f64::max);
        let n = ((hi - lo) / step).ceil() as usize + 1;
        let theta_at = |k: usize| (lo + k as f64 * step).min(hi);
        let eval = |k: usize| self.profile(obs, theta_at(k));
        let mut grid: Vec<Option<Point>> = vec![None; n];
        let coarse: Vec<usize> = (0..n)
            .step_by(STRIDE)
            .chain((n % STRIDE != 1).then_some(n - 1))
            .collect();
        for &k in &coarse {
            grid[k] = Some(eval(k));
        }
        let ll = |g: &Option<Point>| g.map_or(f64::NEG_INFINITY, |g| g.ll);
        let coarse_best = grid.iter().map(ll).fold(f64::NEG_INFINITY, f64::max);
        let reach = coarse_best - widest / 2.0 - MARGIN;
        for w in coarse.windows(2) {
            if ll(&grid[w[0]]) >= reach || ll(&grid[w[1]]) >= reach {
                for (k, g) in grid.iter_mut().enumerate().take(w[1]).skip(w[0] + 1) {
                    *g = Some(eval(k));
                }
            }
        }
        let best = grid.iter().map(ll).fold(f64::NEG_INFINITY, f64::max);
        let shallow = grid
            .iter()
            .flatten()
            .map(|g| g.shallow)
            .fold(f64::NEG_INFINITY, f64::max);
        // A plateau of equally likely θ (a flat fit) takes its middle.
        let tops: Vec<usize> = (0..n).filter(|&k| ll(&grid[k]) >= best - 1e-9).collect();
        let top = grid[tops[tops.len() / 2]].expect("profiled");
        let band = |cutoff: f64| {
            let inside: Vec<usize> = (0..n)
                .filter(|&k| 2.0 * (best - ll(&grid[k])) <= cutoff)
                .collect();
            let (first, last) = (inside[0], inside[inside.len() - 1]);
            // The band's edge lies between its last point inside and the next one outside:
            // the one outside is its end, so the grid never narrows it.
            let low = theta_at(first.saturating_sub(1)).exp() / (1.0 + self.low_margin);
            let high = theta_at((last + 1).min(n - 1)).exp();
            Fit {
                estimate: top.theta.exp(),
                low,
                high,
                low_open: first == 0,
                high_open: last == n - 1,
                slope: top.b,
                lapse: top.lapse,
                steepness: (2.0 * (best - shallow)).max(0.0),
            }
        };
        let fits: Vec<Fit> = cutoffs.iter().map(|&c| band(c)).collect();
        if self.floor <= 0.0 || self.floor >= self.max_slope {
            return Some(fits);
        }
        let capped = Model {
            max_slope: self.floor,
            floor: 0.0,
            ..*self
        }
        .fits_with(obs, (lo, hi, step), cutoffs)?;
        Some(
            fits.into_iter()
                .zip(capped)
                .map(|(f, c)| f.union(&c))
                .collect(),
        )
    }

    /// The rate among `candidates` whose probe is expected to leave the narrowest band: each
    /// outcome's band weighted by the probability `now` (the fit of `obs` over `[lo, hi]`)
    /// gives it. The grid is coarser here (the choice
    /// needs no finer), and ties go to the rate nearest the estimate.
    pub fn most_telling(
        &self,
        obs: &[Obs],
        now: &Fit,
        (lo, hi): (f64, f64),
        candidates: &[f64],
    ) -> Option<f64> {
        let (theta, b, lapse) = (now.estimate.ln(), now.slope, now.lapse);
        // One probe moves the band little: half a doubling beyond it is grid enough.
        let margin = std::f64::consts::LN_2 / 2.0;
        let (lo, hi) = (
            (now.low.ln() - margin).max(lo),
            (now.high.ln() + margin).min(hi),
        );
        let step = self.step * 3.0;
        let width = |extra: Obs| -> f64 {
            let mut with = obs.to_vec();
            with.push(extra);
            self.fit_with(&group(&with), lo, hi, step)
                .map_or(f64::INFINITY, |f| f.high.ln() - f.low.ln())
        };
        candidates
            .iter()
            .map(|&r| {
                let x = r.ln();
                let p = self.pass_probability(theta, b, lapse, x);
                let w =
                    p * width(Obs { x, pass: true }) + (1.0 - p) * width(Obs { x, pass: false });
                (r, w, (x - theta).abs())
            })
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)))
            .map(|(r, ..)| r)
    }
}

/// One θ of the grid, profiled: the best slope and lapse there, its log-likelihood, and the
/// best log-likelihood with a slope of at most `Model::min_slope`.
#[derive(Clone, Copy, Debug)]
struct Point {
    theta: f64,
    b: f64,
    lapse: f64,
    ll: f64,
    shallow: f64,
}

/// The grid's stride of its first pass (`Model::fit_with`).
const STRIDE: usize = 4;

/// How far below the band (in log-likelihood) a first-pass point may lie and still have its
/// neighbours profiled: a profile rises by far less than this within `STRIDE` points.
const MARGIN: f64 = 3.0;

/// The probes at one rate: its ln rate, and how many passed and failed there. The likelihood
/// is a sum over probes, so probes at one rate are weighed together at once (a search probes
/// about half as many rates as it runs probes).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Group {
    x: f64,
    passes: f64,
    fails: f64,
}

fn group(obs: &[Obs]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for o in obs {
        let g = match out.iter_mut().find(|g| g.x == o.x) {
            Some(g) => g,
            None => {
                out.push(Group {
                    x: o.x,
                    passes: 0.0,
                    fails: 0.0,
                });
                out.last_mut().expect("just pushed")
            }
        };
        if o.pass {
            g.passes += 1.0;
        } else {
            g.fails += 1.0;
        }
    }
    out
}

#[cfg(test)]
#[path = "logistic_tests.rs"]
mod tests;
