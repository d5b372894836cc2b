//! A capacity search in words: the capacity, what limited it, each probe's figures and why it
//! failed. The one place these become text, for the terminal (`write`, after the table) and
//! the HTML page (`html/capacity.rs`) alike.

mod headline;
mod table;

pub(crate) use headline::{answer, headline};
pub(crate) use table::{write, ProbeColumns};

use crate::format::{compact_rate as rate, short};
use crate::format::{human_duration, plural};
use crate::measure::capacity::{CapacityFigures, GeneratorLoad, Miss, Probe, ReaderBehind};
use crate::model::Unit;

/// A latency held in milliseconds, to three significant digits like the rates (`13.8ms`,
/// `1.13s`), `-` when nothing was recorded.
pub(crate) fn latency(ms: f64) -> String {
    if !(ms > 0.0 && ms.is_finite()) {
        "-".into()
    } else if ms >= 999.5 {
        short(ms / 1e3) + "s"
    } else if ms >= 1.0 {
        short(ms) + "ms"
    } else {
        human_duration(ms / 1e3)
    }
}

/// The highest pass and the lowest failure above it: `47.5k–50k/s`.
pub(crate) fn bracket(c: &CapacityFigures) -> String {
    c.bracket.map_or("-".into(), |b| {
        format!("{}–{}", short(b.pass), rate(b.fail))
    })
}

/// One reason a probe at `target` failed, with its figures.
pub(crate) fn miss(m: &Miss, target: f64) -> String {
    match m {
        Miss::Rate { achieved, least } => {
            let share = if target > 0.0 {
                format!(" ({}% of the target)", trim(least / target * 100.0))
            } else {
                String::new()
            };
            format!("acked {}, under {}{share}", rate(*achieved), rate(*least))
        }
        Miss::Slip {
            behind_secs,
            allowed_secs,
        } => format!(
            "sending fell {} behind (allowed {})",
            human_duration(*behind_secs),
            human_duration(*allowed_secs)
        ),
        Miss::Failed { records } => {
            format!("{records} record{} failed", plural(*records as usize))
        }
        Miss::Lag { growth, allowed } => {
            format!("lag grew {} (allowed {})", rate(*growth), rate(*allowed))
        }
        Miss::Slo {
            condition,
            measured,
            unit,
            ..
        } => {
            let shown = measured.map_or("not measured".into(), |x| value(x, *unit));
            format!("{condition}: {shown}")
        }
        Miss::Incomplete { reason } => format!("cut short: {reason}"),
        Miss::Unsteady { series } => {
            format!("{} still trending at the end: never steady", series.words())
        }
    }
}

