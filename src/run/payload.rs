//! Payload and key generation for the hot path: everything is written into reusable buffers.

use std::sync::Arc;

use crate::model::{KeySpec, PayloadSize, PayloadSpec, SizeDist};
use crate::random::{fill_with, Rng};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `n` random lowercase hex characters (4 bits of entropy per byte, like the filler in
/// seed 000's orders).
#[inline]
fn push_hex(rng: &mut Rng, out: &mut Vec<u8>, n: usize) {
    let mut left = n;
    while left > 0 {
        let mut x = rng.next_u64();
        let take = left.min(16);
        for _ in 0..take {
            out.push(HEX[(x & 0xf) as usize]);
            x >>= 4;
        }
        left -= take;
    }
}

/// Appends the decimal digits of `v` without allocating.
#[inline]
pub(crate) fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Mixed into the producer's payload seed for its size draws ("size"), a stream of their own:
/// the same seed draws the same sizes whatever the payload's own draws are.
pub(crate) const SIZE_STREAM: u64 = 0x7369_7a65;

/// Writes one record's value per call into a buffer it owns and reuses.
pub(crate) struct PayloadGen {
    spec: PayloadSpec,
    rng: Rng,
    buf: Vec<u8>,
    offset: usize,
    /// `size: lognormal(…)` and the like: each record's size drawn from its own stream.
    sizes: Option<(Arc<SizeDist>, Rng)>,
    /// A random payload's buffer is zero from here on: random bytes a larger record left
    /// below it are zeroed before a smaller record's filler uses them.
    zero_from: usize,
}

impl PayloadGen {
    pub(crate) fn new(spec: &PayloadSpec, seed: u64) -> PayloadGen {
        let largest = spec.size().map_or(0, |s| s.largest());
        let cap = spec.nominal_size().max(largest).max(64) + 128;
        PayloadGen {
            spec: spec.clone(),
            rng: Rng::new(seed),
            buf: Vec::with_capacity(cap),
            offset: seed as usize,
            sizes: (spec.size().and_then(|s| s.dist()))
                .map(|d| (d.clone(), Rng::new(seed ^ SIZE_STREAM))),
            zero_from: 0,
        }
    }

    /// Whether every payload is a slice of data shared (`Arc`) with the run's spec and never
    /// written again (constant, file lines), so librdkafka may send it without copying.
    pub(crate) fn is_shared(&self) -> bool {
        match &self.spec {
            PayloadSpec::Constant { .. } | PayloadSpec::File { .. } => true,
            PayloadSpec::Schema(s) => s.encoded.is_some(),
            _ => false,
        }
    }

    /// The value for record `seq`; `unix_ms` is stamped into JSON records.
    #[inline]
    pub(crate) fn next(&mut self, seq: u64, unix_ms: u64) -> &[u8] {
        // A constant inline, the rest out of line: with every kind in one body the compiler
        // kept the call, about 30 instructions per record for a constant (callgrind).
        if !matches!(self.spec, PayloadSpec::Constant { .. }) || self.sizes.is_some() {
            return self.generate(seq, unix_ms);
        }
        match &self.spec {
            PayloadSpec::Constant { bytes, .. } => bytes,
            _ => &[],
        }
    }

    #[inline(never)]
    fn generate(&mut self, seq: u64, unix_ms: u64) -> &[u8] {
        // This record's size, when it is drawn (0 otherwise: the spec's own is used).
        let drawn = match &mut self.sizes {
            Some((d, rng)) => d.table.draw(rng),
            None => 0,
        };
        let size_of = |s: &PayloadSize| match s {
            PayloadSize::Fixed(n) => *n,
            PayloadSize::Drawn(_) => drawn,
        };
        match &self.spec {
            PayloadSpec::Constant { bytes, size } => &bytes[..size_of(size)],
            PayloadSpec::File { lines, .. } => {
                let i = (seq as usize).wrapping_add(self.offset) % lines.len();
                &lines[i]
            }
            PayloadSpec::Random {
                size,
                compressibility,
            } => {
                let size = size_of(size);
                let random = ((size as f64) * (1.0 - compressibility)).round() as usize;
                // Growing zero-fills the new bytes; shrinking keeps what is below.
                self.buf.resize(size, 0);
                fill_with(&mut self.rng, &mut self.buf[..random]);
                // The compressible part is zero: a larger record's random bytes left there
                // are cleared (with one size, there are none).
                if self.zero_from > random {
                    let end = self.zero_from.min(size);
                    self.buf[random..end].fill(0);
                }
                self.zero_from = random;
                &self.buf
            }
            PayloadSpec::Json { size, event } => {
                let size = size_of(size);
                let b = &mut self.buf;
                b.clear();
                b.extend_from_slice(b"{\"seq\":");
                push_u64(b, seq);
                b.extend_from_slice(b",\"id\":\"");
                push_hex(&mut self.rng, b, 16);
                b.extend_from_slice(b"\",\"ts\":");
                push_u64(b, unix_ms);
                b.extend_from_slice(b",\"event\":\"");
                b.extend_from_slice(event.as_bytes());
                b.extend_from_slice(b"\",\"payload\":\"");
                let filler = size.saturating_sub(b.len() + 2);
                push_hex(&mut self.rng, b, filler);
                b.extend_from_slice(b"\"}");
                b
            }
            PayloadSpec::Schema(s) => match &s.encoded {
                // Encoded at check time, framed by the run once registered.
                Some(lines) => &lines[(seq as usize).wrapping_add(self.offset) % lines.len()],
                None => {
                    self.buf.clear();
                    self.buf.extend_from_slice(&s.prefix);
                    s.schema
                        .generate_at(&mut self.rng, seq, unix_ms, &mut self.buf);
                    &self.buf
                }
            },
        }
    }
}

/// Mixed into the producer's seed for its key generator ("keys" in ASCII), so keys and random
/// payloads of one producer come from different streams instead of repeating each other.
const KEY_STREAM: u64 = 0x6b65_7973;
/// Mixed into the producer's seed for its tombstone draws ("tomb"), a stream of their own.
const TOMBSTONE_STREAM: u64 = 0x746f_6d62;
/// Spreads producer ids over the seed's bits (2^32 / golden ratio), so the producers of a run
/// write different random payloads and keys.
const SEED_SPREAD: u64 = 0x9E37_79B9;

/// One producer's generators' seeds: payloads (and where a file's lines start), keys and
/// tombstone draws. Every client's producer is given these (a worker derives nothing), so the
/// same run seed and producer give the same records on every client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seeds {
    pub payload: u64,
    pub key: u64,
    pub tombstone: u64,
}

