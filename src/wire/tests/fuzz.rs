//! Hostile and broken responses: every response type the client reads, at every version,
//! mutated (each length prefix set to hostile values, bytes flipped or inserted, the frame cut
//! short) and fed to the entry point it decodes frames with (`conn::decode_response`). None may
//! panic, and none may allocate more than the bounds walk counted (a counting allocator
//! measures it): a refused frame allocates next to nothing, an accepted one at most its count,
//! which is capped by `MAX_DECODED`.
//!
//! CI runs `CI_CASES` random cases (about a second in release, on a loaded 2-core machine);
//! more by hand: `PROPTEST_CASES=1000000 cargo test --release --lib wire::tests::fuzz`.

use std::sync::OnceLock;

use bytes::Bytes;
use proptest::prelude::*;

use super::super::bounds::{Prefix, Walk, MAX_DECODED};
use super::alloc::measure;
use super::samples::{self, Sample};

/// Random cases per CI run, unless PROPTEST_CASES says otherwise.
const CI_CASES: u32 = 100_000;

/// What decoding may allocate beyond the walk's count: the frame's shared reference count,
/// and when it fails, the error's text and anyhow's error (with a backtrace, when
/// RUST_BACKTRACE asks for one).
const SLACK: usize = 64 << 10;
const SLACK_OK: usize = 256;

fn samples() -> &'static [Sample] {
    static S: OnceLock<Vec<Sample>> = OnceLock::new();
    S.get_or_init(samples::all)
}

/// The property: no panic (a panic fails the case), and allocation within the walk's count.
fn holds(s: &Sample, bytes: Vec<u8>) {
    let walked = (s.walk)(&bytes, s.version);
    let frame = Bytes::from(bytes);
    let (decoded, a) = measure(|| (s.decode)(frame, s.version));
    match walked {
        Err(why) => {
            assert!(
                decoded.is_err(),
                "{}: the walk refused ({why}), the decoder ran",
                s.name
            );
            assert!(
                a.total <= SLACK,
                "{}: refused ({why}) after allocating {a:?}",
                s.name
            );
        }
        Ok(w) => {
            assert!(w.heap <= MAX_DECODED, "{}: counted {}", s.name, w.heap);
            let slack = if decoded.is_ok() { SLACK_OK } else { SLACK };
            assert!(
                a.total <= w.heap + slack,
                "{}: the walk counted {} bytes, decoding allocated {a:?} ({decoded:?})",
                s.name,
                w.heap
            );
        }
    }
}

#[test]
fn the_allocator_counts_what_this_thread_allocates() {
    let (v, a) = measure(|| Vec::<u8>::with_capacity(100_000));
    assert!(a.total >= 100_000 && a.largest >= 100_000, "{a:?}");
    drop(v);
    let (_, a) = measure(|| ());
    assert_eq!(a.total, 0);
}

#[test]
fn every_sample_walks_to_its_end_and_decodes() {
    assert!(samples().len() >= 40, "{} samples", samples().len());
    for s in samples() {
        let w = (s.walk)(&s.bytes, s.version).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        // The walk reads the frame exactly as the decoder does: to its last byte.
        assert_eq!(w.end, s.bytes.len(), "{}", s.name);
        assert!(!w.prefixes.is_empty(), "{}", s.name);
        let frame = Bytes::from(s.bytes.clone());
        let (r, a) = measure(|| (s.decode)(frame, s.version));
        r.unwrap_or_else(|e| panic!("{}: {e}", s.name));
        assert!(
            a.total <= w.heap + SLACK_OK,
            "{}: {a:?}, counted {}",
            s.name,
            w.heap
        );
    }
}

/// The width of the unsigned varint at the start of `b`, as kafka-protocol reads it.
fn varint_width(b: &[u8]) -> usize {
    b.iter()
        .take(5)
        .position(|&x| x < 0x80)
        .map_or(b.len().min(5), |i| i + 1)
}

