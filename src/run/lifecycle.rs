//! One run's lifecycle: connect, create (or find) its topics, measure, delete every topic it
//! created.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::admin::{Admin, AdminError};
use super::error::{RunError, TopicRefusal};
use super::interrupt::{name_list, unless_interrupted};
use super::{workers, RunOptions};
use crate::measure::RunResult;
use crate::plan::RunPlan;

/// librdkafka's admin requests can outlive their own timeouts when no broker answers at all,
/// so creation and deletion are bounded here too.
const CREATE_TOPIC_BOUND: Duration = Duration::from_secs(45);
/// A cluster that stops answering at the end must not hold the report back.
const DELETE_TOPIC_BOUND: Duration = Duration::from_secs(40);
const LEADERS_BOUND: Duration = Duration::from_secs(30);

/// Runs blocking client calls off the orchestrator's thread.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, RunError> {
    Ok(tokio::task::spawn_blocking(f).await?)
}

/// One planned run from connecting to cleaning up. An `Ok` result may still be incomplete
/// (the cluster was lost, an interrupt): its figures cover what was measured. An interrupt
/// before measuring is `RunError::Interrupted`; every wait on the cluster gives way to it.
pub async fn run_one(
    rp: &RunPlan,
    runs: usize,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
    notes: &mut Vec<String>,
) -> Result<RunResult, RunError> {
    let (admin_props, bootstrap) = (rp.admin.clone(), rp.bootstrap.clone());
    let admin = Arc::new(
        unless_interrupted(
            &interrupt,
            blocking(move || Admin::connect(&admin_props, &bootstrap)),
        )
        .await
        .ok_or(RunError::Interrupted)??
        .map_err(RunError::Unreachable)?,
    );
    let brokers = {
        let a = admin.clone();
        unless_interrupted(&interrupt, blocking(move || a.brokers()))
            .await
            .ok_or(RunError::Interrupted)??
            .map_err(RunError::Unreachable)?
    };
    let topic = rp.topic.name.clone();
    if let Some(s) = &opts.shard {
        // The collector creates and deletes the topics; a shard only uses them.
        super::sharded::topics_ready(s, rp.index, &interrupt).await?;
        let partitions = unless_interrupted(&interrupt, admin.topic_partitions(&topic))
            .await
            .ok_or(RunError::Interrupted)?
            .map_err(RunError::TopicLookup)?
            .ok_or_else(|| RunError::TopicMissing(topic.clone()))?;
        if let Some(why) = s.shard.problem(partitions) {
            return Err(RunError::Coordination(why));
        }
        return ready_and_measure(
            rp, runs, opts, &interrupt, &admin, &brokers, partitions, notes,
        )
        .await;
    }
    if rp.topic.existing {
        let partitions = unless_interrupted(&interrupt, admin.topic_partitions(&topic))
            .await
            .ok_or(RunError::Interrupted)?
            .map_err(RunError::TopicLookup)?
            .ok_or_else(|| RunError::TopicMissing(topic.clone()))?;
        return ready_and_measure(
            rp, runs, opts, &interrupt, &admin, &brokers, partitions, notes,
        )
        .await;
    }
    // From the moment creation is asked for, the topics may exist: say so if the process is
    // ended before they are deleted.
    let topics = rp.topics.clone();
    opts.live_topic.set_all(topics.clone());
    let created = unless_interrupted(
        &interrupt,
        tokio::time::timeout(CREATE_TOPIC_BOUND, create(&admin, rp)),
    )
    .await;
    // Which topics to delete: all of them, unless the cluster said which it refused.
    let mut delete = topics.clone();
    let result = match created {
        Some(Ok(Err(refused))) => {
            // A refused topic may be someone else's of the same name: it is not deleted.
            delete.retain(|t| !refused.names.contains(t));
            Err(RunError::TopicRefused(refused.why))
        }
        Some(Ok(Ok(()))) => {
            let partitions = rp.topic.partitions;
            ready_and_measure(
                rp, runs, opts, &interrupt, &admin, &brokers, partitions, notes,
            )
            .await
        }
        Some(Err(_)) => Err(RunError::TopicCreationTimedOut {
            topic: name_list(&topics),
            after: CREATE_TOPIC_BOUND,
        }),
        None => Err(RunError::Interrupted),
    };
    let lost = result.as_ref().is_ok_and(|r| r.status.is_cluster_lost());
    if opts.keep_topics || delete.is_empty() {
        // Kept on purpose (nothing is left behind by accident), or none was created.
    } else if lost {
        notes.push(format!(
            "{} not deleted: the cluster was lost during the run",
            topics_were(&delete)
        ));
    } else {
        // Not raced with the interrupt: a first interrupt still cleans up, and a second one
        // ends the process (naming these topics) without waiting for it.
        match tokio::time::timeout(DELETE_TOPIC_BOUND, admin.delete_topics(&delete)).await {
            Ok(left) if left.is_empty() => {}
            Ok(left) => notes.push(not_deleted(&left, delete.len())),
            Err(_) => notes.push(format!(
                "could not delete {}: no answer within {}s",
                topics_named(&delete),
                DELETE_TOPIC_BOUND.as_secs()
            )),
        }
    }
    opts.live_topic.set(None);
    result
}

/// Why creation failed, and which topics the cluster refused (not to be deleted).
pub(super) struct Refused {
    pub why: TopicRefusal,
    pub names: Vec<String>,
}

/// Creates the run's topics: its one topic as the topic block says, or all `topics = N`.
pub(super) async fn create(admin: &Admin, rp: &RunPlan) -> Result<(), Refused> {
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

/// `topic t` or `topics a … z`.
fn topics_named(names: &[String]) -> String {
    match names {
        [one] => format!("topic {one}"),
        all => format!("topics {}", name_list(all)),
    }
}

/// `topic t was` or `topics a … z were`.
fn topics_were(names: &[String]) -> String {
    match names {
        [one] => format!("topic {one} was"),
        all => format!("topics {} were", name_list(all)),
    }
}

/// The note for topics a deletion left, each named with its reason (up to a few).
fn not_deleted(left: &[(String, String)], of: usize) -> String {
    if let ([(name, why)], 1) = (left, of) {
        return format!("could not delete topic {name}: {why}");
    }
    let shown: Vec<String> = left
        .iter()
        .take(5)
        .map(|(name, why)| format!("{name} ({why})"))
        .collect();
    let more = left.len().saturating_sub(shown.len());
    format!(
        "could not delete {} of the run's {of} topics: {}{}",
        left.len(),
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

/// Waits for the topic's leaders, then measures.
#[allow(clippy::too_many_arguments)]
async fn ready_and_measure(
    rp: &RunPlan,
    runs: usize,
    opts: &RunOptions,
    interrupt: &Arc<AtomicBool>,
    admin: &Admin,
    brokers: &[String],
    partitions: i32,
    notes: &mut Vec<String>,
) -> Result<RunResult, RunError> {
    unless_interrupted(
        interrupt,
        admin.wait_for_all_leaders(&rp.topics, partitions, LEADERS_BOUND),
    )
    .await
    .ok_or(RunError::Interrupted)?
    .map_err(RunError::TopicNotReady)?;
    workers::measure(
        rp,
        runs,
        opts,
        interrupt.clone(),
        brokers,
        partitions,
        notes,
    )
    .await
}
