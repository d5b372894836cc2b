//! Names people bring from other tools (OpenMessaging Benchmark's workload YAML, k6's options,
//! kafka-producer-perf-test's flags, other benchmarks' words) and what kafkabench calls them,
//! written out as the setting to type. Read by the syntax errors (`producerRate: 1000`,
//! `--throughput 1000`) and by the check stage for an unknown key (`vus = 10`).

/// Foreign names for one kafkabench setting: each name with the tool it comes from (empty for
/// a word of no tool in particular), the section the setting lives in, and its form, with `{}`
/// for the value given (or `example` when none fits).
struct Foreign {
    names: &'static [(&'static str, &'static str)],
    section: &'static str,
    form: &'static str,
    example: &'static str,
    /// The value must be a plain number to fill `{}` (`{}/s`, `{}m`); else the example is used.
    numeric: bool,
}

const fn f(
    names: &'static [(&'static str, &'static str)],
    section: &'static str,
    form: &'static str,
    example: &'static str,
    numeric: bool,
) -> Foreign {
    Foreign {
        names,
        section,
        form,
        example,
        numeric,
    }
}

const OMB: &str = "OpenMessaging Benchmark's";
const K6: &str = "k6's";
const PERF: &str = "kafka-producer-perf-test's";
/// A word of no tool in particular.
const ANY: &str = "";

/// Names compare without case, `-`, `_` and `.`: `--num-records`, `num_records`, `numRecords`.
#[rustfmt::skip]
const FOREIGN: &[Foreign] = &[
    f(&[(OMB, "producerRate"), (PERF, "throughput"), (K6, "rps"), (ANY, "qps"), (ANY, "tps"), (ANY, "msgsPerSec"), (ANY, "messagesPerSecond")],
      "workload", "rate = {}/s", "1000", true),
    f(&[(OMB, "messageSize"), (PERF, "recordSize"), (ANY, "msgSize"), (ANY, "payloadSize"), (ANY, "messageBytes"), (ANY, "size")],
      "workload", "payload = random(size: {}B)", "1024", true),
    f(&[(PERF, "numRecords"), (ANY, "numMessages"), (ANY, "messageCount"), (K6, "iterations"), (ANY, "count"), (ANY, "msgs")],
      "workload", "messages = {}", "1M", false),
    f(&[(OMB, "testDurationMinutes")], "workload", "duration = {}m", "15", true),
    f(&[(OMB, "warmupDurationMinutes")], "workload", "warmup = {}m", "1", true),
    f(&[(OMB, "partitionsPerTopic"), (ANY, "partitions"), (ANY, "numPartitions")],
      "topic \"name\"", "partitions = {}", "16", true),
    f(&[(OMB, "replicationFactor"), (ANY, "replicas"), (ANY, "replication")],
      "topic \"name\"", "replication = {}", "3", true),
    f(&[(OMB, "producersPerTopic"), (K6, "vus"), (ANY, "threads"), (ANY, "concurrency"), (ANY, "numProducers")],
      "workload", "producers = {}", "4", true),
    f(&[(OMB, "consumerPerSubscription"), (ANY, "numConsumers")], "workload", "consumers = {}", "4", true),
    f(&[(OMB, "payloadFile"), (PERF, "payloadFile")], "workload", "payload = file(\"{}\")", "data/records.txt", false),
    f(&[(OMB, "keyDistributor")], "workload", "key = uniform(1000)", "", false),
    f(&[(K6, "stages")], "workload", "rate = ramp 0/s to 1000/s over 30s", "", false),
    f(&[(K6, "thresholds")], "expect", "ack.p99 < 10ms", "", false),
    f(&[(PERF, "bootstrapServer"), (ANY, "bootstrapServers"), (ANY, "brokers"), (ANY, "brokerList")],
      "cluster", "bootstrap = \"{}\"", "localhost:9092", false),
    f(&[(PERF, "transactionDurationMs")], "workload", "transaction = {}ms", "100", true),
    f(&[(PERF, "producerProps"), (PERF, "producer.config"), (OMB, "producerConfig")], "producer", "linger.ms = 5", "", false),
    f(&[(OMB, "consumerConfig"), (ANY, "consumer.config")], "consumer", "fetch.min.bytes = 1", "", false),
    f(&[(OMB, "topicConfig")], "topic \"name\"", "retention.ms = 1h", "", false),
    f(&[(PERF, "topic"), (OMB, "topicName")], "", "topic \"{}\" { }", "orders", false),
    f(&[(ANY, "durationSeconds"), (ANY, "testDurationSeconds")], "workload", "duration = {}s", "60", true),
];

