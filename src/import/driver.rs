//! An OMB Kafka driver file in kafkabench's terms: the replication factor and topic configs go
//! to the topic block, `commonConfig` to the cluster block, producer and consumer properties to
//! theirs, each translated to librdkafka's name and checked by the checker; what cannot be
//! carried over stays as a comment saying why.

use super::fork;
use super::java::{self, Translated, Val};
use super::kbs::{self, Block, Item};
use super::omb::{Driver, KAFKA_DRIVER};
use super::yaml::{value_span, Read};
use crate::diagnostic::{Diagnostic, Diagnostics, Kind};
use crate::model::is_secret;
use crate::source::{FileId, Sources, Span};

/// What the driver file contributes to the scenario.
#[derive(Default)]
pub(super) struct Parts {
    pub header: Vec<String>,
    pub cluster: Vec<Item>,
    pub topic: Vec<Item>,
    pub producer: Vec<Item>,
    pub consumer: Vec<Item>,
    /// Settings of the workload block (a fork driver's transactions).
    pub workload: Vec<Item>,
    /// The topic's name, when the driver names its topics (aklivity's `topicPrefix`).
    pub topic_name: Option<String>,
    pub warnings: Vec<String>,
}

pub(super) fn map(read: &Read<Driver>, sources: &Sources) -> Result<Parts, Diagnostics> {
    let (d, file) = (&read.value, read.file);
    let text = &sources.get(file).text;
    let mut diags = Diagnostics::default();
    let class = d.driver_class.as_deref().map(|c| (c, fork::class(c)));
    // A driver of an unknown class is read as OMB's Kafka driver when it has that driver's fields.
    let kafka_shaped = [
        &d.topic_config,
        &d.common_config,
        &d.producer_config,
        &d.consumer_config,
    ]
    .iter()
    .any(|f| f.is_some());
    match class {
        Some((name, fork::Class::Other(system))) => diags.push(other_system(
            name,
            system,
            value_span(file, text, "driverClass"),
        )),
        Some((name, fork::Class::Unknown)) if !kafka_shaped => diags.push(
            Diagnostic::new(
                Kind::Value,
                value_span(file, text, "driverClass"),
                format!("`{name}` is not a driver kafkabench knows, and the file has none of the Kafka driver's fields"),
            )
            .label("unknown driver")
            .help(format!(
                "kafkabench imports Kafka-protocol driver files: OMB's (driverClass: {KAFKA_DRIVER}) and its forks' (Redpanda's, AutoMQ's, Aiven's, Confluent's)"
            )),
        ),
        _ => {}
    }
    if let Some(rf) = d
        .replication_factor
        .filter(|rf| !(1..=32).contains(rf) && *rf != -1)
    {
        diags.push(
            Diagnostic::new(
                Kind::Value,
                value_span(file, text, "replicationFactor"),
                format!("`replicationFactor: {rf}` is out of range"),
            )
            .label("here")
            .help("a replication factor goes from 1 to 32 (or -1, the broker's default)"),
        );
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let mut p = Parts::default();
    p.header.push(format!(
        "driver: {}",
        d.name.as_deref().unwrap_or("(no name)")
    ));
    let warn = |span: Span, msg: String| super::warning(sources, span, &msg);
    if let Some((name, c)) = class {
        p.header.extend(fork::class_notes(c, name));
        if c == fork::Class::Unknown {
            p.header.push(format!(
                "driverClass {name} is not a driver kafkabench knows; read as OMB's Kafka driver, whose fields it has"
            ));
            p.warnings.push(warn(
                value_span(file, text, "driverClass"),
                format!("`{name}` is not a driver class kafkabench knows: read as OMB's Kafka driver, whose fields it has"),
            ));
        }
    }
    if !read.placeholders.is_empty() {
        p.header.push(format!(
            "a template (Jinja, as Ansible fills it): {} kept as written; render it first, or set what they stand for",
            read.placeholders.join(", ")
        ));
        p.warnings.push(warn(
            Span::new(file, 0, 0),
            format!(
                "the driver file is a template: its placeholders ({}) are kept as written (`--bootstrap` or KAFKA_BOOTSTRAP sets the cluster)",
                read.placeholders.join(", ")
            ),
        ));
    }
    let (filled, filled_warnings) = super::shell::said(&read.filled, sources, file);
    p.header.extend(filled);
    p.warnings.extend(filled_warnings);
    let tx = matches!(class, Some((_, fork::Class::Redpanda(fork::Variant::Tx))));
    extras(read, tx, &mut p, &warn);
    let fgelcer = fork::fgelcer_driver(&read.extras);
    p.header.extend(fgelcer.notes);
    for (i, why) in fgelcer.warnings {
        p.warnings.push(warn(read.extras[i].span, why));
    }
    if let Some(n) = fgelcer.transaction {
        p.workload.push(Item::Set {
            key: "transaction".into(),
            value: n.to_string(),
            comment: Some("useTransactions, batchSize: records per transaction".into()),
        });
    }
    let tx = tx || fgelcer.transaction.is_some();
    if d.reset == Some(true) {
        p.header.push(
            "reset: true (delete every topic first) is not needed: each run creates its own topic and deletes it".into(),
        );
    }
    match d.replication_factor {
        Some(-1) => p.topic.push(Item::Note(format!(
            "replicationFactor: -1 is the broker's default; {} (its default is 1)",
            super::lacks::Lack::DefaultReplication.words()
        ))),
        Some(rf) => p.topic.push(Item::Set {
            key: "replication".into(),
            value: rf.to_string(),
            comment: Some("replicationFactor".into()),
        }),
        None => p.topic.push(Item::Note(
            "the driver has no replicationFactor: kafkabench's default is 1".into(),
        )),
    }
    let mut bootstrap = None;
    let pem = pem_stores(d);
    for (field, section, out) in [
        ("topicConfig", "topic", &mut p.topic),
        ("commonConfig", "cluster", &mut p.cluster),
        ("producerConfig", "producer", &mut p.producer),
        ("consumerConfig", "consumer", &mut p.consumer),
    ] {
        let block = match field {
            "topicConfig" => &d.topic_config,
            "commonConfig" => &d.common_config,
            "producerConfig" => &d.producer_config,
            _ => &d.consumer_config,
        };
        for (key, value) in last_of_each(java::parse(block.as_deref().unwrap_or("")), field, out) {
            let translated = if section == "topic" {
                vec![Translated::Set {
                    key: key.clone(),
                    value: Val::Text(value.clone()),
                    note: None,
                }]
            } else {
                java::pem_store(&key, &value, pem).unwrap_or_else(|| java::translate(&key, &value))
            };
            // Serializers and group.id have kafkabench's own equivalent: only a comment.
            let benign = key.ends_with(".serializer")
                || key.ends_with(".deserializer")
                || key == "group.id"
                || key == "bootstrap.servers"
                || (key.ends_with("store.type") && java::is_pem(&value));
            for t in translated {
                let before = out.len();
                carry(t, field, section, out, &mut bootstrap);
                let removed = section == "topic" && REMOVED_IN_KAFKA_4.contains(&key.as_str());
                if let Some(Item::Set { .. }) = out.get(before).filter(|_| removed) {
                    let at = property_span(file, text, field, &key);
                    p.warnings.push(warn(
                        at,
                        format!("{field}: `{key}` was removed in Kafka 4.0: kept, and a Kafka 4 cluster refuses it before the first run"),
                    ));
                }
                if let Some(Item::Note(n)) = out.get(before).filter(|_| !benign) {
                    let at = property_span(file, text, field, &key);
                    p.warnings
                        .push(warn(at, format!("{n}: carried as a comment")));
                }
            }
        }
    }
    let isolation = p
        .consumer
        .iter()
        .any(|i| matches!(i, Item::Set { key, .. } if key == "isolation.level"));
    if tx && !isolation {
        // With transactions the two clients' defaults differ in what a reader waits for.
        p.consumer.push(Item::Set {
            key: "isolation.level".into(),
            value: "read_uncommitted".into(),
            comment: Some(
                "the Java client's default, which OMB's consumers read with; librdkafka's is read_committed".into(),
            ),
        });
    }
    if let Some(servers) = bootstrap {
        p.cluster.insert(
            0,
            Item::Set {
                key: "bootstrap".into(),
                value: format!("env(\"KAFKA_BOOTSTRAP\", {})", kbs::string(&servers)),
                comment: Some("bootstrap.servers; --bootstrap overrides".into()),
            },
        );
    }
    Ok(p)
}

/// A driver file of another system than Kafka, at its `driverClass`.
pub(super) fn other_system(name: &str, system: &str, at: Span) -> Diagnostic {
    Diagnostic::new(
        Kind::Value,
        at,
        format!("`{name}` is OMB's {system} driver, not a Kafka-protocol one"),
    )
    .label("another system's driver")
    .help(other_help(system))
}

fn other_help(system: &str) -> String {
    let kafka = format!("kafkabench speaks the Kafka protocol: it imports Kafka driver files (driverClass: {KAFKA_DRIVER}) and those of OMB's forks (Redpanda's, AutoMQ's, Aiven's, Confluent's)");
    if system.starts_with("Kafka-on-Pulsar") {
        // KoP serves Kafka clients, but its file is laid out for a Pulsar cluster and both clients.
        format!("{kafka}; KoP's file is laid out for both clients (`kafkaConfig`, `pulsarConfig`): to run its Kafka side, write its Kafka properties in a Kafka driver file (`commonConfig`, `producerConfig`, `consumerConfig`)")
    } else {
        kafka
    }
}

/// The driver's fields that OMB's Kafka driver does not have: Redpanda's transactions are
/// mapped, the others carried as comments (OMB's driver reader ignores fields it does not know).
fn extras(read: &Read<Driver>, tx: bool, p: &mut Parts, warn: &dyn Fn(Span, String) -> String) {
    let requests = read
        .extras
        .iter()
        .find(|e| e.name == "requestsPerTransaction");
    match (tx, requests.map(|e| e.value.as_i64())) {
        (true, Some(Some(n))) if n > 0 => p.workload.push(Item::Set {
            key: "transaction".into(),
            value: n.to_string(),
            comment: Some("requestsPerTransaction: records per transaction".into()),
        }),
        (true, _) => {
            let shown = requests.map_or("absent (Java's 0)".into(), |e| fork::show(&e.value));
            p.workload.push(Item::Note(format!(
                "requestsPerTransaction: {shown}: Redpanda's tx driver cannot commit a transaction of fewer than 1 record; no `transaction` is set"
            )));
            p.warnings.push(warn(
                requests.map_or(Span::new(read.file, 0, 0), |e| e.span),
                "Redpanda's tx driver needs `requestsPerTransaction` of 1 or more: imported without transactions".into(),
            ));
        }
        _ => {}
    }
    for e in &read.extras {
        // Only numbers and flags are shown: a driver's other values may hold credentials.
        let shown = match &e.value {
            serde_yaml::Value::Number(_) | serde_yaml::Value::Bool(_) => fork::show(&e.value),
            serde_yaml::Value::Sequence(_) => "(a list)".into(),
            serde_yaml::Value::Mapping(_) => "(a mapping)".into(),
            _ => "(a value)".into(),
        };
        let (note, warning) = match e.name.as_str() {
            "requestsPerTransaction" if tx => continue,
            name if fork::is_fgelcer_field(name) => continue,
            "requestsPerTransaction" => (
                format!("requestsPerTransaction: {shown} is read only by Redpanda's tx driver (…driver.redpanda.tx.RedpandaBenchmarkDriver): no transactions"),
                "`requestsPerTransaction` is read only by Redpanda's tx driver: ignored, as this driver class does, and carried as a comment".to_string(),
            ),
            "skipCreateTopic" if e.value.as_bool() == Some(false) => {
                p.header.push("skipCreateTopic: false (aklivity's fork): topics are created, as here".into());
                continue;
            }
            "topicPrefix" => match e.value.as_str().map(super::workload::slug) {
                Some(prefix) if !prefix.is_empty() => {
                    p.header.push(format!(
                        "topicPrefix: \"{}\" (aklivity's fork): the topics' names start with it, and so do kafkabench's (then the run id)",
                        fork::show(&e.value)
                    ));
                    p.topic_name = Some(prefix);
                    continue;
                }
                _ => (
                    format!("topicPrefix: \"{}\" (aklivity's fork): not a topic name Kafka takes; the topic is named after the workload", fork::show(&e.value)),
                    "`topicPrefix` (aklivity's fork) is not a topic name Kafka takes: the topic is named after the workload".to_string(),
                ),
            },
            "skipCreateTopic" => (
                format!("skipCreateTopic: {shown} (aklivity's fork): the topics exist already; kafkabench creates its own (a topic block with `existing = true` uses one that exists)"),
                "`skipCreateTopic` (aklivity's fork) is not imported, since the import creates its own topic: carried as a comment".to_string(),
            ),
            name => {
                let meant = super::yaml::did_you_mean(name, super::omb::DRIVER.names);
                (
                    format!("{name}: {shown} is not a field of OMB's Kafka driver{meant}: OMB ignores fields it does not know, and so does the import"),
                    format!("`{name}` is not a field of OMB's Kafka driver (nor a known fork's){meant}: ignored, as OMB does, and carried as a comment"),
                )
            }
        };
        p.header.push(note);
        p.warnings.push(warn(e.span, warning));
    }
}

/// Java's `Properties` keeps the last of a key given twice; so does the import, and says so.
fn last_of_each(
    pairs: Vec<(String, String)>,
    field: &str,
    out: &mut Vec<Item>,
) -> Vec<(String, String)> {
    let mut kept: Vec<(String, String)> = Vec::new();
    for (key, value) in pairs {
        if let Some(i) = kept.iter().position(|(k, _)| *k == key) {
            kept.remove(i);
            out.push(Item::Note(format!(
                "{field}: `{key}` is given twice; the last one counts, as in Java"
            )));
        }
        kept.push((key, value));
    }
    kept
}

/// One translated property into its block: set if the checker accepts it there, else a comment.
fn carry(
    t: Translated,
    field: &str,
    section: &str,
    out: &mut Vec<Item>,
    bootstrap: &mut Option<String>,
) {
    match t {
        Translated::Bootstrap(servers) => {
            if bootstrap.is_none() {
                *bootstrap = Some(servers);
            } else {
                out.push(Item::Note(format!(
                    "{field}: bootstrap.servers = {servers} is left out: the cluster's bootstrap is set once"
                )));
            }
        }
        Translated::Dropped(note) => out.push(Item::Note(format!("{field}: {note}"))),
        Translated::Set { key, value, note } => {
            let (text, probe) = match &value {
                Val::Text(v) => (kbs::literal(v), kbs::literal(v)),
                // The checker would read the variable: ask it about the name with a stand-in.
                Val::Env(name) => (kbs::env(name), "\"x\"".to_string()),
            };
            match kbs::probe(section, &key, &probe) {
                Ok(()) => {
                    let comment = note.or_else(|| {
                        (section == "topic" && !crate::check::is_known_config(&key))
                            .then(|| unlisted_topic_config(&key).to_string())
                    });
                    out.push(Item::Set {
                        key,
                        value: text,
                        comment,
                    })
                }
                Err(why) => {
                    let shown = match &value {
                        Val::Text(v) if !is_secret(&key) => format!("{key} = {v}"),
                        _ => key.clone(),
                    };
                    out.push(Item::Note(format!(
                        "{field}: `{shown}` left out: {}",
                        why.trim_end_matches('.')
                    )));
                }
            }
        }
    }
}

/// Topic configs Kafka 4.0 removed: a Kafka 4 broker refuses them.
const REMOVED_IN_KAFKA_4: &[&str] = &[
    "message.downconversion.enable",
    "message.format.version",
    "message.timestamp.difference.max.ms",
];

/// The comment on a topic config kafkabench does not list, kept for the broker to judge.
fn unlisted_topic_config(key: &str) -> &'static str {
    if REMOVED_IN_KAFKA_4.contains(&key) {
        "removed in Kafka 4.0: a Kafka 4 cluster refuses it before the first run"
    } else {
        "not one of Kafka's topic configs: a vendor's, passed to the broker, asked before the first run"
    }
}

