//! Literals with units → typed values.

use std::time::Duration;

use crate::diagnostic::{suggest, Diagnostic, Kind};
use crate::model::Scalar;
use crate::source::Span;
use crate::syntax::{Quantity, RateLit};

/// Duration units and their length in seconds (also read by `run --interval`).
pub const DURATION_UNITS: &[(&str, f64)] = &[
    ("ns", 1e-9),
    ("us", 1e-6),
    ("µs", 1e-6),
    ("ms", 1e-3),
    ("s", 1.0),
    ("m", 60.0),
    ("min", 60.0),
    ("h", 3600.0),
];
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("KiB", 1024.0),
    ("MB", 1e6),
    ("MiB", 1_048_576.0),
    ("GB", 1e9),
    ("GiB", 1_073_741_824.0),
];
/// Count suffixes, as people write `300k` messages or `100k/s`. Case matters where it must:
/// `m` is minutes and `B` is bytes, so a million is `M` and a billion `G`; `K` is accepted
/// beside `k` because nothing else means it.
const COUNT_SUFFIXES: &[(&str, f64)] = &[("k", 1e3), ("K", 1e3), ("M", 1e6), ("G", 1e9)];
const PERIODS: &[(&str, f64)] = &[
    ("s", 1.0),
    ("sec", 1.0),
    ("m", 60.0),
    ("min", 60.0),
    ("h", 3600.0),
];

fn all_units() -> Vec<&'static str> {
    let mut v: Vec<&str> = DURATION_UNITS
        .iter()
        .chain(SIZE_UNITS)
        .chain(COUNT_SUFFIXES)
        .map(|(u, _)| *u)
        .collect();
    v.extend(["x", "%"]);
    v
}

fn unit_error(unit: &str, span: Span, candidates: &[&str], what: &str) -> Diagnostic {
    // Case slips (`kib`, `MS`) deserve the exact spelling rather than a list.
    let exact = candidates.iter().find(|c| c.eq_ignore_ascii_case(unit));
    // `sec`, `msec`, `mins`: the longest unit the word starts with is what was meant.
    let prefix = candidates
        .iter()
        .filter(|c| unit.starts_with(**c))
        .max_by_key(|c| c.len());
    let help = match (count_word(unit), exact, prefix) {
        (Some(fix), ..) => fix.to_string(),
        (None, Some(c), _) => format!("did you mean `{c}`? units are case-sensitive"),
        (None, None, Some(c)) => format!("did you mean `{c}`?"),
        (None, None, None) => suggest(unit, candidates, what),
    };
    Diagnostic::new(Kind::Unit, span, format!("unknown unit `{unit}`"))
        .label("not a unit kafkabench knows")
        .help(help)
}

/// Words people write for a count (`2mil`, `1bn`): the suffix they meant, rather than the
/// nearest unit (`mil` starts like `m`, minutes).
fn count_word(unit: &str) -> Option<&'static str> {
    match unit.to_ascii_lowercase().as_str() {
        "thousand" | "th" | "thou" => Some("a thousand is `k`: write e.g. `300k`"),
        "mil" | "mill" | "million" | "millions" | "mio" | "mm" | "mn" => {
            Some("a million is `M`: write e.g. `2M` (`m` is minutes)")
        }
        "bn" | "bil" | "billion" | "billions" => {
            Some("a billion is `G`: write e.g. `1G` (`B` is bytes)")
        }
        _ => None,
    }
}

/// The largest size: numbers are read as `f64`, which holds whole numbers exactly up to 2^53
/// bytes (8PiB), far beyond any size Kafka or a payload takes.
pub(super) const MAX_SIZE: f64 = 9_007_199_254_740_992.0;

/// A literal with its unit, at `span`. Durations and sizes are never negative: a negative
/// number is a count, a property value (`acks = -1`) or, in `expect`, an arithmetic constant.
/// Words a count may carry after it (`transaction = 1000 messages`).
const COUNT_NOUNS: &[&str] = &["messages", "message", "records", "record"];

