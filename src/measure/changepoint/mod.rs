//! Change points in a series of results: where a figure's distribution changed, found with
//! E-Divisive with means and its permutation test (Matteson & James, "A Nonparametric Approach
//! for Multiple Change Point Analysis of Multivariate Data", JASA 2014), the method of MongoDB's
//! performance CI and Apache Otava (formerly DataStax's Hunter). Pure: no I/O, no clock; the
//! permutations come from a seeded [`Rng`], so the same series and seed give the same answer.
//!
//! - **The statistic** is the energy divergence between two adjacent segments X = Z[s..τ) and
//!   Y = Z[τ..κ) of a cluster [s, e): Q̂ = mk/(m+k) · (2/(mk)·Σ|x−y| − Σ|x−x'|/C(m,2) −
//!   Σ|y−y'|/C(k,2)), the average distance between the segments less the average distances
//!   within them (the exponent is 1). It is zero in expectation when both come from one
//!   distribution and grows with any difference between them, of location or of shape. Y may
//!   end before the cluster does (κ < e), as in the paper, so a later change does not blur an
//!   earlier one. The best (τ, κ) over all clusters is the candidate; every sum comes from
//!   running sums, O(n²) for n values.
//! - **The significance test permutes.** The points are shuffled within each cluster and the
//!   best candidate found again; the p-value is the share of permutations whose best is at
//!   least the observed one. Under no change the points are exchangeable, so the test's size
//!   is at most α whatever the distribution — skewed latencies included. A candidate that is
//!   clearly not significant stops early (Besag & Clifford's sequential p-value), so the last
//!   test of every series, which fails, costs a few permutations rather than all of them.
//! - **Hierarchical, as the paper does:** a significant candidate splits its cluster and the
//!   search starts again over every cluster; the first candidate that is not significant ends
//!   it. Otava (after Hunter) instead runs the search in sliding windows of 50 points with a
//!   Student t-test at p < 0.001 and re-tests the union; a history here holds tens to a few
//!   hundred runs, where the whole series is cheap, the paper's test is exact, and its size is
//!   what the default [`ALPHA`] is chosen by (changepoint_tests.rs measures both).
//! - **A point may hold several values** (a repeated run's trials). Distances are between
//!   values, a split falls only between points, and a permutation moves a point's values
//!   together: trials of one run share its conditions and are not exchangeable with another
//!   run's.
//! - **A segment has at least [`MIN_SIZE`] points**: a single odd run is an outlier, not a new
//!   level, and a change at the newest runs shows once that many runs have followed it.

use serde::{Deserialize, Serialize};

use crate::random::Rng;

/// The significance level a candidate must reach. With [`PERMUTATIONS`] = 199 the smallest
/// p-value is 0.005; on pure noise 1.6 % of 100-point series show a change at this level, and
/// a shift of twice the noise is found in 30 points (changepoint_tests.rs, docs/results.md).
pub const ALPHA: f64 = 0.01;

/// Permutations per test: the p-value's resolution is 1 / (R + 1).
pub const PERMUTATIONS: usize = 199;

/// The fewest points on either side of a change point.
pub const MIN_SIZE: usize = 3;

/// How the search runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// A candidate is a change point when its p-value is at most this.
    pub alpha: f64,
    /// Permutations per test, at most.
    pub permutations: usize,
    /// The fewest points in a segment (at least 1).
    pub min_size: usize,
    /// Seeds the permutations.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            alpha: ALPHA,
            permutations: PERMUTATIONS,
            min_size: MIN_SIZE,
            seed: 0x6b62_6368_616e_6765,
        }
    }
}

/// A change point: the series is split before point `index`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The first point after the change (from 0).
    pub index: usize,
    /// The permutation test's p-value when the point was found.
    pub p_value: f64,
    /// The energy statistic Q̂ of the split.
    pub statistic: f64,
    /// The mean of every value from the previous change point (or the start) to this one, and
    /// from this one to the next (or the end).
    pub mean_before: f64,
    pub mean_after: f64,
    /// How many points those segments hold.
    pub points_before: usize,
    pub points_after: usize,
}

impl ChangePoint {
    /// mean_after / mean_before − 1 (a fraction); None when the mean before is 0.
    pub fn change(&self) -> Option<f64> {
        let r = self.mean_after / self.mean_before - 1.0;
        (self.mean_before != 0.0 && r.is_finite()).then_some(r)
    }
}

/// The change points of a series whose points each hold one or more values (NaN values are
/// left out), in order of index.
pub fn change_points(points: &[Vec<f64>], s: &Settings) -> Vec<ChangePoint> {
    change_points_by(points, |v| v, s)
}

