//! A capacity search's run: probes at the rates `measure::capacity::Search` asks for, each a
//! fixed-rate run of its own on fresh topics (the run's lifecycle, consumers and transactions
//! as any run has them; its fault timeline is not played), judged as it ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::error::RunError;
use super::lifecycle;
use super::options::RunOptions;
use super::progress::Position;
use super::round::{ProbeRound, Round};
use crate::format::{compact_rate, human_duration};
use crate::measure::capacity::{
    judge, Answer, Band, CanaryRun, CapacityFigures, Limit, Miss, NotNarrowed, Probe, Search,
    SloLine, Step, Unstable, Verdict,
};
use crate::measure::{RunResult, RunStatus};
use crate::model::capacity::PROBE_OVERHEAD;
use crate::model::{CapacitySearch, Expr, Stat, Test};
use crate::plan::RunPlan;

/// Runs the search of `rp`; its result is the last probe at the capacity (or the last probe
/// when none passed) with every probe in `capacity`. A probe that cannot run fails the run,
/// as a run that cannot run does.
pub(super) async fn search(
    rp: &RunPlan,
    c: &CapacitySearch,
    round: &Round,
    at: Position,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
    notes: &mut Vec<String>,
) -> Result<RunResult, RunError> {
    let started = Instant::now();
    let mut s = Search::new(c);
    let mut probes: Vec<Probe> = Vec::new();
    let mut stopped: Option<Limit> = None;
    if !rp.faults.is_empty() {
        notes.push(format!(
            "run {}: the fault timeline is not played during a capacity search",
            crate::plan::RunNo(rp.index)
        ));
    }
    let mut canaries: Vec<CanaryRun> = Vec::new();
    // How a canary cut short (a lost cluster, an interrupt) ended the search.
    let mut cut: Option<RunStatus> = None;
    loop {
        let (rate, trial, canary) = match s.next() {
            Step::Done => break,
            Step::Probe { rate, trial } => (rate, trial, None),
            Step::Canary { rate, nth } => (rate, 1, Some(nth)),
        };
        if interrupt.load(Ordering::SeqCst) {
            stopped = Some(Limit::Stopped);
            break;
        }
        // A probe costs what the probes (and canaries) so far took on average (the plan's
        // guess before any).
        let each = match probes.len() + canaries.len() {
            0 => c.probe + c.warmup + PROBE_OVERHEAD,
            n => started.elapsed() / n as u32,
        };
        let left = c.budget.map(|b| b.saturating_sub(started.elapsed()));
        if left.is_some_and(|l| l < each) {
            stopped = Some(Limit::Budget);
            break;
        }
        if let Some(nth) = canary {
            let after = probes.len() as u32;
            let canary = round.probe(ProbeRound::new(after, Some(nth), rate));
            match run_canary(rp, c, &canary, nth, at, opts, &interrupt, notes).await {
                Ok(run) => {
                    s.record(run.pass);
                    canaries.push(run);
                    continue;
                }
                Err(status) => {
                    cut = Some(status);
                    stopped = Some(Limit::Stopped);
                    break;
                }
            }
        }
        let number = probes.len() as u32 + 1;
        let this = ProbeRound::new(number, None, rate);
        let mut probe = this.plan(rp, c);
        let probe_round = round.probe(this);
        probe.label = progress_label(rp, &s, number, rate, trial, left);
        let probe_at = Position {
            probe: Some((number, rate)),
            trial: (c.trials > 1).then_some((trial, c.trials)).or(at.trial),
            ..at
        };
        let r = match lifecycle::one(&probe, &probe_round, probe_at, opts, &interrupt, notes).await
        {
            Ok(r) => r,
            Err(RunError::Interrupted) if !probes.is_empty() => {
                stopped = Some(Limit::Stopped);
                break;
            }
            Err(e) => return Err(e),
        };
        let misses = judge(&r, rate, c);
        let pass = misses.is_empty();
        let verdict = if pass {
            Verdict::Pass
        } else if misses.iter().any(|m| matches!(m, Miss::Rate { .. })) {
            Verdict::Overload
        } else {
            Verdict::Fail
        };
        let complete = r.status.is_complete();
        probes.push(Probe {
            number,
            target: rate,
            trial,
            achieved: r.throughput_msgs,
            pass,
            misses,
            result: Box::new(r),
        });
        if !complete {
            stopped = Some(Limit::Stopped);
            break;
        }
        s.record(verdict);
    }
    // A probe or canary cut short (a lost cluster, an interrupt) cuts the search short with
    // its status.
    let status = match (cut, probes.last()) {
        (Some(status), _) => status,
        (None, Some(p)) if !p.result.status.is_complete() => p.result.status.clone(),
        _ if interrupt.load(Ordering::SeqCst) => RunStatus::Interrupted,
        _ => RunStatus::Complete,
    };
    let mut r = result(rp, c, &s, (probes, canaries), stopped, started.elapsed());
    r.status = status;
    Ok(r)
}

