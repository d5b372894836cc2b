use super::testing::{ks_distance, lognormal_cdf};
use super::*;

/// The critical KS distance at significance 0.001 for n draws (asymptotic: 1.95/√n).
fn ks_critical(n: usize) -> f64 {
    1.949 / (n as f64).sqrt()
}

fn draws(t: &SizeTable, seed: u64, n: usize) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| t.draw(&mut rng)).collect()
}

#[test]
fn the_alias_table_draws_every_bin_with_its_weight_exactly() {
    let bins: Vec<Bin> = [(1, 7u64), (2, 1), (5, 1000), (9, 3), (20, 0), (30, 250)]
        .iter()
        .map(|&(lo, weight)| Bin {
            lo,
            span: 1,
            weight,
        })
        .collect();
    let t = SizeTable::new(bins).unwrap();
    assert_eq!(t.bins().len(), 5, "the bin of no weight is dropped");
    // Each slot is 1/n of the draws: its own bin takes keep/2^64 of it, its alias the rest.
    let n = t.slots().len() as f64;
    let mut p = vec![0.0f64; t.bins().len()];
    for (i, s) in t.slots().iter().enumerate() {
        let own = s.keep as f64 / 2f64.powi(64);
        p[i] += own / n;
        p[s.alias as usize] += (1.0 - own) / n;
    }
    let total = 7.0 + 1.0 + 1000.0 + 3.0 + 250.0;
    for (b, got) in t.bins().iter().zip(&p) {
        assert!(
            (got - b.weight as f64 / total).abs() < 1e-15,
            "{b:?}: {got}"
        );
    }
}

#[test]
fn a_uniform_size_is_every_size_in_the_range_alike() {
    let t = SizeTable::uniform(100, 4096).unwrap();
    assert_eq!((t.smallest(), t.largest()), (100, 4096));
    assert_eq!(t.mean(), 2098.0);
    let mut s = draws(&t, 7, 100_000);
    assert!(s.iter().all(|x| (100..=4096).contains(x)));
    let d = ks_distance(&mut s, |k| ((k.clamp(99, 4096) - 99) as f64) / 3997.0);
    assert!(d < ks_critical(100_000), "KS {d}");
}

#[test]
fn lognormal_draws_follow_the_distribution_at_a_fixed_seed() {
    let (median, sigma) = (1024.0, 0.8);
    let t = SizeTable::lognormal(median, sigma, 1, LARGEST_PAYLOAD).unwrap();
    let mut s = draws(&t, 42, 100_000);
    let d = ks_distance(&mut s, |k| lognormal_cdf(median, sigma, k));
    assert!(d < ks_critical(100_000), "KS {d}");
    // The table's own figures are the distribution's: median, p99 = median·e^(2.326σ), and
    // the mean median·e^(σ²/2).
    assert!((t.quantile(0.5) as f64 / 1024.0 - 1.0).abs() < 0.005);
    let p99 = 1024.0 * (2.326_348 * sigma).exp();
    assert!(
        (t.quantile(0.99) as f64 / p99 - 1.0).abs() < 0.005,
        "{}",
        t.quantile(0.99)
    );
    let mean = 1024.0 * (sigma * sigma / 2.0).exp();
    assert!((t.mean() / mean - 1.0).abs() < 0.002, "{}", t.mean());
    // Its reach: the largest size with a mass above 2^-62, far below the 64 MiB clip.
    assert!(
        (500_000..2_000_000).contains(&t.largest()),
        "{}",
        t.largest()
    );
}

#[test]
fn a_lognormal_clip_draws_the_mass_beyond_it_at_the_clip() {
    let t = SizeTable::lognormal(1024.0, 0.8, 100, 4096).unwrap();
    assert_eq!((t.smallest(), t.largest()), (100, 4096));
    let s = draws(&t, 3, 100_000);
    let at_max = s.iter().filter(|&&x| x == 4096).count() as f64 / 1e5;
    let at_min = s.iter().filter(|&&x| x == 100).count() as f64 / 1e5;
    // P(X ≥ 4095.5) = P(Z ≥ ln(3.9995)/0.8) ≈ 4.16 %; P(X < 100.5) ≈ 0.19 %.
    let (want_max, want_min) = (
        upper_tail((4095.5f64 / 1024.0).ln() / 0.8),
        upper_tail(-(100.5f64 / 1024.0).ln() / 0.8),
    );
    assert!((at_max - want_max).abs() < 0.003, "{at_max} vs {want_max}");
    assert!((at_min - want_min).abs() < 0.001, "{at_min} vs {want_min}");
}

