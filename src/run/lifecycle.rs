//! One run's lifecycle: connect, create (or find) its topics, measure, delete every topic it
//! created.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::admin::Admin;
use super::blocking::blocking;
use super::error::RunError;
use super::interrupt::{name_list, unless_interrupted};
use super::options::RunOptions;
use super::progress::Position;
use super::round::Round;
use super::topic::{self, Deleted, DELETE_BOUND};
use super::workers;
use crate::measure::RunResult;
use crate::plan::RunPlan;

/// One round, `rp`: by whoever carries rounds out for this process (a sharded run's
/// collector, which has the shards run it), else here from connecting to cleaning up.
pub(super) async fn one(
    rp: &RunPlan,
    round: &Round,
    at: Position,
    opts: &RunOptions,
    interrupt: &Arc<AtomicBool>,
    notes: &mut Vec<String>,
) -> Result<RunResult, RunError> {
    match &opts.rounds {
        Some(rounds) => rounds.run(rp, round, at, interrupt, notes).await,
        None => run_one(rp, at, opts, interrupt.clone(), notes).await,
    }
}

/// One planned run from connecting to cleaning up. An `Ok` result may still be incomplete
/// (the cluster was lost, an interrupt): its figures cover what was measured. An interrupt
/// before measuring is `RunError::Interrupted`; every wait on the cluster gives way to it.
pub(super) async fn run_one(
    rp: &RunPlan,
    at: Position,
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
        // The collector created the topics before it named the round, and deletes them.
        let partitions = topic::existing(&admin, &topic, &interrupt).await?;
        s.fits(partitions)?;
        return ready_and_measure(
            rp, at, opts, &interrupt, &admin, &brokers, partitions, notes,
        )
        .await;
    }
    if rp.topic.existing {
        let partitions = topic::existing(&admin, &topic, &interrupt).await?;
        return ready_and_measure(
            rp, at, opts, &interrupt, &admin, &brokers, partitions, notes,
        )
        .await;
    }
    // Which topics to delete: all of them, unless the cluster said which it refused.
    let (result, delete) = match topic::create(&admin, rp, &opts.live_topic, &interrupt).await {
        Ok(()) => {
            let partitions = rp.topic.partitions;
            let measured = ready_and_measure(
                rp, at, opts, &interrupt, &admin, &brokers, partitions, notes,
            )
            .await;
            (measured, rp.topics.clone())
        }
        Err((e, delete)) => (Err(e), delete),
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
        match topic::delete(&admin, &delete).await {
            Deleted::All => {}
            Deleted::Left(left) => notes.push(not_deleted(&left, delete.len())),
            Deleted::NoAnswer => notes.push(format!(
                "could not delete {}: no answer within {}s",
                topics_named(&delete),
                DELETE_BOUND.as_secs()
            )),
        }
    }
    opts.live_topic.set(None);
    result
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
    at: Position,
    opts: &RunOptions,
    interrupt: &Arc<AtomicBool>,
    admin: &Admin,
    brokers: &[String],
    partitions: i32,
    notes: &mut Vec<String>,
) -> Result<RunResult, RunError> {
    topic::leaders(admin, rp, partitions, interrupt).await?;
    // Before the clock: as the topic was when the run began.
    let effective = super::broker_configs::topic(rp).await;
    // Sizes drawn past what the producer or the topic takes are said before the clock too.
    if effective.note.is_none() {
        let limit = (effective.configs.iter())
            .find(|c| c.name == "max.message.bytes")
            .and_then(|c| c.value.as_deref()?.parse().ok());
        notes.extend(crate::plan::limits::at_the_run(rp, limit));
    }
    let mut r =
        workers::measure(rp, at, opts, interrupt.clone(), brokers, partitions, notes).await?;
    if let Some(t) = r.topic_config.as_mut() {
        t.effective = Some(effective);
    }
    Ok(r)
}
