//! The run's cluster metadata as the fault timeline reads it when an action fires: a partition's
//! leader, the brokers' addresses, how many brokers the cluster lists.

use std::time::{Duration, Instant};

use rdkafka::admin::AdminClient;
use rdkafka::client::DefaultClientContext;
use rdkafka::metadata::Metadata;
use rdkafka::{Offset, TopicPartitionList};

use super::error::FaultError;
use crate::model::Props;
use crate::run::admin;

/// One metadata request's bound; a paused broker answers nothing, so a request that picked it
/// is retried (librdkafka then tends to ask another) until `ASK_FOR` has gone.
const ASK: Duration = Duration::from_secs(2);
const ASK_FOR: Duration = Duration::from_secs(8);
/// A refused connection fails at once: the next try waits this long, so the tries span
/// `ASK_FOR` (a broker just restarted, a loaded machine) rather than end within milliseconds.
const RETRY_AFTER: Duration = Duration::from_millis(250);

pub(super) struct Meta {
    client: AdminClient<DefaultClientContext>,
}

/// What a `run` command is told about the run's topic.
pub(super) struct Snapshot {
    /// (partition, leader id), -1 for none.
    pub leaders: Vec<(i32, i32)>,
    /// (id, host, port).
    pub brokers: Vec<(i32, String, u16)>,
}

impl Meta {
    pub(super) fn connect(props: &Props, bootstrap_for_errors: &str) -> Result<Meta, FaultError> {
        let client = admin::config(props)
            .create()
            .map_err(|source| FaultError::Client {
                bootstrap: bootstrap_for_errors.to_string(),
                source,
            })?;
        Ok(Meta { client })
    }

    fn ask(&self, topic: Option<&str>) -> Result<Metadata, FaultError> {
        let deadline = Instant::now() + ASK_FOR;
        loop {
            let asked = Instant::now();
            match self.client.inner().fetch_metadata(topic, ASK) {
                Ok(md) => return Ok(md),
                Err(e) if Instant::now() >= deadline => return Err(FaultError::NoMetadata(e)),
                Err(_) => {
                    if let Some(rest) = RETRY_AFTER.checked_sub(asked.elapsed()) {
                        std::thread::sleep(rest);
                    }
                }
            }
        }
    }

    /// The current leader of `partition` of `topic`.
    pub(super) fn leader(&self, topic: &str, partition: i32) -> Result<i32, FaultError> {
        let md = self.ask(Some(topic))?;
        let t = md
            .topics()
            .iter()
            .find(|t| t.name() == topic)
            .ok_or_else(|| FaultError::TopicUnknown(topic.to_string()))?;
        let p = t
            .partitions()
            .iter()
            .find(|p| p.id() == partition)
            .ok_or_else(|| FaultError::NoPartition {
                topic: topic.to_string(),
                partition,
            })?;
        match p.leader() {
            l if l >= 0 => Ok(l),
            _ => Err(FaultError::NoLeader {
                topic: topic.to_string(),
                partition,
            }),
        }
    }

    /// Deletes the records of `partition` of `topic` before offset `before` (all it holds
    /// now when None); the partition's new log start offset.
    pub(super) async fn delete_records(
        &self,
        topic: &str,
        partition: i32,
        before: Option<u64>,
    ) -> Result<i64, FaultError> {
        let offset = match before {
            Some(b) => Offset::Offset(b as i64),
            None => Offset::End,
        };
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(topic, partition, offset)
            .map_err(FaultError::Kafka)?;
        let done = self
            .client
            .delete_records(&tpl, &admin::options())
            .await
            .map_err(FaultError::DeleteRefused)?;
        let e = done
            .find_partition(topic, partition)
            .ok_or(FaultError::NoAnswer(partition))?;
        e.error().map_err(FaultError::DeleteRefused)?;
        match e.offset() {
            Offset::Offset(low) => Ok(low),
            o => Err(FaultError::NoOffset(o)),
        }
    }

    pub(super) fn broker_count(&self) -> Result<usize, FaultError> {
        Ok(self.ask(None)?.brokers().len())
    }

    pub(super) fn snapshot(&self, topic: &str) -> Result<Snapshot, FaultError> {
        let md = self.ask(Some(topic))?;
        let leaders = md
            .topics()
            .iter()
            .filter(|t| t.name() == topic)
            .flat_map(|t| t.partitions().iter().map(|p| (p.id(), p.leader())))
            .collect();
        let brokers = md
            .brokers()
            .iter()
            .map(|b| (b.id(), b.host().to_string(), b.port() as u16))
            .collect();
        Ok(Snapshot { leaders, brokers })
    }
}
