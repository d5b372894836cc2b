//! What a search found, in one line: the answer (`answer`, for tables and comparisons), and the
//! headline that says it in full (`headline`): how long the rate holds, what the short probes'
//! burst capacity is and what it carried, and whose capacity it is when the load generator was
//! busy at the probes that decided it.

use super::{generator_thread, trim};
use crate::format::{compact_rate as rate, human_duration, short};
use crate::measure::capacity::{CapacityFigures, Held, Limit, Probe, GENERATOR_BUSY};

/// Below this share of their target, the passing probes at the capacity are said to have
/// carried less than it (within `tolerance`, they still passed).
const CARRIED_SHORT: f64 = 0.99;

/// The short probes' answer: `48.2k/s (80%: 44k–51k/s)` with its reliability and band, `≥
/// 1M/s` when the upper bound passed, `none: …` when no rate passed, `no stable capacity: …`
/// when no rate was shown to reach the reliability, `not narrowed: …` when no band could be
/// claimed. With `hold`, the rate that holds comes first: `holds 310k/s; burst 388k/s (…)`.
pub(crate) fn answer(c: &CapacityFigures) -> String {
    let burst = short_answer(c);
    match &c.hold {
        Some(h) => format!("{}; burst {burst}", held_short(h.answer)),
        None => burst,
    }
}

fn short_answer(c: &CapacityFigures) -> String {
    if let (Some(_), Some(b)) = (c.not_narrowed, c.band) {
        return format!(
            "not narrowed: {}% between {} and {} after {} probes",
            trim(c.reliability * 100.0),
            short(b.low),
            rate(b.high),
            c.probes.len()
        );
    }
    if let Some(u) = c.unstable {
        return format!(
            "no stable capacity: SLO met in {} of {} probes between {} and {}",
            u.passes,
            u.probes,
            short(u.low),
            rate(u.high)
        );
    }
    match (c.capacity, c.probes.first()) {
        (Some(x), _) if c.limit == Limit::UpperBound => format!("≥ {}", rate(x)),
        (Some(x), _) => match c.band {
            Some(b) => format!(
                "{} ({}%: {}–{})",
                rate(x),
                trim(c.reliability * 100.0),
                short(b.low),
                rate(b.high)
            ),
            None => rate(x),
        },
        (None, Some(first)) => format!("none: every probe failed at {}", rate(first.target)),
        (None, None) => "none: no probe ran".into(),
    }
}

/// The long phase's answer, short.
fn held_short(h: Held) -> String {
    match h {
        Held::Holds { rate: r, .. } => format!("holds {}", rate(r)),
        Held::NotHeld { low, .. } => format!("holds none down to {}", rate(low)),
        Held::NothingToHold => "nothing to hold".into(),
        Held::Unfinished => "hold unfinished".into(),
    }
}

/// The answer in full: `holds 310k/s over 60s (3 of 4 probes of 60s met the SLO); bursts of
/// 8s: 388k/s (80%: 325k–404k/s), carried 386k/s`, and when kafkabench was busy at the
/// probes that decided it, that the capacity is this machine's, load generator included.
pub(crate) fn headline(c: &CapacityFigures) -> String {
    let mut s = match &c.hold {
        Some(h) => format!(
            "{}; bursts of {}: ",
            held_full(h.answer, h.secs, h.probes.len()),
            human_duration(c.probe_secs)
        ),
        None if c.probe_secs > 0.0 => {
            format!("burst of {} probes: ", human_duration(c.probe_secs))
        }
        None => String::new(),
    };
    s += &short_answer(c);
    if let Some(words) = carried(c) {
        s += &words;
    }
    if let Some(busy) = busy_at_answer(c) {
        s += &format!(
            "; this machine's capacity, load generator included ({busy} at the probes that \
             decided it)"
        );
    }
    s
}

/// The long phase's answer, with its probes.
fn held_full(h: Held, secs: f64, probes: usize) -> String {
    let len = human_duration(secs);
    match h {
        Held::Holds {
            rate: r,
            passes,
            probes,
        } => format!(
            "holds {} over {len} ({passes} of {probes} probes of {len} met the SLO)",
            rate(r)
        ),
        Held::NotHeld { high, low } => format!(
            "holds no rate over {len}: none from {} down to {} met the SLO in 3 of 4 probes",
            short(high),
            rate(low)
        ),
        Held::NothingToHold => format!("nothing to hold over {len}: no short probe passed"),
        Held::Unfinished => format!("hold over {len} unfinished after {probes} long probes"),
    }
}

