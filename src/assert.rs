//! Stage 6, assert: evaluates every `expect` line against the measured runs.
//!
//! An assertion is evaluated once per run its `when` admits. A metric without a selector means
//! that run; `metric[var=value]` means the run that differs from it only in those coordinates.
//! Instances that resolve to the same runs are evaluated once.

use std::slice::Iter;

use crate::exit::Outcome;
use crate::measure::{drain_metric, RunResult};
use crate::model::{Assertion, BinOp, BrokerPick, CmpOp, Expr, Metric, Test, Unit};
use crate::plan::{Instance, Plan, Reference};
use crate::run::Execution;

/// One assertion judged on one set of runs: numbers, not text. Reporters format it
/// (`report::verdict`), so the terminal, JSON, JUnit and HTML say the same thing.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The assertion as written.
    pub assertion: String,
    /// The runs it read, distinct, in the order its references name them.
    pub runs: Vec<RunRef>,
    /// The dimension of both sides (`ack.p50` and `5ms` are durations), in base units.
    pub unit: Unit,
    pub pass: bool,
    /// The left-hand side; None when it could not be measured.
    pub measured: Option<f64>,
    /// What it was compared with; None when a side could not be measured.
    pub bound: Option<Bound>,
    /// Why it did not pass; None when it passed.
    pub shortfall: Option<Shortfall>,
    /// The words of a verdict read from a result file written before verdicts kept their
    /// numbers: shown as they were recorded.
    pub recorded: Option<Recorded>,
    /// `with 95% confidence`: the interval of the median over the trials that was judged
    /// (None: the median, or the single run, was).
    pub interval: Option<Interval>,
    /// The broker whose figure was judged (`of broker 2`, each of `of every broker`).
    pub broker: Option<i32>,
}

/// The interval a confident assertion judged, in base units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    /// The level asked for, and what the interval covers (at least the level).
    pub level: f64,
    pub coverage: f64,
    pub trials: usize,
}

/// A run a verdict read: its index in the plan and its label.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRef {
    pub index: usize,
    pub label: String,
}

/// The bound a measured value was held to, in base units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    Compare(CmpOp, f64),
    /// `in lo..hi`, both ends included.
    Within(f64, f64),
}

impl Bound {
    /// The edge the value fell outside of (or the value compared with).
    pub fn edge(self, measured: f64) -> f64 {
        match self {
            Bound::Compare(_, r) => r,
            Bound::Within(lo, hi) => {
                if measured < lo {
                    lo
                } else {
                    hi
                }
            }
        }
    }
}

/// Why a verdict did not pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shortfall {
    /// A selector names a run the plan does not have.
    NoSuchRun,
    /// The run exists but was not executed (an interrupted or failed invocation).
    NotExecuted,
    /// The run (index) executed but the metric has no figure (e.g. no disk measurement).
    NotMeasured { run: usize },
    /// The run (index) was cut short (an interrupt, a lost cluster) and the figure cannot be
    /// known from part of it (e.g. `lost`: what was not read yet is not known to be lost).
    CutShort { run: usize },
    /// Measured, and outside the bound.
    OutOfBound,
    /// `with … confidence` on a run (index) with too few trials for an interval at that level
    /// (`coverage`: the most its trials give; 0 for one trial). `auto`: the level an
    /// auto-repeated run's looks need (above the stated one), for a run with `repeat = auto`.
    TooFewTrials {
        run: usize,
        trials: usize,
        coverage: f64,
        auto: Option<f64>,
    },
}

/// A verdict's words as an older result file recorded them.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub measured: String,
    pub bound: String,
    pub detail: Option<String>,
}

impl Verdict {
    /// The label of run `index`, when the verdict read it.
    pub fn label(&self, index: usize) -> Option<&str> {
        self.runs
            .iter()
            .find(|r| r.index == index)
            .map(|r| r.label.as_str())
    }
}

