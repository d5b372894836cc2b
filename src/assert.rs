//! Stage 6, assert: evaluates every `expect` line against the measured runs.
//!
//! An assertion is evaluated once per run its `when` admits. A metric without a selector means
//! that run; `metric[var=value]` means the run that differs from it only in those coordinates.
//! Instances that resolve to the same runs are evaluated once.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::exit::Outcome;
use crate::measure::RunResult;
use crate::model::{Assertion, BinOp, CmpOp, Expr, Test, Unit};
use crate::plan::Plan;
use crate::run::Execution;

/// One assertion judged on one set of runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Verdict {
    pub assertion: String,
    /// The runs it was evaluated on (labels), e.g. `linger=5ms codec=zstd`.
    pub runs: Vec<String>,
    pub pass: bool,
    /// Measured left-hand side, formatted with its unit.
    pub measured: String,
    /// The bound it was compared with, formatted.
    pub bound: String,
    /// Why it failed: by how much, or what was not measured.
    pub detail: Option<String>,
}

/// Why a verdict did not pass. All wording of the family is in the one `Display` below.
#[derive(Clone, Debug, PartialEq)]
enum Shortfall {
    /// A selector names a run the plan does not have.
    NoSuchRun,
    /// The run exists but was not executed (an interrupted or failed invocation).
    NotExecuted,
    /// The run executed but the metric has no figure (e.g. no disk measurement).
    NotMeasured { run: String },
    /// The run was cut short (an interrupt, a lost cluster) and the figure cannot be known
    /// from part of it (e.g. `lost`: what was not read yet is not known to be lost).
    CutShort { run: String },
    /// Measured, and outside the bound; `by` is the relative distance when the bound is not 0.
    OutOfBound {
        measured: String,
        bound: String,
        by: Option<f64>,
    },
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shortfall::NoSuchRun => f.write_str("no such run"),
            Shortfall::NotExecuted => f.write_str("the run did not execute"),
            Shortfall::NotMeasured { run } => write!(f, "not measured in run `{run}`"),
            Shortfall::CutShort { run } => {
                write!(f, "run `{run}` was cut short: this figure is incomplete")
            }
            Shortfall::OutOfBound {
                measured,
                bound,
                by,
            } => {
                write!(f, "measured {measured} against {bound}")?;
                match by {
                    Some(by) => write!(f, " ({:+.1}%)", by * 100.0),
                    None => Ok(()),
                }
            }
        }
    }
}

/// A verdict per assertion instance, in the order of the assertions, then of the runs. The
/// instances are the plan's (`plan::resolve`), so `plan` shows exactly what is judged here.
pub fn evaluate(p: &Plan, results: &[RunResult]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for (a, planned) in p.assertions.iter().zip(&p.expect) {
        for inst in &planned.instances {
            let refs: Vec<usize> = inst.refs.iter().map(|r| r.run).collect();
            // Only runs that were executed can be judged.
            if refs.iter().any(|i| !results.iter().any(|r| r.index == *i)) {
                continue;
            }
            out.push(judge(p, inst.from, a, results, &refs));
        }
    }
    out
}

/// The run a metric reference points at from run `ci`.
fn target(p: &Plan, ci: usize, select: &[(String, crate::model::Scalar)]) -> Option<usize> {
    crate::plan::target(&p.runs, ci, select)
}

fn value(p: &Plan, ci: usize, e: &Expr, results: &[RunResult]) -> Result<f64, Shortfall> {
    match e {
        Expr::Const(x, _) => Ok(*x),
        Expr::Metric { metric, select, .. } => {
            let i = target(p, ci, select).ok_or(Shortfall::NoSuchRun)?;
            let r = results
                .iter()
                .find(|r| r.index == i)
                .ok_or(Shortfall::NotExecuted)?;
            r.metric(*metric).ok_or_else(|| {
                let run = r.label.clone();
                if r.status.is_complete() {
                    Shortfall::NotMeasured { run }
                } else {
                    Shortfall::CutShort { run }
                }
            })
        }
        Expr::Binary(l, op, r) => {
            let (l, r) = (value(p, ci, l, results)?, value(p, ci, r, results)?);
            Ok(match op {
                BinOp::Add => l + r,
                BinOp::Sub => l - r,
                BinOp::Mul => l * r,
                BinOp::Div => l / r,
            })
        }
    }
}

fn judge(p: &Plan, ci: usize, a: &Assertion, results: &[RunResult], refs: &[usize]) -> Verdict {
    let dim = a.lhs.unit();
    let mut runs: Vec<String> = Vec::new();
    for i in refs {
        let l = p.runs[*i].label.clone();
        if !runs.contains(&l) {
            runs.push(l);
        }
    }
    let mut v = Verdict {
        assertion: a.text.clone(),
        runs,
        pass: false,
        measured: "-".into(),
        bound: "-".into(),
        detail: None,
    };
    let lhs = match value(p, ci, &a.lhs, results) {
        Ok(x) => x,
        Err(e) => {
            v.detail = Some(e.to_string());
            return v;
        }
    };
    v.measured = shown(lhs, dim);
    let res = match &a.test {
        Test::Compare(op, rhs) => value(p, ci, rhs, results).map(|r| {
            v.bound = format!("{} {}", op.symbol(), shown(r, dim));
            let pass = match op {
                CmpOp::Lt => lhs < r,
                CmpOp::Le => lhs <= r,
                CmpOp::Gt => lhs > r,
                CmpOp::Ge => lhs >= r,
                CmpOp::Eq => (lhs - r).abs() <= 1e-9 * r.abs().max(1.0),
                CmpOp::Ne => (lhs - r).abs() > 1e-9 * r.abs().max(1.0),
            };
            (pass, r)
        }),
        Test::Within(lo, hi) => value(p, ci, lo, results).and_then(|l| {
            value(p, ci, hi, results).map(|h| {
                v.bound = format!("in {}..{}", shown(l, dim), shown(h, dim));
                let pass = lhs >= l && lhs <= h;
                (pass, if lhs < l { l } else { h })
            })
        }),
    };
    match res {
        Ok((pass, bound)) => {
            v.pass = pass;
            if !pass {
                let shortfall = Shortfall::OutOfBound {
                    measured: v.measured.clone(),
                    bound: v.bound.clone(),
                    by: (bound != 0.0).then(|| (lhs - bound) / bound.abs()),
                };
                v.detail = Some(shortfall.to_string());
            }
        }
        Err(e) => v.detail = Some(e.to_string()),
    }
    v
}

/// A value in base units, formatted for its dimension.
fn shown(x: f64, d: Unit) -> String {
    use crate::format::{human_bytes, human_duration};
    match d {
        Unit::Duration => human_duration(x),
        Unit::Size => human_bytes(x),
        Unit::Rate => format!("{x:.0}/s"),
        Unit::ByteRate => format!("{}/s", human_bytes(x)),
        Unit::Number if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
        Unit::Number => format!("{x:.3}").trim_end_matches('0').to_string(),
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
