//! A search's result: the run's own figures (those of the passing probe nearest the capacity)
//! with everything the search did and found in `capacity`.

use std::time::Duration;

use super::limit::limit;
use crate::measure::capacity::{
    Answer, Band, CanaryRun, CapacityFigures, HoldFigures, Limit, NotNarrowed, Probe, Search,
    SloLine, Unstable,
};
use crate::measure::RunResult;
use crate::model::{CapacitySearch, Expr, Test};
use crate::plan::RunPlan;

/// What a search ran: its short probes, its canaries and its long probes, each in order.
pub(super) struct Ran {
    pub probes: Vec<Probe>,
    pub canaries: Vec<CanaryRun>,
    pub long: Vec<Probe>,
}

/// The search's result: the run's figures are those of the passing probe nearest the
/// capacity (or a band's estimate) at or below it (the last probe when there is none).
pub(super) fn result(
    rp: &RunPlan,
    c: &CapacitySearch,
    s: &Search,
    ran: Ran,
    stopped: Option<Limit>,
    elapsed: Duration,
) -> RunResult {
    let Ran {
        probes,
        canaries,
        long,
    } = ran;
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
    let band = match answer {
        Answer::Capacity { low, high, .. } | Answer::NotNarrowed { low, high, .. } => {
            Some(Band { low, high })
        }
        _ => None,
    };
    let carried = capacity.and_then(|x| carried(x, band, &probes));
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
        band,
        not_narrowed: match answer {
            Answer::NotNarrowed { estimate, .. } => Some(NotNarrowed { estimate }),
            _ => None,
        },
        shallow: match answer {
            Answer::NotNarrowed { shallow, .. } => shallow,
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
        probe_secs: c.probe.as_secs_f64(),
        carried,
        hold: s.hold().map(|h| HoldFigures {
            secs: h.length().as_secs_f64(),
            answer: h.answer(),
            probes: long,
        }),
    }));
    r
}

/// What the capacity carries: the capacity scaled by the median share of their target that
/// the passing probes in its band (at the capacity when there is none) acknowledged, never
/// above it. None when no such probe passed.
fn carried(capacity: f64, band: Option<Band>, probes: &[Probe]) -> Option<f64> {
    let (low, high) = band.map_or((capacity, capacity), |b| (b.low, b.high));
    let mut shares: Vec<f64> = probes
        .iter()
        .filter(|p| p.pass && p.target > 0.0)
        .filter(|p| p.target >= low * (1.0 - 1e-9) && p.target <= high * (1.0 + 1e-9))
        .map(|p| p.achieved / p.target)
        .collect();
    if shares.is_empty() {
        return None;
    }
    shares.sort_by(f64::total_cmp);
    let median = shares[shares.len() / 2];
    Some(capacity * median.min(1.0))
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