pub(super) fn quantity(q: &Quantity, span: Span) -> Result<Scalar, Diagnostic> {
    let n = q.number.value;
    let Some(unit) = &q.unit else {
        return Ok(Scalar::Number(n));
    };
    let u = unit.node.as_str();
    if COUNT_NOUNS.contains(&u) {
        // `1000 messages`: the noun says what is counted, the number is the count.
        return Ok(Scalar::Number(n));
    }
    let negative = |what: &str| {
        Diagnostic::new(Kind::Value, span, format!("a {what} is never negative"))
            .label(format!("{}{u}", n))
            .help(format!("write `{}{u}`", -n))
    };
    if let Some((_, f)) = DURATION_UNITS.iter().find(|(x, _)| *x == u) {
        if n < 0.0 {
            return Err(negative("duration"));
        }
        // Capped (at ~30,000 years) because `from_secs_f64` panics on overflow; each key that
        // takes a duration has its own, far lower, bound.
        return Ok(Scalar::Duration(Duration::from_secs_f64((n * f).min(1e12))));
    }
    if let Some((_, f)) = SIZE_UNITS.iter().find(|(x, _)| *x == u) {
        if n < 0.0 {
            return Err(negative("size"));
        }
        if n * f > MAX_SIZE {
            return Err(Diagnostic::new(
                Kind::Value,
                span,
                format!("`{n}{u}` is too large for a size"),
            )
            .label("too large")
            .help("sizes go up to 8PiB (2^53 bytes); a unit may have slipped"));
        }
        return Ok(Scalar::Size((n * f).round() as u64));
    }
    if let Some((_, f)) = COUNT_SUFFIXES.iter().find(|(x, _)| *x == u) {
        // `1.1k` is 1100, not 1100.0000000000002: a count must stay whole.
        let x = n * f;
        let whole = x.round();
        let x = if (x - whole).abs() <= 1e-9 * whole.abs().max(1.0) {
            whole
        } else {
            x
        };
        return Ok(Scalar::Number(x));
    }
    match u {
        "x" => Ok(Scalar::Ratio(n)),
        "%" => Ok(Scalar::Ratio(n / 100.0)),
        _ => Err(unit_error(u, unit.span, &all_units(), "units")),
    }
}

pub(super) fn rate(r: &RateLit, span: Span) -> Result<Scalar, Diagnostic> {
    let per = r.per.node.as_str();
    let Some((_, period)) = PERIODS.iter().find(|(p, _)| *p == per) else {
        let names: Vec<&str> = PERIODS.iter().map(|(p, _)| *p).collect();
        return Err(unit_error(
            per,
            r.per.span,
            &names,
            "a rate is per `s`, `min` or `h`",
        ));
    };
    match quantity(&r.amount, span)? {
        Scalar::Number(n) => Ok(Scalar::Rate(n / period)),
        Scalar::Size(b) => Ok(Scalar::ByteRate(b as f64 / period)),
        other => {
            let span = r.amount.unit.as_ref().map_or(r.per.span, |u| u.span);
            Err(Diagnostic::new(
                Kind::Type,
                span,
                format!("a rate counts messages or bytes, not {}", other.kind_name()),
            )
            .label("this unit")
            .help(match mistaken_count(&r.amount) {
                Some(fix) => format!("{fix}/{per}`"),
                None => {
                    "write a message rate like `5000/s` or `8000/min`, or a byte rate like `50MB/s`"
                        .into()
                }
            }))
        }
    }
}

/// The fix when a count was written with a unit that means something else: `m` is minutes
/// and `B` bytes, so `2m` messages or `1m/s` meant millions. The text ends open (no closing
/// backtick) so a rate can add its period.
pub(super) fn mistaken_count(q: &Quantity) -> Option<String> {
    let n = number_text(q.number.value);
    match q.unit.as_ref()?.node.as_str() {
        "m" => Some(format!("`m` means minutes: a million is `M`, write `{n}M")),
        "B" => Some(format!("`B` means bytes: a billion is `G`, write `{n}G")),
        _ => None,
    }
}

/// Duration → the decimal milliseconds librdkafka's `*.ms` properties take.
pub(super) fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms.fract() == 0.0 {
        format!("{}", ms as u64)
    } else {
        format!("{ms:.3}").trim_end_matches('0').to_string()
    }
}

/// Number → the text a client property takes.
pub(super) fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}
