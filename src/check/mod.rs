//! Stage 2, check: [`Ast`] → typed [`Scenario`], or every diagnostic of the file at once.
//!
//! Matrices and steps are validated by lowering *every* cell: a value reached through `{var}`
//! is checked in each place it lands, and a step's override is checked against the settings it
//! overrides. Diagnostics are de-duplicated, so a mistake is reported once however many cells
//! it reaches.
//!
//! One [`Checker`] is spread over files by concept, each an `impl Checker` block: this file
//! sorts the sections, `axes` builds the matrix and step axes, `values` resolves values,
//! `lower` lowers one cell, `props` checks client properties, `workload` the workload keys,
//! `payload` the payload and key calls, `units` literals with units, `expect` assertions.

mod axes;
mod axis;
pub(crate) mod bootstrap;
mod broker_pick;
mod capacity;
mod client;
mod compaction;
mod expect;
mod faults;
mod lower;
mod payload;
mod phases;
mod placement;
mod props;
mod rate_shape;
mod read_side;
mod records;
mod repeat;
mod schema;
mod share;
mod size;
mod size_file;
mod topic;
mod topics;
mod transaction;
mod units;
mod unsupported;
mod values;
mod worker_props;
mod workload;

/// The metric vocabulary of `expect`, shared with `compare --fail-on`.
pub use expect::{parse_metric, METRIC_NAMES};
pub(crate) use topic::is_known_config;
pub use units::DURATION_UNITS;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::diagnostic::{suggest, Diagnostic, Diagnostics, Kind};
use crate::model::{Dimension, Scenario};
use crate::source::{Sources, Span, Spanned};
use crate::syntax::{self, Ast, Entry, Section, Value, ValueKind};

use axis::{Axis, Setting};

/// The most trials `repeat` asks for.
pub const MAX_REPEAT: u64 = 100;
use records::Lines;

const SECTIONS: &[&str] = &[
    "cluster", "topic", "producer", "consumer", "share", "workload", "capacity", "matrix", "steps",
    "ladder",
];
/// The sections whose settings a step may override.
const OVERRIDABLE: &[&str] = &[
    "cluster", "topic", "producer", "consumer", "share", "workload", "capacity",
];

/// Reads, parses and checks a scenario file: the front of the pipeline, as every command uses
/// it. An include that cannot be read is reported together with every problem of the rest of
/// the file; "missing" and "unknown variable" problems are then left out, since what they miss
/// may be in the file that could not be read.
pub fn load(path: &Path, sources: &mut Sources) -> Result<Scenario, Diagnostics> {
    let loaded = match crate::syntax::load(path, sources) {
        Ok(l) => l,
        Err(d) => {
            // Without a tree, secret values cannot be hidden by their spans: read for them.
            sources.hide_assignments(crate::model::is_secret);
            return Err(d);
        }
    };
    let checked = check(&loaded.ast, sources);
    if loaded.include_errors.is_empty() {
        return checked;
    }
    let mut diags = loaded.include_errors;
    if let Err(found) = checked {
        for d in found.items {
            if !matches!(d.kind, Kind::Missing | Kind::Variable) {
                diags.push(d);
            }
        }
    }
    Err(diags.finish())
}

/// Checks a parsed scenario. `sources` holds the files the spans point into; payload files are
/// resolved relative to the file that names them.
pub fn check(ast: &Ast, sources: &Sources) -> Result<Scenario, Diagnostics> {
    props::hide_secrets(ast, sources);
    let mut c = Checker {
        sources,
        diags: Diagnostics::default(),
        prop_cache: HashMap::new(),
        files: HashMap::new(),
        schemas: HashMap::new(),
        size_files: HashMap::new(),
        valueless: Vec::new(),
        compaction_checked: false,
        placements: Vec::new(),
        notes: Vec::new(),
    };
    let scenario = c.scenario(ast);
    let diags = c.diags.finish();
    match scenario {
        Some(s) if diags.is_empty() => Ok(s),
        _ => Err(diags),
    }
}

