//! Client properties are validated by librdkafka itself, not by a hand-kept list: each is set
//! on a real librdkafka configuration and a refusal is reported at the property's span.

use std::collections::HashMap;
use std::sync::OnceLock;

use rdkafka::config::ClientConfig;
use rdkafka::error::KafkaError;

use super::axis::Picks;
use super::{units, Checker, Setting};
use crate::diagnostic::{closest, Diagnostic, Kind};
use crate::model::{is_secret, Prop, Props, Scalar, MASK};
use crate::source::Sources;
use crate::syntax::{Ast, Entry, Value, ValueKind};

/// Java-client names people paste from articles, with the librdkafka way to say it.
fn java_only(key: &str) -> Option<&'static str> {
    Some(match key {
        "buffer.memory" => "the Java client's buffer.memory is librdkafka's `queue.buffering.max.kbytes` (in KiB), together with `queue.buffering.max.messages`",
        "max.poll.records" => "librdkafka has no equivalent: its consumer hands out one message per poll, and kafkabench polls in a loop",
        "fetch.max.wait.ms" => "librdkafka calls this `fetch.wait.max.ms`",
        "max.block.ms" => "librdkafka has no equivalent: produce() never blocks; kafkabench polls and retries when the queue is full and counts it as `queue_full`",
        "key.serializer" | "value.serializer" | "key.deserializer" | "value.deserializer" => {
            "librdkafka has no serializers: kafkabench sends and receives raw bytes"
        }
        "max.request.size" => "librdkafka's closest is `message.max.bytes` (the largest request it sends)",
        "send.buffer.bytes" => "librdkafka calls this `socket.send.buffer.bytes`",
        "receive.buffer.bytes" => "librdkafka calls this `socket.receive.buffer.bytes`",
        "partitioner.class" => "librdkafka picks a built-in partitioner with `partitioner` (e.g. `murmur2_random`, `consistent_random`)",
        "interceptor.classes" | "metric.reporters" => "librdkafka has no Java plugins; drop this property",
        "sasl.jaas.config" => "librdkafka takes no JAAS config: say `sasl.mechanism`, `sasl.username` and `sasl.password = env(\"KAFKA_PASSWORD\")`",
        _ => return None,
    })
}

/// Java names that `client = java` would not take either: the worker's own serializers, classes
/// it cannot load, and security it is not given yet.
fn java_owned(key: &str) -> bool {
    key.ends_with("serializer")
        || matches!(
            key,
            "interceptor.classes" | "metric.reporters" | "sasl.jaas.config"
        )
}

/// How a scenario puts a block's side on the Java client.
fn java_side(section: &str) -> String {
    match section {
        "producer" | "consumer" => format!("`{section} {{ client = java }}`"),
        _ => "`client = java` in `producer { }` or `consumer { }`".to_string(),
    }
}

/// Where a setting written in the wrong block belongs, with the setting as it is written there:
/// another tool's name for a kafkabench setting (`vus`, `producerRate`), a client property
/// (`acks` → `producer { }`), a Java client's, or a topic config. `value` is the value as
/// written; a secret's is left out.
pub(super) fn home_of(key: &str, value: &str) -> Option<String> {
    if let Some(h) = crate::syntax::foreign_help(key, Some(value)) {
        return Some(h);
    }
    let value = if is_secret(key) { "..." } else { value };
    if let Some(note) = java_only(key) {
        return Some(format!("`{key}` is a Java client property: {note}"));
    }
    if known_names().iter().any(|n| n == key) {
        const CONSUMER: &[&str] = &[
            "group.",
            "fetch.",
            "auto.offset.reset",
            "enable.auto.",
            "auto.commit.",
            "isolation.level",
            "session.timeout.ms",
            "heartbeat.",
            "max.poll.",
            "partition.assignment.strategy",
            "queued.",
            "check.crcs",
        ];
        const CLUSTER: &[&str] = &[
            "security.",
            "sasl.",
            "ssl.",
            "bootstrap.servers",
            "client.id",
        ];
        let section = if key == "bootstrap.servers" {
            return Some(format!(
                "the brokers are `cluster {{ bootstrap = \"{value}\" }}`"
            ));
        } else if CONSUMER.iter().any(|p| key.starts_with(p)) {
            "consumer"
        } else if CLUSTER.iter().any(|p| key.starts_with(p)) {
            "cluster"
        } else {
            "producer"
        };
        return Some(format!(
            "`{key}` is a client property: put it in `{section} {{ {key} = {value} }}`"
        ));
    }
    if TOPIC_CONFIGS.contains(&key) {
        return Some(format!(
            "`{key}` is a topic config: put it in `topic \"name\" {{ {key} = {value} }}`"
        ));
    }
    None
}

