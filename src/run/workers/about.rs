//! What a run's result says apart from its figures: what it was, why it delivered nothing,
//! and its commit policy as the scenario writes it.

use std::collections::BTreeMap;
use std::time::SystemTime;

use crate::measure::clock::rfc3339_utc;
use crate::measure::{RunResult, TopicConfig};
use crate::model::{CommitPolicy, Props};
use crate::plan::RunPlan;

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
        topic_config: Some(TopicConfig::of(&rp.topic)),
        started_at: Some(rfc3339_utc(started_at)),
        ..RunResult::default()
    }
}

/// Why a run that finished delivered nothing, as far as the clients told.
pub(super) fn nothing_delivered(r: &RunResult, client_error: Option<String>) -> String {
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
