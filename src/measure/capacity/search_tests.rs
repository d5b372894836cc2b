//! The search against simulated systems whose pass probability is known: exact, noisy
//! (logistic), flat (no rate reliable), with a region that fails below the capacity, and with
//! the bounds reached. The figures these check are those the issue asks of a real broker:
//! 0.9 × C meets the SLO in ≥ 70 % of probes, 1.2 × C fails ≥ 30 %, two searches agree within
//! their bands.

use super::*;
use crate::measure::capacity::search_settings;
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

fn search(from: f64, to: f64, precision: f64, trials: u32) -> Search {
    Search::new(&search_settings(from, to, precision, trials))
}

/// A system whose SLO holds with probability σ(logit(0.8) + b·ln(c / r)): 80 % at `c`.
fn logistic(c: f64, b: f64) -> impl Fn(f64, &mut Rng) -> bool {
    move |r, rng| {
        let z = 0.8f64.ln() - 0.2f64.ln() + b * (c / r).ln();
        rng.next_f64() < 1.0 / (1.0 + (-z).exp())
    }
}

/// The true pass probability of `logistic(c, b)` at `r`.
fn truth(c: f64, b: f64, r: f64) -> f64 {
    let z = 0.8f64.ln() - 0.2f64.ln() + b * (c / r).ln();
    1.0 / (1.0 + (-z).exp())
}

#[test]
fn an_exact_system_is_found_within_its_band_in_the_stated_probes() {
    for c in [1_500.0, 37_000.0, 123_456.0] {
        let s = search(1_000.0, 1_000_000.0, 0.05, 1);
        let (s, probes) = drive(s, &mut Rng::new(1), |r, _| r <= c);
        let Answer::Capacity { rate, low, high } = s.answer() else {
            panic!("{c}: {:?}", s.answer())
        };
        assert!(low <= c * 1.05 && c <= high * 1.05, "{c}: {low}–{high}");
        assert!((rate / c - 1.0).abs() < 0.1, "{c}: {rate}");
        assert!(probes <= search_settings(1_000.0, 1_000_000.0, 0.05, 1).max_probes());
        let b = s.bracket().unwrap();
        assert!(b.pass <= c && b.fail > c, "{b:?}");
    }
}

#[test]
fn on_a_noisy_system_the_answer_holds_at_nine_tenths_and_not_at_six_fifths() {
    // The check, on a simulated system: at 0.9 × C the SLO holds with ≥ 70 %, at
    // 1.2 × C with ≤ 70 %; or the search says no stable capacity.
    let (c, b) = (40_000.0, 10.0);
    let (mut good, mut answered, runs) = (0, 0, 60);
    for seed in 0..runs {
        let (s, _) = drive(
            search(2_000.0, 500_000.0, 0.05, 1),
            &mut Rng::new(seed),
            logistic(c, b),
        );
        match s.answer() {
            Answer::Capacity { rate, .. } => {
                answered += 1;
                if truth(c, b, 0.9 * rate) >= 0.7 && truth(c, b, 1.2 * rate) <= 0.7 {
                    good += 1;
                }
            }
            Answer::Unstable { .. } => good += 1,
            other => panic!("seed {seed}: {other:?}"),
        }
    }
    eprintln!(
        "answered {answered} of {runs}; held at 0.9 C and not at 1.2 C (or unstable): {good}"
    );
    assert!(answered >= runs * 2 / 3, "answered {answered} of {runs}");
    assert!(good >= runs * 9 / 10, "good {good} of {runs}");
}

#[test]
fn two_searches_of_one_noisy_system_agree_within_their_bands() {
    let (c, b) = (40_000.0, 10.0);
    let (mut agree, pairs) = (0, 40);
    for seed in 0..pairs {
        let one = drive(
            search(2_000.0, 500_000.0, 0.05, 1),
            &mut Rng::new(seed),
            logistic(c, b),
        )
        .0;
        let two = drive(
            search(2_000.0, 500_000.0, 0.05, 1),
            &mut Rng::new(seed + 1000),
            logistic(c, b),
        )
        .0;
        match (one.answer(), two.answer()) {
            (
                Answer::Capacity {
                    rate: r1,
                    low: l1,
                    high: h1,
                },
                Answer::Capacity {
                    rate: r2,
                    low: l2,
                    high: h2,
                },
            ) if (l2..=h2).contains(&r1) || (l1..=h1).contains(&r2) => agree += 1,
            (Answer::Unstable { .. }, Answer::Unstable { .. }) => agree += 1,
            _ => {}
        }
    }
    eprintln!("two searches agreed within their bands in {agree} of {pairs}");
    assert!(agree >= pairs * 17 / 20, "agreed in {agree} of {pairs}");
}

#[test]
fn where_no_rate_is_reliable_the_search_says_so() {
    // Met in 60 % of probes at every rate.
    let mut unstable = 0;
    for seed in 0..20 {
        let (s, probes) = drive(
            search(10_000.0, 200_000.0, 0.05, 1),
            &mut Rng::new(seed),
            |_, rng| rng.next_f64() < 0.6,
        );
        assert!(probes <= search_settings(10_000.0, 200_000.0, 0.05, 1).max_probes());
        match s.answer() {
            Answer::Unstable {
                passes,
                probes,
                low,
                high,
            } => {
                unstable += 1;
                assert!(passes < probes && low < high);
                assert_eq!(s.capacity(), None);
            }
            Answer::NonePassed => unstable += 1,
            _ => {}
        }
    }
    eprintln!("no stable capacity said in {unstable} of 20");
    assert!(unstable >= 18, "said so in {unstable} of 20");
}

