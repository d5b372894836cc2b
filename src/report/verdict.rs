//! A verdict in words: the one place its numbers become text, for the terminal, JUnit, HTML
//! and the result file alike, and the result file's form of it read back.

use serde::{Deserialize, Serialize};

use crate::assert::{Bound, Recorded, RunRef, Shortfall, Verdict};
use crate::format::{human_bytes, human_duration};
use crate::model::{CmpOp, Unit};

/// The measured left-hand side with its unit, `-` when it was not measured.
pub fn measured(v: &Verdict) -> String {
    match (&v.recorded, v.measured) {
        // A confident verdict judged the interval, and says so.
        (_, Some(x)) if v.interval.is_some() => {
            format!("{} ({})", shown(x, v.unit), interval(v).unwrap_or_default())
        }
        (_, Some(x)) => shown(x, v.unit),
        (Some(r), None) => r.measured.clone(),
        (None, None) => "-".into(),
    }
}

/// The bound as written against the measured value: `< 40ms`, `in 1.9k/s..2.1k/s`.
pub fn bound(v: &Verdict) -> String {
    match (&v.recorded, v.bound) {
        (_, Some(Bound::Compare(op, r))) => format!("{} {}", op.symbol(), shown(r, v.unit)),
        (_, Some(Bound::Within(l, h))) => format!("in {}..{}", shown(l, v.unit), shown(h, v.unit)),
        (Some(r), None) => r.bound.clone(),
        (None, None) => "-".into(),
    }
}

/// Why it did not pass, in words; None for a pass.
pub fn detail(v: &Verdict) -> Option<String> {
    if let Some(r) = &v.recorded {
        return r.detail.clone();
    }
    let run = |i: usize| v.label(i).unwrap_or("?").to_string();
    Some(match v.shortfall? {
        Shortfall::NoSuchRun => "no such run".into(),
        Shortfall::NotExecuted => "the run did not execute".into(),
        Shortfall::NotMeasured { run: i } => format!("not measured in run `{}`", run(i)),
        Shortfall::CutShort { run: i } => {
            format!("run `{}` was cut short: this figure is incomplete", run(i))
        }
        Shortfall::OutOfBound if v.interval.is_some() => {
            format!("{} against {}", interval(v).unwrap_or_default(), bound(v))
        }
        Shortfall::OutOfBound => {
            let mut s = format!("measured {} against {}", measured(v), bound(v));
            if let Some(by) = by(v) {
                s += &format!(" ({:+.1}%)", by * 100.0);
            }
            s
        }
        Shortfall::TooFewTrials {
            run: i,
            trials,
            coverage,
            auto: Some(needs),
        } => {
            let need = crate::measure::stats::min_trials(needs).unwrap_or(100);
            format!(
                "run `{}`: `repeat = auto` stopped at its `max` of {trials} trials, whose interval \
                 reaches at most {:.1}% confidence where its looks need {:.1}%; raise `max` (at \
                 least {need})",
                run(i),
                coverage * 100.0,
                needs * 100.0
            )
        }
        Shortfall::TooFewTrials {
            run: i,
            trials,
            coverage,
            auto: None,
        } => {
            let level = v.interval.map_or(0.95, |x| x.level);
            let need = crate::measure::stats::min_trials(level).unwrap_or(100);
            if trials < 2 {
                format!(
                    "run `{}` has one trial: no interval to judge with confidence; repeat it \
                     (`repeat = {need}` or more)",
                    run(i)
                )
            } else {
                format!(
                    "run `{}`: {trials} trials give an interval of at most {:.1}% confidence; \
                     `repeat = {need}` reaches it",
                    run(i),
                    coverage * 100.0
                )
            }
        }
    })
}

/// `95% interval 1.18M/s..1.25M/s over 5 trials`, for a confident verdict.
pub fn interval(v: &Verdict) -> Option<String> {
    let x = v.interval?;
    Some(format!(
        "{}% interval {}..{} over {} trials",
        share(x.level * 100.0).trim_end_matches(".0"),
        shown(x.lo, v.unit),
        shown(x.hi, v.unit),
        x.trials
    ))
}

/// How far outside its bound a failed value is, relative to the edge it missed (None when that
/// edge is 0).
fn by(v: &Verdict) -> Option<f64> {
    let (m, b) = (v.measured?, v.bound?);
    let edge = b.edge(m);
    (edge != 0.0).then(|| (m - edge) / edge.abs())
}

