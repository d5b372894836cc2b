//! A run's topics on the cluster: asked for before any run, found or created, their leaders
//! awaited, deleted; and the bytes they take on disk. One lifecycle for a run on one machine
//! and for a sharded run's collector (the `shard` stage), which creates and deletes the topics
//! its shards use.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::{CreateTopicsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::admin::{Admin, AdminError};
use super::blocking::blocking;
use super::error::{RunError, RunFailure, TopicRefusal};
use super::interrupt::{name_list, unless_interrupted, LiveTopic};
use super::logdirs;
use crate::measure::topics::disk_growth;
use crate::model::{Prop, Props, TopicSpec};
use crate::plan::RunPlan;
use crate::wire::conn::Limits;

/// librdkafka's admin requests can outlive their own timeouts when no broker answers at all,
/// so creation and deletion are bounded here too.
const CREATE_BOUND: Duration = Duration::from_secs(45);
/// A cluster that stops answering at the end must not hold the report back.
pub(crate) const DELETE_BOUND: Duration = Duration::from_secs(40);
const LEADERS_BOUND: Duration = Duration::from_secs(30);

/// Before the first run, the cluster is asked whether it would create each run's topic as the
/// scenario says (CreateTopics with validate_only, once per distinct topic): a config it does
/// not have (a vendor's, a removed one) or a value it refuses is named with the broker's reason
/// before any record of any run is sent. Err: the first run whose topic is refused, and why.
pub(crate) async fn validate(
    runs: &[&RunPlan],
    interrupt: &Arc<AtomicBool>,
) -> Result<(), RunFailure> {
    let mut admins: Vec<(AdminKey, Arc<Admin>)> = Vec::new();
    let mut asked: Vec<(&str, &TopicSpec)> = Vec::new();
    for rp in runs.iter().filter(|rp| !rp.topic.existing) {
        let fail = |error: RunError| RunFailure {
            index: rp.index,
            label: rp.label.clone(),
            error,
        };
        if asked
            .iter()
            .any(|(b, t)| *b == rp.bootstrap && same_topic(t, &rp.topic))
        {
            continue;
        }
        asked.push((&rp.bootstrap, &rp.topic));
        let key = admin_key(rp);
        let admin = match admins.iter().find(|(k, _)| *k == key) {
            Some((_, a)) => a.clone(),
            None => {
                let (props, bootstrap) = (rp.admin.clone(), rp.bootstrap.clone());
                let a = unless_interrupted(
                    interrupt,
                    blocking(move || Admin::connect(&props, &bootstrap)),
                )
                .await
                .ok_or(RunError::Interrupted)
                .map_err(fail)?
                .map_err(|e| fail(e.into()))?
                .map_err(|e| fail(RunError::Unreachable(e)))?;
                let a = Arc::new(a);
                admins.push((key, a.clone()));
                a
            }
        };
        let asking = tokio::time::timeout(CREATE_BOUND, refusal(&admin, rp));
        match unless_interrupted(interrupt, asking).await {
            None => return Err(fail(RunError::Interrupted)),
            Some(Err(_)) => {
                return Err(fail(RunError::TopicCreationTimedOut {
                    topic: rp.topic.name.clone(),
                    after: CREATE_BOUND,
                }))
            }
            Some(Ok(Some(why))) => {
                return Err(fail(RunError::TopicRefused(TopicRefusal {
                    first: why,
                    more: 0,
                })))
            }
            Some(Ok(None)) => {}
        }
    }
    Ok(())
}

/// One cluster as one admin client reaches it: its bootstrap and client properties.
type AdminKey = (String, Vec<(String, String)>);

fn admin_key(rp: &RunPlan) -> AdminKey {
    let props = rp.admin.iter().map(|p| (p.key.clone(), p.value.clone()));
    (rp.bootstrap.clone(), props.collect())
}

