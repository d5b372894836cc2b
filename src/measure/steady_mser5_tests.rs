//! The heuristic against MSER-5 as published, on the same simulated series: flat runs, warm-ups
//! of known length (ramps, a step, a latency decaying to its level) and a trend through the
//! whole run. Each answer is right (within max(2 intervals, 5 % of the phase) of the known
//! start; for a trend, never steady), never steady when it was, or early or late. The
//! heuristic is kept because it is right more often (docs/results.md quotes the table; run
//! with `--nocapture` to see it).

use super::tests::Ar1;
use super::*;

const RUNS: u64 = 200;

/// MSER-5 as published (White 1997; White, Cobb & Spratt 2000; Franklin & White 2008): the
/// series cut into batch means of 5 from its start, Z_1 … Z_k (a partial last batch dropped);
/// the truncation d* (in batches) minimises MSER(d) = Σ_{j>d} (Z_j − Z̄_d)² / (k − d)² over
/// 0 ≤ d ≤ k − 2 (two batches at least: with one the statistic is 0 by construction, the
/// earliest of equal minima); a d* past the middle (d* > k/2) says the series had not reached
/// steady state.
fn mser5_published(x: &[f64]) -> Option<Truncation> {
    let k = x.len() / BATCH;
    if k < 4 {
        return None;
    }
    let z: Vec<f64> = (0..k)
        .map(|j| x[j * BATCH..(j + 1) * BATCH].iter().sum::<f64>() / BATCH as f64)
        .collect();
    let (mut sum, mut sum_sq) = (0.0, 0.0);
    let mut stats = vec![0.0; k - 1];
    for d in (0..k).rev() {
        sum += z[d];
        sum_sq += z[d] * z[d];
        let m = (k - d) as f64;
        if d <= k - 2 {
            stats[d] = (sum_sq - sum * sum / m).max(0.0) / (m * m);
        }
    }
    let best = (0..stats.len()).fold(0, |b, d| if stats[d] < stats[b] { d } else { b });
    Some(if best > k / 2 {
        Truncation::Never
    } else {
        Truncation::At(best * BATCH)
    })
}

/// A case: `n` intervals whose level at fraction f of the phase is `level(f)`, with 3 % AR(1)
/// noise on a rate (or 15 % log-normal on a latency, judged on its log scale); the known start
/// of the steady state as a fraction of the phase, None for a series that never settles.
struct Case {
    name: &'static str,
    n: usize,
    level: fn(f64) -> f64,
    latency: bool,
    start: Option<f64>,
}

const CASES: &[Case] = &[
    Case {
        name: "flat",
        n: 60,
        level: |_| 1000.0,
        latency: false,
        start: Some(0.0),
    },
    Case {
        name: "flat",
        n: 100,
        level: |_| 1000.0,
        latency: false,
        start: Some(0.0),
    },
    Case {
        name: "flat",
        n: 300,
        level: |_| 1000.0,
        latency: false,
        start: Some(0.0),
    },
    Case {
        name: "ramp 20 → 100 % over the first 30 %",
        n: 60,
        level: |f| 1000.0 * (0.2 + 0.8 * (f / 0.3).min(1.0)),
        latency: false,
        start: Some(0.3),
    },
    Case {
        name: "ramp 20 → 100 % over the first 30 %",
        n: 100,
        level: |f| 1000.0 * (0.2 + 0.8 * (f / 0.3).min(1.0)),
        latency: false,
        start: Some(0.3),
    },
    Case {
        name: "ramp 20 → 100 % over the first 30 %",
        n: 300,
        level: |f| 1000.0 * (0.2 + 0.8 * (f / 0.3).min(1.0)),
        latency: false,
        start: Some(0.3),
    },
    Case {
        name: "80 % for the first 20 %, then 100 %",
        n: 100,
        level: |f| if f < 0.2 { 800.0 } else { 1000.0 },
        latency: false,
        start: Some(0.2),
    },
    Case {
        name: "latency 10× decaying to its level by 40 %",
        n: 100,
        level: |f| 20.0 * (1.0 + 9.0 * (1.0 - f / 0.4).max(0.0)),
        latency: true,
        start: Some(0.4),
    },
    Case {
        name: "trend through the whole run (+100 %)",
        n: 100,
        level: |f| 1000.0 * (0.5 + f),
        latency: false,
        start: None,
    },
];

