//! The result file (`--json FILE`): every figure, histogram, time series and effective setting
//! of an invocation, for tools, for history, and for `report`/`compare` to read back. Its
//! fields are documented one by one in docs/result-format.md.

use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::assert::Verdict;
use crate::exit::Outcome;
use crate::measure::clock::rfc3339_utc;
use crate::measure::RunResult;
use crate::plan::Plan;
use crate::run::Execution;
use crate::source::Sources;

use super::verdict::VerdictRecord;

/// Version 2 added the encoded histograms, the time series, the scenario text and versions;
/// version 3 keeps each run's whole recording (`recording`), from which a reader derives every
/// figure again; version 4 adds latency by due time (`recording.due`), the fault figures over
/// the records due in the windows and a backlog's drain as a phase (`drain`); version 5 adds
/// figures per broker that acknowledged and per partition (`brokers`, `partitions`, and a
/// verdict's `broker`); version 6 adds the read side per partition and the counts per
/// partition over time (`read_partitions`, `partition_counts`).
pub const SCHEMA_VERSION: u32 = 6;

/// The oldest version read: its runs are upgraded (`RunResult::upgrade_v2`) and keep the
/// figures they were written with.
pub const OLDEST_READ: u32 = 2;

/// One invocation's results, as written and as read back.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResultFile {
    pub schema_version: u32,
    pub kafkabench_version: String,
    /// librdkafka's version string; None when unknown (files from other writers).
    #[serde(default)]
    pub librdkafka_version: Option<String>,
    pub scenario: String,
    /// The scenario file's text as the check stage saw it, secrets masked.
    #[serde(default)]
    pub scenario_text: Option<String>,
    /// The files it includes, in the order they were met, secrets masked.
    #[serde(default)]
    pub scenario_includes: Vec<IncludedFile>,
    pub description: Option<String>,
    pub run_id: String,
    /// When the invocation started, RFC 3339 UTC.
    #[serde(default)]
    pub started_at: Option<String>,
    pub scale: f64,
    /// Width of the time series' intervals, seconds.
    #[serde(default)]
    pub interval_secs: Option<f64>,
    pub planned_runs: usize,
    pub outcome: String,
    pub exit_code: u8,
    pub failure: Option<String>,
    pub interrupted: bool,
    pub runs: Vec<RunResult>,
    pub assertions: Vec<VerdictRecord>,
    pub notes: Vec<String>,
    /// Where it was measured (kafkabench, librdkafka, the cluster, the client machine); None
    /// in files of an older kafkabench and for merged shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::measure::Environment>,
    /// A merged file's (`collect`, `merge`): each shard's machine, in shard order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shard_environments: Vec<crate::measure::Environment>,
}

/// One included file of the scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IncludedFile {
    /// The path as it was resolved (relative to the including file).
    pub path: String,
    pub text: String,
}

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path} is not a kafkabench result file: {reason}")]
    NotAResult { path: String, reason: String },
    #[error(
        "{path} has result schema version {found}; this kafkabench reads versions {OLDEST_READ} \
         to {SCHEMA_VERSION} (version 1 files have no histograms: re-run the scenario with --json)"
    )]
    Version { path: String, found: u64 },
}

impl ResultFile {
    pub fn new(p: &Plan, exec: &Execution, verdicts: &[Verdict], outcome: Outcome) -> ResultFile {
        ResultFile {
            schema_version: SCHEMA_VERSION,
            kafkabench_version: env!("CARGO_PKG_VERSION").to_string(),
            librdkafka_version: Some(rdkafka::util::get_rdkafka_version().1),
            scenario: p.scenario.clone(),
            scenario_text: None,
            scenario_includes: Vec::new(),
            description: p.description.clone(),
            run_id: p.run_id.clone(),
            started_at: None,
            scale: p.scale,
            interval_secs: exec
                .results
                .iter()
                .find_map(|r| r.series.as_ref())
                .map(|s| s.interval_secs),
            planned_runs: p.runs.len(),
            outcome: outcome.name().to_string(),
            exit_code: outcome.code(),
            failure: exec.failure.as_ref().map(ToString::to_string),
            interrupted: exec.interrupted,
            runs: exec.results.clone(),
            assertions: verdicts.iter().map(VerdictRecord::of).collect(),
            notes: exec.notes.clone(),
            environment: exec.environment.clone(),
            shard_environments: exec.shard_environments.clone(),
        }
    }

