//! Why the fault timeline cannot act: its kafka-local cluster, a node, the script, the cluster's
//! metadata. All its wording is in this one `Display`.

use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use rdkafka::error::KafkaError;
use rdkafka::Offset;

/// What went wrong preparing or firing a fault. Clone: a run's cluster lookup is shared by every
/// run at the same bootstrap servers.
#[derive(Clone, Debug, thiserror::Error)]
pub enum FaultError {
    /// No kafka-local home serves `bootstrap`; `looked` says where it looked and what it found.
    #[error(
        "kill, pause and restart act on a cluster started by scripts/kafka-local, and none runs at \
         {bootstrap} (looked in {}); set KAFKA_LOCAL_HOME to its home, or use `run \"...\"` for \
         other clusters",
        .looked.join(", ")
    )]
    NoLocalCluster {
        bootstrap: String,
        looked: Vec<String>,
    },
    #[error(
        "broker {id} is not a node of the kafka-local cluster in {} (its brokers are {})",
        .home.display(),
        .ids.iter().map(i32::to_string).collect::<Vec<_>>().join(", ")
    )]
    NotANode {
        id: i32,
        home: PathBuf,
        ids: Vec<i32>,
    },
    #[error(
        "broker {id} of the kafka-local cluster in {} is {state}; `scripts/kafka-local up` repairs it",
        .home.display()
    )]
    NodeNotRunning {
        id: i32,
        home: PathBuf,
        state: String,
    },
    /// One action of the timeline, as written, and why it cannot act.
    #[error("`{text}`: {cause}")]
    Action {
        text: String,
        cause: Box<FaultError>,
    },
    #[error("cannot run {}: {source}", .script.display())]
    Script {
        script: PathBuf,
        source: Arc<std::io::Error>,
    },
    /// The script failed; `last` is the last line it said, its `kafka-local: ` prefix dropped.
    #[error(
        "scripts/kafka-local {args} failed ({status}){}",
        if .last.is_empty() { String::new() } else { format!(": {}", .last) }
    )]
    ScriptFailed {
        args: String,
        status: ExitStatus,
        last: String,
    },
    #[error("cannot create a Kafka client for the fault timeline ({bootstrap}): {source}")]
    Client {
        bootstrap: String,
        source: KafkaError,
    },
    #[error("no metadata client")]
    NoMetadataClient,
    /// Every try went unanswered; librdkafka's last word.
    #[error("no metadata from the cluster ({0})")]
    NoMetadata(KafkaError),
    #[error("topic {0} is not in the cluster's metadata")]
    TopicUnknown(String),
    #[error("topic {topic} has no partition {partition}")]
    NoPartition { topic: String, partition: i32 },
    #[error("partition {partition} of {topic} has no leader now")]
    NoLeader { topic: String, partition: i32 },
    /// librdkafka's words alone (a partition list it would not build).
    #[error("{0}")]
    Kafka(KafkaError),
    #[error("the cluster refused to delete records: {0}")]
    DeleteRefused(KafkaError),
    #[error("the cluster did not answer for partition {0}")]
    NoAnswer(i32),
    #[error("the cluster answered with no offset ({0:?})")]
    NoOffset(Offset),
    #[error(
        "the cluster lists {seen} of its {want} brokers {}s after the fault timeline \
         ended; see `scripts/kafka-local status`",
        .after.as_secs()
    )]
    NotRejoined {
        seen: usize,
        want: usize,
        after: Duration,
    },
    /// The blocking task that asked failed (its own words).
    #[error("{0}")]
    Task(Arc<tokio::task::JoinError>),
}

/// Everything that stands in the way of a timeline, said at once.
#[derive(Debug)]
pub struct Problems(pub Vec<FaultError>);

impl std::fmt::Display for Problems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl From<FaultError> for Problems {
    fn from(e: FaultError) -> Problems {
        Problems(vec![e])
    }
}
