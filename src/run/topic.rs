//! A run's topics on the cluster: found or created, their leaders awaited, deleted; and the
//! bytes they take on disk. One lifecycle for a run on one machine and for a sharded run's
//! collector (the `shard` stage), which creates and deletes the topics its shards use.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::admin::{Admin, AdminError};
use super::error::{RunError, TopicRefusal};
use super::interrupt::{name_list, unless_interrupted, LiveTopic};
use super::logdirs;
use crate::measure::topics::disk_growth;
use crate::plan::RunPlan;

/// librdkafka's admin requests can outlive their own timeouts when no broker answers at all,
/// so creation and deletion are bounded here too.
const CREATE_BOUND: Duration = Duration::from_secs(45);
/// A cluster that stops answering at the end must not hold the report back.
pub(crate) const DELETE_BOUND: Duration = Duration::from_secs(40);
const LEADERS_BOUND: Duration = Duration::from_secs(30);

/// An existing topic's partitions (`existing = true`, or a shard's topic the collector
/// created): looked up, never created.
pub(crate) async fn existing(
    admin: &Admin,
    topic: &str,
    interrupt: &Arc<AtomicBool>,
) -> Result<i32, RunError> {
    unless_interrupted(interrupt, admin.topic_partitions(topic))
        .await
        .ok_or(RunError::Interrupted)?
        .map_err(RunError::TopicLookup)?
        .ok_or_else(|| RunError::TopicMissing(topic.to_string()))
}

/// Creates the run's topics, giving way to an interrupt. From the moment creation is asked
/// for they may exist, so `live` names them for whoever ends the process early. Err: why, and
/// which of them to delete all the same (all but the ones the cluster refused: a refused
/// topic may be someone else's of the same name).
pub(crate) async fn create(
    admin: &Admin,
    rp: &RunPlan,
    live: &LiveTopic,
    interrupt: &Arc<AtomicBool>,
) -> Result<(), (RunError, Vec<String>)> {
    let topics = rp.topics.clone();
    live.set_all(topics.clone());
    let created = unless_interrupted(
        interrupt,
        tokio::time::timeout(CREATE_BOUND, create_all(admin, rp)),
    )
    .await;
    match created {
        Some(Ok(Ok(()))) => Ok(()),
        Some(Ok(Err(refused))) => {
            let delete = topics
                .into_iter()
                .filter(|t| !refused.names.contains(t))
                .collect();
            Err((RunError::TopicRefused(refused.why), delete))
        }
        Some(Err(_)) => Err((
            RunError::TopicCreationTimedOut {
                topic: name_list(&topics),
                after: CREATE_BOUND,
            },
            topics,
        )),
        None => Err((RunError::Interrupted, topics)),
    }
}

/// Why creation failed, and which topics the cluster refused (not to be deleted).
struct Refused {
    why: TopicRefusal,
    names: Vec<String>,
}

/// Creates the run's topics: its one topic as the topic block says, or all `topics = N`.
async fn create_all(admin: &Admin, rp: &RunPlan) -> Result<(), Refused> {
    if let [one] = rp.topics.as_slice() {
        return admin
            .create_topic(&rp.topic)
            .await
            .map_err(|first| Refused {
                why: TopicRefusal { first, more: 0 },
                names: vec![one.clone()],
            });
    }
    let mut refused: Vec<(String, AdminError)> = admin
        .create_topics(&rp.topic, &rp.topics)
        .await
        .into_iter()
        .filter_map(|(name, r)| r.err().map(|why| (name, why)))
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    let more = refused.len() - 1;
    let names = refused.iter().map(|(name, _)| name.clone()).collect();
    let (_, first) = refused.swap_remove(0);
    Err(Refused {
        why: TopicRefusal { first, more },
        names,
    })
}

/// Waits until every partition of the run's topics has a leader.
pub(crate) async fn leaders(
    admin: &Admin,
    rp: &RunPlan,
    partitions: i32,
    interrupt: &Arc<AtomicBool>,
) -> Result<(), RunError> {
    unless_interrupted(
        interrupt,
        admin.wait_for_all_leaders(&rp.topics, partitions, LEADERS_BOUND),
    )
    .await
    .ok_or(RunError::Interrupted)?
    .map_err(RunError::TopicNotReady)
}

/// What deleting topics came to.
pub(crate) enum Deleted {
    All,
    /// The topics left, each with why.
    Left(Vec<(String, String)>),
    /// No answer within [`DELETE_BOUND`].
    NoAnswer,
}

/// Deletes `names`. Not raced with an interrupt: a first interrupt still cleans up, and a
/// second one ends the process (naming the topics) without waiting for it.
pub(crate) async fn delete(admin: &Admin, names: &[String]) -> Deleted {
    match tokio::time::timeout(DELETE_BOUND, admin.delete_topics(names)).await {
        Ok(left) if left.is_empty() => Deleted::All,
        Ok(left) => Deleted::Left(left),
        Err(_) => Deleted::NoAnswer,
    }
}

/// Where the run's topics' size on disk is asked: every broker, by DescribeLogDirs.
#[derive(Clone)]
pub(crate) struct Disk {
    /// How this cluster is asked (its security), or why it cannot be.
    security: Result<crate::wire::Security, String>,
    brokers: Vec<String>,
    topics: Vec<String>,
    partitions: i32,
}

impl Disk {
    pub(crate) fn new(rp: &RunPlan, brokers: &[String], partitions: i32) -> Disk {
        Disk {
            security: logdirs::security(&rp.admin).map_err(|e| e.to_string()),
            brokers: brokers.to_vec(),
            topics: rp.topics.clone(),
            partitions,
        }
    }

    /// Each topic's bytes now (largest replica per partition). Blocking: a request per broker.
    pub(crate) fn bytes(&self) -> Result<Vec<u64>, String> {
        let security = self.security.clone()?;
        logdirs::topics_bytes(&self.brokers, &security, &self.topics, self.partitions)
            .map_err(|e| e.to_string())
    }
}

/// The growth between a measurement before and one after: per topic, and in all. Err: why
/// one of them is missing (the first's reason first).
pub(crate) fn growth(
    before: Result<Vec<u64>, String>,
    after: Result<Vec<u64>, String>,
) -> Result<(Vec<u64>, u64), String> {
    let (before, after) = (before?, after?);
    Ok(disk_growth(&before, &after))
}
