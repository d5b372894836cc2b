//! The capacity band's coverage with the search in the loop, over the grid of curves of issue
//! 50 (slopes 1.5, 3, 6 and 10; lapses 0 and 5 %): for each curve, whole searches until the
//! claims reach `--claims` (or the searches `--most`), and how often the claimed band covered
//! the true capacity. `bench/capacity-coverage.sh` runs it; the simulation itself is
//! `kafkabench::measure::capacity::coverage`.
//!
//!   cargo run --profile quick --example capacity_coverage -- [--claims 2000] [--most 60000]
//!       [--threads 2] [--cutoff K] [--floor F] [--min-slope S] [--steep C] [--seed 1]
//!       [--slopes 1.5,3,6,10] [--lapses 0,0.05] [--explore CUTOFFS:SLOPES:STEEPS]
//!       [--floors F1,F2] [--low-margin M] [--margins M1,M2]
//!
//! `--cutoff`, `--floor`, `--min-slope`, `--steep` and `--low-margin` replace the calibrated
//! band (`BandRule`): its deviance cutoff, its slope floor, the slope the probes must rule out
//! for a claim and by how much, and how much lower its low end is stated. `--floors` and
//! `--margins` answer every explored search again at each floor and margin too.
//!
//! `--explore 5,6,7:1.5,2:2.71,3.84` calibrates: each search runs once (with the band given, or
//! the calibrated one) and its final probes are answered again at every combination listed,
//! one CSV line per curve and combination (slope, lapse, floor, margin, cutoff, least slope,
//! steepness cutoff, searches, claims, covered, not narrowed). The search steers by a band of
//! its own (`STEERING_CUTOFF`, no floor, no margin), so a cutoff, a floor or a margin changes
//! what it claims, never its probes, and answering again is exactly running each; a least
//! slope also changes when it stops, so there it is close to running each.

use std::time::Instant;

use kafkabench::measure::capacity::coverage::{search_once, simulate_one, Curve, Tally};
use kafkabench::measure::capacity::logistic::LEVEL;
use kafkabench::measure::capacity::{Answer, BandRule};
use kafkabench::model::CapacitySearch;
use kafkabench::random::Rng;

/// Searches per batch: a batch is the unit a thread runs, seeded by its index.
const BATCH: u64 = 25;

struct Args {
    claims: u64,
    most: u64,
    threads: usize,
    band: Option<BandRule>,
    seed: u64,
    slopes: Vec<f64>,
    lapses: Vec<f64>,
    /// Cutoffs, least slopes and steepness cutoffs to answer every search again at.
    explore: Option<[Vec<f64>; 3]>,
    /// Slope floors to answer every search again at (`--floors`, with `--explore`).
    floors: Vec<f64>,
    /// Low-end margins to answer every search again at (`--margins`, with `--explore`).
    margins: Vec<f64>,
}

fn list(s: &str) -> Vec<f64> {
    s.split(',')
        .map(|x| x.trim().parse().expect("a number"))
        .collect()
}

