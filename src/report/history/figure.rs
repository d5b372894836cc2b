//! The figures of a series and their change points: each figure's values per result (every
//! trial's), a paced run's throughput as a share of its plan, and the search over all the
//! figures of a series as one family (`measure::changepoint::family`).

use super::{Change, Figure, SegmentSummary, Series};
use crate::measure::changepoint::{self, ChangePoint, Found, Input, Scale, Settings};
use crate::measure::{LatencySummary, RunResult};
use crate::model::{LatencyKind, Metric, Stat, Unit};
use crate::report::compare::{better, Better};

/// A figure's values before the search.
struct Values {
    name: String,
    metric: Metric,
    results: Vec<usize>,
    values: Vec<Vec<f64>>,
    /// Each result's planned rate, when the values are throughput ÷ plan.
    plan: Option<Vec<f64>>,
    scale: Scale,
}

/// Every figure of `names` that some result measured, with its change points: the figures
/// searched as one family (Holm across them).
pub(super) fn figures(
    s: &Series,
    runs: &[&RunResult],
    names: &[(String, Metric)],
    settings: &Settings,
) -> Vec<Figure> {
    let measured: Vec<Values> = (names.iter())
        .filter_map(|(name, m)| values(runs, name, *m))
        .collect();
    let inputs: Vec<Input> = (measured.iter())
        .map(|v| Input {
            points: &v.values,
            scale: v.scale,
            seed: settings.seed ^ fnv1a(&[&s.scenario, &s.run, &v.name]),
        })
        .collect();
    let found = changepoint::family(&inputs, settings);
    (measured.into_iter())
        .zip(found)
        .map(|(v, f)| figure(s, v, f))
        .collect()
}

/// The values of one figure; None when no result measured it.
fn values(runs: &[&RunResult], name: &str, m: Metric) -> Option<Values> {
    let (mut results, mut values, mut plan) = (Vec::new(), Vec::new(), Vec::new());
    for (i, r) in runs.iter().enumerate() {
        let v = run_values(r, m);
        if !v.is_empty() {
            results.push(i);
            values.push(v);
            plan.push(r.target_rate.filter(|t| *t > 0.0));
        }
    }
    if results.is_empty() {
        return None;
    }
    // A paced run's throughput is the plan when the cluster keeps up: what it says is how far
    // the run fell short of it, the same whatever rate was planned.
    let plan: Option<Vec<f64>> = if m == Metric::Throughput {
        plan.into_iter().collect()
    } else {
        None
    };
    if let Some(rates) = &plan {
        for (v, rate) in values.iter_mut().zip(rates) {
            v.iter_mut().for_each(|x| *x /= rate);
        }
    }
    // A latency's trials can hold a stall 100× its level (a busy machine); on a log scale it
    // no longer outweighs a change of the level itself.
    let scale = if m.unit() == Unit::Duration {
        Scale::Log
    } else {
        Scale::Linear
    };
    Some(Values {
        name: name.to_string(),
        metric: m,
        results,
        values,
        plan,
        scale,
    })
}

fn figure(s: &Series, v: Values, f: Found) -> Figure {
    let dir = better(v.metric);
    let change = |c: &ChangePoint| {
        let index = v.results[c.index];
        let p = &s.results[index];
        let ratio = c.change();
        let verdict = match (dir, ratio) {
            (Better::Neither, _) | (_, None) => "changed",
            (Better::Higher, Some(r)) if r > 0.0 => "better",
            (Better::Lower, Some(r)) if r < 0.0 => "better",
            _ => "worse",
        };
        Change {
            index,
            started_at: p.started_at.clone(),
            run_id: p.run_id.clone(),
            before: c.before,
            after: c.after,
            change_pct: ratio.map(|r| r * 100.0),
            p_value: c.p_value,
            p_tail: c.p_tail,
            level: c.level,
            permutations: c.permutations,
            verdict,
            versions: (s.versions.iter())
                .filter(|x| x.index.abs_diff(index) <= 1)
                .map(|x| version_words(x, index))
                .collect(),
        }
    };
    let change_points = f.change_points.iter().map(change).collect();
    let held_back = f.small.iter().map(change).collect();
    // Segments in results: from the first result of one to the first of the next.
    let segments = (f.segments.iter())
        .map(|g| SegmentSummary {
            from: v.results[g.start],
            to: v.results.get(g.end).copied().unwrap_or(s.results.len()),
            summary: g.summary,
        })
        .collect();
    Figure {
        name: v.name,
        metric: v.metric,
        better: match dir {
            Better::Higher => "higher",
            Better::Lower => "lower",
            Better::Neither => "neither",
        },
        against_plan: v.plan,
        scale: f.scale,
        summary: match f.scale {
            Scale::Linear => "median",
            Scale::Log => "geometric mean",
        },
        results: v.results,
        values: v.values,
        segments,
        change_points,
        held_back,
    }
}