/// Whether the driver's trust store and key store are PEM files (their `*.type`, in any block).
fn pem_stores(d: &Driver) -> (bool, bool) {
    let blocks = [&d.common_config, &d.producer_config, &d.consumer_config];
    let typed = |store: &str| {
        blocks.iter().any(|b| {
            java::parse(b.as_deref().unwrap_or(""))
                .iter()
                .any(|(k, v)| k == store && java::is_pem(v))
        })
    };
    (typed("ssl.truststore.type"), typed("ssl.keystore.type"))
}

/// Where `key` is set in the `field: |` block, or the field's name when it cannot be found.
fn property_span(file: FileId, text: &str, field: &str, key: &str) -> Span {
    let at = value_span(file, text, field);
    let mut offset = at.start;
    for (i, line) in text[at.start..].split_inclusive('\n').enumerate() {
        let bare = line.trim_start();
        if i > 0 && !line.starts_with([' ', '\t']) && !bare.is_empty() {
            break;
        }
        let rest = bare.strip_prefix(key).unwrap_or("-");
        if i > 0 && rest.starts_with(['=', ':', ' ', '\t']) {
            let start = offset + line.len() - bare.len();
            return Span::new(file, start, start + key.len());
        }
        offset += line.len();
    }
    at
}

/// A block from items; None when there is nothing in it.
pub(super) fn block(head: &str, items: Vec<Item>) -> Option<Block> {
    (!items.is_empty()).then(|| Block {
        head: head.to_string(),
        items,
    })
}