/// The checker's state; its methods live in the files of this module, one concept each.
struct Checker<'s> {
    sources: &'s Sources,
    diags: Diagnostics,
    /// librdkafka's answer per `(key, value)`: every cell asks again for the same settings.
    prop_cache: HashMap<(String, String), Result<(), String>>,
    /// Payload files by path and how they are cut into records, each read once.
    files: HashMap<(PathBuf, records::Records), Result<Lines, records::Unusable>>,
    /// Schema files by path and protobuf message, each compiled once.
    schemas: HashMap<(PathBuf, Option<String>), schema::Loaded>,
    /// `sizes("…")` files by path, each read once.
    size_files: HashMap<PathBuf, size_file::Loaded>,
    /// Axes declared without values: already reported, so a `{var}` naming one is not reported
    /// again as unknown, and the cells are lowered without them to find every other mistake.
    valueless: Vec<String>,
    /// Some cell checks its compacted topic after the run: `compaction.*` metrics exist.
    compaction_checked: bool,
    /// Where each keyed cell's producer puts a key, for the note on clients that differ.
    placements: Vec<placement::Placed>,
    /// Notes on a valid scenario: the scenario carries them to `check` and `plan`.
    notes: Vec<Diagnostic>,
}

/// The top-level entries of a scenario, sorted by what becomes of them.
#[derive(Default)]
struct Sections<'a> {
    description: Option<String>,
    /// The settings every cell starts from.
    base: Vec<Setting>,
    matrix: Option<&'a Section>,
    /// `steps` or `ladder`.
    steps: Option<&'a Section>,
    expects: Vec<&'a syntax::Assertion>,
    has_consumer: bool,
    /// Where `consumer { }` and `share { }` were written (a share group reads instead).
    consumer_span: Option<Span>,
    share_span: Option<Span>,
    /// The fault timeline every cell starts from (a step may replace it).
    faults: Option<&'a [syntax::Fault]>,
    /// `capacity { }`: every cell is a search (a step may bring its own block instead).
    capacity: Option<axis::CapacityBlock>,
    /// `repeat = N`: trials of every run.
    repeat: Option<u64>,
    /// `repeat = auto(…)` (`repeat` is then its `max`).
    repeat_auto: Option<crate::model::AutoRepeat>,
}

