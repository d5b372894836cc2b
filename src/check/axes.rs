//! Axes of comparison: the matrix variables and the step axis (`steps`, or a cumulative
//! `ladder`), and the cells they multiply out to.

use super::axis::{Axis, AxisValue, CapacityBlock, Setting};
use super::{Checker, OVERRIDABLE};
use crate::diagnostic::{suggest, Diagnostic, Kind};
use crate::model::Scalar;
use crate::source::{Span, Spanned};
use crate::syntax::{Entry, Section, Value, ValueKind};

/// The most cells a scenario may expand to; past this a matrix is almost surely a mistake.
pub(super) const MAX_CELLS: usize = 1000;

impl Checker<'_> {
    /// One axis per matrix variable, in the order written.
    pub(super) fn matrix(&mut self, sec: &Section) -> Vec<Axis> {
        let mut axes: Vec<Axis> = Vec::new();
        for e in &sec.entries {
            let Entry::Setting(s) = e else {
                self.err(
                    Diagnostic::new(
                        Kind::Syntax,
                        entry_span(e),
                        "a matrix holds `name = [values]`",
                    )
                    .label("not a variable")
                    .help("e.g. `codec = [none, lz4, zstd]`"),
                );
                continue;
            };
            let name = s.key.node.clone();
            if name == "step" || name.contains('.') {
                self.err(
                    Diagnostic::new(Kind::Variable, s.key.span, format!("`{name}` cannot name a matrix variable"))
                        .label("reserved or dotted")
                        .help("`step` is the name of the steps axis; variable names are plain words like `codec`"),
                );
                continue;
            }
            if axes.iter().any(|a| a.name == name) {
                self.err(
                    Diagnostic::new(
                        Kind::Duplicate,
                        s.key.span,
                        format!("matrix variable `{name}` is declared twice"),
                    )
                    .label("again"),
                );
                continue;
            }
            let items: Vec<Value> = match &s.value.kind {
                ValueKind::List(items) => items.clone(),
                _ => vec![s.value.clone()],
            };
            if items.is_empty() {
                self.err(
                    Diagnostic::new(
                        Kind::EmptyList,
                        s.value.span,
                        format!("matrix variable `{name}` has no values"),
                    )
                    .label("empty list")
                    .help("give at least one value, e.g. `[0ms, 5ms]`, or remove the variable"),
                );
            }
            let mut values: Vec<AxisValue> = Vec::new();
            for v in items {
                if let ValueKind::Var(r) = &v.kind {
                    self.err(
                        Diagnostic::new(
                            Kind::Variable,
                            r.span,
                            "a matrix value cannot refer to a variable",
                        )
                        .label("here"),
                    );
                    continue;
                }
                // A call (`random(size: 512B)`, `file("a.jsonl")`) or a rate shape is checked
                // where `{var}` is used, as if written there; here it is known by its text.
                let written = self.sources.text(v.span).trim().to_string();
                let scalar = match &v.kind {
                    ValueKind::Call { name, .. } if name.node != "env" => {
                        Scalar::Str(written.clone())
                    }
                    ValueKind::Shape(_) => Scalar::Str(written.clone()),
                    _ => self
                        .scalar_plain(&v)
                        .unwrap_or_else(|| Scalar::Str(written.clone())),
                };
                let text = written.trim_matches('"').to_string();
                if values.iter().any(|x| x.scalar == scalar) {
                    self.err(
                        Diagnostic::new(
                            Kind::Duplicate,
                            v.span,
                            format!("`{text}` appears twice in `{name}`"),
                        )
                        .label("repeated value"),
                    );
                    continue;
                }
                values.push(AxisValue {
                    ast: v,
                    scalar,
                    text,
                    overrides: vec![],
                    faults: None,
                    capacity: None,
                });
            }
            axes.push(Axis { name, values });
        }
        axes
    }

    /// A list written where one value is due (`payload = [json(size: 1KiB), file("a.jsonl")]`):
    /// the runs to compare belong in `matrix`, and the setting names the variable.
    pub(super) fn list_outside_matrix(&mut self, e: &Setting) {
        let key = &e.key.node;
        let var = key.replace(['.', '-'], "_");
        let values = self.sources.text(e.value.span).trim().to_string();
        self.err(
            Diagnostic::new(Kind::Type, e.value.span, "a list of values compares runs, and belongs in `matrix`")
                .label("one value is due here")
                .help(format!("write `{key} = {{{var}}}` here and `matrix {{ {var} = {values} }}` (or a step per value in `steps`)")),
        );
    }

    /// The `step` axis: one value per named step, carrying the settings it overrides. In a
    /// `ladder` (`cumulative`) each step keeps the overrides of the steps before it.
    pub(super) fn steps(
        &mut self,
        sec: &Section,
        cumulative: bool,
        has_consumer: &mut bool,
    ) -> Option<Axis> {
        let mut values: Vec<AxisValue> = Vec::new();
        let mut carried: Vec<Setting> = Vec::new();
        let mut carried_faults: Option<Vec<crate::syntax::Fault>> = None;
        let mut carried_capacity: Option<CapacityBlock> = None;
        for e in &sec.entries {
            let Entry::Section(step) = e else {
                self.err(
                    Diagnostic::new(
                        Kind::Syntax,
                        entry_span(e),
                        format!("`{}` holds named steps", sec.name.node),
                    )
                    .label("not a step")
                    .help("e.g. `bigger_batches { producer.batch.size = 64KiB }`"),
                );
                continue;
            };
            let name = step.name.node.clone();
            if values.iter().any(|v| v.text == name) {
                self.err(
                    Diagnostic::new(
                        Kind::Duplicate,
                        step.name.span,
                        format!("step `{name}` is declared twice"),
                    )
                    .label("again"),
                );
                continue;
            }
            let mut own: Vec<Setting> = Vec::new();
            let mut own_faults: Option<Vec<crate::syntax::Fault>> = None;
            let mut own_capacity: Option<CapacityBlock> = None;
            for se in &step.entries {
                match se {
                    Entry::Setting(s) => {
                        let (head, rest) = s
                            .key
                            .node
                            .split_once('.')
                            .unwrap_or((s.key.node.as_str(), ""));
                        if !OVERRIDABLE.contains(&head) || rest.is_empty() {
                            self.err(
                                Diagnostic::new(
                                    Kind::UnknownKey,
                                    s.key.span,
                                    format!(
                                        "a step sets `section.key`; `{}` names no section",
                                        s.key.node
                                    ),
                                )
                                .label("unknown section")
                                .help(format!(
                                    "{} (e.g. `producer.linger.ms = 5`)",
                                    suggest(head, OVERRIDABLE, "sections are")
                                )),
                            );
                            continue;
                        }
                        let (section, key) = match rest.split_once("headers.") {
                            Some(("", hk)) if head == "workload" => {
                                ("workload.headers".to_string(), hk.to_string())
                            }
                            _ => match rest.split_once("configs.") {
                                // `topic.configs.x`: a config passed as written.
                                Some(("", ck)) if head == "topic" => {
                                    ("topic.configs".to_string(), ck.to_string())
                                }
                                _ => (head.to_string(), rest.to_string()),
                            },
                        };
                        let key_span = Span::new(
                            s.key.span.file,
                            s.key.span.start + head.len() + 1,
                            s.key.span.end,
                        );
                        if section == "consumer" {
                            *has_consumer = true;
                        }
                        own.push(Setting {
                            section,
                            key: Spanned::new(key, key_span),
                            value: s.value.clone(),
                        });
                    }
                    Entry::Section(inner) if OVERRIDABLE.contains(&inner.name.node.as_str()) => {
                        if inner.name.node == "consumer" {
                            *has_consumer = true;
                        }
                        let n = inner.name.node.clone();
                        if n == "capacity" {
                            own_capacity = Some(CapacityBlock::of(self, inner));
                        }
                        self.flatten(inner, &n, &mut own)
                    }
                    Entry::Section(inner) => self.err(
                        Diagnostic::new(
                            Kind::UnknownSection,
                            inner.name.span,
                            format!("`{}` cannot be overridden in a step", inner.name.node),
                        )
                        .label("unknown block")
                        .help(suggest(
                            &inner.name.node,
                            OVERRIDABLE,
                            "a step may set",
                        )),
                    ),
                    Entry::Faults(_, span) if own_faults.is_some() => self.err(
                        Diagnostic::new(
                            Kind::Duplicate,
                            *span,
                            "`faults` is declared twice in this step",
                        )
                        .label("second declaration")
                        .help("merge the two `faults` blocks into one"),
                    ),
                    Entry::Faults(f, _) => own_faults = Some(f.clone()),
                    Entry::Expect(..) | Entry::Include(_) | Entry::Slo(..) => self.out_of_place(se),
                }
            }
            let faults = if cumulative {
                carried_faults = own_faults.or(carried_faults.take());
                carried_faults.clone()
            } else {
                own_faults
            };
            let capacity = if cumulative {
                carried_capacity = own_capacity.or(carried_capacity.take());
                carried_capacity.clone()
            } else {
                own_capacity
            };
            let overrides = if cumulative {
                for o in own {
                    carried.retain(|c| !(c.section == o.section && c.key.node == o.key.node));
                    carried.push(o);
                }
                carried.clone()
            } else {
                own
            };
            values.push(AxisValue {
                ast: Value {
                    kind: ValueKind::Word(name.clone()),
                    span: step.name.span,
                },
                scalar: Scalar::Word(name.clone()),
                text: name,
                overrides,
                faults,
                capacity,
            });
        }
        if values.is_empty() {
            self.err(
                Diagnostic::new(
                    Kind::EmptyList,
                    sec.name.span,
                    format!("`{}` has no steps", sec.name.node),
                )
                .label("empty")
                .help("add a step, e.g. `baseline { }`"),
            );
            return None;
        }
        Some(Axis {
            name: "step".into(),
            values,
        })
    }

    /// Every combination of one value per axis, the first axis varying slowest (steps, then
    /// the matrix variables in order), or `None` when there are too many. Counted before
    /// anything is expanded, without overflow, so the count reported is the true one.
    pub(super) fn combinations(&mut self, axes: &[Axis], span: Span) -> Option<Vec<Vec<usize>>> {
        let total = axes
            .iter()
            .try_fold(1u128, |n, a| n.checked_mul(a.values.len() as u128));
        if total.map_or(true, |t| t > MAX_CELLS as u128) {
            let count = total.map_or(format!("more than {}", u128::MAX), |t| t.to_string());
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    format!("this expands to {count} runs; at most {MAX_CELLS} are allowed"),
                )
                .label("too many combinations")
                .help("split the scenario, or use fewer values per variable"),
            );
            return None;
        }
        let mut combinations: Vec<Vec<usize>> = vec![vec![]];
        for a in axes {
            combinations = combinations
                .into_iter()
                .flat_map(|prefix| {
                    (0..a.values.len()).map(move |i| {
                        let mut p = prefix.clone();
                        p.push(i);
                        p
                    })
                })
                .collect();
        }
        Some(combinations)
    }
}

/// Where an entry starts, for a diagnostic about an entry of the wrong sort.
fn entry_span(e: &Entry) -> Span {
    match e {
        Entry::Setting(s) => s.key.span,
        Entry::Section(x) => x.name.span,
        Entry::Expect(_, span) | Entry::Faults(_, span) | Entry::Slo(_, span) => *span,
        Entry::Include(i) => i.span,
    }
}
