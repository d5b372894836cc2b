//! The topic of a run: its settings, and its name as Kafka will see it — only the characters
//! Kafka allows, within Kafka's length once the run suffix is added, and one created topic per
//! run.
//!
//! A topic config kafkabench does not list is passed to the broker (vendors add their own:
//! Aiven's `diskless.enable`, `redpanda.*`, `confluent.*`), unless it is a near miss of one it
//! lists (`retention.msx`), which is refused with a did-you-mean; `configs { }` inside the
//! topic block passes any name as written. The broker's refusal is the run stage's, up front.
//!
//! Characters Kafka refuses are refused where they are written. Where they come from a
//! variable's value (`topic "by-{who}"` with `who = ["cy/dee"]`) they become `_` in a topic
//! kafkabench creates, since the value is also a setting and cannot be renamed; but never in an
//! `existing` topic, where the replaced name could be a different topic that exists.

use std::collections::BTreeMap;

use super::axis::Picks;
use super::{props, Checker, Setting};
use crate::diagnostic::{suggest, Diagnostic, Kind};
use crate::model::{Cell, Prop, Scalar, TopicSpec, RUN_SUFFIX_LEN, TOPIC_NAME_MAX};
use crate::syntax::ValueKind;

const TOPIC_KEYS: &[&str] = &["partitions", "replication", "existing"];

/// The most edits that make an unknown config a misspelling of a known one (`retention.msx`,
/// `cleanup.polcy`) rather than a vendor's (`diskless.enable`, `redpanda.remote.read`, whose
/// nearest known names are 11 and more edits away).
const NEAR_MISS: usize = 2;

/// Whether `key` is one of Kafka's topic configs as this kafkabench lists them (others are a
/// vendor's or another Kafka version's, passed to the broker unchecked).
pub(crate) fn is_known_config(key: &str) -> bool {
    props::TOPIC_CONFIGS.contains(&key)
}

/// The known setting or config an unknown name is a near miss of.
fn near_config(key: &str) -> Option<&'static str> {
    let key_l = key.to_ascii_lowercase();
    TOPIC_KEYS
        .iter()
        .chain(props::TOPIC_CONFIGS)
        .chain(&["replication.factor"])
        .map(|c| (strsim::damerau_levenshtein(&key_l, c), *c))
        .filter(|(d, _)| *d <= NEAR_MISS)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

const ALLOWED: &str = "letters, digits, `.`, `_` and `-`";

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

