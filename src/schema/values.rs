//! Random values of plausible shape, shared by the three formats: strings, uuids, numbers,
//! instants near the record's time, dates within the year before it. Deterministic given the
//! generator; nothing allocates. grammar/REFERENCE.md ("Random records honour the schema")
//! says what each schema type gets; it is kept to what these functions and their callers do.

use crate::random::Rng;

/// A string field with no length of its own (Avro and protobuf have none) gets 4 to 16
/// characters: the length of a name, a code or a word, so records are neither tiny nor padded.
pub(crate) const STRING_LEN: (u64, u64) = (4, 16);
/// Arrays, maps and repeated fields get 0 to 3 items: "a few", so nesting stays small.
pub(crate) const ITEMS: (u64, u64) = (0, 3);
/// Beyond this nesting depth optional and repeated values are left out, so a recursive type
/// (a tree of categories) ends.
pub(crate) const MAX_DEPTH: usize = 8;
/// An optional value is present this often (out of 256): most fields are filled in, some not.
const PRESENT_OF_256: u64 = 192;

const ALNUM: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &[u8; 16] = b"0123456789abcdef";

/// Uniform in `lo..=hi` (hi >= lo).
#[inline]
pub(crate) fn between(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
    let span = hi.wrapping_sub(lo).wrapping_add(1);
    if span == 0 {
        return rng.next_u64();
    }
    lo + rng.next_u64() % span
}

/// Uniform in `lo..=hi` for signed bounds.
#[inline]
pub(crate) fn between_i64(rng: &mut Rng, lo: i64, hi: i64) -> i64 {
    let span = (hi as i128 - lo as i128 + 1) as u128;
    if span > u64::MAX as u128 {
        return rng.next_u64() as i64;
    }
    (lo as i128 + (rng.next_u64() as u128 % span) as i128) as i64
}

/// Whether an optional value is present.
#[inline]
pub(crate) fn present(rng: &mut Rng) -> bool {
    rng.next_u64() & 0xff < PRESENT_OF_256
}

/// Which of `n` branches a value takes: with a null branch among several, null as often as an
/// optional value is absent and otherwise one of the others; else any branch alike.
#[inline]
pub(crate) fn branch(rng: &mut Rng, n: usize, null: Option<usize>) -> usize {
    match null {
        Some(z) if n > 1 => {
            if present(rng) {
                let k = (rng.next_u64() % (n as u64 - 1)) as usize;
                k + usize::from(k >= z)
            } else {
                z
            }
        }
        _ => (rng.next_u64() % n as u64) as usize,
    }
}

/// Appends `n` lowercase letters and digits.
#[inline]
pub(crate) fn alnum(rng: &mut Rng, out: &mut Vec<u8>, n: usize) {
    let mut left = n;
    while left > 0 {
        let mut x = rng.next_u64();
        // 10 characters of 6 bits each per draw (36 of 64 values kept by a modulo: a small
        // bias towards the first letters, irrelevant for a payload).
        for _ in 0..left.min(10) {
            out.push(ALNUM[((x & 63) % 36) as usize]);
            x >>= 6;
        }
        left -= left.min(10);
    }
}

/// A string's length by default.
#[inline]
pub(crate) fn string_len(rng: &mut Rng) -> usize {
    between(rng, STRING_LEN.0, STRING_LEN.1) as usize
}

/// Appends a random version-4 UUID in its 36-character text form.
#[inline]
pub(crate) fn uuid(rng: &mut Rng, out: &mut Vec<u8>) {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
    b[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push(b'-');
        }
        out.push(HEX[(x >> 4) as usize]);
        out.push(HEX[(x & 15) as usize]);
    }
}

/// A small count: of items, or a plausible integer field (0 to 9,999: quantities and codes).
#[inline]
pub(crate) fn small_int(rng: &mut Rng) -> i64 {
    (rng.next_u64() % 10_000) as i64
}

/// A plausible long (0 to 999,999,999: ids and amounts in cents).
#[inline]
pub(crate) fn long(rng: &mut Rng) -> i64 {
    (rng.next_u64() % 1_000_000_000) as i64
}

/// A plausible floating-point value: 0 to 1,000 in hundredths (prices).
#[inline]
pub(crate) fn decimal_f64(rng: &mut Rng) -> f64 {
    (rng.next_u64() % 100_000) as f64 / 100.0
}

