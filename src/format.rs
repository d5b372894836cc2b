//! Human-readable numbers: durations, sizes, rates, plurals and calendar dates, as every
//! reporter and diagnostic spells them. A foundation: imports nothing from the crate.

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

/// A rate to three significant digits: `48.2k/s`, `1M/s`, `512/s`. A search's rates are
/// bisected, so their last digits are noise to a reader.
pub(crate) fn compact_rate(r: f64) -> String {
    short(r) + "/s"
}

/// Three significant digits with a k, M or G suffix (`48.2k`, `1.25M`, `512`).
pub(crate) fn short(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    let (scale, suffix) = if a >= 999.5e6 {
        (1e9, "G")
    } else if a >= 999.5e3 {
        (1e6, "M")
    } else if a >= 999.5 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let x = v / scale;
    let digits = if x.abs() >= 99.95 {
        0
    } else if x.abs() >= 9.995 {
        1
    } else {
        2
    };
    trim(format!("{x:.digits$}")) + suffix
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

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar (Howard
/// Hinnant's `civil_from_days`).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}