/// Topics the cluster would treat alike: the same partitions, replication and configs.
fn same_topic(a: &TopicSpec, b: &TopicSpec) -> bool {
    let configs = |t: &TopicSpec| -> Vec<(String, String)> {
        t.configs
            .iter()
            .map(|p| (p.key.clone(), p.value.clone()))
            .collect()
    };
    a.partitions == b.partitions && a.replication == b.replication && configs(a) == configs(b)
}

/// Why the cluster would refuse the run's topic, or None when it would create it. Refused as
/// a whole, it is asked again without configs (then the topic itself is refused: its
/// replication, its partitions, a policy) and with each config alone, to name the configs.
async fn refusal(admin: &Admin, rp: &RunPlan) -> Option<AdminError> {
    let t = &rp.topic;
    let all: Vec<&Prop> = t.configs.iter().collect();
    let code = match admin.validate_topic(t, &t.name, &all).await {
        Ok(()) => return None,
        Err(AdminError::TopicRefused { code, .. }) => code,
        Err(other) => return Some(other),
    };
    if let Err(AdminError::TopicRefused { code, .. }) = admin.validate_topic(t, &t.name, &[]).await
    {
        return Some(refused_as(rp, None, Vec::new(), code).await);
    }
    let mut refused = Vec::new();
    for c in &all {
        if let Err(AdminError::TopicRefused { code, .. }) =
            admin.validate_topic(t, &t.name, &[c]).await
        {
            refused.push((*c, code));
        }
    }
    match refused.split_first() {
        Some(((first, code), rest)) => {
            let others = rest
                .iter()
                .map(|(c, _)| format!("{} = {}", c.key, c.value))
                .collect();
            Some(refused_as(rp, Some(first), others, *code).await)
        }
        // Each config passes alone, not together (a policy, or configs that conflict).
        None => Some(refused_as(rp, None, Vec::new(), code).await),
    }
}

/// The refusal, in the broker's own words when they can be read.
async fn refused_as(
    rp: &RunPlan,
    config: Option<&Prop>,
    others: Vec<String>,
    code: rdkafka::types::RDKafkaErrorCode,
) -> AdminError {
    let (admin, bootstrap, t, c) = (
        rp.admin.clone(),
        rp.bootstrap.clone(),
        rp.topic.clone(),
        config.cloned(),
    );
    let words = blocking(move || broker_reason(&admin, &bootstrap, &t, c.as_ref())).await;
    AdminError::Validation {
        topic: rp.topic.name.clone(),
        config: config.map(|c| format!("{} = {}", c.key, c.value)),
        others,
        code,
        reason: words.ok().flatten(),
    }
}

/// The broker's own words for refusing the topic with only `config` (or none): librdkafka
/// reports a refusal's code alone, so the same validate-only request is sent over kafkabench's
/// own connection, which reads the message too. None when that cannot be asked (a security
/// setup it does not speak, a broker that will not answer it) or the broker gives no words.
fn broker_reason(
    admin: &Props,
    bootstrap: &str,
    t: &TopicSpec,
    config: Option<&Prop>,
) -> Option<String> {
    let security = logdirs::security(admin).ok()?;
    let bootstrap = crate::wire::admin::bootstrap_list(bootstrap);
    let limits = Limits::new(Duration::from_secs(10));
    let mut conn =
        crate::wire::admin::bootstrap_conn(&bootstrap, &security, limits, "kafkabench").ok()?;
    let configs = config
        .into_iter()
        .map(|c| {
            CreatableTopicConfig::default()
                .with_name(StrBytes::from_string(c.key.clone()))
                .with_value(Some(StrBytes::from_string(c.value.clone())))
        })
        .collect();
    let req = CreateTopicsRequest::default()
        .with_timeout_ms(10_000)
        .with_validate_only(true)
        .with_topics(vec![CreatableTopic::default()
            .with_name(TopicName(StrBytes::from_string(t.name.clone())))
            .with_num_partitions(t.partitions)
            .with_replication_factor(t.replication as i16)
            .with_configs(configs)]);
    let answer = conn.request(&req).ok()?;
    let message = answer.topics.first()?.error_message.as_ref()?;
    Some(message.to_string()).filter(|m| !m.trim().is_empty())
}

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
