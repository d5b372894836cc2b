//! `--fail-on` bounds: `ack.p99:+10%`, `throughput:-5%`, `failed:+0`, parsed in the scenario
//! language's metric names, with every malformed one explained at once.

use std::fmt;

use crate::check::{parse_metric, METRIC_NAMES};
use crate::diagnostic::{closest, suggest};
use crate::model::{LatencyKind, Metric, Stat, Unit};

/// Which way a figure gets better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Better {
    Higher,
    Lower,
    /// A setting echoed back (the target rate): no direction.
    Neither,
}

pub(crate) fn better(m: Metric) -> Better {
    match m {
        Metric::Throughput
        | Metric::ThroughputBytes
        | Metric::RateAchieved
        | Metric::Acked
        | Metric::Consumed
        | Metric::DiskRatio
        | Metric::WireRatio
        | Metric::BatchBytes
        | Metric::BatchRecords
        | Metric::RequestRecords
        | Metric::ConsumeThroughput
        | Metric::ConsumeThroughputBytes
        | Metric::FetchBytes
        | Metric::TxnCommitted
        | Metric::ShareAccepted
        | Metric::CompactionRatio
        | Metric::ClientBufferAvailable
        | Metric::Capacity => Better::Higher,
        Metric::Failed
        | Metric::QueueFull
        | Metric::Lost
        | Metric::Duplicated
        | Metric::Reordered
        | Metric::Elapsed
        | Metric::SteadyAfter
        | Metric::DiskBytes
        | Metric::Latency(..)
        | Metric::LagMax
        | Metric::RebalanceTime
        | Metric::RebalanceCount
        | Metric::RebalanceStall
        | Metric::Redelivered
        | Metric::DrainTime
        | Metric::FirstRecordTime
        | Metric::FetchRtt
        | Metric::FetchRttMax
        | Metric::AbortedRead
        | Metric::UnavailableTime
        | Metric::RecoveryTime
        | Metric::FaultLatency(..)
        | Metric::DrainLatency(..)
        | Metric::FaultFailed
        | Metric::ShareLockTimeouts
        | Metric::CompactionLost
        | Metric::CompactionMissing
        | Metric::CompactionResurrected
        | Metric::CompactionTombstonesLeft
        | Metric::CompactionTime
        | Metric::ClientCompressionRate
        | Metric::ClientBufferWait
        | Metric::ClientRecordErrors => Better::Lower,
        // What a scenario's acknowledgement mix asks for: more is neither better nor worse.
        // How cold the backlog was is the experiment's condition, not its outcome.
        Metric::Sent
        | Metric::BacklogCold
        | Metric::RateTarget
        | Metric::FetchRequests
        | Metric::TxnAborted
        | Metric::ShareReleased
        | Metric::ShareRejected
        | Metric::ShareArchived
        | Metric::ShareRedelivered
        | Metric::ShareDeliveryMax
        | Metric::CompactionKeys
        | Metric::CompactionSurviving => Better::Neither,
    }
}

/// The metric's name in the scenario language: `ack.p999`, `disk.ratio`.
pub(crate) fn metric_name(m: Metric) -> String {
    let plain = match m {
        Metric::FaultLatency(kind, stat) => {
            return format!("fault.{}", metric_name(Metric::Latency(kind, stat)));
        }
        Metric::DrainLatency(kind, stat) => {
            return format!("drain.{}", metric_name(Metric::Latency(kind, stat)));
        }
        Metric::Latency(kind, stat) => {
            let family = match kind {
                LatencyKind::Ack => "ack",
                LatencyKind::E2e => "e2e",
                LatencyKind::Service => "service",
                LatencyKind::SendDelay => "send_delay",
                LatencyKind::TxnCommit => "txn.commit",
                LatencyKind::ShareAck => "share.ack",
            };
            let stat = match stat {
                Stat::Min => "min".to_string(),
                Stat::Max => "max".to_string(),
                Stat::Mean => "mean".to_string(),
                // 99.9 → p999, the way the language writes it.
                Stat::Percentile(p) => format!("p{}", format!("{p}").replace('.', "")),
            };
            return format!("{family}.{stat}");
        }
        other => other,
    };
    METRIC_NAMES
        .iter()
        .find(|n| parse_metric(n) == Some(plain))
        .map_or_else(|| format!("{plain:?}"), |n| n.to_string())
}

