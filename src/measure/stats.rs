//! Statistics of repeated trials: is a figure known well enough, and is a change between two
//! sets of trials real? Pure functions: no I/O, no clock; the only randomness is a seeded
//! [`Rng`], so the same inputs and seed always give the same answer.
//!
//! Benchmarks are run a handful of times (5, 10, rarely 20), and their figures are not normal:
//! throughput is capped, latencies are skewed and a noisy neighbour makes one trial an outlier.
//! Hence every method here is distribution-free and exact (or close) at small n:
//!
//! - **The median's confidence interval is a pair of order statistics** `(x_(k), x_(n+1-k))`.
//!   For any continuous distribution the number of trials below the true median is
//!   binomial(n, ½), so the interval's coverage is known exactly, whatever the distribution, with
//!   no resampling noise. Its coverage is discrete (with n = 5 the widest, [min, max], covers
//!   93.75 %), so the actual coverage is reported alongside; with ties (discrete data) the closed
//!   interval covers at least that much.
//! - **The gate is the Mann–Whitney U test.** It compares ranks, so it needs no distribution,
//!   shrugs off an outlier, and its p-value is exact for small samples (the permutation
//!   distribution of the rank sum, by dynamic programming, mid-ranks for ties): on identical
//!   distributions it calls a change significant with probability at most α, by construction.
//!   Above [`EXACT_MAX`] values a side, the normal approximation with tie and continuity
//!   corrections is accurate and used instead.
//! - **The change's interval is a percentile bootstrap** of the ratio of medians, each side
//!   resampled independently. The ratio of two medians has no exact small-sample interval; the
//!   bootstrap gives a reasonable one, only to show how large the change may be. The verdict
//!   itself comes from the exact test, never from this interval.
//! - **Spread and outliers use the median absolute deviation and Tukey's fences**, which one
//!   wild trial cannot inflate the way it inflates a standard deviation.

use serde::{Deserialize, Serialize};

use crate::random::Rng;

/// How many bootstrap resamples [`change`] draws for the interval of a change: enough for the
/// 2.5 % and 97.5 % percentiles to move by well under their own sampling noise.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// Mann–Whitney p-values are exact when both sides have at most this many values; the exact
/// distribution then takes at most ~1 M additions.
pub const EXACT_MAX: usize = 20;

/// σ per median absolute deviation for a normal distribution: scales the MAD to estimate σ.
pub const MAD_TO_SD: f64 = 1.4826;

/// Tukey's multiplier for "far out" values: beyond Q1 − 3·IQR or Q3 + 3·IQR. (1.5 would flag
/// ordinary trials of skewed latencies.)
pub const FAR_OUT: f64 = 3.0;

/// The median and a distribution-free confidence interval for it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Values the estimate is from (NaN values left out).
    pub n: usize,
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    /// The interval's actual coverage (order-statistic intervals have discrete coverage: with
    /// n = 5 the widest, [min, max], covers 93.75 %), which is ≥ the asked level when n allows it.
    pub coverage: f64,
}

impl Estimate {
    /// Relative half-width of the interval around the median ((hi − lo) / 2 / |median|): what
    /// the table shows as `±3%`. None when the median is 0 or a bound is infinite.
    pub fn relative_half_width(&self) -> Option<f64> {
        let w = (self.hi - self.lo) / 2.0 / self.median.abs();
        (self.median != 0.0 && w.is_finite()).then_some(w)
    }

    /// The interval covers the median with at least probability `level`.
    pub fn reaches(&self, level: f64) -> bool {
        meets(self.coverage, level)
    }
}

/// `coverage ≥ level`. No interval covers with certainty, even when the coverage rounds to 1.
fn meets(coverage: f64, level: f64) -> bool {
    level < 1.0 && coverage >= level
}

/// The values without NaN, in ascending order.
fn sorted(values: &[f64]) -> Vec<f64> {
    let mut x: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    x.sort_by(f64::total_cmp);
    x
}

/// The median of sorted values; None when there are none.
fn median_sorted(x: &[f64]) -> Option<f64> {
    let n = x.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(x[n / 2]),
        // Halves first: the sum of two huge values would overflow.
        _ => Some(x[n / 2 - 1] / 2.0 + x[n / 2] / 2.0),
    }
}

