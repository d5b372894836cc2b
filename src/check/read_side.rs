//! The workload's read side: `consumers` (a group), `commit` (how it commits offsets) and
//! `backlog` (records to drain), each checked alone and against the rest of the run.

use std::time::Duration;

use super::axis::Picks;
use super::workload::WorkloadDraft;
use super::{Checker, Setting};
use crate::diagnostic::{closest, Diagnostic, Kind};
use crate::model::{Backlog, CommitPolicy, Props, Scalar, TopicSpec, CONSUMER_GROUP_CONFIGS};
use crate::syntax::{Value, ValueKind};

/// The most records a commit may wait for, and the longest auto-commit interval: past these
/// a group effectively never commits (write `commit = off` for that).
const MAX_COMMIT_RECORDS: u64 = 1_000_000_000;
const MAX_COMMIT_INTERVAL: Duration = Duration::from_secs(3600);
/// The most backlog records: days of reading at millions per second.
const MAX_BACKLOG: u64 = 1_000_000_000_000;
/// The longest a cold backlog waits for the brokers to offload it.
const MAX_COLD_WAIT: Duration = Duration::from_secs(3600);

/// Consumer properties of the classic group protocol that librdkafka refuses, when it creates
/// the consumer, under `group.protocol = consumer` (KIP-848), with what to do instead.
const CLASSIC_ONLY: &[(&str, &str)] = &[
    ("session.timeout.ms", "under KIP-848 the broker sets the session timeout (`group.consumer.session.timeout.ms`, or the group's `consumer.session.timeout.ms` through kafka-configs): remove it here"),
    ("heartbeat.interval.ms", "under KIP-848 the broker sets the heartbeat interval (`group.consumer.heartbeat.interval.ms`, 5 s by default, or the group's `consumer.heartbeat.interval.ms` through kafka-configs): remove it here"),
    ("partition.assignment.strategy", "under KIP-848 the broker assigns the partitions: write `group.remote.assignor = \"uniform\"` (or `\"range\"`) instead"),
    ("group.protocol.type", "it applies to the classic protocol only: remove it here"),
];

const COMMIT_FORMS: &str = "`auto`, `auto(1s)`, `every(1000)`, `every(1000, sync: true)` or `off`";