#[test]
fn a_failing_region_below_the_capacity_is_reported_not_hidden() {
    // Fails between 25k and 40k/s (a resonance, a GC cycle), passes again up to 100k/s.
    let s = search(1_000.0, 1_000_000.0, 0.02, 1);
    let (s, _) = drive(s, &mut Rng::new(1), |r, _| {
        !(25_000.0..40_000.0).contains(&r) && r <= 100_000.0
    });
    let nm = s.non_monotone();
    let unstable = matches!(s.answer(), Answer::Unstable { .. });
    assert!(unstable || !nm.is_empty(), "{:?} {nm:?}", s.answer());
    assert!(s.outcomes().iter().any(|o| o.0 == 32_000.0 && !o.1));
}

#[test]
fn two_failures_in_a_row_end_the_bracket() {
    let s = search(1_000.0, 1_000_000.0, 0.05, 1);
    let (s, _) = drive(s, &mut Rng::new(1), |r, _| r < 3_000.0);
    // 1k, 2k pass; 4k and 8k fail; nothing above 8k was probed.
    assert!(s.outcomes().iter().all(|o| o.0 <= 8_000.0));
    let b = s.bracket().unwrap();
    assert!(b.pass >= 2_000.0 && b.fail <= 4_000.0, "{b:?}");
    assert!(s.non_monotone().is_empty());
}

#[test]
fn a_lower_bound_that_fails_finds_no_capacity() {
    let s = search(10_000.0, 1_000_000.0, 0.02, 2);
    let (s, probes) = drive(s, &mut Rng::new(1), |r, _| r < 5_000.0);
    assert_eq!(s.answer(), Answer::NonePassed);
    assert_eq!(s.capacity(), None);
    assert_eq!(s.bracket(), None);
    // `from` and one doubling past it.
    assert_eq!(probes, 2);
}

#[test]
fn an_upper_bound_that_passes_is_the_answer_and_says_so() {
    let s = search(1_000.0, 100_000.0, 0.02, 2);
    let (s, probes) = drive(s, &mut Rng::new(1), |_, _| true);
    assert_eq!(s.capacity(), Some(100_000.0));
    assert!(s.reached_upper_bound());
    // 1k … 64k and 100k, each twice.
    assert_eq!(probes, 2 * ((100.0f64).log(GROWTH).ceil() as u32 + 1));
}

#[test]
fn the_probe_budget_bounds_the_search() {
    let mut c = search_settings(1_000.0, 1_000_000.0, 0.01, 1);
    c.probes = 9;
    let (s, probes) = drive(Search::new(&c), &mut Rng::new(3), logistic(20_000.0, 3.0));
    assert_eq!(probes, 9);
    assert_eq!(s.outcomes().len(), 9);
}

#[test]
fn rates_are_probed_at_three_significant_digits() {
    assert_eq!(round3(41_234.5), 41_200.0);
    assert_eq!(round3(999.6), 1_000.0);
    assert_eq!(round3(1_000.0), 1_000.0);
}

/// A quiet machine's SLO: holds almost surely up to near `c`, fails steeply above it, and fails
/// now and then at any rate (a sporadic stall: `lapse` of probes).
fn with_outliers(c: f64, lapse: f64) -> impl Fn(f64, &mut Rng) -> bool {
    move |r, rng| rng.next_f64() >= lapse && rng.next_f64() < truth(c, 25.0, r)
}

#[test]
fn an_outlier_failure_below_the_edge_does_not_pull_the_capacity_down() {
    // The quiet machine's case: passes to 128k/s, failures from 256k/s, and a lone failure at
    // 140k/s among passes around it pulled a search to 137k/s while 1.2 × that met the SLO 10
    // of 10. With 5 % of probes failing at any rate, an answer must hold at 0.9 × C and fail
    // often enough at 1.2 × C (or say no stable capacity). Before the lapse and the second
    // probe of a lone failure: 40 of 60.
    let (c, lapse) = (200_000.0, 0.05);
    let real = |r: f64| (1.0 - lapse) * truth(c, 25.0, r);
    let (mut good, runs) = (0, 60);
    let mut others = Vec::new();
    for seed in 0..runs {
        let (s, _) = drive(
            search(1_000.0, 320_000.0, 0.05, 1),
            &mut Rng::new(seed),
            with_outliers(c, lapse),
        );
        match s.answer() {
            Answer::Capacity { rate, .. } if real(0.9 * rate) >= 0.7 && real(1.2 * rate) <= 0.7 => {
                good += 1
            }
            Answer::Unstable { .. } => good += 1,
            other => others.push(other),
        }
    }
    eprintln!("held at 0.9 C and not at 1.2 C (or unstable): {good} of {runs}; others {others:?}");
    assert!(good >= runs * 9 / 10, "{good} of {runs}: {others:?}");
}
