//! The figures docs/results.md quotes, run by bench/changepoint.sh (ignored in CI: minutes):
//! pure noise in every figure of a series, one figure of pure noise, and one shift of 1σ, 2σ
//! and 3σ in 30–200 points. With `KB_CHANGEPOINT_EXPORT=FILE` every series and what this
//! search found in it are written as JSON lines, so bench/changepoint/otava_compare.py runs Apache
//! Otava on the very same series.

use std::io::Write;
use std::time::Instant;

use super::search_tests::{normal, shifted};
use super::*;
use crate::random::Rng;

fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Each point's one value.
fn single(points: &[Vec<f64>]) -> Vec<f64> {
    points.iter().map(|p| p[0]).collect()
}

/// `share (k of n, ± 2 SE)`
fn rate(k: usize, n: usize) -> String {
    let p = k as f64 / n as f64;
    let se = (p * (1.0 - p) / n as f64).sqrt();
    format!(
        "{:.2} % ({k} of {n}, ± {:.2} % at 2 SE)",
        p * 100.0,
        2.0 * se * 100.0
    )
}

#[test]
#[ignore = "minutes of simulation, run by bench/changepoint.sh"]
fn noise_and_shifts_for_the_record() {
    let mut export = std::env::var("KB_CHANGEPOINT_EXPORT")
        .ok()
        .map(|p| std::io::BufWriter::new(std::fs::File::create(p).expect("the export file")));
    let mut line = |v: serde_json::Value| {
        if let Some(out) = export.as_mut() {
            writeln!(out, "{v}").expect("written");
        }
    };
    let noise = count("KB_NOISE_SERIES", 5_000);
    // 0 leaves the shifts out (the longest part).
    let shifts = count("KB_SHIFT_SERIES", 500);

    // Every figure of a series pure noise: 8 figures (throughput, ack and e2e p50/p99/p999,
    // disk ratio: a run with a consumer), independent (Holm's worst case), 40 results of one
    // value, σ 5 % of the level; half searched on the log scale, as latencies are.
    let started = Instant::now();
    let (mut any, mut any_shown, mut any_alone) = (0, 0, 0);
    let mut rng = Rng::new(2026);
    for i in 0..noise {
        let figures: Vec<Vec<Vec<f64>>> = (0..8)
            .map(|_| {
                (0..40)
                    .map(|_| vec![100.0 + 5.0 * normal(&mut rng)])
                    .collect()
            })
            .collect();
        let inputs: Vec<Input> = (figures.iter().enumerate())
            .map(|(f, points)| Input {
                points,
                scale: if f % 2 == 1 {
                    Scale::Log
                } else {
                    Scale::Linear
                },
                seed: (i * 8 + f) as u64,
            })
            .collect();
        let s = Settings {
            min_effect: 0.0,
            ..Settings::default()
        };
        let found = family(&inputs, &s);
        let hit = found.iter().any(|f| !f.change_points.is_empty());
        any += usize::from(hit);
        // As `history` reports them by default: changes under the minimum effect held back.
        let shown = family(&inputs, &Settings::default());
        any_shown += usize::from(shown.iter().any(|f| !f.change_points.is_empty()));
        // Issue 37's search: each figure alone at α, 199 permutations.
        let alone = Settings {
            permutations: 199,
            ..s
        };
        any_alone += usize::from(
            (inputs.iter()).any(|input| !family(&[*input], &alone)[0].change_points.is_empty()),
        );
        let kb: Vec<Vec<usize>> = (found.iter())
            .map(|f| f.change_points.iter().map(|c| c.index).collect())
            .collect();
        let values: Vec<Vec<f64>> = figures.iter().map(|f| single(f)).collect();
        line(serde_json::json!({"case": "family", "n": 40, "figures": values, "kb": kb}));
    }
    let family_secs = started.elapsed().as_secs_f64();
    eprintln!(
        "pure noise, 8 figures × 40 results, α {ALPHA}: any change point in any figure in {} \
         (≥ {:.0} % at the default minimum effect: {}; each figure alone at α with 199 \
         permutations, as issue 37 searched: {}); {family_secs:.1} s for the three",
        rate(any, noise),
        MIN_EFFECT * 100.0,
        rate(any_shown, noise),
        rate(any_alone, noise),
    );

    // One figure of pure noise, 100 points (the figure for Otava's default).
    let started = Instant::now();
    let mut any = 0;
    let mut rng = Rng::new(7);
    for i in 0..noise {
        let points = shifted(&mut rng, 100, 1, 0, 0.0);
        let s = Settings {
            min_effect: 0.0,
            seed: i as u64,
            ..Settings::default()
        };
        let kb: Vec<usize> = change_points(&points, &s).iter().map(|c| c.index).collect();
        any += usize::from(!kb.is_empty());
        line(serde_json::json!({"case": "noise", "n": 100, "values": single(&points), "kb": kb}));
    }
    eprintln!(
        "pure noise, one figure × 100 results, α {ALPHA}: any change point in {}; {:.1} s",
        rate(any, noise),
        started.elapsed().as_secs_f64()
    );

    // One shift of k σ at a uniform position in the middle half: found alone within ±1, at
    // α (one figure) and at α/8 (the strongest of eight under Holm).
    let started = Instant::now();
    for n in [30, 50, 100, 200].into_iter().filter(|_| shifts > 0) {
        for k in [1.0, 2.0, 3.0] {
            let mut rng = Rng::new(n as u64 * 10 + k as u64);
            let (mut alone, mut alone8) = (0, 0);
            for i in 0..shifts {
                let at = n / 4 + (rng.next_f64() * (n / 2) as f64) as usize;
                let points = shifted(&mut rng, n, 1, at, k);
                let s = Settings {
                    min_effect: 0.0,
                    seed: i as u64,
                    ..Settings::default()
                };
                let kb: Vec<usize> = change_points(&points, &s).iter().map(|c| c.index).collect();
                let near = |found: &[usize]| found.len() == 1 && found[0].abs_diff(at) <= 1;
                alone += usize::from(near(&kb));
                let s8 = Settings {
                    alpha: ALPHA / 8.0,
                    ..s
                };
                let kb8: Vec<usize> = change_points(&points, &s8)
                    .iter()
                    .map(|c| c.index)
                    .collect();
                alone8 += usize::from(near(&kb8));
                line(serde_json::json!({
                    "case": "shift", "n": n, "sigmas": k, "at": at,
                    "values": single(&points), "kb": kb, "kb8": kb8,
                }));
            }
            eprintln!(
                "{k}σ shift, {n} points: alone within ±1 at α {:.1} %, at α/8 {:.1} % ({shifts} series)",
                alone as f64 / shifts as f64 * 100.0,
                alone8 as f64 / shifts as f64 * 100.0
            );
        }
    }
    eprintln!("shifts: {:.1} s", started.elapsed().as_secs_f64());
}
