//! AutoMQ's topic groups (its fork's `version: 1` workloads, January to May 2024, e.g.
//! `workloads/massive.yaml`): `topicGroups` lists groups of topics, each with its own topics,
//! partitions, message size, payload file, clients and rate, all loaded at once for the test;
//! the warm-up, duration and key distributor stay at the top level, and the top level's own
//! topics, sizes, clients and rate are not read. One group is a workload, imported as one; a
//! scenario cannot say several at once ([`Lack::TopicGroups`]), so they are refused, named
//! first, before any field the groups make absent.

use serde::de::DeserializeOwned;
use serde_yaml::{Mapping, Value};

use super::lacks::Lack;
use super::omb::Workload;
use super::yaml::{has_field, Extra, Read};
use crate::diagnostic::{Diagnostic, Diagnostics, Kind};
use crate::source::{Sources, Span};

/// What a topic group holds in AutoMQ's fork (`TopicGroupSpec`), read into the workload.
const GROUP_FIELDS: &[&str] = &[
    "topics",
    "partitionsPerTopic",
    "messageSize",
    "payloadFile",
    "subscriptionsPerTopic",
    "consumerPerSubscription",
    "producersPerTopic",
    "producerRate",
];

/// Top-level fields AutoMQ's fork does not read with `version: 1` (the groups say them).
const UNREAD_AT_TOP: &[&str] = &[
    "topics",
    "partitionsPerTopic",
    "messageSize",
    "payloadFile",
    "subscriptionsPerTopic",
    "consumerPerSubscription",
    "producersPerTopic",
    "producerRate",
    "useRandomizedPayloads",
    "randomBytesRatio",
    "randomizedPayloadPoolSize",
];

/// The workload with its one topic group read into it, and notes on what the groups changed;
/// the file as it was when it has no `topicGroups`. Err: a file whose groups cannot be one
/// workload, said at `topicGroups`.
pub(super) fn topic_groups(
    mut read: Read<Workload>,
    sources: &Sources,
) -> Result<(Read<Workload>, Vec<String>), Diagnostics> {
    let Some(at) = read.extras.iter().position(|e| e.name == "topicGroups") else {
        return Ok((read, Vec::new()));
    };
    let span = read.extras[at].span;
    let refuse = |msg: String, label: String, help: &str| -> Diagnostics {
        Diagnostic::new(Kind::Value, span, msg)
            .label(label)
            .help(help.to_string())
            .into()
    };
    let version = read
        .extras
        .iter()
        .find(|e| e.name == "version")
        .and_then(|e| e.value.as_i64());
    if version != Some(1) {
        return Err(refuse(
            "AutoMQ's fork reads `topicGroups` only with `version: 1`; without it, it reads the top-level fields instead".into(),
            "topic groups without `version: 1`".into(),
            "add `version: 1` to run the groups, or remove `topicGroups`",
        ));
    }
    let groups = match &read.extras[at].value {
        Value::Sequence(g) if !g.is_empty() => g.clone(),
        _ => {
            return Err(refuse(
                "`topicGroups` is not a list of topic groups".into(),
                "not a list of groups".into(),
                "write `topicGroups:` and then one `- groupName: …` item per group",
            ))
        }
    };
    if groups.len() > 1 {
        return Err(refuse(
            format!(
                "`topicGroups` (AutoMQ's fork) loads {} groups of topics at once, each with its own topics, sizes, clients and rate: {}",
                groups.len(),
                Lack::TopicGroups.words()
            ),
            format!("{} topic groups", groups.len()),
            "import one group at a time: a copy of the file with one of the groups (and `version: 1`) imports; kafkabench runs the files one after another, not at once",
        ));
    }
    if read.value.consumer_backlog_size_gb.unwrap_or(0) > 0 {
        return Err(refuse(
            "AutoMQ's fork refuses a backlog (`consumerBacklogSizeGB`) with topic groups".into(),
            "topic groups and a backlog".into(),
            "remove `consumerBacklogSizeGB`, or write the group's fields at the top level without `topicGroups` and `version`",
        ));
    }
    let Value::Mapping(group) = &groups[0] else {
        return Err(refuse(
            "the topic group is not a mapping of fields".into(),
            "not a topic group".into(),
            "write the group as `- groupName: …` followed by its fields (`topics: 1`, …)",
        ));
    };
    let text = &sources.get(read.file).text;
    let mut notes = Vec::new();
    let unread: Vec<&str> = UNREAD_AT_TOP
        .iter()
        .copied()
        .filter(|f| has_field(text, f))
        .collect();
    if !unread.is_empty() {
        notes.push(format!(
            "with version 1 AutoMQ's fork does not read the top level's {}: the topic group's fields count",
            unread.join(", ")
        ));
    }
    into_workload(&mut read, group, span)?;
    Ok((read, notes))
}

