//! Change points against what they promise, on simulated series with seeded Gaussian noise of
//! σ: a shift of 1σ, 2σ and 3σ found within ±1 position (against the oracle that knows there
//! is one mean shift), pure noise left alone, trials used as the points' values, the tail's
//! p-values against many more permutations, and the scan's running sums against the statistic
//! computed directly. `KB_CHANGEPOINT_SERIES=N` simulates N series per case instead of the
//! CI's few; run with `--nocapture` to see the measured figures (docs/results.md quotes them).

use super::scan::{best_split, Flat, Scratch};
use super::*;
use crate::random::Rng;
use std::f64::consts::TAU;

/// A standard normal deviate (Box–Muller).
pub(super) fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.next_f64(); // (0, 1]: ln never sees 0
    (-2.0 * u1.ln()).sqrt() * (TAU * rng.next_f64()).cos()
}

/// Series per case: few in CI (each case's rate is then known to a few points), more by hand.
pub(super) fn series_per_case(ci: usize) -> usize {
    std::env::var("KB_CHANGEPOINT_SERIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ci)
}

/// Every significant change, whatever its size: the statistical properties.
pub(super) fn settings(seed: u64) -> Settings {
    Settings {
        seed,
        min_effect: 0.0,
        ..Settings::default()
    }
}

/// Q̂ of X = points [s, tau) and Y = [tau, kappa), straight from its definition.
fn q_direct(points: &[Vec<f64>], s: usize, tau: usize, kappa: usize) -> f64 {
    let x: Vec<f64> = points[s..tau].concat();
    let y: Vec<f64> = points[tau..kappa].concat();
    let (m, n) = (x.len() as f64, y.len() as f64);
    let pairs = |a: &[f64], b: &[f64]| -> f64 {
        a.iter()
            .map(|u| b.iter().map(|v| (u - v).abs()).sum::<f64>())
            .sum()
    };
    let within = |a: &[f64]| {
        let c = a.len() as f64;
        if c > 1.0 {
            pairs(a, a) / (c * (c - 1.0))
        } else {
            0.0
        }
    };
    m * n / (m + n) * (2.0 * pairs(&x, &y) / (m * n) - within(&x) - within(&y))
}

#[test]
fn the_scan_finds_the_largest_statistic_of_its_definition() {
    let mut rng = Rng::new(11);
    for trial_counts in [[1usize; 12], [1, 3, 2, 1, 4, 1, 1, 2, 3, 1, 1, 2]] {
        let points: Vec<Vec<f64>> = (trial_counts.iter().enumerate())
            .map(|(i, &t)| {
                (0..t)
                    .map(|_| normal(&mut rng) + if i >= 7 { 1.5 } else { 0.0 })
                    .collect()
            })
            .collect();
        let flat = Flat::of(points.iter().map(|p| p.iter().copied()));
        for (a, b, min) in [(0, 12, 1), (0, 12, 3), (2, 11, 2)] {
            let got = best_split(&flat, (a, b), min, &mut Scratch::default()).unwrap();
            let mut want = (0, 0, f64::NEG_INFINITY);
            for tau in a + min..=b - min {
                for kappa in tau + min..=b {
                    let q = q_direct(&points, a, tau, kappa);
                    if q > want.2 {
                        want = (tau, kappa, q);
                    }
                }
            }
            assert_eq!((got.tau, got.kappa), (want.0, want.1), "{a}..{b} min {min}");
            assert!(
                (got.q - want.2).abs() < 1e-9 * want.2.abs().max(1.0),
                "{} vs {}",
                got.q,
                want.2
            );
        }
    }
}

/// A series of `n` points of `trials` values each: 100 plus Gaussian noise of σ = 1, shifted
/// by `shift` σ from point `at` on.
pub(super) fn shifted(
    rng: &mut Rng,
    n: usize,
    trials: usize,
    at: usize,
    shift: f64,
) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            let level = if i >= at { 100.0 + shift } else { 100.0 };
            (0..trials).map(|_| level + normal(rng)).collect()
        })
        .collect()
}

