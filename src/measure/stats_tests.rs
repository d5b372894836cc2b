//! The statistics against what they promise: coverage of the median's interval on simulated
//! data sets from known distributions, the gate's false-positive rate and power, Mann–Whitney
//! against textbook values and a brute-force permutation test, and the edge cases. Every
//! simulation is seeded, so the figures below are the same on every run; the tolerances are
//! several binomial standard deviations, so they hold for other seeds too. Run with
//! `--nocapture` to see the measured figures.

use super::*;
use std::f64::consts::{LN_2, TAU};

/// A standard normal deviate (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.next_f64(); // (0, 1]: ln never sees 0
    (-2.0 * u1.ln()).sqrt() * (TAU * rng.next_f64()).cos()
}

fn sample(rng: &mut Rng, n: usize, draw: &dyn Fn(&mut Rng) -> f64) -> Vec<f64> {
    (0..n).map(|_| draw(rng)).collect()
}

/// A distribution to simulate from, with its true median.
struct Dist {
    name: &'static str,
    draw: fn(&mut Rng) -> f64,
    median: f64,
}

fn distributions() -> Vec<Dist> {
    vec![
        Dist {
            name: "normal(100, 5)",
            draw: |r| 100.0 + 5.0 * normal(r),
            median: 100.0,
        },
        Dist {
            name: "log-normal(0, 1)",
            draw: |r| normal(r).exp(),
            median: 1.0,
        },
        Dist {
            name: "uniform[0, 1)",
            draw: |r| r.next_f64(),
            median: 0.5,
        },
        Dist {
            name: "exponential(1)",
            draw: |r| -(1.0 - r.next_f64()).ln(),
            median: LN_2,
        },
        // Heavy tail: infinite mean.
        Dist {
            name: "Pareto(α = 1)",
            draw: |r| 1.0 / (1.0 - r.next_f64()),
            median: 2.0,
        },
    ]
}

/// Data sets per (distribution, n) in the coverage test. With 4000, the binomial standard
/// deviation of an observed coverage is ≤ 0.39 pp for true coverages ≥ 93.75 %.
const SETS: usize = 4000;
/// Observed coverage within this of the stated one: ≥ 3.8 standard deviations at 4000 sets.
const COVERAGE_TOL: f64 = 0.015;
/// When an interval reaches 95 %, its observed coverage is at least 95 % less this (≥ 2.5
/// standard deviations below 95 %, and the stated coverages sit above 95 %).
const REACH_TOL: f64 = 0.01;

#[test]
fn median_interval_covers_the_true_median_at_its_stated_coverage() {
    let mut table = String::from("dist               n  stated  observed\n");
    for (d_i, d) in distributions().iter().enumerate() {
        for (n_i, n) in [5usize, 8, 10, 20].into_iter().enumerate() {
            let mut rng = Rng::new(1000 + 10 * d_i as u64 + n_i as u64);
            let (mut covered, mut stated) = (0usize, 0.0);
            let mut reached = false;
            for _ in 0..SETS {
                let x = sample(&mut rng, n, &d.draw);
                let e = median_interval(&x, 0.95).unwrap();
                (stated, reached) = (e.coverage, e.reaches(0.95));
                covered += usize::from(e.lo <= d.median && d.median <= e.hi);
            }
            let observed = covered as f64 / SETS as f64;
            table += &format!("{:<17} {n:>2}  {stated:.4}  {observed:.4}\n", d.name);
            assert!(
                (observed - stated).abs() <= COVERAGE_TOL,
                "{} n={n}: observed {observed}, stated {stated}",
                d.name
            );
            if reached {
                assert!(observed >= 0.95 - REACH_TOL, "{} n={n}: {observed}", d.name);
            }
        }
    }
    eprintln!("{table}");
}