/// A value in base units, for its unit.
fn value(x: f64, unit: Option<Unit>) -> String {
    match unit {
        Some(Unit::Duration) => human_duration(x),
        Some(Unit::Rate) => rate(x),
        Some(Unit::ByteRate) => format!("{}/s", crate::format::human_bytes(x)),
        Some(Unit::Size) => crate::format::human_bytes(x),
        Some(Unit::Number) | None => trim(x),
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.1}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// kafkabench's own load when it had no CPU to spare.
pub(crate) fn generator(g: &GeneratorLoad) -> String {
    let whose = g
        .shard
        .map_or_else(String::new, |k| format!(" (shard {k})"));
    let mut s = format!(
        "load generator{whose} busy: sender thread {:.0}%",
        g.sender_busy * 100.0
    );
    if g.reader_busy > 0.0 {
        s += &format!(", reader thread {:.0}%", g.reader_busy * 100.0);
    }
    if g.cores > 0 {
        s += &format!(
            ", process {} of {} core{}",
            trim(g.process_cores),
            g.cores,
            plural(g.cores as usize)
        );
    }
    s
}

/// kafkabench's busiest thread (sender or reader): `sender thread 98% busy`, `shard 2's
/// reader thread 95% busy`; None when neither was measured.
pub(crate) fn generator_thread(g: &GeneratorLoad) -> Option<String> {
    let (name, busy) = if g.reader_busy > g.sender_busy {
        ("reader", g.reader_busy)
    } else {
        ("sender", g.sender_busy)
    };
    let whose = g
        .shard
        .map_or_else(String::new, |k| format!("shard {k}'s "));
    (busy > 0.0).then(|| format!("{whose}{name} thread {:.0}% busy", busy * 100.0))
}

/// kafkabench's reader behind, and why.
pub(crate) fn reader(b: &ReaderBehind) -> String {
    match *b {
        ReaderBehind::Thread { busy } => format!(
            "kafkabench's reader fell behind: its thread was on a CPU {:.0}% of the time",
            busy * 100.0
        ),
        ReaderBehind::QueueFull {
            samples,
            waited_secs,
        } => format!(
            "kafkabench's reader fell behind: its fetch queue was full in {samples} statistics              sample{} (librdkafka stops fetching then), records waited up to {} in it",
            plural(samples as usize),
            human_duration(waited_secs)
        ),
        ReaderBehind::Queue { waited_secs } => format!(
            "kafkabench's reader fell behind: records waited up to {} in its own queue",
            human_duration(waited_secs)
        ),
    }
}

/// Everything to say about a probe: each miss, and a busy load generator (pass or fail: a
/// pass it measured is a pass of kafkabench as much as of the cluster).
pub(crate) fn reasons(p: &Probe) -> Vec<String> {
    let mut out: Vec<String> = p.misses.iter().map(|m| miss(m, p.target)).collect();
    if let Some(b) = p.result.generator.and_then(|g| g.reader_behind()) {
        out.push(reader(&b));
    }
    if let Some(g) = p
        .result
        .generator
        .filter(|g| g.saturated() || g.reader_saturated())
    {
        out.push(generator(&g));
    }
    out
}

/// The search's caveats: passes above failures, rates whose trials disagreed.
pub(crate) fn notes(c: &CapacityFigures) -> Vec<String> {
    let mut out: Vec<String> = c
        .non_monotone
        .iter()
        .map(|n| {
            format!(
                "{} passed above {}, which failed: the result is not monotone",
                rate(n.passed),
                rate(n.failed)
            )
        })
        .collect();
    out.extend(
        c.noisy
            .iter()
            .map(|r| format!("{}: trials disagreed", rate(*r))),
    );
    out.extend(recoveries(c));
    let level = trim(crate::measure::capacity::logistic::LEVEL * 100.0);
    match (c.not_narrowed, c.band) {
        (Some(n), Some(b)) if c.shallow.is_some() => out.push(format!(
            "the capacity was not narrowed: the probes cannot rule out a curve shallower than \
             {} per unit of ln rate, on which a {level}% band {}–{} would not cover as it says \
             (the fit's estimate is {}); more `probes`, or `trials`, show whether it is that \
             shallow",
            trim(crate::measure::capacity::logistic::MIN_SLOPE),
            short(b.low),
            rate(b.high),
            rate(n.estimate)
        )),
        (Some(n), Some(b)) => out.push(format!(
            "the capacity was not narrowed: its {level}% band {}–{} spans more than a doubling \
             (the fit's estimate is {}); more `probes`, or longer ones, narrow it",
            short(b.low),
            rate(b.high),
            rate(n.estimate)
        )),
        _ => {}
    }
    out
}

/// The canaries after each failed probe that did not recover at the first: how long the
/// cluster took to recover, or that it had not (the next probe then ran on it anyway).
fn recoveries(c: &CapacityFigures) -> Vec<String> {
    let mut out = Vec::new();
    for group in c.canaries.chunk_by(|a, b| a.after == b.after) {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let secs: f64 = group.iter().map(|k| k.secs).sum();
        let n = group.len();
        if last.pass && n == 1 {
            continue;
        }
        out.push(if last.pass {
            format!(
                "after probe {} failed, canaries at {} failed {} time{} before the cluster recovered ({})",
                first.after,
                rate(first.target),
                n - 1,
                plural(n - 1),
                human_duration(secs.round())
            )
        } else {
            format!(
                "after probe {} failed, {n} canar{} at {} failed ({}): the cluster was not seen to recover",
                first.after,
                if n == 1 { "y" } else { "ies" },
                rate(first.target),
                human_duration(secs.round())
            )
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_have_three_significant_digits() {
        let cases = [
            (48_213.0, "48.2k/s"),
            (1_000_000.0, "1M/s"),
            (999_999.0, "1M/s"),
            (98_000.0, "98k/s"),
            (512.0, "512/s"),
            (12.5, "12.5/s"),
            (125_000.0, "125k/s"),
            (1_250_000.0, "1.25M/s"),
            (0.0, "0/s"),
        ];
        for (r, s) in cases {
            assert_eq!(rate(r), s, "{r}");
        }
    }

    #[test]
    fn a_slow_recovery_is_noted_and_a_prompt_one_is_not() {
        let canary = |after, pass| crate::measure::capacity::CanaryRun {
            after,
            target: 1000.0,
            pass,
            misses: Vec::new(),
            secs: 4.0,
        };
        let c = CapacityFigures {
            canaries: vec![
                canary(3, true),
                canary(7, false),
                canary(7, false),
                canary(7, true),
                canary(9, false),
            ],
            ..CapacityFigures::default()
        };
        assert_eq!(
            notes(&c),
            [
                "after probe 7 failed, canaries at 1k/s failed 2 times before the cluster recovered (12s)",
                "after probe 9 failed, 1 canary at 1k/s failed (4s): the cluster was not seen to recover",
            ]
        );
    }

    #[test]
    fn a_band_not_narrowed_is_said_without_a_capacity() {
        let c = CapacityFigures {
            reliability: 0.8,
            band: Some(crate::measure::capacity::Band {
                low: 128_082.0,
                high: 518_697.0,
            }),
            not_narrowed: Some(crate::measure::capacity::NotNarrowed {
                estimate: 298_379.0,
            }),
            ..CapacityFigures::default()
        };
        assert_eq!(
            headline(&c),
            "not narrowed: 80% between 128k and 519k/s after 0 probes"
        );
        assert_eq!(
            notes(&c),
            [
                "the capacity was not narrowed: its 95% band 128k–519k/s spans more than a \
              doubling (the fit's estimate is 298k/s); more `probes`, or longer ones, narrow it"
            ]
        );
    }

    #[test]
    fn latencies_have_three_significant_digits() {
        let cases = [
            (13.79, "13.8ms"),
            (599.26, "599ms"),
            (999.6, "1s"),
            (1130.0, "1.13s"),
            (7.67, "7.67ms"),
            (0.25, "250µs"),
            (0.0, "-"),
        ];
        for (ms, s) in cases {
            assert_eq!(latency(ms), s, "{ms}");
        }
    }

    #[test]
    fn every_miss_says_its_figures_with_their_units() {
        let cases = [
            (
                Miss::Rate {
                    achieved: 41_200.0,
                    least: 47_500.0,
                },
                "acked 41.2k/s, under 47.5k/s (95% of the target)",
            ),
            (
                Miss::Slo {
                    condition: "e2e.p99 < 20ms".into(),
                    measured: Some(0.0312),
                    bound: Some(0.02),
                    unit: Some(Unit::Duration),
                    read_side: true,
                },
                "e2e.p99 < 20ms: 31.2ms",
            ),
            (
                Miss::Slo {
                    condition: "e2e.p99 < 20ms".into(),
                    measured: None,
                    bound: Some(0.02),
                    unit: Some(Unit::Duration),
                    read_side: true,
                },
                "e2e.p99 < 20ms: not measured",
            ),
            (
                Miss::Slip {
                    behind_secs: 1.3,
                    allowed_secs: 0.5,
                },
                "sending fell 1.3s behind (allowed 500ms)",
            ),
            (Miss::Failed { records: 3 }, "3 records failed"),
            (Miss::Failed { records: 1 }, "1 record failed"),
            (
                Miss::Lag {
                    growth: 2_100.0,
                    allowed: 2_500.0,
                },
                "lag grew 2.1k/s (allowed 2.5k/s)",
            ),
            (
                Miss::Incomplete {
                    reason: "interrupted".into(),
                },
                "cut short: interrupted",
            ),
        ];
        for (m, words) in cases {
            assert_eq!(miss(&m, 50_000.0), words);
        }
    }

    #[test]
    fn a_busy_generator_is_said_with_its_thread_and_its_cores() {
        let g = GeneratorLoad {
            reader_busy: 0.0,
            sender_busy: 0.97,
            process_cores: 1.8,
            cores: 2,
            ..GeneratorLoad::default()
        };
        assert_eq!(
            generator(&g),
            "load generator busy: sender thread 97%, process 1.8 of 2 cores"
        );
        // A merged run's: the shard whose machine it was.
        let sharded = GeneratorLoad {
            shard: Some(2),
            ..g
        };
        assert_eq!(
            generator(&sharded),
            "load generator (shard 2) busy: sender thread 97%, process 1.8 of 2 cores"
        );
    }
}