#[test]
fn choice_draws_pass_a_chi_square_test() {
    let t = SizeTable::from_shares(&[(100, 1, 0.70), (4096, 1, 0.25), (65536, 1, 0.05)]).unwrap();
    let s = draws(&t, 11, 100_000);
    let mut counts = [0f64; 3];
    for x in s {
        counts[match x {
            100 => 0,
            4096 => 1,
            65536 => 2,
            other => panic!("drew {other}"),
        }] += 1.0;
    }
    let chi2: f64 = counts
        .iter()
        .zip([0.70, 0.25, 0.05])
        .map(|(o, p)| (o - p * 1e5).powi(2) / (p * 1e5))
        .sum();
    // Two degrees of freedom: 13.82 at significance 0.001.
    assert!(chi2 < 13.82, "chi² {chi2}: {counts:?}");
    assert!((t.mean() - (70.0 + 0.25 * 4096.0 + 0.05 * 65536.0)).abs() < 1e-6);
}

#[test]
fn quantiles_and_the_cdf_agree() {
    let t = SizeTable::from_shares(&[(100, 1, 0.70), (4096, 1, 0.25), (65536, 1, 0.05)]).unwrap();
    assert_eq!(t.quantile(0.5), 100);
    assert_eq!(t.quantile(0.7), 100);
    assert_eq!(t.quantile(0.71), 4096);
    assert_eq!(t.quantile(0.99), 65536);
    assert!((t.cdf(99) - 0.0).abs() < 1e-12);
    assert!((t.cdf(4095) - 0.70).abs() < 1e-12);
    assert!((t.cdf(65536) - 1.0).abs() < 1e-12);
    let u = SizeTable::uniform(1, 100).unwrap();
    assert_eq!(u.quantile(0.5), 50);
    assert!((u.cdf(50) - 0.5).abs() < 1e-12);
}

#[test]
fn counts_too_large_for_exact_thresholds_keep_their_shares() {
    let big = u64::MAX / 3;
    let t = SizeTable::new(vec![
        Bin {
            lo: 10,
            span: 1,
            weight: big,
        },
        Bin {
            lo: 20,
            span: 1,
            weight: big,
        },
    ])
    .unwrap();
    assert!((t.cdf(10) - 0.5).abs() < 1e-12);
}

/// The draw is part of the worker protocol: these sizes are what every client must draw for
/// these seeds (clients/vectors/ carries them; a change here is a protocol change).
#[test]
fn the_draw_is_stable() {
    let u = SizeTable::uniform(100, 4096).unwrap();
    let l = SizeTable::lognormal(1024.0, 0.8, 1, LARGEST_PAYLOAD).unwrap();
    let mut rng = Rng::new(42);
    let got: Vec<usize> = (0..4).map(|_| u.draw(&mut rng)).collect();
    let mut rng = Rng::new(42);
    let got_l: Vec<usize> = (0..4).map(|_| l.draw(&mut rng)).collect();
    assert_eq!(got, STABLE_UNIFORM, "uniform");
    assert_eq!(got_l, STABLE_LOGNORMAL, "lognormal");
}

const STABLE_UNIFORM: [usize; 4] = [3351, 2449, 321, 3309];
const STABLE_LOGNORMAL: [usize; 4] = [1108, 2050, 393, 805];

#[test]
fn json_names_the_smallest_size_it_honours() {
    // `{"seq":` … `"}` with a 13-digit time and a 12-digit sequence, and the event's name.
    assert_eq!(json_smallest("order.created"), 100);
}
