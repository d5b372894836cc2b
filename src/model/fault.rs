//! The fault timeline of a run (`faults { }`): what happens to the cluster, and when.

use std::time::Duration;

use serde::Serialize;

use crate::source::Span;

/// One action of the timeline.
#[derive(Clone, Debug, Serialize)]
pub struct Fault {
    /// When, from the start of the measured phase.
    #[serde(serialize_with = "secs")]
    pub at: Duration,
    pub action: FaultAction,
    /// How long the fault lasts (`for 15s`): a killed broker is restarted, a paused one
    /// continued, a stopped consumer started again. Only kill, pause and stop take one.
    #[serde(serialize_with = "secs_opt")]
    pub lasts: Option<Duration>,
    /// The action as written, for reports.
    pub text: String,
    #[serde(skip)]
    pub span: Option<Span>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultAction {
    /// SIGKILL a broker of a `scripts/kafka-local` cluster (restarted after `lasts`).
    Kill(BrokerTarget),
    /// SIGSTOP a broker (SIGCONT after `lasts`).
    Pause(BrokerTarget),
    /// Stop and start a broker cleanly.
    Restart(BrokerTarget),
    /// Any command, through `sh -c`, with the resolved target in its environment.
    Run(String),
    /// Stop one of the group's consumers (a rebalance), started again after `lasts`.
    StopConsumer(u32),
}

/// Which broker an action hits, resolved when it fires.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BrokerTarget {
    Id(i32),
    /// The leader of this partition of the run's topic, when the action fires.
    Leader(i32),
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn secs_opt<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}