impl Checker<'_> {
    fn err(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// An `expect` block or an unresolved include inside a section or a step, where only
    /// settings and blocks belong. Other entries are not out of place and say nothing.
    fn out_of_place(&mut self, e: &Entry) {
        match e {
            Entry::Expect(_, span) => self.err(
                Diagnostic::new(
                    Kind::UnknownSection,
                    *span,
                    "`expect` belongs at the top of the scenario",
                )
                .label("move this out"),
            ),
            Entry::Include(i) => self.err(
                Diagnostic::new(Kind::Include, i.span, "include was not resolved").label("here"),
            ),
            Entry::Faults(_, span) => self.err(
                Diagnostic::new(
                    Kind::UnknownSection,
                    *span,
                    "`faults` belongs at the top of the scenario, or in a step",
                )
                .label("move this out"),
            ),
            Entry::Slo(_, span) => self.err(
                Diagnostic::new(
                    Kind::UnknownSection,
                    *span,
                    "`slo` belongs inside `capacity { }`",
                )
                .label("move this into `capacity { }`")
                .help("a capacity search's SLO: `capacity { slo { e2e.p99 < 20ms } }`; for checks after the run, use `expect { }`"),
            ),
            Entry::Setting(_) | Entry::Section(_) => {}
        }
    }

    fn scenario(&mut self, ast: &Ast) -> Option<Scenario> {
        let mut sections = self.sections(ast);

        let mut axes: Vec<Axis> = Vec::new();
        if let Some(sec) = sections.steps {
            let cumulative = sec.name.node == "ladder";
            match self.steps(sec, cumulative, &mut sections.has_consumer) {
                Some(axis) => axes.push(axis),
                None => self.valueless.push("step".into()),
            }
        }
        if let Some(m) = sections.matrix {
            axes.extend(self.matrix(m));
        }
        let (valueless, mut axes): (Vec<Axis>, Vec<Axis>) =
            axes.into_iter().partition(|a| a.values.is_empty());
        self.valueless.extend(valueless.into_iter().map(|a| a.name));
        let span = sections.matrix.map_or(ast.name.span, |m| m.name.span);
        let combinations = self.combinations(&axes, span)?;
        self.check_slos(&mut sections, &mut axes);

        let cells: Vec<_> = combinations
            .iter()
            .filter_map(|combination| self.cell(&axes, combination, &sections, ast.name.span))
            .collect();

        self.shared_topics(&cells);
        self.placement_note();
        // A run that did not lower (its own mistake is reported) is unknown, not a run without
        // a consumer, a share group, faults or a compaction check: where the scenario writes
        // one, what the assertions need of the runs is not said missing on the strength of
        // the runs that lowered, so one mistake is not said again.
        let lowered = cells.len() == combinations.len();
        let written = |yes: bool| !lowered && yes;
        if !written(sections.faults.is_some()) {
            self.fault_metrics(&sections.expects, &cells);
        }
        if !written(sections.share_span.is_some()) {
            self.share_metrics(&sections.expects, &cells);
        }
        if !written(sections.base.iter().any(|s| s.key.node == "backlog")) {
            self.drain_metrics(&sections.expects, &cells);
        }
        let any_consumer = written(sections.has_consumer || sections.share_span.is_some())
            || cells.iter().any(|c| c.spec.consumer.is_some());
        self.compaction_checked = written(sections.base.iter().any(|s| s.key.node == "compaction"))
            || cells.iter().any(|c| c.spec.workload.compaction.is_some());
        let mut assertions = Vec::new();
        for a in &sections.expects {
            if let Some(a) = expect::assertion(self, a, &axes, any_consumer) {
                if self.broker_fits(&a, false) {
                    assertions.push(a);
                }
            }
        }
        if !written(sections.capacity.is_some()) {
            self.capacity_unsearched(&assertions, &cells);
        }
        self.broker_clients(&assertions, &cells);

        let dims = axes
            .iter()
            .map(|a| Dimension {
                name: a.name.clone(),
                values: a.values.iter().map(|v| v.text.clone()).collect(),
            })
            .collect();
        lowered.then(|| Scenario {
            name: ast.name.node.clone(),
            description: sections.description,
            dims,
            cells,
            assertions,
            repeat: sections.repeat.unwrap_or(1) as u32,
            repeat_auto: sections.repeat_auto,
            notes: std::mem::take(&mut self.notes),
        })
    }

    /// Sorts the top-level entries, reporting unknown and repeated sections.
    fn sections<'a>(&mut self, ast: &'a Ast) -> Sections<'a> {
        let mut out = Sections::default();
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for e in &ast.entries {
            match e {
                Entry::Setting(s) if s.key.node == "repeat" => match self.repeat(&s.value) {
                    Some(repeat::Repeat::Fixed(n)) => out.repeat = Some(n),
                    Some(repeat::Repeat::Auto(a)) => {
                        out.repeat = Some(u64::from(a.max));
                        out.repeat_auto = Some(a);
                    }
                    None => {}
                },
                Entry::Setting(s) if s.key.node == "description" => match &s.value.kind {
                    ValueKind::Str(t) => out.description = Some(t.clone()),
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
                    .help(top_level_help(&s.key.node, self.sources.text(s.value.span))),
                ),
                Entry::Include(i) => self.err(
                    Diagnostic::new(Kind::Include, i.span, "include was not resolved")
                        .label("here"),
                ),
                Entry::Expect(a, _) => out.expects.extend(a.iter()),
                Entry::Slo(..) => self.out_of_place(e),
                Entry::Faults(f, span) => {
                    if out.faults.is_some() {
                        self.err(
                            Diagnostic::new(Kind::Duplicate, *span, "`faults` is declared twice")
                                .label("second declaration")
                                .help("merge the two `faults` blocks into one"),
                        );
                    } else {
                        out.faults = Some(f);
                    }
                }
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
                                &[SECTIONS, &["expect", "faults"]].concat(),
                                "sections are",
                            )),
                        );
                        continue;
                    }
                    if seen.insert(name, sec.name.span).is_some() {
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
                        "matrix" => out.matrix = Some(sec),
                        "steps" | "ladder" => {
                            if let Some(other) = out.steps {
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
                                out.steps = Some(sec);
                            }
                        }
                        _ => {
                            if name == "consumer" {
                                out.has_consumer = true;
                                out.consumer_span = Some(sec.name.span);
                            }
                            if name == "share" {
                                out.share_span = Some(sec.name.span);
                            }
                            if name == "capacity" {
                                out.capacity = Some(axis::CapacityBlock::of(self, sec));
                            }
                            self.flatten(sec, name, &mut out.base);
                        }
                    }
                }
            }
        }
        out
    }

    /// Flattens a section into [`Setting`]s; nested sections are allowed only where they mean
    /// something (`workload { headers { } }`).
    fn flatten(&mut self, sec: &Section, prefix: &str, out: &mut Vec<Setting>) {
        if let Some(label) = &sec.label {
            if prefix == "topic" {
                out.push(Setting {
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
                Entry::Setting(s) => out.push(Setting {
                    section: prefix.to_string(),
                    key: s.key.clone(),
                    value: s.value.clone(),
                }),
                Entry::Section(inner) if prefix == "workload" && inner.name.node == "headers" => {
                    self.flatten(inner, "workload.headers", out)
                }
                // Topic configs passed to the broker by the name written, unchecked.
                Entry::Section(inner) if prefix == "topic" && inner.name.node == "configs" => {
                    self.flatten(inner, "topic.configs", out)
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
                    } else if prefix == "topic" {
                        "the only block inside `topic` is `configs { }` (configs passed to the broker unchecked)".to_string()
                    } else {
                        format!("`{prefix}` holds `key = value` settings")
                    }),
                ),
                // `capacity { }`'s own block (`CapacityBlock::of` read it).
                Entry::Slo(..) if prefix == "capacity" => {}
                Entry::Expect(..) | Entry::Include(_) | Entry::Faults(..) | Entry::Slo(..) => {
                    self.out_of_place(e)
                }
            }
        }
    }

    /// Each `slo { }` checked once against the axes: the scenario's and every step's.
    fn check_slos(&mut self, sections: &mut Sections, axes: &mut [Axis]) {
        let consumer = sections.has_consumer;
        if let Some(b) = &mut sections.capacity {
            self.check_slo(b, axes, consumer);
        }
        for a in 0..axes.len() {
            for v in 0..axes[a].values.len() {
                if let Some(mut b) = axes[a].values[v].capacity.take() {
                    self.check_slo(&mut b, axes, consumer);
                    axes[a].values[v].capacity = Some(b);
                }
            }
        }
    }
}

fn top_level_help(key: &str, value: &str) -> String {
    let (head, _) = key.split_once('.').unwrap_or((key, ""));
    if OVERRIDABLE.contains(&head) {
        format!("put it inside `{head} {{ ... }}`")
    } else if key == "client" {
        "each side has its own client: `producer { client = java }`, and the read side's in `consumer { }`".into()
    } else if key == "seed" {
        format!(
            "the seed is the workload's: `workload {{ seed = {} }}`",
            value.trim()
        )
    } else if let Some(home) = props::home_of(key, value.trim()) {
        home
    } else if let Some(c) = crate::diagnostic::closest(key, ["description", "repeat"]) {
        format!("did you mean `{c}`?")
    } else {
        "the top-level settings are `description` and `repeat`; everything else belongs in a section".into()
    }
}
