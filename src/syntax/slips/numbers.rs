//! Numbers written as other languages write them: digits grouped with `,` or spaces, `1e6`,
//! `1h30m`, `00:30:00`, and a unit set apart from its number.

use super::lex::{tokens, Tok, TokKind};
use super::{Cx, Explained};

/// A number as written without its unit: `1000` of `1000`, None for `10s` or `5k/s`.
pub(super) fn bare_number(t: &Tok) -> Option<f64> {
    (t.kind == TokKind::Number)
        .then(|| t.text.replace('_', "").parse::<f64>().ok())
        .flatten()
}

/// The unit a word written after a number stands for: `minute` → `m`, `KB` → `KB`.
pub(super) fn unit_word(w: &str) -> Option<&'static str> {
    const EXACT: &[&str] = &[
        "ns", "us", "ms", "s", "m", "min", "h", "B", "KB", "kB", "KiB", "MB", "MiB", "GB", "GiB",
        "k", "K", "M", "G", "x",
    ];
    if let Some(u) = EXACT.iter().find(|u| **u == w) {
        return Some(u);
    }
    Some(match w.to_ascii_lowercase().as_str() {
        "nanosecond" | "nanoseconds" | "nanos" => "ns",
        "microsecond" | "microseconds" | "micros" | "µs" => "us",
        "msec" | "msecs" | "millisecond" | "milliseconds" | "millis" => "ms",
        "sec" | "secs" | "second" | "seconds" => "s",
        "mins" | "minute" | "minutes" => "m",
        "hr" | "hrs" | "hour" | "hours" => "h",
        "byte" | "bytes" | "b" => "B",
        "kb" => "KB",
        "kib" => "KiB",
        "mb" => "MB",
        "mib" => "MiB",
        "gb" => "GB",
        "gib" => "GiB",
        "thousand" => "k",
        "million" | "millions" | "mil" => "M",
        "billion" | "billions" => "G",
        "times" => "x",
        "percent" | "pct" => "%",
        _ => return None,
    })
}

/// `s`, `min` or `h` for a period written as a word.
pub(super) fn period_word(w: &str) -> Option<&'static str> {
    match w.to_ascii_lowercase().trim_end_matches('s') {
        "" | "sec" | "second" => Some("s"),
        "m" | "min" | "minute" => Some("min"),
        "h" | "hr" | "hour" => Some("h"),
        _ => None,
    }
}

