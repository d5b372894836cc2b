//! An OMB workload in kafkabench's terms: the topic's size, the `workload` block (duration,
//! warm-up, rate, producers, payload, key), a `capacity` block for OMB's search of the highest
//! rate, and whether there is a consumer, with a comment wherever OMB means something
//! a scenario says another way or not at all.

use std::path::Path;

use super::capacity;
use super::fork;
use super::kbs::{self, Block};
use super::lacks::Lack;
use super::omb::{KeyDistributor, Workload, KEY_DISTRIBUTORS, OMB_KEYS};
use super::payload;
use super::yaml::{value_span, Extra};
use crate::diagnostic::{Diagnostic, Diagnostics, Kind};
use crate::model::TOPICS_MAX;
use crate::source::{FileId, Sources};

/// kafkabench's bounds that an OMB number may exceed.
const MAX_PRODUCERS: u32 = 64;
const MAX_PARTITIONS: u32 = 100_000;
const MAX_MINUTES: u32 = 7 * 24 * 60;
const MAX_PAYLOAD: u64 = 64 * 1024 * 1024;
const MAX_CONSUMERS: u32 = 64;

/// What the workload file contributes to the scenario.
pub(super) struct Parts {
    pub name: String,
    pub topic_name: String,
    pub partitions: u32,
    pub topic_notes: Vec<String>,
    pub workload: Block,
    /// `capacity { }`, for `producerRate: 0` (OMB's search for the highest rate).
    pub capacity: Option<Block>,
    /// Notes for the consumer block; None when OMB reads nothing (no subscription).
    pub consumer: Option<Vec<String>>,
    pub warnings: Vec<String>,
}

pub(super) struct Input<'a> {
    pub workload: &'a Workload,
    pub file: FileId,
    pub path: &'a Path,
    /// Where the scenario is written: a payload file's path is given relative to it.
    pub out_dir: &'a Path,
    /// Fields that are there but wrong (already reported): not missing, and nothing to check.
    pub bad: &'a [String],
    /// Fields OMB does not have (the forks'), for comments.
    pub extras: &'a [Extra],
    /// What reading the file changed (a fork's topic group), for comments.
    pub notes: &'a [String],
}

