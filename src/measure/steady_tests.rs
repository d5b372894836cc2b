//! The detector on simulated series: seeded, so the figures are the same on every run (run
//! with `--nocapture` to see them; docs/results.md quotes them). Noise is autocorrelated
//! (AR(1), φ = 0.5), as a real run's adjacent intervals are.

use std::f64::consts::TAU;

use super::*;
use crate::random::Rng;

const RUNS: u64 = 200;

pub(super) fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (TAU * rng.next_f64()).cos()
}

/// AR(1) noise, unit stationary variance.
pub(super) struct Ar1 {
    rng: Rng,
    last: f64,
}

impl Ar1 {
    const PHI: f64 = 0.5;
    pub(super) fn new(seed: u64) -> Ar1 {
        let mut rng = Rng::new(seed);
        let last = normal(&mut rng);
        Ar1 { rng, last }
    }
    pub(super) fn next(&mut self) -> f64 {
        self.last =
            Self::PHI * self.last + (1.0 - Self::PHI * Self::PHI).sqrt() * normal(&mut self.rng);
        self.last
    }
}

/// What a simulated run does at fraction `f` of its measured phase.
struct Shape {
    /// Achieved rate, records/s.
    rate: fn(f64) -> f64,
    /// The plan's rate; None: unlimited.
    target: Option<fn(f64) -> f64>,
    /// Ack p99 in ms (p50 is a fifth of it).
    p99: fn(f64) -> f64,
}

/// `n` whole intervals of `w` seconds, then the last, partial one the detector drops.
fn simulate(shape: &Shape, n: usize, w: f64, seed: u64) -> TimeSeries {
    let (mut rate_noise, mut lat_noise) = (Ar1::new(seed), Ar1::new(seed ^ 0x5eed));
    let points = (0..=n)
        .map(|i| {
            let f = i as f64 / n as f64;
            let rate = (shape.rate)(f) * (1.0 + 0.03 * rate_noise.next());
            let p99 = (shape.p99)(f) * (0.15 * lat_noise.next()).exp();
            SeriesPoint {
                t_secs: i as f64 * w,
                span_secs: w,
                sent: 1,
                acked: (rate * w).max(0.0).round() as u64,
                target_rate: shape.target.map(|t| t(f)),
                ack_p50_ms: Some(p99 / 5.0),
                ack_p99_ms: Some(p99),
                ..SeriesPoint::default()
            }
        })
        .collect();
    TimeSeries {
        interval_secs: w,
        points,
    }
}

/// The detector over `RUNS` seeded series of `shape`.
fn trials(shape: &Shape, n: usize) -> Vec<SteadyAfter> {
    (0..RUNS)
        .map(|s| detect(&simulate(shape, n, 1.0, s)))
        .collect()
}

/// Steady-after values in intervals (None: never or too short).
fn found(results: &[SteadyAfter]) -> Vec<Option<f64>> {
    results.iter().map(SteadyAfter::secs).collect()
}

fn share(results: &[Option<f64>], ok: impl Fn(f64) -> bool) -> f64 {
    results.iter().filter(|r| r.is_some_and(&ok)).count() as f64 / results.len() as f64
}

const FLAT: fn(f64) -> f64 = |_| 1_000.0;
const FLAT_P99: fn(f64) -> f64 = |_| 20.0;
/// From 20 % of the plateau to all of it over the first 30 %.
const RAMP_30: fn(f64) -> f64 = |f| 1_000.0 * (0.2 + 0.8 * (f / 0.3).min(1.0));

#[test]
fn a_rate_ramping_through_the_first_30_percent_is_steady_near_30_percent() {
    for n in [60, 100, 300] {
        let shape = Shape {
            rate: RAMP_30,
            target: None,
            p99: FLAT_P99,
        };
        let got = found(&trials(&shape, n));
        let at = 0.3 * n as f64;
        let within = |k: f64| share(&got, |s| (s - at).abs() <= k);
        let (two, five, pct) = (within(2.0), within(5.0), within(0.05 * n as f64));
        println!(
            "ramp 30 %, n = {n}: within ±2 intervals {two:.3}, ±5 {five:.3}, ±5 % of the phase {pct:.3}"
        );
        // A long ramp's last per cent are within the noise of one interval: placed by the
        // share of the phase, not by intervals.
        let near = within((0.05 * n as f64).max(3.0));
        assert!(near >= 0.85, "n = {n}: {near}");
    }
}

#[test]
fn a_flat_run_is_steady_near_the_start() {
    for n in [60, 100, 300] {
        let shape = Shape {
            rate: FLAT,
            target: None,
            p99: FLAT_P99,
        };
        let got = found(&trials(&shape, n));
        let near = share(&got, |s| s <= 0.05 * n as f64);
        let tenth = share(&got, |s| s <= 0.1 * n as f64);
        let zero = share(&got, |s| s == 0.0);
        let never = got.iter().filter(|g| g.is_none()).count();
        println!(
            "flat, n = {n}: at 0 {zero:.3}, ≤ 5 % of the phase {near:.3}, ≤ 10 % {tenth:.3}, never {never}"
        );
        assert!(
            tenth >= 0.8 && never <= 10,
            "n = {n}: {tenth}, never {never}"
        );
    }
}

