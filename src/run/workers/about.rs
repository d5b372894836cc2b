//! What a run's result says apart from its figures: what it was, how it ended (why it
//! delivered nothing), and its commit policy as the scenario writes it.

use std::collections::BTreeMap;
use std::time::SystemTime;

use crate::measure::clock::rfc3339_utc;
use crate::measure::status::Cause;
use crate::measure::{RunResult, RunStatus, TopicConfig};
use crate::model::{CommitPolicy, Props};
use crate::plan::RunPlan;

/// How the measured phase ended, from what the run saw: the cluster lost (the interrupt is
/// the cause given when it was interrupted too), interrupted, workers that failed, nothing
/// delivered, or complete. `client_error` is asked only when nothing was delivered.
pub(super) fn ended(
    r: &RunResult,
    lost: Option<String>,
    interrupted: bool,
    errors: Vec<String>,
    messages: Option<u64>,
    client_error: impl FnOnce() -> Option<String>,
) -> RunStatus {
    match (lost, interrupted) {
        (Some(_), true) => RunStatus::ClusterLost {
            cause: Cause::Interrupted,
        },
        (Some(reason), false) => RunStatus::ClusterLost {
            cause: Cause::said(reason),
        },
        (None, true) => RunStatus::Interrupted,
        (None, false) if !errors.is_empty() => RunStatus::Failed {
            cause: Cause::Workers { errors },
        },
        // (`messages = 0` sends nothing on purpose: the run only drains its backlog.)
        // Nothing delivered is a failed run, never a pass (`failed == 0` would hold for a run
        // that could not even send).
        (None, false) if r.acked == 0 && messages != Some(0) => RunStatus::Failed {
            cause: Cause::NothingDelivered {
                detail: nothing_delivered(r, client_error()),
            },
        },
        (None, false) => RunStatus::Complete,
    }
}

/// The run as planned, before its figures: what it is and what it ran with.
pub(super) fn unmeasured(rp: &RunPlan, started_at: SystemTime) -> RunResult {
    RunResult {
        index: rp.index,
        label: rp.label.clone(),
        coords: rp
            .cell
            .coords
            .iter()
            .map(|c| (c.dim.clone(), c.text.clone()))
            .collect::<BTreeMap<_, _>>(),
        topic: rp.topic.name.clone(),
        producer_config: rp.producer.masked(),
        consumer_config: rp.consumer.as_ref().map(Props::masked),
        producer_client: Some(rp.producer_release()),
        consumer_client: rp.consumer_release(),
        seed: rp.workload.seed,
        topic_config: Some(TopicConfig::of(&rp.topic)),
        started_at: Some(rfc3339_utc(started_at)),
        ..RunResult::default()
    }
}

/// Why a run that finished delivered nothing, as far as the clients told.
fn nothing_delivered(r: &RunResult, client_error: Option<String>) -> String {
    let mut cause = if r.sent == 0 {
        "nothing was delivered: no record could be sent".to_string()
    } else {
        format!("nothing was delivered: all {} records sent failed", r.sent)
    };
    if !r.failed_by_kind.is_empty() {
        let kinds: Vec<String> = r
            .failed_by_kind
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect();
        cause.push_str(&format!(" ({})", kinds.join(", ")));
    }
    if let Some(e) = client_error {
        cause.push_str(&format!("; the client reported {e}"));
    }
    cause
}

/// A commit policy as the scenario writes it.
pub(super) fn commit_text(c: &CommitPolicy) -> String {
    match c {
        CommitPolicy::Auto { interval } => {
            format!(
                "auto({})",
                crate::format::human_duration(interval.as_secs_f64())
            )
        }
        CommitPolicy::Every { records, sync } => {
            format!(
                "every({records}{})",
                if *sync { ", sync: true" } else { "" }
            )
        }
        CommitPolicy::Off => "off".into(),
    }
}