pub(super) fn map(input: &Input, sources: &Sources) -> Result<Parts, Diagnostics> {
    let w = input.workload;
    let text = sources.get(input.file).text.clone();
    let id = input.file;
    let mut diags = Diagnostics::default();
    let mut bad = |field: &str, msg: String, help: String| {
        diags.push(
            Diagnostic::new(Kind::Value, value_span(id, &text, field), msg)
                .label("here")
                .help(help),
        )
    };
    let mut missing = Vec::new();
    let absent = |field: &str| !input.bad.iter().any(|b| b == field);
    let mut need = |field: &'static str, v: Option<u32>| {
        if v.is_none() && absent(field) {
            missing.push(field);
        }
        v.unwrap_or(0)
    };
    let topics = need("topics", w.topics);
    let partitions = need("partitionsPerTopic", w.partitions_per_topic);
    let producers = need("producersPerTopic", w.producers_per_topic);
    let minutes = need("testDurationMinutes", w.test_duration_minutes);
    if w.message_size.is_none() && absent("messageSize") {
        missing.push("messageSize");
    }
    for (field, n, max) in [
        ("topics", topics, u32::MAX),
        ("partitionsPerTopic", partitions, MAX_PARTITIONS),
        ("producersPerTopic", producers, u32::MAX),
        ("testDurationMinutes", minutes, MAX_MINUTES),
    ] {
        if !missing.contains(&field) && absent(field) && (n == 0 || n > max) {
            bad(
                field,
                format!("`{field}: {n}` is out of range"),
                if max == u32::MAX {
                    format!("`{field}` is at least 1")
                } else {
                    format!("`{field}` goes from 1 to {max} in kafkabench")
                },
            );
        }
    }
    if let Some(m) = w.warmup_duration_minutes.filter(|m| *m > MAX_MINUTES) {
        bad(
            "warmupDurationMinutes",
            format!("`warmupDurationMinutes: {m}` is out of range"),
            format!("a warm-up is at most {MAX_MINUTES} minutes (7 days) in kafkabench"),
        );
    }
    let size = w.message_size.unwrap_or(0);
    if w.message_size.is_some() && !(1..=MAX_PAYLOAD).contains(&size) {
        bad(
            "messageSize",
            format!("`messageSize: {size}` is out of range"),
            "a record is 1 byte to 64 MiB (67108864) in kafkabench".into(),
        );
    }
    for (field, v) in [
        ("randomBytesRatio", w.random_bytes_ratio),
        ("backlogDrainRatio", w.backlog_drain_ratio),
    ] {
        if let Some(r) = v.filter(|r| !(0.0..=1.0).contains(r)) {
            bad(
                field,
                format!("`{field}: {r}` is not a ratio"),
                format!("`{field}` goes from 0.0 to 1.0"),
            );
        }
    }
    // An absent producerRate is Java's 0, the search, too.
    if w.consumer_backlog_size_gb.unwrap_or(0) > 0 && w.producer_rate.unwrap_or(0) == 0 {
        let (field, what) = match w.producer_rate {
            Some(_) => ("producerRate", "`producerRate: 0`"),
            None => ("consumerBacklogSizeGB", "no `producerRate` (0)"),
        };
        bad(
            field,
            format!(
                "OMB refuses {what} with a backlog: it cannot probe the rate while building one"
            ),
            "give `producerRate` a rate, or set `consumerBacklogSizeGB: 0`".into(),
        );
    }
    let randomized = w.use_randomized_payloads.unwrap_or(false);
    let mut payload = None;
    if !randomized && diags.is_empty() && missing.is_empty() && input.bad.is_empty() {
        match &w.payload_file {
            None => diags.push(
                Diagnostic::unplaced(
                    Kind::Missing,
                    format!(
                        "{}: OMB needs `payloadFile` unless `useRandomizedPayloads: true`",
                        input.path.display()
                    ),
                )
                .help("add `payloadFile: \"payload/payload-1Kb.data\"` (a file of messageSize bytes), or `useRandomizedPayloads: true`"),
            ),
            Some(p) => match payload::payload_file(p, size, input) {
                Ok(v) => payload = Some(v),
                Err((msg, help)) => diags.push(
                    Diagnostic::new(Kind::PayloadFile, value_span(id, &text, "payloadFile"), msg)
                        .label("this file")
                        .help(help),
                ),
            },
        }
    }
    for field in &missing {
        // OMB reads an absent number as 0; a test of 0 minutes runs until it is stopped.
        let omb = if *field == "testDurationMinutes" {
            "OMB would run until stopped"
        } else {
            "OMB would run with 0"
        };
        diags.push(
            Diagnostic::unplaced(
                Kind::Missing,
                format!(
                    "{}: the workload has no `{field}` ({omb})",
                    input.path.display()
                ),
            )
            .help(format!("add e.g. `{field}: {}`", example(field))),
        );
    }
    if !diags.is_empty() {
        return Err(diags);
    }

    let mut b = Block::new("workload");
    for n in input.notes {
        b.note(n.clone());
    }
    let topic_notes = Vec::new();
    let mut warnings = Vec::new();
    let topics = fewer_topics(&mut b, topics, partitions).map_or(topics, |(fewer, why)| {
        warnings.push(super::warning(
            sources,
            value_span(id, &text, "topics"),
            &why,
        ));
        fewer
    });
    let capacity = match w.producer_rate.filter(|r| *r > 0) {
        Some(r) => {
            length(&mut b, w, minutes);
            b.set("rate", format!("{r}/s"), Some("producerRate".into()));
            if consumer_only(input) {
                b.set(
                    "messages",
                    "0",
                    Some("consumerOnly: the producers stop once the backlog is built".into()),
                );
            }
            None
        }
        None => {
            b.note("no rate, duration or warm-up: the capacity search below sets each probe's");
            Some(capacity::search(w, minutes))
        }
    };
    producers_over_topics(&mut b, producers, topics);
    match payload {
        Some(p) => {
            if let Some(n) = p.note {
                b.note(n);
            }
            b.set("payload", p.value, Some(p.comment));
        }
        None => randomized_payload(&mut b, w, size),
    }
    if let Some(why) = key(
        &mut b,
        w.key_distributor.as_ref().unwrap_or(&KeyDistributor::NoKey),
    ) {
        let at = value_span(id, &text, "keyDistributor");
        warnings.push(super::warning(sources, at, &why));
    }
    let consumer = read_side(w, &mut b, topics, size);
    let carried = fork::workload_extras(input.extras, w);
    for n in carried.notes {
        b.note(n);
    }
    for (i, why) in carried.warnings {
        warnings.push(super::warning(sources, input.extras[i].span, &why));
    }
    let name = w
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| stem(input.path));
    Ok(Parts {
        topic_name: slug(&name),
        name,
        partitions,
        topic_notes,
        workload: b,
        capacity,
        consumer,
        warnings,
    })
}