#[test]
fn a_trend_over_the_whole_run_is_never_steady() {
    let shape = Shape {
        rate: |f| 1_000.0 * (0.5 + f),
        target: None,
        p99: FLAT_P99,
    };
    let got = trials(&shape, 100);
    let never = got
        .iter()
        .filter(|g| matches!(g, SteadyAfter::Never { .. }))
        .count() as f64
        / RUNS as f64;
    println!("trend over all, n = 100: never steady {never:.3}");
    assert!(never >= 0.95, "{never}");
}

#[test]
fn a_latency_settling_late_is_what_sets_steady_after() {
    // The rate is flat; ack p99 starts 10x high and decays to its level by 40 %.
    let shape = Shape {
        rate: FLAT,
        target: None,
        p99: |f| 20.0 * (1.0 + 9.0 * (1.0 - f / 0.4).max(0.0)),
    };
    let got = trials(&shape, 100);
    let by_p99 = got
        .iter()
        .filter(|g| {
            matches!(
                g,
                SteadyAfter::Steady {
                    series: SteadySeries::AckP99 | SteadySeries::AckP50,
                    ..
                }
            )
        })
        .count();
    let near = share(&found(&got), |s| (s - 40.0).abs() <= 5.0);
    println!(
        "ack p99 settling at 40 %, n = 100: within ±5 intervals {near:.3}, set by latency {by_p99}"
    );
    assert!(near >= 0.9, "{near}");
}

#[test]
fn a_planned_ramp_kept_to_is_steady_from_the_start() {
    // Ramped on purpose through the first 30 %; the run keeps to it.
    let shape = Shape {
        rate: RAMP_30,
        target: Some(RAMP_30),
        p99: FLAT_P99,
    };
    let got = found(&trials(&shape, 100));
    let near = share(&got, |s| s <= 5.0);
    println!("planned ramp kept to, n = 100: ≤ 5 % of the phase {near:.3}");
    assert!(near >= 0.9, "{near}");
    let rate_only = detect(&simulate(&shape, 100, 1.0, 7));
    assert!(!matches!(
        rate_only,
        SteadyAfter::Steady {
            series: SteadySeries::Rate,
            ..
        }
    ));
}

#[test]
fn a_planned_rate_fallen_behind_at_first_settles_where_it_catches_up() {
    // Fixed at 1000/s; the cluster takes 800/s until 30 %, then keeps to the plan.
    let shape = Shape {
        rate: |f| if f < 0.3 { 800.0 } else { 1_000.0 },
        target: Some(FLAT),
        p99: FLAT_P99,
    };
    let got = found(&trials(&shape, 100));
    let near = share(&got, |s| (s - 30.0).abs() <= 2.0);
    println!("fixed rate reached at 30 %, n = 100: within ±2 intervals {near:.3}");
    assert!(near >= 0.8, "{near}");
}

#[test]
fn fewer_intervals_than_the_minimum_are_too_short_to_tell() {
    let shape = Shape {
        rate: FLAT,
        target: None,
        p99: FLAT_P99,
    };
    // The last interval is partial and dropped: MIN_POINTS - 1 whole ones.
    let s = simulate(&shape, MIN_POINTS - 1, 1.0, 1);
    assert_eq!(
        detect(&s),
        SteadyAfter::TooShort {
            points: MIN_POINTS - 1
        }
    );
    let s = simulate(&shape, MIN_POINTS, 1.0, 1);
    assert!(matches!(detect(&s), SteadyAfter::Steady { .. }));
}

#[test]
fn a_constant_series_is_steady_from_zero_and_the_drain_is_not_judged() {
    let mut s = simulate(
        &Shape {
            rate: FLAT,
            target: None,
            p99: FLAT_P99,
        },
        70,
        0.5,
        3,
    );
    for p in &mut s.points {
        p.acked = 500;
        p.ack_p50_ms = Some(4.0);
        p.ack_p99_ms = Some(20.0);
    }
    // A drain after the last send: acks trickle in, nothing is sent.
    for i in 0..20 {
        s.points.push(SeriesPoint {
            t_secs: (71 + i) as f64 * 0.5,
            span_secs: 0.5,
            acked: 3,
            ack_p99_ms: Some(900.0),
            ..SeriesPoint::default()
        });
    }
    assert_eq!(
        detect(&s),
        SteadyAfter::Steady {
            secs: 0.0,
            series: SteadySeries::Rate
        }
    );
}

#[test]
fn a_long_series_is_averaged_down_and_still_placed() {
    let shape = Shape {
        rate: RAMP_30,
        target: None,
        p99: FLAT_P99,
    };
    let s = simulate(&shape, 10_000, 0.1, 11);
    let secs = detect(&s).secs().expect("steady");
    // The ramp's last few per cent are within the noise, and its last 5 % below the floor a
    // departure must pass: found a little early (283 s of 1000).
    assert!((secs - 300.0).abs() <= 20.0, "{secs}");
}