/// The runs it read: `codec=none vs codec=zstd`.
pub fn runs(v: &Verdict) -> String {
    let labels: Vec<&str> = v.runs.iter().map(|r| r.label.as_str()).collect();
    match v.broker {
        Some(b) => format!("{}, broker {b}", labels.join(" vs ")),
        None => labels.join(" vs "),
    }
}

/// How far the measured value sits from its bound: a failed verdict's own detail, and for a
/// pass the headroom left (a bound held by 1 % is a warning of its own); empty when there is
/// no such distance (an equality, a bound of 0, an older file's verdict).
pub fn margin(v: &Verdict) -> String {
    if !v.pass {
        return detail(v).unwrap_or_default();
    }
    let (Some(m), Some(b)) = (v.measured, v.bound) else {
        return String::new();
    };
    match b {
        Bound::Within(lo, hi) => {
            // Headroom to the nearer edge, as a share of the range.
            let width = (hi - lo).abs();
            if width == 0.0 {
                return String::new();
            }
            let near = (m - lo).min(hi - m);
            format!(
                "{:.0} % of the range from its nearer edge",
                near / width * 100.0
            )
        }
        Bound::Compare(CmpOp::Eq | CmpOp::Ne, _) | Bound::Compare(_, 0.0) => String::new(),
        Bound::Compare(_, r) => {
            let pct = (m - r) / r.abs() * 100.0;
            let side = if pct < 0.0 { "below" } else { "above" };
            format!("{} % {side} the bound", share(pct.abs()))
        }
    }
}

/// A percentage with one decimal, or as many as it takes not to round a near-100 to 100.
fn share(pct: f64) -> String {
    let mut digits = 1;
    while digits < 4 && pct < 100.0 && format!("{pct:.digits$}").starts_with("100") {
        digits += 1;
    }
    format!("{pct:.digits$}")
}

/// A value in base units, formatted for its dimension.
fn shown(x: f64, d: Unit) -> String {
    match d {
        Unit::Duration => human_duration(x),
        Unit::Size => human_bytes(x),
        Unit::Rate => format!("{x:.0}/s"),
        Unit::ByteRate => format!("{}/s", human_bytes(x)),
        Unit::Number if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
        Unit::Number => format!("{x:.3}").trim_end_matches('0').to_string(),
    }
}

/// A verdict as the result file keeps it: the words a reader of the JSON expects (schema 2's
/// fields, unchanged) and, since this version, the numbers they were made from, so a file read
/// back is reported exactly as the run was.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VerdictRecord {
    pub assertion: String,
    /// The runs' labels.
    pub runs: Vec<String>,
    pub pass: bool,
    pub measured: String,
    pub bound: String,
    pub detail: Option<String>,
    /// The numbers; absent in files written before they were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<Judged>,
    /// The broker whose figure was judged (`of broker 2`, `of every broker`); absent
    /// otherwise and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker: Option<i32>,
}

/// A verdict's numbers in the result file, in base units.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Judged {
    /// The runs' indices in the plan, in the order of `runs`.
    pub runs: Vec<usize>,
    pub unit: Unit,
    pub measured: Option<f64>,
    /// `<`, `<=`, `>`, `>=`, `==`, `!=` or `in`.
    pub op: Option<String>,
    /// The value compared with, or the range's ends.
    pub bound: Vec<f64>,
    pub shortfall: Option<ShortfallRecord>,
    /// With `with … confidence`: the interval that was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<IntervalRecord>,
}

/// [`Shortfall`] in the result file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ShortfallRecord {
    NoSuchRun,
    NotExecuted,
    NotMeasured {
        run: usize,
    },
    CutShort {
        run: usize,
    },
    OutOfBound,
    TooFewTrials {
        run: usize,
        trials: usize,
        coverage: f64,
        /// The level an auto-repeated run's looks needed; absent in older files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        auto: Option<f64>,
    },
}

/// The interval a confident verdict judged (`with 95% confidence`), in base units.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IntervalRecord {
    pub lo: f64,
    pub hi: f64,
    pub level: f64,
    pub coverage: f64,
    pub trials: usize,
}