    /// The verdicts as the run judged them (a file that kept only their words: as recorded).
    pub fn verdicts(&self) -> Vec<Verdict> {
        let index_of = |label: &str| self.runs.iter().find(|r| r.label == label).map(|r| r.index);
        self.assertions
            .iter()
            .map(|a| a.verdict(index_of))
            .collect()
    }

    /// Keeps the scenario's text, main file and includes, as any output may show it: secrets
    /// masked (`Sources::shown_text`).
    pub fn with_sources(mut self, sources: &Sources) -> ResultFile {
        let mut files = sources.ids();
        self.scenario_text = files.next().map(|id| sources.shown_text(id));
        self.scenario_includes = files
            .map(|id| IncludedFile {
                path: sources.get(id).path.display().to_string(),
                text: sources.shown_text(id),
            })
            .collect();
        self
    }

    /// When the invocation started.
    pub fn started(mut self, at: SystemTime) -> ResultFile {
        self.started_at = Some(rfc3339_utc(at));
        self
    }

    /// The time series' interval, also when no run recorded one.
    pub fn interval(mut self, interval: Duration) -> ResultFile {
        self.interval_secs = Some(interval.as_secs_f64());
        self
    }

    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, self).map_err(io::Error::other)?;
        writeln!(out)
    }

    /// Reads a result file, refusing other versions with what to do about them.
    pub fn read(path: &Path) -> Result<ResultFile, ReadError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ReadError::Io {
            path: shown.clone(),
            source,
        })?;
        Self::parse(&text, &shown)
    }

    /// Parses result-file text; `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<ResultFile, ReadError> {
        let not = |reason: String| ReadError::NotAResult {
            path: path.to_string(),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| not(e.to_string()))?;
        let found = value
            .get("schema_version")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| not("no schema_version field".to_string()))?;
        if !(u64::from(OLDEST_READ)..=u64::from(SCHEMA_VERSION)).contains(&found) {
            return Err(ReadError::Version {
                path: path.to_string(),
                found,
            });
        }
        let mut file: ResultFile = serde_json::from_value(value).map_err(|e| not(e.to_string()))?;
        for r in &mut file.runs {
            if found < 3 {
                r.upgrade_v2();
            } else {
                // A version 3 file kept no latency by due time: its fault latencies (then the
                // records acknowledged within the windows) are not derived again.
                r.rederive();
            }
        }
        crate::measure::pair_drains(&mut file.runs);
        // Read is read as this version: what it holds is now in this version's places.
        file.schema_version = SCHEMA_VERSION;
        Ok(file)
    }
}

