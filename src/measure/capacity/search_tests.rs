//! The search against simulated systems whose capacity is known: exact, noisy, with a region
//! that fails below the capacity, and with the bounds reached.

use super::*;
use crate::model::capacity::{CapacitySearch, GROWTH};
use crate::random::Rng;

/// Runs a search to the end against `passes(rate, rng)`; returns it and how many probes it took.
fn drive(mut s: Search, rng: &mut Rng, passes: impl Fn(f64, &mut Rng) -> bool) -> (Search, u32) {
    let mut probes = 0;
    while let Step::Probe { rate, .. } = s.next() {
        probes += 1;
        assert!(probes < 1000, "the search does not end");
        let ok = passes(rate, rng);
        s.record(ok);
    }
    (s, probes)
}

/// The bound `plan` shows, for the same settings.
fn bound(from: f64, to: f64, precision: f64, trials: u32) -> u32 {
    CapacitySearch {
        from,
        to,
        precision,
        probe: std::time::Duration::from_secs(1),
        warmup: std::time::Duration::ZERO,
        trials,
        budget: None,
        tolerance: 0.05,
        slo: vec![],
        span: Default::default(),
    }
    .max_probes()
}

#[test]
fn an_exact_system_is_found_within_the_precision_in_the_stated_probes() {
    for c in [1_500.0, 37_000.0, 123_456.0, 999_000.0] {
        for precision in [0.01, 0.02, 0.05] {
            let s = Search::new(1_000.0, 1_000_000.0, precision, 1);
            let (s, probes) = drive(s, &mut Rng::new(1), |r, _| r <= c);
            let found = s.capacity().unwrap();
            assert!(found <= c, "{found} above the true {c}");
            assert!(
                found * (1.0 + precision) >= c,
                "{found} not within {precision} of {c}"
            );
            let b = s.bracket().unwrap();
            assert!(b.fail / b.pass <= 1.0 + precision);
            assert!(probes <= bound(1_000.0, 1_000_000.0, precision, 1));
            assert!(s.non_monotone().is_empty() && s.noisy().is_empty());
        }
    }
}

#[test]
fn a_noisy_system_with_trials_stays_within_its_noise() {
    // A probe at r passes when r·(1 + u) < C, u uniform in ±4 %: certain below C/1.04,
    // impossible above C/0.96.
    let (c, noise, precision, trials) = (50_000.0, 0.04, 0.02, 3);
    for seed in 0..300 {
        let mut rng = Rng::new(seed);
        let s = Search::new(2_000.0, 500_000.0, precision, trials);
        let (s, probes) = drive(s, &mut rng, |r, rng| {
            let u = (rng.next_f64() * 2.0 - 1.0) * noise;
            r * (1.0 + u) < c
        });
        let found = s.capacity().unwrap();
        assert!(found < c / (1.0 - noise), "seed {seed}: {found}");
        assert!(
            found * (1.0 + precision) * (1.0 + noise) >= c,
            "seed {seed}: {found} too low"
        );
        assert!(probes <= bound(2_000.0, 500_000.0, precision, trials));
    }
}

#[test]
fn every_pass_counts_only_after_all_its_trials() {
    // Fails every third probe at any rate: no rate passes three in a row.
    let s = Search::new(1_000.0, 64_000.0, 0.05, 3);
    let n = std::cell::Cell::new(0u32);
    let (s, _) = drive(s, &mut Rng::new(1), |_, _| {
        n.set(n.get() + 1);
        n.get() % 3 != 0
    });
    assert_eq!(s.capacity(), None);
}

#[test]
fn a_failing_region_below_the_capacity_is_reported_not_hidden() {
    // Fails between 25k and 40k/s (a resonance, a GC cycle), passes again up to 100k/s.
    let s = Search::new(1_000.0, 1_000_000.0, 0.02, 1);
    let (s, _) = drive(s, &mut Rng::new(1), |r, _| {
        !(25_000.0..40_000.0).contains(&r) && r <= 100_000.0
    });
    let found = s.capacity().unwrap();
    assert!(found <= 100_000.0 && found * 1.02 >= 100_000.0, "{found}");
    let nm = s.non_monotone();
    assert_eq!(nm.len(), 1, "{nm:?}");
    assert_eq!(nm[0].failed, 32_000.0);
    assert_eq!(nm[0].passed, found);
}

#[test]
fn two_failures_in_a_row_end_the_bracket() {
    let s = Search::new(1_000.0, 1_000_000.0, 0.05, 1);
    let (s, _) = drive(s, &mut Rng::new(1), |r, _| r < 3_000.0);
    // 1k, 2k pass; 4k and 8k fail; nothing above 8k was probed.
    let b = s.bracket().unwrap();
    assert!(b.pass >= 2_000.0 && b.fail <= 4_000.0, "{b:?}");
    assert!(s.non_monotone().is_empty());
}

#[test]
fn a_lower_bound_that_fails_finds_no_capacity() {
    let s = Search::new(10_000.0, 1_000_000.0, 0.02, 2);
    let (s, probes) = drive(s, &mut Rng::new(1), |r, _| r < 5_000.0);
    assert_eq!(s.capacity(), None);
    assert_eq!(s.bracket(), None);
    // `from` and one doubling past it.
    assert_eq!(probes, 2);
}

#[test]
fn an_upper_bound_that_passes_is_the_answer_and_says_so() {
    let s = Search::new(1_000.0, 100_000.0, 0.02, 2);
    let (s, probes) = drive(s, &mut Rng::new(1), |_, _| true);
    assert_eq!(s.capacity(), Some(100_000.0));
    assert!(s.reached_upper_bound());
    assert!(probes <= bound(1_000.0, 100_000.0, 0.02, 2));
    // 1k … 64k and 100k, each twice.
    assert_eq!(probes, 2 * ((100.0f64).log(GROWTH).ceil() as u32 + 1));
}

#[test]
fn a_boundary_failure_that_passes_its_rechecks_is_reported_as_noise() {
    // The first probe at the lowest failing rate fails; every other probe passes below 60k.
    let failed_once = std::cell::Cell::new(false);
    let s = Search::new(1_000.0, 1_000_000.0, 0.05, 3);
    let (s, _) = drive(s, &mut Rng::new(1), |r, _| {
        if r >= 60_000.0 {
            return false;
        }
        if (32_000.0..60_000.0).contains(&r) && !failed_once.get() {
            failed_once.set(true);
            return false;
        }
        true
    });
    // 32k failed its first probe: the search bisected below it, then probed 32k again.
    assert_eq!(s.noisy(), vec![32_000.0]);
    let found = s.capacity().unwrap();
    assert!(found < 32_000.0, "{found}");
}

#[test]
fn bisections_halve_the_bracket_in_log_space() {
    assert_eq!(crate::model::bisections(2.0, 0.02), 6);
    assert_eq!(crate::model::bisections(2.0, 0.05), 4);
    assert_eq!(crate::model::bisections(1.01, 0.02), 0);
}