/// The split a mean-shift oracle picks: it knows there is exactly one change and that it moves
/// the mean of independent Gaussian noise, so the maximum-likelihood split (the largest
/// m·k/(m+k)·(x̄ − ȳ)²) is the best any method can locate it; segments as long as ours.
fn oracle(points: &[Vec<f64>], min: usize) -> usize {
    let x: Vec<f64> = points
        .iter()
        .map(|p| p.iter().sum::<f64>() / p.len() as f64)
        .collect();
    let (n, total) = (x.len() as f64, x.iter().sum::<f64>());
    let mut best = (0, f64::NEG_INFINITY);
    let mut sum = 0.0;
    for t in 1..x.len() {
        sum += x[t - 1];
        let (m, k) = (t as f64, n - t as f64);
        let d = sum / m - (total - sum) / k;
        if t >= min && x.len() - t >= min && m * k / n * d * d > best.1 {
            best = (t, m * k / n * d * d);
        }
    }
    best.0
}

/// How often a series of `n` points (the change at a uniform position in its middle half) has
/// a change point within ±1 of the shift and no other, at level `alpha`; and how often the
/// oracle's split is within ±1.
struct Rate {
    alone: f64,
    oracle: f64,
}

fn detection_rate(
    seed: u64,
    series: usize,
    (n, trials): (usize, usize),
    shift: f64,
    alpha: f64,
) -> Rate {
    let mut rng = Rng::new(seed);
    let (mut alone, mut oracle_near) = (0usize, 0usize);
    for i in 0..series {
        let at = n / 4 + (rng.next_f64() * (n / 2) as f64) as usize;
        let points = shifted(&mut rng, n, trials, at, shift);
        let s = Settings {
            alpha,
            ..settings(seed ^ (i as u64) << 16)
        };
        let cps = change_points(&points, &s);
        alone += usize::from(cps.len() == 1 && cps[0].index.abs_diff(at) <= 1);
        oracle_near += usize::from(oracle(&points, s.min_size).abs_diff(at) <= 1);
    }
    let share = |k: usize| k as f64 / series as f64;
    Rate {
        alone: share(alone),
        oracle: share(oracle_near),
    }
}

const LENGTHS: [usize; 4] = [30, 50, 100, 200];

/// Every length at a shift of `shift` σ: the table, and the share found alone pooled over the
/// lengths, the oracle's, and the worst length's.
fn grid(
    seed: u64,
    series: usize,
    trials: usize,
    shift: f64,
    alpha: f64,
) -> (String, f64, f64, f64) {
    let mut table = String::new();
    let (mut pooled, mut oracle, mut worst) = (0.0, 0.0, 1.0f64);
    for (i, n) in LENGTHS.into_iter().enumerate() {
        let r = detection_rate(seed + i as u64, series, (n, trials), shift, alpha);
        table += &format!(
            "  n {n:>3}, {shift}σ, {trials} a point, α {alpha}: alone {:.3}, oracle {:.3}\n",
            r.alone, r.oracle
        );
        pooled += r.alone;
        oracle += r.oracle;
        worst = worst.min(r.alone);
    }
    let k = LENGTHS.len() as f64;
    (table, pooled / k, oracle / k, worst)
}

#[test]
fn shifts_of_one_two_and_three_sigma_are_located_about_as_well_as_the_oracle_does() {
    // One value a point at α and at α/8 (the strongest of eight figures under Holm). No method
    // places a 1σ shift within ±1 often: the oracle, told there is one shift, manages about a
    // third; at 3σ both place nearly all.
    let series = series_per_case(12);
    for (shift, at_least) in [(1.0, 0.0), (2.0, 0.4), (3.0, 0.85)] {
        for alpha in [ALPHA, ALPHA / 8.0] {
            let seed = 100 + (shift as u64) * 10 + u64::from(alpha < ALPHA);
            let (table, pooled, oracle, _) = grid(seed, series, 1, shift, alpha);
            eprintln!("{table}  pooled {pooled:.3}, oracle {oracle:.3}");
            assert!(pooled >= at_least, "{shift}σ at {alpha}: {pooled}\n{table}");
            assert!(pooled <= oracle + 0.1, "better than the oracle?\n{table}");
        }
    }
}

#[test]
fn with_three_trials_a_run_a_shift_of_two_sigma_is_found_within_one_position() {
    // What one value a run cannot give at 2σ, `--repeat 3` does: a run's mean of 3 has σ/√3.
    let series = series_per_case(6);
    let (table, pooled, _, _) = grid(400, series, 3, 2.0, ALPHA);
    eprintln!("{table}  pooled {pooled:.3}");
    assert!(pooled >= 0.85, "pooled {pooled}\n{table}");
}

