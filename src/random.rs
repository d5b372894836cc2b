//! A seeded pseudo-random generator for payloads, keys and the constant payload the check
//! stage builds, and fresh bits for ids. A foundation: imports nothing from the crate.

/// wyrand: a tiny, fast, statistically solid PRNG; one u64 per call, no allocation.
#[derive(Clone)]
pub struct Rng(u64);

/// 2^64 divided by the golden ratio: its bits are well mixed, so small or similar seeds (0, 1,
/// 2, …) still start far apart in the sequence.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ GOLDEN_GAMMA)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = (self.0 as u128).wrapping_mul((self.0 ^ 0xe703_7ed1_a0b4_28db) as u128);
        ((t >> 64) ^ t) as u64
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Fills `buf` with random bytes.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut rng = Rng::new(seed);
    fill_with(&mut rng, buf);
}

#[inline]
pub fn fill_with(rng: &mut Rng, buf: &mut [u8]) {
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let rem = chunks.into_remainder();
    if !rem.is_empty() {
        let x = rng.next_u64().to_le_bytes();
        rem.copy_from_slice(&x[..rem.len()]);
    }
}

/// 64 bits that differ between processes and between calls a nanosecond apart: the clock and
/// the pid through std's hasher (keyed afresh per process). For ids, not for payloads.
pub fn fresh_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(nanos);
    h.write_u32(std::process::id());
    h.finish()
}
