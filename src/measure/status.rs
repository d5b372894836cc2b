//! How a run ended: complete, interrupted, cluster lost, or failed, with why. A result file
//! keeps it as `status` (the variant, by name) beside its three historical fields
//! (`complete`, `cluster_lost`, `error`, docs/result-format.md), which older readers and
//! people's scripts read. A reader takes the variant from `status`; only a file from before it
//! existed has its status read from the three fields.

use serde::{Deserialize, Serialize};

/// The `error` a run stopped by a signal says.
const INTERRUPTED: &str = "interrupted";

/// How a run's measured phase ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StatusFields", into = "StatusFields")]
pub enum RunStatus {
    /// The measured phase finished.
    Complete,
    /// A signal stopped the run.
    Interrupted,
    /// The cluster stopped answering (librdkafka: all brokers down), or a sharded run's
    /// barrier failed.
    ClusterLost { reason: String },
    /// The run could not finish (a producer that failed, nothing delivered, a shard that
    /// failed). An empty reason is one the file did not give (`error: null`).
    Failed { reason: String },
}

/// Not finished and no reason yet: what a result is until its run says how it ended.
impl Default for RunStatus {
    fn default() -> RunStatus {
        RunStatus::Failed {
            reason: String::new(),
        }
    }
}

impl RunStatus {
    /// The measured phase finished (the file's `complete`).
    pub fn is_complete(&self) -> bool {
        matches!(self, RunStatus::Complete)
    }

    /// The cluster was lost during the run (the file's `cluster_lost`).
    pub fn is_cluster_lost(&self) -> bool {
        matches!(self, RunStatus::ClusterLost { .. })
    }

    /// Why the run is not complete (the file's `error`); None when it is, or when no reason
    /// was given.
    pub fn reason(&self) -> Option<&str> {
        match self {
            RunStatus::Complete => None,
            RunStatus::Interrupted => Some(INTERRUPTED),
            RunStatus::ClusterLost { reason } | RunStatus::Failed { reason } => {
                (!reason.is_empty()).then_some(reason.as_str())
            }
        }
    }

    /// The status of a run merged from its shards': complete when every shard is, cluster
    /// lost when any shard's was (every shard's reason named by its shard, 0-based), failed
    /// when any shard failed, and interrupted when the shards that did not complete were all
    /// interrupted — decided on the variants, never on a reason's words.
    pub fn merged<'a>(shards: impl IntoIterator<Item = &'a RunStatus>) -> RunStatus {
        let shards: Vec<&RunStatus> = shards.into_iter().collect();
        if shards.iter().all(|s| s.is_complete()) {
            return RunStatus::Complete;
        }
        let unfinished = || shards.iter().filter(|s| !s.is_complete());
        if unfinished().all(|s| matches!(s, RunStatus::Interrupted)) {
            return RunStatus::Interrupted;
        }
        let reason = shards
            .iter()
            .enumerate()
            .filter_map(|(k, s)| s.reason().map(|e| format!("shard {k}: {e}")))
            .collect::<Vec<_>>()
            .join("; ");
        if shards.iter().any(|s| s.is_cluster_lost()) {
            RunStatus::ClusterLost { reason }
        } else {
            RunStatus::Failed { reason }
        }
    }
}

/// The status as a result file holds it.
#[derive(Serialize, Deserialize)]
struct StatusFields {
    /// Absent in files from before it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<Kind>,
    complete: bool,
    cluster_lost: bool,
    error: Option<String>,
}

/// A status's variant, by name.
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Complete,
    Interrupted,
    ClusterLost,
    Failed,
}

impl From<RunStatus> for StatusFields {
    fn from(s: RunStatus) -> StatusFields {
        StatusFields {
            status: Some(match s {
                RunStatus::Complete => Kind::Complete,
                RunStatus::Interrupted => Kind::Interrupted,
                RunStatus::ClusterLost { .. } => Kind::ClusterLost,
                RunStatus::Failed { .. } => Kind::Failed,
            }),
            complete: s.is_complete(),
            cluster_lost: s.is_cluster_lost(),
            error: s.reason().map(str::to_string),
        }
    }
}