/// The change points found on `key` of every value (a monotone map, finite on the values:
/// `ln` of latencies, whose rare stalls of 100× would otherwise outweigh a change of the
/// level), with the means before and after of the values themselves. The permutation test
/// holds for any such key.
pub fn change_points_by(
    points: &[Vec<f64>],
    key: impl Fn(f64) -> f64,
    s: &Settings,
) -> Vec<ChangePoint> {
    let kept = || (points.iter()).map(|p| p.iter().copied().filter(|v| !v.is_nan()));
    let values = Flat::of(kept());
    let flat = Flat::of(kept().map(|p| p.map(&key)));
    let n_points = flat.points();
    let min = s.min_size.max(1);
    let mut rng = Rng::new(s.seed);
    let mut scratch = Scratch::default();
    let mut cuts = vec![0, n_points];
    let mut found: Vec<(usize, f64, f64)> = Vec::new();
    loop {
        let clusters: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
        let best = best_over(&flat, &clusters, min, &mut scratch);
        // A constant series (or one too short to split) has nothing to test.
        let Some(best) = best.filter(|c| c.q > 0.0) else {
            break;
        };
        let p = p_value(&flat, &clusters, best.q, s, min, &mut rng, &mut scratch);
        if p > s.alpha {
            break;
        }
        found.push((best.tau, p, best.q));
        let at = cuts.partition_point(|c| *c < best.tau);
        cuts.insert(at, best.tau);
    }
    found.sort_by_key(|f| f.0);
    (found.iter())
        .map(|&(index, p_value, statistic)| {
            let at = cuts.partition_point(|c| *c < index);
            let (before, after) = ((cuts[at - 1], index), (index, cuts[at + 1]));
            ChangePoint {
                index,
                p_value,
                statistic,
                mean_before: values.mean(before),
                mean_after: values.mean(after),
                points_before: before.1 - before.0,
                points_after: after.1 - after.0,
            }
        })
        .collect()
}

/// The values of every point in one array; point i holds `values[bounds[i]..bounds[i + 1]]`.
#[derive(Default)]
struct Flat {
    values: Vec<f64>,
    bounds: Vec<usize>,
}

impl Flat {
    fn of<P: IntoIterator<Item = f64>>(points: impl IntoIterator<Item = P>) -> Flat {
        let mut f = Flat {
            values: Vec::new(),
            bounds: vec![0],
        };
        for p in points {
            f.values.extend(p);
            f.bounds.push(f.values.len());
        }
        f
    }

    fn points(&self) -> usize {
        self.bounds.len() - 1
    }

    fn point(&self, i: usize) -> &[f64] {
        &self.values[self.bounds[i]..self.bounds[i + 1]]
    }

    /// The mean of the values of points [a, b); NaN when they hold none.
    fn mean(&self, (a, b): (usize, usize)) -> f64 {
        let v = &self.values[self.bounds[a]..self.bounds[b]];
        v.iter().sum::<f64>() / v.len() as f64
    }

    /// This series with its points in `order`.
    fn permuted(&self, order: &[usize], into: &mut Flat) {
        into.values.clear();
        into.bounds.clear();
        into.bounds.push(0);
        for &i in order {
            into.values.extend_from_slice(self.point(i));
            into.bounds.push(into.values.len());
        }
    }
}

/// A split of a cluster: X is [start, tau), Y is [tau, kappa), in points.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Candidate {
    tau: usize,
    kappa: usize,
    q: f64,
}

/// Reused buffers of the scan.
#[derive(Default)]
struct Scratch {
    /// Per value: the sum of distances within [value, current end).
    within: Vec<f64>,
    /// prefix[t]: the sum of distances within [0, B_t).
    prefix: Vec<f64>,
    /// 1 / C(c, 2) by count c.
    inv_pairs: Vec<f64>,
    order: Vec<usize>,
    permuted: Flat,
}

/// The best candidate over the clusters (each [start, end) in points).
fn best_over(
    flat: &Flat,
    clusters: &[(usize, usize)],
    min: usize,
    scratch: &mut Scratch,
) -> Option<Candidate> {
    (clusters.iter())
        .filter_map(|&c| best_split(flat, c, min, scratch))
        .fold(None, |best: Option<Candidate>, c| match best {
            Some(b) if b.q >= c.q => Some(b),
            _ => Some(c),
        })
}

