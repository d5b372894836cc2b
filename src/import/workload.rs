//! An OMB workload in kafkabench's terms: the topic's size, the `workload` block (duration,
//! warm-up, rate, producers, payload, key), a `capacity` block for OMB's search of the highest
//! rate, and whether there is a consumer, with a comment wherever OMB means something
//! kafkabench cannot say.

use std::path::{Path, PathBuf};

use super::capacity;
use super::fork;
use super::kbs::{self, Block};
use super::omb::{KeyDistributor, Workload, KEY_DISTRIBUTORS, OMB_KEYS};
use super::yaml::{value_span, Extra};
use crate::diagnostic::{Diagnostic, Diagnostics, Kind};
use crate::model::TOPICS_MAX;
use crate::source::{FileId, Sources};

/// kafkabench's bounds that an OMB number may exceed.
const MAX_PRODUCERS: u32 = 64;
const MAX_PARTITIONS: u32 = 100_000;
const MAX_MINUTES: u32 = 7 * 24 * 60;
const MAX_PAYLOAD: u64 = 64 * 1024 * 1024;

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
            Some(p) => match payload_file(p, size, input) {
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
        diags.push(
            Diagnostic::unplaced(
                Kind::Missing,
                format!(
                    "{}: the workload has no `{field}` (OMB would run with 0)",
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
    let consumer = consumer_notes(w, &mut b);
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
            "randomizedPayloadPoolSize: {pool}: OMB cycles {pool} prepared payloads; kafkabench draws fresh random bytes for every record"
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

/// Subscriptions and consumers: the consumer block's notes, or None for no consumer.
fn consumer_notes(w: &Workload, b: &mut Block) -> Option<Vec<String>> {
    let subs = w.subscriptions_per_topic.unwrap_or(0);
    let per = w.consumer_per_subscription.unwrap_or(0);
    let mut notes = Vec::new();
    if subs == 0 || per == 0 {
        b.note(format!(
            "subscriptionsPerTopic: {subs}, consumerPerSubscription: {per}: OMB reads nothing, so no consumer"
        ));
        return None;
    }
    if subs > 1 {
        notes.push(format!(
            "subscriptionsPerTopic: {subs} means {subs} consumer groups each reading every record;"
        ));
        notes.push(
            "kafkabench has no consumer groups yet: one consumer reads every record once".into(),
        );
    }
    if per > 1 {
        notes.push(format!(
            "consumerPerSubscription: {per}: OMB shares each topic among {per} consumers of a group; kafkabench reads with one"
        ));
    }
    if let Some(gb) = w.consumer_backlog_size_gb.filter(|gb| *gb > 0) {
        notes.push(format!(
            "consumerBacklogSizeGB: {gb}: OMB holds the consumers back until {gb} GB are retained, then drains"
        ));
        notes.push(format!(
            "(backlogDrainRatio {}); kafkabench has no backlog phase: its consumer reads from the start",
            w.backlog_drain_ratio.unwrap_or(1.0)
        ));
    } else if let Some(r) = w.backlog_drain_ratio {
        notes.push(format!(
            "backlogDrainRatio: {r} applies only with a backlog (consumerBacklogSizeGB), and there is none"
        ));
    }
    Some(notes)
}

/// A payload as written in the scenario: the value, its trailing comment, a note above it.
struct Payload {
    value: String,
    comment: String,
    note: Option<String>,
}

/// The payload file, found where OMB would read it (its working folder, which for OMB's own
/// layout is the workload folder's parent), as one constant record; Err is (message, help).
fn payload_file(written: &str, size: u64, input: &Input) -> Result<Payload, (String, String)> {
    let dir = input.path.parent().unwrap_or(Path::new(""));
    let mut tried: Vec<PathBuf> = vec![PathBuf::from(written), dir.join(written)];
    if let Some(up) = dir.parent() {
        tried.push(up.join(written));
    }
    let Some(path) = tried.iter().find(|p| p.is_file()) else {
        let shown: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
        return Err((
            format!("cannot find the payload file `{written}`"),
            format!(
                "OMB reads it relative to the folder it runs in; looked for {}",
                shown.join(", ")
            ),
        ));
    };
    let bytes = std::fs::read(path).map_err(|e| {
        (
            format!("cannot read the payload file {}: {e}", path.display()),
            "make the file readable".to_string(),
        )
    })?;
    if bytes.len() as u64 != size {
        return Err((
            format!(
                "the payload file holds {} bytes, but `messageSize` is {size}",
                bytes.len()
            ),
            format!(
                "OMB refuses this too (payload length mismatch): set `messageSize: {}`",
                bytes.len()
            ),
        ));
    }
    // file() sends a file's lines in turn: a file without a line break is one record, exactly
    // OMB's constant payload.
    if !bytes.contains(&b'\n') && bytes.last() != Some(&b'\r') {
        return Ok(Payload {
            value: format!("file({})", kbs::string(&relative(path, input.out_dir))),
            comment: "payloadFile: one line, so every record is the whole file".into(),
            note: None,
        });
    }
    match String::from_utf8(bytes) {
        Ok(text) if kbs::stringable(&text) && text.len() <= 64 * 1024 => Ok(Payload {
            value: format!("constant({})", kbs::string(&text)),
            comment: format!("payloadFile {written}"),
            note: Some(format!(
                "{written} has line breaks, and file() would send each line as a record: its text is written here"
            )),
        }),
        _ => Ok(Payload {
            value: format!("constant(size: {size}B)"),
            comment: format!("payloadFile {written}: its size, not its bytes"),
            note: Some(format!(
                "{written} has line breaks and cannot be written as a string: kafkabench sends a file's lines,\nnot one whole file; the nearest is a constant payload of the same size (other bytes: compression figures may differ)"
            )),
        }),
    }
}

/// `path` as seen from `dir`, or absolute when that cannot be said.
fn relative(path: &Path, dir: &Path) -> String {
    let (Ok(p), Ok(d)) = (path.canonicalize(), dir.canonicalize()) else {
        return path.display().to_string();
    };
    let common = p
        .components()
        .zip(d.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in d.components().skip(common) {
        out.push("..");
    }
    for c in p.components().skip(common) {
        out.push(c);
    }
    out.display().to_string()
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or("omb".into(), |s| s.to_string_lossy().into_owned())
}

/// A topic name from the workload's name: lower case, `-` for anything Kafka refuses.
fn slug(name: &str) -> String {
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