#[test]
fn ties_only_widen_the_coverage() {
    // Discrete data (whole numbers around 3): a closed interval of order statistics covers at
    // least its stated coverage when values tie.
    let mut rng = Rng::new(7);
    for n in [5usize, 10, 20] {
        let mut covered = 0;
        let mut stated = 0.0;
        for _ in 0..SETS {
            let x = sample(&mut rng, n, &|r| (3.0 + normal(r)).round());
            let e = median_interval(&x, 0.95).unwrap();
            stated = e.coverage;
            covered += usize::from(e.lo <= 3.0 && 3.0 <= e.hi);
        }
        let observed = covered as f64 / SETS as f64;
        eprintln!("rounded normal n={n}: stated {stated:.4}, observed {observed:.4}");
        assert!(
            observed >= stated - COVERAGE_TOL,
            "n={n}: {observed} < {stated}"
        );
    }
}

#[test]
fn rank_pairs_are_the_narrowest_that_reach_the_level() {
    for level in [0.8, 0.9, 0.95, 0.99] {
        for n in 2..=300 {
            let (k, cov) = median_rank_pair(n, level);
            let reaches = meets(cov, level);
            if reaches {
                assert!(cov >= level);
                if k < n.div_ceil(2) {
                    assert!(median_rank_pair(n, 0.0).0 > k);
                    let pmf = half_binomial_pmf(n);
                    let next: f64 = 1.0 - 2.0 * pmf[..=k].iter().sum::<f64>();
                    assert!(next < level, "n={n} k={k}: k+1 covers {next}");
                }
            } else {
                assert_eq!(k, 1, "n={n}: falls short, so [min, max]");
            }
            assert_eq!(reaches, n >= min_trials(level).unwrap(), "n={n} {level}");
        }
    }
    // Values to quote: the exact coverages of the usual trial counts at 95 %.
    assert_eq!(median_rank_pair(5, 0.95), (1, 0.9375));
    assert_eq!(median_rank_pair(6, 0.95), (1, 0.96875));
    assert_eq!(median_rank_pair(8, 0.95), (1, 1.0 - 2.0 / 256.0));
    assert_eq!(median_rank_pair(10, 0.95), (2, 1.0 - 22.0 / 1024.0));
    assert_eq!(
        median_rank_pair(20, 0.95),
        (6, 1.0 - 2.0 * 21700.0 / 1048576.0)
    );
    assert_eq!(min_trials(0.95), Some(6));
    assert_eq!(min_trials(0.99), Some(8));
    assert_eq!(min_trials(1.0), None);
    // Large n takes the logarithmic path and agrees with the normal approximation: k ≈
    // n/2 − 1.96·√n/2.
    let (k, cov) = median_rank_pair(5000, 0.95);
    assert!(
        (cov - 0.95).abs() < 0.002 && k.abs_diff(2431) <= 1,
        "{k} {cov}"
    );
}

#[test]
fn median_and_interval_edge_cases() {
    assert_eq!(median(&[]), None);
    assert_eq!(median(&[f64::NAN]), None);
    assert_eq!(median_interval(&[], 0.95), None);
    assert_eq!(median_interval(&[f64::NAN, f64::NAN], 0.95), None);
    assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    assert_eq!(median(&[1.0, f64::NAN, 3.0]), Some(2.0));
    assert_eq!(median(&[f64::MAX, f64::MAX]), Some(f64::MAX));

    let one = median_interval(&[7.0, f64::NAN], 0.95).unwrap();
    assert_eq!(
        (one.n, one.median, one.lo, one.hi, one.coverage),
        (1, 7.0, 7.0, 7.0, 0.0)
    );
    assert!(!one.reaches(0.95));
    assert_eq!(one.relative_half_width(), Some(0.0));

    let two = median_interval(&[10.0, 8.0], 0.95).unwrap();
    assert_eq!(
        (two.median, two.lo, two.hi, two.coverage),
        (9.0, 8.0, 10.0, 0.5)
    );
    assert!(!two.reaches(0.95) && two.reaches(0.5));

    // n = 5 cannot reach 95 %: [min, max] at 93.75 %, said so.
    let five = median_interval(&[1.21, 1.19, 1.25, 1.17, 1.22], 0.95).unwrap();
    assert_eq!((five.lo, five.hi, five.median), (1.17, 1.25, 1.21));
    assert_eq!(five.coverage, 0.9375);
    assert!(!five.reaches(0.95) && five.reaches(0.9));
    let w = five.relative_half_width().unwrap();
    assert!((w - 0.04 / 1.21).abs() < 1e-12, "{w}");

    // n = 10 at 95 %: the 2nd and 9th order statistics.
    let ten: Vec<f64> = (1..=10).rev().map(f64::from).collect();
    let e = median_interval(&ten, 0.95).unwrap();
    assert_eq!((e.lo, e.hi, e.median), (2.0, 9.0, 5.5));
    assert!(e.reaches(0.95));
    // A lower level narrows it.
    let e = median_interval(&ten, 0.5).unwrap();
    assert!(e.lo > 2.0 && e.hi < 9.0 && e.coverage >= 0.5);

    let zero = median_interval(&[-1.0, 0.0, 1.0], 0.95).unwrap();
    assert_eq!(zero.relative_half_width(), None);
}