/// The `p` quantile of sorted, non-empty values, interpolating linearly between order
/// statistics (Hyndman & Fan type 7, the default of R and NumPy).
fn quantile_sorted(x: &[f64], p: f64) -> f64 {
    let h = (x.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let i = h.floor() as usize;
    match x.get(i + 1) {
        Some(next) => x[i] + (h - i as f64) * (next - x[i]),
        None => x[i],
    }
}

/// The median absolute deviation of sorted values about their median `m`.
fn mad_sorted(x: &[f64], m: f64) -> f64 {
    let dev: Vec<f64> = x.iter().map(|v| (v - m).abs()).collect();
    median_sorted(&sorted(&dev)).unwrap_or(0.0)
}

/// The median of the values, NaN left out; None when there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    median_sorted(&sorted(values))
}

/// Median and order-statistics confidence interval of the median at `level` (e.g. 0.95): the
/// narrowest symmetric pair of order statistics (x_(k), x_(n+1−k)) whose binomial(n, ½) coverage
/// is ≥ level; when no pair reaches the level (small n), [min, max] with its coverage (< level),
/// so callers can say so ([`Estimate::reaches`]). n = 0 → None; n = 1 → lo = hi = median,
/// coverage 0. NaN values are ignored.
pub fn median_interval(values: &[f64], level: f64) -> Option<Estimate> {
    let x = sorted(values);
    let n = x.len();
    let median = median_sorted(&x)?;
    if n == 1 {
        return Some(Estimate {
            n,
            median,
            lo: median,
            hi: median,
            coverage: 0.0,
        });
    }
    let (k, coverage) = median_rank_pair(n, level);
    Some(Estimate {
        n,
        median,
        lo: x[k - 1],
        hi: x[n - k],
        coverage,
    })
}

/// Which order statistics bound the median's interval for n ≥ 1 values: the largest k (1-based)
/// whose interval [x_(k), x_(n+1−k)] covers the median with probability ≥ `level`, and that
/// probability; (1, its coverage) when even [min, max] falls short (n = 0 gives (1, 0)).
///
/// The coverage is P(k ≤ B ≤ n − k) = 1 − 2·P(B ≤ k − 1) for B ~ binomial(n, ½): the true
/// median lies inside unless at least n + 1 − k values fall on one side of it.
pub fn median_rank_pair(n: usize, level: f64) -> (usize, f64) {
    let pmf = half_binomial_pmf(n);
    let coverage = |k: usize| -> f64 {
        let below: f64 = pmf[..k].iter().sum();
        (1.0 - 2.0 * below).max(0.0)
    };
    let mut k = 1;
    while k < n.div_ceil(2) && meets(coverage(k + 1), level) {
        k += 1;
    }
    (k, coverage(k))
}

/// P(B = i) for B ~ binomial(n, ½) and i ≤ n / 2 (all the lower tail needs).
fn half_binomial_pmf(n: usize) -> Vec<f64> {
    let half = n / 2 + 1;
    let mut pmf = Vec::with_capacity(half);
    if n <= 1000 {
        // Exact for the n people run: 2^−n is a power of two and each step multiplies and
        // divides small integers, so C(n, i)/2^n comes out exact while it fits 53 bits.
        let mut p = 0.5f64.powi(n as i32);
        for i in 0..half {
            pmf.push(p);
            p = p * (n - i) as f64 / (i + 1) as f64;
        }
    } else {
        // 2^−n underflows: in logarithms instead.
        let (mut ln_c, ln_half) = (0.0f64, -(n as f64) * std::f64::consts::LN_2);
        for i in 0..half {
            pmf.push((ln_c + ln_half).exp());
            ln_c += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        }
    }
    pmf
}

/// The fewest trials whose [min, max] covers the median with probability ≥ `level`
/// (1 − 2^(1−n) ≥ level: 6 for 95 %, 8 for 99 %); None when no number does (level ≥ 1).
pub fn min_trials(level: f64) -> Option<usize> {
    (2..=1075).find(|&n| meets(1.0 - 0.5f64.powi(n as i32 - 1), level))
}

/// How spread the trials are: the coefficient of variation by median absolute deviation
/// (1.4826·MAD / |median|), robust to one outlier (the plain CV is not: one slow trial in five
/// can double it). None with fewer than 2 values or a median of 0. NaN values are ignored.
pub fn spread(values: &[f64]) -> Option<f64> {
    let x = sorted(values);
    if x.len() < 2 {
        return None;
    }
    let m = median_sorted(&x)?;
    let cv = MAD_TO_SD * mad_sorted(&x, m) / m.abs();
    cv.is_finite().then_some(cv)
}

