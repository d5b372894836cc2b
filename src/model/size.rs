//! Record sizes drawn from a distribution (`size: lognormal(median: 1KiB, sigma: 0.8)`):
//! what the scenario wrote, and the table the check stage compiles it into once.
//!
//! Every distribution becomes one [`SizeTable`]: bins of whole sizes in increasing order, each
//! drawn uniformly within, picked by an alias table (Walker's method as Vose builds it) with
//! integer thresholds. A record's size then costs two `u64` draws, a multiply-high and a
//! comparison, whatever the distribution: nothing allocates, nothing calls `exp` or `ln` on
//! the hot path, and a client in another language reproduces the draw bit for bit from the
//! table alone (clients/PROTOCOL.md). A continuous distribution (lognormal) is discretised
//! where it is compiled: whole sizes one by one up to 128 B, then bins 1/128 of their size
//! wide, each weighted by the distribution's mass over it (rounding to the nearest byte), so
//! the table's CDF is within a fraction of a bin of the real one.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Serialize, Serializer};

use crate::random::Rng;

/// The largest payload kafkabench sends: far above Kafka's default 1 MB record limit, so a
/// bigger one is a slipped unit rather than an experiment. Unbounded distributions are
/// clipped here unless `max` clips them lower.
pub const LARGEST_PAYLOAD: usize = 64 * 1024 * 1024;

/// A `json(...)` record's bytes besides its event name and hex filler: `{"seq":…,"id":"…",
/// "ts":…,"event":"…","payload":"…"}` with a 16-character id, a 13-digit timestamp (Unix
/// milliseconds until 2286) and a sequence number of up to 12 digits (a trillion records per
/// producer). `json` honours a size from this plus the event's length up.
const JSON_HEADER: usize = 62 + 13 + 12;

/// The smallest `json(size: …)` record of event `event` that is exactly its size.
pub fn json_smallest(event: &str) -> usize {
    JSON_HEADER + event.len()
}

/// Sizes up to this are bins of their own in a discretised distribution; above, a bin spans
/// 1/128 of its size (under 0.8 %), so about 1 700 bins cover 1 B to 64 MiB.
const EXACT_UP_TO: usize = 128;

/// Integer weights sum to at most this, so an alias threshold (`weight × n × 2^64 / total`,
/// below 2^64 for a slot that is not full) is computed exactly in 128 bits.
const WEIGHT_SCALE: f64 = 4_611_686_018_427_387_904.0; // 2^62

/// A payload's size: one for every record, or drawn per record.
#[derive(Clone)]
pub enum PayloadSize {
    Fixed(usize),
    Drawn(Arc<SizeDist>),
}

/// One size as the number it was before distributions (`Random { size: 512, … }`), so the
/// snapshots of a payload read as they did.
impl std::fmt::Debug for PayloadSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PayloadSize::Fixed(n) => n.fmt(f),
            PayloadSize::Drawn(d) => d.fmt(f),
        }
    }
}

impl PayloadSize {
    /// The mean size, exact for the compiled table.
    pub fn mean(&self) -> f64 {
        match self {
            PayloadSize::Fixed(n) => *n as f64,
            PayloadSize::Drawn(d) => d.table.mean(),
        }
    }

    pub fn largest(&self) -> usize {
        match self {
            PayloadSize::Fixed(n) => *n,
            PayloadSize::Drawn(d) => d.table.largest(),
        }
    }

    pub fn smallest(&self) -> usize {
        match self {
            PayloadSize::Fixed(n) => *n,
            PayloadSize::Drawn(d) => d.table.smallest(),
        }
    }

    pub fn dist(&self) -> Option<&Arc<SizeDist>> {
        match self {
            PayloadSize::Fixed(_) => None,
            PayloadSize::Drawn(d) => Some(d),
        }
    }
}

impl super::PayloadSpec {
    /// The size of a payload that has one (`random`, `json`, `constant`).
    pub fn size(&self) -> Option<&PayloadSize> {
        use super::PayloadSpec as P;
        match self {
            P::Random { size, .. } | P::Json { size, .. } | P::Constant { size, .. } => Some(size),
            P::File { .. } | P::Schema(_) => None,
        }
    }