fn args() -> Args {
    let mut a = Args {
        claims: 2000,
        most: 60_000,
        threads: 2,
        band: None,
        seed: 1,
        slopes: vec![1.5, 3.0, 6.0, 10.0],
        lapses: vec![0.0, 0.05],
        explore: None,
        floors: vec![0.0],
        margins: vec![BandRule::default().low_margin],
    };
    let (mut cutoff, mut min_slope, mut steep, mut floor, mut margin) =
        (None, None, None, None, None);
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().unwrap_or_else(|| panic!("{k} needs a value"));
        match k.as_str() {
            "--claims" => a.claims = v.parse().expect("a count"),
            "--most" => a.most = v.parse().expect("a count"),
            "--threads" => a.threads = v.parse().expect("a count"),
            "--cutoff" => cutoff = Some(v.parse().expect("a number")),
            "--min-slope" => min_slope = Some(v.parse().expect("a number")),
            "--steep" => steep = Some(v.parse().expect("a number")),
            "--floor" => floor = Some(v.parse().expect("a number")),
            "--seed" => a.seed = v.parse().expect("a number"),
            "--slopes" => a.slopes = list(&v),
            "--lapses" => a.lapses = list(&v),
            "--floors" => a.floors = list(&v),
            "--low-margin" => margin = Some(v.parse().expect("a number")),
            "--margins" => a.margins = list(&v),
            "--explore" => {
                let parts: Vec<Vec<f64>> = v.split(':').map(list).collect();
                let [k, s, c] = <[Vec<f64>; 3]>::try_from(parts).expect("CUTOFFS:SLOPES:STEEPS");
                a.explore = Some([k, s, c]);
            }
            _ => panic!("unknown argument {k}"),
        }
    }
    let given = [cutoff, min_slope, steep, floor, margin];
    if given.iter().any(Option::is_some) {
        let d = BandRule::default();
        a.band = Some(BandRule {
            cutoff: cutoff.unwrap_or(d.cutoff),
            min_slope: min_slope.unwrap_or(d.min_slope),
            steep_cutoff: steep.unwrap_or(d.steep_cutoff),
            floor: floor.unwrap_or(d.floor),
            low_margin: margin.unwrap_or(d.low_margin),
        });
    }
    a
}

/// The search of issue 50's simulation: the defaults (1k/s to 10M/s, 5 %, 80 %, 24 probes).
fn settings() -> CapacitySearch {
    CapacitySearch::default()
}

