//! The syntax tree of a `.kbs` file. No pest types here: the rest of the crate sees only this.
//! Every node carries a [`Span`]; spans are ignored by equality (see [`Span`]).

use crate::source::{Span, Spanned};

/// The operators of `expect` are the model's own: the syntax tree reuses them (the model sits
/// below the syntax layer), so no mapping between two copies is needed.
pub use crate::model::{BinOp, CmpOp};

/// A parsed scenario file: its name and its top-level entries.
#[derive(Clone, Debug, PartialEq)]
pub struct Ast {
    pub name: Spanned<String>,
    pub entries: Vec<Entry>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// `include "common.kbs"`: the named file's entries stand here.
    Include(Spanned<String>),
    /// `name "label" { ... }`, e.g. `producer { ... }`, `topic "orders" { ... }`, or a step.
    Section(Section),
    /// `key = value`.
    Setting(Setting),
    /// `expect { ... }`.
    Expect(Vec<Assertion>, Span),
    /// `faults { ... }`: the fault timeline.
    Faults(Vec<Fault>, Span),
    /// `slo { ... }`: a capacity search's conditions (inside `capacity { }`).
    Slo(Vec<Assertion>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub name: Spanned<String>,
    pub label: Option<Spanned<String>>,
    pub entries: Vec<Entry>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub key: Spanned<String>,
    pub value: Value,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    pub kind: ValueKind,
    pub span: Span,
}

/// A number as written: its value, and whether it was written without a fraction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Number {
    pub value: f64,
    pub integer: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Quantity {
    pub number: Number,
    pub unit: Option<Spanned<String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RateLit {
    /// The amount per period, e.g. `8000` or `50MB`.
    pub amount: Quantity,
    /// The period unit after the slash, e.g. `min`.
    pub per: Spanned<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// The rate, or where a ramp starts.
    pub rate: RateLit,
    pub rate_span: Span,
    /// `ramp A to B over T`: the rate the segment ramps to, linearly.
    pub ramp_to: Option<(RateLit, Span)>,
    pub duration: Quantity,
    pub duration_span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub name: Option<Spanned<String>>,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ValueKind {
    Quantity(Quantity),
    Rate(RateLit),
    /// Two or more segments, or one segment with `for`, or one ramp.
    Shape(Vec<Segment>),
    List(Vec<Value>),
    Call {
        name: Spanned<String>,
        args: Vec<Arg>,
    },
    /// A string, escapes resolved. `{var}` references stay in the text; the check stage fills them.
    Str(String),
    /// `{name}`: a matrix or step variable.
    Var(Spanned<String>),
    /// A bare word: `none`, `zstd`, `unlimited`, `all`.
    Word(String),
    /// `±5%` (or `+-5%`): a tolerance either side.
    Tolerance(Quantity),
    /// `100B: 70%`, a list's item: a value and its share (`choice([100B: 70%, 4KiB: 30%])`).
    Pair(Box<Value>, Box<Value>),
}

// ---- expectations ----------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Assertion {
    pub lhs: Expr,
    pub test: Test,
    /// `with 95% confidence`: the level, as written.
    pub confidence: Option<Value>,
    pub when: Vec<Clause>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Test {
    Compare(CmpOp, Expr),
    /// `in low..high`, both ends inclusive.
    Within(Expr, Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Metric(MetricRef),
    Literal(Value),
    Binary(Box<Expr>, BinOp, Box<Expr>, Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Metric(m) => m.span,
            Expr::Literal(v) => v.span,
            Expr::Binary(_, _, _, s) => *s,
        }
    }
}

/// `ack.p99` or `throughput[codec=zstd, linger=5ms]`.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricRef {
    pub name: Spanned<String>,
    pub select: Vec<(Spanned<String>, Value)>,
    /// `of broker 2`, `of every broker`.
    pub place: Option<Box<PlaceRef>>,
    pub span: Span,
}

/// `of broker 2` or `of every broker` after a metric: which broker's figure it is.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaceRef {
    pub every: bool,
    pub noun: Spanned<String>,
    /// The number after the noun, as written.
    pub id: Option<Spanned<String>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ClauseOp {
    Eq,
    Ne,
    In,
}

/// `codec == zstd`, `step != baseline`, `codec in [lz4, zstd]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub var: Spanned<String>,
    pub op: ClauseOp,
    pub values: Vec<Value>,
    pub span: Span,
}

// ---- the fault timeline ----------------------------------------------------------------------

/// `at 15s kill broker leader(partition 0) for 15s`: what the words are, not yet what they mean.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// A duration, or a `{var}`.
    pub at: Value,
    /// The action word as written (`kill`, `pause`, ...), checked by the check stage.
    pub verb: Spanned<String>,
    pub object: Option<FaultObject>,
    /// `before 500` (`delete records of partition 0 before 500`), or a `{var}`.
    pub before: Option<Value>,
    /// `for 15s`, or a `{var}`.
    pub lasts: Option<Value>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FaultObject {
    /// `run "kubectl delete pod kafka-1"`: the command, escapes resolved, `{var}` kept.
    Command(Spanned<String>),
    /// `broker 2`, `broker {victim}`, `broker leader(partition 0)`, `consumer 1`. `which` is a
    /// quantity, a `{var}`, a word, or `leader(partition: N)` as a call (the form a matrix value
    /// takes, so both resolve alike); None when nothing follows the noun.
    Node {
        noun: Spanned<String>,
        /// What the noun belongs to: `partition` in `records of partition 0` (`which` is then
        /// the partition).
        of: Option<Spanned<String>>,
        which: Option<Value>,
    },
}