impl Checker<'_> {
    /// `commit = auto | auto(1s) | every(1000) | every(1000, sync: true) | off`.
    pub(super) fn commit(&mut self, v: &Value, ctx: &Picks) -> Option<CommitPolicy> {
        let rv = self.resolve(v, ctx)?;
        let (name, args) = match &rv.kind {
            ValueKind::Word(w) => (w.as_str(), &[][..]),
            ValueKind::Call { name, args } => (name.node.as_str(), &args[..]),
            _ => ("", &[][..]),
        };
        let span = rv.span;
        let positional = |i: usize, named: &str| {
            args.iter()
                .enumerate()
                .find(|(j, a)| match &a.name {
                    Some(n) => n.node == named,
                    None => *j == i,
                })
                .map(|(_, a)| &a.value)
        };
        let unknown = args.iter().find_map(|a| {
            a.name.as_ref().filter(|n| {
                !matches!(
                    (name, n.node.as_str()),
                    ("auto", "interval") | ("every", "records" | "sync")
                )
            })
        });
        if let Some(n) = unknown {
            self.err(
                Diagnostic::new(
                    Kind::UnknownKey,
                    n.span,
                    format!("`{name}` takes no argument `{}`", n.node),
                )
                .label("unknown argument")
                .help(if name == "every" {
                    "`every` takes the record count and `sync: true`: `every(1000, sync: true)`"
                } else {
                    "`auto` takes the interval: `auto(1s)`"
                }),
            );
            return None;
        }
        match name {
            "off" if args.is_empty() => Some(CommitPolicy::Off),
            "auto" => {
                let Some(d) = positional(0, "interval") else {
                    return Some(CommitPolicy::default());
                };
                let d = self.duration(d, ctx, "an auto-commit interval")?;
                if d.is_zero() || d > MAX_COMMIT_INTERVAL {
                    self.err(
                        Diagnostic::new(
                            Kind::Value,
                            span,
                            "an auto-commit interval is above 0s and at most 1h",
                        )
                        .label("out of range")
                        .help("librdkafka's default is `auto(5s)`; `commit = off` never commits"),
                    );
                    return None;
                }
                Some(CommitPolicy::Auto { interval: d })
            }
            "every" => {
                let Some(n) = positional(0, "records") else {
                    self.err(
                        Diagnostic::new(Kind::Value, span, "`every` needs a record count")
                            .label("commit after how many records?")
                            .help("e.g. `commit = every(1000)`"),
                    );
                    return None;
                };
                let records =
                    self.count(n, ctx, "a commit's record count", 1..=MAX_COMMIT_RECORDS)?;
                let sync = match positional(1, "sync").map(|s| self.scalar(s, ctx)) {
                    None => false,
                    Some(Some(Scalar::Word(w))) if w == "true" || w == "false" => w == "true",
                    Some(None) => return None,
                    Some(Some(_)) => {
                        self.err(
                            Diagnostic::new(Kind::Value, span, "`sync` is `true` or `false`")
                                .label("here")
                                .help("`every(1000, sync: true)` waits for each commit; without it commits are asynchronous"),
                        );
                        return None;
                    }
                };
                Some(CommitPolicy::Every { records, sync })
            }
            _ => {
                let help = match closest(name, ["auto", "every", "off"]) {
                    Some(c) if !name.is_empty() => {
                        format!("did you mean `{c}`? a commit policy is {COMMIT_FORMS}")
                    }
                    _ => format!("a commit policy is {COMMIT_FORMS}"),
                };
                self.err(
                    Diagnostic::new(Kind::Value, span, "not a commit policy")
                        .label("expected auto, every(N) or off")
                        .help(help),
                );
                None
            }
        }
    }

    /// `backlog = 1M` (records written before the clock starts) or `backlog = existing`.
    pub(super) fn backlog(&mut self, v: &Value, ctx: &Picks) -> Option<Backlog> {
        let rv = self.resolve(v, ctx)?;
        if let ValueKind::Call { name, args } = &rv.kind {
            if name.node != "cold" {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        name.span,
                        format!("`{}(...)` is not a backlog", name.node),
                    )
                    .label("expected a record count, cold(...) or existing")
                    .help(format!(
                        "{} e.g. `backlog = cold(1M)`: written before the clock starts and read once it has left local disk for remote storage",
                        crate::diagnostic::suggest(&name.node, &["cold"], "backlogs are")
                    )),
                );
                return None;
            }
            let a = self.call_args(name, args, &["records", "within"]);
            let (mut records, mut within) = (None, Backlog::COLD_WITHIN);
            for (k, val) in a {
                if k == "records" {
                    records = Some(self.count(val, ctx, "a backlog", 1..=MAX_BACKLOG)?);
                    continue;
                }
                let d = self.duration(val, ctx, "how long a cold backlog waits")?;
                if d < Duration::from_secs(1) || d > MAX_COLD_WAIT {
                    self.err(
                        Diagnostic::new(Kind::Value, val.span, "a cold backlog waits from 1s to 1h")
                            .label("out of range")
                            .help("e.g. `cold(1M, within: 5m)`: the broker offloads in rounds (remote.log.manager.task.interval.ms, 30 s by default)"),
                    );
                    return None;
                }
                within = d;
            }
            let Some(records) = records else {
                self.err(
                    Diagnostic::new(Kind::Missing, rv.span, "`cold(...)` needs its record count")
                        .label("how many records?")
                        .help("e.g. `backlog = cold(1M)`"),
                );
                return None;
            };
            return Some(Backlog::Cold { records, within });
        }
        if let ValueKind::Word(w) = &rv.kind {
            if w == "existing" {
                return Some(Backlog::Existing);
            }
            if !w.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                self.err(
                    Diagnostic::new(Kind::Value, rv.span, format!("`{w}` is not a backlog"))
                        .label("expected a record count or existing")
                        .help("e.g. `backlog = 1M` (written before the clock starts), or `backlog = existing` (what an existing topic holds)"),
                );
                return None;
            }
        }
        self.count(v, ctx, "a backlog", 1..=MAX_BACKLOG)
            .map(Backlog::Records)
    }

    /// The read side against the rest of the workload: a group, a commit policy and a
    /// backlog all need a consumer; a commit policy needs a group; `messages = 0` is a pure
    /// drain and needs a backlog.
    pub(super) fn read_side(&mut self, w: &WorkloadDraft, consumer_on: bool) {
        let no_consumer = |what: &str, span, why: &str| {
            Diagnostic::new(Kind::Missing, span, format!("{what} needs a consumer"))
                .label("no consumer in this run")
                .help(format!("add `consumer {{ }}`: {why}"))
        };
        if !consumer_on {
            if let Some((n, span)) = w.consumers {
                self.err(no_consumer(
                    &format!("`consumers = {n}`"),
                    span,
                    "its settings apply to every consumer of the group",
                ));
            }
            if let Some((_, span)) = w.backlog {
                self.err(no_consumer(
                    "`backlog`",
                    span,
                    "the consumers drain the backlog",
                ));
            }
        }
        if let (Some((_, span)), None) = (&w.commit, w.consumers) {
            self.err(
                Diagnostic::new(Kind::Missing, *span, "`commit` applies to a consumer group")
                    .label("no `consumers` in this workload")
                    .help("add `consumers = 1` (or more) to `workload { }`; the verification consumer commits nothing"),
            );
        }
        if let (Some((0, span)), None) = (w.messages, &w.backlog) {
            self.err(
                Diagnostic::new(Kind::Value, span, "messages must be at least 1")
                    .label("0 is too small")
                    .help("`messages = 0` sends nothing while a `backlog` drains; without a backlog a run sends at least one record"),
            );
        }
    }

    /// Under `group.protocol = consumer` (KIP-848) librdkafka refuses the classic protocol's
    /// properties when it creates the consumer, which would fail the run: each is reported at
    /// its key, with what takes its place.
    /// A group config of the consumer protocol in `consumer { }` (Kafka's name, in ms as
    /// Kafka writes it, or a duration): set on the group, not given to librdkafka.
    pub(super) fn group_config(&mut self, consumer: &mut Props, e: &Setting, ctx: &Picks) {
        let key = e.key.node.as_str();
        let ms = match self.scalar(&e.value, ctx) {
            None => return,
            Some(Scalar::Duration(d)) if d.as_millis() >= 1 => d.as_millis() as u64,
            Some(Scalar::Number(n)) if n.fract() == 0.0 && (1.0..=3_600_000.0).contains(&n) => {
                n as u64
            }
            Some(_) => {
                self.err(
                    Diagnostic::new(Kind::Value, e.value.span, format!("`{key}` is a time in milliseconds"))
                        .label("expected e.g. 1000 or 1s")
                        .help(format!("e.g. `{key} = 1000`: the group's own setting, within the broker's bounds (`group.consumer.min.*` and `group.consumer.max.*`)")),
                );
                return;
            }
        };
        consumer.0.push(crate::model::Prop {
            key: key.into(),
            value: ms.to_string(),
            span: Some(e.key.span),
        });
    }

    /// What the consumer protocol (KIP-848) refuses: the classic protocol's properties; and
    /// what only it takes: its group configs, which need a group (`consumers = N`).
    pub(super) fn group_protocol(&mut self, consumer: &Props, group: bool) {
        let kip848 = consumer
            .iter()
            .any(|p| p.key == "group.protocol" && p.value.eq_ignore_ascii_case("consumer"));
        for p in consumer.iter() {
            let Some(span) = p
                .span
                .filter(|_| CONSUMER_GROUP_CONFIGS.contains(&p.key.as_str()))
            else {
                continue;
            };
            if !kip848 {
                self.err(
                    Diagnostic::new(Kind::Property, span, format!("`{}` is a group config of the consumer protocol (KIP-848)", p.key))
                        .label("the classic protocol has no such setting")
                        .help("add `group.protocol = consumer`; under the classic protocol librdkafka's `heartbeat.interval.ms` and `session.timeout.ms` set them"),
                );
            } else if !group {
                self.err(
                    Diagnostic::new(
                        Kind::Missing,
                        span,
                        format!(
                            "`{}` configures a consumer group, and this run has none",
                            p.key
                        ),
                    )
                    .label("no group: one consumer reads by assignment")
                    .help("add `consumers = 3` to `workload { }` for a group of three"),
                );
            }
        }
        if !kip848 {
            return;
        }
        for p in consumer.iter() {
            let (Some((key, instead)), Some(span)) =
                (CLASSIC_ONLY.iter().find(|(k, _)| *k == p.key), p.span)
            else {
                continue;
            };
            self.err(
                Diagnostic::new(
                    Kind::Property,
                    span,
                    format!("`{key}` belongs to the classic group protocol: librdkafka refuses it with `group.protocol = consumer`"),
                )
                .label("a classic-protocol property")
                .help(*instead),
            );
        }
    }

    /// `backlog = existing` drains a topic that exists: one the run creates is empty.
    pub(super) fn backlog_topic(&mut self, w: &WorkloadDraft, topic: &TopicSpec) {
        if let (Some((Backlog::Existing, span)), false) = (&w.backlog, topic.existing) {
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    *span,
                    "`backlog = existing` drains a topic that already exists",
                )
                .label("this run creates its topic: it starts empty")
                .help("declare the topic with `existing = true`, or give a record count: `backlog = 1M`"),
            );
        }
        // A topic the run creates leaves local disk only with remote storage on; an existing
        // one's configs are the cluster's, not the file's.
        if let (Some((Backlog::Cold { .. }, span)), false) = (&w.backlog, topic.existing) {
            if !topic.tiered() {
                self.err(
                    Diagnostic::new(
                        Kind::Missing,
                        *span,
                        "a cold backlog needs a topic in remote storage",
                    )
                    .label(format!("topic `{}` keeps its records on local disk", topic.name))
                    .help("add `remote.storage.enable = true` and a short `local.retention.ms` (e.g. `local.retention.ms = 1000`) to the topic; the brokers need remote storage (`scripts/kafka-local up --tiered`)"),
                );
            }
        }
    }
}