/// `, carried 386k/s`, or when the passing probes at the capacity carried less than their
/// target, `, carried only 567/s: its passing probes acked 97% of their target`.
fn carried(c: &CapacityFigures) -> Option<String> {
    let (x, carried) = (c.capacity?, c.carried?);
    let share = carried / x;
    Some(if share < CARRIED_SHORT {
        format!(
            ", carried only {}: its passing probes acked {}% of their target",
            rate(carried),
            trim(share * 100.0)
        )
    } else {
        format!(", carried {}", rate(carried))
    })
}

/// The probes that decided the answer: those in its band (between the bracket's pass and
/// failure without one; at the highest pass when every probe passed).
fn deciding(c: &CapacityFigures) -> Vec<&Probe> {
    let (low, high) = match (c.band, c.bracket, c.unstable, c.capacity) {
        (Some(b), ..) => (b.low, b.high),
        (None, Some(b), ..) => (b.pass, b.fail),
        (None, None, Some(u), _) => (u.low, u.high),
        (None, None, None, Some(x)) => (x, x),
        _ => return Vec::new(),
    };
    c.probes
        .iter()
        .filter(|p| p.target >= low * (1.0 - 1e-9) && p.target <= high * (1.0 + 1e-9))
        .collect()
}

/// kafkabench's busiest thread at the probes that decided the answer, when it was on a CPU
/// at least [`GENERATOR_BUSY`] of the time: `sender thread 98%` (`shard 2's sender thread
/// 98%` when sharded).
fn busy_at_answer(c: &CapacityFigures) -> Option<String> {
    deciding(c)
        .into_iter()
        .filter_map(|p| p.result.generator)
        .filter_map(|g| generator_thread(&g).map(|t| (g.sender_busy.max(g.reader_busy), t)))
        .filter(|(busy, _)| *busy >= GENERATOR_BUSY)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::capacity::{Band, GeneratorLoad, HoldFigures};
    use crate::measure::RunResult;

    fn probe(target: f64, achieved: f64, sender_busy: f64) -> Probe {
        Probe {
            number: 1,
            target,
            trial: 1,
            achieved,
            pass: true,
            misses: Vec::new(),
            result: Box::new(RunResult {
                generator: Some(GeneratorLoad {
                    sender_busy,
                    ..GeneratorLoad::default()
                }),
                ..RunResult::default()
            }),
            secs: 0.0,
        }
    }

    fn search(probes: Vec<Probe>, carried: f64) -> CapacityFigures {
        CapacityFigures {
            capacity: Some(583.0),
            carried: Some(carried),
            reliability: 0.8,
            band: Some(Band {
                low: 573.0,
                high: 592.0,
            }),
            limit: Limit::Cluster,
            probe_secs: 3.0,
            probes,
            ..CapacityFigures::default()
        }
    }

    #[test]
    fn the_headline_says_the_burst_its_length_and_what_it_carried() {
        let c = search(vec![probe(580.0, 579.0, 0.2)], 582.0);
        assert_eq!(
            headline(&c),
            "burst of 3s probes: 583/s (80%: 573–592/s), carried 582/s"
        );
        // Passing probes that acked 97 % of their target: said so.
        let c = search(vec![probe(580.0, 563.0, 0.2)], 566.0);
        assert_eq!(
            headline(&c),
            "burst of 3s probes: 583/s (80%: 573–592/s), carried only 566/s: its passing probes \
             acked 97.1% of their target"
        );
    }

    #[test]
    fn a_busy_load_generator_at_the_deciding_probes_is_named_and_one_elsewhere_is_not() {
        // Busy only far below the band: not what decided the answer.
        let c = search(
            vec![probe(100.0, 100.0, 0.97), probe(580.0, 579.0, 0.3)],
            582.0,
        );
        assert!(!headline(&c).contains("load generator"), "{}", headline(&c));
        let c = search(vec![probe(580.0, 579.0, 0.98)], 582.0);
        assert!(
            headline(&c).ends_with(
                "; this machine's capacity, load generator included (sender thread 98% busy \
                 at the probes that decided it)"
            ),
            "{}",
            headline(&c)
        );
    }

    #[test]
    fn with_hold_the_rate_that_holds_comes_first() {
        let mut c = search(vec![probe(580.0, 579.0, 0.2)], 582.0);
        c.probe_secs = 8.0;
        c.hold = Some(HoldFigures {
            secs: 60.0,
            answer: Held::Holds {
                rate: 310_000.0,
                passes: 3,
                probes: 4,
            },
            probes: Vec::new(),
        });
        assert_eq!(
            headline(&c),
            "holds 310k/s over 60s (3 of 4 probes of 60s met the SLO); bursts of 8s: 583/s \
             (80%: 573–592/s), carried 582/s"
        );
        assert_eq!(answer(&c), "holds 310k/s; burst 583/s (80%: 573–592/s)");
    }
}
