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
//! over b (concave in b), and the band is every θ whose deviance from the best is within the
//! χ²₁ quantile of the band's confidence (Wilks).
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

/// χ²₁ at 0.95: the band is a two-sided 95 % profile-likelihood interval (nominal: with the
/// slope capped and few probes, simulation finds it covers the true capacity less often).
pub const CHI2_95: f64 = 3.841_459;

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
}

/// A fit: θ's estimate and band, in rates (records per second).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// The rate at which the SLO holds with the reliability: the likeliest θ.
    pub estimate: f64,
    /// The band's ends (95 %, nominal).
    pub low: f64,
    pub high: f64,
    /// The band reached the grid's lower (upper) end: the probes cannot bound it there.
    pub low_open: bool,
    pub high_open: bool,
    /// The fitted slope at the estimate.
    pub slope: f64,
    /// The fitted lapse at the estimate.
    pub lapse: f64,
}

impl Fit {
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

    fn loglik(&self, obs: &[Obs], theta: f64, b: f64, lapse: f64) -> f64 {
        let l = self.offset(lapse);
        if lapse == 0.0 {
            return obs
                .iter()
                .map(|o| {
                    let z = l + b * (theta - o.x);
                    if o.pass {
                        ln_sigmoid(z)
                    } else {
                        ln_sigmoid(-z)
                    }
                })
                .sum();
        }
        let keep = (1.0 - lapse).ln();
        obs.iter()
            .map(|o| {
                let z = l + b * (theta - o.x);
                if o.pass {
                    keep + ln_sigmoid(z)
                } else {
                    // 1 − (1 − λ)σ(z) = λ + (1 − λ)σ(−z)
                    (lapse + (1.0 - lapse) * sigmoid(-z)).ln()
                }
            })
            .sum()
    }

    /// The best (slope, lapse) for θ and its log-likelihood.
    fn profile(&self, obs: &[Obs], theta: f64) -> (f64, f64, f64) {
        let (b, ll) = self.profile_pure(obs, theta);
        if self.max_lapse <= 0.0 || obs.iter().all(|o| o.pass) {
            return (b, 0.0, ll);
        }
        let (bl, lll) = self.profile_lapse(obs, theta, self.max_lapse);
        if lll > ll {
            (bl, self.max_lapse, lll)
        } else {
            (b, 0.0, ll)
        }
    }

    /// The best slope under lapse λ > 0. ℓ is no longer concave in b (a failure's term is
    /// bounded below by ln λ), so a scan finds the best region and a golden section refines it.
    fn profile_lapse(&self, obs: &[Obs], theta: f64, lapse: f64) -> (f64, f64) {
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
        for _ in 0..16 {
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
    /// derivative Σ (y − p)(θ − x) falls with b; bisection finds its zero within [0, max_slope].
    fn profile_pure(&self, obs: &[Obs], theta: f64) -> (f64, f64) {
        let l = logit(self.reliability);
        let slope = |b: f64| -> f64 {
            obs.iter()
                .map(|o| {
                    let p = sigmoid(l + b * (theta - o.x));
                    (f64::from(u8::from(o.pass)) - p) * (theta - o.x)
                })
                .sum()
        };
        let b = if slope(0.0) <= 0.0 {
            0.0
        } else if slope(self.max_slope) >= 0.0 {
            self.max_slope
        } else {
            let (mut lo, mut hi) = (0.0, self.max_slope);
            for _ in 0..22 {
                let mid = 0.5 * (lo + hi);
                if slope(mid) > 0.0 {
                    lo = mid
                } else {
                    hi = mid
                }
            }
            0.5 * (lo + hi)
        };
        (b, self.loglik(obs, theta, b, 0.0))
    }

    /// The fit over ln rates `[lo, hi]` (the grid's ends); None without probes.
    pub fn fit(&self, obs: &[Obs], lo: f64, hi: f64) -> Option<Fit> {
        self.fit_with(obs, lo, hi, self.step)
    }

    fn fit_with(&self, obs: &[Obs], lo: f64, hi: f64, step: f64) -> Option<Fit> {
        if obs.is_empty() || hi <= lo {
            return None;
        }
        let n = ((hi - lo) / step).ceil() as usize + 1;
        let grid: Vec<(f64, f64, f64, f64)> = (0..n)
            .map(|k| {
                let theta = (lo + k as f64 * step).min(hi);
                let (b, lapse, ll) = self.profile(obs, theta);
                (theta, b, lapse, ll)
            })
            .collect();
        let best = grid.iter().map(|g| g.3).fold(f64::NEG_INFINITY, f64::max);
        // A plateau of equally likely θ (a flat fit) takes its middle.
        let tops: Vec<usize> = (0..n).filter(|&k| grid[k].3 >= best - 1e-9).collect();
        let top = tops[tops.len() / 2];
        let inside: Vec<usize> = (0..n)
            .filter(|&k| 2.0 * (best - grid[k].3) <= CHI2_95)
            .collect();
        let (first, last) = (inside[0], inside[inside.len() - 1]);
        Some(Fit {
            estimate: grid[top].0.exp(),
            low: grid[first].0.exp(),
            high: grid[last].0.exp(),
            low_open: first == 0,
            high_open: last == n - 1,
            slope: grid[top].1,
            lapse: grid[top].2,
        })
    }

    /// The rate among `candidates` whose probe is expected to leave the narrowest band: each
    /// outcome's band weighted by its fitted probability. The grid is coarser here (the choice
    /// needs no finer), and ties go to the rate nearest the estimate.
    pub fn most_telling(&self, obs: &[Obs], lo: f64, hi: f64, candidates: &[f64]) -> Option<f64> {
        let now = self.fit(obs, lo, hi)?;
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
            self.fit_with(&with, lo, hi, step)
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

#[cfg(test)]
#[path = "logistic_tests.rs"]
mod tests;
