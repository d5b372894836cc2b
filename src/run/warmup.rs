//! `warmup = auto`: the warm-up goes on, a slice at a time, until the rate has settled — the
//! last few slices acknowledged about as much as each other and as they sent — or until its
//! bound. Each producer thread judges its own records; the barrier after the warm-up waits for
//! the last of them, so the measured phase starts when every thread has settled.

use crate::model::Warmup;

/// One slice of the warm-up: records sent in it, and delivery reports received in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Slice {
    pub sent: u64,
    pub reported: u64,
}

/// Whether the last [`Warmup::AUTO_LOOKS`] slices agree: each reported within the tolerance of
/// their mean, and each kept up with what it sent (a queue that grows is not settled, however
/// steady the acknowledgements coming out of it).
pub(super) fn settled(slices: &[Slice]) -> bool {
    let k = Warmup::AUTO_LOOKS;
    if slices.len() < k {
        return false;
    }
    let last = &slices[slices.len() - k..];
    let mean = last.iter().map(|s| s.reported as f64).sum::<f64>() / k as f64;
    let tol = Warmup::AUTO_TOLERANCE;
    mean > 0.0
        && last.iter().all(|s| {
            let r = s.reported as f64;
            (r - mean).abs() <= tol * mean && r >= (1.0 - tol) * s.sent as f64
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slices(v: &[(u64, u64)]) -> Vec<Slice> {
        v.iter()
            .map(|&(sent, reported)| Slice { sent, reported })
            .collect()
    }

    #[test]
    fn a_rate_that_keeps_up_and_holds_for_three_slices_has_settled() {
        assert!(settled(&slices(&[
            (1000, 400),
            (1000, 990),
            (1000, 1010),
            (1000, 1000)
        ])));
    }

    #[test]
    fn fewer_slices_than_looks_have_not_settled() {
        assert!(!settled(&slices(&[(1000, 1000), (1000, 1000)])));
    }

    #[test]
    fn a_rate_still_climbing_has_not_settled() {
        // A connection warming up, a JIT: 10 % more each second.
        assert!(!settled(&slices(&[(1000, 800), (1000, 900), (1000, 1000)])));
    }

    #[test]
    fn a_steady_trickle_out_of_a_growing_queue_has_not_settled() {
        // Unlimited rate: 50k/s sent, 30k/s acknowledged, steadily: the queue grows.
        assert!(!settled(&slices(&[
            (50_000, 30_000),
            (50_000, 30_100),
            (50_000, 29_900)
        ])));
    }

    #[test]
    fn nothing_acknowledged_has_not_settled() {
        assert!(!settled(&slices(&[(0, 0), (0, 0), (0, 0)])));
    }
}
