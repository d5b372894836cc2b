//! A group's partition stalls as the measured phase sees them: which of them are the run's,
//! how long each lasted, and how much of it fell in the measured phase.
//!
//! A stall is `(from, to)` in ns after the measured start. The join before the clock stalls
//! every partition too; a stall of it that ended before the clock is the run's setup, not a
//! figure of the run (`rebalance.time` once reported a 5 s join of the consumer protocol that
//! no measured record waited for). A stall that reaches into the measured phase counts: whole
//! for how long its partition waited, and from the clock's start for the partition-seconds
//! the phase lost, so that `rebalance.stall` is the sum of the churn events' rows.

/// The stall reaches into the measured phase.
pub(crate) fn measured(s: &(i64, i64)) -> bool {
    s.1 > 0
}

/// How long its partition went unread, whole (ns).
pub(crate) fn length(s: &(i64, i64)) -> i64 {
    (s.1 - s.0).max(0)
}

/// The part of it within the measured phase (ns): its partition-seconds in `rebalance.stall`.
pub(crate) fn within(s: &(i64, i64)) -> i64 {
    (s.1 - s.0.max(0)).max(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_counts_whole_in_length_and_from_the_clock_in_the_phase() {
        let join = (-5_000, -1_000);
        let crossing = (-1_000, 2_000);
        let inside = (3_000, 4_000);
        assert!(!measured(&join));
        assert!(measured(&crossing) && measured(&inside));
        assert_eq!((length(&crossing), within(&crossing)), (3_000, 2_000));
        assert_eq!((length(&inside), within(&inside)), (1_000, 1_000));
        assert_eq!(within(&join), 0);
    }
}