/// A record's instant (an event time: Avro timestamps, protobuf's `Timestamp`, JSON Schema's
/// `date-time`): within the hour before its send time `unix_ms`.
#[inline]
pub(crate) fn recent_ms(rng: &mut Rng, unix_ms: u64) -> i64 {
    unix_ms.saturating_sub(rng.next_u64() % 3_600_000) as i64
}

/// Days a record's date may lie before its send day.
const DATE_SPAN_DAYS: u64 = 365;

/// A record's date (Avro `date`, JSON Schema's `date`), as days since the epoch: the send day
/// of `unix_ms` (UTC) or one of the 364 before it. A date is a day, not an event time: one
/// taken from the hour before the send would be the same for nearly every record of a run,
/// which compresses as no real date column does.
#[inline]
pub(crate) fn recent_day(rng: &mut Rng, unix_ms: u64) -> i64 {
    (unix_ms / 86_400_000) as i64 - (rng.next_u64() % DATE_SPAN_DAYS) as i64
}

/// Appends `ms` since the epoch as RFC 3339 UTC (`2024-05-01T12:34:56.789Z`).
pub(crate) fn rfc3339(out: &mut Vec<u8>, ms: i64) {
    let secs = ms.div_euclid(1000);
    let (days, tod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    date(out, days);
    out.push(b'T');
    two(out, tod / 3600);
    out.push(b':');
    two(out, tod / 60 % 60);
    out.push(b':');
    two(out, tod % 60);
    out.push(b'.');
    let milli = ms.rem_euclid(1000);
    out.push(b'0' + (milli / 100) as u8);
    out.push(b'0' + (milli / 10 % 10) as u8);
    out.push(b'0' + (milli % 10) as u8);
    out.push(b'Z');
}

/// Appends a day since the epoch as `YYYY-MM-DD`.
pub(crate) fn date(out: &mut Vec<u8>, days: i64) {
    let (y, m, d) = crate::format::civil_from_days(days);
    let (m, d) = (i64::from(m), i64::from(d));
    let y = y.clamp(0, 9999);
    two(out, y / 100);
    two(out, y % 100);
    out.push(b'-');
    two(out, m);
    out.push(b'-');
    two(out, d);
}

#[inline]
fn two(out: &mut Vec<u8>, v: i64) {
    out.push(b'0' + (v / 10 % 10) as u8);
    out.push(b'0' + (v % 10) as u8);
}

/// Appends `s` as a JSON string literal, escaped.
pub(crate) fn json_str(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0..=0x1f => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(c >> 4) as usize]);
                out.push(HEX[(c & 15) as usize]);
            }
            _ => out.push(c),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_written_as_rfc3339() {
        let mut out = Vec::new();
        rfc3339(&mut out, 1_714_566_896_789);
        assert_eq!(String::from_utf8(out).unwrap(), "2024-05-01T12:34:56.789Z");
        let mut out = Vec::new();
        date(&mut out, 0);
        assert_eq!(out, b"1970-01-01");
    }

    #[test]
    fn dates_are_the_send_day_or_one_of_the_364_before() {
        let mut rng = Rng::new(7);
        let today = 1_700_000_000_000 / 86_400_000;
        let days: std::collections::BTreeSet<i64> = (0..20_000)
            .map(|_| recent_day(&mut rng, 1_700_000_000_000))
            .collect();
        assert_eq!(days.first(), Some(&(today - 364)));
        assert_eq!(days.last(), Some(&today));
        assert_eq!(days.len(), 365);
    }

    #[test]
    fn uuids_are_version_4_text() {
        let mut out = Vec::new();
        uuid(&mut Rng::new(1), &mut out);
        let s = String::from_utf8(out).unwrap();
        assert_eq!(s.len(), 36);
        assert_eq!(&s[14..15], "4");
        assert!(uuid::Uuid::parse_str(&s).is_ok(), "{s}");
    }

    #[test]
    fn bounds_are_inclusive_and_never_overflow() {
        let mut rng = Rng::new(3);
        for _ in 0..1000 {
            let v = between_i64(&mut rng, -2, 2);
            assert!((-2..=2).contains(&v));
            let _ = between_i64(&mut rng, i64::MIN, i64::MAX);
            let _ = between(&mut rng, 0, u64::MAX);
        }
    }
}

#[cfg(test)]
#[path = "values_tests.rs"]
mod by_format;
