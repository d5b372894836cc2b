//! What the forks of OpenMessaging Benchmark that speak the Kafka protocol add to its files
//! (Redpanda's, AutoMQ's, Aiven's, Confluent's; read from their sources): the driver classes
//! they name and the fields they add. A fork field with a kafkabench equivalent is mapped; the
//! others become a comment saying why, and a warning.

use serde_yaml::Value;

use super::lacks::Lack;
use super::omb::KAFKA_DRIVER;
use super::yaml::Extra;

/// Workload fields of the forks: Redpanda's `sampleRateMillis` and existing topics, AutoMQ's
/// per-topic lists, rate schedule, topic naming, `logIntervalMillis` and topic groups (with
/// `version: 1`), Confluent's `consumerOnly`, Vanlightly's (openmessaging-benchmark-custom)
/// rates of the warm-up and backlog.
pub(super) const WORKLOAD_FIELDS: &[&str] = &[
    "topicGroups",
    "version",
    "sampleRateMillis",
    "existingTopicList",
    "existingProduceTopicList",
    "existingConsumeTopicList",
    "logIntervalMillis",
    "partitionsPerTopicList",
    "producersPerTopicList",
    "producerRateList",
    "randomTopicNames",
    "consumerOnly",
    "warmupProducerRate",
    "warmupProducerRateSeparationMinutes",
    "backlogProducerRate",
    "producerStartRate",
    "producerIncrementRate",
    "producerIncrementSeconds",
    "acceptableBacklog",
    "producerPermits",
    "messageRateReceivedForSubscription",
    "ensureTopicsAreReady",
    "producerPauseBeforeDrain",
    "producerPauseDuringDrain",
];

/// The fields of AutoMQ's topic groups (`TopicGroupSpec`), for a did-you-mean.
const GROUP_FIELDS: [&str; 11] = [
    "groupName",
    "topics",
    "partitionsPerTopic",
    "keyDistributor",
    "messageSize",
    "payloadFile",
    "subscriptionsPerTopic",
    "consumerPerSubscription",
    "producersPerTopic",
    "producerRate",
    "producerRateList",
];

/// Driver fields of the forks: Redpanda's transactional driver's, aklivity's topic naming,
/// fgelcer's (its Kafka driver's `Config`: batches of sends, transactions, synchronous commits).
pub(super) const DRIVER_FIELDS: &[&str] = &[
    "requestsPerTransaction",
    "topicPrefix",
    "skipCreateTopic",
    "batchSize",
    "useTransactions",
    "maxConcurrentTransactions",
    "sync",
];

