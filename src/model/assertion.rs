//! Assertions as the check stage types them: comparisons, arithmetic between metrics and
//! constants, `when` clauses. `expect` and a capacity search's `slo` share them.

use super::{Cell, Metric, Scalar, Unit};
use crate::source::Span;

/// A comparison in an assertion. Defined here, below the syntax layer, so that the syntax tree
/// and everything after the check stage share one type and nothing past check depends on syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl CmpOp {
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }
}

/// Arithmetic between metrics and constants in an assertion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Clone, Debug)]
pub enum Expr {
    Metric {
        metric: Metric,
        select: Vec<(String, Scalar)>,
        /// `of broker 2` / `of every broker`: the figure of the broker(s) that acknowledged.
        broker: Option<BrokerPick>,
        span: Span,
    },
    /// A constant in base units (seconds, bytes, per second) with its unit.
    Const(f64, Unit),
    Binary(Box<Expr>, BinOp, Box<Expr>),
}

impl Expr {
    /// Pushes the metrics the expression reads onto `out`, in the order written.
    pub fn metrics_into(&self, out: &mut Vec<Metric>) {
        match self {
            Expr::Metric { metric, .. } => out.push(*metric),
            Expr::Const(..) => {}
            Expr::Binary(l, _, r) => {
                l.metrics_into(out);
                r.metrics_into(out);
            }
        }
    }

    /// What the expression measures: a sum keeps its terms' unit, a product takes the unit of
    /// its non-number factor, a quotient of like units is a number.
    pub fn unit(&self) -> Unit {
        match self {
            Expr::Metric { metric, .. } => metric.unit(),
            Expr::Const(_, u) => *u,
            Expr::Binary(l, op, r) => {
                let (l, r) = (l.unit(), r.unit());
                match op {
                    BinOp::Add | BinOp::Sub => l,
                    BinOp::Mul if l == Unit::Number => r,
                    BinOp::Mul => l,
                    BinOp::Div if l == r => Unit::Number,
                    BinOp::Div => l,
                }
            }
        }
    }
}

/// Which broker's figure a metric reads (`of broker 2`, `of every broker`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokerPick {
    One(i32),
    /// One verdict per broker that acknowledged records in the run.
    Every,
}

impl Assertion {
    /// The broker the assertion's left side names, when it names one.
    pub fn broker(&self) -> Option<BrokerPick> {
        match &self.lhs {
            Expr::Metric { broker, .. } => *broker,
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub enum Test {
    Compare(CmpOp, Expr),
    Within(Expr, Expr),
}

#[derive(Clone, Debug)]
pub struct Clause {
    pub dim: String,
    pub negate: bool,
    pub values: Vec<Scalar>,
}

#[derive(Clone, Debug)]
pub struct Assertion {
    /// The assertion as written, for reports.
    pub text: String,
    pub span: Span,
    pub lhs: Expr,
    pub test: Test,
    /// `with 95% confidence` (0.95): the whole interval of the left side's metric over a
    /// repeated run's trials must hold; None judges the median.
    pub confidence: Option<f64>,
    pub when: Vec<Clause>,
}

impl Clause {
    pub fn holds(&self, cell: &Cell) -> bool {
        let hit = cell
            .coord(&self.dim)
            .is_some_and(|c| self.values.contains(&c.value));
        hit != self.negate
    }
}

impl CmpOp {
    /// Whether `lhs op rhs` holds; equality within a relative 1e-9 (figures are floats).
    pub fn holds(self, lhs: f64, rhs: f64) -> bool {
        match self {
            CmpOp::Lt => lhs < rhs,
            CmpOp::Le => lhs <= rhs,
            CmpOp::Gt => lhs > rhs,
            CmpOp::Ge => lhs >= rhs,
            CmpOp::Eq => (lhs - rhs).abs() <= 1e-9 * rhs.abs().max(1.0),
            CmpOp::Ne => (lhs - rhs).abs() > 1e-9 * rhs.abs().max(1.0),
        }
    }
}
