//! Durations on the command line (`--interval`, `--deadline`), read like a `.kbs` duration.

use std::time::Duration;

// The scenario language's duration units, so `--interval` reads like a `.kbs` duration.
use crate::check::DURATION_UNITS as INTERVAL_UNITS;

/// Bounds of `--interval`: finer than 10 ms the series costs more than it shows; coarser than
/// an hour it shows nothing a run's totals do not.
const INTERVAL_MIN: Duration = Duration::from_millis(10);
const INTERVAL_MAX: Duration = Duration::from_secs(3600);

/// `--interval DURATION`: a number and a unit (`500ms`, `1s`, `1.5s`, `2m`), 10ms to 1h.
pub(super) fn parse_interval(text: &str) -> Result<Duration, String> {
    let secs = seconds(text)?;
    // Compared as seconds first: a huge number would not fit a Duration.
    if !(INTERVAL_MIN.as_secs_f64()..=INTERVAL_MAX.as_secs_f64()).contains(&secs) {
        return Err(format!(
            "an interval of `{text}` is out of range: use 10ms to 1h"
        ));
    }
    Ok(Duration::from_nanos((secs * 1e9).round() as u64))
}

/// `--deadline DURATION`: 1s to a week.
pub(super) fn parse_deadline(text: &str) -> Result<Duration, String> {
    let secs = seconds(text)?;
    if !(1.0..=7.0 * 86_400.0).contains(&secs) {
        return Err(format!(
            "a deadline of `{text}` is out of range: use 1s to 168h"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `--metrics-linger DURATION`: 0s to an hour.
pub(super) fn parse_linger(text: &str) -> Result<Duration, String> {
    let secs = seconds(text)?;
    if !(0.0..=3600.0).contains(&secs) {
        return Err(format!(
            "a linger of `{text}` is out of range: use 0s to 1h"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A duration as the scenario language writes it, in seconds.
fn seconds(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let Ok(n) = number.parse::<f64>() else {
        return Err(format!(
            "`{text}` is not a duration: write a number and a unit, e.g. 500ms, 1s or 2m"
        ));
    };
    let unit = unit.trim();
    if unit.is_empty() {
        return Err(format!(
            "`{text}` has no unit: write {number}s or {number}ms"
        ));
    }
    let Some((_, secs_per)) = INTERVAL_UNITS.iter().find(|(u, _)| *u == unit) else {
        let known: Vec<&str> = INTERVAL_UNITS.iter().map(|(u, _)| *u).collect();
        let hint = match crate::diagnostic::closest(unit, known.iter().copied()) {
            Some(s) => format!("did you mean `{number}{s}`?"),
            None => format!("use one of {}", known.join(", ")),
        };
        return Err(format!("unknown unit `{unit}` in `{text}`: {hint}"));
    };
    Ok(n * secs_per)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_reads_a_number_and_a_unit() {
        assert_eq!(parse_interval("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_interval("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_interval("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_interval("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_interval("0.3s"), Ok(Duration::from_millis(300)));
        assert_eq!(
            parse_interval("10ms"),
            Ok(Duration::from_millis(10)),
            "the least"
        );
        assert_eq!(
            parse_interval("1h"),
            Ok(Duration::from_secs(3600)),
            "the most"
        );
    }

    #[test]
    fn an_interval_without_a_unit_says_which_to_write() {
        assert_eq!(
            parse_interval("5").unwrap_err(),
            "`5` has no unit: write 5s or 5ms"
        );
    }

    #[test]
    fn an_interval_with_a_misspelt_unit_suggests_the_fix() {
        let e = parse_interval("500mss").unwrap_err();
        assert!(e.contains("did you mean `500ms`?"), "{e}");
        let e = parse_interval("1fortnight").unwrap_err();
        assert_eq!(
            e,
            "unknown unit `fortnight` in `1fortnight`: use one of ns, us, µs, ms, s, m, min, h"
        );
    }

    #[test]
    fn an_interval_out_of_range_is_refused_with_the_range() {
        for t in [
            "0s",
            "1ms",
            "2h",
            "-1s",
            "1500us",
            "99999999999999999999999h",
        ] {
            assert!(parse_interval(t).is_err(), "{t}");
        }
        assert!(parse_interval("2h").unwrap_err().contains("10ms to 1h"));
    }
}