#[test]
fn spread_and_outliers() {
    assert_eq!(spread(&[]), None);
    assert_eq!(spread(&[5.0]), None);
    assert_eq!(spread(&[0.0, 0.0, 0.0]), None);
    assert_eq!(spread(&[4.0, 4.0, 4.0]), Some(0.0));
    // Median 100, deviations 0, 1, 1, 2, 2: MAD 1.
    let s = spread(&[100.0, 101.0, 99.0, 102.0, 98.0]).unwrap();
    assert!((s - MAD_TO_SD / 100.0).abs() < 1e-12, "{s}");
    // One wild trial barely moves it (the plain CV would be ~80 %).
    let s = spread(&[100.0, 101.0, 99.0, 102.0, 500.0]).unwrap();
    assert!(s < 0.02, "{s}");

    let trials = [1.21e6, 1.19e6, 1.25e6, 0.41e6, 1.22e6, 1.20e6];
    assert_eq!(outliers(&trials), vec![3]);
    assert_eq!(
        outliers(&[100.0, 101.0, 99.0, 102.0, 98.0, 100.5]),
        Vec::<usize>::new()
    );
    // Fewer than 4: never.
    assert_eq!(outliers(&[1.0, 1.0, 1000.0]), Vec::<usize>::new());
    // NaN is neither counted nor reported; indices are the input's.
    assert_eq!(outliers(&[f64::NAN, 10.0, 11.0, 10.5, 10.2, 99.0]), vec![5]);
    // IQR 0: the MAD rule; MAD 0 too: whatever differs from the median.
    assert_eq!(outliers(&[0.0, 0.0, 0.0, 0.0, 0.0, 3.0]), vec![5]);
    assert_eq!(
        outliers(&[5.0, 5.0, 5.0, 5.0, 5.0, 5.0]),
        Vec::<usize>::new()
    );
    // Skewed but ordinary trials are not far out.
    assert_eq!(
        outliers(&[10.0, 11.0, 12.0, 14.0, 18.0, 25.0]),
        Vec::<usize>::new()
    );
    assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.25), Some(1.75));
    assert_eq!(quantile(&[], 0.5), None);
}

/// The two-sided permutation p-value of the mid-rank sum by enumerating every split: the
/// definition, independent of the counting in `exact_p`.
fn brute_force_p(a: &[f64], b: &[f64]) -> f64 {
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let rank = |v: f64| {
        let less = all.iter().filter(|w| **w < v).count() as f64;
        let equal = all.iter().filter(|w| **w == v).count() as f64;
        less + (equal + 1.0) / 2.0
    };
    let ranks: Vec<f64> = all.iter().map(|v| rank(*v)).collect();
    let (n, total) = (a.len(), all.len());
    let mean = n as f64 * (total + 1) as f64 / 2.0;
    let observed = (ranks[..n].iter().sum::<f64>() - mean).abs();
    let (mut extreme, mut splits) = (0u32, 0u32);
    for mask in 0u32..1 << total {
        if mask.count_ones() as usize == n {
            splits += 1;
            let s: f64 = (0..total)
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| ranks[i])
                .sum();
            extreme += u32::from((s - mean).abs() >= observed - 1e-9);
        }
    }
    f64::from(extreme) / f64::from(splits)
}

