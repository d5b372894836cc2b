//! How far a verdict's measured value sits from its bound, in words: the failed verdict's own
//! detail, and for a pass the headroom left (a bound held by 1 % is a warning of its own).

use crate::assert::Verdict;

/// The margin column of the report: empty when the two sides cannot be compared as numbers.
pub fn margin(v: &Verdict) -> String {
    if let Some(d) = &v.detail {
        return d.clone();
    }
    let Some(m) = base(&v.measured) else {
        return String::new();
    };
    let bound = v.bound.trim();
    if let Some(range) = bound.strip_prefix("in ") {
        let Some((lo, hi)) = range
            .split_once("..")
            .and_then(|(l, h)| Some((base(l)?, base(h)?)))
        else {
            return String::new();
        };
        if lo.1 != m.1 || hi.1 != m.1 {
            return String::new();
        }
        // Headroom to the nearer edge, as a share of the range.
        let width = (hi.0 - lo.0).abs();
        if width == 0.0 {
            return String::new();
        }
        let near = (m.0 - lo.0).min(hi.0 - m.0);
        return format!(
            "{:.0} % of the range from its nearer edge",
            near / width * 100.0
        );
    }
    let rest = bound.trim_start_matches(['<', '>', '=', '!']);
    let Some(b) = base(rest) else {
        return String::new();
    };
    if b.1 != m.1 || b.0 == 0.0 || bound.starts_with("==") || bound.starts_with("!=") {
        return String::new();
    }
    let pct = (m.0 - b.0) / b.0.abs() * 100.0;
    let side = if pct < 0.0 { "below" } else { "above" };
    format!("{} % {side} the bound", share(pct.abs()))
}

/// A percentage with one decimal, or as many as it takes not to round a near-100 to 100.
fn share(pct: f64) -> String {
    let mut digits = 1;
    while digits < 4 && pct < 100.0 && format!("{pct:.digits$}").starts_with("100") {
        digits += 1;
    }
    format!("{pct:.digits$}")
}

/// A formatted value in base units, with its dimension: `12.5ms` → (0.0125, "s").
fn base(s: &str) -> Option<(f64, &'static str)> {
    let t = s.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let n: f64 = t[..end].parse().ok()?;
    let (factor, dim) = match t[end..].trim() {
        "" | "x" => (1.0, ""),
        "µs" => (1e-6, "s"),
        "ms" => (1e-3, "s"),
        "s" => (1.0, "s"),
        "m" => (60.0, "s"),
        "B" => (1.0, "B"),
        "KiB" => (1024.0, "B"),
        "MiB" => (1024.0 * 1024.0, "B"),
        "GiB" => (1024.0 * 1024.0 * 1024.0, "B"),
        "/s" => (1.0, "/s"),
        "B/s" => (1.0, "B/s"),
        "KiB/s" => (1024.0, "B/s"),
        "MiB/s" => (1024.0 * 1024.0, "B/s"),
        "GiB/s" => (1024.0 * 1024.0 * 1024.0, "B/s"),
        _ => return None,
    };
    Some((n * factor, dim))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passed(measured: &str, bound: &str) -> Verdict {
        Verdict {
            assertion: "x".into(),
            runs: vec![],
            pass: true,
            measured: measured.into(),
            bound: bound.into(),
            detail: None,
        }
    }

    #[test]
    fn a_pass_shows_its_headroom_across_units() {
        assert_eq!(margin(&passed("15ms", "< 30s")), "99.9 % below the bound");
        assert_eq!(
            margin(&passed("2.5MiB", "> 2MiB")),
            "25.0 % above the bound"
        );
    }

    #[test]
    fn a_pass_in_a_range_shows_the_distance_to_its_nearer_edge() {
        assert_eq!(
            margin(&passed("1990/s", "in 1960/s..2040/s")),
            "38 % of the range from its nearer edge"
        );
    }

    #[test]
    fn an_equality_or_an_unknown_unit_has_no_margin() {
        assert_eq!(margin(&passed("0", "== 0")), "");
        assert_eq!(margin(&passed("3 apples", "< 4 apples")), "");
    }

    #[test]
    fn a_failure_shows_its_own_detail() {
        let mut v = passed("40ms", "< 30ms");
        v.pass = false;
        v.detail = Some("40ms, 33 % over < 30ms".into());
        assert_eq!(margin(&v), "40ms, 33 % over < 30ms");
    }
}
