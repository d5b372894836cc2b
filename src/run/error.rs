//! Why a run stopped: the run stage's error, all its wording in one `Display`.

use std::fmt;
use std::time::Duration;

use super::admin::AdminError;
use super::faults::Problems;
use crate::measure::merge::MergeError;
use crate::measure::RunStatus;
use crate::plan::RunNo;
use crate::schema::registry::RegistryError;

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
    ShareGroup(ShareGroupError),
    /// The consumer protocol's group configs were refused (outside the broker's bounds), or
    /// could not be set.
    #[error(
        "setting consumer group {group}'s configs: {error} (the broker bounds them: \
         group.consumer.min.heartbeat.interval.ms, 5 s by default, 1 s on scripts/kafka-local; \
         group.consumer.min.session.timeout.ms, 45 s)"
    )]
    GroupConfigs {
        group: String,
        error: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("{0} panicked")]
    ThreadPanicked(&'static str),
    #[error("internal task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
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
    SchemaRegistry(RegistryFailure),
    /// A client's worker could not be built or started (clients/README.md), named with its
    /// last log lines.
    #[error("{0}")]
    Worker(WorkerError),
    /// Interrupted (a signal) before the run measured anything.
    #[error("interrupted before measuring")]
    Interrupted,
    /// The measured phase ran and did not complete: the run's own status (the cluster lost,
    /// or failed with why: a producer that could not finish, nothing delivered), as it is.
    #[error("{}", .0.reason().unwrap_or_else(|| "the run did not complete".into()))]
    Ended(RunStatus),
    /// A shard's result for the run cannot be merged with the others' (`collect`).
    #[error("{file}'s result cannot be merged: {error}")]
    Unmerged { file: String, error: MergeError },
    /// The collector named a round (its number) this shard's plan does not have: another
    /// plan's run, a trial past the count, a probe of a run that searches no capacity.
    #[error(
        "the collector named round {0}, which this shard's plan does not have (is every \
         participant running the same scenario, --scale and --repeat?)"
    )]
    NoSuchRound(u32),
    /// Shards without a result for the run: what each is missing, in the collector's words.
    #[error("merged from a partial set of shards: {}", .0.join("; "))]
    PartialShards(Vec<String>),
}

/// Why a share group could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ShareGroupError {
    /// The admin connection's security settings, which kafkabench's own client cannot speak
    /// (in `wire::Security`'s words).
    #[error("{0}")]
    Security(String),
    /// The configs refused, or the cluster not answering (the wire client's error).
    #[error(
        "setting share group {group}'s configs: {error} (share groups need Kafka 4.1 or \
         later with them enabled; scripts/kafka-local runs 4.4.0, where they are on)"
    )]
    Configs {
        group: String,
        error: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Why a run's schema could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum RegistryFailure {
    #[error("registering the {part} schema {} as subject {subject}: {error}", .path.display())]
    Register {
        part: &'static str,
        path: std::path::PathBuf,
        subject: String,
        error: RegistryError,
    },
    #[error(
        "the registry gave the {part} schema id {first} for {first_topic}-{part} and {got} for \
         {subject}; records spread over several topics carry one id, so use one topic or a \
         registry that shares ids between subjects"
    )]
    DifferentIds {
        part: &'static str,
        first_topic: String,
        first: u32,
        subject: String,
        got: u32,
    },
    #[error("the run has no topic")]
    NoTopic,
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
        matches!(
            self,
            RunError::Ended(_) | RunError::Unmerged { .. } | RunError::PartialShards(_)
        )
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
    fn a_run_that_ended_early_says_its_status_own_words_and_counts_as_measured() {
        let lost = RunError::Ended(RunStatus::ClusterLost {
            cause: crate::measure::status::Cause::said("all brokers are down"),
        });
        assert_eq!(lost.to_string(), "all brokers are down");
        assert!(lost.during_measurement());
        let failed = RunError::Ended(RunStatus::default());
        assert_eq!(failed.to_string(), "the run did not complete");
        let partial = RunError::PartialShards(vec!["a.json has no result for it".into()]);
        assert_eq!(
            partial.to_string(),
            "merged from a partial set of shards: a.json has no result for it"
        );
        assert!(partial.during_measurement());
        assert!(!RunError::Interrupted.during_measurement());
    }

    #[test]
    fn a_registry_that_splits_ids_says_so_in_one_sentence() {
        let e = RegistryFailure::DifferentIds {
            part: "value",
            first_topic: "t-0".into(),
            first: 1,
            subject: "t-1-value".into(),
            got: 2,
        };
        assert_eq!(
            e.to_string(),
            "the registry gave the value schema id 1 for t-0-value and 2 for t-1-value; records \
             spread over several topics carry one id, so use one topic or a registry that \
             shares ids between subjects"
        );
    }

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

/// Why a client's worker (`run::worker`) could not do its part, naming the worker and with
/// what it last logged. Here, below the worker, so that `RunError` need not import it.
#[derive(Debug, Clone)]
pub struct WorkerError {
    pub client: &'static str,
    pub what: String,
    pub log: Vec<String>,
}

impl fmt::Display for WorkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the {} worker {}", self.client, self.what)?;
        if !self.log.is_empty() {
            write!(f, "; its last log lines:")?;
            for l in &self.log {
                write!(f, "\n    {l}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for WorkerError {}
