//! One run's lifecycle: connect, create (or find) its topic, measure, delete the topic.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::admin::Admin;
use super::error::RunError;
use super::interrupt::unless_interrupted;
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
    // From the moment creation is asked for, the topic may exist: say so if the process is
    // ended before it is deleted.
    opts.live_topic.set(Some(topic.clone()));
    let created = unless_interrupted(
        &interrupt,
        tokio::time::timeout(CREATE_TOPIC_BOUND, admin.create_topic(&rp.topic)),
    )
    .await;
    let result = match created {
        // Refused: it may be someone else's topic of the same name, so it is not deleted.
        Some(Ok(Err(e))) => {
            opts.live_topic.set(None);
            return Err(RunError::TopicRefused(e));
        }
        Some(Ok(Ok(()))) => {
            let partitions = rp.topic.partitions;
            ready_and_measure(
                rp, runs, opts, &interrupt, &admin, &brokers, partitions, notes,
            )
            .await
        }
        Some(Err(_)) => Err(RunError::TopicCreationTimedOut {
            topic: topic.clone(),
            after: CREATE_TOPIC_BOUND,
        }),
        None => Err(RunError::Interrupted),
    };
    let lost = result.as_ref().is_ok_and(|r| r.cluster_lost);
    if opts.keep_topics {
        // Kept on purpose: nothing is left behind by accident.
    } else if lost {
        notes.push(format!(
            "topic {topic} was not deleted: the cluster was lost during the run"
        ));
    } else {
        // Not raced with the interrupt: a first interrupt still cleans up, and a second one
        // ends the process (naming this topic) without waiting for it.
        match tokio::time::timeout(DELETE_TOPIC_BOUND, admin.delete_topic(&topic)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => notes.push(format!("could not delete topic {topic}: {e}")),
            Err(_) => notes.push(format!(
                "could not delete topic {topic}: no answer within {}s",
                DELETE_TOPIC_BOUND.as_secs()
            )),
        }
    }
    opts.live_topic.set(None);
    result
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
    let topic = &rp.topic.name;
    unless_interrupted(
        interrupt,
        admin.wait_for_leaders(topic, partitions, LEADERS_BOUND),
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
