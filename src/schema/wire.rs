//! The byte-level pieces every encoder shares: varints, zigzag, and a length written after
//! its content (protobuf's nested messages) by shifting the content in place.

/// Appends `v` as an unsigned LEB128 varint (protobuf's varint, Avro's after zigzag).
#[inline]
pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Avro's `int` and `long`: zigzag, then varint.
#[inline]
pub(crate) fn avro_long(out: &mut Vec<u8>, v: i64) {
    varint(out, zigzag(v));
}

/// Bytes a varint of `v` takes.
#[inline]
pub(crate) fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Writes the varint length of everything after `start` in front of it. The content was
/// written first (its length unknown until then) after one reserved byte at `start`; a length
/// that needs more bytes shifts the content right in place, so nothing is allocated beyond
/// `out`'s growth.
#[inline]
pub(crate) fn patch_length(out: &mut Vec<u8>, start: usize) {
    let content = start + 1;
    let len = (out.len() - content) as u64;
    let n = varint_len(len);
    if n > 1 {
        let end = out.len();
        out.resize(end + n - 1, 0);
        out.copy_within(content..end, content + n - 1);
    }
    let mut v = len;
    for i in 0..n {
        let more = i + 1 < n;
        out[start + i] = (v as u8 & 0x7f) | if more { 0x80 } else { 0 };
        v >>= 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzag_match_the_specs_examples() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        assert_eq!(
            [0, -1, 1, -2, 2].map(zigzag),
            [0, 1, 2, 3, 4],
            "zigzag maps small magnitudes to small numbers"
        );
        for v in [0u64, 1, 127, 128, 16_383, 16_384, u64::MAX] {
            out.clear();
            varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
        }
    }

    #[test]
    fn a_patched_length_shifts_long_content_right() {
        for len in [0usize, 5, 127, 128, 20_000] {
            let mut out = vec![9u8];
            let start = out.len();
            out.push(0);
            out.extend((0..len).map(|i| i as u8));
            patch_length(&mut out, start);
            let mut want = vec![9u8];
            varint(&mut want, len as u64);
            want.extend((0..len).map(|i| i as u8));
            assert_eq!(out, want, "length {len}");
        }
    }
}