pub fn write(
    p: &Plan,
    exec: &Execution,
    verdicts: &[Verdict],
    outcome: Outcome,
    out: &mut dyn Write,
) -> io::Result<()> {
    ResultFile::new(p, exec, verdicts, outcome).write(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{new_histogram, record, LatencySummary};

    fn file_with_one_run() -> ResultFile {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            record(&mut h, v * 1_000);
        }
        let run = RunResult {
            label: "codec=zstd".into(),
            ack: LatencySummary::from_histogram(&h),
            ..RunResult::default()
        };
        ResultFile {
            schema_version: SCHEMA_VERSION,
            kafkabench_version: "0".into(),
            librdkafka_version: None,
            scenario: "s".into(),
            scenario_text: None,
            scenario_includes: Vec::new(),
            description: None,
            run_id: "r".into(),
            started_at: None,
            scale: 1.0,
            interval_secs: Some(1.0),
            planned_runs: 1,
            outcome: "passed".into(),
            exit_code: 0,
            failure: None,
            interrupted: false,
            runs: vec![run],
            assertions: vec![],
            notes: vec![],
            environment: None,
            shard_environments: Vec::new(),
        }
    }

    #[test]
    fn a_result_file_reads_back_with_its_histograms() {
        let f = file_with_one_run();
        let mut text = Vec::new();
        f.write(&mut text).unwrap();
        let back = ResultFile::parse(std::str::from_utf8(&text).unwrap(), "r.json").unwrap();
        let (a, b) = (&f.runs[0].ack, &back.runs[0].ack);
        assert_eq!(b.p99_ms, a.p99_ms);
        let h = b.histogram().expect("decoded");
        assert_eq!(h.value_at_quantile(0.99) as f64 / 1e6, a.p99_ms);
    }

    /// A run's status is written as the three fields schema 2 always had, and every one reads
    /// back to the same status and the same bytes.
    #[test]
    fn every_run_status_reads_back_and_writes_the_same_bytes() {
        use crate::measure::status::Cause;
        use crate::measure::RunStatus;
        let mut f = file_with_one_run();
        let statuses = [
            RunStatus::Complete,
            RunStatus::Interrupted,
            RunStatus::ClusterLost {
                cause: Cause::said("all brokers are down (1/1 brokers are down)"),
            },
            RunStatus::Failed {
                cause: Cause::NothingDelivered {
                    detail: "nothing was delivered: no record could be sent".into(),
                },
            },
            RunStatus::merged(&[
                RunStatus::Complete,
                RunStatus::Failed {
                    cause: Cause::Workers {
                        errors: vec!["producer 1: x".into()],
                    },
                },
            ]),
            RunStatus::default(),
        ];
        f.runs = statuses
            .iter()
            .map(|s| RunResult {
                status: s.clone(),
                ..f.runs[0].clone()
            })
            .collect();
        let mut text = Vec::new();
        f.write(&mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains(
            "\"topic\": \"\",\n      \"status\": \"cluster_lost\",\n      \"complete\": false,\n      \
             \"cluster_lost\": true,\n      \"error\": \"all brokers are down (1/1 brokers are down)\",\n      \
             \"cause\": {\n        \"kind\": \"said\",\n        \"text\": \"all brokers are down (1/1 brokers are down)\"\n      },\n      \
             \"sent\": 0,"
        ));
        let back = ResultFile::parse(&text, "r.json").unwrap();
        let read: Vec<&RunStatus> = back.runs.iter().map(|r| &r.status).collect();
        assert_eq!(read, statuses.iter().collect::<Vec<_>>());
        let mut again = Vec::new();
        back.write(&mut again).unwrap();
        assert_eq!(String::from_utf8(again).unwrap(), text);
    }

    #[test]
    fn the_scenario_text_is_kept_with_its_includes_and_secrets_masked() {
        use crate::source::Span;
        let mut sources = Sources::default();
        sources.add(
            "s.kbs".into(),
            "scenario \"s\" { include \"c.kbs\" }".into(),
        );
        let inc = sources.add("dir/c.kbs".into(), "sasl.password = \"hunter2\"\n".into());
        sources.hide(Span::new(inc, 16, 25));
        let f = file_with_one_run().with_sources(&sources);
        assert_eq!(
            f.scenario_text.as_deref(),
            Some("scenario \"s\" { include \"c.kbs\" }")
        );
        assert_eq!(f.scenario_includes.len(), 1);
        assert_eq!(f.scenario_includes[0].path, "dir/c.kbs");
        assert_eq!(f.scenario_includes[0].text, "sasl.password = *********\n");
    }

    #[test]
    fn a_time_series_and_the_start_time_read_back_as_written() {
        use crate::measure::{SeriesPoint, TimeSeries};
        let mut f = file_with_one_run()
            .started(std::time::UNIX_EPOCH)
            .interval(Duration::from_millis(500));
        f.runs[0].series = Some(TimeSeries {
            interval_secs: 0.5,
            points: vec![SeriesPoint {
                acked: 3,
                target_rate: Some(10.0),
                ..SeriesPoint::default()
            }],
        });
        let mut text = Vec::new();
        f.write(&mut text).unwrap();
        let back = ResultFile::parse(std::str::from_utf8(&text).unwrap(), "r.json").unwrap();
        assert_eq!(back.runs[0].series, f.runs[0].series);
        assert_eq!(back.started_at.as_deref(), Some("1970-01-01T00:00:00.000Z"));
        assert_eq!(back.interval_secs, Some(0.5));
    }

    #[test]
    fn a_version_1_file_is_refused_with_what_to_do() {
        let e = ResultFile::parse(r#"{"schema_version": 1}"#, "old.json").unwrap_err();
        assert!(e.to_string().contains("re-run"), "{e}");
    }

    #[test]
    fn other_json_is_not_a_result_file() {
        let e = ResultFile::parse(r#"{"hello": 1}"#, "x.json").unwrap_err();
        assert!(
            e.to_string().contains("not a kafkabench result file"),
            "{e}"
        );
    }
}