impl Seeds {
    /// Producer `share_index` of the schedule (the stamp's producers are numbered per
    /// machine; a shard's share index is the whole run's) in a run seeded `run_seed`.
    pub(crate) fn of(run_seed: u64, share_index: u64) -> Seeds {
        let s = (share_index + 1).wrapping_mul(SEED_SPREAD) ^ run_seed;
        Seeds {
            payload: s,
            key: s ^ KEY_STREAM,
            tombstone: s ^ TOMBSTONE_STREAM,
        }
    }
}

/// Writes one record's key per call.
pub(crate) struct KeyGen {
    spec: KeySpec,
    rng: Rng,
    buf: Vec<u8>,
    zipf: Option<Zipf>,
}

impl KeyGen {
    /// `seed` is the key stream's own (`Seeds::key`).
    pub(crate) fn new(spec: &KeySpec, seed: u64) -> KeyGen {
        let zipf = match spec {
            KeySpec::Zipf { n, s } => Some(Zipf::new(*n, *s)),
            _ => None,
        };
        KeyGen {
            spec: spec.clone(),
            rng: Rng::new(seed),
            buf: Vec::with_capacity(24),
            zipf,
        }
    }

    #[inline]
    pub(crate) fn next(&mut self, seq: u64, unix_ms: u64) -> Option<&[u8]> {
        // No key and a fixed one inline, the rest out of line (as `PayloadGen::next`).
        if !matches!(self.spec, KeySpec::None | KeySpec::Fixed(_)) {
            return Some(self.generate(seq, unix_ms));
        }
        match &self.spec {
            KeySpec::Fixed(s) => Some(s.as_bytes()),
            _ => None,
        }
    }

    #[inline(never)]
    fn generate(&mut self, seq: u64, unix_ms: u64) -> &[u8] {
        let k = match &self.spec {
            KeySpec::None => return &[],
            KeySpec::Fixed(s) => return s.as_bytes(),
            KeySpec::Schema(s) => {
                if let Some(lines) = &s.encoded {
                    return &lines[seq as usize % lines.len()];
                }
                self.buf.clear();
                self.buf.extend_from_slice(&s.prefix);
                s.schema
                    .generate_at(&mut self.rng, seq, unix_ms, &mut self.buf);
                return &self.buf;
            }
            KeySpec::Sequence => seq,
            KeySpec::Uniform(n) => self.rng.next_u64() % n,
            KeySpec::Zipf { .. } => self
                .zipf
                .as_ref()
                .map_or(0, |z| z.sample(&mut self.rng) - 1),
        };
        self.buf.clear();
        self.buf.extend_from_slice(b"key-");
        push_u64(&mut self.buf, k);
        &self.buf
    }
}

/// Zipf over 1..=n by rejection-inversion (Hörmann and Derflinger): O(1) per sample, no table,
/// so ten million keys cost nothing.
pub(crate) struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    c: f64,
}

impl Zipf {
    pub(crate) fn new(n: u64, s: f64) -> Zipf {
        let mut z = Zipf {
            n: n as f64,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            c: 0.0,
        };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(n as f64 + 0.5);
        z.c = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    fn big_h(&self, x: f64) -> f64 {
        let lx = x.ln();
        expm1_over_x((1.0 - self.s) * lx) * lx
    }

    fn big_h_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (log1p_over_x(t) * x).exp()
    }

    pub(crate) fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.next_f64() * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = x.round().clamp(1.0, self.n);
            if k - x <= self.c || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

/// log1p(x)/x, stable near 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// expm1(x)/x, stable near 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
#[path = "payload_tests.rs"]
mod tests;
