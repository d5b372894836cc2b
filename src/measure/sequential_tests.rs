//! The rule on simulated trials (seeded): the interval where it stops covers the true median
//! at the stated level on normal, skewed and outlier-ridden figures; it stops sooner on quiet
//! ones; looking after every trial instead would cover less than it says.

use super::*;
use crate::random::Rng;

const LEVEL: f64 = 0.95;
const WITHIN: f64 = 0.05;
const MAX: u32 = 20;
/// Replicates per case: the coverage's Monte Carlo error is then about ±0.0015.
const REPS: usize = 20_000;

fn normal(rng: &mut Rng) -> f64 {
    // Box–Muller; 1 − u keeps the logarithm finite.
    let (u, v) = (1.0 - rng.next_f64(), rng.next_f64());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// A figure's distribution and its true median.
struct Case {
    name: &'static str,
    draw: fn(&mut Rng, f64) -> f64,
    noise: f64,
    median: fn(f64) -> f64,
}

fn one(_: f64) -> f64 {
    1.0
}

/// Every ~10th trial is slowed to half (a noisy neighbour): the median is the 4/9 quantile of
/// the rest, 1 + s·Φ⁻¹(4/9).
fn slow_median(s: f64) -> f64 {
    1.0 - 0.139_710_298_881_862 * s
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for noise in [0.01, 0.03, 0.06, 0.12] {
        out.push(Case {
            name: "normal",
            draw: |r, s| 1.0 + s * normal(r),
            noise,
            median: one,
        });
        out.push(Case {
            name: "lognormal",
            draw: |r, s| (s * normal(r)).exp(),
            noise,
            median: one,
        });
        out.push(Case {
            name: "slow outliers",
            draw: |r, s| {
                let x = 1.0 + s * normal(r);
                if r.next_f64() < 0.1 {
                    x * 0.5
                } else {
                    x
                }
            },
            noise,
            median: slow_median,
        });
        out.push(Case {
            name: "cauchy",
            draw: |r, s| 1.0 + s * (std::f64::consts::PI * (r.next_f64() - 0.5)).tan(),
            noise,
            median: one,
        });
    }
    out
}

/// A stopping rule: after n trials with these values, why to stop and the widest extent.
type Rule<'a> = &'a dyn Fn(u32, &[f64]) -> Option<(Stop, Option<f64>)>;

struct Sim {
    coverage: f64,
    mean_n: f64,
}

/// Runs `REPS` sequences of at most `MAX` trials, stopping where `decide` says; the interval
/// reported at the stop is at `level`. Also checks that a stop before `MAX` reached `WITHIN`.
fn simulate(case: &Case, seed: u64, level: f64, decide: Rule) -> Sim {
    let mut rng = Rng::new(seed);
    let truth = (case.median)(case.noise);
    let (mut covered, mut total_n) = (0usize, 0u64);
    for _ in 0..REPS {
        let mut values = Vec::with_capacity(MAX as usize);
        let (stop, n) = loop {
            values.push((case.draw)(&mut rng, case.noise));
            let n = values.len() as u32;
            if let Some((stop, w)) = decide(n, &values) {
                if stop == Stop::Reached {
                    assert!(w.unwrap() <= WITHIN, "{} reached {w:?}", case.name);
                }
                break (stop, n);
            }
        };
        assert!(stop != Stop::Cut && n <= MAX);
        let e = median_interval(&values, level).unwrap();
        covered += usize::from(e.lo <= truth && truth <= e.hi);
        total_n += u64::from(n);
    }
    Sim {
        coverage: covered as f64 / REPS as f64,
        mean_n: total_n as f64 / REPS as f64,
    }
}

fn auto(case: &Case, seed: u64) -> Sim {
    let s = schedule(MAX, LEVEL);
    simulate(case, seed, s.look_level, &|n, v| s.decide(n, WITHIN, [v]))
}

#[test]
fn the_schedule_for_max_20_looks_five_times_at_99_percent() {
    let s = schedule(20, 0.95);
    assert_eq!(s.looks, [8, 10, 12, 16, 20]);
    assert!((s.look_level - 0.99).abs() < 1e-12);
    // Each look can give an interval at its level: 8 trials cover 99.2 % with [min, max].
    assert_eq!(min_trials(s.look_level), Some(8));
    assert_eq!(schedule(8, 0.95).looks, [8]);
    assert_eq!(schedule(11, 0.95).looks, [8, 10, 11]);
    // Twelve looks (max 100) ask 99.58 %, which 8 trials cannot give: the first look is 10.
    let wide = schedule(100, 0.95);
    assert_eq!(wide.looks.first(), Some(&10));
    assert_eq!(wide.looks.last(), Some(&100));
    assert!(min_trials(wide.look_level).unwrap() <= 10);
}

#[test]
fn decide_looks_only_at_stages_and_stops_at_max() {
    let s = schedule(20, 0.95);
    let quiet: Vec<f64> = (0..20).map(|i| 100.0 + (i % 5) as f64 * 0.1).collect();
    let loud: Vec<f64> = (0..20).map(|i| 100.0 + (i % 5) as f64 * 10.0).collect();
    assert_eq!(s.decide(7, 0.05, [&quiet[..7]]), None);
    assert_eq!(s.decide(9, 0.05, [&quiet[..9]]), None);
    let (stop, w) = s.decide(8, 0.05, [&quiet[..8]]).unwrap();
    assert_eq!(stop, Stop::Reached);
    assert!(w.unwrap() <= 0.005);
    // Every figure must reach it: one loud figure keeps the trials going.
    assert_eq!(s.decide(8, 0.05, [&quiet[..8], &loud[..8]]), None);
    let (stop, w) = s.decide(20, 0.05, [&quiet[..], &loud[..]]).unwrap();
    assert_eq!(stop, Stop::Max);
    assert!(w.unwrap() > 0.05);
    // Nothing to judge: on to max.
    let none: [&[f64]; 0] = [];
    assert_eq!(s.decide(8, 0.05, none), None);
    assert_eq!(s.decide(20, 0.05, none), Some((Stop::Max, None)));
}

#[test]
fn extent_is_the_wider_side_of_the_interval() {
    let e = |median, lo, hi| Estimate {
        n: 8,
        median,
        lo,
        hi,
        coverage: 0.99,
    };
    assert_eq!(extent(&e(100.0, 98.0, 106.0)), 0.06);
    assert_eq!(extent(&e(0.0, 0.0, 0.0)), 0.0);
    assert_eq!(extent(&e(0.0, -1.0, 1.0)), f64::INFINITY);
    assert_eq!(extent(&e(1.0, 0.5, f64::INFINITY)), f64::INFINITY);
}

/// The done-when of issue 37 part 4: the stated coverage holds on every case, and a quiet
/// figure stops sooner than a noisy one of the same distribution.
#[test]
fn auto_repeat_covers_at_the_stated_level_and_stops_sooner_when_quiet() {
    let mut by_noise: Vec<(&str, f64, f64)> = Vec::new();
    for (i, case) in cases().iter().enumerate() {
        let sim = auto(case, 0x37_04 + i as u64);
        // 3.3 Monte Carlo standard errors below the stated level.
        assert!(
            sim.coverage >= LEVEL - 0.005,
            "{} at {}: coverage {}",
            case.name,
            case.noise,
            sim.coverage
        );
        by_noise.push((case.name, case.noise, sim.mean_n));
    }
    for name in ["normal", "lognormal", "slow outliers", "cauchy"] {
        let ns: Vec<f64> = by_noise
            .iter()
            .filter(|c| c.0 == name)
            .map(|c| c.2)
            .collect();
        assert!(ns.windows(2).all(|w| w[0] <= w[1]), "{name}: {ns:?}");
        assert!(ns[0] < ns[3], "{name}: {ns:?}");
    }
    // At 1 % noise a normal figure is known within ±5 % at the first look, every time.
    assert_eq!(by_noise[0].2, 8.0);
}

/// Why the looks are few and at an adjusted level: looking after every trial from 6 on, each
/// time at 95 %, and stopping at the first interval within ±5 %, covers less than 95 % when the
/// noise makes the stop a matter of luck.
#[test]
fn looking_after_every_trial_at_the_plain_level_covers_less() {
    let first = min_trials(LEVEL).unwrap() as u32;
    let naive = |n: u32, v: &[f64]| -> Option<(Stop, Option<f64>)> {
        if n < first {
            return None;
        }
        let w = widest([v], LEVEL);
        if w.is_some_and(|w| w <= WITHIN) {
            Some((Stop::Reached, w))
        } else {
            (n >= MAX).then_some((Stop::Max, w))
        }
    };
    // At 6 % noise the stop is most a matter of luck (at 4 % it is mostly the first look).
    let case = Case {
        name: "normal",
        draw: |r, s| 1.0 + s * normal(r),
        noise: 0.06,
        median: one,
    };
    let sim = simulate(&case, 0x37_0a, LEVEL, &naive);
    // 0.942 with this seed: 5 Monte Carlo standard errors below the level it claims.
    assert!(sim.coverage < LEVEL - 0.005, "{}", sim.coverage);
    let sim = auto(&case, 0x37_0a);
    assert!(sim.coverage >= LEVEL, "{}", sim.coverage);
}

/// What a run is judged by: the headline figures its assertions read, a capacity search's
/// `capacity`, throughput when neither; counts are set aside as not judged.
#[test]
fn the_judged_figures_are_the_headline_ones_read_else_throughput() {
    use crate::model::{LatencyKind, Stat};
    let p99 = Metric::Latency(LatencyKind::Ack, Stat::Percentile(99.0));
    let (judged, left) = judged(&[Metric::Lost, p99], false);
    assert_eq!(judged, [("ack.p99", p99)]);
    assert_eq!(left, [Metric::Lost]);
    let (judged, _) = judged_names(&[p99], true);
    assert_eq!(judged, ["ack.p99", "capacity"]);
    assert_eq!(judged_names(&[], true).0, ["capacity"]);
    assert_eq!(judged_names(&[Metric::Lost], false).0, ["throughput"]);
}

fn judged_names(read: &[Metric], capacity: bool) -> (Vec<&'static str>, usize) {
    let (j, left) = judged(read, capacity);
    (j.into_iter().map(|(n, _)| n).collect(), left.len())
}
