//! Stage 2, check: [`Ast`] → typed [`Scenario`], or every diagnostic of the file at once.
//!
//! Matrices and steps are validated by lowering *every* cell: a value reached through `{var}`
//! is checked in each place it lands, and a step's override is checked against the settings it
//! overrides. Diagnostics are de-duplicated, so a mistake is reported once however many cells
//! it reaches.

mod expect;
pub use expect::dim_of;
pub mod props;
pub mod units;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::diagnostic::{suggest, Diagnostic, Diagnostics, Kind};
use crate::model::*;
use crate::source::{Sources, Span, Spanned};
use crate::syntax::{Ast, Entry, Section, Value, ValueKind};

/// The most cells a scenario may expand to; past this a matrix is almost surely a mistake.
const MAX_CELLS: usize = 1000;

const SECTIONS: &[&str] = &[
    "cluster", "topic", "producer", "consumer", "workload", "matrix", "steps", "ladder",
];
const OVERRIDABLE: &[&str] = &["cluster", "topic", "producer", "consumer", "workload"];
const WORKLOAD_KEYS: &[&str] = &[
    "messages",
    "duration",
    "warmup",
    "rate",
    "in_flight",
    "in_flight_until",
    "producers",
    "payload",
    "key",
];
const TOPIC_KEYS: &[&str] = &["partitions", "replication", "existing"];

/// Checks a parsed scenario. `sources` holds the files the spans point into; payload files are
/// resolved relative to the file that names them.
pub fn check(ast: &Ast, sources: &Sources) -> Result<Scenario, Diagnostics> {
    let mut c = Checker {
        sources,
        diags: Diagnostics::default(),
        prop_cache: HashMap::new(),
        files: HashMap::new(),
    };
    let scenario = c.scenario(ast);
    let diags = c.diags.finish();
    match scenario {
        Some(s) if diags.is_empty() => Ok(s),
        _ => Err(diags),
    }
}

/// A setting after flattening: `producer.linger.ms`, `workload.headers.source`.
#[derive(Clone)]
struct Eff {
    section: String,
    key: Spanned<String>,
    value: Value,
}

/// A matrix variable or the step axis while checking.
struct Axis {
    name: String,
    values: Vec<AxisValue>,
}

struct AxisValue {
    ast: Value,
    val: Val,
    text: String,
    /// For steps: the overrides this step brings (cumulative for a ladder).
    overrides: Vec<Eff>,
}

/// The coordinates of one cell while lowering: which AST value each variable stands for.
struct CellCtx<'a> {
    picks: Vec<(&'a Axis, &'a AxisValue)>,
}

impl CellCtx<'_> {
    fn lookup(&self, name: &str) -> Option<&AxisValue> {
        self.picks
            .iter()
            .find(|(a, _)| a.name == name)
            .map(|(_, v)| *v)
    }
}

/// A payload file's lines, loaded once per check however many cells use it.
type Lines = Arc<Vec<Vec<u8>>>;

struct Checker<'s> {
    sources: &'s Sources,
    diags: Diagnostics,
    prop_cache: HashMap<(String, String), Result<(), String>>,
    files: HashMap<PathBuf, Result<Lines, String>>,
}