/// A driver class as the import knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    /// OMB's Kafka driver; `renamed` when under another package (OMB's first, Streamlio's).
    Kafka {
        renamed: bool,
    },
    /// Redpanda's fork's drivers: OMB's Kafka driver under its name, and two variants.
    Redpanda(Variant),
    /// Another system's driver, by name.
    Other(&'static str),
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Variant {
    Plain,
    /// `…redpanda.swarm`: each worker stamps its id and clock into the payload.
    Swarm,
    /// `…redpanda.tx`: transactional producers.
    Tx,
}

/// The system a driver class is for: every OMB fork names it in the package after `driver`.
pub(super) fn class(name: &str) -> Class {
    if name == KAFKA_DRIVER {
        return Class::Kafka { renamed: false };
    }
    let parts: Vec<&str> = name.split('.').collect();
    let Some(at) = parts.iter().position(|p| *p == "driver") else {
        return Class::Unknown;
    };
    let after = &parts[at + 1..];
    match after {
        ["kafka", "KafkaBenchmarkDriver"] => Class::Kafka { renamed: true },
        ["redpanda", "RedpandaBenchmarkDriver"] => Class::Redpanda(Variant::Plain),
        ["redpanda", "swarm", "RedpandaBenchmarkDriver"] => Class::Redpanda(Variant::Swarm),
        ["redpanda", "tx", "RedpandaBenchmarkDriver"] => Class::Redpanda(Variant::Tx),
        [system, ..] => match *system {
            "pulsar" => Class::Other("Pulsar"),
            "kop" => Class::Other("Kafka-on-Pulsar (KoP)"),
            "rabbitmq" => Class::Other("RabbitMQ"),
            "rocketmq" => Class::Other("RocketMQ"),
            "nats" => Class::Other("NATS"),
            "natsStreaming" => Class::Other("NATS Streaming"),
            "nsq" => Class::Other("NSQ"),
            "pravega" => Class::Other("Pravega"),
            "artemis" => Class::Other("ActiveMQ Artemis"),
            "bookkeeper" => Class::Other("BookKeeper (DistributedLog)"),
            "jms" => Class::Other("JMS"),
            "redis" => Class::Other("Redis"),
            "mqtt" | "mqtt5" => Class::Other("MQTT"),
            "opendata" => Class::Other("OpenData (a log on SlateDB)"),
            "chronicle" => Class::Other("Chronicle Queue"),
            "starlightrabbitmq" => Class::Other("Starlight for RabbitMQ (AMQP on Pulsar)"),
            _ => Class::Unknown,
        },
        [] => Class::Unknown,
    }
}

/// The header lines that say which fork's driver the file names and what differs.
pub(super) fn class_notes(class: Class, name: &str) -> Vec<String> {
    let redpanda = format!("driverClass {name}: Redpanda's fork of OMB; its Kafka driver under Redpanda's name (the same fields, the Java client)");
    match class {
        Class::Kafka { renamed: true } => {
            vec![format!("driverClass {name}: OMB's Kafka driver under an older package name")]
        }
        Class::Redpanda(Variant::Plain) => vec![redpanda],
        Class::Redpanda(Variant::Swarm) => vec![
            redpanda,
            "its swarm variant stamps each payload with the sending worker's id and clock and measures end-to-end latency only".into(),
            "where the record was sent, so clocks need not agree; kafkabench measures it in one process, with its own record header".into(),
        ],
        Class::Redpanda(Variant::Tx) => vec![
            redpanda,
            "its tx variant makes each producer transactional (a transactional.id of its own) and commits every".into(),
            "requestsPerTransaction records, aborting only after an error: kafkabench's `transaction` (its own ids, no `aborts`)".into(),
        ],
        Class::Kafka { renamed: false } | Class::Other(_) | Class::Unknown => Vec::new(),
    }
}

/// fgelcer's fork's Kafka driver fields (its `Config`): `batchSize` sends each record that many
/// times, `useTransactions` makes each send one transaction of a pool of
/// `maxConcurrentTransactions` transactional producers, `sync` commits offsets with
/// `commitSync`. Transactions are `transaction = batchSize`; the rest are comments.
#[derive(Default)]
pub(super) struct Fgelcer {
    pub transaction: Option<u64>,
    pub notes: Vec<String>,
    /// The extra's index and what it says.
    pub warnings: Vec<(usize, String)>,
}

/// Whether `name` is one of fgelcer's driver fields.
pub(super) fn is_fgelcer_field(name: &str) -> bool {
    matches!(
        name,
        "batchSize" | "useTransactions" | "maxConcurrentTransactions" | "sync"
    )
}

pub(super) fn fgelcer_driver(extras: &[Extra]) -> Fgelcer {
    let mut f = Fgelcer::default();
    let find = |n: &str| extras.iter().position(|e| e.name == n);
    let tx = find("useTransactions").is_some_and(|i| extras[i].value.as_bool() == Some(true));
    let batch = find("batchSize")
        .and_then(|i| extras[i].value.as_i64())
        .unwrap_or(1);
    let whose = "fgelcer's fork";
    for (i, e) in extras.iter().enumerate() {
        let shown = show(&e.value);
        match e.name.as_str() {
            "useTransactions" if tx => {
                f.transaction = Some(batch.max(1) as u64);
                f.notes.push(format!(
                    "useTransactions: true ({whose}): each send is a transaction of its batchSize records: `transaction = {}`",
                    batch.max(1)
                ));
            }
            "useTransactions" => f.notes.push(format!(
                "useTransactions: {shown} ({whose}): no transactions, as here"
            )),
            "batchSize" if batch <= 1 => f.notes.push(format!(
                "batchSize: {shown} ({whose}): each send writes its record once, as here"
            )),
            "batchSize" => {
                let lack = Lack::RepeatedRecords.words();
                f.notes.push(format!(
                    "batchSize: {shown} ({whose}): each send writes its record {batch} times over;\n{lack}"
                ));
                f.warnings.push((i, format!("`batchSize` ({whose}) writes each record {batch} times: not imported, since {lack}; carried as a comment")));
            }
            "maxConcurrentTransactions" if tx => {
                let lack = Lack::OpenTransactions.words();
                f.notes.push(format!(
                    "maxConcurrentTransactions: {shown} ({whose}): each producer draws from a pool of that many transactional producers,\nas many transactions open at once; {lack}"
                ));
                f.warnings.push((i, format!("`maxConcurrentTransactions` ({whose}) is not imported, since {lack}: carried as a comment")));
            }
            "maxConcurrentTransactions" => f.notes.push(format!(
                "maxConcurrentTransactions: {shown} ({whose}): unused without useTransactions"
            )),
            "sync" if e.value.as_bool() == Some(true) => {
                let lack = Lack::PollCommits.words();
                f.notes.push(format!(
                    "sync: true ({whose}): without auto commit its consumers commit each poll's offsets and wait (commitSync);\n{lack}"
                ));
                f.warnings.push((
                    i,
                    format!("`sync` ({whose}) is not imported, since {lack}: carried as a comment"),
                ));
            }
            "sync" => f.notes.push(format!(
                "sync: {shown} ({whose}): offsets committed without waiting (commitAsync)"
            )),
            _ => {}
        }
    }
    f
}

/// What the extras of a workload become: comments for the workload block, and warnings (a
/// field and what it says) for those that have no equivalent.
#[derive(Default)]
pub(super) struct Carried {
    pub notes: Vec<String>,
    pub warnings: Vec<(usize, String)>,
}

impl Carried {
    /// A comment, and a warning naming the field and why it is not imported.
    fn not_imported(&mut self, i: usize, field: &str, whose: &str, why: &str, note: String) {
        self.notes.push(note);
        self.warnings.push((
            i,
            format!("`{field}` ({whose}) is not imported, {why}: carried as a comment"),
        ));
    }
}

/// The workload's fields that OMB itself does not have, in the file's order.
pub(super) fn workload_extras(extras: &[Extra], w: &super::omb::Workload) -> Carried {
    let mut c = Carried::default();
    for (i, e) in extras.iter().enumerate() {
        let (name, v) = (e.name.as_str(), &e.value);
        let shown = show(v);
        match name {
            "sampleRateMillis" | "logIntervalMillis" => {
                let whose = if name == "sampleRateMillis" {
                    "Redpanda's fork"
                } else {
                    "AutoMQ's fork"
                };
                let lack = Lack::ScenarioInterval.words();
                c.not_imported(i, name, whose, lack, format!(
                    "{name}: {shown} ({whose}): how often OMB samples and logs rates and latencies;\n{lack} (here `--interval {shown}ms`)"
                ));
            }
            "existingTopicList" | "existingProduceTopicList" | "existingConsumeTopicList" => {
                if is_empty_list(v) {
                    c.notes.push(format!(
                        "{name}: [] (Redpanda's fork): no existing topics, as its default"
                    ));
                } else {
                    c.not_imported(i, name, "Redpanda's fork", "since the import creates its own topic", format!(
                        "{name}: {shown} (Redpanda's fork): topics that exist already; the import creates its own\n(a topic block with `existing = true` and its name uses one that exists)"
                    ));
                }
            }
            "partitionsPerTopicList" | "producersPerTopicList" => {
                let (one, n) = if name == "partitionsPerTopicList" {
                    ("partitionsPerTopic", w.partitions_per_topic)
                } else {
                    ("producersPerTopic", w.producers_per_topic)
                };
                let n = n.map_or("absent".into(), |n| n.to_string());
                let lack = Lack::PerTopicCounts.words();
                c.not_imported(i, name, "AutoMQ's fork", lack, format!(
                    "{name}: {shown} (AutoMQ's fork): a count for each topic;\n{lack}: {one} ({n}) is used"
                ));
            }
            "producerRateList" => {
                let (note, why) = rate_list(&shown, v, w);
                c.not_imported(i, name, "AutoMQ's fork", why, note);
            }
            "randomTopicNames" => match v.as_bool() {
                Some(true) => c.notes.push(
                    "randomTopicNames: true (AutoMQ's fork): a fresh topic name per run, as kafkabench's run id gives".into(),
                ),
                _ => c.not_imported(i, name, "AutoMQ's fork", "since kafkabench names each run's topics afresh", format!(
                    "randomTopicNames: {shown} (AutoMQ's fork): topics keep fixed names across runs; kafkabench appends a run id to every\ntopic it creates (a topic block with `existing = true` reuses one)"
                )),
            },
            "topicGroups" => c.notes.push(
                "topicGroups (AutoMQ's fork, version 1): one group, whose topics, sizes, clients and rate are the workload's".into(),
            ),
            "groupName" => c.notes.push(format!("groupName: {shown} (the topic group's name)")),
            inner if inner.starts_with("topicGroups.") => {
                let field = &inner["topicGroups.".len()..];
                let why = if field == "keyDistributor" {
                    "AutoMQ's fork keys every group's records with the top level's keyDistributor".to_string()
                } else {
                    let meant = super::yaml::did_you_mean(field, &GROUP_FIELDS);
                    format!("not a field of AutoMQ's topic groups{meant}")
                };
                c.notes.push(format!(
                    "the topic group's {field}: {shown}: {why}; ignored, as AutoMQ's fork does"
                ));
                c.warnings.push((
                    i,
                    format!("the topic group's `{field}`: {why}: ignored, as AutoMQ's fork does, and carried as a comment"),
                ));
            }
            "version" => c.notes.push(format!(
                "version: {shown} (AutoMQ's fork): {}",
                if v.as_i64() == Some(1) { "the workload is in topicGroups" } else { "the workload's fields are at the top level" }
            )),
            "consumerOnly" => match v.as_bool() {
                Some(false) => c.notes.push(
                    "consumerOnly: false (Confluent's fork): producers and consumers run together, as here".into(),
                ),
                Some(true) if w.consumer_backlog_size_gb.unwrap_or(0) > 0 => c.notes.push(
                    "consumerOnly: true (Confluent's fork): the producers stop once the backlog is built and only the consumers\nare measured draining it: `messages = 0` with the `backlog`".into(),
                ),
                _ => c.not_imported(i, name, "Confluent's fork", "since the workload builds no backlog (consumerBacklogSizeGB) for the consumers to drain", format!(
                    "consumerOnly: {shown} (Confluent's fork): the consumers drain a backlog the producers built; this workload has no\nconsumerBacklogSizeGB (Confluent's fork refuses that)"
                )),
            },
            "warmupProducerRate" | "warmupProducerRateSeparationMinutes" | "backlogProducerRate" => {
                let whose = "Vanlightly's fork";
                if v.as_i64().is_some_and(|n| n <= 0) {
                    c.notes.push(format!("{name}: {shown} ({whose}): unset, as its default"));
                    continue;
                }
                let (what, why) = match name {
                    "warmupProducerRate" => (
                        "the warm-up sends at this rate, the test at producerRate; the import warms up at `rate`\n(a rate shape can send both: `rate = 500/s for 1m, then 1000/s for 10m`, with `warmup = 1m`)",
                        "since the import warms up at `rate` (a rate shape can say it)",
                    ),
                    "backlogProducerRate" => (
                        "the producers' rate while the backlog builds; kafkabench writes its `backlog` before the clock starts,\nas fast as the cluster takes it",
                        "since kafkabench writes its backlog unpaced",
                    ),
                    _ => (
                        "the producers pause this many minutes between the warm-up and the test; the import does not\n(a rate shape can: `0/s for 5m`)",
                        "since the import does not pause (a rate shape can: `0/s for 5m`)",
                    ),
                };
                c.not_imported(i, name, whose, why, format!("{name}: {shown} ({whose}): {what}"));
            }
            "producerStartRate" | "producerIncrementRate" | "producerIncrementSeconds"
            | "acceptableBacklog" | "producerPermits" | "messageRateReceivedForSubscription"
            | "ensureTopicsAreReady" | "producerPauseBeforeDrain" | "producerPauseDuringDrain" => {
                // fgelcer's fork's `Workload` reads these (WorkloadGenerator); OMB's does not.
                let what = match name {
                    "producerStartRate" => "the rate its climb (producerIncrementRate) or its search for the highest rate starts at",
                    "producerIncrementRate" => "the rate climbs from producerStartRate by this much every producerIncrementSeconds, up to\nproducerRate; the import sends at producerRate from the start (a rate shape can climb: `1000/s for 30s, then 2000/s for 30s`)",
                    "producerIncrementSeconds" => "how long each step of the climb (producerIncrementRate) lasts",
                    "acceptableBacklog" => "the backlog its search for the highest rate tolerates",
                    "producerPermits" => "how many sends each producer thread may have outstanding",
                    "messageRateReceivedForSubscription" => "the percentage of records each subscription receives, for its backlog sums",
                    "ensureTopicsAreReady" => "whether it waits for every topic to be ready before the test",
                    _ => "how long its producers pause around the backlog's drain",
                };
                c.not_imported(i, name, "fgelcer's fork", "since the import does not map it", format!(
                    "{name}: {shown} (fgelcer's fork): {what}"
                ));
            }
            _ => {
                let meant = super::yaml::did_you_mean(name, super::omb::WORKLOAD.names);
                c.notes.push(format!(
                    "{name}: {shown} is not an OMB workload field{meant}: OMB ignores fields it does not know, and so does the import"
                ));
                c.warnings.push((
                    i,
                    format!("`{name}` is not an OMB workload field (nor a known fork's){meant}: ignored, as OMB does, and carried as a comment"),
                ));
            }
        }
    }
    c
}

/// AutoMQ's `producerRateList`: points of [hour, minute, rate] (times of day) or [minutes,
/// rate] (from the start), the rate moved linearly between them every 5 s. The note, and why
/// the list is not imported.
fn rate_list(shown: &str, v: &Value, w: &super::omb::Workload) -> (String, &'static str) {
    let points: Vec<Vec<i64>> = v
        .as_sequence()
        .map(|s| {
            s.iter()
                .map(|p| {
                    p.as_sequence()
                        .map(|q| q.iter().filter_map(Value::as_i64).collect())
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default();
    let kept = match w.producer_rate.filter(|r| *r > 0) {
        Some(r) => format!("producerRate ({r}/s)"),
        None => "the search for the highest rate of producerRate: 0".into(),
    };
    let head = format!("producerRateList: {shown} (AutoMQ's fork):");
    if !points.is_empty() && points.iter().all(|p| p.len() == 3) {
        let lack = Lack::ClockRate.words();
        return (
            format!(
                "{head} the rate at times of day ([hour, minute, rate], linear in between);\n{lack}: the import keeps {kept}, which the list overrides in OMB"
            ),
            lack,
        );
    }
    let shape = (!points.is_empty() && points.iter().all(|p| p.len() == 2) && points[0][0] == 0)
        .then(|| shape(&points))
        .flatten();
    match shape {
        Some(s) => (
            format!(
                "{head} the rate at minutes from the start, linear in between; the import keeps {kept}:\nthe same schedule is `rate = {s}`"
            ),
            "since the import keeps producerRate (the comment gives the same schedule as a rate shape)",
        ),
        None => (
            format!("{head} a rate schedule the import cannot read; it keeps {kept}"),
            "since the import cannot read the schedule",
        ),
    }
}

/// [[minutes, rate], …] from minute 0 as a rate shape: ramps between points that differ.
fn shape(points: &[Vec<i64>]) -> Option<String> {
    let mut segments = Vec::new();
    for pair in points.windows(2) {
        let (t0, r0, t1, r1) = (pair[0][0], pair[0][1], pair[1][0], pair[1][1]);
        if t1 <= t0 || r0 < 0 || r1 < 0 {
            return None;
        }
        segments.push(if r0 == r1 {
            format!("{r0}/s for {}m", t1 - t0)
        } else {
            format!("ramp {r0}/s to {r1}/s over {}m", t1 - t0)
        });
    }
    (!segments.is_empty()).then(|| segments.join(", then "))
}

fn is_empty_list(v: &Value) -> bool {
    v.as_sequence().is_some_and(Vec::is_empty) || v.is_null()
}

/// A YAML value on one line, as a reader would write it (lists in brackets), cut when long.
pub(super) fn show(v: &Value) -> String {
    let s = match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.lines().next().unwrap_or("").to_string(),
        Value::Sequence(items) => {
            format!(
                "[{}]",
                items.iter().map(show).collect::<Vec<_>>().join(", ")
            )
        }
        Value::Mapping(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", show(k), show(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Tagged(t) => show(&t.value),
    };
    if s.chars().count() > 100 {
        format!("{}…", s.chars().take(99).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_told_by_the_package_after_driver() {
        assert_eq!(class(KAFKA_DRIVER), Class::Kafka { renamed: false });
        assert_eq!(
            class("com.streamlio.messaging.benchmark.driver.kafka.KafkaBenchmarkDriver"),
            Class::Kafka { renamed: true }
        );
        assert_eq!(
            class("io.openmessaging.benchmark.driver.redpanda.tx.RedpandaBenchmarkDriver"),
            Class::Redpanda(Variant::Tx)
        );
        assert_eq!(
            class("io.openmessaging.benchmark.driver.pulsar.PulsarBenchmarkDriver"),
            Class::Other("Pulsar")
        );
        assert_eq!(class("com.example.Driver"), Class::Unknown);
    }

    #[test]
    fn a_schedule_from_the_start_is_a_rate_shape() {
        let points = vec![vec![0, 1000], vec![10, 2000], vec![20, 2000]];
        assert_eq!(
            shape(&points).as_deref(),
            Some("ramp 1000/s to 2000/s over 10m, then 2000/s for 10m")
        );
    }
}
