//! What kept a search's capacity where it is, read from the failures at the boundary: the SLO,
//! the cluster, or kafkabench itself (its sender, its reader).

use crate::measure::capacity::{Limit, Miss, Probe, Search};
use crate::model::Stat;

/// What kept the capacity down, read from the failures at the lowest failing rate above it
/// (at `from` when nothing passed): kafkabench itself when that probe fell behind its
/// schedule while kafkabench was saturated or its records waited to be sent, the cluster when
/// it did not keep up otherwise, the SLO when only a condition broke.
pub(super) fn limit(s: &Search, probes: &[Probe], rp_closed_loop: bool) -> Limit {
    if s.reached_upper_bound() {
        return Limit::UpperBound;
    }
    let boundary = match s.bracket() {
        Some(b) => b.fail,
        None => probes
            .iter()
            .filter(|p| !p.pass)
            .map(|p| p.target)
            .fold(f64::INFINITY, f64::min),
    };
    // Nothing failed and `to` was not reached: the probe budget ended the search.
    let Some(failed) = probes.iter().find(|p| !p.pass && p.target == boundary) else {
        return Limit::Budget;
    };
    let closed_loop = rp_closed_loop;
    if reader_bound(failed) {
        Limit::Reader
    } else if behind(failed) && (saturated(failed) || (!closed_loop && sender_waits(failed))) {
        Limit::Generator
    } else if failed.misses.iter().any(Miss::is_sustain) {
        Limit::Cluster
    } else {
        Limit::Slo
    }
}

/// Whether the probe fell behind its schedule (slipped, or acked too little).
fn behind(p: &Probe) -> bool {
    p.misses
        .iter()
        .any(|m| matches!(m, Miss::Slip { .. } | Miss::Rate { .. }))
}

/// Whether kafkabench's own reader fell behind (its thread saturated, or records waiting in its
/// queue: `GeneratorLoad::reader_behind`) while the probe failed on what the reader measures
/// (end-to-end latency, lag): its consumer, not the cluster, set the figure that failed.
fn reader_bound(p: &Probe) -> bool {
    let reads = |m: &Miss| match m {
        Miss::Lag { .. } => true,
        Miss::Slo { read_side, .. } => *read_side,
        _ => false,
    };
    p.result
        .generator
        .is_some_and(|g| g.reader_behind().is_some())
        && p.misses.iter().any(reads)
}

/// Whether kafkabench had no CPU to spare: a sending thread, or the process per core.
fn saturated(p: &Probe) -> bool {
    p.result.generator.is_some_and(|g| g.saturated())
}

