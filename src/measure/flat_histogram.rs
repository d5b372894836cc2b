//! The hot path's latency histogram: HdrHistogram's own bucket layout in a flat array, where a
//! record is a bucket index and an add, turned into an `hdrhistogram::Histogram` when read.
//!
//! `Histogram::record` is an out-of-line call of about 55 instructions (callgrind): it checks
//! for a resize, saturates the count and tracks min, max and the total. A producer records each
//! acknowledgement twice (the run's 3-digit histogram and its interval's 2-digit one), a
//! consumer each record it reads; the second histogram (the time series) was most of what the
//! producer thread's cost per record grew by (bench/README.md, "The producer's cost per
//! record"). Here the bounds are fixed (1 ns to `MAX_NS`, values clamped as `record` does), so
//! none of that is needed per value: min, max and the total follow from the counts, and the
//! histogram built from them is the one `record` would have built (a unit test compares them).

use hdrhistogram::Histogram;

use super::MAX_NS;

/// Counts by HdrHistogram bucket index, for a lowest value of 1 (unit magnitude 0) and
/// `MAX_NS` as the highest.
pub(crate) struct FlatHistogram {
    counts: Box<[u64]>,
    digits: u8,
    /// `sub_bucket_half_count_magnitude`, `sub_bucket_half_count`, `sub_bucket_mask` and
    /// `leading_zero_count_base` of hdrhistogram's `Histogram::new_with_bounds`.
    half_magnitude: u32,
    half_count: u64,
    mask: u64,
    zeros_base: u32,
    /// Values recorded since the last `drain_into`.
    total: u64,
}

impl FlatHistogram {
    /// The layout of `Histogram::new_with_bounds(1, MAX_NS, digits)`; allocates, so call it
    /// before the hot path.
    pub(crate) fn new(digits: u8) -> FlatHistogram {
        // hdrhistogram keeps single-unit resolution up to 2·10^digits, in a power-of-two count
        // of sub-buckets per bucket.
        let largest = 2 * 10u64.pow(u32::from(digits));
        let magnitude = 64 - (largest - 1).leading_zeros(); // ceil(log2(largest))
        let half_magnitude = magnitude - 1;
        let half_count = 1u64 << half_magnitude;
        let len = Histogram::<u64>::new_with_bounds(1, MAX_NS, digits)
            .expect("static histogram bounds are valid")
            .distinct_values();
        FlatHistogram {
            counts: vec![0; len].into_boxed_slice(),
            digits,
            half_magnitude,
            half_count,
            mask: (1u64 << magnitude) - 1,
            zeros_base: 64 - magnitude,
            total: 0,
        }
    }

    /// One value in nanoseconds, clamped to 1 ns..`MAX_NS` (as `measure::record`).
    #[inline]
    pub(crate) fn record(&mut self, ns: u64) {
        let v = ns.clamp(1, MAX_NS);
        let bucket = self.zeros_base - (v | self.mask).leading_zeros();
        let sub_bucket = v >> bucket;
        let i = ((u64::from(bucket) + 1) << self.half_magnitude) + sub_bucket - self.half_count;
        // In range for every clamped value (the length is hdrhistogram's for MAX_NS).
        if let Some(c) = self.counts.get_mut(i as usize) {
            *c += 1;
        }
        self.total += 1;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The lowest value of bucket index `i` (hdrhistogram's `value_for`).
    fn value_at(&self, i: usize) -> u64 {
        let i = i as u64;
        let bucket = (i >> self.half_magnitude) as i64 - 1;
        let sub_bucket = (i & (self.half_count - 1)) + self.half_count;
        if bucket < 0 {
            sub_bucket - self.half_count
        } else {
            sub_bucket << bucket
        }
    }

    /// Adds what was recorded into `into` (a histogram of the same digits) and starts over.
    pub(crate) fn drain_into(&mut self, into: &mut Histogram<u64>) {
        debug_assert_eq!(into.sigfig(), self.digits);
        if self.total == 0 {
            return;
        }
        for i in 0..self.counts.len() {
            let n = std::mem::take(&mut self.counts[i]);
            if n > 0 {
                let _ = into.record_n(self.value_at(i), n);
            }
        }
        self.total = 0;
    }

    /// What was recorded, as an HdrHistogram with the same bounds and digits; starts over.
    pub(crate) fn take(&mut self) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, MAX_NS, self.digits)
            .expect("static histogram bounds are valid");
        self.drain_into(&mut h);
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::record;

    /// Values over the whole range: each decade densely, the bounds, and beyond them.
    fn values() -> Vec<u64> {
        let mut v = vec![0, 1, 2, 3, MAX_NS - 1, MAX_NS, MAX_NS + 1, u64::MAX];
        let mut x = 1u64;
        while x < MAX_NS {
            for k in [
                1, 2, 3, 5, 7, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096,
            ] {
                v.push(x.saturating_mul(k).min(MAX_NS + 5));
            }
            x = x * 10 + 3;
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            v.push(seed % (1u64 << (seed % 43)).max(2));
        }
        v
    }

    #[test]
    fn the_histogram_is_the_one_hdrhistogram_records() {
        for digits in [2, 3] {
            let mut flat = FlatHistogram::new(digits);
            let mut direct = Histogram::<u64>::new_with_bounds(1, MAX_NS, digits).unwrap();
            for v in values() {
                flat.record(v);
                record(&mut direct, v);
            }
            let built = flat.take();
            assert_eq!(built.len(), direct.len());
            assert_eq!(built.min(), direct.min());
            assert_eq!(built.max(), direct.max());
            // Bucket by bucket, and so every percentile.
            let a: Vec<(u64, u64)> = built
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect();
            let b: Vec<(u64, u64)> = direct
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect();
            assert_eq!(a, b, "{digits} digits");
            assert!(built == direct);
            assert!(flat.is_empty(), "take starts over");
        }
    }

    #[test]
    fn a_drain_adds_to_what_is_there_and_starts_over() {
        let mut flat = FlatHistogram::new(2);
        let mut into = Histogram::<u64>::new_with_bounds(1, MAX_NS, 2).unwrap();
        record(&mut into, 5_000);
        flat.record(5_000);
        flat.record(7_000_000);
        flat.drain_into(&mut into);
        assert_eq!(into.len(), 3);
        assert_eq!(into.count_at(5_000), 2);
        assert!(flat.is_empty());
        flat.drain_into(&mut into);
        assert_eq!(into.len(), 3, "an empty drain adds nothing");
    }
}
