//! The permutation test of a candidate: its p-value, stopped early when it cannot reach its
//! level, and for a candidate no permutation reached, an estimate of how far beyond them it
//! lies, so that strong changes still rank.

use super::scan::{best_over, Flat, Scratch};
use crate::random::Rng;

/// Permutations whose maxima the tail is fitted to: the largest tenth of them.
const TAIL_SHARE: f64 = 0.1;

/// What a permutation test found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Tested {
    /// The permutation p-value: (exceedances + 1) / (R + 1), or Besag & Clifford's sequential
    /// one when the test stopped early. Exact whatever the distribution; the decision's.
    pub p: f64,
    /// When no permutation reached the observed statistic: the p-value extrapolated from the
    /// permutations' tail (below `p`, which is then only the floor 1 / (R + 1)).
    pub tail: Option<f64>,
    /// Permutations drawn.
    pub drawn: usize,
}

/// The permutation test of the best candidate's statistic `observed` at `level`: points
/// shuffled within each cluster, the best candidate found again, at most `r` times. Stops as
/// soon as the p-value cannot reach `level` any more, with Besag & Clifford's sequential
/// p-value (exceedances / permutations drawn), itself a valid p-value.
#[allow(clippy::too_many_arguments)] // the test's inputs, each needed once
pub(super) fn test(
    flat: &Flat,
    clusters: &[(usize, usize)],
    observed: f64,
    level: f64,
    r: usize,
    min: usize,
    rng: &mut Rng,
    sc: &mut Scratch,
) -> Tested {
    // Past this many exceedances, (g + 1) / (R + 1) > level whatever the rest do.
    let enough = (level * (r + 1) as f64).floor() as usize;
    // Sums in another order round differently: a permutation that happens to be the identity
    // must count as reaching the observed value.
    let reach = observed * (1.0 - 1e-9);
    let mut order: Vec<usize> = std::mem::take(&mut sc.order);
    order.clear();
    order.extend(0..flat.points());
    let mut permuted = std::mem::take(&mut sc.permuted);
    let mut maxima = std::mem::take(&mut sc.maxima);
    maxima.clear();
    let mut exceed = 0usize;
    let mut stopped = None;
    for drawn in 1..=r {
        for &(a, b) in clusters {
            shuffle(&mut order[a..b], rng);
        }
        flat.permuted(&order, &mut permuted);
        let q = best_over(&permuted, clusters, min, sc).map_or(0.0, |c| c.q);
        maxima.push(q);
        if q >= reach {
            exceed += 1;
            if exceed > enough {
                stopped = Some(Tested {
                    p: exceed as f64 / drawn as f64,
                    tail: None,
                    drawn,
                });
                break;
            }
        }
    }
    let tested = stopped.unwrap_or_else(|| {
        let p = (exceed + 1) as f64 / (r + 1) as f64;
        Tested {
            p,
            tail: (exceed == 0)
                .then(|| exponential_tail(&mut maxima, observed))
                .flatten()
                .map(|t| t.min(p)),
            drawn: r,
        }
    });
    sc.order = order;
    sc.permuted = permuted;
    sc.maxima = maxima;
    tested
}

/// The share of permutations that would reach `observed`, beyond all of those drawn: the
/// excesses of the largest tenth over the threshold below them fitted as exponential (a
/// generalized Pareto tail of shape 0, after Knijnenburg et al., "Fewer permutations, more
/// accurate P-values", Bioinformatics 2009). Shape 0 rather than a fitted one: the statistic is
/// a maximum over splits of energy distances, sums of squares in the limit, whose tails are
/// exponential (the Gumbel domain); a fitted negative shape would end the tail at a finite
/// point and call every stronger change p = 0. None when the tail is degenerate.
fn exponential_tail(maxima: &mut [f64], observed: f64) -> Option<f64> {
    let r = maxima.len();
    let n = ((r as f64 * TAIL_SHARE).round() as usize).clamp(10, r.saturating_sub(1));
    if r < 20 {
        return None;
    }
    maxima.sort_by(|a, b| b.total_cmp(a));
    let threshold = (maxima[n - 1] + maxima[n]) / 2.0;
    let scale = maxima[..n].iter().map(|z| z - threshold).sum::<f64>() / n as f64;
    // NaN-proof: neither comparison holds for a NaN.
    let usable = scale > 0.0 && observed > threshold;
    if !usable {
        return None;
    }
    Some(n as f64 / r as f64 * (-(observed - threshold) / scale).exp())
}

/// Fisher–Yates, with Lemire's multiply-shift for the index (uniform up to a bias of n / 2^64).
fn shuffle(x: &mut [usize], rng: &mut Rng) {
    for i in (1..x.len()).rev() {
        let j = ((u128::from(rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
        x.swap(i, j);
    }
}
