//! The shards' results of a sharded run turned into the one `Execution` a single machine
//! would have produced: each planned run merged exactly from the shards that reported it
//! (`measure::merge`), and every shard that let the run down named in a failed run (exit 3).
//! One function for the results the collector gathered live and for the result files
//! `kafkabench merge` reads.

use std::collections::BTreeMap;

use super::error::ShardError;
use crate::measure::merge::merge;
use crate::measure::series::Planned;
use crate::measure::RunResult;
use crate::plan::Plan;
use crate::plan::RunNo;
use crate::run::{Execution, RunError, RunFailure};

/// One shard's part of the run, as gathered.
pub(crate) struct Part {
    /// How a problem names it: `shard 1`, or a result file's path.
    pub name: String,
    /// Its results, by their run's index in the plan.
    pub results: BTreeMap<usize, RunResult>,
    /// How it let the run down, said whole, and at which run (its index), if it did.
    pub problem: Option<(usize, String)>,
}

/// Where the parts come from, and what that adds.
pub(crate) enum Gathered {
    /// The collector's: the disk it measured once per run it collected, and the error that
    /// stopped it at a run (its index), if one did. A shard without a run's result is named
    /// by its own problem (the collector marks every shard it stopped waiting for).
    Live {
        disk: BTreeMap<usize, Option<(Vec<u64>, u64)>>,
        error: Option<(usize, RunError)>,
    },
    /// Result files: each file lacking a run the others have is named for it, and files whose
    /// results do not merge are not mergeable at all (Err).
    Files,
}

/// Every planned run merged from the parts that hold it, with `notes` and `interrupted`
/// handed through.
pub(crate) fn execution(
    p: &Plan,
    parts: &[Part],
    gathered: Gathered,
    mut notes: Vec<String>,
    interrupted: bool,
) -> Result<Execution, ShardError> {
    let files = matches!(gathered, Gathered::Files);
    let mut problems: Vec<(usize, String)> =
        parts.iter().filter_map(|s| s.problem.clone()).collect();
    let mut unmerged = None;
    let mut results = Vec::new();
    for run in &p.runs {
        let shards: Vec<(&Part, &RunResult)> = parts
            .iter()
            .filter_map(|s| Some((s, s.results.get(&run.index)?)))
            .collect();
        if shards.is_empty() {
            continue;
        }
        if files {
            for part in parts.iter().filter(|s| !s.results.contains_key(&run.index)) {
                problems.push((run.index, format!("{} has no result for it", part.name)));
            }
        }
        let refs: Vec<&RunResult> = shards.iter().map(|(_, r)| *r).collect();
        match merge(&refs, &Planned::of(&run.workload)) {
            Ok(mut m) => {
                if let Gathered::Live { disk, .. } = &gathered {
                    let measured = disk.get(&run.index).and_then(Option::as_ref);
                    m.set_disk(
                        measured.map(|(each, _)| each.as_slice()),
                        measured.map(|(_, total)| *total),
                    );
                    if measured.is_none() {
                        notes.push(format!(
                            "run {}: on-disk size unavailable",
                            RunNo(run.index)
                        ));
                    }
                }
                results.push(m);
            }
            Err(e) if files => {
                return Err(ShardError::Unmergeable {
                    file: shards[e.shard].0.name.clone(),
                    run: run.index,
                    label: run.label.clone(),
                    source: Box::new(e),
                })
            }
            Err(e) => {
                unmerged.get_or_insert(RunFailure {
                    index: run.index,
                    label: run.label.clone(),
                    error: RunError::Unmerged {
                        file: shards[e.shard].0.name.clone(),
                        error: e,
                    },
                });
            }
        }
    }
    // A run's index and label.
    let at = |index: usize| {
        let label = p
            .runs
            .get(index)
            .map_or_else(String::new, |r| r.label.clone());
        (index, label)
    };
    problems.sort_by_key(|(run, _)| *run);
    let error = match gathered {
        Gathered::Live { error, .. } => error,
        Gathered::Files => None,
    };
    let failure = if let Some((first, _)) = problems.first() {
        let (index, label) = at(*first);
        Some(RunFailure {
            index,
            label,
            error: RunError::PartialShards(problems.into_iter().map(|(_, m)| m).collect()),
        })
    } else if let Some((index, error)) = error {
        let (index, label) = at(index);
        Some(RunFailure {
            index,
            label,
            error,
        })
    } else {
        unmerged
    };
    Ok(Execution {
        results,
        failure,
        interrupted,
        notes,
        // Many machines measured it; their environments are not one (yet).
        environment: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::RunStatus;

    fn two_runs() -> Plan {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/run/progress_two_steps.kbs");
        let mut sources = crate::source::Sources::default();
        let scenario = crate::check::load(&path, &mut sources).expect("a valid fixture");
        crate::plan::plan(&scenario, &Default::default())
    }

    /// Shard 0 reported both runs, shard 1 only the first.
    fn parts(p: &Plan) -> Vec<Part> {
        let result = |index: usize| RunResult {
            index,
            label: p.runs[index].label.clone(),
            status: RunStatus::Complete,
            ..RunResult::default()
        };
        vec![
            Part {
                name: "a".into(),
                results: BTreeMap::from([(0, result(0)), (1, result(1))]),
                problem: None,
            },
            Part {
                name: "b".into(),
                results: BTreeMap::from([(0, result(0))]),
                problem: None,
            },
        ]
    }

    #[test]
    fn a_file_lacking_a_run_the_others_have_is_named_at_that_run() {
        let p = two_runs();
        let exec = execution(&p, &parts(&p), Gathered::Files, Vec::new(), false).unwrap();
        assert_eq!(exec.results.len(), 2);
        let failure = exec.failure.expect("a partial merge fails the run");
        assert_eq!(failure.index, 1);
        assert!(
            failure.to_string().contains("b has no result for it"),
            "{failure}"
        );
    }

    #[test]
    fn live_results_carry_the_collectors_disk_and_leave_naming_to_the_shards_problems() {
        let p = two_runs();
        let gathered = Gathered::Live {
            disk: BTreeMap::from([(0, Some((vec![5], 5))), (1, None)]),
            error: None,
        };
        let exec = execution(&p, &parts(&p), gathered, Vec::new(), false).unwrap();
        assert!(exec.failure.is_none());
        assert_eq!(exec.results[0].disk_bytes, Some(5));
        assert_eq!(exec.notes, ["run 2: on-disk size unavailable"]);
    }
}
