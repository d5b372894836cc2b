//! What an OMB file can say and a scenario cannot: every comment or warning of the import that
//! claims kafkabench lacks something takes its words from this table, and the tests hold each
//! entry against the reference (grammar/REFERENCE.md): no form that would say it is documented
//! there. An import that claims kafkabench lacks what the language has fails them.

/// One thing the language cannot say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lack {
    /// Several consumer groups reading every record (OMB's `subscriptionsPerTopic` above 1).
    SeveralGroups,
    /// Several groups of topics loaded at once, each with its own sizes, clients and rate
    /// (AutoMQ's `topicGroups`).
    TopicGroups,
    /// A count for each topic (AutoMQ's `partitionsPerTopicList`, `producersPerTopicList`).
    PerTopicCounts,
    /// A rate set by the time of day (AutoMQ's `producerRateList` of [hour, minute, rate]).
    ClockRate,
    /// How often figures are sampled, as a scenario setting: it is `run --interval`.
    ScenarioInterval,
    /// The broker's default replication factor (`replicationFactor: -1`).
    DefaultReplication,
    /// Each record written several times over (fgelcer's `batchSize`).
    RepeatedRecords,
    /// Several transactions open at once in one producer (fgelcer's `maxConcurrentTransactions`).
    OpenTransactions,
    /// A commit after every poll, waited for (fgelcer's `sync: true`).
    PollCommits,
}

/// Every entry, for the tests.
#[cfg(test)]
const ALL: &[Lack] = &[
    Lack::SeveralGroups,
    Lack::TopicGroups,
    Lack::PerTopicCounts,
    Lack::ClockRate,
    Lack::ScenarioInterval,
    Lack::DefaultReplication,
    Lack::RepeatedRecords,
    Lack::OpenTransactions,
    Lack::PollCommits,
];

impl Lack {
    /// The words a comment or warning uses.
    pub(super) fn words(self) -> &'static str {
        match self {
            Lack::SeveralGroups => {
                "kafkabench's consumers form one group (`consumers`), so each record is read once, not once per subscription"
            }
            Lack::TopicGroups => {
                "a kafkabench run has one topic block and one workload, so groups of topics loaded at once cannot be said"
            }
            Lack::PerTopicCounts => {
                "kafkabench's topics share one configuration (`topics = N` of the topic block)"
            }
            Lack::ClockRate => "a scenario's rate does not follow the time of day",
            Lack::ScenarioInterval => {
                "how often figures are sampled is not a scenario setting: `kafkabench run --interval` sets it"
            }
            Lack::DefaultReplication => {
                "kafkabench's `replication` is a number of replicas, never the broker's default"
            }
            Lack::RepeatedRecords => "kafkabench writes each record once, and `rate` counts records",
            Lack::OpenTransactions => {
                "a kafkabench producer keeps one transaction open at a time (`producers` sets how many)"
            }
            Lack::PollCommits => {
                "a scenario's commits that wait come every N records (`commit = every(N, sync: true)`), not every poll"
            }
        }
    }

    /// What the reference would show, were the language to say it: none of these may be
    /// documented while the import claims the lack.
    #[cfg(test)]
    fn forms(self) -> &'static [&'static str] {
        match self {
            Lack::SeveralGroups => &["groups =", "subscriptions =", "consumer_groups ="],
            Lack::TopicGroups => &["workloads {", "topic_groups", "groups {"],
            Lack::PerTopicCounts => &["partitions_per_topic", "producers_per_topic"],
            Lack::ClockRate => &["at 09:00", "time_of_day", "clock("],
            Lack::ScenarioInterval => &["interval =", "sample_interval"],
            Lack::DefaultReplication => &["replication = default", "replication = broker"],
            Lack::RepeatedRecords => &["copies =", "duplicates =", "times_each"],
            Lack::OpenTransactions => &["open_transactions", "concurrent_transactions"],
            Lack::PollCommits => &["every(poll", "per_poll", "commit = poll"],
        }
    }
}

/// Phrases that claim kafkabench (or a scenario) lacks something: outside this table none may
/// be written by the import.
#[cfg(test)]
const DENIALS: &[&str] = &[
    "kafkabench has no",
    "kafkabench had no",
    "no kafkabench equivalent",
    "has no kafkabench",
    "kafkabench cannot",
    "kafkabench can't",
    "kafkabench does not",
    "kafkabench doesn't",
    "kafkabench lacks",
    "kafkabench never",
    "kafkabench reads with one",
    "a scenario does not",
    "a scenario cannot",
    "a scenario has no",
    "cannot be said",
    "not (yet)",
    "not yet",
];

/// Every stretch of `text` that denies kafkabench something, and whether a [`Lack`]'s words
/// cover it: each denial must sit inside one entry's words.
#[cfg(test)]
fn denials(text: &str) -> Vec<(String, bool)> {
    let lower = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    let mut out = Vec::new();
    for d in DENIALS {
        let mut from = 0;
        while let Some(at) = lower[from..].find(d) {
            let at = from + at;
            let covered = ALL.iter().any(|l| {
                let w = l.words().to_lowercase();
                w.find(d)
                    .is_some_and(|inner| at >= inner && lower[at - inner..].starts_with(&w))
            });
            let start = lower[..at].rfind(['\n', '.', ';']).map_or(0, |i| i + 1);
            let end = lower[at..]
                .find(['\n', ';'])
                .map_or(lower.len(), |i| at + i);
            out.push((lower[start..end].trim().to_string(), covered));
            from = at + d.len();
        }
    }
    out
}

#[cfg(test)]
#[path = "lacks_tests.rs"]
mod tests;