#[test]
fn mann_whitney_textbook_values() {
    let close = |p: Option<f64>, want: f64| {
        let p = p.unwrap();
        assert!((p - want).abs() < 1e-12, "p = {p}, want {want}");
    };
    let (a, b) = ([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]);
    close(mann_whitney(&a, &b), 2.0 / 252.0);
    close(mann_whitney(&b, &a), 2.0 / 252.0);
    // U = 1: P(U ≤ 1) = 2/252 on each side.
    close(
        mann_whitney(&[1.0, 2.0, 3.0, 4.0, 6.0], &[5.0, 7.0, 8.0, 9.0, 10.0]),
        4.0 / 252.0,
    );
    // U = 2, the largest significant at 0.05 with 5 a side.
    close(
        mann_whitney(&[1.0, 2.0, 3.0, 5.0, 6.0], &[4.0, 7.0, 8.0, 9.0, 10.0]),
        8.0 / 252.0,
    );
    close(mann_whitney(&a, &a), 1.0);
    close(mann_whitney(&[3.0, 3.0], &[3.0, 3.0, 3.0]), 1.0);
    // Ties: mid-ranks 1, 2.5 | 2.5, 4; sums 3.5 (×2), 5 (×2), 6.5 (×2) about a mean of 5.
    close(mann_whitney(&[1.0, 2.0], &[2.0, 3.0]), 4.0 / 6.0);
    close(mann_whitney(&[1.0], &[2.0]), 1.0);
    // Unequal sizes, complete separation: 2 / C(9, 3).
    close(
        mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
        2.0 / 84.0,
    );
    assert_eq!(mann_whitney(&[], &[1.0]), None);
    assert_eq!(mann_whitney(&[f64::NAN], &[1.0]), None);
    close(mann_whitney(&[1.0, f64::NAN, 2.0], &[2.0, 3.0]), 4.0 / 6.0);
    assert_eq!(smallest_p_value(5, 5), 2.0 / 252.0);
    assert!(smallest_p_value(3, 3) > 0.05 && smallest_p_value(4, 4) < 0.05);
    assert_eq!(smallest_p_value(1, 1), 1.0);
}

#[test]
fn mann_whitney_with_ties_matches_the_permutation_test() {
    let mut rng = Rng::new(42);
    for case in 0..60 {
        let (n, m) = (1 + case % 6, 1 + (case / 6) % 7);
        // Few distinct values, so most samples tie.
        let draw = |r: &mut Rng| (r.next_f64() * 4.0).floor();
        let a = sample(&mut rng, n, &draw);
        let b = sample(&mut rng, m, &|r: &mut Rng| {
            (r.next_f64() * 4.0).floor() + 0.5 * r.next_f64().round()
        });
        let (p, want) = (mann_whitney(&a, &b).unwrap(), brute_force_p(&a, &b));
        assert!((p - want).abs() < 1e-12, "{a:?} {b:?}: {p} vs {want}");
    }
}

#[test]
fn mann_whitney_normal_approximation_agrees_with_the_exact_distribution() {
    // 25 a side is past EXACT_MAX; the exact count still fits u64 (C(50, 25) ≈ 1.3e14).
    let mut rng = Rng::new(3);
    let mut worst: f64 = 0.0;
    for shift in [0.0, 0.3, 0.6, 0.9] {
        let a = sample(&mut rng, 25, &normal);
        let b: Vec<f64> = sample(&mut rng, 25, &normal)
            .iter()
            .map(|v| v + shift)
            .collect();
        let approx = mann_whitney(&a, &b).unwrap();
        let mut all: Vec<(f64, bool)> = a.iter().map(|v| (*v, true)).collect();
        all.extend(b.iter().map(|v| (*v, false)));
        all.sort_by(|x, y| x.0.total_cmp(&y.0));
        let ranks = doubled_mid_ranks(&all);
        let sum_a: u64 = (ranks.iter().zip(&all))
            .filter(|(_, t)| t.1)
            .map(|(r, _)| u64::from(*r))
            .sum();
        let exact = exact_p(&ranks, 25, sum_a);
        worst = worst.max((approx - exact).abs());
        assert!(
            (approx - exact).abs() < 0.005,
            "shift {shift}: {approx} vs {exact}"
        );
    }
    eprintln!("normal approximation at n = m = 25: worst |Δp| = {worst:.5}");
    // Everything tied: no evidence at all.
    assert_eq!(mann_whitney(&[1.0; 30], &[1.0; 30]), Some(1.0));
    // Large, far apart: tiny p; the erfc approximation keeps its relative accuracy.
    let a: Vec<f64> = (1..=30).map(f64::from).collect();
    let b: Vec<f64> = (31..=60).map(f64::from).collect();
    let p = mann_whitney(&a, &b).unwrap();
    assert!(p > 0.0 && p < 1e-9, "{p}");
}