/// The group's fields in place of the top level's; its other fields become extras, for the
/// fork's comments.
fn into_workload(
    read: &mut Read<Workload>,
    group: &Mapping,
    span: Span,
) -> Result<(), Diagnostics> {
    let w = &mut read.value;
    for field in UNREAD_AT_TOP {
        clear(w, field);
    }
    read.bad.retain(|b| !UNREAD_AT_TOP.contains(&b.as_str()));
    let mut diags = Diagnostics::default();
    for (k, v) in group {
        let Some(name) = k.as_str() else { continue };
        if GROUP_FIELDS.contains(&name) {
            if let Err(why) = set(&mut read.value, name, v) {
                read.bad.push(name.to_string());
                diags.push(
                    Diagnostic::new(
                        Kind::Type,
                        span,
                        format!("the topic group's `{name}`: {why}"),
                    )
                    .label("in this topic group")
                    .help(format!(
                        "`{name}` takes a whole number (`payloadFile`: a path)"
                    )),
                );
            }
            continue;
        }
        let name = match name {
            "groupName" | "producerRateList" => name.to_string(),
            other => format!("topicGroups.{other}"),
        };
        read.extras.push(Extra {
            name,
            value: v.clone(),
            span,
        });
    }
    if diags.is_empty() {
        Ok(())
    } else {
        Err(diags)
    }
}

fn clear(w: &mut Workload, field: &str) {
    match field {
        "topics" => w.topics = None,
        "partitionsPerTopic" => w.partitions_per_topic = None,
        "messageSize" => w.message_size = None,
        "payloadFile" => w.payload_file = None,
        "subscriptionsPerTopic" => w.subscriptions_per_topic = None,
        "consumerPerSubscription" => w.consumer_per_subscription = None,
        "producersPerTopic" => w.producers_per_topic = None,
        "producerRate" => w.producer_rate = None,
        "useRandomizedPayloads" => w.use_randomized_payloads = None,
        "randomBytesRatio" => w.random_bytes_ratio = None,
        "randomizedPayloadPoolSize" => w.randomized_payload_pool_size = None,
        _ => {}
    }
}

fn set(w: &mut Workload, field: &str, v: &Value) -> Result<(), String> {
    fn read<T: DeserializeOwned>(v: &Value) -> Result<Option<T>, String> {
        serde_yaml::from_value::<T>(v.clone())
            .map(Some)
            .map_err(|e| e.to_string())
    }
    match field {
        "topics" => w.topics = read(v)?,
        "partitionsPerTopic" => w.partitions_per_topic = read(v)?,
        "messageSize" => w.message_size = read(v)?,
        "payloadFile" => w.payload_file = read(v)?,
        "subscriptionsPerTopic" => w.subscriptions_per_topic = read(v)?,
        "consumerPerSubscription" => w.consumer_per_subscription = read(v)?,
        "producersPerTopic" => w.producers_per_topic = read(v)?,
        "producerRate" => w.producer_rate = read(v)?,
        _ => {}
    }
    Ok(())
}