/// Batch `i` of a curve: its searches from its own seed, counted.
fn batch(a: &Args, curve: Curve, k: u64, i: u64) -> Tally {
    let mut rng = Rng::new(a.seed ^ (k << 48) ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut t = Tally::default();
    let s = settings();
    for _ in 0..BATCH {
        t.add(&search_once(&s, a.band, curve, 40_000.0, &mut rng));
    }
    t
}

/// Batches in waves of `threads`, added up in batch order until the claims reach the target:
/// the same figures however many threads ran them.
fn curve_tally(a: &Args, curve: Curve, k: u64) -> Tally {
    let mut total = Tally::default();
    let mut next = 0u64;
    while total.claims < a.claims && total.searches < a.most {
        let wave: Vec<Tally> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..a.threads as u64)
                .map(|t| s.spawn(move || batch(a, curve, k, next + t)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        next += a.threads as u64;
        for t in wave {
            if total.claims >= a.claims || total.searches >= a.most {
                break;
            }
            total.absorb(&t);
        }
    }
    total
}

/// `--explore`: every curve's searches, each answered at every combination; one CSV line per
/// curve and combination.
fn explore(a: &Args, [cutoffs, slopes, steeps]: &[Vec<f64>; 3]) {
    println!(
        "slope,lapse,floor,margin,cutoff,min_slope,steep_cutoff,searches,claims,covered,\
         not_narrowed"
    );
    // (floor, margin, cutoff, least slope, steepness cutoff)
    let combos: Vec<[f64; 5]> = a
        .floors
        .iter()
        .flat_map(|&f| a.margins.iter().map(move |&m| (f, m)))
        .flat_map(|(f, m)| {
            cutoffs.iter().flat_map(move |&k| {
                slopes
                    .iter()
                    .flat_map(move |&s| steeps.iter().map(move |&c| [f, m, k, s, c]))
            })
        })
        .collect();
    let mut k = 0;
    for &lapse in &a.lapses {
        for &slope in &a.slopes {
            k += 1;
            let curve = Curve { slope, lapse };
            let combos = &combos;
            // per combination: (claims, covered, not narrowed)
            let per_thread: Vec<Vec<(u64, u64, u64)>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..a.threads as u64)
                    .map(|t| {
                        s.spawn(move || {
                            let mut counts = vec![(0, 0, 0); combos.len()];
                            let mut rng = Rng::new(a.seed ^ (k << 48) ^ (t << 40));
                            for _ in 0..a.most / a.threads as u64 {
                                let sim =
                                    simulate_one(&settings(), a.band, curve, 40_000.0, &mut rng);
                                // One profile per floor, margin and least slope gives every
                                // cutoff's band.
                                let mut fits = Vec::new();
                                for &floor in &a.floors {
                                    for &low_margin in &a.margins {
                                        for &min_slope in slopes {
                                            let s = sim.search.clone().with_band(BandRule {
                                                min_slope,
                                                floor,
                                                low_margin,
                                                ..BandRule::default()
                                            });
                                            fits.push(s.fits(cutoffs));
                                        }
                                    }
                                }
                                for (i, &[floor, low_margin, cutoff, min_slope, steep_cutoff]) in
                                    combos.iter().enumerate()
                                {
                                    let band = BandRule {
                                        cutoff,
                                        min_slope,
                                        steep_cutoff,
                                        floor,
                                        low_margin,
                                    };
                                    let ki = cutoffs.iter().position(|&k| k == cutoff).unwrap();
                                    let fi = a.floors.iter().position(|&f| f == floor).unwrap();
                                    let mi =
                                        a.margins.iter().position(|&m| m == low_margin).unwrap();
                                    let si = slopes.iter().position(|&m| m == min_slope).unwrap();
                                    let at = (fi * a.margins.len() + mi) * slopes.len() + si;
                                    let fit = fits[at].as_ref().map(|f| f[ki]);
                                    let c = &mut counts[i];
                                    match sim.search.clone().with_band(band).answer_with(fit) {
                                        Answer::Capacity { low, high, .. } => {
                                            c.0 += 1;
                                            c.1 += u64::from(low <= sim.truth && sim.truth <= high);
                                        }
                                        Answer::NotNarrowed { .. } => c.2 += 1,
                                        _ => {}
                                    }
                                }
                            }
                            counts
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let searches = a.most / a.threads as u64 * a.threads as u64;
            for (i, [floor, margin, cut, least, steep]) in combos.iter().enumerate() {
                let (c, v, nn) = per_thread
                    .iter()
                    .fold((0, 0, 0), |m, t| (m.0 + t[i].0, m.1 + t[i].1, m.2 + t[i].2));
                println!(
                    "{slope},{lapse},{floor},{margin},{cut},{least},{steep},{searches},{c},{v},{nn}"
                );
            }
        }
    }
}

fn main() {
    let a = args();
    if let Some(e) = &a.explore {
        explore(&a, e);
        return;
    }
    let b = a.band.unwrap_or_default();
    println!(
        "band cutoff {}, slope floor {}, low end's margin {}, a claim rules out slopes up to {} \
         by {}; stated level {}%; claims per curve {} (at most {} searches); {} thread(s)",
        b.cutoff,
        b.floor,
        b.low_margin,
        b.min_slope,
        b.steep_cutoff,
        LEVEL * 100.0,
        a.claims,
        a.most,
        a.threads
    );
    println!();
    println!("| slope | lapse | searches | claimed | covered | not narrowed | other | probes per search | time |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let started = Instant::now();
    let mut k = 0;
    let mut worst: Option<f64> = None;
    for &lapse in &a.lapses {
        for &slope in &a.slopes {
            k += 1;
            let t0 = Instant::now();
            let t = curve_tally(&a, Curve { slope, lapse }, k);
            let share = |n: u64| 100.0 * n as f64 / t.searches.max(1) as f64;
            println!(
                "| {slope} | {}% | {} | {} ({:.1}%) | {:.1}% ({} of {}) | {:.1}% | {:.1}% | {:.1} | {:.0}s |",
                lapse * 100.0,
                t.searches,
                t.claims,
                share(t.claims),
                100.0 * t.coverage(),
                t.covered,
                t.claims,
                share(t.not_narrowed),
                share(t.other),
                t.probes as f64 / t.searches.max(1) as f64,
                t0.elapsed().as_secs_f64()
            );
            if t.claims > 0 {
                worst = Some(worst.map_or(t.coverage(), |w: f64| w.min(t.coverage())));
            }
        }
    }
    println!();
    println!(
        "lowest coverage over the curves: {}; {:.0}s in all",
        worst.map_or("no claims".into(), |w| format!("{:.1}%", 100.0 * w)),
        started.elapsed().as_secs_f64()
    );
}
