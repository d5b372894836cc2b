//! OpenMessaging Benchmark's two file formats as typed structs: the workload
//! (`io.openmessaging.benchmark.Workload`) and the Kafka driver (`DriverConfiguration` plus the
//! Kafka driver's `Config`). Every field is optional here, so that "absent" and OMB's Java
//! defaults can be told apart where they matter.

use serde::Deserialize;

use super::yaml::Fields;

/// `keyDistributor`: how OMB keys records.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)]
pub(super) enum KeyDistributor {
    /// Null keys.
    NoKey,
    /// 10 000 random keys, each in turn.
    KeyRoundRobin,
    /// One of 10 000 random keys picked by the clock's nanoseconds.
    RandomNano,
    /// Solace's fork: the first of the random keys, always.
    FixedKey,
    /// A name OMB does not know: its reader takes it for the default, NO_KEY
    /// (`READ_UNKNOWN_ENUM_VALUES_USING_DEFAULT_VALUE`), as a fork's distributor would be read.
    Unknown(String),
}

impl<'de> Deserialize<'de> for KeyDistributor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Ok(match name.as_str() {
            "NO_KEY" => Self::NoKey,
            "KEY_ROUND_ROBIN" => Self::KeyRoundRobin,
            "RANDOM_NANO" => Self::RandomNano,
            "FIXED_KEY" => Self::FixedKey,
            _ => Self::Unknown(name),
        })
    }
}

pub(super) const KEY_DISTRIBUTORS: &[&str] = &["NO_KEY", "KEY_ROUND_ROBIN", "RANDOM_NANO"];

/// How many distinct keys OMB's key distributors draw from (`KeyDistributor.UNIQUE_COUNT`).
pub(super) const OMB_KEYS: u32 = 10_000;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub(super) struct Workload {
    pub name: Option<String>,
    pub topics: Option<u32>,
    pub partitions_per_topic: Option<u32>,
    pub key_distributor: Option<KeyDistributor>,
    pub message_size: Option<u64>,
    pub use_randomized_payloads: Option<bool>,
    pub random_bytes_ratio: Option<f64>,
    pub randomized_payload_pool_size: Option<u32>,
    pub payload_file: Option<String>,
    pub subscriptions_per_topic: Option<u32>,
    pub producers_per_topic: Option<u32>,
    pub consumer_per_subscription: Option<u32>,
    pub producer_rate: Option<u64>,
    #[serde(rename = "consumerBacklogSizeGB")]
    pub consumer_backlog_size_gb: Option<u64>,
    pub backlog_drain_ratio: Option<f64>,
    pub test_duration_minutes: Option<u32>,
    pub warmup_duration_minutes: Option<u32>,
}

pub(super) const WORKLOAD: Fields = Fields {
    names: &[
        "name",
        "topics",
        "partitionsPerTopic",
        "keyDistributor",
        "messageSize",
        "useRandomizedPayloads",
        "randomBytesRatio",
        "randomizedPayloadPoolSize",
        "payloadFile",
        "subscriptionsPerTopic",
        "producersPerTopic",
        "consumerPerSubscription",
        "producerRate",
        "consumerBacklogSizeGB",
        "backlogDrainRatio",
        "testDurationMinutes",
        "warmupDurationMinutes",
    ],
    takes: workload_takes,
    what: "workload",
    forks: super::fork::WORKLOAD_FIELDS,
    required: &[
        "topics",
        "partitionsPerTopic",
        "messageSize",
        "producersPerTopic",
        "testDurationMinutes",
    ],
};

fn workload_takes(field: &str) -> String {
    match field {
        "name" | "payloadFile" => "text".into(),
        "keyDistributor" => format!("a name: one of {}", KEY_DISTRIBUTORS.join(", ")),
        "useRandomizedPayloads" => "true or false".into(),
        "randomBytesRatio" | "backlogDrainRatio" => "a number from 0.0 to 1.0".into(),
        "messageSize" => "a size in bytes, e.g. `1024`".into(),
        "producerRate" => {
            "messages per second, all producers together (0: find the maximum)".into()
        }
        "consumerBacklogSizeGB" => "a whole number of gigabytes".into(),
        "testDurationMinutes" | "warmupDurationMinutes" => "a whole number of minutes".into(),
        _ => "a whole number, 0 or more".into(),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub(super) struct Driver {
    pub name: Option<String>,
    pub driver_class: Option<String>,
    pub replication_factor: Option<i16>,
    /// Older Kafka driver files: delete every topic first (removed from OMB in 2022).
    pub reset: Option<bool>,
    pub topic_config: Option<String>,
    pub common_config: Option<String>,
    pub producer_config: Option<String>,
    pub consumer_config: Option<String>,
}

pub(super) const DRIVER: Fields = Fields {
    names: &[
        "name",
        "driverClass",
        "replicationFactor",
        "reset",
        "topicConfig",
        "commonConfig",
        "producerConfig",
        "consumerConfig",
    ],
    takes: driver_takes,
    what: "driver",
    forks: super::fork::DRIVER_FIELDS,
    required: &[],
};

fn driver_takes(field: &str) -> String {
    match field {
        "replicationFactor" => "a whole number of replicas, e.g. `3`".into(),
        "reset" => "true or false".into(),
        "topicConfig" | "commonConfig" | "producerConfig" | "consumerConfig" => {
            "Java properties as a text block: `|` and then one `key=value` per line".into()
        }
        _ => "text".into(),
    }
}

/// The driver class OMB's Kafka driver files name.
pub(super) const KAFKA_DRIVER: &str =
    "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver";
