//! The search against simulated systems whose pass probability is known: exact, noisy
//! (logistic), flat (no rate reliable), with a region that fails below the capacity, and with
//! the bounds reached. The figures these check are those the issue asks of a real broker:
//! 0.9 × C meets the SLO in ≥ 70 % of probes, 1.2 × C fails ≥ 30 %, two searches agree within
//! their bands.

use super::*;
use crate::measure::capacity::{search_settings, Answer, NARROWED};
use crate::random::Rng;

/// Runs a search to the end against `passes(rate, rng)` (canaries too); returns it and how
/// many probes it took, canaries not counted. Canaries draw from a stream of their own, so
/// that on a system without memory they leave the probes' draws (and each seed's search) as
/// they were.
fn drive(
    mut s: Search,
    rng: &mut Rng,
    mut passes: impl FnMut(f64, &mut Rng) -> bool,
) -> (Search, u32) {
    let (mut probes, mut steps) = (0, 0);
    let mut canary_rng = Rng::new(0xCA4A);
    loop {
        let ok = match s.next() {
            Step::Done => break,
            Step::Probe { rate, .. } => {
                probes += 1;
                passes(rate, rng)
            }
            Step::Canary { rate, .. } => passes(rate, &mut canary_rng),
        };
        steps += 1;
        assert!(steps < 1000, "the search does not end");
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
            Answer::Unstable { .. } | Answer::NotNarrowed { .. } => good += 1,
            other => panic!("seed {seed}: {other:?}"),
        }
    }
    eprintln!(
        "answered {answered} of {runs}; held at 0.9 C and not at 1.2 C (or unstable): {good}"
    );
    // The calibrated band is wide enough to cover as it says, so most searches of this curve
    // claim none (three in four in docs/results.md, "The band's coverage"; 42 of 60 here).
    assert!(answered >= runs / 4, "answered {answered} of {runs}");
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
        // A band not narrowed still places the capacity: it agrees with an answer inside it.
        let band = |a: Answer| match a {
            Answer::Capacity { rate, low, high } => Some((rate, low, high)),
            Answer::NotNarrowed {
                estimate,
                low,
                high,
                ..
            } => Some((estimate, low, high)),
            _ => None,
        };
        let (a1, a2) = (one.answer(), two.answer());
        match (band(a1), band(a2)) {
            (Some((r1, l1, h1)), Some((r2, l2, h2)))
                if (l2..=h2).contains(&r1) || (l1..=h1).contains(&r2) =>
            {
                agree += 1
            }
            _ if matches!((a1, a2), (Answer::Unstable { .. }, Answer::Unstable { .. })) => {
                agree += 1
            }
            _ => {}
        }
    }
    eprintln!("two searches agreed within their bands in {agree} of {pairs}");
    assert!(agree >= pairs * 17 / 20, "agreed in {agree} of {pairs}");
}

