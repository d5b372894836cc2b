//! Why a run stopped: the run stage's error, all its wording in one `Display`.

use std::time::Duration;

use super::admin::AdminError;
use super::faults::Problems;
use crate::plan::RunNo;

/// What went wrong in one run. The exit code it leads to is decided in `crate::exit`.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No client could be created, or the cluster did not answer (the message names the
    /// address and how to start a local broker).
    #[error("{0}")]
    Unreachable(AdminError),
    /// The cluster answered the topic creation with a refusal (it may already exist).
    #[error("{0}")]
    TopicRefused(TopicRefusal),
    #[error("creating topic {topic}: no answer within {}s", .after.as_secs())]
    TopicCreationTimedOut { topic: String, after: Duration },
    #[error("topic {0} does not exist (the scenario says `existing = true`)")]
    TopicMissing(String),
    /// Looking the topic up failed (a metadata request that got no answer).
    #[error("{0}")]
    TopicLookup(AdminError),
    /// A partition of the topic has no leader in time.
    #[error("{0}")]
    TopicNotReady(AdminError),
    #[error("cannot start {thread}: {source}")]
    ThreadStart {
        thread: &'static str,
        source: std::io::Error,
    },
    /// The share group could not be set up (its configs refused, the cluster unreachable).
    #[error("{0}")]
    ShareGroup(String),
    #[error("{0} panicked")]
    ThreadPanicked(&'static str),
    #[error("internal task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The measured phase ran, and the cluster was lost during it (librdkafka: all brokers
    /// down).
    #[error("{0}")]
    ClusterLost(String),
    /// The run's fault timeline cannot act on its cluster (not a kafka-local one, an unknown
    /// broker, a node already down); found before the clock starts.
    #[error("the fault timeline cannot run: {0}")]
    Faults(Problems),
    /// A sharded run's coordination failed: the control topic, a barrier, or the collector
    /// stopped the run (docs/distributed.md). The shard stage's own error, worded there.
    #[error("{0}")]
    Coordination(Box<dyn std::error::Error + Send + Sync>),
    /// The run's schema could not be registered (an unreachable registry, a refusal).
    #[error("{0}")]
    SchemaRegistry(String),
    /// Interrupted (a signal) before the run measured anything.
    #[error("interrupted before measuring")]
    Interrupted,
    /// The measured phase ran, and a producer could not finish it (records left undelivered,
    /// a client that could not be created).
    #[error("{0}")]
    Incomplete(String),
}

/// Why the run's topics could not be created: the first refusal, and how many more topics
/// were refused with it.
#[derive(Debug, thiserror::Error)]
#[error("{first}{}", if *.more > 0 { format!(" (and {} more of the run's topics)", .more) } else { String::new() })]
pub struct TopicRefusal {
    pub first: AdminError,
    pub more: usize,
}

impl RunError {
    /// The run got as far as measuring (so its partial figures are in the report).
    pub fn during_measurement(&self) -> bool {
        matches!(self, RunError::ClusterLost(_) | RunError::Incomplete(_))
    }
}

/// A run that failed: which one, and why.
#[derive(Debug)]
pub struct RunFailure {
    /// The run's index in the plan (0-based); shown 1-based, as the user counts runs.
    pub index: usize,
    pub label: String,
    pub error: RunError,
}

impl std::fmt::Display for RunFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let RunFailure {
            index,
            label,
            error,
        } = self;
        let run = RunNo(*index);
        if error.during_measurement() {
            write!(f, "run {run} ({label}) failed: {error}")
        } else {
            write!(f, "run {run} ({label}): {error}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_of_many_topics_says_how_many_more() {
        let refusal = |more| TopicRefusal {
            first: AdminError::TopicExists {
                topic: "t-0".into(),
                one: false,
            },
            more,
        };
        let first =
            "topic t-0 already exists; kafkabench writes only into topics it created in this run";
        assert_eq!(refusal(0).to_string(), first);
        assert_eq!(
            refusal(2).to_string(),
            format!("{first} (and 2 more of the run's topics)")
        );
    }
}
