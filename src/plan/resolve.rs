//! How each assertion resolves to runs: the runs its `when` admits, and for each of them the
//! run every `metric[var=value]` points at (the run that differs only in those coordinates).
//! `plan` shows it, `assert` judges exactly these instances, and a suite uses it to know which
//! assertions an `--only` leaves unjudged.

use serde::Serialize;

use crate::model::{Assertion, Expr, Metric, Scalar, Test};

use super::RunPlan;

/// One assertion of the plan with its instances.
#[derive(Clone, Debug, Serialize)]
pub struct PlannedAssertion {
    /// As written.
    pub text: String,
    /// One per distinct set of runs it compares, in run order.
    pub instances: Vec<Instance>,
}

/// The assertion as judged from one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Instance {
    /// The run (index) whose `when` admits it: a reference without a selector is this run.
    pub from: usize,
    /// Every metric reference in the order written, and the run it resolves to.
    pub refs: Vec<Reference>,
    /// The distinct runs it reads, in the order of `refs`.
    pub runs: Vec<usize>,
}

/// A metric reference, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reference {
    /// The selector as `var=value` pairs (empty: the run itself).
    pub select: Vec<String>,
    pub run: usize,
}

/// The run a metric with `select` points at from run `from`: the one whose coordinates equal
/// `select` where it speaks and `from`'s elsewhere.
pub fn target(runs: &[RunPlan], from: usize, select: &[(String, Scalar)]) -> Option<usize> {
    let base = &runs[from].cell;
    runs.iter().position(|r| {
        r.cell
            .coords
            .iter()
            .all(|c| match select.iter().find(|(d, _)| *d == c.dim) {
                Some((_, v)) => c.value == *v,
                None => base.coord(&c.dim).is_some_and(|b| b.value == c.value),
            })
    })
}

/// Every instance of `a` over `runs`, the ones `assert::evaluate` judges: per run its `when`
/// admits, skipping one whose selectors name no run, once per distinct set of references.
pub(super) fn instances(runs: &[RunPlan], a: &Assertion) -> Vec<Instance> {
    let mut out: Vec<Instance> = Vec::new();
    for from in 0..runs.len() {
        if !a.when.iter().all(|c| c.holds(&runs[from].cell)) {
            continue;
        }
        let mut refs = Vec::new();
        let resolved = exprs(a).into_iter().all(|e| walk(runs, from, e, &mut refs));
        if !resolved || out.iter().any(|i| same_refs(&i.refs, &refs)) {
            continue;
        }
        let mut distinct = Vec::new();
        for r in &refs {
            if !distinct.contains(&r.run) {
                distinct.push(r.run);
            }
        }
        out.push(Instance {
            from,
            refs,
            runs: distinct,
        });
    }
    out
}

/// The metrics the assertions read from run `index`, each once, in the order written: what
/// `repeat = auto` judges of that run.
pub(super) fn metrics_read(
    assertions: &[Assertion],
    planned: &[PlannedAssertion],
    index: usize,
) -> Vec<Metric> {
    let mut out = Vec::new();
    for (a, p) in assertions.iter().zip(planned) {
        let mut metrics = Vec::new();
        for e in exprs(a) {
            e.metrics_into(&mut metrics);
        }
        for inst in &p.instances {
            // `refs` are the metric references in the order written, as `metrics` are.
            for (m, r) in metrics.iter().zip(&inst.refs) {
                if r.run == index && !out.contains(m) {
                    out.push(*m);
                }
            }
        }
    }
    out
}

fn same_refs(a: &[Reference], b: &[Reference]) -> bool {
    a.iter().map(|r| r.run).eq(b.iter().map(|r| r.run))
}

fn exprs(a: &Assertion) -> Vec<&Expr> {
    let mut v = vec![&a.lhs];
    match &a.test {
        Test::Compare(_, r) => v.push(r),
        Test::Within(l, h) => {
            v.push(l);
            v.push(h)
        }
    }
    v
}

fn walk(runs: &[RunPlan], from: usize, e: &Expr, out: &mut Vec<Reference>) -> bool {
    match e {
        Expr::Metric { select, .. } => match target(runs, from, select) {
            Some(run) => {
                // The value as written in the file (`5ms`), from the run it selected.
                let select = select
                    .iter()
                    .map(|(d, v)| {
                        let text = runs[run]
                            .cell
                            .coord(d)
                            .map_or_else(|| v.to_string(), |c| c.text.clone());
                        format!("{d}={text}")
                    })
                    .collect();
                out.push(Reference { select, run });
                true
            }
            None => false,
        },
        Expr::Const(..) => true,
        Expr::Binary(l, _, r) => walk(runs, from, l, out) && walk(runs, from, r, out),
    }
}
