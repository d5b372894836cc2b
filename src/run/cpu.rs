//! kafkabench's own CPU time: a thread's and the process's, read from the kernel. A capacity
//! search asks whether the load generator, not the cluster, was the limit; on a machine
//! shared with the broker a tool that cannot tell reports its own ceiling as the cluster's.

use std::time::Duration;

/// CPU time of the calling thread.
pub(crate) fn thread() -> Duration {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The share of the last `wall_ns` the calling thread was on a CPU, given its CPU time
/// `then` at their start (None for a stretch too short to say).
pub(crate) fn busy_since(then: Duration, wall_ns: u64) -> Option<f64> {
    let wall = wall_ns as f64 / 1e9;
    (wall > 0.01).then(|| thread().saturating_sub(then).as_secs_f64() / wall)
}

/// CPU time of the whole process, every thread (librdkafka's included).
pub(crate) fn process() -> Duration {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time of another process of this user (a client's worker), every thread; None once it
/// has exited or when the kernel will not say.
pub(crate) fn of_process(pid: u32) -> Option<Duration> {
    let mut id: libc::clockid_t = 0;
    // SAFETY: writes one clockid_t, which `id` is.
    let rc = unsafe { libc::clock_getcpuclockid(pid as libc::pid_t, &mut id) };
    (rc == 0).then(|| clock(id)).filter(|d| !d.is_zero())
}

/// The monotonic clock librdkafka stamps its statistics with (`rd_clock()`, `ts` in µs).
pub(crate) fn monotonic() -> Duration {
    clock(libc::CLOCK_MONOTONIC)
}

fn clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock ids are the kernel's own.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The cores this process may run on.
pub(crate) fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}