#[test]
fn where_no_rate_is_reliable_the_search_says_so() {
    // Met in 60 % of probes at every rate: no capacity is claimed — no stable capacity, or a
    // band not narrowed (the probes cannot rule out a flat curve).
    let (mut unstable, mut not_narrowed) = (0, 0);
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
            Answer::NotNarrowed { .. } => not_narrowed += 1,
            _ => {}
        }
    }
    eprintln!("no stable capacity said in {unstable} of 20, not narrowed in {not_narrowed}");
    assert!(
        unstable + not_narrowed >= 19,
        "{unstable} and {not_narrowed} of 20"
    );
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
fn a_failure_is_looked_above_once_by_half_a_doubling_and_never_doubled_past() {
    let s = search(1_000.0, 1_000_000.0, 0.05, 1);
    let (s, _) = drive(s, &mut Rng::new(1), |r, _| r < 3_000.0);
    // 1k, 2k pass; 4k fails, then 5.66k (4k × √2) fails and ends the bracket; each failure
    // is followed by a canary at 2k (the highest pass at or below half the failed rate).
    assert_eq!(
        &s.outcomes()[..4],
        [
            (1_000.0, true),
            (2_000.0, true),
            (4_000.0, false),
            (5_660.0, false)
        ]
    );
    assert!(
        s.outcomes().iter().all(|o| o.0 < 8_000.0),
        "{:?}",
        s.outcomes()
    );
    assert!(s.canaries()[..2]
        .iter()
        .all(|c| c.rate == 2_000.0 && c.pass));
    assert_eq!((s.canaries()[0].after, s.canaries()[1].after), (3, 4));
    let b = s.bracket().unwrap();
    assert!(b.pass >= 2_000.0 && b.fail <= 4_000.0, "{b:?}");
    assert!(s.non_monotone().is_empty());
    // A look above that passes: the failure was a fluke, and the bracket grows on from there;
    // the next failure ends it without a second look.
    let mut fluke = true;
    let (s, _) = drive(
        search(1_000.0, 1_000_000.0, 0.05, 1),
        &mut Rng::new(1),
        |r, _| !(r == 4_000.0 && std::mem::take(&mut fluke)) && r < 20_000.0,
    );
    let rates: Vec<f64> = s.outcomes().iter().map(|o| o.0).collect();
    assert_eq!(
        &rates[..6],
        [1_000.0, 2_000.0, 4_000.0, 5_660.0, 11_320.0, 22_640.0]
    );
    // The refinement may probe a little above the failure at 22.64k (one failure does not
    // close the band there), but never near twice it.
    assert!(rates[6..].iter().all(|&r| r < 1.5 * 22_640.0), "{rates:?}");
}

#[test]
fn no_probe_runs_above_the_first_overload_nor_at_twice_a_failed_rate() {
    // A quota's shape: latency fails from 490/s, and above 520/s the rate is not carried; 3 %
    // of probes below fail anyway.
    for seed in 0..20 {
        let mut s = search(100.0, 20_000.0, 0.05, 1);
        let mut rng = Rng::new(seed);
        let mut probed: Vec<(f64, Verdict)> = Vec::new();
        loop {
            let v = match s.next() {
                Step::Done => break,
                Step::Canary { .. } => Verdict::Pass,
                Step::Probe { rate, .. } if rate > 520.0 => Verdict::Overload,
                // Noisy near the edge, as a throttled client is.
                Step::Probe { rate, .. } if rate > 490.0 || rng.next_f64() < 0.03 => Verdict::Fail,
                Step::Probe { .. } => Verdict::Pass,
            };
            if let Step::Probe { rate, .. } = s.next() {
                probed.push((rate, v));
            }
            s.record(v);
        }
        for (i, &(rate, _)) in probed.iter().enumerate() {
            let before = &probed[..i];
            if let Some(o) = before.iter().find(|p| p.1 == Verdict::Overload) {
                assert!(
                    rate < o.0,
                    "seed {seed}: {rate} after the overload at {}: {probed:?}",
                    o.0
                );
            }
            // Twice a failed rate only once a rate above the failure passed: a fluke.
            for f in before.iter().filter(|p| p.1 != Verdict::Pass) {
                let fluke = before
                    .iter()
                    .any(|p| p.1 == Verdict::Pass && p.0 > f.0 && p.0 < rate);
                assert!(
                    rate < 2.0 * f.0 || fluke,
                    "seed {seed}: {rate} at twice {}: {probed:?}",
                    f.0
                );
            }
        }
    }
}

#[test]
fn a_lower_bound_that_fails_finds_no_capacity() {
    let s = search(10_000.0, 1_000_000.0, 0.02, 2);
    let (s, probes) = drive(s, &mut Rng::new(1), |r, _| r < 5_000.0);
    assert_eq!(s.answer(), Answer::NonePassed);
    assert_eq!(s.capacity(), None);
    assert_eq!(s.bracket(), None);
    // `from` and one doubling past it; no canary, since nothing passed.
    assert_eq!(probes, 2);
    assert!(s.canaries().is_empty());
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
            Answer::Unstable { .. } | Answer::NotNarrowed { .. } => good += 1,
            other => others.push(other),
        }
    }
    eprintln!("held at 0.9 C and not at 1.2 C (or unstable): {good} of {runs}; others {others:?}");
    assert!(good >= runs * 9 / 10, "{good} of {runs}: {others:?}");
}

