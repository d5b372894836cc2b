//! Latency as it happens, for `--metrics`: fixed buckets each thread counts into as it records,
//! read by whoever scrapes while the run goes on. The figures still come from the HdrHistograms
//! merged at the end; these only let a dashboard watch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Upper bounds of the buckets, in nanoseconds: 100 µs to 60 s in 1-2.5-5 steps, the range a
/// Kafka latency lives in (a broker on loopback acks in ~1 ms, a stalled one in seconds). The
/// last bucket, above 60 s, is the exposition's `+Inf`.
pub(crate) const BOUNDS_NS: [u64; 18] = [
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
    30_000_000_000,
    60_000_000_000,
];

/// One thread's latency counts. A single thread writes it, so a count moves by a relaxed load
/// and store (no locked instruction on the hot path); a scraper may read a count one behind.
#[derive(Debug)]
pub(crate) struct LiveHistogram {
    buckets: [AtomicU64; BOUNDS_NS.len() + 1],
    sum_ns: AtomicU64,
}

impl LiveHistogram {
    fn new() -> LiveHistogram {
        LiveHistogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_ns: AtomicU64::new(0),
        }
    }

    /// One latency, from the histogram's only writer.
    #[inline]
    pub(crate) fn observe(&self, ns: u64) {
        let i = BOUNDS_NS.partition_point(|&b| b < ns);
        let b = &self.buckets[i];
        b.store(b.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        let s = self.sum_ns.load(Ordering::Relaxed);
        self.sum_ns.store(s.wrapping_add(ns), Ordering::Relaxed);
    }
}

/// Several threads' buckets added up: counts per bucket (not cumulative), and their sum.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Buckets {
    pub counts: Vec<u64>,
    pub sum_ns: u64,
}

impl Buckets {
    pub(crate) fn count(&self) -> u64 {
        self.counts.iter().sum()
    }
}

fn total(hs: &[Arc<LiveHistogram>]) -> Buckets {
    let mut b = Buckets {
        counts: vec![0; BOUNDS_NS.len() + 1],
        sum_ns: 0,
    };
    for h in hs {
        for (c, x) in b.counts.iter_mut().zip(&h.buckets) {
            *c += x.load(Ordering::Relaxed);
        }
        b.sum_ns = b.sum_ns.wrapping_add(h.sum_ns.load(Ordering::Relaxed));
    }
    b
}

/// A run's live latencies: ack latency per producer thread, end-to-end per consumer thread.
#[derive(Debug)]
pub(crate) struct LiveLatency {
    pub ack: Vec<Arc<LiveHistogram>>,
    pub e2e: Vec<Arc<LiveHistogram>>,
}

impl LiveLatency {
    pub(crate) fn new(producers: usize, consumers: usize) -> LiveLatency {
        let make = |n| (0..n).map(|_| Arc::new(LiveHistogram::new())).collect();
        LiveLatency {
            ack: make(producers),
            e2e: make(consumers),
        }
    }

    /// Ack latency of the measured records acknowledged so far.
    pub(crate) fn ack(&self) -> Buckets {
        total(&self.ack)
    }

    /// End-to-end latency of the measured records read so far (their count is the consumed
    /// count).
    pub(crate) fn e2e(&self) -> Buckets {
        total(&self.e2e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latency_lands_in_the_first_bucket_whose_bound_holds_it() {
        let l = LiveLatency::new(2, 0);
        l.ack[0].observe(100_000); // on the bound: in it (Prometheus' `le`)
        l.ack[0].observe(100_001);
        l.ack[1].observe(61_000_000_000); // above every bound: +Inf
        let b = l.ack();
        assert_eq!(b.counts[0], 1);
        assert_eq!(b.counts[1], 1);
        assert_eq!(b.counts[BOUNDS_NS.len()], 1);
        assert_eq!(b.count(), 3);
        assert_eq!(b.sum_ns, 100_000 + 100_001 + 61_000_000_000);
        assert_eq!(l.e2e().count(), 0);
    }
}