/// OMB's topic counts beyond kafkabench's bounds (`topics` 1 to 10 000, partitions of all the
/// topics together at most 100 000): the most topics within them, with a note, and the warning.
fn fewer_topics(b: &mut Block, topics: u32, partitions: u32) -> Option<(u32, String)> {
    let most = TOPICS_MAX.min(MAX_PARTITIONS / partitions.max(1)).max(1);
    if topics <= most {
        return None;
    }
    let bound = if most == TOPICS_MAX {
        format!("kafkabench spreads a run over at most {TOPICS_MAX} topics")
    } else {
        format!("kafkabench's topics hold at most {MAX_PARTITIONS} partitions together ({partitions} each)")
    };
    b.note(format!(
        "topics: {topics}: {bound}, so {most} here: what so many topics cost (metadata, per-topic overhead) is not measured"
    ));
    Some((
        most,
        format!("`topics: {topics}`: {bound}: imported with {most} topics"),
    ))
}

/// A typical value, for the help of a missing field.
fn example(field: &str) -> &'static str {
    match field {
        "messageSize" => "1024",
        "testDurationMinutes" => "15",
        "partitionsPerTopic" => "16",
        _ => "1",
    }
}

/// `topics` and `producersPerTopic`: OMB binds each producer to one topic; kafkabench's
/// `topics = N` sends record i to topic i mod N, which with `producers` a multiple of N binds
/// producer k to topic k mod N, the same layout.
fn producers_over_topics(b: &mut Block, per_topic: u32, topics: u32) {
    if topics > 1 {
        b.set("topics", topics.to_string(), Some("topics".into()));
    }
    let want = u64::from(per_topic) * u64::from(topics.max(1));
    if want <= u64::from(MAX_PRODUCERS) {
        let comment = if topics > 1 {
            format!("producersPerTopic {per_topic} × {topics} topics: each producer on one topic")
        } else {
            "producersPerTopic".into()
        };
        b.set("producers", want.to_string(), Some(comment));
        return;
    }
    // The most producers that are still a multiple of the topics, so each stays on one.
    let most = if topics <= MAX_PRODUCERS {
        MAX_PRODUCERS / topics * topics
    } else {
        MAX_PRODUCERS
    };
    b.note(format!(
        "producersPerTopic {per_topic} × {topics} topics is {want} producers: kafkabench runs at most {MAX_PRODUCERS} per run"
    ));
    if topics > MAX_PRODUCERS {
        b.note("so each producer writes several topics in turn, record by record");
    }
    b.set(
        "producers",
        most.to_string(),
        Some("producersPerTopic × topics, capped".into()),
    );
}

/// `testDurationMinutes` and `warmupDurationMinutes`, for a run at a fixed rate.
fn length(b: &mut Block, w: &Workload, minutes: u32) {
    b.set(
        "duration",
        format!("{minutes}m"),
        Some("testDurationMinutes".into()),
    );
    match w.warmup_duration_minutes {
        None => b.set(
            "warmup",
            "1m",
            Some("warmupDurationMinutes is absent: OMB's default".into()),
        ),
        Some(0) => b.note("warmupDurationMinutes: 0, no warm-up"),
        Some(m) => b.set(
            "warmup",
            format!("{m}m"),
            Some("warmupDurationMinutes".into()),
        ),
    }
}