    /// Whether records differ in size, so the run records each one's (`RunResult::sizes`).
    pub fn sizes_vary(&self) -> bool {
        match self.size() {
            Some(s) => s.dist().is_some(),
            None => true,
        }
    }
}

/// A fixed size is its number of bytes, as before distributions; a distribution is an object.
impl Serialize for PayloadSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PayloadSize::Fixed(n) => s.serialize_u64(*n as u64),
            PayloadSize::Drawn(d) => d.serialize(s),
        }
    }
}

/// A size distribution: as written, and compiled.
#[derive(Clone, Debug, Serialize)]
pub struct SizeDist {
    #[serde(flatten)]
    pub shape: SizeShape,
    /// The table's mean, smallest and largest size (what can really be drawn).
    pub mean: f64,
    pub smallest: usize,
    pub largest: usize,
    #[serde(skip)]
    pub table: SizeTable,
}

impl SizeDist {
    pub fn new(shape: SizeShape, table: SizeTable) -> SizeDist {
        SizeDist {
            mean: table.mean(),
            smallest: table.smallest(),
            largest: table.largest(),
            shape,
            table,
        }
    }
}

/// The distribution as the scenario wrote it, its clips resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "distribution", rename_all = "snake_case")]
pub enum SizeShape {
    /// Every whole size from `min` to `max` alike.
    Uniform { min: usize, max: usize },
    /// `median × e^(sigma·Z)` rounded to a whole size, clipped to `min`..=`max`.
    Lognormal {
        median: f64,
        sigma: f64,
        min: usize,
        max: usize,
    },
    /// Each size with its share (shares sum to 1).
    Choice { sizes: Vec<(usize, f64)> },
    /// A histogram of a real topic's record sizes: `size,count` lines.
    Sizes {
        path: PathBuf,
        distinct: usize,
        records: u64,
    },
}

impl SizeShape {
    /// As `plan` shows it: `lognormal(median 1KiB, sigma 0.8, max 64MiB)`.
    pub fn describe(&self) -> String {
        let b = |n: usize| crate::format::human_bytes(n as f64);
        match self {
            SizeShape::Uniform { min, max } => format!("uniform({}, {})", b(*min), b(*max)),
            SizeShape::Lognormal {
                median,
                sigma,
                min,
                max,
            } => {
                let min = if *min > 1 {
                    format!(", min {}", b(*min))
                } else {
                    String::new()
                };
                format!(
                    "lognormal(median {}, sigma {sigma}{min}, max {})",
                    crate::format::human_bytes(*median),
                    b(*max)
                )
            }
            SizeShape::Choice { sizes } => {
                let parts: Vec<String> = sizes
                    .iter()
                    .map(|(n, share)| format!("{}: {}%", b(*n), trim_share(share * 100.0)))
                    .collect();
                format!("choice([{}])", parts.join(", "))
            }
            SizeShape::Sizes {
                path,
                distinct,
                records,
            } => format!(
                "sizes(\"{}\"): {distinct} sizes of {records} records",
                path.display()
            ),
        }
    }

    /// The file it was read from (`sizes("…")`).
    pub fn file(&self) -> Option<&PathBuf> {
        match self {
            SizeShape::Sizes { path, .. } => Some(path),
            _ => None,
        }
    }
}

fn trim_share(pct: f64) -> String {
    let s = format!("{:.4}", pct);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Whole sizes `lo` to `lo + span − 1`, drawn alike, and the bin's weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bin {
    pub lo: u32,
    pub span: u32,
    pub weight: u64,
}

/// One slot of the alias table: its own bin is taken when the slot's position is below
/// `keep`, its `alias` otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub keep: u64,
    pub alias: u32,
}

/// A compiled distribution: bins in increasing size order, and the alias table over them.
#[derive(Clone, Debug, Default)]
pub struct SizeTable {
    bins: Vec<Bin>,
    slots: Vec<Slot>,
    total: u128,
}