/// A metric as typed: the language's names, plus `p99.9` for `p999` (how people write it).
pub(crate) fn metric_from_name(name: &str) -> Option<Metric> {
    parse_metric(name).or_else(|| {
        let (family, stat) = name.split_once('.')?;
        let digits = stat.strip_prefix('p')?;
        let (whole, frac) = digits.split_once('.')?;
        // The language reads the first two digits as the whole part: p99.9 → p999; p9.5 has no
        // such spelling.
        (whole.len() == 2 && !frac.is_empty() && !frac.contains('.'))
            .then(|| parse_metric(&format!("{family}.p{whole}{frac}")))
            .flatten()
    })
}

/// How far a figure may move from the baseline before the gate fails.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bound {
    /// As the user wrote it, for messages.
    pub text: String,
    pub metric: Metric,
    /// Upward (`+`) or downward (`-`).
    pub rising: bool,
    /// Non-negative: percent, or the metric's base unit (seconds, bytes, per second, count).
    pub amount: f64,
    pub percent: bool,
}

impl Bound {
    /// The change, as the bound measures it (percent or base units; signed), and whether it
    /// goes past the bound. A percent change from zero is infinite.
    pub(crate) fn check(&self, baseline: f64, current: f64) -> (f64, bool) {
        let change = if self.percent {
            percent_change(baseline, current)
        } else {
            current - baseline
        };
        let past = if self.rising {
            change > self.amount
        } else {
            change < -self.amount
        };
        (change, past)
    }

    /// `+10%`, `-5%`, `+0`, `+2ms`.
    pub(crate) fn shown_limit(&self) -> String {
        let sign = if self.rising { '+' } else { '-' };
        if self.percent {
            format!("{sign}{}%", trim(self.amount))
        } else {
            format!("{sign}{}", shown_amount(self.metric, self.amount))
        }
    }
}

/// Percent change from `baseline`; from zero, any rise is infinite and no change is 0 %.
pub(super) fn percent_change(baseline: f64, current: f64) -> f64 {
    if baseline == current {
        0.0
    } else if baseline == 0.0 {
        f64::INFINITY.copysign(current)
    } else {
        (current - baseline) / baseline.abs() * 100.0
    }
}

/// An amount in the metric's base unit, in the unit people write.
pub(crate) fn shown_amount(m: Metric, v: f64) -> String {
    use crate::format::{human_bytes, human_duration, human_rate};
    match m {
        Metric::DiskRatio | Metric::WireRatio => return format!("{v:.2}x"),
        Metric::BacklogCold => return format!("{:.0}%", v * 100.0),
        _ => {}
    }
    match m.unit() {
        Unit::Duration => human_duration(v),
        Unit::Size => human_bytes(v),
        Unit::ByteRate => human_bytes(v) + "/s",
        Unit::Rate => human_rate(v),
        Unit::Number => trim(v),
    }
}

pub(super) fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A `--fail-on` spec that does not parse: what is wrong and the exact fix.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BoundError {
    pub spec: String,
    pub message: String,
    pub help: String,
}

impl fmt::Display for BoundError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--fail-on `{}`: {}\n  help: {}",
            self.spec, self.message, self.help
        )
    }
}

/// Every bound of every `--fail-on` (each may hold several, comma-separated), or every problem.
pub(crate) fn parse_bounds<'a>(
    args: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<Bound>, Vec<BoundError>> {
    let (mut ok, mut bad) = (Vec::new(), Vec::new());
    for arg in args {
        // A trailing comma is harmless; a bound that is all empty is not.
        let specs: Vec<&str> = arg
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        let specs = if specs.is_empty() { vec![""] } else { specs };
        for spec in specs {
            match parse_bound(spec) {
                Ok(b) => ok.push(b),
                Err(e) => bad.push(e),
            }
        }
    }
    if bad.is_empty() {
        Ok(ok)
    } else {
        Err(bad)
    }
}

const FORM: &str = "write METRIC:CHANGE, e.g. `ack.p99:+10%`, `throughput:-5%` or `failed:+0`";