impl Checker<'_> {
    /// One `topic` setting.
    pub(super) fn topic_setting(
        &mut self,
        topic: &mut TopicSpec,
        named: &mut bool,
        e: &Setting,
        ctx: &Picks,
    ) {
        let key = e.key.node.as_str();
        match key {
            "name" => {
                // Named even when the name has a mistake: that mistake is the diagnostic.
                *named = true;
                let span = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
                if let Some(ValueKind::Str(raw)) = self.resolve(&e.value, ctx).map(|v| &v.kind) {
                    if let Some(c) = written_refused_char(raw) {
                        self.err(
                            Diagnostic::new(
                                Kind::Value,
                                span,
                                format!("{} cannot stand in a topic name", shown(c)),
                            )
                            .label("in this name")
                            .help(format!("Kafka topic names use {ALLOWED}")),
                        );
                        return;
                    }
                }
                match self.scalar(&e.value, ctx) {
                    Some(Scalar::Str(s)) => {
                        topic.name = s;
                        topic.name_span = Some(span);
                    }
                    Some(other) => self.err(
                        Diagnostic::new(
                            Kind::Type,
                            span,
                            format!("a topic name is a string, not {}", other.kind_name()),
                        )
                        .label("expected \"name\""),
                    ),
                    None => {}
                }
            }
            // The bounds are sanity limits: far above what a benchmark topic uses, low enough
            // that a stray digit is caught before the broker is asked.
            "partitions" => {
                if let Some(n) = self.count(&e.value, ctx, "partitions", 1..=100_000) {
                    topic.partitions = n as i32;
                }
            }
            "replication" | "replication.factor" => {
                if let Some(n) = self.count(&e.value, ctx, "replication", 1..=32) {
                    topic.replication = n as i32;
                }
            }
            "existing" => match self.scalar(&e.value, ctx) {
                Some(Scalar::Word(w)) if w == "true" || w == "false" => {
                    topic.existing = w == "true"
                }
                _ => self.err(
                    Diagnostic::new(Kind::Type, e.value.span, "`existing` is `true` or `false`")
                        .label("expected true or false"),
                ),
            },
            _ if props::TOPIC_CONFIGS.contains(&key) => self.topic_config(topic, e, ctx),
            _ => match near_config(key) {
                // A vendor's config (`diskless.enable`, `redpanda.remote.read`, …) or one this
                // kafkabench does not list: the broker judges it, before any run sends.
                None if key.contains('.') => self.topic_config(topic, e, ctx),
                near => {
                    let cands: Vec<&str> = TOPIC_KEYS
                        .iter()
                        .chain(props::TOPIC_CONFIGS)
                        .copied()
                        .collect();
                    let help = match near {
                        Some(known) if key.contains('.') => format!(
                            "did you mean `{known}`? A config the broker knows by this very name is passed as written from the topic's `configs {{ {key} = … }}` block"
                        ),
                        Some(known) => format!("did you mean `{known}`?"),
                        None => suggest(key, &cands, "topic settings are `partitions`, `replication`, `existing`, Kafka's topic configs and a vendor's (dotted names, passed to the broker); `configs { name = … }` passes any name"),
                    };
                    let label = match near {
                        Some(_) if key.contains('.') => {
                            "too near a known name to pass as a vendor's config"
                        }
                        _ => "not a topic setting or a topic-level config",
                    };
                    self.err(
                        Diagnostic::new(
                            Kind::UnknownKey,
                            e.key.span,
                            format!("unknown topic setting `{key}`"),
                        )
                        .label(label)
                        .help(help),
                    )
                }
            },
        }
    }

    /// A topic config, passed to the broker when the topic is created: Kafka's, a vendor's,
    /// or any in `configs { }`, whose names are not checked.
    pub(super) fn topic_config(&mut self, topic: &mut TopicSpec, e: &Setting, ctx: &Picks) {
        let key = e.key.node.as_str();
        if let Some(s) = self.prop_text(key, e, ctx) {
            topic.configs.0.push(Prop {
                key: key.into(),
                value: s,
                span: Some(e.key.span),
            });
        }
    }

    /// The name once every setting of the cell is known (`existing` may come after it).
    pub(super) fn finish_topic(&mut self, topic: &mut TopicSpec) {
        let Some(span) = topic.name_span else {
            return;
        };
        if let Some(c) = topic.name.chars().find(|c| !allowed(*c)) {
            if topic.existing {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        span,
                        format!(
                            "the existing topic `{}` has a character Kafka does not allow",
                            topic.name
                        ),
                    )
                    .label(format!("{} comes from a variable's value", shown(c)))
                    .help(format!(
                        "an existing topic is used by its exact name, which only has {ALLOWED}: change the value"
                    )),
                );
                return;
            }
            topic.name = topic
                .name
                .chars()
                .map(|c| if allowed(c) { c } else { '_' })
                .collect();
        }
        if topic.name.is_empty() || topic.name == "." || topic.name == ".." {
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    format!("`{}` is not a topic name Kafka accepts", topic.name),
                )
                .label("not a topic name")
                .help("name the topic, e.g. `topic \"orders\" { }`"),
            );
            return;
        }
        let (length, suffix) = if topic.existing {
            (topic.name.chars().count(), "")
        } else {
            (
                topic.name.chars().count() + RUN_SUFFIX_LEN,
                " with the run suffix",
            )
        };
        if length > TOPIC_NAME_MAX {
            let keep = TOPIC_NAME_MAX - (length - topic.name.chars().count());
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    format!("this topic name is {length} characters{suffix}; Kafka allows {TOPIC_NAME_MAX}"),
                )
                .label("too long")
                .help(format!("shorten the name to at most {keep} characters")),
            );
        }
    }

    /// Two runs that would create the same topic: the second would find the first's topic (or
    /// find it being deleted) at run time. Runs may share an existing topic.
    pub(super) fn shared_topics(&mut self, cells: &[Cell]) {
        let mut by_name: BTreeMap<&str, Vec<&Cell>> = BTreeMap::new();
        for c in cells.iter().filter(|c| !c.spec.topic.existing) {
            by_name.entry(&c.spec.topic.name).or_default().push(c);
        }
        for (name, runs) in by_name.into_iter().filter(|(_, r)| r.len() > 1) {
            let Some(span) = runs[1]
                .spec
                .topic
                .name_span
                .or(runs[0].spec.topic.name_span)
            else {
                continue;
            };
            let labels: Vec<String> = runs.iter().map(|c| format!("`{}`", c.label())).collect();
            let who = match labels.as_slice() {
                [a, b] => format!("runs {a} and {b} would both"),
                [a, b, rest @ ..] => format!("runs {a}, {b} and {} more would all", rest.len()),
                _ => unreachable!("filtered to two or more"),
            };
            // A variable in which these runs differ makes their names differ.
            let differs = runs[0]
                .coords
                .iter()
                .find(|c| runs[1].coord(&c.dim).is_some_and(|o| o.text != c.text))
                .map_or("step".to_string(), |c| c.dim.clone());
            self.err(
                Diagnostic::new(
                    Kind::Duplicate,
                    span,
                    format!("{who} create topic `{name}`"),
                )
                .label(format!("one topic for {} runs", runs.len()))
                .help(format!(
                    "put a variable in the name, e.g. `topic \"{name}-{{{differs}}}\"`, so each run has its own topic"
                )),
            );
        }
    }
}

/// The first character Kafka refuses among those written in the name itself, outside `{var}`
/// (an escaped `\{` is a brace, which Kafka refuses too).
fn written_refused_char(raw: &str) -> Option<char> {
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(e) = chars.next() {
                    if !allowed(e) {
                        return Some(e);
                    }
                }
            }
            '{' => {
                for v in chars.by_ref() {
                    if v == '}' {
                        break;
                    }
                }
            }
            c if !allowed(c) => return Some(c),
            _ => {}
        }
    }
    None
}

/// A character as a diagnostic shows it: a space or a control character would be invisible
/// between backticks.
fn shown(c: char) -> String {
    if c.is_whitespace() || c.is_control() {
        format!("{c:?}")
    } else {
        format!("`{c}`")
    }
}