impl SizeTable {
    /// From bins with integer weights, in increasing size order and not overlapping; bins of
    /// no weight are dropped. None when nothing is left.
    pub fn new(bins: Vec<Bin>) -> Option<SizeTable> {
        let mut bins: Vec<Bin> = bins.into_iter().filter(|b| b.weight > 0).collect();
        if bins.is_empty() {
            return None;
        }
        let total: u128 = bins.iter().map(|b| u128::from(b.weight)).sum();
        if total > WEIGHT_SCALE as u128 {
            // Counts too large for exact thresholds: the same shares at 2^62.
            let scale = WEIGHT_SCALE / total as f64;
            for b in &mut bins {
                b.weight = (b.weight as f64 * scale).round() as u64;
            }
            return SizeTable::new(bins);
        }
        let slots = alias_slots(&bins, total);
        Some(SizeTable { bins, slots, total })
    }

    /// From bins weighted by probabilities (any positive scale): each turned into an integer
    /// weight at 2^62 for the whole, so a bin below 2^-62 of the mass is never drawn.
    pub fn from_shares(bins: &[(u32, u32, f64)]) -> Option<SizeTable> {
        let sum: f64 = bins.iter().map(|b| b.2.max(0.0)).sum();
        if sum.is_nan() || sum <= 0.0 {
            return None;
        }
        SizeTable::new(
            bins.iter()
                .map(|&(lo, span, p)| Bin {
                    lo,
                    span,
                    weight: (p.max(0.0) / sum * WEIGHT_SCALE).round() as u64,
                })
                .collect(),
        )
    }

    /// Every whole size from `min` to `max` alike.
    pub fn uniform(min: usize, max: usize) -> Option<SizeTable> {
        let span = u32::try_from(max.checked_sub(min)? + 1).ok()?;
        SizeTable::new(vec![Bin {
            lo: u32::try_from(min).ok()?,
            span,
            weight: 1,
        }])
    }

    /// `median × e^(sigma·Z)`, Z standard normal, rounded to the nearest whole size and
    /// clipped to `min..=max`: the mass below `min` is drawn as `min`, above `max` as `max`.
    pub fn lognormal(median: f64, sigma: f64, min: usize, max: usize) -> Option<SizeTable> {
        if !(median > 0.0 && sigma > 0.0 && min >= 1 && min < max && max <= u32::MAX as usize) {
            return None;
        }
        // The standard normal's z at size x, and the mass between two z's, taken from the
        // side of the median where it is small so that tails keep their relative precision.
        let z = |x: f64| (x / median).ln() / sigma;
        let mass = |lo: f64, hi: f64| {
            if lo >= 0.0 {
                upper_tail(lo) - upper_tail(hi)
            } else {
                upper_tail(-hi) - upper_tail(-lo)
            }
        };
        let mut bins = Vec::new();
        bins.push((min as u32, 1, upper_tail(-z(min as f64 + 0.5))));
        let mut a = min + 1;
        while a < max {
            let width = (a / EXACT_UP_TO).max(1).min(max - a);
            let b = a + width - 1;
            let p = mass(z(a as f64 - 0.5), z(b as f64 + 0.5));
            bins.push((a as u32, width as u32, p));
            a = b + 1;
        }
        bins.push((max as u32, 1, upper_tail(z(max as f64 - 0.5))));
        SizeTable::from_shares(&bins)
    }

    /// One size: two draws of `rng`, integer arithmetic only (clients/PROTOCOL.md).
    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> usize {
        let n = self.slots.len() as u128;
        let m = u128::from(rng.next_u64()) * n;
        let i = (m >> 64) as usize;
        let s = self.slots[i];
        let b = if (m as u64) < s.keep {
            i
        } else {
            s.alias as usize
        };
        let bin = self.bins[b];
        let within = (u128::from(rng.next_u64()) * u128::from(bin.span)) >> 64;
        bin.lo as usize + within as usize
    }

    pub fn bins(&self) -> &[Bin] {
        &self.bins
    }

