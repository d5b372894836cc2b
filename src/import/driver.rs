//! An OMB Kafka driver file in kafkabench's terms: the replication factor and topic configs go
//! to the topic block, `commonConfig` to the cluster block, producer and consumer properties to
//! theirs, each translated to librdkafka's name and checked by the checker; what cannot be
//! carried over stays as a comment saying why.

use super::java::{self, Translated, Val};
use super::kbs::{self, Block, Item};
use super::omb::{Driver, KAFKA_DRIVER};
use super::yaml::value_span;
use crate::diagnostic::{Diagnostic, Diagnostics, Kind};
use crate::model::is_secret;
use crate::source::{FileId, Sources};

/// What the driver file contributes to the scenario.
#[derive(Default)]
pub(super) struct Parts {
    pub header: Vec<String>,
    pub cluster: Vec<Item>,
    pub topic: Vec<Item>,
    pub producer: Vec<Item>,
    pub consumer: Vec<Item>,
}

pub(super) fn map(d: &Driver, file: FileId, sources: &Sources) -> Result<Parts, Diagnostics> {
    let text = &sources.get(file).text;
    let mut diags = Diagnostics::default();
    if let Some(class) = d.driver_class.as_deref().filter(|c| *c != KAFKA_DRIVER) {
        diags.push(
            Diagnostic::new(
                Kind::Value,
                value_span(file, text, "driverClass"),
                format!("`{class}` is not OMB's Kafka driver"),
            )
            .label("another driver")
            .help(format!(
                "kafkabench imports Kafka driver files (driverClass: {KAFKA_DRIVER})"
            )),
        );
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
    if d.reset == Some(true) {
        p.header.push(
            "reset: true (delete every topic first) is not needed: each run creates its own topic and deletes it".into(),
        );
    }
    match d.replication_factor {
        Some(-1) => p.topic.push(Item::Note(
            "replicationFactor: -1 is the broker's default; kafkabench needs a number (its default is 1)".into(),
        )),
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
                java::translate(&key, &value)
            };
            for t in translated {
                carry(t, field, section, out, &mut bootstrap);
            }
        }
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
                Ok(()) => out.push(Item::Set {
                    key,
                    value: text,
                    comment: note,
                }),
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

/// A block from items; None when there is nothing in it.
pub(super) fn block(head: &str, items: Vec<Item>) -> Option<Block> {
    (!items.is_empty()).then(|| Block {
        head: head.to_string(),
        items,
    })
}