/// Pairs of samples per case in the false-positive test. The binomial standard deviation of a
/// rate near 5 % is 0.34 pp at 4000 pairs.
const PAIRS: usize = 4000;
/// The observed false-positive rate may exceed α by this: 3 standard deviations at 4000 pairs.
const FPR_TOL: f64 = 0.01;

/// The exact false-positive rate of the test at `alpha` with n and m untied values: the share
/// of all splits whose p-value is ≤ alpha.
fn exact_size(n: usize, m: usize, alpha: f64) -> f64 {
    let ranks: Vec<u32> = (1..=(n + m) as u32).map(|r| 2 * r).collect();
    let counts = rank_sum_counts(&ranks, n);
    let all: u64 = counts.iter().sum();
    let rejected: u64 = (counts.iter().enumerate())
        .filter(|(s, c)| **c > 0 && exact_p(&ranks, n, *s as u64) <= alpha)
        .map(|(_, c)| c)
        .sum();
    rejected as f64 / all as f64
}

#[test]
fn the_gate_on_identical_distributions_is_significant_at_most_alpha_of_the_time() {
    let alpha = 0.05;
    let dists = distributions();
    let rounded = Dist {
        name: "rounded normal (ties)",
        draw: |r| (3.0 + normal(r)).round(),
        median: 3.0,
    };
    for (i, d) in [&dists[0], &dists[1], &rounded].into_iter().enumerate() {
        for n in [5usize, 10] {
            let mut rng = Rng::new(500 + 10 * i as u64 + n as u64);
            let mut hits = 0;
            for pair in 0..PAIRS {
                let (a, b) = (sample(&mut rng, n, &d.draw), sample(&mut rng, n, &d.draw));
                let p = mann_whitney(&a, &b).unwrap();
                // `significant` is p ≤ α; the bootstrap `change` adds makes checking every
                // pair through it too slow, so a share of them checks the two agree.
                if pair < 100 {
                    assert_eq!(change(&a, &b, alpha, 0.95, 1).significant, p <= alpha);
                }
                hits += usize::from(p <= alpha);
            }
            let rate = hits as f64 / PAIRS as f64;
            let size = exact_size(n, n, alpha);
            eprintln!(
                "{:<22} n=m={n:>2}: false positives {rate:.4} (exact size without ties {size:.4})",
                d.name
            );
            assert!(size <= alpha);
            assert!(rate <= alpha + FPR_TOL, "{} n={n}: {rate}", d.name);
        }
    }
    // The attainable sizes at α = 0.05: 8/252 with 5 a side.
    assert!((exact_size(5, 5, alpha) - 8.0 / 252.0).abs() < 1e-12);
}