/// Every property name librdkafka knows, for "did you mean".
fn known_names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names = crate::native::conf::property_names();
        // Aliases librdkafka accepts but does not dump.
        for alias in [
            "linger.ms",
            "batch.size",
            "compression.type",
            "acks",
            "max.in.flight",
            "retries",
            "retry.backoff.ms",
            "delivery.timeout.ms",
            "bootstrap.servers",
            "max.partition.fetch.bytes",
        ] {
            if !names.iter().any(|n| n == alias) {
                names.push(alias.to_string());
            }
        }
        names.sort();
        names
    })
}

/// Asks librdkafka whether `key = value` is acceptable. Err carries librdkafka's own words.
fn validate(
    cache: &mut HashMap<(String, String), Result<(), String>>,
    key: &str,
    value: &str,
) -> Result<(), String> {
    cache
        .entry((key.to_string(), value.to_string()))
        .or_insert_with(|| {
            let mut c = ClientConfig::new();
            c.set(key, value);
            match c.create_native_config() {
                Ok(_) => Ok(()),
                Err(KafkaError::ClientConfig(_, desc, _, _)) => Err(desc),
                Err(e) => Err(e.to_string()),
            }
        })
        .clone()
}

/// Topic-level configs of Kafka 4.x brokers. Used for suggestions and to catch typos before a
/// broker is contacted; the broker still has the last word when the topic is created.
pub(super) const TOPIC_CONFIGS: &[&str] = &[
    "cleanup.policy",
    "compression.type",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.zstd.level",
    "delete.retention.ms",
    "file.delete.delay.ms",
    "flush.messages",
    "flush.ms",
    "follower.replication.throttled.replicas",
    "index.interval.bytes",
    "leader.replication.throttled.replicas",
    "local.retention.bytes",
    "local.retention.ms",
    "max.compaction.lag.ms",
    "max.message.bytes",
    "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms",
    "message.timestamp.type",
    "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms",
    "min.insync.replicas",
    "preallocate",
    "remote.log.copy.disable",
    "remote.log.delete.on.disable",
    "remote.storage.enable",
    "retention.bytes",
    "retention.ms",
    "segment.bytes",
    "segment.index.bytes",
    "segment.jitter.ms",
    "segment.ms",
    "unclean.leader.election.enable",
];

/// Whether a property takes bytes (so a size like `1MiB` may be given).
fn takes_bytes(key: &str) -> bool {
    key.ends_with(".bytes")
        || key.ends_with(".size")
        || key.contains("kbytes")
        || key == "batch.size"
        // The Java client's (and franz-go's) byte-valued names.
        || key == "buffer.memory"
        || key == "max.request.size"
}

/// The first matrix variable (or `step`) a string's `{var}` fills in; None without one.
fn template_var<'s>(s: &'s str, ctx: &Picks) -> Option<&'s str> {
    template_names(s)
        .into_iter()
        .find(|n| ctx.lookup(n).is_some())
}

/// The names a string's `{name}` references (`\{` is a brace).
fn template_names(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find(['{', '\\']) {
        let tail = &rest[i..];
        if let Some(esc) = tail.strip_prefix('\\') {
            let mut c = esc.chars();
            c.next();
            rest = c.as_str();
            continue;
        }
        let Some(end) = tail.find('}') else { break };
        out.push(&tail[1..end]);
        rest = &tail[end + 1..];
    }
    out
}

/// Whether a property takes milliseconds (so a duration like `5ms` may be given).
fn takes_millis(key: &str) -> bool {
    key.ends_with(".ms") || key == "linger.ms"
}

/// Marks the value of every secret setting in the file as hidden, before anything is checked:
/// whatever diagnostic later shows its line (a typo beside it, a refusal at it, a section name
/// that is wrong around it) renders `*` in its place. Through `env("X", "default")` only the
/// default is a secret; through `{var}` the matrix values are.
pub(super) fn hide_secrets(ast: &Ast, sources: &Sources) {
    let mut vars = Vec::new();
    hide_in(&ast.entries, sources, &mut vars);
    if !vars.is_empty() {
        hide_matrix_values(&ast.entries, &vars, sources);
    }
}

fn hide_in(entries: &[Entry], sources: &Sources, vars: &mut Vec<String>) {
    for e in entries {
        match e {
            Entry::Setting(s) if is_secret(&s.key.node) => hide_value(&s.value, sources, vars),
            Entry::Section(sec) => hide_in(&sec.entries, sources, vars),
            _ => {}
        }
    }
}

fn hide_value(v: &Value, sources: &Sources, vars: &mut Vec<String>) {
    match &v.kind {
        // The variable's name is not the secret; a default given in the file is.
        ValueKind::Call { name, args } if name.node == "env" => {
            for a in args.iter().skip(1) {
                sources.hide(a.value.span);
            }
        }
        ValueKind::Var(n) => vars.push(n.node.clone()),
        ValueKind::Str(t) => {
            sources.hide(v.span);
            vars.extend(template_names(t).into_iter().map(String::from));
        }
        _ => sources.hide(v.span),
    }
}