fn varint(mut v: u32) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// Hostile encodings for the length at `at`: huge, negative, the largest of its kind, and the
/// true value off by one either way.
fn hostile(bytes: &[u8], at: usize, kind: Prefix) -> Vec<Vec<u8>> {
    match kind {
        Prefix::I16 => {
            let now = i16::from_be_bytes([bytes[at], bytes[at + 1]]);
            [
                i16::MAX,
                i16::MIN,
                -2,
                0x4000,
                now.wrapping_add(1),
                now.wrapping_sub(1),
            ]
            .iter()
            .map(|v| v.to_be_bytes().to_vec())
            .collect()
        }
        Prefix::I32 => {
            let now = i32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
            [
                i32::MAX,
                i32::MIN,
                -2,
                1 << 24,
                0x0fff_ffff,
                now.wrapping_add(1),
                now.wrapping_sub(1),
            ]
            .iter()
            .map(|v| v.to_be_bytes().to_vec())
            .collect()
        }
        Prefix::UVarint => {
            let w = varint_width(&bytes[at..]);
            let mut now = 0u32;
            for (i, b) in bytes[at..at + w].iter().enumerate() {
                now |= u32::from(b & 0x7f) << (7 * i);
            }
            let mut v: Vec<Vec<u8>> = [
                u32::MAX,
                1 << 31,
                1 << 28,
                1 << 21,
                now.wrapping_add(1),
                now.wrapping_sub(1),
            ]
            .iter()
            .map(|&v| varint(v))
            .collect();
            // Five bytes that never end the varint, and a zero spelt in five bytes.
            v.push(vec![0xff; 5]);
            v.push(vec![0x80, 0x80, 0x80, 0x80, 0x00]);
            v
        }
    }
}

/// `bytes` with the length at `at` replaced by `value`.
fn splice(bytes: &[u8], at: usize, kind: Prefix, value: &[u8]) -> Vec<u8> {
    let width = match kind {
        Prefix::I16 => 2,
        Prefix::I32 => 4,
        Prefix::UVarint => varint_width(&bytes[at..]),
    };
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(value);
    out.extend_from_slice(&bytes[at + width..]);
    out
}

#[test]
fn every_length_set_hostile_is_refused_or_bounded() {
    let mut cases = 0;
    let mut refused = 0;
    for s in samples() {
        let w = (s.walk)(&s.bytes, s.version).expect("a valid sample");
        for &(at, kind) in &w.prefixes {
            for value in hostile(&s.bytes, at, kind) {
                let bytes = splice(&s.bytes, at, kind, &value);
                refused += usize::from((s.walk)(&bytes, s.version).is_err());
                holds(s, bytes);
                cases += 1;
            }
        }
    }
    // Most hostile lengths cannot fit the bytes that follow them.
    assert!(
        cases > 5_000 && refused * 2 > cases,
        "{refused} of {cases} refused"
    );
}

#[test]
fn a_count_of_u32_max_is_refused_before_the_decoder_runs() {
    let s = samples()
        .iter()
        .find(|s| s.name == "Metadata v12")
        .expect("sample");
    // The brokers array: after the header (v1) and throttle_time_ms.
    let mut header = Walk::new(&s.bytes, MAX_DECODED);
    header.header(1).expect("header");
    let brokers = header.at() + 4;
    let w = (s.walk)(&s.bytes, s.version).expect("valid");
    assert!(w.prefixes.contains(&(brokers, Prefix::UVarint)));
    let bytes = splice(&s.bytes, brokers, Prefix::UVarint, &varint(u32::MAX));
    let e = (s.walk)(&bytes, s.version).err().expect("refused");
    assert!(e.contains("an array of 4294967294 elements"), "{e}");
    holds(s, bytes);
}

/// `ci` cases, or PROPTEST_CASES when set.
pub(super) fn config(ci: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(ci);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// One random case: which sample, maybe a hostile length (which prefix, which value), byte
/// flips (where, what), maybe bytes inserted (where, what), maybe a cut (where). Indices are
/// taken modulo what exists.
type Case = (
    usize,
    Option<(usize, usize)>,
    Vec<(usize, u8)>,
    Option<(usize, Vec<u8>)>,
    Option<usize>,
);

fn mutate(s: &Sample, (_, length, flips, insert, cut): &Case) -> Vec<u8> {
    let mut b = s.bytes.clone();
    if let Some((p, k)) = *length {
        let w = (s.walk)(&b, s.version).expect("a valid sample");
        let (at, kind) = w.prefixes[p % w.prefixes.len()];
        let values = hostile(&b, at, kind);
        b = splice(&b, at, kind, &values[k % values.len()]);
    }
    for &(at, byte) in flips {
        if !b.is_empty() {
            let i = at % b.len();
            b[i] = byte;
        }
    }
    if let Some((at, bytes)) = insert {
        let at = at % (b.len() + 1);
        b.splice(at..at, bytes.iter().copied());
    }
    if let Some(c) = *cut {
        b.truncate(c % (b.len() + 1));
    }
    b
}

proptest! {
    #![proptest_config(config(CI_CASES))]

    #[test]
    fn mutated_responses_never_panic_nor_allocate_past_the_count(
        case in (
            any::<usize>(),
            proptest::option::of((any::<usize>(), any::<usize>())),
            proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
            proptest::option::weighted(
                0.2,
                (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..8)),
            ),
            proptest::option::weighted(0.3, any::<usize>()),
        )
    ) {
        let s = &samples()[case.0 % samples().len()];
        holds(s, mutate(s, &case));
    }
}