/// Indices (into `values`) of outlier trials, by Tukey's "far out" fences: below
/// Q1 − 3·IQR or above Q3 + 3·IQR, the quartiles interpolated as by [`quantile`]. When the
/// IQR is 0 (most trials equal), the fences collapse, so the rule becomes: further from the
/// median than 3·1.4826·MAD — and with the MAD 0 too, any value that differs from the
/// median. Never any with fewer than 4 values (there are no quartiles to speak of); NaN
/// values are ignored and never reported.
pub fn outliers(values: &[f64]) -> Vec<usize> {
    let x = sorted(values);
    if x.len() < 4 {
        return Vec::new();
    }
    let (q1, q3) = (quantile_sorted(&x, 0.25), quantile_sorted(&x, 0.75));
    let iqr = q3 - q1;
    let (lo, hi) = if iqr > 0.0 {
        (q1 - FAR_OUT * iqr, q3 + FAR_OUT * iqr)
    } else {
        let m = median_sorted(&x).unwrap_or(q1);
        let r = FAR_OUT * MAD_TO_SD * mad_sorted(&x, m);
        (m - r, m + r)
    };
    (values.iter().enumerate())
        .filter(|(_, v)| **v < lo || **v > hi)
        .map(|(i, _)| i)
        .collect()
}

/// The `p` quantile (0 ≤ p ≤ 1) of the values, linear between order statistics (type 7, as R
/// and NumPy by default); None when there are none. NaN values are ignored.
pub fn quantile(values: &[f64], p: f64) -> Option<f64> {
    let x = sorted(values);
    (!x.is_empty()).then(|| quantile_sorted(&x, p))
}

/// Baseline against current for one metric.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// current median / baseline median − 1 (a fraction; +0.05 is 5 % up). None when the
    /// baseline median is 0 or a side has no values.
    pub ratio: Option<f64>,
    /// A confidence interval of that change at `level`: percentile bootstrap of the ratio of
    /// medians, each side resampled independently, [`BOOTSTRAP_RESAMPLES`] resamples from a
    /// seeded [`Rng`] (reproducible). None with fewer than 2 values on a side, or when a
    /// resampled baseline median is 0.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Two-sided p-value of the Mann–Whitney U test ([`mann_whitney`]); None when a side has
    /// no values.
    pub p_value: Option<f64>,
    /// p_value ≤ alpha.
    pub significant: bool,
    pub n_baseline: usize,
    pub n_current: usize,
}

/// What a change means for a metric, given which way is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    Improved,
    Regressed,
    /// Not significant (or no direction): no change within noise.
    NoChange,
}

impl Change {
    /// Regressed, improved or no change within noise: significant changes go by the sign of
    /// the estimated change.
    pub fn verdict(&self, higher_is_better: bool) -> Verdict {
        match self.ratio {
            Some(r) if self.significant && r != 0.0 => {
                if (r > 0.0) == higher_is_better {
                    Verdict::Improved
                } else {
                    Verdict::Regressed
                }
            }
            _ => Verdict::NoChange,
        }
    }

    /// The `--fail-on` gate: significant, and the estimated change is past `bound` on its side
    /// (a fraction: −0.05 trips on a fall of 5 % or more, +0.10 on a rise of 10 % or more;
    /// −0.0 on any fall, +0.0 on any rise).
    pub fn exceeds(&self, bound: f64) -> bool {
        let past = |r: f64| {
            if bound.is_sign_negative() {
                r <= bound
            } else {
                r >= bound
            }
        };
        self.significant && self.ratio.is_some_and(past)
    }
}

/// Baseline against current for one metric: the estimated change with its bootstrap interval
/// at `level`, and whether the Mann–Whitney test finds it significant at `alpha`. `seed` seeds
/// the bootstrap. NaN values are ignored.
pub fn change(baseline: &[f64], current: &[f64], alpha: f64, level: f64, seed: u64) -> Change {
    let (b, c) = (sorted(baseline), sorted(current));
    let ratio = match (median_sorted(&b), median_sorted(&c)) {
        (Some(mb), Some(mc)) if mb != 0.0 => Some(mc / mb - 1.0).filter(|r| r.is_finite()),
        _ => None,
    };
    let (lo, hi) = bootstrap_ratio(&b, &c, level, BOOTSTRAP_RESAMPLES, seed).unzip();
    let p_value = mann_whitney(&b, &c);
    Change {
        ratio,
        lo,
        hi,
        p_value,
        significant: p_value.is_some_and(|p| p <= alpha),
        n_baseline: b.len(),
        n_current: c.len(),
    }
}

