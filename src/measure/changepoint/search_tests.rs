//! Change points against what they promise, on simulated series with seeded noise: a known
//! shift found within ±1 position, pure noise left alone at the default significance, trials
//! used as the points' values, and the scan's running sums against the statistic computed
//! directly. `KB_CHANGEPOINT_SERIES=N` simulates N series per case instead of the CI's few;
//! run with `--nocapture` to see the measured figures.

use super::*;
use std::f64::consts::TAU;

/// A standard normal deviate (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.next_f64(); // (0, 1]: ln never sees 0
    (-2.0 * u1.ln()).sqrt() * (TAU * rng.next_f64()).cos()
}

/// Series per case: few in CI (each case's rate is then known to a few points), more by hand.
fn series_per_case(ci: usize) -> usize {
    std::env::var("KB_CHANGEPOINT_SERIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ci)
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

/// Noise around a level: Gaussian with σ, or uniform within ±h (both in % of the level).
#[derive(Clone, Copy, Debug)]
enum Noise {
    Normal(f64),
    Uniform(f64),
}

impl Noise {
    /// `σ 2.50%` or `±2.50%`, for the tables.
    fn shown(self) -> String {
        match self {
            Noise::Normal(sd) => format!("σ {sd:.2}%"),
            Noise::Uniform(h) => format!("±{h:.2}%"),
        }
    }

    fn draw(self, rng: &mut Rng) -> f64 {
        match self {
            Noise::Normal(sd) => sd / 100.0 * normal(rng),
            Noise::Uniform(h) => h / 100.0 * (2.0 * rng.next_f64() - 1.0),
        }
    }
}

/// A series of `n` points of `trials` values each around 100 with `noise`, shifted by
/// `shift` % from point `at` on.
fn shifted(
    rng: &mut Rng,
    n: usize,
    trials: usize,
    at: usize,
    shift: f64,
    noise: Noise,
) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            let level = if i >= at {
                100.0 * (1.0 + shift / 100.0)
            } else {
                100.0
            };
            (0..trials)
                .map(|_| level * (1.0 + noise.draw(rng)))
                .collect()
        })
        .collect()
}