/// A verdict per assertion instance, in the order of the assertions, then of the runs. The
/// instances are the plan's (`plan::resolve`): each reference is read from the run the plan
/// resolved it to, so `plan` shows exactly what is judged here.
pub fn evaluate(p: &Plan, results: &[RunResult]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for (a, planned) in p.assertions.iter().zip(&p.expect) {
        for inst in &planned.instances {
            // Only runs that were executed can be judged.
            if inst
                .runs
                .iter()
                .any(|i| !results.iter().any(|r| r.index == *i))
            {
                continue;
            }
            match a.broker() {
                // One verdict per broker that acknowledged records in the instance's run.
                Some(BrokerPick::Every) => {
                    let ids = inst
                        .refs
                        .first()
                        .and_then(|rf| results.iter().find(|r| r.index == rf.run))
                        .map(RunResult::broker_ids)
                        .unwrap_or_default();
                    if ids.is_empty() {
                        out.push(judge(p, a, inst, results, None));
                    }
                    for id in ids {
                        out.push(judge(p, a, inst, results, Some(id)));
                    }
                }
                Some(BrokerPick::One(id)) => out.push(judge(p, a, inst, results, Some(id))),
                None => out.push(judge(p, a, inst, results, None)),
            }
        }
    }
    out
}

/// The value of `e`, taking its metric references from `refs` in the order written (the order
/// `plan::resolve` walked them in). `from` is the run the instance is about: a drain figure
/// read from a run without a drain is taken over `from`'s drain (the same seconds). `at` is
/// the broker `of every broker` is judged on.
fn value(
    e: &Expr,
    refs: &mut Iter<Reference>,
    results: &[RunResult],
    (from, at): (Option<&RunResult>, Option<i32>),
) -> Result<f64, Shortfall> {
    match e {
        Expr::Const(x, _) => Ok(*x),
        Expr::Metric { metric, broker, .. } => {
            let i = refs.next().ok_or(Shortfall::NoSuchRun)?.run;
            let r = results
                .iter()
                .find(|r| r.index == i)
                .ok_or(Shortfall::NotExecuted)?;
            let v = match (metric, from, broker) {
                (_, _, Some(BrokerPick::One(id))) => r.broker_metric(*metric, *id),
                (_, _, Some(BrokerPick::Every)) => at.and_then(|id| r.broker_metric(*metric, id)),
                (Metric::DrainLatency(kind, stat), Some(of), None) if r.drain.is_none() => {
                    drain_metric(r, of, *kind, *stat)
                }
                _ => r.metric(*metric),
            };
            v.ok_or(if r.status.is_complete() {
                Shortfall::NotMeasured { run: i }
            } else {
                Shortfall::CutShort { run: i }
            })
        }
        Expr::Binary(l, op, r) => {
            let (l, r) = (
                value(l, refs, results, (from, at))?,
                value(r, refs, results, (from, at))?,
            );
            Ok(match op {
                BinOp::Add => l + r,
                BinOp::Sub => l - r,
                BinOp::Mul => l * r,
                BinOp::Div => l / r,
            })
        }
    }
}

fn judge(
    p: &Plan,
    a: &Assertion,
    inst: &Instance,
    results: &[RunResult],
    broker: Option<i32>,
) -> Verdict {
    let mut v = Verdict {
        assertion: a.text.clone(),
        runs: inst
            .runs
            .iter()
            .map(|&index| RunRef {
                index,
                label: p.runs[index].label.clone(),
            })
            .collect(),
        unit: a.lhs.unit(),
        pass: false,
        measured: None,
        bound: None,
        shortfall: None,
        recorded: None,
        interval: None,
        broker,
    };
    let refs = &mut inst.refs.iter();
    let from = (results.iter().find(|r| r.index == inst.from), broker);
    let lhs = match value(&a.lhs, refs, results, from) {
        Ok(x) => x,
        Err(e) => {
            v.shortfall = Some(e);
            return v;
        }
    };
    v.measured = Some(lhs);
    if let Some(level) = a.confidence {
        return confident(v, a, level, inst, results);
    }
    let bound = match &a.test {
        Test::Compare(op, rhs) => value(rhs, refs, results, from).map(|r| Bound::Compare(*op, r)),
        Test::Within(lo, hi) => value(lo, refs, results, from)
            .and_then(|l| value(hi, refs, results, from).map(|h| Bound::Within(l, h))),
    };
    match bound {
        Ok(bound) => {
            v.bound = Some(bound);
            v.pass = holds(lhs, bound);
            if !v.pass {
                v.shortfall = Some(Shortfall::OutOfBound);
            }
        }
        Err(e) => v.shortfall = Some(e),
    }
    v
}