/// The (τ, κ) of cluster [a, b) with the largest Q̂, each segment at least `min` points; None
/// when the cluster is too short to split.
fn best_split(
    flat: &Flat,
    (a, b): (usize, usize),
    min: usize,
    sc: &mut Scratch,
) -> Option<Candidate> {
    let points = b - a;
    if points < 2 * min {
        return None;
    }
    let base = flat.bounds[a];
    let bound = |t: usize| flat.bounds[a + t] - base;
    let v = &flat.values[base..flat.bounds[b]];
    // within[i]: the sum of distances within values [i, current end), for every value i (the
    // scan reads it at the points' first values); one tight loop, whatever the points hold.
    sc.within.clear();
    sc.within.resize(v.len(), 0.0);
    sc.prefix.clear();
    sc.prefix.resize(points + 1, 0.0);
    // 1 / C(c, 2) for every count c of values (0 for fewer than two: no pairs, no mean).
    if sc.inv_pairs.len() <= v.len() {
        sc.inv_pairs = (0..=v.len())
            .map(|c| {
                if c > 1 {
                    2.0 / (c * (c - 1)) as f64
                } else {
                    0.0
                }
            })
            .collect();
    }
    let mut best: Option<Candidate> = None;
    for k in 1..=points {
        // Add point k − 1's values one by one: value j adds its distance to every earlier
        // value i to the within-sum of each segment [i, j) it extends.
        for j in bound(k - 1)..bound(k) {
            let (x, mut acc) = (v[j], 0.0);
            for (w, y) in sc.within[..j].iter_mut().zip(&v[..j]).rev() {
                acc += (x - y).abs();
                *w += acc;
            }
        }
        sc.prefix[k] = sc.within[0];
        // κ = k: every τ with at least `min` points on each side.
        if k < 2 * min {
            continue;
        }
        let end = bound(k);
        let (total, inv_all) = (sc.within[0], 1.0 / end as f64);
        for t in min..=k - min {
            let (m, n) = (bound(t), end - bound(t));
            if m == 0 || n == 0 {
                continue;
            }
            let (wx, wy) = (sc.prefix[t], sc.within[bound(t)]);
            let between = total - wx - wy;
            // Q̂ = mn/(m+n) · (2·between/(mn) − wx/C(m,2) − wy/C(n,2)), without a division.
            let (mf, nf) = (m as f64, n as f64);
            let q =
                inv_all * (2.0 * between - mf * nf * (wx * sc.inv_pairs[m] + wy * sc.inv_pairs[n]));
            if best.map_or(true, |c| q > c.q) {
                best = Some(Candidate {
                    tau: a + t,
                    kappa: a + k,
                    q,
                });
            }
        }
    }
    best
}

/// The permutation test of the best candidate's statistic `observed`: points shuffled within
/// each cluster, the best candidate found again, at most `s.permutations` times. Stops as soon
/// as the p-value cannot reach `s.alpha` any more, with Besag & Clifford's sequential p-value
/// (exceedances / permutations drawn), itself a valid p-value.
fn p_value(
    flat: &Flat,
    clusters: &[(usize, usize)],
    observed: f64,
    s: &Settings,
    min: usize,
    rng: &mut Rng,
    sc: &mut Scratch,
) -> f64 {
    let r = s.permutations;
    // Past this many exceedances, (g + 1) / (R + 1) > α whatever the rest do.
    let enough = (s.alpha * (r + 1) as f64).floor() as usize;
    // Sums in another order round differently: a permutation that happens to be the identity
    // must count as reaching the observed value.
    let reach = observed * (1.0 - 1e-9);
    let mut order: Vec<usize> = std::mem::take(&mut sc.order);
    order.clear();
    order.extend(0..flat.points());
    let mut permuted = std::mem::take(&mut sc.permuted);
    let mut exceed = 0usize;
    let mut p = None;
    for drawn in 1..=r {
        for &(a, b) in clusters {
            shuffle(&mut order[a..b], rng);
        }
        flat.permuted(&order, &mut permuted);
        if best_over(&permuted, clusters, min, sc).is_some_and(|c| c.q >= reach) {
            exceed += 1;
            if exceed > enough {
                p = Some(exceed as f64 / drawn as f64);
                break;
            }
        }
    }
    sc.order = order;
    sc.permuted = permuted;
    p.unwrap_or((exceed + 1) as f64 / (r + 1) as f64)
}

/// Fisher–Yates, with Lemire's multiply-shift for the index (uniform up to a bias of n / 2^64).
fn shuffle(x: &mut [usize], rng: &mut Rng) {
    for i in (1..x.len()).rev() {
        let j = ((u128::from(rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
        x.swap(i, j);
    }
}

#[cfg(test)]
#[path = "changepoint_tests.rs"]
mod tests;
