//! One run's lifecycle: connect, create (or find) its topic, measure, delete the topic.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::admin::Admin;
use super::error::RunError;
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
/// (the cluster was lost, Ctrl-C): its figures cover what was measured.
pub async fn run_one(
    rp: &RunPlan,
    runs: usize,
    opts: &RunOptions,
    interrupt: Arc<AtomicBool>,
    notes: &mut Vec<String>,
) -> Result<RunResult, RunError> {
    let (admin_props, bootstrap) = (rp.admin.clone(), rp.bootstrap.clone());
    let admin = Arc::new(
        blocking(move || Admin::connect(&admin_props, &bootstrap))
            .await?
            .map_err(RunError::Unreachable)?,
    );
    let brokers = {
        let a = admin.clone();
        blocking(move || a.brokers())
            .await?
            .map_err(RunError::Unreachable)?
    };
    let topic = rp.topic.name.clone();
    let partitions = if rp.topic.existing {
        admin
            .topic_partitions(&topic)
            .await
            .map_err(RunError::TopicLookup)?
            .ok_or_else(|| RunError::TopicMissing(topic.clone()))?
    } else {
        tokio::time::timeout(CREATE_TOPIC_BOUND, admin.create_topic(&rp.topic))
            .await
            .map_err(|_| RunError::TopicCreationTimedOut {
                topic: topic.clone(),
                after: CREATE_TOPIC_BOUND,
            })?
            .map_err(RunError::TopicRefused)?;
        rp.topic.partitions
    };
    admin
        .wait_for_leaders(&topic, partitions, LEADERS_BOUND)
        .await
        .map_err(RunError::TopicNotReady)?;
    let result = workers::measure(rp, runs, opts, interrupt, &brokers, partitions, notes).await;
    let lost = result.as_ref().is_ok_and(|r| r.cluster_lost);
    if !rp.topic.existing && !opts.keep_topics {
        if lost {
            notes.push(format!(
                "topic {topic} was not deleted: the cluster was lost during the run"
            ));
        } else {
            match tokio::time::timeout(DELETE_TOPIC_BOUND, admin.delete_topic(&topic)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => notes.push(format!("could not delete topic {topic}: {e}")),
                Err(_) => notes.push(format!(
                    "could not delete topic {topic}: no answer within {}s",
                    DELETE_TOPIC_BOUND.as_secs()
                )),
            }
        }
    }
    result
}