/// Percentile bootstrap interval at `level` of median(c) / median(b) − 1, from sorted sides.
fn bootstrap_ratio(
    b: &[f64],
    c: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    if b.len() < 2 || c.len() < 2 || resamples == 0 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let mut rng = Rng::new(seed);
    let mut counts = vec![0u32; b.len().max(c.len())];
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let mb = resampled_median(b, &mut rng, &mut counts);
        let mc = resampled_median(c, &mut rng, &mut counts);
        let r = mc / mb - 1.0;
        if !r.is_finite() {
            return None;
        }
        ratios.push(r);
    }
    Some((
        quantile_unsorted(&mut ratios, (1.0 - level) / 2.0),
        quantile_unsorted(&mut ratios, (1.0 + level) / 2.0),
    ))
}

/// [`quantile_sorted`] of non-empty values in any order, by selection rather than a sort
/// (reorders them).
fn quantile_unsorted(x: &mut [f64], p: f64) -> f64 {
    let h = (x.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let i = h.floor() as usize;
    let (_, at, above) = x.select_nth_unstable_by(i, f64::total_cmp);
    let at = *at;
    match above.iter().copied().min_by(f64::total_cmp) {
        Some(next) => at + (h - i as f64) * (next - at),
        None => at,
    }
}

/// The median of one resample (with replacement) of sorted `x`. `x` being sorted, the
/// resample's order statistics are x's own, each taken as often as drawn: counting the draws
/// finds the median in O(n), with no copy and no sort.
fn resampled_median(x: &[f64], rng: &mut Rng, counts: &mut [u32]) -> f64 {
    let n = x.len();
    let counts = &mut counts[..n];
    counts.fill(0);
    for _ in 0..n {
        // Lemire's multiply-shift: uniform in 0..n up to a bias of n / 2^64.
        counts[((u128::from(rng.next_u64()) * n as u128) >> 64) as usize] += 1;
    }
    // 0-based ranks of the middle one (odd n) or two (even n).
    let (lower, upper) = ((n - 1) / 2, n / 2);
    let (mut seen, mut low) = (0usize, None);
    for (v, &k) in x.iter().zip(counts.iter()) {
        seen += k as usize;
        if low.is_none() && seen > lower {
            low = Some(*v);
        }
        if seen > upper {
            let low = low.unwrap_or(*v);
            return if lower == upper {
                low
            } else {
                low / 2.0 + v / 2.0
            };
        }
    }
    unreachable!("n draws fill n ranks")
}

/// The smallest two-sided Mann–Whitney p-value possible with `n` and `m` values without ties,
/// 2 / C(n + m, n) (at most 1): with 3 trials a side it is 0.1, so no change can be
/// significant at α = 0.05, and 4 a side (0.029) is the least that can.
pub fn smallest_p_value(n: usize, m: usize) -> f64 {
    let k = n.min(m);
    let ways = (1..=k).fold(1.0f64, |c, i| c * (n + m - k + i) as f64 / i as f64);
    (2.0 / ways).min(1.0)
}

/// Two-sided p-value of the Mann–Whitney U (Wilcoxon rank-sum) test of `a` against `b`: the
/// probability, were both drawn from one distribution, of a rank sum at least as far from its
/// mean as the observed one. Exact when both sides have at most [`EXACT_MAX`] values: the
/// permutation distribution of the rank sum of mid-ranks, counted by dynamic programming, so
/// ties are handled exactly (given the tie pattern) rather than corrected for. Above, the
/// normal approximation with tie and continuity corrections. None when a side has no values;
/// NaN values are ignored.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<f64> {
    let tagged = |x: &[f64], is_a: bool| -> Vec<(f64, bool)> {
        (x.iter().filter(|v| !v.is_nan()))
            .map(|v| (*v, is_a))
            .collect()
    };
    let mut all = tagged(a, true);
    let n = all.len();
    all.extend(tagged(b, false));
    let m = all.len() - n;
    if n == 0 || m == 0 {
        return None;
    }
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let ranks = doubled_mid_ranks(&all);
    let rank_sum_a: u64 = (ranks.iter().zip(&all))
        .filter(|(_, (_, is_a))| *is_a)
        .map(|(r, _)| u64::from(*r))
        .sum();
    if n <= EXACT_MAX && m <= EXACT_MAX {
        Some(exact_p(&ranks, n, rank_sum_a))
    } else {
        Some(normal_p(&ranks, n, rank_sum_a))
    }
}