impl VerdictRecord {
    pub fn of(v: &Verdict) -> VerdictRecord {
        let (op, ends) = match v.bound {
            Some(Bound::Compare(op, r)) => (Some(op.symbol().to_string()), vec![r]),
            Some(Bound::Within(l, h)) => (Some("in".to_string()), vec![l, h]),
            None => (None, vec![]),
        };
        VerdictRecord {
            assertion: v.assertion.clone(),
            runs: v.runs.iter().map(|r| r.label.clone()).collect(),
            pass: v.pass,
            measured: measured(v),
            bound: bound(v),
            detail: detail(v),
            broker: v.broker,
            judged: v.recorded.is_none().then(|| Judged {
                runs: v.runs.iter().map(|r| r.index).collect(),
                unit: v.unit,
                measured: v.measured,
                op,
                bound: ends,
                shortfall: v.shortfall.map(|s| match s {
                    Shortfall::NoSuchRun => ShortfallRecord::NoSuchRun,
                    Shortfall::NotExecuted => ShortfallRecord::NotExecuted,
                    Shortfall::NotMeasured { run } => ShortfallRecord::NotMeasured { run },
                    Shortfall::CutShort { run } => ShortfallRecord::CutShort { run },
                    Shortfall::OutOfBound => ShortfallRecord::OutOfBound,
                    Shortfall::TooFewTrials {
                        run,
                        trials,
                        coverage,
                        auto,
                    } => ShortfallRecord::TooFewTrials {
                        run,
                        trials,
                        coverage,
                        auto,
                    },
                }),
                interval: v.interval.map(|x| IntervalRecord {
                    lo: x.lo,
                    hi: x.hi,
                    level: x.level,
                    coverage: x.coverage,
                    trials: x.trials,
                }),
            }),
        }
    }

    /// The verdict back; `index_of` finds a run's index by its label, for files that kept only
    /// the words (their verdicts are then shown as recorded).
    pub fn verdict(&self, index_of: impl Fn(&str) -> Option<usize>) -> Verdict {
        let judged = self
            .judged
            .as_ref()
            .filter(|j| j.runs.len() == self.runs.len());
        let runs = self
            .runs
            .iter()
            .enumerate()
            .map(|(k, label)| RunRef {
                index: judged.map_or_else(|| index_of(label).unwrap_or(usize::MAX), |j| j.runs[k]),
                label: label.clone(),
            })
            .collect();
        let recorded = || Recorded {
            measured: self.measured.clone(),
            bound: self.bound.clone(),
            detail: self.detail.clone(),
        };
        let mut v = Verdict {
            assertion: self.assertion.clone(),
            runs,
            unit: Unit::Number,
            pass: self.pass,
            measured: None,
            bound: None,
            shortfall: None,
            recorded: None,
            interval: None,
            broker: self.broker,
        };
        let Some(j) = judged else {
            v.recorded = Some(recorded());
            return v;
        };
        let bound = match (j.op.as_deref(), j.bound.as_slice()) {
            (Some("in"), &[l, h]) => Some(Bound::Within(l, h)),
            (Some(op), &[r]) => cmp_op(op).map(|op| Bound::Compare(op, r)),
            (None, []) => None,
            // Numbers this version cannot read: show the words.
            _ => {
                v.recorded = Some(recorded());
                return v;
            }
        };
        v.unit = j.unit;
        v.measured = j.measured;
        v.bound = bound;
        v.shortfall = j.shortfall.as_ref().map(|s| match *s {
            ShortfallRecord::NoSuchRun => Shortfall::NoSuchRun,
            ShortfallRecord::NotExecuted => Shortfall::NotExecuted,
            ShortfallRecord::NotMeasured { run } => Shortfall::NotMeasured { run },
            ShortfallRecord::CutShort { run } => Shortfall::CutShort { run },
            ShortfallRecord::OutOfBound => Shortfall::OutOfBound,
            ShortfallRecord::TooFewTrials {
                run,
                trials,
                coverage,
                auto,
            } => Shortfall::TooFewTrials {
                run,
                trials,
                coverage,
                auto,
            },
        });
        v.interval = j.interval.as_ref().map(|x| crate::assert::Interval {
            lo: x.lo,
            hi: x.hi,
            level: x.level,
            coverage: x.coverage,
            trials: x.trials,
        });
        v
    }
}

/// The comparison written as `symbol`.
fn cmp_op(symbol: &str) -> Option<CmpOp> {
    use CmpOp::*;
    [Lt, Le, Gt, Ge, Eq, Ne]
        .into_iter()
        .find(|op| op.symbol() == symbol)
}

#[cfg(test)]
mod tests;
