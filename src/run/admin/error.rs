//! Why the cluster's administration failed: reaching it, a topic's lifecycle, the brokers'
//! log directories. All its wording is in this one `Display`.

use std::time::Duration;

use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;

use super::CONNECT_TIMEOUT;

/// What went wrong asking the cluster (admin requests and DescribeLogDirs).
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("cannot create a Kafka client for {bootstrap}: {source}")]
    Client {
        bootstrap: String,
        source: KafkaError,
    },
    /// A refusal that waiting cannot cure (librdkafka's reason, from its error callback).
    #[error(
        "authentication failed at {bootstrap}: {reason}; check sasl.mechanism, sasl.username \
         and sasl.password in the cluster block"
    )]
    Authentication { bootstrap: String, reason: String },
    #[error(
        "TLS handshake with {bootstrap} failed: {reason}; ssl.ca.location must name the \
         CA certificate that signed the brokers' certificates"
    )]
    Tls { bootstrap: String, reason: String },
    /// No answer in time; `why` is librdkafka's last word on it.
    #[error(
        "cannot reach Kafka at {bootstrap} within {}s ({why}); start a local broker with `scripts/kafka-local up`, \
         or point kafkabench elsewhere with --bootstrap or KAFKA_BOOTSTRAP",
        CONNECT_TIMEOUT.as_secs()
    )]
    Unreachable { bootstrap: String, why: String },
    #[error("Kafka at {bootstrap} reports no brokers")]
    NoBrokers { bootstrap: String },
    #[error("creating topic {topic}: {source}")]
    CreateTopic { topic: String, source: KafkaError },
    /// `one`: the run has this one topic, which `existing = true` could name.
    #[error(
        "topic {topic} already exists; kafkabench writes only into topics it created in this run{}",
        if *one { " (say `existing = true` in the topic block to use an existing topic)" } else { "" }
    )]
    TopicExists { topic: String, one: bool },
    #[error("the cluster refused to create topic {topic}: {code}")]
    TopicRefused {
        topic: String,
        code: RDKafkaErrorCode,
    },
    /// Asked before any run (CreateTopics with validate_only), the cluster would refuse the
    /// topic: for `config` (`key = value`) when that config alone is refused, with the other
    /// configs it refuses alone; `reason` is the broker's own words when they could be read.
    #[error("{}", validation(.topic, .config.as_deref(), .others, *.code, .reason.as_deref()))]
    Validation {
        topic: String,
        config: Option<String>,
        others: Vec<String>,
        code: RDKafkaErrorCode,
        reason: Option<String>,
    },
    #[error("creating the control topic {topic}: {source}")]
    CreateControlTopic { topic: String, source: KafkaError },
    #[error("the cluster refused to create the control topic {topic}: {code}")]
    ControlTopicRefused {
        topic: String,
        code: RDKafkaErrorCode,
    },
    #[error("topic {topic} has partitions without a leader after {}s", .after.as_secs())]
    NoLeader { topic: String, after: Duration },
    /// Many topics: how many still wait, of how many, and the first few of them.
    #[error(
        "{} of the run's {of} topics have partitions without a leader after {}s ({}{})",
        .waiting,
        .after.as_secs(),
        .first.join(", "),
        if *.waiting > .first.len() { ", …" } else { "" }
    )]
    NoLeaders {
        waiting: usize,
        of: usize,
        after: Duration,
        first: Vec<String>,
    },
    /// A metadata or delete request that got no answer (librdkafka's words alone).
    #[error("{0}")]
    Request(#[source] KafkaError),
    #[error("deleting topic {topic}: {code}")]
    DeleteRefused {
        topic: String,
        code: RDKafkaErrorCode,
    },
    /// Reading the partitions' ends of an existing topic, with a consumer of its own.
    #[error("cannot create consumer: {0}")]
    EndsConsumer(#[source] KafkaError),
    #[error("cannot read the end of {topic} partition {partition}: {source}")]
    End {
        topic: String,
        partition: i32,
        source: KafkaError,
    },
    /// DescribeLogDirs goes over kafkabench's own connection, which cannot be secured as the
    /// cluster's properties say (`detail`: what it does not speak).
    #[error(
        "kafkabench asks the brokers for it over its own connection, and {detail} \
         (Kafka's kafka-log-dirs tool with a client config can measure it)"
    )]
    Security { detail: String },
    #[error("DescribeLogDirs to {broker}: {cause}")]
    LogDirs { broker: String, cause: LogDirsCause },
}

/// Why one broker's DescribeLogDirs gave no sizes.
#[derive(Debug, thiserror::Error)]
pub enum LogDirsCause {
    /// Connecting, securing, asking or reading failed (`wire`'s words: which broker, which step).
    #[error("{0}")]
    Wire(String),
    #[error("error code {0}")]
    Code(i16),
}

fn validation(
    topic: &str,
    config: Option<&str>,
    others: &[String],
    code: RDKafkaErrorCode,
    reason: Option<&str>,
) -> String {
    let why = match reason {
        Some(r) => format!("{r} ({code:?})"),
        None => code.to_string(),
    };
    let others = match others {
        [] => String::new(),
        [one] => format!("; it refuses `{one}` too"),
        more => format!(
            "; it refuses {} too",
            more.iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    match config {
        Some(c) => format!(
            "the cluster refuses the topic config `{c}`: {why}{others} (asked before any run, for topic {topic}; nothing was sent)"
        ),
        None => format!(
            "the cluster would refuse topic {topic}: {why} (asked before any run; nothing was sent)"
        ),
    }
}

// The sharded run's control topic (src/run/control.rs) still reports its errors as text.
impl From<AdminError> for String {
    fn from(e: AdminError) -> String {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wording_is_the_one_users_know() {
        let exists = |one| AdminError::TopicExists {
            topic: "t".into(),
            one,
        };
        assert_eq!(
            exists(false).to_string(),
            "topic t already exists; kafkabench writes only into topics it created in this run"
        );
        assert_eq!(
            exists(true).to_string(),
            "topic t already exists; kafkabench writes only into topics it created in this run \
             (say `existing = true` in the topic block to use an existing topic)"
        );
        let waiting = |waiting: usize| AdminError::NoLeaders {
            waiting,
            of: 9,
            after: Duration::from_secs(30),
            first: ["a", "b", "c"][..waiting.min(3)]
                .iter()
                .map(|n| n.to_string())
                .collect(),
        };
        assert_eq!(
            waiting(3).to_string(),
            "3 of the run's 9 topics have partitions without a leader after 30s (a, b, c)"
        );
        assert_eq!(
            waiting(4).to_string(),
            "4 of the run's 9 topics have partitions without a leader after 30s (a, b, c, …)"
        );
        let logdirs = AdminError::LogDirs {
            broker: "b:9092".into(),
            cause: LogDirsCause::Code(35),
        };
        assert_eq!(
            logdirs.to_string(),
            "DescribeLogDirs to b:9092: error code 35"
        );
    }
}
