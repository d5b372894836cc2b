//! The axes of comparison as data: matrix variables and steps with what each value brings
//! (overrides, a fault timeline, a capacity block), and a cell's picks. The intermediate form
//! between the axes' checker (`axes.rs`) and the checkers that read a cell: it uses none of
//! them, so they all depend on it and it on nothing of check/'s.

use crate::model::{Assertion, Scalar};
use crate::source::{Span, Spanned};
use crate::syntax::{self, Value};

/// A setting after flattening, qualified by its section: `producer` + `linger.ms`,
/// `workload.headers` + `source`. Steps override these one by one.
#[derive(Clone)]
pub(super) struct Setting {
    pub section: String,
    pub key: Spanned<String>,
    pub value: Value,
}

/// A `capacity { }` block where it was written: the scenario's or a step's.
#[derive(Clone)]
pub(super) struct CapacityBlock {
    pub span: Span,
    pub slo: Vec<syntax::Assertion>,
    /// The SLO checked (set once the axes are known); None while unchecked or when it did not
    /// check.
    pub checked: Option<Vec<Assertion>>,
}

/// A matrix variable or the step axis while checking.
pub(super) struct Axis {
    pub name: String,
    pub values: Vec<AxisValue>,
}

pub(super) struct AxisValue {
    /// What `{var}` stands for in a cell that picks this value.
    pub ast: Value,
    pub scalar: Scalar,
    /// As written, for labels and topic names.
    pub text: String,
    /// For steps: the overrides this step brings (cumulative for a ladder).
    pub overrides: Vec<Setting>,
    /// For steps: the fault timeline that replaces the scenario's (carried down a ladder).
    pub faults: Option<Vec<crate::syntax::Fault>>,
    /// For steps: a `capacity { }` block that makes the step's cells a search (carried down a
    /// ladder).
    pub capacity: Option<CapacityBlock>,
}

/// The coordinates of one cell while lowering: which value of each axis it picks.
pub(super) struct Picks<'a> {
    pub chosen: Vec<(&'a Axis, &'a AxisValue)>,
}

impl Picks<'_> {
    /// No axis at all: for values that may not refer to a variable.
    pub(super) fn none() -> Picks<'static> {
        Picks { chosen: vec![] }
    }

    pub(super) fn lookup(&self, name: &str) -> Option<&AxisValue> {
        self.chosen
            .iter()
            .find(|(a, _)| a.name == name)
            .map(|(_, v)| *v)
    }

    /// The variable names in scope, for "did you mean".
    pub(super) fn names(&self) -> Vec<&str> {
        self.chosen.iter().map(|(a, _)| a.name.as_str()).collect()
    }
}