/// `with … confidence`: the whole interval of the metric's median over the run's trials must
/// hold (the check stage made sure it is one metric against constants).
fn confident(
    mut v: Verdict,
    a: &Assertion,
    level: f64,
    inst: &Instance,
    results: &[RunResult],
) -> Verdict {
    let (Expr::Metric { metric, .. }, Some(r)) = (
        &a.lhs,
        inst.refs
            .first()
            .and_then(|rf| results.iter().find(|r| r.index == rf.run)),
    ) else {
        v.shortfall = Some(Shortfall::NoSuchRun);
        return v;
    };
    let values = match &r.trials {
        Some(t) => t.values(*metric),
        None => r.own_metric(*metric).into_iter().collect(),
    };
    let constant = |e: &Expr| match e {
        Expr::Const(x, _) => *x,
        _ => f64::NAN,
    };
    let bound = match &a.test {
        Test::Compare(op, rhs) => Bound::Compare(*op, constant(rhs)),
        Test::Within(lo, hi) => Bound::Within(constant(lo), constant(hi)),
    };
    v.bound = Some(bound);
    // An auto-repeated run stopped by looking: its interval is made at the looks' level, so
    // that it still covers at `level` whichever look the trials stopped at.
    let at = r
        .trials
        .as_ref()
        .and_then(|t| t.auto.as_ref())
        .map_or(level, |a| a.adjusted(level));
    let Some(e) = crate::measure::stats::median_interval(&values, at) else {
        v.shortfall = Some(Shortfall::NotMeasured { run: r.index });
        return v;
    };
    if values.len() < 2 || e.coverage < at {
        v.shortfall = Some(Shortfall::TooFewTrials {
            run: r.index,
            trials: values.len(),
            coverage: if values.len() < 2 { 0.0 } else { e.coverage },
            auto: r.trials.as_ref().and_then(|t| t.auto.as_ref()).map(|_| at),
        });
        return v;
    }
    v.interval = Some(Interval {
        lo: e.lo,
        hi: e.hi,
        level,
        coverage: e.coverage,
        trials: values.len(),
    });
    // The end of the interval nearest the bound decides.
    v.pass = match bound {
        Bound::Compare(op @ (CmpOp::Lt | CmpOp::Le), b) => op.holds(e.hi, b),
        Bound::Compare(op, b) => op.holds(e.lo, b),
        Bound::Within(l, h) => e.lo >= l && e.hi <= h,
    };
    if !v.pass {
        v.shortfall = Some(Shortfall::OutOfBound);
    }
    v
}

fn holds(lhs: f64, bound: Bound) -> bool {
    match bound {
        Bound::Compare(op, r) => op.holds(lhs, r),
        Bound::Within(l, h) => lhs >= l && lhs <= h,
    }
}

/// The exit outcome: a failed run (or a report file that could not be written) beats a failed
/// assertion, an interrupt beats both.
pub fn outcome(exec: &Execution, verdicts: &[Verdict], output_failed: bool) -> Outcome {
    Outcome::decide(
        exec.interrupted,
        exec.failure.is_some() || output_failed,
        verdicts.iter().any(|v| !v.pass),
    )
}