fn hide_matrix_values(entries: &[Entry], vars: &[String], sources: &Sources) {
    for e in entries {
        let Entry::Section(sec) = e else { continue };
        for inner in &sec.entries {
            match inner {
                Entry::Setting(s) if sec.name.node == "matrix" && vars.contains(&s.key.node) => {
                    sources.hide(s.value.span)
                }
                _ => {}
            }
        }
    }
}

/// librdkafka's words about a refused value, with the value masked where it is a secret:
/// librdkafka quotes what it refuses.
fn refusal_text(why: &str, key: &str, value: &str) -> String {
    if is_secret(key) && !value.is_empty() {
        why.replace(value, MASK)
    } else {
        why.to_string()
    }
}

impl Checker<'_> {
    /// A value as the text a Kafka property takes, with units converted by what the key takes.
    pub(super) fn prop_text(&mut self, key: &str, e: &Setting, ctx: &Picks) -> Option<String> {
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
            Scalar::Duration(d) if takes_millis(key) => Some(units::millis(*d)),
            Scalar::Duration(_) => mismatch(
                self,
                "does not take a duration",
                "write a plain value; only `*.ms` properties take durations",
            ),
            Scalar::Size(b) if key.contains("kbytes") => Some((b / 1024).to_string()),
            Scalar::Size(b) if takes_bytes(key) => Some(b.to_string()),
            Scalar::Size(_) if takes_millis(key) => {
                mismatch(self, "takes a duration", "write a duration such as `5ms`")
            }
            Scalar::Size(_) => mismatch(
                self,
                "does not take a size",
                "only byte-valued properties (`*.bytes`, `*.size`) take sizes",
            ),
            Scalar::Number(n) => Some(units::number_text(*n)),
            Scalar::Word(s) | Scalar::Str(s) => Some(s.clone()),
            Scalar::Rate(_) | Scalar::ByteRate(_) | Scalar::Ratio(_) => mismatch(
                self,
                "takes a plain value",
                "rates and ratios belong in `workload` and `expect`",
            ),
        }
    }

    /// A secret given through `{var}`: its values would show in every run's label. Reported;
    /// true when it is.
    pub(super) fn secret_varies(&mut self, e: &Setting, ctx: &Picks) -> bool {
        let key = e.key.node.as_str();
        if !is_secret(key) {
            return false;
        }
        let n = match &e.value.kind {
            ValueKind::Var(n) => n.node.as_str(),
            // `"{pw}"` fills the variable in: the secret varies with it all the same.
            ValueKind::Str(s) => match template_var(s, ctx) {
                Some(n) => n,
                None => return false,
            },
            _ => return false,
        };
        self.err(
            Diagnostic::new(
                Kind::Value,
                e.value.span,
                format!("`{key}` is a secret and cannot vary between runs"),
            )
            .label("a matrix value")
            .help(format!(
                "set `{key}` once, e.g. `{key} = env(\"KAFKA_PASSWORD\")`: `{{{n}}}`'s values show in every run's label"
            )),
        );
        true
    }

    /// Checks one client property with librdkafka and adds it to `props`.
    pub(super) fn prop(&mut self, props: &mut Props, e: &Setting, ctx: &Picks) {
        let key = e.key.node.as_str();
        // A name pasted from a Java article is the real mistake, whatever its value.
        if let Some(note) = java_only(key) {
            self.err(
                Diagnostic::new(
                    Kind::JavaProperty,
                    e.key.span,
                    format!("`{key}` is a Java client property; librdkafka does not know it"),
                )
                .label("not a librdkafka property")
                .help(if java_owned(key) {
                    note.to_string()
                } else {
                    format!(
                        "{note}; or run it on the Java client: {}",
                        java_side(&e.section)
                    )
                }),
            );
            return;
        }
        if self.secret_varies(e, ctx) {
            return;
        }
        let Some(value) = self.prop_text(key, e, ctx) else {
            return;
        };
        match validate(&mut self.prop_cache, key, &value) {
            Ok(()) => props.0.push(Prop {
                key: key.into(),
                value,
                span: Some(e.key.span),
            }),
            Err(why) if why.contains("No such configuration property") => {
                let mut names: Vec<&str> = known_names().iter().map(|s| s.as_str()).collect();
                if e.section == "cluster" {
                    // kafkabench's own cluster settings are names a user may have misspelt too.
                    names.extend(["bootstrap", "schema_registry", "lost_after"]);
                }
                let help = match closest(key, names.iter().copied()) {
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
                        if is_secret(key) {
                            format!("librdkafka refuses the value of `{key}` (a secret, not shown)")
                        } else {
                            format!("librdkafka refuses `{key} = {value}`")
                        },
                    )
                    .label("refused value")
                    .help(refusal_text(&why, key, &value)),
                );
            }
        }
    }
}
