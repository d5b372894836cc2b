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
    ClusterLost { cause: Cause },
    /// The run could not finish (a producer that failed, nothing delivered, a shard that
    /// failed).
    Failed { cause: Cause },
}

/// Why a run did not complete, as data: a result file keeps it as `cause` (tagged by `kind`)
/// beside `error`, its words. Nothing is read back from the words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// What the client or the collector said (librdkafka's error, a barrier that failed).
    Said { text: String },
    /// A signal stopped a run whose cluster was lost too.
    Interrupted,
    /// The run's workers (producers, consumers) that failed, each error in its own words.
    Workers { errors: Vec<String> },
    /// It sent and nothing was acknowledged; `detail` is what the clients saw.
    NothingDelivered { detail: String },
    /// The shards that did not complete, each with its own status (0-based).
    Shards { shards: Vec<ShardStatus> },
    /// A file that gave no reason (`error: null`).
    Unknown,
}

/// One shard's status in a merged run's cause.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardStatus {
    pub shard: usize,
    pub status: RunStatus,
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Said { text } => f.write_str(text),
            Cause::Interrupted => f.write_str(INTERRUPTED),
            Cause::Workers { errors } => f.write_str(&errors.join("; ")),
            Cause::NothingDelivered { detail } => f.write_str(detail),
            Cause::Shards { shards } => {
                let each: Vec<String> = shards
                    .iter()
                    .filter_map(|s| Some(format!("shard {}: {}", s.shard, s.status.reason()?)))
                    .collect();
                f.write_str(&each.join("; "))
            }
            Cause::Unknown => Ok(()),
        }
    }
}

impl Cause {
    /// What was said, as a cause.
    pub fn said(text: impl Into<String>) -> Cause {
        Cause::Said { text: text.into() }
    }
}

/// Not finished and no reason yet: what a result is until its run says how it ended.
impl Default for RunStatus {
    fn default() -> RunStatus {
        RunStatus::Failed {
            cause: Cause::Unknown,
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

    /// Why the run did not complete.
    pub fn cause(&self) -> Option<&Cause> {
        match self {
            RunStatus::Complete | RunStatus::Interrupted => None,
            RunStatus::ClusterLost { cause } | RunStatus::Failed { cause } => Some(cause),
        }
    }

    /// Why the run is not complete, in words (the file's `error`); None when it is, or when
    /// no reason was given.
    pub fn reason(&self) -> Option<String> {
        match self {
            RunStatus::Complete => None,
            RunStatus::Interrupted => Some(INTERRUPTED.to_string()),
            RunStatus::ClusterLost { cause } | RunStatus::Failed { cause } => {
                Some(cause.to_string()).filter(|r| !r.is_empty())
            }
        }
    }

    /// The status of a run merged from its shards': complete when every shard is, cluster
    /// lost when any shard's was, failed when any shard failed (each with the shards that did
    /// not complete and their own statuses), and interrupted when the shards that did not
    /// complete were all interrupted — decided on the variants, never on a reason's words.
    pub fn merged<'a>(shards: impl IntoIterator<Item = &'a RunStatus>) -> RunStatus {
        let shards: Vec<&RunStatus> = shards.into_iter().collect();
        if shards.iter().all(|s| s.is_complete()) {
            return RunStatus::Complete;
        }
        let unfinished = || shards.iter().filter(|s| !s.is_complete());
        if unfinished().all(|s| matches!(s, RunStatus::Interrupted)) {
            return RunStatus::Interrupted;
        }
        let cause = Cause::Shards {
            shards: shards
                .iter()
                .enumerate()
                .filter(|(_, s)| !s.is_complete())
                .map(|(shard, s)| ShardStatus {
                    shard,
                    status: (*s).clone(),
                })
                .collect(),
        };
        if shards.iter().any(|s| s.is_cluster_lost()) {
            RunStatus::ClusterLost { cause }
        } else {
            RunStatus::Failed { cause }
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
    /// Absent in files from before it was written (their cause is their `error`'s words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cause: Option<Cause>,
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
            error: s.reason(),
            cause: s.cause().cloned(),
        }
    }
}

impl From<StatusFields> for RunStatus {
    fn from(f: StatusFields) -> RunStatus {
        let cause = f.cause.unwrap_or_else(|| match &f.error {
            Some(text) if !text.is_empty() => Cause::said(text.clone()),
            _ => Cause::Unknown,
        });
        match f.status {
            Some(Kind::Complete) => return RunStatus::Complete,
            Some(Kind::Interrupted) => return RunStatus::Interrupted,
            Some(Kind::ClusterLost) => return RunStatus::ClusterLost { cause },
            Some(Kind::Failed) => return RunStatus::Failed { cause },
            None => {}
        }
        // An older file: kafkabench wrote `complete: true` only with no error and the cluster
        // not lost, so the complete flag decides first, and an interrupted run said so in its
        // error.
        if f.complete {
            RunStatus::Complete
        } else if f.cluster_lost {
            RunStatus::ClusterLost { cause }
        } else if f.error.as_deref() == Some(INTERRUPTED) {
            RunStatus::Interrupted
        } else {
            RunStatus::Failed { cause }
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
                    cause: Cause::said("all brokers are down (x)"),
                },
                r#"{"status":"cluster_lost","complete":false,"cluster_lost":true,"error":"all brokers are down (x)","cause":{"kind":"said","text":"all brokers are down (x)"}}"#,
            ),
            (
                RunStatus::Failed {
                    cause: Cause::NothingDelivered {
                        detail: "nothing was delivered".into(),
                    },
                },
                r#"{"status":"failed","complete":false,"cluster_lost":false,"error":"nothing was delivered","cause":{"kind":"nothing_delivered","detail":"nothing was delivered"}}"#,
            ),
            (
                RunStatus::Failed {
                    cause: Cause::Workers {
                        errors: vec!["producer 1: x".into(), "producer 2: y".into()],
                    },
                },
                r#"{"status":"failed","complete":false,"cluster_lost":false,"error":"producer 1: x; producer 2: y","cause":{"kind":"workers","errors":["producer 1: x","producer 2: y"]}}"#,
            ),
            (
                RunStatus::default(),
                r#"{"status":"failed","complete":false,"cluster_lost":false,"error":null,"cause":{"kind":"unknown"}}"#,
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
                cause: Cause::said("interrupted")
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
                RunStatus::ClusterLost {
                    cause: Cause::said("x"),
                },
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
            cause: Cause::said("all brokers are down"),
        };
        let m = RunStatus::merged([&RunStatus::Complete, &lost, &RunStatus::Interrupted]);
        assert!(m.is_cluster_lost());
        assert_eq!(
            m.reason().as_deref(),
            Some("shard 1: all brokers are down; shard 2: interrupted")
        );
        // The shards' own statuses are kept, not their words: shard 2 is still interrupted.
        let Some(Cause::Shards { shards }) = m.cause() else {
            panic!("{m:?}")
        };
        assert_eq!(shards[1].status, RunStatus::Interrupted);
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
            cause: Cause::NothingDelivered {
                detail: "nothing was delivered".into(),
            },
        };
        let m = RunStatus::merged([&RunStatus::Interrupted, &failed]);
        assert!(matches!(m, RunStatus::Failed { .. }));
        assert_eq!(
            m.reason().as_deref(),
            Some("shard 0: interrupted; shard 1: nothing was delivered")
        );
        // A merged status written and read back is the same status, shards and all.
        let back: Holder =
            serde_json::from_str(&serde_json::to_string(&Holder { status: m.clone() }).unwrap())
                .unwrap();
        assert_eq!(back.status, m);
    }
}