/// `useRandomizedPayloads`: `randomBytesRatio` of each record random, the rest zeros.
fn randomized_payload(b: &mut Block, w: &Workload, size: u64) {
    if let Some(f) = &w.payload_file {
        b.note(format!(
            "payloadFile {f} is not used: OMB sends randomized payloads when useRandomizedPayloads is true"
        ));
    }
    let ratio = w.random_bytes_ratio.unwrap_or(0.0);
    if w.random_bytes_ratio.is_none() {
        b.note("randomBytesRatio is absent: OMB's default 0.0 makes every byte a zero");
    }
    if let Some(pool) = w.randomized_payload_pool_size {
        b.note(format!(
            "randomizedPayloadPoolSize: {pool}: OMB cycles {pool} prepared payloads; `random(...)` draws fresh bytes for every record"
        ));
    }
    let comment = format!("useRandomizedPayloads, randomBytesRatio {ratio}");
    let value = if ratio >= 1.0 {
        format!("random(size: {size}B)")
    } else {
        format!(
            "random(size: {size}B, compressibility: {}%)",
            decimal((1.0 - ratio) * 100.0)
        )
    };
    b.set("payload", value, Some(comment));
}

/// `keyDistributor`; a name OMB does not know is its default, NO_KEY, and the warning says so.
fn key(b: &mut Block, k: &KeyDistributor) -> Option<String> {
    let none = |b: &mut Block, comment: &str| b.set("key", "none", Some(comment.into()));
    match k {
        KeyDistributor::NoKey => none(b, "NO_KEY"),
        KeyDistributor::KeyRoundRobin => {
            b.note(format!(
                "KEY_ROUND_ROBIN cycles {OMB_KEYS} keys in turn; `sequence` keys each record with its number:"
            ));
            b.note("the same even spread over partitions, with a new key every record");
            b.set("key", "sequence", Some("KEY_ROUND_ROBIN".into()));
        }
        KeyDistributor::RandomNano => b.set(
            "key",
            format!("uniform({OMB_KEYS})"),
            Some(format!("RANDOM_NANO: one of {OMB_KEYS} keys at random")),
        ),
        KeyDistributor::FixedKey => {
            b.note("FIXED_KEY (Solace's fork): every record of a worker has one random 10-character key, so one partition");
            b.set("key", kbs::string("omb-fixkey"), Some("FIXED_KEY".into()));
        }
        KeyDistributor::Unknown(name) => {
            let meant = super::yaml::did_you_mean(name, KEY_DISTRIBUTORS);
            b.note(format!(
                "keyDistributor: {name} is not a distributor OMB knows{meant}: OMB reads it as its default, NO_KEY, and so does the import"
            ));
            none(b, "keyDistributor unknown: NO_KEY");
            return Some(format!(
                "`keyDistributor: {name}` is not a key distributor OMB knows{meant}: read as NO_KEY, as OMB reads it"
            ));
        }
    }
    None
}