impl Checker<'_> {
    fn err(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn scenario(&mut self, ast: &Ast) -> Option<Scenario> {
        let mut description = None;
        let mut base: Vec<Eff> = Vec::new();
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let mut matrix: Option<&Section> = None;
        let mut steps: Option<(&Section, bool)> = None;
        let mut expects = Vec::new();
        let mut has_consumer = false;

        for e in &ast.entries {
            match e {
                Entry::Setting(s) if s.key.node == "description" => match &s.value.kind {
                    ValueKind::Str(t) => description = Some(t.clone()),
                    _ => self.err(
                        Diagnostic::new(Kind::Type, s.value.span, "a description is a string")
                            .label("expected \"...\""),
                    ),
                },
                Entry::Setting(s) => self.err(
                    Diagnostic::new(
                        Kind::UnknownKey,
                        s.key.span,
                        format!("unknown setting `{}` at the top of a scenario", s.key.node),
                    )
                    .label("not a top-level setting")
                    .help(top_level_help(&s.key.node)),
                ),
                Entry::Include(i) => self.err(
                    Diagnostic::new(Kind::Include, i.span, "include was not resolved")
                        .label("here"),
                ),
                Entry::Expect(a, _) => expects.extend(a.iter()),
                Entry::Section(sec) => {
                    let name = sec.name.node.as_str();
                    if !SECTIONS.contains(&name) {
                        self.err(
                            Diagnostic::new(
                                Kind::UnknownSection,
                                sec.name.span,
                                format!("unknown section `{name}`"),
                            )
                            .label("not a section")
                            .help(suggest(
                                name,
                                &[SECTIONS, &["expect"]].concat(),
                                "sections are",
                            )),
                        );
                        continue;
                    }
                    if let Some(prev) = seen.insert(name, sec.name.span) {
                        let _ = prev;
                        self.err(
                            Diagnostic::new(
                                Kind::Duplicate,
                                sec.name.span,
                                format!("`{name}` is declared twice"),
                            )
                            .label("second declaration")
                            .help(format!("merge the two `{name}` blocks into one")),
                        );
                        continue;
                    }
                    match name {
                        "matrix" => matrix = Some(sec),
                        "steps" | "ladder" => {
                            if let Some((other, _)) = steps {
                                self.err(
                                    Diagnostic::new(
                                        Kind::Duplicate,
                                        sec.name.span,
                                        "a scenario has either `steps` or `ladder`, not both",
                                    )
                                    .label("second one")
                                    .help(format!("`{}` is already declared", other.name.node)),
                                );
                            } else {
                                steps = Some((sec, name == "ladder"));
                            }
                        }
                        _ => {
                            if name == "consumer" {
                                has_consumer = true;
                            }
                            self.flatten(sec, name, &mut base);
                        }
                    }
                }
            }
        }

        let mut axes: Vec<Axis> = Vec::new();
        if let Some((sec, cumulative)) = steps {
            if let Some(axis) = self.steps(sec, cumulative, &mut has_consumer) {
                axes.push(axis);
            }
        }
        if let Some(m) = matrix {
            axes.extend(self.matrix(m));
        }

        let total: usize = axes.iter().map(|a| a.values.len().max(1)).product();
        if total > MAX_CELLS {
            let span = matrix.map_or(ast.name.span, |m| m.name.span);
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    format!("this expands to {total} runs; at most {MAX_CELLS} are allowed"),
                )
                .label("too many combinations")
                .help("split the scenario, or use fewer values per variable"),
            );
            return None;
        }
        if axes.iter().any(|a| a.values.is_empty()) {
            return None;
        }

        // Every combination, the first axis varying slowest (steps, then matrix in order).
        let mut combos: Vec<Vec<usize>> = vec![vec![]];
        for a in &axes {
            combos = combos
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

        let mut cells = Vec::new();
        for combo in &combos {
            let ctx = CellCtx {
                picks: axes
                    .iter()
                    .zip(combo)
                    .map(|(a, &i)| (a, &a.values[i]))
                    .collect(),
            };
            let mut effs = base.clone();
            for (_, v) in &ctx.picks {
                for o in &v.overrides {
                    if let Some(slot) = effs
                        .iter_mut()
                        .find(|e| e.section == o.section && e.key.node == o.key.node)
                    {
                        *slot = o.clone();
                    } else {
                        effs.push(o.clone());
                    }
                }
            }
            let consumer = has_consumer || effs.iter().any(|e| e.section == "consumer");
            if let Some(spec) = self.lower(&ctx, &effs, consumer, ast.name.span) {
                let coords = ctx
                    .picks
                    .iter()
                    .map(|(a, v)| Coord {
                        dim: a.name.clone(),
                        value: v.val.clone(),
                        text: v.text.clone(),
                    })
                    .collect();
                cells.push(Cell { coords, spec });
            }
        }

        let any_consumer = cells.iter().any(|c| c.spec.consumer.is_some());
        let assertions = expects
            .iter()
            .filter_map(|a| expect::assertion(self, a, &axes, any_consumer))
            .collect();

        let dims = axes
            .iter()
            .map(|a| Dimension {
                name: a.name.clone(),
                values: a.values.iter().map(|v| v.text.clone()).collect(),
            })
            .collect();
        (cells.len() == combos.len()).then(|| Scenario {
            name: ast.name.node.clone(),
            description,
            dims,
            cells,
            assertions,
        })
    }

    /// Flattens a section into `Eff`s; nested sections are allowed only where they mean
    /// something (`workload { headers { } }`).
    fn flatten(&mut self, sec: &Section, prefix: &str, out: &mut Vec<Eff>) {
        if let Some(label) = &sec.label {
            if prefix == "topic" {
                out.push(Eff {
                    section: "topic".into(),
                    key: Spanned::new("name".into(), label.span),
                    value: Value {
                        kind: ValueKind::Str(label.node.clone()),
                        span: label.span,
                    },
                });
            } else {
                self.err(
                    Diagnostic::new(
                        Kind::Syntax,
                        label.span,
                        format!("`{prefix}` takes no name"),
                    )
                    .label("remove this")
                    .help("only `topic \"name\" { ... }` is named"),
                );
            }
        }
        for e in &sec.entries {
            match e {
                Entry::Setting(s) => out.push(Eff {
                    section: prefix.to_string(),
                    key: s.key.clone(),
                    value: s.value.clone(),
                }),
                Entry::Section(inner) if prefix == "workload" && inner.name.node == "headers" => {
                    self.flatten(inner, "workload.headers", out)
                }
                Entry::Section(inner) => self.err(
                    Diagnostic::new(
                        Kind::UnknownSection,
                        inner.name.span,
                        format!("`{}` cannot stand inside `{prefix}`", inner.name.node),
                    )
                    .label("unexpected block")
                    .help(if prefix == "workload" {
                        "the only block inside `workload` is `headers { }`".to_string()
                    } else {
                        format!("`{prefix}` holds `key = value` settings")
                    }),
                ),
                Entry::Expect(_, span) => self.err(
                    Diagnostic::new(
                        Kind::UnknownSection,
                        *span,
                        "`expect` belongs at the top of the scenario",
                    )
                    .label("move this out"),
                ),
                Entry::Include(i) => self.err(
                    Diagnostic::new(Kind::Include, i.span, "include was not resolved")
                        .label("here"),
                ),
            }
        }
    }

    fn matrix(&mut self, sec: &Section) -> Vec<Axis> {
        let mut axes: Vec<Axis> = Vec::new();
        for e in &sec.entries {
            let Entry::Setting(s) = e else {
                let span = match e {
                    Entry::Section(x) => x.name.span,
                    Entry::Expect(_, sp) => *sp,
                    Entry::Include(i) => i.span,
                    Entry::Setting(_) => unreachable!(),
                };
                self.err(
                    Diagnostic::new(Kind::Syntax, span, "a matrix holds `name = [values]`")
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
                let val = self
                    .scalar_plain(&v)
                    .unwrap_or_else(|| Val::Str(self.sources.text(v.span).to_string()));
                let text = self.sources.text(v.span).trim_matches('"').to_string();
                if values.iter().any(|x| x.val == val) {
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
                    val,
                    text,
                    overrides: vec![],
                });
            }
            axes.push(Axis { name, values });
        }
        axes
    }

    fn steps(&mut self, sec: &Section, cumulative: bool, has_consumer: &mut bool) -> Option<Axis> {
        let mut values: Vec<AxisValue> = Vec::new();
        let mut carried: Vec<Eff> = Vec::new();
        for e in &sec.entries {
            let Entry::Section(step) = e else {
                let span = match e {
                    Entry::Setting(s) => s.key.span,
                    Entry::Expect(_, sp) => *sp,
                    Entry::Include(i) => i.span,
                    Entry::Section(_) => unreachable!(),
                };
                self.err(
                    Diagnostic::new(
                        Kind::Syntax,
                        span,
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
            let mut own: Vec<Eff> = Vec::new();
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
                            _ => (head.to_string(), rest.to_string()),
                        };
                        let key_span = Span::new(
                            s.key.span.file,
                            s.key.span.start + head.len() + 1,
                            s.key.span.end,
                        );
                        if section == "consumer" {
                            *has_consumer = true;
                        }
                        own.push(Eff {
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
                    Entry::Expect(_, span) => self.err(
                        Diagnostic::new(
                            Kind::UnknownSection,
                            *span,
                            "`expect` belongs at the top of the scenario",
                        )
                        .label("move this out"),
                    ),
                    Entry::Include(i) => self.err(
                        Diagnostic::new(Kind::Include, i.span, "include was not resolved")
                            .label("here"),
                    ),
                }
            }
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
                val: Val::Word(name.clone()),
                text: name,
                overrides,
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

    // ---- values ------------------------------------------------------------------------------

    /// Follows `{var}` to the value it stands for in this cell.
    fn resolve<'v>(&mut self, v: &'v Value, ctx: &'v CellCtx) -> Option<&'v Value> {
        match &v.kind {
            ValueKind::Var(name) => match ctx.lookup(&name.node) {
                Some(av) => Some(&av.ast),
                None => {
                    let names: Vec<&str> = ctx.picks.iter().map(|(a, _)| a.name.as_str()).collect();
                    self.err(
                        Diagnostic::new(
                            Kind::Variable,
                            name.span,
                            format!("unknown variable `{}`", name.node),
                        )
                        .label("not a matrix variable or `step`")
                        .help(suggest(&name.node, &names, "variables are")),
                    );
                    None
                }
            },
            _ => Some(v),
        }
    }

    /// A scalar with no variables involved (matrix values, selector values).
    fn scalar_plain(&mut self, v: &Value) -> Option<Val> {
        let ctx = CellCtx { picks: vec![] };
        self.scalar(v, &ctx)
    }

    fn scalar(&mut self, v: &Value, ctx: &CellCtx) -> Option<Val> {
        let v = self.resolve(v, ctx)?;
        match &v.kind {
            ValueKind::Quantity(q) => units::quantity(q).map_err(|d| self.err(d)).ok(),
            ValueKind::Rate(r) => units::rate(r).map_err(|d| self.err(d)).ok(),
            ValueKind::Word(w) => Some(Val::Word(w.clone())),
            ValueKind::Str(s) => self.template(s, v.span, ctx).map(Val::Str),
            ValueKind::Call { name, args } if name.node == "env" => {
                self.env_call(args, v.span, ctx).map(Val::Str)
            }
            _ => {
                self.err(
                    Diagnostic::new(Kind::Type, v.span, "expected a single value")
                        .label(format!("this is {}", shape_name(&v.kind)))
                        .help("write a number with its unit, a word or a string here"),
                );
                None
            }
        }
    }

    /// `env("NAME", "default")`: read when the scenario is checked.
    fn env_call(
        &mut self,
        args: &[crate::syntax::Arg],
        span: Span,
        ctx: &CellCtx,
    ) -> Option<String> {
        let strs: Vec<Option<String>> = args
            .iter()
            .map(
                |a| match self.resolve(&a.value, ctx).map(|v| v.kind.clone()) {
                    Some(ValueKind::Str(s)) => Some(s),
                    _ => None,
                },
            )
            .collect();
        match strs.as_slice() {
            [Some(name)] => {
                match std::env::var(name) {
                    Ok(v) => Some(v),
                    Err(_) => {
                        self.err(
                        Diagnostic::new(Kind::Value, span, format!("environment variable `{name}` is not set"))
                            .label("no default given")
                            .help(format!("set {name}, or give a default: env(\"{name}\", \"localhost:9092\")")),
                    );
                        None
                    }
                }
            }
            [Some(name), Some(default)] => {
                Some(std::env::var(name).unwrap_or_else(|_| default.clone()))
            }
            _ => {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        span,
                        "env() takes a variable name and an optional default, both strings",
                    )
                    .label("here")
                    .help("e.g. env(\"KAFKA_BOOTSTRAP\", \"localhost:9092\")"),
                );
                None
            }
        }
    }

    /// Fills `{var}` in a string with this cell's values as written.
    fn template(&mut self, s: &str, span: Span, ctx: &CellCtx) -> Option<String> {
        let mut out = String::new();
        let mut rest = s;
        let mut ok = true;
        while let Some(i) = rest.find(['{', '\\']) {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            if let Some(esc) = tail.strip_prefix('\\') {
                // `\{` and `\}` are literal braces.
                out.push_str(&esc[..1.min(esc.len())]);
                rest = &esc[1.min(esc.len())..];
                continue;
            }
            let Some(end) = tail.find('}') else {
                out.push_str(tail);
                rest = "";
                break;
            };
            let name = &tail[1..end];
            match ctx.lookup(name) {
                Some(av) => out.push_str(&av.text),
                None => {
                    ok = false;
                    let names: Vec<&str> = ctx.picks.iter().map(|(a, _)| a.name.as_str()).collect();
                    let off = span.start + 1 + (s.len() - rest.len()) + i;
                    let vspan = Span::new(span.file, off, (off + end + 1).min(span.end));
                    self.err(
                        Diagnostic::new(
                            Kind::Variable,
                            vspan,
                            format!("unknown variable `{name}` in this name"),
                        )
                        .label("not a matrix variable or `step`")
                        .help(suggest(name, &names, "variables are")),
                    );
                }
            }
            rest = &tail[end + 1..];
        }
        out.push_str(rest);
        ok.then_some(out)
    }

    /// Reports a value of the wrong kind at the value it resolves to.
    fn wrong_kind(&mut self, v: &Value, ctx: &CellCtx, message: String, label: String, help: &str) {
        let rv = self.resolve(v, ctx).map_or(v.span, |x| x.span);
        self.err(
            Diagnostic::new(Kind::Type, rv, message)
                .label(label)
                .help(help),
        );
    }

    fn count(&mut self, v: &Value, ctx: &CellCtx, what: &str) -> Option<u64> {
        match self.scalar(v, ctx)? {
            Val::Number(n) if n >= 0.0 && n.fract() == 0.0 && n < 1e18 => Some(n as u64),
            other => {
                let (k, msg) = (
                    other.kind_name(),
                    format!("{what} is a whole number, not {}", other.kind_name()),
                );
                self.wrong_kind(
                    v,
                    ctx,
                    msg,
                    format!("expected a count, found {k}"),
                    "write e.g. `100_000`",
                );
                None
            }
        }
    }

    fn duration(&mut self, v: &Value, ctx: &CellCtx, what: &str) -> Option<Duration> {
        match self.scalar(v, ctx)? {
            Val::Duration(d) => Some(d),
            other => {
                let msg = format!("{what} is a duration, not {}", other.kind_name());
                let help = "durations carry a unit: ns, us, ms, s, m, h (e.g. `30s`)";
                self.wrong_kind(v, ctx, msg, "expected a duration".into(), help);
                None
            }
        }
    }

    fn size(&mut self, v: &Value, ctx: &CellCtx, what: &str) -> Option<u64> {
        match self.scalar(v, ctx)? {
            Val::Size(b) => Some(b),
            other => {
                let msg = format!("{what} is a size, not {}", other.kind_name());
                let help = "sizes carry a unit: B, KB, KiB, MB, MiB, GB, GiB (e.g. `1KiB`)";
                self.wrong_kind(v, ctx, msg, "expected a size".into(), help);
                None
            }
        }
    }

    // ---- lowering one cell -------------------------------------------------------------------

    fn lower(
        &mut self,
        ctx: &CellCtx,
        effs: &[Eff],
        consumer_on: bool,
        name_span: Span,
    ) -> Option<RunSpec> {
        let errors_before = self.diags.len();
        let mut bootstrap: Option<String> = None;
        let mut client = Props::default();
        let mut producer = Props::default();
        let mut consumer = Props::default();
        let mut topic = TopicSpec {
            name: String::new(),
            partitions: 1,
            replication: 1,
            configs: Props::default(),
            existing: false,
        };
        let mut topic_name_set = false;
        let mut w = WorkloadDraft::default();

        for e in effs {
            let key = e.key.node.as_str();
            match e.section.as_str() {
                "cluster" if key == "bootstrap" || key == "bootstrap.servers" => {
                    match self.scalar(&e.value, ctx) {
                        Some(Val::Str(s)) | Some(Val::Word(s)) => bootstrap = Some(s),
                        Some(other) => self.err(
                            Diagnostic::new(
                                Kind::Type,
                                e.value.span,
                                format!(
                                    "bootstrap is a string of host:port, not {}",
                                    other.kind_name()
                                ),
                            )
                            .label("expected \"host:port\""),
                        ),
                        None => {}
                    }
                }
                "cluster" => self.prop(&mut client, e, ctx),
                "producer" => self.prop(&mut producer, e, ctx),
                "consumer" => self.prop(&mut consumer, e, ctx),
                "topic" => match key {
                    "name" => {
                        if let Some(Val::Str(s)) = self.scalar(&e.value, ctx) {
                            topic.name = sanitize_topic(&s);
                            topic_name_set = true;
                        }
                    }
                    "partitions" => {
                        if let Some(n) = self.count(&e.value, ctx, "partitions") {
                            topic.partitions =
                                self.positive(n, e.value.span, "partitions", 100_000)?;
                        }
                    }
                    "replication" | "replication.factor" => {
                        if let Some(n) = self.count(&e.value, ctx, "replication") {
                            topic.replication =
                                self.positive(n, e.value.span, "replication", 32)?;
                        }
                    }
                    "existing" => match self.scalar(&e.value, ctx) {
                        Some(Val::Word(w)) if w == "true" || w == "false" => {
                            topic.existing = w == "true"
                        }
                        _ => self.err(
                            Diagnostic::new(
                                Kind::Type,
                                e.value.span,
                                "`existing` is `true` or `false`",
                            )
                            .label("expected true or false"),
                        ),
                    },
                    _ if props::TOPIC_CONFIGS.contains(&key) => {
                        if let Some(s) = self.prop_text(key, e, ctx) {
                            topic.configs.0.push(Prop {
                                key: key.into(),
                                value: s,
                                span: Some(e.key.span),
                            });
                        }
                    }
                    _ => {
                        let cands: Vec<&str> = TOPIC_KEYS
                            .iter()
                            .chain(props::TOPIC_CONFIGS)
                            .copied()
                            .collect();
                        self.err(
                            Diagnostic::new(Kind::UnknownKey, e.key.span, format!("unknown topic setting `{key}`"))
                                .label("not a topic setting or a topic-level config")
                                .help(suggest(key, &cands, "topic settings are `partitions`, `replication`, `existing` and Kafka's topic configs")),
                        )
                    }
                },
                "workload" => self.workload_key(&mut w, e, ctx),
                "workload.headers" => {
                    if let Some(v) = self.scalar(&e.value, ctx) {
                        let text = match v {
                            Val::Str(s) | Val::Word(s) => s,
                            _ => self.sources.text(e.value.span).to_string(),
                        };
                        w.headers.push((key.to_string(), text));
                    }
                }
                _ => {}
            }
        }

        if !topic_name_set {
            self.err(
                Diagnostic::new(Kind::Missing, name_span, "the scenario declares no topic")
                    .label("in this scenario")
                    .help("add `topic \"name\" { partitions = 3 }`; use `{var}` in the name for a fresh topic per cell"),
            );
        }
        if let (Some((true, span)), false) = (w.until, consumer_on) {
            self.err(
                Diagnostic::new(
                    Kind::Missing,
                    span,
                    "`in_flight_until = consumed` needs a consumer",
                )
                .label("no consumer in this run")
                .help("add `consumer { }`"),
            );
        }
        if let (Some((_, span)), None) = (w.until, w.in_flight) {
            self.err(
                Diagnostic::new(Kind::Missing, span, "`in_flight_until` needs `in_flight`")
                    .label("here")
                    .help("e.g. `in_flight = 1`"),
            );
        }
        let workload = self.finish_workload(w, name_span)?;
        if self.diags.len() > errors_before {
            return None;
        }
        let bootstrap = bootstrap.unwrap_or_else(|| {
            std::env::var("KAFKA_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:9092".into())
        });
        Some(RunSpec {
            bootstrap,
            client,
            topic,
            producer,
            consumer: consumer_on.then_some(consumer),
            workload,
        })
    }

    fn positive(&mut self, n: u64, span: Span, what: &str, max: u64) -> Option<i32> {
        if n == 0 || n > max {
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    format!("{what} must be between 1 and {max}"),
                )
                .label(format!("{n} is out of range")),
            );
            return None;
        }
        Some(n as i32)
    }

    /// A value as the text a Kafka property takes, with units converted by what the key takes.
    fn prop_text(&mut self, key: &str, e: &Eff, ctx: &CellCtx) -> Option<String> {
        let val = self.scalar(&e.value, ctx)?;
        let vspan = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
        let via = match &e.value.kind {
            ValueKind::Var(n) => format!(" (through `{{{}}}`)", n.node),
            _ => String::new(),
        };
        let mismatch = |this: &mut Self, wants: &str, hint: &str| {
            this.err(
                Diagnostic::new(
                    Kind::Type,
                    vspan,
                    if wants.starts_with("does not") {
                        format!("`{key}` {wants}{via}")
                    } else {
                        format!("`{key}` {wants}, but this is {}{via}", val.kind_name())
                    },
                )
                .label(format!("{} given here", val.kind_name()))
                .help(hint.to_string()),
            );
            None
        };
        match &val {
            Val::Duration(d) if props::takes_millis(key) => Some(units::millis(*d)),
            Val::Duration(_) => mismatch(
                self,
                "does not take a duration",
                "write a plain value; only `*.ms` properties take durations",
            ),
            Val::Size(b) if key.contains("kbytes") => Some((b / 1024).to_string()),
            Val::Size(b) if props::takes_bytes(key) => Some(b.to_string()),
            Val::Size(_) if props::takes_millis(key) => {
                mismatch(self, "takes a duration", "write a duration such as `5ms`")
            }
            Val::Size(_) => mismatch(
                self,
                "does not take a size",
                "only byte-valued properties (`*.bytes`, `*.size`) take sizes",
            ),
            Val::Number(n) => Some(units::number_text(*n)),
            Val::Word(s) | Val::Str(s) => Some(s.clone()),
            Val::Rate(_) | Val::ByteRate(_) | Val::Ratio(_) => mismatch(
                self,
                "takes a plain value",
                "rates and ratios belong in `workload` and `expect`",
            ),
        }
    }

    fn prop(&mut self, props: &mut Props, e: &Eff, ctx: &CellCtx) {
        let key = e.key.node.as_str();
        // A name pasted from a Java article is the real mistake, whatever its value.
        if let Some(note) = props::java_only(key) {
            self.err(
                Diagnostic::new(
                    Kind::JavaProperty,
                    e.key.span,
                    format!("`{key}` is a Java client property; librdkafka does not know it"),
                )
                .label("not a librdkafka property")
                .help(note),
            );
            return;
        }
        let Some(value) = self.prop_text(key, e, ctx) else {
            return;
        };
        match props::validate(&mut self.prop_cache, key, &value) {
            Ok(()) => props.0.push(Prop {
                key: key.into(),
                value,
                span: Some(e.key.span),
            }),
            Err(why) if why.contains("No such configuration property") => {
                let names: Vec<&str> = props::known_names().iter().map(|s| s.as_str()).collect();
                let help = match crate::diagnostic::closest(key, names.iter().copied()) {
                    Some(c) => format!("did you mean `{c}`?"),
                    None => "see librdkafka's CONFIGURATION.md for the property names".to_string(),
                };
                self.err(
                    Diagnostic::new(
                        Kind::Property,
                        e.key.span,
                        format!("librdkafka has no property `{key}`"),
                    )
                    .label("unknown client property")
                    .help(help),
                );
            }
            Err(why) => {
                let vspan = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
                self.err(
                    Diagnostic::new(
                        Kind::Property,
                        vspan,
                        format!("librdkafka refuses `{key} = {value}`"),
                    )
                    .label("refused value")
                    .help(why),
                );
            }
        }
    }

    fn workload_key(&mut self, w: &mut WorkloadDraft, e: &Eff, ctx: &CellCtx) {
        let key = e.key.node.as_str();
        match key {
            "messages" => {
                w.stop_given = true;
                w.messages = self.count(&e.value, ctx, "messages").map(|n| (n, e.value.span))
            }
            "duration" => {
                w.stop_given = true;
                w.duration = self.duration(&e.value, ctx, "duration")
            }
            "warmup" => {
                w.warmup = match self.scalar(&e.value, ctx) {
                    Some(Val::Duration(d)) => Some(Warmup::Duration(d)),
                    Some(Val::Number(n)) if n.fract() == 0.0 && n >= 0.0 => Some(Warmup::Messages(n as u64)),
                    Some(other) => {
                        self.err(
                            Diagnostic::new(Kind::Type, e.value.span, format!("warmup is a duration or a message count, not {}", other.kind_name()))
                                .label("expected e.g. `5s` or `10_000`"),
                        );
                        None
                    }
                    None => None,
                }
            }
            "rate" => w.rate = self.rate(&e.value, ctx),
            "in_flight" => {
                w.in_flight = self.count(&e.value, ctx, "in_flight").and_then(|n| self.positive(n, e.value.span, "in_flight", 1_000_000)).map(|n| n as u32)
            }
            "in_flight_until" => match self.scalar(&e.value, ctx) {
                Some(Val::Word(x)) if x == "acked" || x == "consumed" => w.until = Some((x == "consumed", e.value.span)),
                _ => self.err(
                    Diagnostic::new(Kind::Value, e.value.span, "in_flight_until is `acked` or `consumed`")
                        .label("expected acked or consumed")
                        .help("`consumed` waits for the consumer to read each record before the next is sent"),
                ),
            },
            "producers" => {
                if let Some(n) = self.count(&e.value, ctx, "producers").and_then(|n| self.positive(n, e.value.span, "producers", 64)) {
                    w.producers = n as u32;
                }
            }
            "payload" => w.payload = self.payload(&e.value, ctx),
            "key" => w.key = self.key(&e.value, ctx),
            _ => self.err(
                Diagnostic::new(Kind::UnknownKey, e.key.span, format!("unknown workload setting `{key}`"))
                    .label("not a workload setting")
                    .help(suggest(key, WORKLOAD_KEYS, "workload settings are")),
            ),
        }
    }

    fn rate(&mut self, v: &Value, ctx: &CellCtx) -> Option<RateSpec> {
        let rv = self.resolve(v, ctx)?;
        match &rv.kind {
            ValueKind::Word(w) if w == "unlimited" => Some(RateSpec::Unlimited),
            ValueKind::Shape(segs) => {
                let mut out = Vec::new();
                for s in segs {
                    let r = units::rate(&s.rate).map_err(|d| self.err(d)).ok();
                    let d = units::quantity(&s.duration).map_err(|d| self.err(d)).ok();
                    match (r, d) {
                        (Some(Val::Rate(per_sec)), Some(Val::Duration(duration))) => {
                            out.push(RateSegment { per_sec, duration })
                        }
                        (Some(Val::Rate(_)), Some(other)) => self.err(
                            Diagnostic::new(
                                Kind::Type,
                                s.duration_span,
                                format!("a segment lasts a duration, not {}", other.kind_name()),
                            )
                            .label("expected e.g. `1m`"),
                        ),
                        (Some(other), _) => self.err(
                            Diagnostic::new(
                                Kind::Type,
                                s.rate_span,
                                format!(
                                    "a segment's rate is messages per period, not {}",
                                    other.kind_name()
                                ),
                            )
                            .label("expected e.g. `200/s`"),
                        ),
                        _ => {}
                    }
                }
                (out.len() == segs.len()).then_some(RateSpec::Shape(out))
            }
            _ => match self.scalar(rv, ctx)? {
                Val::Rate(r) if r > 0.0 => Some(RateSpec::Fixed(r)),
                other => {
                    self.err(
                        Diagnostic::new(Kind::Type, rv.span, format!("a rate is `unlimited`, a positive rate or a shape, not {}", other.kind_name()))
                            .label("not a rate")
                            .help("e.g. `rate = 5000/s`, `rate = 8000/min`, `rate = 8000/min for 1m, then 200/s for 1m`"),
                    );
                    None
                }
            },
        }
    }

    fn call_args<'v>(
        &mut self,
        name: &Spanned<String>,
        args: &'v [crate::syntax::Arg],
        allowed: &[&str],
    ) -> Vec<(String, &'v Value)> {
        let mut out = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let n = match &a.name {
                Some(n) if allowed.contains(&n.node.as_str()) => n.node.clone(),
                Some(n) => {
                    self.err(
                        Diagnostic::new(
                            Kind::UnknownKey,
                            n.span,
                            format!("`{}` takes no argument `{}`", name.node, n.node),
                        )
                        .label("unknown argument")
                        .help(suggest(&n.node, allowed, "arguments are")),
                    );
                    continue;
                }
                None => match allowed.get(i) {
                    Some(n) => n.to_string(),
                    None => {
                        self.err(
                            Diagnostic::new(
                                Kind::Value,
                                a.value.span,
                                format!("too many arguments to `{}`", name.node),
                            )
                            .label("extra"),
                        );
                        continue;
                    }
                },
            };
            out.push((n, &a.value));
        }
        out
    }

    fn payload(&mut self, v: &Value, ctx: &CellCtx) -> Option<PayloadSpec> {
        let rv = self.resolve(v, ctx)?;
        let ValueKind::Call { name, args } = &rv.kind else {
            self.err(
                Diagnostic::new(Kind::Type, rv.span, "a payload is `random(size: ...)`, `json(size: ...)`, `file(\"path\")` or `constant(size: ...)`")
                    .label("not a payload")
                    .help("e.g. `payload = json(size: 1KiB)`"),
            );
            return None;
        };
        let kinds = ["random", "json", "file", "constant"];
        match name.node.as_str() {
            "random" => {
                let a = self.call_args(name, args, &["size", "compressibility"]);
                let mut size = None;
                let mut comp = 0.0;
                for (k, val) in a {
                    match k.as_str() {
                        "size" => size = self.size(val, ctx, "size"),
                        _ => match self.scalar(val, ctx) {
                            Some(Val::Ratio(r)) if (0.0..=1.0).contains(&r) => comp = r,
                            _ => self.err(
                                Diagnostic::new(
                                    Kind::Value,
                                    val.span,
                                    "compressibility is a percentage from 0% to 100%",
                                )
                                .label("expected e.g. `50%`"),
                            ),
                        },
                    }
                }
                let written = args
                    .iter()
                    .enumerate()
                    .any(|(i, a)| a.name.as_ref().map_or(i == 0, |n| n.node == "size"));
                let size = self.payload_size(size, rv.span, written)?;
                Some(PayloadSpec::Random {
                    size,
                    compressibility: comp,
                })
            }
            "json" => {
                let a = self.call_args(name, args, &["size", "event"]);
                let mut size = None;
                let mut event = "order.created".to_string();
                for (k, val) in a {
                    match k.as_str() {
                        "size" => size = self.size(val, ctx, "size"),
                        _ => match self.scalar(val, ctx) {
                            Some(Val::Str(s)) | Some(Val::Word(s)) => event = s,
                            _ => self.err(
                                Diagnostic::new(Kind::Type, val.span, "event is a string")
                                    .label("expected \"...\""),
                            ),
                        },
                    }
                }
                let written = args
                    .iter()
                    .enumerate()
                    .any(|(i, a)| a.name.as_ref().map_or(i == 0, |n| n.node == "size"));
                let size = self.payload_size(size, rv.span, written)?;
                Some(PayloadSpec::Json { size, event })
            }
            "constant" => {
                let a = self.call_args(name, args, &["size"]);
                let (_, val) = a.into_iter().next().or_else(|| {
                    self.err(
                        Diagnostic::new(
                            Kind::Missing,
                            rv.span,
                            "constant() needs a size or a string",
                        )
                        .label("here")
                        .help("e.g. `constant(size: 100B)`"),
                    );
                    None
                })?;
                match self.scalar(val, ctx)? {
                    Val::Size(b) => {
                        let size = self.payload_size(Some(b), rv.span, true)?;
                        let mut bytes = vec![0u8; size];
                        crate::run::payload::fill_random(&mut bytes, 0x5eed);
                        Some(PayloadSpec::Constant {
                            bytes: Arc::new(bytes),
                            size,
                        })
                    }
                    Val::Str(s) => Some(PayloadSpec::Constant {
                        size: s.len(),
                        bytes: Arc::new(s.into_bytes()),
                    }),
                    other => {
                        self.err(
                            Diagnostic::new(
                                Kind::Type,
                                val.span,
                                format!(
                                    "constant() takes a size or a string, not {}",
                                    other.kind_name()
                                ),
                            )
                            .label("here"),
                        );
                        None
                    }
                }
            }
            "file" => {
                let a = self.call_args(name, args, &["path"]);
                let (_, val) = a.into_iter().next().or_else(|| {
                    self.err(
                        Diagnostic::new(Kind::Missing, rv.span, "file() needs a path")
                            .label("here")
                            .help("e.g. `file(\"data/orders.jsonl\")`"),
                    );
                    None
                })?;
                let Some(Val::Str(p)) = self.scalar(val, ctx) else {
                    self.err(
                        Diagnostic::new(Kind::Type, val.span, "file() takes a path string")
                            .label("expected \"path\""),
                    );
                    return None;
                };
                let dir = self.sources.get(val.span.file).dir().to_path_buf();
                let path = if Path::new(&p).is_absolute() {
                    PathBuf::from(&p)
                } else {
                    dir.join(&p)
                };
                let loaded = self
                    .files
                    .entry(path.clone())
                    .or_insert_with(|| load_lines(&path))
                    .clone();
                match loaded {
                    Ok(lines) => Some(PayloadSpec::File { path, lines }),
                    Err(why) => {
                        self.err(
                            Diagnostic::new(
                                Kind::PayloadFile,
                                val.span,
                                format!("cannot use payload file {}: {why}", path.display()),
                            )
                            .label("this file")
                            .help(format!(
                                "paths are relative to the scenario's folder ({})",
                                dir.display()
                            )),
                        );
                        None
                    }
                }
            }
            other => {
                self.err(
                    Diagnostic::new(
                        Kind::UnknownKey,
                        name.span,
                        format!("unknown payload `{other}`"),
                    )
                    .label("not a payload kind")
                    .help(suggest(other, &kinds, "payloads are")),
                );
                None
            }
        }
    }

    fn payload_size(&mut self, size: Option<u64>, span: Span, written: bool) -> Option<usize> {
        match size {
            None if written => None,
            Some(b) if (1..=64 * 1024 * 1024).contains(&b) => Some(b as usize),
            Some(b) => {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        span,
                        format!("a payload of {b} bytes is out of range"),
                    )
                    .label("here")
                    .help("payload sizes go from 1B to 64MiB"),
                );
                None
            }
            None => {
                self.err(
                    Diagnostic::new(Kind::Missing, span, "this payload needs a size")
                        .label("here")
                        .help("e.g. `size: 1KiB`"),
                );
                None
            }
        }
    }

    fn key(&mut self, v: &Value, ctx: &CellCtx) -> Option<KeySpec> {
        let rv = self.resolve(v, ctx)?;
        let kinds = ["none", "sequence", "uniform", "zipf", "fixed"];
        match &rv.kind {
            ValueKind::Word(w) if w == "none" => Some(KeySpec::None),
            ValueKind::Word(w) if w == "sequence" => Some(KeySpec::Sequence),
            ValueKind::Str(s) => Some(KeySpec::Fixed(s.clone())),
            ValueKind::Call { name, args } if name.node == "fixed" => match args
                .first()
                .map(|a| self.scalar(&a.value, ctx))
            {
                Some(Some(Val::Str(s))) | Some(Some(Val::Word(s))) => Some(KeySpec::Fixed(s)),
                _ => {
                    self.err(
                        Diagnostic::new(Kind::Value, rv.span, "fixed() takes the key as a string")
                            .label("here")
                            .help("e.g. `fixed(\"store-42\")`"),
                    );
                    None
                }
            },
            ValueKind::Call { name, args } if name.node == "uniform" || name.node == "zipf" => {
                let allowed: &[&str] = if name.node == "zipf" {
                    &["keys", "exponent"]
                } else {
                    &["keys"]
                };
                let a = self.call_args(name, args, allowed);
                let mut n = None;
                let mut s = 1.1;
                for (k, val) in a {
                    if k == "keys" {
                        n = self.count(val, ctx, "the number of keys");
                    } else {
                        match self.scalar(val, ctx) {
                            Some(Val::Number(x)) if x > 0.0 && x < 10.0 => s = x,
                            _ => self.err(
                                Diagnostic::new(
                                    Kind::Value,
                                    val.span,
                                    "a zipf exponent is a number above 0, typically 0.8 to 1.5",
                                )
                                .label("here"),
                            ),
                        }
                    }
                }
                let n = match n {
                    Some(n) if (1..=10_000_000).contains(&n) => n,
                    _ => {
                        self.err(
                            Diagnostic::new(
                                Kind::Value,
                                rv.span,
                                format!(
                                    "{}() needs the number of keys, 1 to 10 million",
                                    name.node
                                ),
                            )
                            .label("here")
                            .help(format!("e.g. `{}(1000)`", name.node)),
                        );
                        return None;
                    }
                };
                Some(if name.node == "zipf" {
                    KeySpec::Zipf { n, s }
                } else {
                    KeySpec::Uniform(n)
                })
            }
            ValueKind::Word(w)
            | ValueKind::Call {
                name: Spanned { node: w, .. },
                ..
            } => {
                self.err(
                    Diagnostic::new(
                        Kind::UnknownKey,
                        rv.span,
                        format!("unknown key pattern `{w}`"),
                    )
                    .label("not a key pattern")
                    .help(suggest(w, &kinds, "key patterns are")),
                );
                None
            }
            _ => {
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        rv.span,
                        "a key is none, sequence, uniform(N), zipf(N, s) or a fixed string",
                    )
                    .label("not a key pattern"),
                );
                None
            }
        }
    }

    fn finish_workload(&mut self, w: WorkloadDraft, span: Span) -> Option<Workload> {
        let rate = w.rate.unwrap_or(RateSpec::Unlimited);
        if !w.stop_given && rate.total_duration().is_none() {
            self.err(
                Diagnostic::new(Kind::Missing, span, "the workload says neither how many messages nor how long")
                    .label("in this scenario")
                    .help("add `messages = 100_000` or `duration = 1m` to `workload { }`, or give `rate` a shape with durations"),
            );
            return None;
        }
        if let (Some((n, s)), true) = (w.messages, w.producers > 1) {
            if n < w.producers as u64 {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        s,
                        format!("{n} messages cannot be shared by {} producers", w.producers),
                    )
                    .label("too few"),
                );
            }
        }
        Some(Workload {
            messages: w.messages.map(|(n, _)| n),
            duration: w.duration,
            warmup: w.warmup,
            rate,
            in_flight: w.in_flight,
            in_flight_until_consumed: w.until.is_some_and(|(c, _)| c),
            producers: w.producers,
            payload: w.payload.unwrap_or(PayloadSpec::Random {
                size: 100,
                compressibility: 0.0,
            }),
            key: w.key.unwrap_or(KeySpec::None),
            headers: w.headers,
        })
    }
}