/// `kafkabench 0.1.0 → 0.2.0 one result before`
fn version_words(v: &super::VersionChange, at: usize) -> String {
    let when = match v.index as i64 - at as i64 {
        0 => "at this result",
        -1 => "one result before",
        _ => "one result after",
    };
    format!("{} {} → {} {when}", v.what, v.from, v.to)
}

/// FNV-1a over the parts (each followed by a 0 byte): a seed that depends on what is analysed,
/// not on the order it was found in.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The values of `m` for a run: each trial's when it was repeated, else its own one.
fn run_values(r: &RunResult, m: Metric) -> Vec<f64> {
    let values: Vec<f64> = match r.trials.as_deref().filter(|t| t.results.len() >= 2) {
        Some(t) => t.results.iter().filter_map(|x| value(x, m)).collect(),
        None => value(r, m).into_iter().collect(),
    };
    values.into_iter().filter(|v| v.is_finite()).collect()
}

/// A figure of one run or trial in base units. A latency's p50, p90, p99 and p99.9 are the
/// percentiles the file keeps, so a file trimmed of its histograms reads the same as the
/// original; other statistics come from the histogram.
fn value(r: &RunResult, m: Metric) -> Option<f64> {
    // A search that could not say its capacity (no stable one, a band not narrowed) has no
    // point in the series: `compare` and `expect` read it as 0, but a series of those zeros
    // would be change points that no cluster made. A search where nothing passed stays 0.
    let unanswered = |c: &crate::measure::capacity::CapacityFigures| {
        c.unstable.is_some() || c.not_narrowed.is_some()
    };
    if m == Metric::Capacity && r.capacity.as_deref().is_some_and(unanswered) {
        return None;
    }
    let Metric::Latency(kind, stat) = m else {
        return r.own_metric(m);
    };
    let s: &LatencySummary = match kind {
        LatencyKind::Ack => &r.ack,
        LatencyKind::Service => &r.service,
        LatencyKind::SendDelay => &r.send_delay,
        LatencyKind::E2e => r.e2e.as_ref()?,
        LatencyKind::TxnCommit => &r.txn.as_ref()?.commit,
        LatencyKind::ShareAck => &r.share.as_ref()?.ack,
    };
    if s.count == 0 {
        return None;
    }
    let ms = match stat {
        Stat::Percentile(50.0) => s.p50_ms,
        Stat::Percentile(90.0) => s.p90_ms,
        Stat::Percentile(99.0) => s.p99_ms,
        Stat::Percentile(99.9) => s.p999_ms,
        _ => return r.own_metric(m),
    };
    Some(ms / 1e3)
}

/// A change's summaries in the units of its metric: a share of the plan times the planned
/// rates of the results on either side of it.
pub(super) fn in_units(f: &Figure, c: &Change) -> (f64, f64) {
    let Some(rates) = &f.against_plan else {
        return (c.before, c.after);
    };
    // The change's result is in f.results; the one before it, just before that.
    let k = f.results.partition_point(|r| *r < c.index);
    let rate = |k: usize| rates.get(k).copied().unwrap_or(1.0);
    (c.before * rate(k.saturating_sub(1)), c.after * rate(k))
}