pub(crate) fn parse_bound(spec: &str) -> Result<Bound, BoundError> {
    let err = |message: String, help: String| BoundError {
        spec: spec.to_string(),
        message,
        help,
    };
    if spec.is_empty() {
        return Err(err("an empty bound".into(), FORM.into()));
    }
    let Some((name, change)) = spec.split_once(':') else {
        // `ack.p99+10%` or a bare `ack.p99`: say the exact spelling.
        let at = spec.find(['+', '-']).unwrap_or(spec.len());
        let (name, change) = spec.split_at(at);
        let help = match metric_from_name(name.trim()) {
            Some(m) if change.is_empty() => {
                let worse = if better(m) == Better::Higher {
                    '-'
                } else {
                    '+'
                };
                format!("write `{name}:{worse}10%` (or the change you allow)")
            }
            Some(_) => format!("write `{name}:{change}`"),
            None => FORM.to_string(),
        };
        return Err(err("no `:` between the metric and the change".into(), help));
    };
    let (name, change) = (name.trim(), change.trim());
    let metric = metric_from_name(name).ok_or_else(|| {
        let message = if name.is_empty() {
            "no metric before `:`".to_string()
        } else {
            format!("`{name}` is not a metric")
        };
        err(message, suggest(name, METRIC_NAMES, "metrics"))
    })?;
    let dir = better(metric);
    let worse = match dir {
        Better::Lower => '+',
        _ => '-',
    };
    let example = format!("{name}:{worse}10%");
    let (sign, rest) = match change.chars().next() {
        Some(c @ ('+' | '-')) => (Some(c), &change[1..]),
        _ => (None, change),
    };
    let rising = match (sign, dir) {
        (Some(s), _) => s == '+',
        (None, Better::Lower) => true,
        (None, Better::Higher) => false,
        (None, Better::Neither) => {
            return Err(err(
                format!("`{name}` is a setting, neither better higher nor lower, so the change needs a sign"),
                format!("write `{name}:+{change}` or `{name}:-{change}`"),
            ))
        }
    };
    let (number, percent, unit) = match rest.strip_suffix('%') {
        Some(n) => (n, true, ""),
        None => {
            let at = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            (&rest[..at], false, &rest[at..])
        }
    };
    let amount: f64 = match number.parse::<f64>() {
        Ok(a) if a.is_finite() => a,
        _ if change.is_empty() => {
            return Err(err(
                format!("no change after `{name}:`"),
                format!("write e.g. `{example}` (relative) or `{name}:{worse}0` (absolute)"),
            ))
        }
        _ => {
            return Err(err(
                format!("`{change}` is not a change"),
                format!("write e.g. `{example}` (relative) or `{name}:{worse}0` (absolute)"),
            ))
        }
    };
    let amount = if percent {
        amount
    } else {
        let sign = if rising { '+' } else { '-' };
        let unit_help = |help: String| err(format!("`{change}` is not a change of `{name}`"), help);
        match unit_factor(metric, unit, amount) {
            Ok(f) => amount * f,
            Err(UnitProblem::Missing) => {
                return Err(unit_help(format!(
                    "an absolute change of {} needs a unit: write e.g. `{name}:{sign}{number}ms`, or a percent: `{name}:{sign}{number}%`",
                    metric.unit().name()
                )))
            }
            Err(UnitProblem::NotAllowed) => {
                return Err(unit_help(format!(
                    "`{name}` is {}, without a unit: write `{name}:{sign}{number}`, or a percent: `{name}:{sign}{number}%`",
                    metric.unit().name()
                )))
            }
            Err(UnitProblem::Unknown(units)) => {
                return Err(unit_help(match closest(unit, units.iter().copied()) {
                    Some(u) => format!("did you mean `{name}:{sign}{number}{u}`?"),
                    None => suggest(unit, &units, "units"),
                }))
            }
        }
    };
    // A bound that fails on an improvement is a sign typed the wrong way round.
    if matches!(
        (dir, rising),
        (Better::Higher, true) | (Better::Lower, false)
    ) {
        let (way, moves) = if rising {
            ("higher", "rise")
        } else {
            ("lower", "fall")
        };
        return Err(err(
            format!("`{name}` is better {way}, so a bound on its {moves} would fail the gate when it improves"),
            format!("write `{name}:{worse}{rest}`"),
        ));
    }
    Ok(Bound {
        text: spec.to_string(),
        metric,
        rising,
        amount,
        percent,
    })
}