impl From<StatusFields> for RunStatus {
    fn from(f: StatusFields) -> RunStatus {
        let reason = f.error.unwrap_or_default();
        match f.status {
            Some(Kind::Complete) => return RunStatus::Complete,
            Some(Kind::Interrupted) => return RunStatus::Interrupted,
            Some(Kind::ClusterLost) => return RunStatus::ClusterLost { reason },
            Some(Kind::Failed) => return RunStatus::Failed { reason },
            None => {}
        }
        // An older file: kafkabench wrote `complete: true` only with no error and the cluster
        // not lost, so the complete flag decides first, and an interrupted run said so in its
        // error.
        if f.complete {
            RunStatus::Complete
        } else if f.cluster_lost {
            RunStatus::ClusterLost { reason }
        } else if reason == INTERRUPTED {
            RunStatus::Interrupted
        } else {
            RunStatus::Failed { reason }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result's status as its three fields, alone in an object.
    #[derive(Serialize, Deserialize)]
    struct Holder {
        #[serde(flatten)]
        status: RunStatus,
    }

    #[test]
    fn every_status_writes_its_three_fields_and_reads_back_the_same() {
        let cases = [
            (
                RunStatus::Complete,
                r#"{"status":"complete","complete":true,"cluster_lost":false,"error":null}"#,
            ),
            (
                RunStatus::Interrupted,
                r#"{"status":"interrupted","complete":false,"cluster_lost":false,"error":"interrupted"}"#,
            ),
            (
                RunStatus::ClusterLost {
                    reason: "all brokers are down (x)".into(),
                },
                r#"{"status":"cluster_lost","complete":false,"cluster_lost":true,"error":"all brokers are down (x)"}"#,
            ),
            (
                RunStatus::Failed {
                    reason: "nothing was delivered".into(),
                },
                r#"{"status":"failed","complete":false,"cluster_lost":false,"error":"nothing was delivered"}"#,
            ),
            (
                RunStatus::default(),
                r#"{"status":"failed","complete":false,"cluster_lost":false,"error":null}"#,
            ),
        ];
        for (status, json) in cases {
            let written = serde_json::to_string(&Holder {
                status: status.clone(),
            })
            .unwrap();
            assert_eq!(written, json);
            let read: Holder = serde_json::from_str(json).unwrap();
            assert_eq!(read.status, status, "{json}");
        }
    }

    #[test]
    fn the_status_is_read_from_its_name_and_older_files_from_their_three_fields() {
        // A failure whose reason is the word "interrupted" stays a failure.
        let json =
            r#"{"status":"failed","complete":false,"cluster_lost":false,"error":"interrupted"}"#;
        let read: Holder = serde_json::from_str(json).unwrap();
        assert_eq!(
            read.status,
            RunStatus::Failed {
                reason: "interrupted".into()
            }
        );
        let older = [
            (
                r#"{"complete":true,"cluster_lost":false,"error":null}"#,
                RunStatus::Complete,
            ),
            (
                r#"{"complete":false,"cluster_lost":false,"error":"interrupted"}"#,
                RunStatus::Interrupted,
            ),
            (
                r#"{"complete":false,"cluster_lost":true,"error":"x"}"#,
                RunStatus::ClusterLost { reason: "x".into() },
            ),
        ];
        for (json, status) in older {
            let read: Holder = serde_json::from_str(json).unwrap();
            assert_eq!(read.status, status, "{json}");
        }
    }

    #[test]
    fn a_merged_status_names_each_shards_reason() {
        let lost = RunStatus::ClusterLost {
            reason: "all brokers are down".into(),
        };
        let m = RunStatus::merged([&RunStatus::Complete, &lost, &RunStatus::Interrupted]);
        assert_eq!(
            m,
            RunStatus::ClusterLost {
                reason: "shard 1: all brokers are down; shard 2: interrupted".into()
            }
        );
        assert_eq!(
            RunStatus::merged([&RunStatus::Complete, &RunStatus::Complete]),
            RunStatus::Complete
        );
        // Shards all stopped by a signal: the run was interrupted, not failed.
        let all = [RunStatus::Interrupted, RunStatus::Interrupted];
        assert_eq!(RunStatus::merged(&all), RunStatus::Interrupted);
        let some = [RunStatus::Complete, RunStatus::Interrupted];
        assert_eq!(RunStatus::merged(&some), RunStatus::Interrupted);
        let failed = RunStatus::Failed {
            reason: "nothing was delivered".into(),
        };
        assert_eq!(
            RunStatus::merged([&RunStatus::Interrupted, &failed]),
            RunStatus::Failed {
                reason: "shard 0: interrupted; shard 1: nothing was delivered".into()
            }
        );
    }
}