    /// The alias table, one slot per bin.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    pub fn smallest(&self) -> usize {
        self.bins.first().map_or(0, |b| b.lo as usize)
    }

    pub fn largest(&self) -> usize {
        self.bins
            .last()
            .map_or(0, |b| b.lo as usize + b.span as usize - 1)
    }

    pub fn mean(&self) -> f64 {
        let sum: f64 = (self.bins.iter())
            .map(|b| b.weight as f64 * (f64::from(b.lo) + f64::from(b.span - 1) / 2.0))
            .sum();
        sum / self.total as f64
    }

    /// P(size ≤ x).
    pub fn cdf(&self, x: usize) -> f64 {
        let mut below = 0u128;
        for b in &self.bins {
            let (lo, hi) = (b.lo as usize, b.lo as usize + b.span as usize - 1);
            if x >= hi {
                below += u128::from(b.weight);
            } else {
                if x >= lo {
                    let part = (x - lo + 1) as f64 / f64::from(b.span);
                    return (below as f64 + part * b.weight as f64) / self.total as f64;
                }
                break;
            }
        }
        below as f64 / self.total as f64
    }

    /// The smallest size whose CDF reaches `q` (as HdrHistogram reads a percentile).
    pub fn quantile(&self, q: f64) -> usize {
        let target = q.clamp(0.0, 1.0) * self.total as f64;
        let mut below = 0.0;
        for b in &self.bins {
            let w = b.weight as f64;
            if below + w >= target {
                let per = w / f64::from(b.span);
                let j = ((target - below) / per).ceil().max(1.0) as u32;
                return b.lo as usize + j.min(b.span) as usize - 1;
            }
            below += w;
        }
        self.largest()
    }

    /// The table's bytes, for the digest shards compare (`shard::digest`).
    pub fn digest_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bins.len() * 16);
        for b in &self.bins {
            out.extend_from_slice(&b.lo.to_le_bytes());
            out.extend_from_slice(&b.span.to_le_bytes());
            out.extend_from_slice(&b.weight.to_le_bytes());
        }
        out
    }
}

/// Vose's alias method with exact integer thresholds: slot i keeps its bin for the share
/// `keep / 2^64` of its positions and gives the rest to `alias`, so that every bin is drawn
/// with probability weight / total (to 2^-64 per slot).
fn alias_slots(bins: &[Bin], total: u128) -> Vec<Slot> {
    let n = bins.len() as u128;
    let mut scaled: Vec<u128> = bins.iter().map(|b| u128::from(b.weight) * n).collect();
    let mut slots: Vec<Slot> = (0..bins.len())
        .map(|i| Slot {
            keep: u64::MAX,
            alias: i as u32,
        })
        .collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) =
        (0..bins.len()).partition(|&i| scaled[i] < total);
    // Small slots are taken in increasing index order, large ones likewise: the same bins
    // give the same table on every machine.
    small.reverse();
    large.reverse();
    while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
        // scaled[s] < total ≤ 2^62: the shift stays within 128 bits.
        slots[s] = Slot {
            keep: ((scaled[s] << 64) / total) as u64,
            alias: l as u32,
        };
        scaled[l] -= total - scaled[s];
        if scaled[l] < total {
            large.pop();
            small.push(l);
        }
    }
    slots
}

/// P(Z > z) for a standard normal Z, accurate in the far tail (erfc).
fn upper_tail(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// What the tests of sizes compare with: the distribution itself and a sample's distance to it.
#[cfg(test)]
pub(crate) mod testing {
    /// P(round(median·e^(σZ)) ≤ k) for a size k inside the clips: the distribution itself,
    /// not the table compiled from it.
    pub(crate) fn lognormal_cdf(median: f64, sigma: f64, k: usize) -> f64 {
        super::upper_tail(-((k as f64 + 0.5) / median).ln() / sigma)
    }

    /// The Kolmogorov–Smirnov distance between `sample` and `cdf`, checked on both sides of
    /// every size the sample holds (a discrete distribution's CDF jumps there).
    pub(crate) fn ks_distance(sample: &mut [usize], cdf: impl Fn(usize) -> f64) -> f64 {
        sample.sort_unstable();
        let n = sample.len() as f64;
        let mut d: f64 = 0.0;
        let mut i = 0;
        while i < sample.len() {
            let k = sample[i];
            let before = i as f64 / n;
            while i < sample.len() && sample[i] == k {
                i += 1;
            }
            let at = i as f64 / n;
            let below = if k == 0 { 0.0 } else { cdf(k - 1) };
            d = d.max((at - cdf(k)).abs()).max((before - below).abs());
        }
        d
    }
}

#[cfg(test)]
#[path = "size_tests.rs"]
mod tests;