/// A quiet machine with a hangover: the SLO holds up to near `c` (and fails now and then, a
/// 2 % lapse), and a probe that fails above 1.5 × `c` leaves the cluster failing whatever comes
/// next (probe or canary) for `hangover` more probes. The quiet machine's broker did this.
fn with_hangover(c: f64, hangover: u32) -> impl FnMut(f64, &mut Rng) -> bool {
    let mut left = 0;
    move |r, rng| {
        if left > 0 {
            left -= 1;
            return false;
        }
        let pass = rng.next_f64() >= 0.02 && rng.next_f64() < truth(c, 25.0, r);
        if !pass && r > 1.5 * c {
            left = hangover;
        }
        pass
    }
}

#[test]
fn canaries_keep_a_hangover_after_an_overload_from_pulling_the_capacity_down() {
    // The quiet machine's case after the lapse: 1024k and 1280k/s failed, then the next four
    // probes, 578k down to 182k/s, failed too, and the search answered 180k/s while 216k/s met
    // the SLO 10 of 10. A failure is followed by canaries until the cluster has recovered.
    let (c, runs) = (300_000.0, 60);
    let real = |r: f64| 0.98 * truth(c, 25.0, r);
    let held = |s: &Search| match s.answer() {
        Answer::Capacity { rate, .. } => real(0.9 * rate) >= 0.7 && real(1.2 * rate) <= 0.7,
        Answer::Unstable { .. } | Answer::NotNarrowed { .. } => true,
        _ => false,
    };
    let count = |canaries: u32| {
        (0..runs)
            .filter(|&seed| {
                let s = search(1_000.0, 1_280_000.0, 0.05, 1).with_canaries(canaries);
                held(&drive(s, &mut Rng::new(seed), with_hangover(c, 4)).0)
            })
            .count() as u64
    };
    let (without, with) = (count(0), count(CANARIES_AFTER_FAILURE));
    eprintln!("held at 0.9 C and not at 1.2 C (or unstable): {with} of {runs} with canaries, {without} without");
    assert!(with >= runs * 9 / 10, "{with} of {runs}");
}

#[test]
fn a_hangover_is_spent_on_canaries_not_on_probes() {
    // Passes up to 100k/s; a failure above 150k/s fails the next three calls whatever they are.
    let system = || {
        let mut left = 0;
        move |r: f64, _: &mut Rng| {
            if left > 0 {
                left -= 1;
                return false;
            }
            if r > 150_000.0 {
                left = 3;
            }
            r <= 100_000.0
        }
    };
    let s = search(1_000.0, 1_000_000.0, 0.05, 1);
    let (s, _) = drive(s, &mut Rng::new(1), system());
    let below = |s: &Search| {
        s.outcomes()
            .iter()
            .filter(|o| o.0 <= 100_000.0 && !o.1)
            .count()
    };
    assert_eq!(below(&s), 0, "{:?}", s.outcomes());
    assert!(s.canaries().iter().any(|c| !c.pass) && s.canaries().iter().any(|c| c.pass));
    let Answer::Capacity { low, high, .. } = s.answer() else {
        panic!("{:?}", s.answer())
    };
    assert!(
        low <= 100_000.0 * 1.05 && high >= 100_000.0 * 0.95,
        "{low}–{high}"
    );
    // Without canaries the same system fails probes below its edge.
    let s = search(1_000.0, 1_000_000.0, 0.05, 1).with_canaries(0);
    let (s, _) = drive(s, &mut Rng::new(1), system());
    assert!(below(&s) > 0, "{:?}", s.outcomes());
}