struct WorkloadDraft {
    messages: Option<(u64, Span)>,
    duration: Option<Duration>,
    warmup: Option<Warmup>,
    rate: Option<RateSpec>,
    in_flight: Option<u32>,
    /// `messages` or `duration` was written, even if its value was wrong.
    stop_given: bool,
    until: Option<(bool, Span)>,
    producers: u32,
    payload: Option<PayloadSpec>,
    key: Option<KeySpec>,
    headers: Vec<(String, String)>,
}

impl Default for WorkloadDraft {
    fn default() -> Self {
        WorkloadDraft {
            messages: None,
            duration: None,
            warmup: None,
            rate: None,
            in_flight: None,
            stop_given: false,
            until: None,
            producers: 1,
            payload: None,
            key: None,
            headers: vec![],
        }
    }
}

fn shape_name(k: &ValueKind) -> &'static str {
    match k {
        ValueKind::List(_) => "a list",
        ValueKind::Call { .. } => "a function call",
        ValueKind::Shape(_) => "a rate shape",
        _ => "a value",
    }
}

fn top_level_help(key: &str) -> String {
    let (head, _) = key.split_once('.').unwrap_or((key, ""));
    if OVERRIDABLE.contains(&head) {
        format!("put it inside `{head} {{ ... }}`")
    } else if let Some(c) = crate::diagnostic::closest(key, ["description"]) {
        format!("did you mean `{c}`?")
    } else {
        "the only top-level setting is `description`; everything else belongs in a section".into()
    }
}

/// Kafka topic names allow `[a-zA-Z0-9._-]`; anything else from a template becomes `_`.
fn sanitize_topic(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn load_lines(path: &Path) -> Result<Lines, String> {
    let data = std::fs::read(path).map_err(|e| e.to_string().to_lowercase())?;
    let lines: Vec<Vec<u8>> = data
        .split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .map(|l| l.to_vec())
        .collect();
    if lines.is_empty() {
        return Err("it has no non-empty lines".into());
    }
    Ok(Arc::new(lines))
}