/// Runs the `nth` canary after probe `after` at `rate`, a run like a probe's on fresh topics,
/// judged as a probe is. Its status when it was cut short (an interrupt, a lost cluster): the
/// search stops there with it, as it does when a probe is cut short. A canary that cannot start
/// is a failed canary, not a failed search: the next probe says what is wrong.
#[allow(clippy::too_many_arguments)]
async fn run_canary(
    rp: &RunPlan,
    c: &CapacitySearch,
    round: &Round,
    nth: u32,
    at: Position,
    opts: &RunOptions,
    interrupt: &Arc<AtomicBool>,
    notes: &mut Vec<String>,
) -> Result<CanaryRun, RunStatus> {
    let started = Instant::now();
    let probe = round.probe.as_ref().expect("a canary is a probe's round");
    let (after, rate) = (probe.number, probe.rate);
    let mut plan = probe.plan(rp, c);
    plan.label = format!(
        "{} · canary {nth} at {} after probe {after} failed",
        rp.label,
        compact_rate(rate)
    );
    let canary_at = Position {
        probe: Some((after, rate)),
        ..at
    };
    let (pass, misses) = match lifecycle::one(&plan, round, canary_at, opts, interrupt, notes).await
    {
        Ok(r) if !r.status.is_complete() => return Err(r.status),
        Ok(r) => {
            let misses = judge(&r, rate, c);
            (misses.is_empty(), misses)
        }
        Err(RunError::Interrupted) => return Err(RunStatus::Interrupted),
        Err(e) => {
            notes.push(format!(
                "canary {nth} after probe {after} could not run: {e}"
            ));
            (false, Vec::new())
        }
    };
    Ok(CanaryRun {
        after,
        target: rate,
        pass,
        misses,
        secs: started.elapsed().as_secs_f64(),
    })
}

/// What progress shows while a probe runs: the probe, the bracket and the time left.
fn progress_label(
    rp: &RunPlan,
    s: &Search,
    number: u32,
    rate: f64,
    trial: u32,
    left: Option<Duration>,
) -> String {
    let mut l = format!("{} · probe {number} at {}", rp.label, compact_rate(rate));
    if trial > 1 {
        l.push_str(&format!(" (trial {trial})"));
    }
    match s.answer() {
        Answer::Capacity { rate, low, high } => l.push_str(&format!(
            " · about {} ({}–{})",
            compact_rate(rate),
            compact_rate(low),
            compact_rate(high)
        )),
        Answer::AtLeast { rate } => l.push_str(&format!(" · passed {}", compact_rate(rate))),
        Answer::NotNarrowed { low, high, .. } => {
            l.push_str(&format!(" · {}–{}", compact_rate(low), compact_rate(high)))
        }
        Answer::Unstable { passes, probes, .. } => {
            l.push_str(&format!(" · met in {passes} of {probes}"))
        }
        Answer::NonePassed => {}
    }
    if let Some(left) = left {
        l.push_str(&format!(
            " · {} left",
            human_duration(left.as_secs_f64().round())
        ));
    }
    l
}