#[test]
fn the_gate_detects_a_real_shift() {
    // 5 % CV, +20 %: detected in nearly every pair even with 5 trials a side; +5 % (one CV)
    // needs more trials, which the figures printed show.
    let mut report = String::new();
    for (shift, n, least) in [(0.20, 5, 0.97), (0.05, 5, 0.08), (0.05, 10, 0.35)] {
        let mut rng = Rng::new(900 + n as u64);
        let draw = |r: &mut Rng| 100.0 * (1.0 + 0.05 * normal(r));
        let pairs = 300;
        let mut hits = 0;
        for pair in 0..pairs {
            let a = sample(&mut rng, n, &draw);
            let b: Vec<f64> = sample(&mut rng, n, &draw)
                .iter()
                .map(|v| v * (1.0 + shift))
                .collect();
            let c = change(&a, &b, 0.05, 0.95, pair);
            hits += usize::from(c.significant && c.verdict(true) == Verdict::Improved);
        }
        let power = hits as f64 / pairs as f64;
        report += &format!(
            "+{:.0}% at 5% CV, n=m={n}: power {power:.3}\n",
            shift * 100.0
        );
        assert!(power >= least, "+{shift} n={n}: {power}");
    }
    eprintln!("{report}");
}

#[test]
fn the_bootstrap_interval_of_the_change_contains_the_true_ratio() {
    // Current = baseline's distribution × 1.1: the true change of the median is +10 %.
    for (n, least) in [(10usize, 0.85), (20, 0.88)] {
        let mut rng = Rng::new(77 + n as u64);
        let draw = |r: &mut Rng| 100.0 * (1.0 + 0.05 * normal(r));
        let sets = 300;
        let mut inside = 0;
        for set in 0..sets {
            let a = sample(&mut rng, n, &draw);
            let b: Vec<f64> = sample(&mut rng, n, &draw).iter().map(|v| v * 1.1).collect();
            let c = change(&a, &b, 0.05, 0.95, set);
            let (lo, hi) = (c.lo.unwrap(), c.hi.unwrap());
            assert!(lo <= c.ratio.unwrap() && c.ratio.unwrap() <= hi);
            inside += usize::from(lo <= 0.1 && 0.1 <= hi);
        }
        let share = inside as f64 / sets as f64;
        eprintln!("bootstrap 95% interval of +10%, n=m={n}: contains it in {share:.3}");
        assert!(share >= least, "n={n}: {share}");
    }
}

#[test]
fn change_is_reproducible_and_handles_edges() {
    let a = [100.0, 102.0, 98.0, 101.0, 99.0];
    let b = [90.0, 91.0, 89.0, 92.0, 88.0];
    let c = change(&a, &b, 0.05, 0.95, 1);
    assert_eq!(c, change(&a, &b, 0.05, 0.95, 1));
    assert!((c.ratio.unwrap() - (90.0 / 100.0 - 1.0)).abs() < 1e-12);
    assert_eq!(c.p_value, Some(2.0 / 252.0));
    assert!(c.significant && c.lo.unwrap() < -0.05 && c.hi.unwrap() < 0.0);
    assert_eq!((c.n_baseline, c.n_current), (5, 5));
    assert_eq!(c.verdict(true), Verdict::Regressed);
    assert_eq!(c.verdict(false), Verdict::Improved);
    assert!(c.exceeds(-0.05) && !c.exceeds(-0.15) && !c.exceeds(0.05) && c.exceeds(-0.0));
    // Not significant: no verdict, no gate, whatever the size.
    let c = change(&[1.0, 2.0], &[10.0, 20.0], 0.05, 0.95, 1);
    assert!(!c.significant && c.ratio.unwrap() > 5.0);
    assert_eq!(c.verdict(true), Verdict::NoChange);
    assert!(!c.exceeds(0.05));
    // One value a side: a ratio and a p-value, no interval.
    let c = change(&[1.0], &[2.0], 0.05, 0.95, 1);
    assert_eq!(
        (c.ratio, c.lo, c.hi, c.p_value),
        (Some(1.0), None, None, Some(1.0))
    );
    // A zero baseline median: no ratio.
    let c = change(&[0.0, 0.0, 1.0], &[1.0, 1.0, 1.0], 0.05, 0.95, 1);
    assert_eq!((c.ratio, c.lo, c.hi), (None, None, None));
    let c = change(&[], &[1.0], 0.05, 0.95, 1);
    assert_eq!((c.ratio, c.p_value, c.significant), (None, None, false));
}
