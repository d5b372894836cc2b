//! A probe's verdict: did it sustain its target, and did it meet every condition of the SLO?
//! Each miss carries its figures, so a failed probe says what failed and by how much. A long
//! probe (`hold`) must also end steady.

use std::time::Duration;

use super::Miss;
use crate::measure::steady::SteadyAfter;
use crate::measure::RunResult;
use crate::model::{BinOp, CapacitySearch, Expr, Test};

/// A thread (or the process, per core) on a CPU at least this share of the time has no
/// capacity to spare: the load generator, not the cluster, is then the limit.
pub const GENERATOR_BUSY: f64 = 0.9;

/// Why the probe of `r` at `target` records per second, measured for `length`, failed; empty
/// when it passed.
pub fn judge(r: &RunResult, target: f64, search: &CapacitySearch, length: Duration) -> Vec<Miss> {
    let mut misses = Vec::new();
    if let Some(reason) = r.status.reason() {
        misses.push(Miss::Incomplete { reason });
    }
    let tol = search.tolerance;
    let least = (1.0 - tol) * target;
    if r.throughput_msgs < least {
        misses.push(Miss::Rate {
            achieved: r.throughput_msgs,
            least,
        });
    }
    // How far the last sends fell behind their due times.
    let allowed_secs = tol * length.as_secs_f64();
    if let Some(behind_secs) = r.send_delay.stat_secs(crate::model::Stat::Max) {
        if behind_secs > allowed_secs {
            misses.push(Miss::Slip {
                behind_secs,
                allowed_secs,
            });
        }
    }
    let lost = r.delivery.as_ref().and_then(|d| d.lost).unwrap_or(0);
    if r.failed + lost > 0 {
        misses.push(Miss::Failed {
            records: r.failed + lost,
        });
    }
    if let Some(growth) = lag_growth(r) {
        let allowed = tol * target;
        if growth > allowed {
            misses.push(Miss::Lag { growth, allowed });
        }
    }
    for a in &search.slo {
        let measured = value(&a.lhs, r);
        let (holds, bound) = match &a.test {
            Test::Compare(op, rhs) => match (measured, value(rhs, r)) {
                (Some(m), Some(b)) => (op.holds(m, b), Some(b)),
                (_, b) => (false, b),
            },
            Test::Within(lo, hi) => match (measured, value(lo, r), value(hi, r)) {
                (Some(m), Some(l), Some(h)) => (m >= l && m <= h, Some(if m < l { l } else { h })),
                _ => (false, None),
            },
        };
        if !holds {
            let mut read = Vec::new();
            a.lhs.metrics_into(&mut read);
            misses.push(Miss::Slo {
                condition: a.text.clone(),
                measured,
                bound,
                unit: Some(a.lhs.unit()),
                read_side: read.iter().any(|m| m.needs_consumer()),
            });
        }
    }
    misses
}

/// A long probe whose series still trended at its end: the steady-state detector (run on
/// every run's series as it is derived) found one never steady. A probe too short for the
/// detector to tell is not judged so.
pub fn unsteady(r: &RunResult) -> Option<Miss> {
    match r.steady_after.as_ref()? {
        SteadyAfter::Never { series } => Some(Miss::Unsteady { series: *series }),
        _ => None,
    }
}

/// The value of an SLO expression on one probe (an SLO reads only its own probe).
fn value(e: &Expr, r: &RunResult) -> Option<f64> {
    match e {
        Expr::Const(x, _) => Some(*x),
        Expr::Metric { metric, .. } => r.metric(*metric),
        Expr::Binary(l, op, rhs) => {
            let (l, rhs) = (value(l, r)?, value(rhs, r)?);
            Some(match op {
                BinOp::Add => l + rhs,
                BinOp::Sub => l - rhs,
                BinOp::Mul => l * rhs,
                BinOp::Div => l / rhs,
            })
        }
    }
}

/// The consumers' lag trend over the probe, records per second: the least-squares slope of
/// the lag series (intervals shorter than half the interval's width left out: a last partial
/// one says little). None without consumers or with fewer than three intervals.
pub(crate) fn lag_growth(r: &RunResult) -> Option<f64> {
    let s = r.series.as_ref()?;
    let pts: Vec<(f64, f64)> = s
        .points
        .iter()
        .filter(|p| p.span_secs >= 0.5 * s.interval_secs)
        .filter_map(|p| Some((p.t_secs + p.span_secs / 2.0, p.lag? as f64)))
        .collect();
    slope(&pts)
}

/// Least-squares slope of y over x; None for fewer than three points.
pub(crate) fn slope(pts: &[(f64, f64)]) -> Option<f64> {
    if pts.len() < 3 {
        return None;
    }
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}