fn normal(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '-' | '_' | '.'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The entry and the tool the name comes from.
fn find(name: &str) -> Option<(&'static Foreign, &'static str)> {
    let n = normal(name.trim_start_matches('-'));
    FOREIGN.iter().find_map(|f| {
        f.names
            .iter()
            .find(|(_, x)| normal(x) == n)
            .map(|(from, _)| (f, *from))
    })
}

fn plain_number(v: &str) -> bool {
    let v = v.replace('_', "");
    !v.is_empty() && v.parse::<f64>().is_ok_and(|x| x >= 0.0)
}

/// The setting to write for a foreign `name` (with the value given, when it fits): the form and
/// the section it goes in, e.g. (`rate = 1000/s`, `workload`).
pub(crate) fn equivalent(name: &str, value: Option<&str>) -> Option<(String, &'static str)> {
    let (f, _) = find(name)?;
    let value = value.map(|v| v.trim_matches(['"', '\'', '`']));
    let fits = |v: &&str| !v.is_empty() && (!f.numeric || plain_number(v));
    // `--throughput -1` is unthrottled in kafka-producer-perf-test.
    if f.form.starts_with("rate") && value.is_some_and(|v| v.starts_with('-')) {
        return Some(("rate = unlimited".into(), f.section));
    }
    // `--producer-props acks=all linger.ms=5`: the properties themselves.
    if f.section == "producer" {
        if let Some(props) = value.filter(|v| v.contains('=')) {
            let forms: Vec<String> = props
                .split_whitespace()
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| {
                    let v = if crate::model::is_secret(k) { "..." } else { v };
                    format!("{k} = {v}")
                })
                .collect();
            return Some((forms.join("  "), f.section));
        }
    }
    let v = value.filter(fits).unwrap_or(f.example);
    Some((f.form.replace("{}", v), f.section))
}

/// A help line for a foreign name: "OpenMessaging Benchmark's `producerRate` is
/// `rate = 1000/s` in `workload { }`"; None when the name is not a known foreign one.
pub(crate) fn help(name: &str, value: Option<&str>) -> Option<String> {
    let (_, from) = find(name)?;
    let (form, section) = equivalent(name, value)?;
    let whose = if from.is_empty() {
        format!("`{name}` is written")
    } else {
        format!("{from} `{name}` is")
    };
    Some(match section {
        "" => format!("{whose} `{form}` in the scenario"),
        "expect" => format!("{whose} assertions here: `expect {{ {form} }}`"),
        _ => format!("{whose} `{form}` in `{section} {{ }}`"),
    })
}

/// A scenario that says what a list of foreign names and values says (a command line of
/// kafka-producer-perf-test), when any of them is known: their settings grouped by section.
pub(super) fn scenario(pairs: &[(&str, Option<&str>)]) -> Option<String> {
    let mut top: Vec<String> = Vec::new();
    let mut sections: Vec<(&str, Vec<String>)> = Vec::new();
    for (name, value) in pairs {
        let Some((form, section)) = equivalent(name, *value) else {
            continue;
        };
        if section.is_empty() {
            top.push(form);
            continue;
        }
        match sections.iter_mut().find(|(s, _)| *s == section) {
            Some((_, forms)) => forms.push(form),
            None => sections.push((section, vec![form])),
        }
    }
    if top.is_empty() && sections.is_empty() {
        return None;
    }
    // A topic named on the command line takes the topic's settings.
    let mut parts = Vec::new();
    for t in top {
        match (
            t.strip_suffix(" { }"),
            sections.iter().position(|(s, _)| s.starts_with("topic")),
        ) {
            (Some(head), Some(k)) => {
                let (_, forms) = sections.remove(k);
                parts.push(format!("{head} {{ {} }}", forms.join("  ")));
            }
            _ => parts.push(t),
        }
    }
    for (section, forms) in sections {
        parts.push(format!("{section} {{ {} }}", forms.join("  ")));
    }
    Some(format!("scenario \"name\" {{ {} }}", parts.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_names_match_in_any_spelling_and_take_the_value_when_it_fits() {
        assert_eq!(
            help("--num-records", Some("100000")).as_deref(),
            Some("kafka-producer-perf-test's `--num-records` is `messages = 100000` in `workload { }`")
        );
        assert_eq!(
            equivalent("producerRate", Some("1000")),
            Some(("rate = 1000/s".into(), "workload"))
        );
        assert_eq!(
            equivalent("throughput", Some("-1")),
            Some(("rate = unlimited".into(), "workload"))
        );
        // A value that does not fit the form gives the example instead.
        assert_eq!(
            equivalent("testDurationMinutes", Some("ten")),
            Some(("duration = 15m".into(), "workload"))
        );
        assert_eq!(help("linger.ms", Some("5")), None);
        assert_eq!(
            scenario(&[
                ("--topic", Some("t")),
                ("--num-records", Some("10")),
                ("--throughput", Some("5"))
            ])
            .as_deref(),
            Some("scenario \"name\" { topic \"t\" { } workload { messages = 10  rate = 5/s } }")
        );
    }
}