pub(super) fn number_text(n: f64) -> String {
    if n.fract() == 0.0 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// `1,000,000` and `1 000 000`: digits grouped as in prose.
pub(super) fn grouped_digits(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur()?;
    let before = cx
        .back(1)
        .filter(|t| t.kind == TokKind::Number && t.line == cur.line)?;
    let group = |t: &Tok| {
        t.kind == TokKind::Number && t.text.len() == 3 && t.text.bytes().all(|b| b.is_ascii_digit())
    };
    let (by_comma, first_group) = if cur.is(",") && cur.glued && !cx.in_brackets() {
        (true, cx.i + 1)
    } else if group(cur)
        && !cur.glued
        && bare_number(before).is_some_and(|n| n.fract() == 0.0 && n < 1000.0)
    {
        (false, cx.i)
    } else {
        return None;
    };
    if !cx
        .toks
        .get(first_group)
        .is_some_and(|t| group(t) && t.line == cur.line)
    {
        return None;
    }
    let mut last = first_group;
    loop {
        let next = if by_comma { last + 2 } else { last + 1 };
        let sep_ok = !by_comma || cx.toks.get(last + 1).is_some_and(|t| t.is(",") && t.glued);
        match cx.toks.get(next) {
            Some(t) if sep_ok && group(t) && t.line == cur.line => last = next,
            _ => break,
        }
    }
    let written = cx.source(cx.i - 1, last);
    let digits: Vec<&str> = written
        .split([',', ' '])
        .filter(|p| !p.is_empty())
        .collect();
    Some(Explained::span(
        before.start,
        cx.toks[last].end,
        format!(
            "`{written}`: digits are grouped with `_`, not {}",
            if by_comma { "`,`" } else { "spaces" }
        ),
        "one number",
        format!(
            "write `{}` (or with a suffix: `300k`, `1M`)",
            digits.join("_")
        ),
    ))
}

/// Durations and counts in other notations: `1e6`, `1h30m`, `00:30:00`. The message and the
/// help, or None when `run` is none of them.
pub(super) fn number_forms(run: &str) -> Option<(String, String)> {
    // 1e6, 2.5E3
    if let Some((m, e)) = run.split_once(['e', 'E']) {
        if let (Ok(m), Ok(e)) = (m.parse::<f64>(), e.parse::<i32>()) {
            let n = m * 10f64.powi(e);
            let suffix = [(1e9, "G"), (1e6, "M"), (1e3, "k")]
                .iter()
                .find(|(f, _)| n >= *f && (n / f).fract() == 0.0)
                .map(|(f, s)| format!(" or `{}{s}`", number_text(n / f)))
                .unwrap_or_default();
            return Some((
                format!("`{run}`: numbers are not written with an exponent"),
                format!("write `{}`{suffix}", grouped(n)),
            ));
        }
    }
    // 1h30m, 1m30s: several units in one.
    let parts = tokens(run);
    let seconds = |u: &str| match u {
        "h" => Some(3600.0),
        "m" | "min" => Some(60.0),
        "s" => Some(1.0),
        "ms" => Some(0.001),
        _ => None,
    };
    let mut total = 0.0;
    let mut smallest = f64::MAX;
    let mut rest = run;
    let mut compound = parts.len() > 1
        && parts
            .iter()
            .all(|t| t.kind == TokKind::Number && t.glued || t.start == 0);
    while compound && !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let unit_end = rest[digits..]
            .find(|c: char| c.is_ascii_digit())
            .map_or(rest.len(), |k| digits + k);
        match (
            rest[..digits].parse::<f64>(),
            seconds(&rest[digits..unit_end]),
        ) {
            (Ok(n), Some(f)) => {
                total += n * f;
                smallest = smallest.min(f);
            }
            _ => compound = false,
        }
        rest = &rest[unit_end..];
    }
    if compound {
        let (n, unit) = [(3600.0, "h"), (60.0, "m"), (1.0, "s"), (0.001, "ms")]
            .into_iter()
            .find(|(f, _)| *f <= smallest && (total / f).fract() == 0.0)
            .map_or((total, "s"), |(f, u)| (total / f, u));
        return Some((
            format!("`{run}`: a duration has one unit"),
            format!("write `{}{unit}`", number_text(n)),
        ));
    }
    // 00:30:00, 30:00
    let clock: Vec<&str> = run.split(':').collect();
    if (2..=3).contains(&clock.len())
        && clock
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        let secs = clock
            .iter()
            .fold(0u64, |acc, p| acc * 60 + p.parse::<u64>().unwrap_or(0));
        let (n, unit) = if secs % 3600 == 0 {
            (secs / 3600, "h")
        } else if secs % 60 == 0 {
            (secs / 60, "m")
        } else {
            (secs, "s")
        };
        let read = if clock.len() == 3 { "h:m:s" } else { "m:s" };
        return Some((
            format!("`{run}`: a duration is a number and a unit, not a clock time"),
            format!("write `{n}{unit}` (reading `{run}` as {read})"),
        ));
    }
    None
}

/// A whole number with `_` between groups of three digits; others as they are.
fn grouped(n: f64) -> String {
    if n.fract() != 0.0 || n.abs() >= 1e18 {
        return n.to_string();
    }
    let digits = (n as i64).to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push('_');
        }
        out.push(c);
    }
    out
}

/// `size: 1 KiB`, `> 10 x`: a unit set apart from its number, where the parser stops at the
/// unit itself (in a call, in an assertion).
pub(super) fn unit_apart(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur().filter(|t| t.is_word() && !t.glued)?;
    let n = cx.back(1).filter(|t| t.line == cur.line)?;
    bare_number(n)?;
    let unit = unit_word(cur.text)?;
    Some(Explained::span(
        n.start,
        cur.end,
        "a unit is written against its number, without a space",
        "a unit after a space",
        format!("write `{}{unit}`", n.text),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_notations_get_the_one_this_language_has() {
        let help = |run: &str| number_forms(run).map(|(_, h)| h);
        assert_eq!(help("1e6").as_deref(), Some("write `1_000_000` or `1M`"));
        assert_eq!(help("1h30m").as_deref(), Some("write `90m`"));
        assert_eq!(help("1m30s").as_deref(), Some("write `90s`"));
        assert_eq!(
            help("00:30:00").as_deref(),
            Some("write `30m` (reading `00:30:00` as h:m:s)")
        );
        assert_eq!(help("10.0.0.1:9092"), None);
        assert_eq!(help("localhost"), None);
    }
}