/// Why the unit after an absolute amount does not fit the metric.
enum UnitProblem {
    /// A duration or a size with a bare non-zero number.
    Missing,
    /// A unit after a count or a ratio.
    NotAllowed,
    Unknown(Vec<&'static str>),
}

/// The factor from the unit written after an absolute amount to the metric's base unit.
fn unit_factor(m: Metric, unit: &str, amount: f64) -> Result<f64, UnitProblem> {
    const DURATIONS: &[(&str, f64)] = &[
        ("ns", 1e-9),
        ("us", 1e-6),
        ("µs", 1e-6),
        ("ms", 1e-3),
        ("s", 1.0),
    ];
    const SIZES: &[(&str, f64)] = &[
        ("B", 1.0),
        ("KiB", 1024.0),
        ("MiB", 1_048_576.0),
        ("GiB", 1_073_741_824.0),
        ("KB", 1e3),
        ("MB", 1e6),
        ("GB", 1e9),
    ];
    let table: &[(&str, f64)] = match m.unit() {
        Unit::Duration => DURATIONS,
        Unit::Size => SIZES,
        Unit::Rate => &[("/s", 1.0)],
        _ => &[],
    };
    if let Some((_, f)) = table.iter().find(|(u, _)| *u == unit) {
        return Ok(*f);
    }
    if unit.is_empty() {
        // A count or a rate is a plain number, and zero is zero in any unit.
        let plain = amount == 0.0 || table.is_empty() || m.unit() == Unit::Rate;
        return if plain {
            Ok(1.0)
        } else {
            Err(UnitProblem::Missing)
        };
    }
    if table.is_empty() {
        return Err(UnitProblem::NotAllowed);
    }
    Err(UnitProblem::Unknown(
        table.iter().map(|(u, _)| *u).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(spec: &str) -> Bound {
        parse_bound(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
    }

    #[test]
    fn bounds_parse_in_the_languages_metric_names() {
        let cases: &[(&str, &str, bool, f64, bool)] = &[
            ("throughput:-5%", "throughput", false, 5.0, true),
            ("ack.p99:+10%", "ack.p999", true, 10.0, true),
            ("e2e.p99.9:+20%", "e2e.p999", true, 20.0, true),
            ("failed:+0", "failed", true, 0.0, false),
            ("ack.p50:+2ms", "ack.p50", true, 0.002, false),
            ("disk.bytes:+1KiB", "disk.bytes", true, 1024.0, false),
            // Without a sign, the worse way is meant.
            ("ack.p99:10%", "ack.p99", true, 10.0, true),
            ("throughput:5%", "throughput", false, 5.0, true),
        ];
        for &(spec, name, rising, amount, percent) in cases {
            let b = ok(spec);
            if name != "ack.p999" {
                assert_eq!(metric_name(b.metric), name, "{spec}");
            }
            assert_eq!(
                (b.rising, b.amount, b.percent),
                (rising, amount, percent),
                "{spec}"
            );
        }
        assert_eq!(ok("ack.p99.9:+1%").metric, ok("ack.p999:+1%").metric);
    }

    #[test]
    fn metric_names_round_trip() {
        for n in METRIC_NAMES {
            // Aliases (`ack.median`) come back as their canonical name (`ack.p50`).
            let m = parse_metric(n).unwrap();
            assert_eq!(parse_metric(&metric_name(m)), Some(m), "{n}");
        }
        assert_eq!(metric_from_name("ack.p9.5.1"), None);
        assert_eq!(metric_from_name("ack.pfast"), None);
    }

    #[test]
    fn a_bound_is_past_only_beyond_its_amount() {
        let b = ok("ack.p99:+10%");
        assert!(!b.check(100.0, 110.0).1);
        assert!(b.check(100.0, 110.5).1);
        assert!(!b.check(100.0, 50.0).1, "an improvement never fails");
        let t = ok("throughput:-5%");
        assert!(t.check(1000.0, 940.0).1);
        assert!(!t.check(1000.0, 2000.0).1);
        let f = ok("failed:+0");
        assert!(!f.check(0.0, 0.0).1);
        assert!(f.check(0.0, 1.0).1);
        assert!(
            ok("failed:+0%").check(0.0, 1.0).1,
            "any rise from zero is infinite"
        );
    }

    #[test]
    fn a_misspelt_metric_gets_a_did_you_mean() {
        let e = parse_bound("ack.p99x:+1%").unwrap_err();
        assert_eq!(e.help, "did you mean `ack.p99`?");
    }
}