/// The search's result: the run's figures are those of the passing probe nearest the
/// capacity (or a band's estimate) at or below it (the last probe when there is none).
fn result(
    rp: &RunPlan,
    c: &CapacitySearch,
    s: &Search,
    (probes, canaries): (Vec<Probe>, Vec<CanaryRun>),
    stopped: Option<Limit>,
    elapsed: Duration,
) -> RunResult {
    let answer = s.answer();
    let capacity = s.capacity();
    // Not narrowed, the figures shown are those nearest the fit's estimate.
    let near = match answer {
        Answer::NotNarrowed { estimate, .. } => Some(estimate),
        _ => capacity,
    };
    let shown = near
        .and_then(|c| {
            probes
                .iter()
                .filter(|p| p.pass && p.target <= c * (1.0 + 1e-9))
                .max_by(|a, b| a.target.total_cmp(&b.target).then(a.number.cmp(&b.number)))
        })
        .or(probes.last());
    let mut r = shown.map_or_else(RunResult::default, |p| (*p.result).clone());
    r.index = rp.index;
    r.label = rp.label.clone();
    r.topic = rp.topic.name.clone();
    r.coords = rp
        .cell
        .coords
        .iter()
        .map(|c| (c.dim.clone(), c.text.clone()))
        .collect();
    // With `in_flight`, a record waits for an earlier one's ack: its send delay is the
    // cluster's, not the sender's.
    let closed = rp.workload.in_flight.is_some();
    // The time budget cut the search short of any failure: the answer is a lower bound.
    let stopped = stopped.filter(|l| *l != Limit::Budget || !probes.iter().any(|p| !p.pass));
    let limit = stopped.unwrap_or_else(|| limit(s, &probes, closed));
    r.capacity = Some(Box::new(CapacityFigures {
        capacity,
        limit,
        bracket: s.bracket(),
        slo: c.slo.iter().map(|a| a.text.clone()).collect(),
        slo_lines: slo_lines(c),
        tolerance: c.tolerance,
        precision: c.precision,
        trials: c.trials,
        non_monotone: s.non_monotone(),
        noisy: s.noisy(),
        probes,
        elapsed_secs: elapsed.as_secs_f64(),
        reliability: c.reliability,
        band: match answer {
            Answer::Capacity { low, high, .. } | Answer::NotNarrowed { low, high, .. } => {
                Some(Band { low, high })
            }
            _ => None,
        },
        not_narrowed: match answer {
            Answer::NotNarrowed { estimate, .. } => Some(NotNarrowed { estimate }),
            _ => None,
        },
        unstable: match answer {
            Answer::Unstable {
                passes,
                probes,
                low,
                high,
            } => Some(Unstable {
                passes,
                probes,
                low,
                high,
            }),
            _ => None,
        },
        max_probes: c.max_probes(),
        canaries,
    }));
    r
}

/// What kept the capacity down, read from the failures at the lowest failing rate above it
/// (at `from` when nothing passed): kafkabench itself when that probe fell behind its
/// schedule while kafkabench was saturated or its records waited to be sent, the cluster when
/// it did not keep up otherwise, the SLO when only a condition broke.
fn limit(s: &Search, probes: &[Probe], rp_closed_loop: bool) -> Limit {
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

/// The SLO's `metric op constant` conditions, for the plot.
fn slo_lines(c: &CapacitySearch) -> Vec<SloLine> {
    c.slo
        .iter()
        .filter_map(|a| match (&a.lhs, &a.test) {
            (Expr::Metric { .. }, Test::Compare(op, Expr::Const(bound, _))) => Some(SloLine {
                condition: a.text.clone(),
                metric: metric_text(&a.text),
                op: op.symbol().to_string(),
                bound: *bound,
            }),
            _ => None,
        })
        .collect()
}

/// The metric's name as written: the condition's text up to its operator.
fn metric_text(condition: &str) -> String {
    condition
        .split(['<', '>', '=', '!', ' '])
        .next()
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{new_histogram, record, GeneratorLoad, LatencySummary};
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
                probe(4000.0, false, last, busy),
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
            waiting(4000.0, false, vec![slip.clone()], 0.5, (900.0, 40.0, 940.0)),
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
            waiting(4000.0, false, vec![slip], 0.5, (300.0, 600.0, 900.0)),
        ];
        assert_eq!(limit(&searched(&p), &p, false), Limit::Cluster);
    }
}