/// Whether records waited to be *sent* while the cluster answered promptly: most of the
/// latency is the send delay, the produce → ack time is below it, and librdkafka's queue never
/// pushed back. The sender could not keep its schedule although the cluster kept up (its
/// thread starved of CPU on a busy machine shows so, at any share of a core).
fn sender_waits(p: &Probe) -> bool {
    let r = &p.result;
    let p99 = |s: &crate::measure::LatencySummary| s.stat_secs(Stat::Percentile(99.0));
    match (p99(&r.send_delay), p99(&r.service), p99(&r.ack)) {
        (Some(wait), Some(service), Some(ack)) => {
            r.queue_full == 0 && wait >= 0.5 * ack && service < wait
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::capacity::Step;
    use crate::measure::{new_histogram, record, GeneratorLoad, LatencySummary, RunResult};
    use crate::model::Unit;

    /// A summary of one latency, milliseconds.
    fn ms(v: f64) -> LatencySummary {
        let mut h = new_histogram();
        record(&mut h, (v * 1e6) as u64);
        LatencySummary::from_histogram(&h)
    }

    fn probe(target: f64, pass: bool, misses: Vec<Miss>, busy: f64) -> Probe {
        waiting(target, pass, misses, busy, (1.0, 1.0, 2.0))
    }

    /// A probe whose records waited `send` ms to be sent, `service` ms to be acked, `ack` ms
    /// in all (p99s).
    fn waiting(
        target: f64,
        pass: bool,
        misses: Vec<Miss>,
        busy: f64,
        (send, service, ack): (f64, f64, f64),
    ) -> Probe {
        let r = RunResult {
            generator: Some(GeneratorLoad {
                sender_busy: busy,
                reader_busy: 0.0,
                process_cores: busy,
                cores: 2,
                ..GeneratorLoad::default()
            }),
            ack: ms(ack),
            service: ms(service),
            send_delay: ms(send),
            ..RunResult::default()
        };
        Probe {
            number: 1,
            target,
            trial: 1,
            achieved: target,
            pass,
            misses,
            result: Box::new(r),
            secs: 0.0,
        }
    }

    fn searched(probes: &[Probe]) -> Search {
        let mut s = Search::new(&crate::measure::capacity::search_settings(
            1000.0, 1e6, 0.05, 1,
        ));
        for p in probes {
            // Canaries after a failure pass: the cluster recovered.
            while let Step::Canary { .. } = s.next() {
                s.record(true);
            }
            let Step::Probe { rate, .. } = s.next() else {
                panic!("done early")
            };
            assert_eq!(rate, p.target);
            s.record(p.pass);
        }
        s
    }

    #[test]
    fn the_limit_is_read_from_the_failures_at_the_boundary() {
        let slo = Miss::Slo {
            condition: "ack.p99 < 5ms".into(),
            measured: Some(0.009),
            bound: Some(0.005),
            unit: Some(Unit::Duration),
            read_side: false,
        };
        let slip = Miss::Slip {
            behind_secs: 2.0,
            allowed_secs: 0.5,
        };
        let rate = Miss::Rate {
            achieved: 1500.0,
            least: 1900.0,
        };
        let ladder = |last: Vec<Miss>, busy: f64| {
            vec![
                probe(1000.0, true, vec![], 0.3),
                probe(2000.0, false, last.clone(), busy),
                probe(2830.0, false, last, busy),
            ]
        };
        // Only the SLO broke, the sender had time to spare.
        let p = ladder(vec![slo.clone()], 0.4);
        assert_eq!(limit(&searched(&p[..3]), &p, false), Limit::Slo);
        // The cluster acked too little while kafkabench idled.
        let p = ladder(vec![rate.clone()], 0.4);
        assert_eq!(limit(&searched(&p), &p, false), Limit::Cluster);
        // The sender was on a CPU all the time and fell behind: kafkabench is the limit.
        let p = ladder(vec![slip, rate], 0.97);
        assert_eq!(limit(&searched(&p), &p, false), Limit::Generator);
        // A busy sender that kept its schedule does not take the blame for an SLO miss.
        let p = ladder(vec![slo], 0.97);
        assert_eq!(limit(&searched(&p), &p, false), Limit::Slo);
    }

    #[test]
    fn records_waiting_to_be_sent_while_acks_come_fast_blame_the_sender() {
        // A starved sender thread (a busy machine): half a core, yet it fell behind, its
        // records waiting 900 ms to be sent and 40 ms to be acked.
        let slip = Miss::Slip {
            behind_secs: 1.0,
            allowed_secs: 0.25,
        };
        let p = vec![
            probe(1000.0, true, vec![], 0.3),
            waiting(2000.0, false, vec![slip.clone()], 0.5, (900.0, 40.0, 940.0)),
            waiting(2830.0, false, vec![slip.clone()], 0.5, (900.0, 40.0, 940.0)),
        ];
        assert_eq!(limit(&searched(&p), &p, false), Limit::Generator);
        // With `in_flight`, the wait to be sent is the wait for an ack: the cluster's.
        assert_eq!(limit(&searched(&p), &p, true), Limit::Cluster);
        // Records that waited in librdkafka for the cluster: the cluster's.
        let p = vec![
            probe(1000.0, true, vec![], 0.3),
            waiting(
                2000.0,
                false,
                vec![slip.clone()],
                0.5,
                (300.0, 600.0, 900.0),
            ),
            waiting(2830.0, false, vec![slip], 0.5, (300.0, 600.0, 900.0)),
        ];
        assert_eq!(limit(&searched(&p), &p, false), Limit::Cluster);
    }
}
