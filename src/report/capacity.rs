//! A capacity search in words: the capacity, what limited it, each probe's figures and why it
//! failed. The one place these become text, for the terminal (`write`, after the table) and
//! the HTML page (`html/capacity.rs`) alike.

use std::io::{self, Write};

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style, Width};

use crate::format::{compact_rate as rate, short};
use crate::format::{human_duration, plural};
use crate::measure::capacity::{CapacityFigures, GeneratorLoad, Limit, Miss, Probe, ReaderBehind};
use crate::measure::RunResult;
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

/// The capacity as the report states it: `48.2k/s (80%: 44.1k–51k/s)` with its reliability
/// and band, `≥ 1M/s` when the upper bound passed, `none: …` when no rate passed, `no stable
/// capacity: …` when no rate was shown to reach the reliability, `not narrowed: …` when the
/// probes ran out with a band wider than a doubling.
pub(crate) fn headline(c: &CapacityFigures) -> String {
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
    if let (Some(n), Some(b)) = (c.not_narrowed, c.band) {
        out.push(format!(
            "the capacity was not narrowed: its 95% band {}–{} spans more than a doubling \
             (the fit's estimate is {}); more `probes`, or longer ones, narrow it",
            short(b.low),
            rate(b.high),
            rate(n.estimate)
        ));
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

/// The probe table's columns: the trial when a rate was tried more than once, e2e when a
/// probe had a consumer. The HTML probe table shows the same.
pub(crate) struct ProbeColumns {
    trial: bool,
    e2e: bool,
}

impl ProbeColumns {
    pub(crate) fn of(c: &CapacityFigures) -> ProbeColumns {
        ProbeColumns {
            trial: c.trials > 1 || c.probes.iter().any(|p| p.trial > 1),
            e2e: c.probes.iter().any(|p| p.result.e2e.is_some()),
        }
    }

    pub(crate) fn head(&self) -> Vec<&'static str> {
        let mut head = vec!["#", "target"];
        if self.trial {
            head.push("trial");
        }
        head.extend(["achieved", "ack p50", "ack p99", "ack p99.9"]);
        if self.e2e {
            head.extend(["e2e p50", "e2e p99", "e2e p99.9"]);
        }
        head.push("result");
        head
    }

    pub(crate) fn row(&self, p: &Probe) -> Vec<String> {
        let r = &p.result;
        let mut row = vec![p.number.to_string(), rate(p.target)];
        if self.trial {
            row.push(p.trial.to_string());
        }
        row.extend([
            rate(p.achieved),
            latency(r.ack.p50_ms),
            latency(r.ack.p99_ms),
            latency(r.ack.p999_ms),
        ]);
        if self.e2e {
            match &r.e2e {
                Some(e) => row.extend([latency(e.p50_ms), latency(e.p99_ms), latency(e.p999_ms)]),
                None => row.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        row.push(if p.pass { "pass" } else { "FAIL" }.into());
        row
    }
}

/// The latency at the capacity, from the run's own figures (those of the last probe there);
/// `-` without a capacity, where they would be a failed probe's.
fn at_capacity(c: &CapacityFigures, ms: Option<f64>) -> String {
    match (c.capacity, ms) {
        (Some(_), Some(ms)) => latency(ms),
        _ => "-".into(),
    }
}

/// The search cells after the table: one line each, then every probe of each with why it
/// failed, then the search's caveats. Nothing when no run searched.
pub(crate) fn write(results: &[RunResult], out: &mut dyn Write) -> io::Result<()> {
    let cells: Vec<(&RunResult, &CapacityFigures)> = results
        .iter()
        .filter_map(|r| Some((r, r.capacity.as_deref()?)))
        .collect();
    if cells.is_empty() {
        return Ok(());
    }
    let e2e = cells.iter().any(|(r, _)| r.e2e.is_some());
    let mut head = vec!["search", "capacity", "limited by", "ack p99"];
    if e2e {
        head.push("e2e p99");
    }
    head.extend(["bracket", "probes"]);
    let mut b = Builder::default();
    b.push_record(head);
    for (r, c) in &cells {
        let mut row = vec![
            r.label.clone(),
            headline(c),
            c.limit.word().into(),
            at_capacity(c, Some(r.ack.p99_ms)),
        ];
        if e2e {
            row.push(at_capacity(c, r.e2e.as_ref().map(|e| e.p99_ms)));
        }
        row.extend([
            bracket(c),
            format!("{} in {}", c.probes.len(), human_duration(c.elapsed_secs)),
        ]);
        b.push_record(row);
    }
    let mut t = b.build();
    t.with(Style::psql());
    t.modify(Columns::new(3..), Alignment::right());
    // "none: every probe failed at …" on two lines keeps the table within 100 columns.
    t.modify(Columns::one(1), Width::wrap(18).keep_words(true));
    writeln!(out)?;
    writeln!(out, "{t}")?;
    for (r, c) in &cells {
        write_probes(r, c, out)?;
    }
    Ok(())
}

/// One search cell's probes, indented under its title, each failure's reasons below them.
fn write_probes(r: &RunResult, c: &CapacityFigures, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "  {}: {} probe{}, capacity {}, limited by {}",
        r.label,
        c.probes.len(),
        plural(c.probes.len()),
        headline(c),
        c.limit.word()
    )?;
    if !c.slo.is_empty() {
        writeln!(out, "  slo: {}", c.slo.join(", "))?;
    }
    if !c.probes.is_empty() {
        let cols = ProbeColumns::of(c);
        let mut b = Builder::default();
        b.push_record(cols.head());
        for p in &c.probes {
            b.push_record(cols.row(p));
        }
        let mut t = b.build();
        t.with(Style::psql());
        t.modify(Columns::new(0..), Alignment::right());
        for line in t.to_string().lines() {
            writeln!(out, "  {line}")?;
        }
    }
    // A reason a line, aligned under the first: a probe can fail five ways at once.
    for p in &c.probes {
        let tag = format!("#{}: ", p.number);
        for (i, why) in reasons(p).iter().enumerate() {
            let lead = if i == 0 {
                tag.clone()
            } else {
                " ".repeat(tag.len())
            };
            writeln!(out, "    {lead}{why}")?;
        }
    }
    for n in notes(c) {
        writeln!(out, "  note: {n}")?;
    }
    Ok(())
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