/// The series of `case` with noise from `seed`, as the rule reads it (a latency's logarithm).
fn series(case: &Case, seed: u64) -> Vec<f64> {
    let mut noise = Ar1::new(seed);
    (0..case.n)
        .map(|i| {
            let level = (case.level)(i as f64 / case.n as f64);
            if case.latency {
                (level * (0.15 * noise.next()).exp()).ln()
            } else {
                level * (1.0 + 0.03 * noise.next())
            }
        })
        .collect()
}

/// How an answer compares with the known start.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    right: u32,
    never: u32,
    early: u32,
    late: u32,
}

impl Tally {
    fn add(&mut self, case: &Case, got: Option<Truncation>) {
        let tol = 2f64.max(0.05 * case.n as f64);
        match (case.start, got) {
            (None, Some(Truncation::Never)) => self.right += 1,
            (None, _) => self.early += 1, // called steady: a transient taken for the level
            (Some(_), None | Some(Truncation::Never)) => self.never += 1,
            (Some(s), Some(Truncation::At(d))) => {
                let want = s * case.n as f64;
                let d = d as f64;
                if (d - want).abs() <= tol {
                    self.right += 1;
                } else if d < want {
                    self.early += 1;
                } else {
                    self.late += 1;
                }
            }
        }
    }

    fn shown(&self) -> String {
        let pct = |k: u32| k as f64 / RUNS as f64 * 100.0;
        format!(
            "right {:5.1} %  never {:5.1} %  early {:5.1} %  late {:5.1} %",
            pct(self.right),
            pct(self.never),
            pct(self.early),
            pct(self.late)
        )
    }
}

#[test]
fn the_heuristic_is_right_more_often_than_published_mser5_on_the_same_series() {
    let (mut ours_right, mut theirs_right) = (0, 0);
    let mut flat_100 = (Tally::default(), Tally::default());
    for case in CASES {
        let (mut ours, mut theirs) = (Tally::default(), Tally::default());
        for seed in 0..RUNS {
            let x = series(case, seed);
            // The floor the detector gives each kind of series.
            let floor = if case.latency {
                1.1f64.ln()
            } else {
                0.05 * x.iter().sum::<f64>() / x.len() as f64
            };
            ours.add(case, truncation(&x, floor));
            theirs.add(case, mser5_published(&x));
        }
        println!("{} ({} intervals):", case.name, case.n);
        println!("  heuristic  {}", ours.shown());
        println!("  MSER-5     {}", theirs.shown());
        ours_right += ours.right;
        theirs_right += theirs.right;
        if case.name == "flat" && case.n == 100 {
            flat_100 = (ours, theirs);
        }
    }
    let cases = RUNS as u32 * CASES.len() as u32;
    println!(
        "right over every case: heuristic {:.1} %, MSER-5 {:.1} %",
        ours_right as f64 / cases as f64 * 100.0,
        theirs_right as f64 / cases as f64 * 100.0
    );
    assert!(ours_right > theirs_right, "{ours_right} vs {theirs_right}");
    // The published rule's failure on short flat series, which the heuristic is built to avoid.
    let (ours, theirs) = flat_100;
    assert!(theirs.never > RUNS as u32 / 3, "{theirs:?}");
    assert!(ours.right >= RUNS as u32 * 8 / 10, "{ours:?}");
}

#[test]
fn published_mser5_reads_a_clean_step_where_it_is() {
    // Sanity of the reference: no noise, a step at batch 6 of 20.
    let x: Vec<f64> = (0..100).map(|i| if i < 30 { 0.0 } else { 1.0 }).collect();
    assert_eq!(mser5_published(&x), Some(Truncation::At(30)));
    let x: Vec<f64> = (0..100).map(|i| i as f64).collect();
    assert_eq!(mser5_published(&x), Some(Truncation::Never));
}