#[test]
fn pure_noise_rarely_shows_a_change_at_the_default_significance() {
    let series = series_per_case(300);
    let mut rng = Rng::new(7);
    let mut any = 0;
    for i in 0..series {
        let points = shifted(&mut rng, 100, 1, 0, 0.0);
        any += usize::from(!change_points(&points, &settings(i as u64)).is_empty());
    }
    let rate = any as f64 / series as f64;
    let se = (ALPHA * (1.0 - ALPHA) / series as f64).sqrt();
    eprintln!("pure noise, 100 points: {any} of {series} series showed a change ({rate:.4})");
    assert!(rate <= ALPHA + 3.0 * se, "{any} of {series}");
}

#[test]
fn the_same_seed_gives_the_same_answer_and_a_change_its_summaries() {
    let mut rng = Rng::new(3);
    let points = shifted(&mut rng, 60, 2, 25, 4.0);
    let s = settings(0);
    let first = change_points(&points, &s);
    assert_eq!(first, change_points(&points, &s));
    assert_eq!(first.len(), 1, "{first:?}");
    let c = &first[0];
    assert_eq!((c.index, c.points_before, c.points_after), (25, 25, 35));
    // Medians of the segments: 100 and 104, within a σ/√50-ish of them.
    assert!(
        (c.before - 100.0).abs() < 0.5 && (c.after - 104.0).abs() < 0.5,
        "{c:?}"
    );
    assert!(c.p_value <= s.alpha && c.permutations >= PERMUTATIONS);
}

#[test]
fn two_shifts_are_both_found() {
    let mut rng = Rng::new(21);
    let mut points = shifted(&mut rng, 90, 1, 30, 5.0);
    for p in &mut points[60..] {
        p[0] -= 8.0;
    }
    let at: Vec<usize> = change_points(&points, &settings(0))
        .iter()
        .map(|c| c.index)
        .collect();
    assert_eq!(at.len(), 2, "{at:?}");
    assert!(at[0].abs_diff(30) <= 1 && at[1].abs_diff(60) <= 1, "{at:?}");
}

#[test]
fn nothing_to_split_is_no_change() {
    let s = settings(0);
    assert!(change_points(&[], &s).is_empty());
    assert!(
        change_points(&vec![vec![1.0]; 5], &s).is_empty(),
        "too short"
    );
    assert!(
        change_points(&vec![vec![7.0]; 50], &s).is_empty(),
        "constant"
    );
    // NaN values are left out, not compared.
    let mut points = vec![vec![1.0]; 40];
    points[20] = vec![f64::NAN, 1.0];
    assert!(change_points(&points, &s).is_empty());
}

#[test]
fn a_single_outlier_is_not_a_change() {
    let mut rng = Rng::new(17);
    let mut hits = 0;
    for i in 0..50u64 {
        let mut points = shifted(&mut rng, 60, 1, 0, 0.0);
        points[30][0] += 25.0;
        hits += usize::from(!change_points(&points, &settings(i)).is_empty());
    }
    assert!(
        hits <= 3,
        "{hits} of 50 series with one outlier showed a change"
    );
}

/// What a search costs (bench/changepoint.sh): 200 points, one value each, with no change,
/// one shift of 3σ and two; the median of `KB_CHANGEPOINT_SERIES` seeded series each, with
/// 199 permutations (the search before Holm) and with this one's 999, back to back on the same
/// machine.
#[test]
#[ignore = "a timing, run by bench/changepoint.sh"]
fn cost_of_a_200_point_series() {
    let series = series_per_case(21);
    let cases: [(&str, &[usize]); 3] = [
        ("no change", &[]),
        ("one 3σ shift", &[100]),
        ("two", &[60, 140]),
    ];
    for (name, shifts) in cases {
        for permutations in [199, PERMUTATIONS] {
            let mut times = Vec::new();
            for i in 0..series {
                let mut rng = Rng::new(1000 + i as u64);
                let mut points = shifted(&mut rng, 200, 1, 0, 0.0);
                for (k, &at) in shifts.iter().enumerate() {
                    let step = if k % 2 == 0 { 3.0 } else { -3.0 };
                    for p in &mut points[at..] {
                        p[0] += step;
                    }
                }
                let s = Settings {
                    permutations,
                    ..settings(i as u64)
                };
                let t = std::time::Instant::now();
                let found = change_points(&points, &s);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                std::hint::black_box(found);
            }
            times.sort_by(f64::total_cmp);
            eprintln!(
                "200 points, {name}, {permutations} permutations: median {:.1} ms, max {:.1} ms \
                 over {series} series",
                times[times.len() / 2],
                times[times.len() - 1]
            );
        }
    }
}
