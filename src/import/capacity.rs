//! OMB's `producerRate: 0` as a `capacity { }` block. OMB then searches for the highest rate
//! in one run, raising it while its backlogs stay small; kafkabench's capacity search probes
//! fixed rates instead, each for `probe` after its own `warmup`, so OMB's lengths (those of one
//! whole run) are shortened to what one probe of many needs.

use std::time::Duration;

use super::kbs::Block;
use super::omb::Workload;
use crate::model::capacity::{CapacitySearch, DEFAULT_TOLERANCE};

/// The longest probe: long enough to see lag grow, short enough that the ~20 probes of a search
/// do not take OMB's 15 minutes each.
const PROBE_MAX_MINUTES: u32 = 1;
/// The longest warm-up of a probe: OMB warms up once, a search warms up before every probe.
const WARMUP_MAX: Duration = Duration::from_secs(10);

/// The `capacity` block for `producerRate: 0` (or absent, Java's 0): default bounds, no `slo`
/// (OMB's search has no latency target; a probe's sustain tests stand for its backlog limits).
pub(super) fn search(w: &Workload, minutes: u32) -> Block {
    let probe_minutes = minutes.min(PROBE_MAX_MINUTES);
    let probe = Duration::from_secs(60 * u64::from(probe_minutes));
    let omb_warmup = w.warmup_duration_minutes.unwrap_or(1);
    let warmup = Duration::from_secs(60 * u64::from(omb_warmup)).min(WARMUP_MAX);
    let most = CapacitySearch {
        probe,
        warmup,
        ..CapacitySearch::default()
    }
    .max_probes();
    let mut b = Block::new("capacity");
    if w.producer_rate.is_none() {
        b.note("producerRate is absent: OMB reads it as 0");
    }
    b.note(format!(
        "OMB searches for the highest rate (producerRate: 0), raising it while its backlogs of\n\
         unsent and unread records stay small. kafkabench's capacity search does the same with\n\
         fixed-rate probes: the highest rate acked on schedule without growing lag (within {}%).",
        DEFAULT_TOLERANCE * 100.0
    ));
    b.note("No latency target, as in OMB: add one with `slo { e2e.p99 < 20ms }`.");
    b.note(format!(
        "OMB's testDurationMinutes ({minutes}) is its whole search; this one runs up to {most} probes,\n\
         so each is shorter (`kafkabench plan` shows the longest it can take)"
    ));
    b.set(
        "probe",
        format!("{probe_minutes}m"),
        Some(format!(
            "testDurationMinutes, at most {PROBE_MAX_MINUTES}m a probe"
        )),
    );
    let warmup_comment = match w.warmup_duration_minutes {
        Some(0) => "warmupDurationMinutes: 0, no warm-up".to_string(),
        Some(_) => format!(
            "warmupDurationMinutes, at most {}s: every probe warms up",
            WARMUP_MAX.as_secs()
        ),
        None => format!(
            "warmupDurationMinutes is absent (OMB's 1), at most {}s: every probe warms up",
            WARMUP_MAX.as_secs()
        ),
    };
    b.set(
        "warmup",
        format!("{}s", warmup.as_secs()),
        Some(warmup_comment),
    );
    b
}