/// Twice the mid-rank of each sorted value (ties share the mean of their ranks), so that ranks
/// stay integers: a tie over 1-based ranks i..=j has mid-rank (i + j) / 2.
fn doubled_mid_ranks(sorted: &[(f64, bool)]) -> Vec<u32> {
    let mut ranks = vec![0u32; sorted.len()];
    let mut start = 0;
    while start < sorted.len() {
        let end = (start..sorted.len())
            .find(|&j| sorted[j].0 != sorted[start].0)
            .unwrap_or(sorted.len());
        ranks[start..end].fill((start + 1 + end) as u32);
        start = end;
    }
    ranks
}

/// Exact two-sided p-value of a doubled rank sum `observed` of `n` of the values with doubled
/// ranks `ranks`, under the permutation distribution (every n-subset equally likely).
fn exact_p(ranks: &[u32], n: usize, observed: u64) -> f64 {
    // Without half ranks (no ties of an even count) every doubled rank is even: halving them
    // halves the range of sums to count over.
    if ranks.iter().all(|r| r % 2 == 0) {
        let halved: Vec<u32> = ranks.iter().map(|r| r / 2).collect();
        return exact_p_scaled(&halved, n, observed / 2);
    }
    exact_p_scaled(ranks, n, observed)
}

/// [`exact_p`] on ranks at any common scale.
fn exact_p_scaled(ranks: &[u32], n: usize, observed: u64) -> f64 {
    let total_n = ranks.len();
    let total: u64 = ranks.iter().map(|r| u64::from(*r)).sum();
    // Count over the smaller side: the other's sum is the rest, equally far from its mean.
    let (k, observed) = if 2 * n <= total_n {
        (n, observed)
    } else {
        (total_n - n, total - observed)
    };
    let counts = rank_sum_counts(ranks, k);
    // |sum − k·total/N| compared as |N·sum − k·total|, in integers: no rounding at the edge.
    let dev = |s: u64| (total_n as i128 * s as i128 - k as i128 * total as i128).abs();
    let edge = dev(observed);
    let (mut extreme, mut all) = (0u64, 0u64);
    for (s, &c) in counts.iter().enumerate() {
        all += c;
        if dev(s as u64) >= edge {
            extreme += c;
        }
    }
    (extreme as f64 / all as f64).min(1.0)
}

/// How many k-subsets of `ranks` have each sum: index s holds the count of subsets summing to
/// s. Counts fit u64 for up to 2·EXACT_MAX values (C(40, 20) ≈ 1.4e11) and are exact.
fn rank_sum_counts(ranks: &[u32], k: usize) -> Vec<u64> {
    let max_sum: usize = {
        let mut r: Vec<usize> = ranks.iter().map(|r| *r as usize).collect();
        r.sort_unstable_by(|x, y| y.cmp(x));
        r[..k].iter().sum()
    };
    let width = max_sum + 1;
    // ways[j * width + s]: j of the ranks seen so far summing to s.
    let mut ways = vec![0u64; (k + 1) * width];
    ways[0] = 1;
    let mut reach = 0usize;
    for (i, &r) in ranks.iter().enumerate() {
        let r = r as usize;
        reach = (reach + r).min(max_sum);
        // j downwards: row j − 1 still holds the counts without this rank.
        for j in (1..=k.min(i + 1)).rev() {
            let (below, row) = ways.split_at_mut(j * width);
            let below = &below[(j - 1) * width..];
            for s in r..=reach {
                row[s] += below[s - r];
            }
        }
    }
    ways.split_off(k * width)
}

/// Two-sided p-value by the normal approximation of U, with the tie correction of its variance
/// and a continuity correction of ½.
fn normal_p(ranks: &[u32], n: usize, rank_sum_a2: u64) -> f64 {
    let total_n = ranks.len();
    let (nf, mf, tf) = (n as f64, (total_n - n) as f64, total_n as f64);
    let u = rank_sum_a2 as f64 / 2.0 - nf * (nf + 1.0) / 2.0;
    // Σ (t³ − t) over groups of tied values.
    let mut ties = 0.0;
    let mut start = 0;
    while start < total_n {
        let end = (start..total_n)
            .find(|&j| ranks[j] != ranks[start])
            .unwrap_or(total_n);
        let t = (end - start) as f64;
        ties += t * t * t - t;
        start = end;
    }
    let var = nf * mf / 12.0 * ((tf + 1.0) - ties / (tf * (tf - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - nf * mf / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
    erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

/// The complementary error function, to a relative error below 1.2e-7 (Numerical Recipes'
/// Chebyshev fit, `erfcc`): ample for a p-value, and std has none.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * (-z * z + poly).exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
