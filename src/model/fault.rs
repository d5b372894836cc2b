//! The fault timeline of a run (`faults { }`): what happens to the cluster, and when.

use std::time::Duration;

use serde::Serialize;

use crate::format::human_duration;
use crate::source::Span;

/// One action of the timeline.
#[derive(Clone, Debug, Serialize)]
pub struct Fault {
    /// When, from the start of the measured phase.
    #[serde(serialize_with = "secs")]
    pub at: Duration,
    pub action: FaultAction,
    /// How long the fault lasts (`for 15s`): a killed broker is restarted, a paused one
    /// continued, a stopped consumer started again. Only kill, pause and stop take one; without
    /// it the fault lasts until the measured phase ends, and is undone then.
    #[serde(serialize_with = "secs_opt")]
    pub lasts: Option<Duration>,
    /// The action in the language's words, variables filled in (`kill broker 2 for 15s`), for
    /// reports; `Fault::new` writes it from the typed fields.
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
    /// Stop one of the group's consumers (a rebalance), started again after `lasts`. The index
    /// is 0-based (bit i of `Shared::consumer_stopped`); the language numbers consumers from 1
    /// (`stop consumer 1` is index 0), as `scripts/kafka-local` numbers its brokers.
    StopConsumer(u32),
    /// Delete the records of a partition of the run's topic (Kafka's DeleteRecords), those
    /// before offset `before`, or all it holds when the action fires (None): as retention does
    /// to records a slow consumer has not read yet. Nothing undoes it.
    DeleteRecords { partition: i32, before: Option<u64> },
}

/// Which broker an action hits, resolved when it fires.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BrokerTarget {
    Id(i32),
    /// The leader of this partition of the run's topic, when the action fires.
    Leader(i32),
}

impl Fault {
    pub fn new(
        at: Duration,
        action: FaultAction,
        lasts: Option<Duration>,
        span: Option<Span>,
    ) -> Fault {
        let mut f = Fault {
            at,
            action,
            lasts,
            text: String::new(),
            span,
        };
        f.text = f.action_text();
        f
    }

    /// The action and its length in the language's words: `kill broker 2 for 15s`.
    pub fn action_text(&self) -> String {
        match self.lasts {
            Some(d) => format!("{} for {}", self.action, human_duration(d.as_secs_f64())),
            None => self.action.to_string(),
        }
    }

    /// When the fault is over, if it ends before the measured phase does.
    pub fn until(&self) -> Option<Duration> {
        self.lasts.map(|d| self.at + d)
    }

    /// The action in the language's words from its typed fields, so a scaled timeline reads
    /// right: `at 1.5s kill broker 2 for 1.5s`.
    pub fn describe(&self) -> String {
        let at = match self.at {
            Duration::ZERO => "0s".to_string(),
            d => human_duration(d.as_secs_f64()),
        };
        format!("at {at} {}", self.action_text())
    }
}

impl std::fmt::Display for FaultAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FaultAction::Kill(t) => write!(f, "kill broker {t}"),
            FaultAction::Pause(t) => write!(f, "pause broker {t}"),
            FaultAction::Restart(t) => write!(f, "restart broker {t}"),
            FaultAction::Run(cmd) => write!(f, "run {cmd:?}"),
            FaultAction::StopConsumer(i) => write!(f, "stop consumer {}", i + 1),
            FaultAction::DeleteRecords { partition, before } => {
                write!(f, "delete records of partition {partition}")?;
                match before {
                    Some(o) => write!(f, " before {o}"),
                    None => Ok(()),
                }
            }
        }
    }
}

impl std::fmt::Display for BrokerTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BrokerTarget::Id(id) => write!(f, "{id}"),
            BrokerTarget::Leader(p) => write!(f, "leader(partition {p})"),
        }
    }
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
