//! Human-readable numbers: durations, sizes, rates and plurals, as every reporter and
//! diagnostic spells them. A foundation: imports nothing from the crate.

pub(crate) fn human_duration(secs: f64) -> String {
    if secs == 0.0 {
        "0".into()
    } else if secs < 1e-3 {
        format!("{:.0}µs", secs * 1e6)
    } else if secs < 1.0 {
        trim(format!("{:.2}", secs * 1e3)) + "ms"
    } else if secs < 120.0 {
        trim(format!("{secs:.2}")) + "s"
    } else {
        trim(format!("{:.1}", secs / 60.0)) + "m"
    }
}

pub(crate) fn human_rate(r: f64) -> String {
    if r >= 1000.0 {
        format!("{:.0}/s", r)
    } else {
        trim(format!("{r:.2}")) + "/s"
    }
}

/// A rate in three significant digits with a k or M suffix, as the language writes rates:
/// `48.2k/s`, `1.25M/s`, `950/s`.
pub(crate) fn compact_rate(r: f64) -> String {
    let (v, unit) = if r >= 1e6 {
        (r / 1e6, "M")
    } else if r >= 1e3 {
        (r / 1e3, "k")
    } else {
        (r, "")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    trim(format!("{v:.digits$}")) + unit + "/s"
}

pub(crate) fn human_bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if b < K {
        format!("{b:.0}B")
    } else if b < K * K {
        trim(format!("{:.1}", b / K)) + "KiB"
    } else if b < K * K * K {
        trim(format!("{:.1}", b / K / K)) + "MiB"
    } else {
        trim(format!("{:.2}", b / K / K / K)) + "GiB"
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `"s"` unless there is exactly one.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
