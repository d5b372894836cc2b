//! The run's clock on the hot path: nanoseconds since the run's origin (`Shared::t0`) from one
//! `clock_gettime(CLOCK_MONOTONIC)` and an integer subtraction.
//!
//! `Instant::elapsed`, the same clock, adds about 45 instructions per reading to the clock call
//! itself (a checked `Timespec` subtraction, a `Duration`, a 128-bit nanosecond count); the
//! producer reads the clock once per record (bench/README.md, "The producer's cost per
//! record"). The origin is located on the raw clock once, between two raw readings around
//! `t0.elapsed()`, at the later bound: this clock is never ahead of `t0.elapsed()`, and behind
//! it by at most the tightest of a few such windows (tens of nanoseconds).

use std::time::Instant;

/// How many windows to try when locating the origin; the narrowest one is kept.
const TRIES: usize = 8;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    #[cfg(target_os = "linux")]
    origin_ns: u64,
    #[cfg(not(target_os = "linux"))]
    t0: Instant,
}

impl Clock {
    /// A clock reading nanoseconds since `t0`.
    pub(crate) fn new(t0: Instant) -> Clock {
        #[cfg(target_os = "linux")]
        {
            let (mut width, mut origin_ns) = (u64::MAX, 0);
            for _ in 0..TRIES {
                let before = raw_ns();
                let elapsed = t0.elapsed().as_nanos() as u64;
                let after = raw_ns();
                if after - before < width {
                    width = after - before;
                    // t0.elapsed() read the clock at some instant in [before, after].
                    origin_ns = after.saturating_sub(elapsed);
                }
            }
            Clock { origin_ns }
        }
        #[cfg(not(target_os = "linux"))]
        Clock { t0 }
    }

    /// The origin on the machine's CLOCK_MONOTONIC, in nanoseconds: what another process
    /// subtracts from its own readings of that clock (a worker, clients/PROTOCOL.md).
    #[cfg(target_os = "linux")]
    pub(crate) fn origin_monotonic_ns(&self) -> u64 {
        self.origin_ns
    }

    /// Nanoseconds since the run's origin.
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        #[cfg(target_os = "linux")]
        {
            raw_ns().saturating_sub(self.origin_ns)
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.t0.elapsed().as_nanos() as u64
        }
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the clock `Instant` reads on Linux.
#[cfg(target_os = "linux")]
#[inline]
fn raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given; CLOCK_MONOTONIC always exists
    // on Linux, so it cannot fail.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_reads_the_runs_time_never_ahead_of_it() {
        let t0 = Instant::now();
        let clock = Clock::new(t0);
        let mut last = 0;
        for _ in 0..1000 {
            let ours = clock.now_ns();
            let std = t0.elapsed().as_nanos() as u64;
            assert!(ours <= std, "{ours} ns read before {std} ns");
            assert!(ours >= last, "monotonic");
            last = ours;
        }
    }
}