#[test]
fn canaries_are_bounded_and_are_not_outcomes() {
    // A cluster that never recovers: every probe after the first failure fails.
    let mut failed = false;
    let s = search(1_000.0, 1_000_000.0, 0.05, 1);
    let (s, probes) = drive(s, &mut Rng::new(1), |r, _| {
        failed |= r > 50_000.0;
        !failed
    });
    assert!(probes <= s.budget());
    assert_eq!(s.outcomes().len() as u32, probes);
    // At most five after one failure, and no more than the probe budget in all.
    let mut run = 0;
    for w in s.canaries().windows(2) {
        run = if w[0].after == w[1].after { run + 1 } else { 0 };
        assert!(run < CANARIES_AFTER_FAILURE);
    }
    assert!(s.canaries().len() as u32 <= s.budget());
    // 64k/s failed first: the canary is the highest pass at or below 32k/s, lower as lower
    // rates fail.
    assert_eq!(s.canaries()[0].rate, 32_000.0);
    assert!(s.canaries().iter().all(|c| c.rate <= 32_000.0 && !c.pass));
}

#[test]
fn a_band_wider_than_a_doubling_claims_no_capacity() {
    // A shallow curve (slope 1.5): 24 probes cannot narrow it to a doubling, and the answer
    // says so with the band instead of printing the fit's estimate as a capacity.
    let (mut not_narrowed, mut claimed) = (0, 0);
    for seed in 0..10 {
        let (s, _) = drive(
            search(1_000.0, 1_000_000.0, 0.05, 1),
            &mut Rng::new(seed),
            logistic(40_000.0, 1.5),
        );
        match s.answer() {
            Answer::NotNarrowed {
                estimate,
                low,
                high,
                ..
            } => {
                not_narrowed += 1;
                assert!(high / low > NARROWED && (low..=high).contains(&estimate));
                assert_eq!(s.capacity(), None);
                assert_eq!(s.bracket(), None);
            }
            Answer::Capacity { low, high, .. } => {
                claimed += 1;
                assert!(high / low <= NARROWED, "{low}–{high}");
            }
            _ => {}
        }
    }
    // The rest have a band open at one end (no stable capacity): none claims.
    eprintln!("not narrowed {not_narrowed} of 10, claimed {claimed}");
    assert!(not_narrowed >= 3, "not narrowed in {not_narrowed} of 10");
    assert!(claimed <= 1, "claimed in {claimed} of 10");
}

#[test]
fn an_overload_ends_the_bracket_and_is_not_probed_again() {
    // Carries up to 300k/s and fails on latency from 150k/s; a probe above 300k/s acks too
    // little. The bracket stops at the first overload instead of doubling past it, and no
    // overload is probed twice.
    let mut s = search(10_000.0, 10_000_000.0, 0.05, 1);
    let mut steps = 0;
    loop {
        let v = match s.next() {
            Step::Done => break,
            Step::Canary { .. } => Verdict::Pass,
            Step::Probe { rate, .. } if rate > 300_000.0 => Verdict::Overload,
            Step::Probe { rate, .. } if rate > 150_000.0 => Verdict::Fail,
            Step::Probe { .. } => Verdict::Pass,
        };
        s.record(v);
        steps += 1;
        assert!(steps < 1000);
    }
    let o = s.outcomes();
    assert!(o.iter().all(|o| o.0 <= 640_000.0), "{o:?}");
    for r in o.iter().filter(|o| o.0 > 300_000.0).map(|o| o.0) {
        assert_eq!(o.iter().filter(|x| x.0 == r).count(), 1, "{r}: {o:?}");
    }
}

#[test]
fn a_canary_runs_at_half_the_failed_rate_not_below_a_sporadic_failure() {
    // 16k/s failed once among passes (22.6k/s above it passed, and the bracket grew on from
    // there); later 1.28M/s (`to`) fails. The canary after it runs at the highest clean pass
    // at or below 640k/s, not at 8k/s (half the lowest failure).
    let mut s = search(1_000.0, 1_280_000.0, 0.05, 1);
    let mut canaries = Vec::new();
    loop {
        let v = match s.next() {
            Step::Done => break,
            Step::Canary { rate, .. } => {
                canaries.push(rate);
                true
            }
            Step::Probe { rate, trial, .. } => {
                !(rate == 16_000.0 && trial == 1) && rate < 1_000_000.0
            }
        };
        s.record(v);
        if canaries.len() >= 2 {
            break;
        }
    }
    assert_eq!(canaries, [8_000.0, 361_600.0]);
}