/// The split a mean-shift oracle picks: it knows there is exactly one change and that it moves
/// the mean of independent Gaussian noise, so the maximum-likelihood split (the largest
/// m·k/(m+k)·(x̄ − ȳ)²) is the best any method can locate it; segments as long as ours.
fn oracle(points: &[Vec<f64>], min: usize) -> usize {
    let x: Vec<f64> = points.iter().map(|p| p[0]).collect();
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
/// a change point within ±1 of the shift and no other, and how often the oracle's split is
/// within ±1 (one value a point only).
struct Rate {
    alone: f64,
    oracle: f64,
}

fn detection_rate(
    seed: u64,
    series: usize,
    n: usize,
    trials: usize,
    shift: f64,
    noise: Noise,
) -> Rate {
    let mut rng = Rng::new(seed);
    let (mut alone, mut oracle_near) = (0usize, 0usize);
    for i in 0..series {
        let at = n / 4 + (rng.next_f64() * (n / 2) as f64) as usize;
        let points = shifted(&mut rng, n, trials, at, shift, noise);
        let s = Settings {
            seed: seed ^ (i as u64) << 16,
            ..Settings::default()
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
const SHIFTS: [f64; 4] = [3.0, 5.0, 10.0, 20.0];

/// Every case of length × shift with the noise `noise_of(shift)` and `trials` values a point:
/// the table, and the pooled and the worst case's share found alone within ±1 (the oracle's
/// reads each point's first value only).
fn grid(
    seed: u64,
    series: usize,
    trials: usize,
    noise_of: impl Fn(f64) -> Noise,
) -> (String, f64, f64, f64) {
    let mut table = String::from("  n  shift  noise     alone  oracle\n");
    let (mut pooled, mut oracle, mut worst) = (0.0, 0.0, 1.0f64);
    for (n_i, n) in LENGTHS.into_iter().enumerate() {
        for (s_i, shift) in SHIFTS.into_iter().enumerate() {
            let noise = noise_of(shift);
            let r = detection_rate(
                seed + 10 * n_i as u64 + s_i as u64,
                series,
                n,
                trials,
                shift,
                noise,
            );
            table += &format!(
                "{n:>3}  {shift:>4}%  {:<8}  {:.3}  {:.3}\n",
                noise.shown(),
                r.alone,
                r.oracle
            );
            pooled += r.alone;
            oracle += r.oracle;
            worst = worst.min(r.alone);
        }
    }
    let cases = (LENGTHS.len() * SHIFTS.len()) as f64;
    (table, pooled / cases, oracle / cases, worst)
}

#[test]
fn a_shift_of_twice_the_noise_is_found_within_one_position() {
    // Uniform noise within ±h and a shift of 2h: a run varies by up to h either way.
    let series = series_per_case(20);
    let (table, pooled, _, worst) = grid(100, series, 1, |shift| Noise::Uniform(shift / 2.0));
    eprintln!("{series} series per case, found alone within ±1:\n{table}pooled {pooled:.3}");
    assert!(pooled >= 0.9, "pooled {pooled}\n{table}");
    assert!(worst >= 0.8, "worst case {worst}\n{table}");
}

#[test]
fn gaussian_noise_is_located_about_as_well_as_the_oracle_does() {
    // Gaussian noise with σ = shift / 2: no method locates the change within ±1 in 90 % of
    // series (the maximum-likelihood oracle manages about 85 %); at σ = shift / 3 both do.
    let series = series_per_case(12);
    let (table, pooled, oracle, _) = grid(200, series, 1, |shift| Noise::Normal(shift / 2.0));
    eprintln!(
        "σ = shift / 2, {series} series per case:\n{table}pooled {pooled:.3}, oracle {oracle:.3}"
    );
    assert!(
        pooled >= oracle - 0.1,
        "pooled {pooled}, oracle {oracle}\n{table}"
    );
    let (table, pooled, _, _) = grid(300, series, 1, |shift| Noise::Normal(shift / 3.0));
    eprintln!("σ = shift / 3:\n{table}pooled {pooled:.3}");
    assert!(pooled >= 0.9, "pooled {pooled}\n{table}");
}

#[test]
fn with_three_trials_a_run_a_shift_of_twice_sigma_is_found_within_one_position() {
    // What one value a run cannot give at σ = shift / 2, `--repeat 3` does: each run's noise
    // is then known from its trials.
    let series = series_per_case(6);
    let (table, pooled, _, _) = grid(400, series, 3, |shift| Noise::Normal(shift / 2.0));
    eprintln!(
        "3 trials a run, σ = shift / 2, {series} series per case:\n{table}pooled {pooled:.3}"
    );
    assert!(pooled >= 0.9, "pooled {pooled}\n{table}");
}

#[test]
fn pure_noise_rarely_shows_a_change_at_the_default_significance() {
    let series = series_per_case(300);
    let mut rng = Rng::new(7);
    let mut any = 0;
    for i in 0..series {
        let points = shifted(&mut rng, 100, 1, 0, 0.0, Noise::Normal(5.0));
        let s = Settings {
            seed: i as u64,
            ..Settings::default()
        };
        any += usize::from(!change_points(&points, &s).is_empty());
    }
    let rate = any as f64 / series as f64;
    eprintln!("pure noise, 100 points: {any} of {series} series showed a change ({rate:.3})");
    assert!(rate < 0.05, "{any} of {series}");
}

#[test]
fn trials_are_the_points_values() {
    // Three trials a point: a shift of twice the noise at 30 points, found as with one value.
    let series = series_per_case(40);
    let r = detection_rate(5, series, 30, 3, 5.0, Noise::Normal(2.5));
    eprintln!(
        "3 trials a point, 30 points, shift 5% at σ 2.5%: {:.3}",
        r.alone
    );
    assert!(r.alone >= 0.9, "{}", r.alone);
}

#[test]
fn the_same_seed_gives_the_same_answer() {
    let mut rng = Rng::new(3);
    let points = shifted(&mut rng, 60, 2, 25, 4.0, Noise::Normal(2.0));
    let s = Settings::default();
    let first = change_points(&points, &s);
    assert_eq!(first, change_points(&points, &s));
    assert_eq!(first.len(), 1, "{first:?}");
    let c = &first[0];
    assert_eq!((c.index, c.points_before, c.points_after), (25, 25, 35));
    assert!((c.change().unwrap() - 0.04).abs() < 0.01, "{c:?}");
    assert!(c.p_value <= s.alpha);
}

#[test]
fn two_shifts_are_both_found() {
    let mut rng = Rng::new(21);
    let mut points = shifted(&mut rng, 90, 1, 30, 10.0, Noise::Normal(2.0));
    for p in &mut points[60..] {
        p[0] *= 0.85;
    }
    let at: Vec<usize> = change_points(&points, &Settings::default())
        .iter()
        .map(|c| c.index)
        .collect();
    assert_eq!(at.len(), 2, "{at:?}");
    assert!(at[0].abs_diff(30) <= 1 && at[1].abs_diff(60) <= 1, "{at:?}");
}

#[test]
fn nothing_to_split_is_no_change() {
    let s = Settings::default();
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
        let mut points = shifted(&mut rng, 60, 1, 0, 0.0, Noise::Normal(2.0));
        points[30][0] *= 1.5;
        let s = Settings {
            seed: i,
            ..Settings::default()
        };
        hits += usize::from(!change_points(&points, &s).is_empty());
    }
    assert!(
        hits <= 3,
        "{hits} of 50 series with one outlier showed a change"
    );
}