/// Subscriptions, consumers and the backlog: `consumers` and `backlog` in the workload block,
/// and the consumer block's notes, or None for no consumer.
fn read_side(w: &Workload, b: &mut Block, topics: u32, size: u64) -> Option<Vec<String>> {
    let subs = w.subscriptions_per_topic.unwrap_or(0);
    let per = w.consumer_per_subscription.unwrap_or(0);
    let gb = w.consumer_backlog_size_gb.unwrap_or(0);
    let mut notes = Vec::new();
    if subs == 0 || per == 0 {
        b.note(format!(
            "subscriptionsPerTopic: {subs}, consumerPerSubscription: {per}: OMB reads nothing, so no consumer"
        ));
        if gb > 0 {
            b.note(format!(
                "consumerBacklogSizeGB: {gb}: with no consumer there is no backlog to drain"
            ));
        }
        return None;
    }
    let want = u64::from(per) * u64::from(topics.max(1));
    let n = want.min(u64::from(MAX_CONSUMERS));
    let comment = if topics > 1 {
        format!("consumerPerSubscription {per} × {topics} topics, in one group")
    } else {
        "consumerPerSubscription: one group".to_string()
    };
    if topics > 1 {
        notes.push(format!(
            "OMB gives each topic a subscription of its own ({per} consumers each); kafkabench's `consumers` are one group reading every topic"
        ));
    }
    if want > n {
        b.note(format!(
            "consumerPerSubscription {per} × {topics} topics is {want} consumers: kafkabench's group has at most {MAX_CONSUMERS}"
        ));
    }
    b.set("consumers", n.to_string(), Some(comment));
    if subs > 1 {
        notes.push(format!(
            "subscriptionsPerTopic: {subs}: OMB reads every record {subs} times, a subscription (consumer group) each;"
        ));
        notes.push(Lack::SeveralGroups.words().to_string());
    }
    if gb > 0 {
        // OMB's backlog: (subscriptions × sent − received) × messageSize reaches the GiB asked.
        let bytes = u128::from(gb) << 30;
        let per_group = u128::from(subs) * u128::from(size.max(1));
        let records = bytes.div_ceil(per_group).min(u128::from(u64::MAX)) as u64;
        let comment = if subs > 1 {
            format!(
                "consumerBacklogSizeGB {gb} GiB of {size}-byte records, over {subs} subscriptions"
            )
        } else {
            format!("consumerBacklogSizeGB {gb} GiB of {size}-byte records")
        };
        b.note(format!(
            "consumerBacklogSizeGB: {gb}: OMB builds the backlog during the test, at producerRate, with its consumers paused,"
        ));
        b.note(
            "then resumes them; kafkabench writes its `backlog` before the clock starts, as fast as the cluster takes it,\nand the consumers drain it while the producers send at `rate`",
        );
        match w.backlog_drain_ratio.filter(|r| *r < 1.0) {
            Some(r) => b.note(format!(
                "backlogDrainRatio: {r}: OMB's test lasts until the backlog is drained to {}% of it (then testDurationMinutes more);\nkafkabench's consumers drain all of it, and the run lasts `duration`",
                decimal((1.0 - r) * 100.0)
            )),
            None => b.note(
                "OMB's test lasts until the backlog is drained, then testDurationMinutes more; kafkabench's run lasts `duration`",
            ),
        }
        b.set("backlog", records.to_string(), Some(comment));
    } else if let Some(r) = w.backlog_drain_ratio {
        notes.push(format!(
            "backlogDrainRatio: {r} applies only with a backlog (consumerBacklogSizeGB), and there is none"
        ));
    }
    Some(notes)
}

/// Confluent's `consumerOnly: true` with a backlog: only the drain is measured.
fn consumer_only(input: &Input) -> bool {
    let w = input.workload;
    w.consumer_backlog_size_gb.unwrap_or(0) > 0
        && w.subscriptions_per_topic.unwrap_or(0) > 0
        && w.consumer_per_subscription.unwrap_or(0) > 0
        && input
            .extras
            .iter()
            .any(|e| e.name == "consumerOnly" && e.value.as_bool() == Some(true))
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or("omb".into(), |s| s.to_string_lossy().into_owned())
}

/// A topic name from the workload's name: lower case, `-` for anything Kafka refuses.
pub(super) fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let s: String = out.trim_matches('-').chars().take(80).collect();
    let s = s.trim_end_matches('-').to_string();
    // Kafka refuses `.` and `..` as names.
    if s.chars().all(|c| c == '.') {
        "omb".into()
    } else {
        s
    }
}

/// A number with at most 3 decimals and no trailing zeros.
fn decimal(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_name_is_made_of_what_kafka_allows() {
        assert_eq!(
            slug("1 topic / 1 partition / 1Kb"),
            "1-topic-1-partition-1kb"
        );
        assert_eq!(slug("///"), "omb");
        assert_eq!(slug(".."), "omb");
    }

    #[test]
    fn decimals_are_short() {
        assert_eq!(decimal(333.33333), "333.333");
        assert_eq!(decimal(50.0), "50");
    }
}
