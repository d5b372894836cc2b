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
use crate::run::{Execution, RunError, RunFailure};

/// One shard's part of the run, as gathered.
pub struct Part {
    /// How a problem names it: `shard 1`, or a result file's path.
    pub name: String,
    /// Its results, by their run's index in the plan.
    pub results: BTreeMap<usize, RunResult>,
    /// How it let the run down, said whole, and at which run (its index), if it did.
    pub problem: Option<(usize, String)>,
}

/// Where the parts come from, and what that adds.
pub enum Gathered {
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
pub fn execution(
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
                        notes.push(format!("run {}: on-disk size unavailable", run.index + 1));
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
                    run: run.index + 1,
                    label: run.label.clone(),
                    error: RunError::Incomplete(format!(
                        "{}'s result cannot be merged: {e}",
                        shards[e.shard].0.name
                    )),
                });
            }
        }
    }
    // A run's number (from 1) and label.
    let at = |index: usize| {
        let label = p
            .runs
            .get(index)
            .map_or_else(String::new, |r| r.label.clone());
        (index + 1, label)
    };
    problems.sort_by_key(|(run, _)| *run);
    let error = match gathered {
        Gathered::Live { error, .. } => error,
        Gathered::Files => None,
    };
    let failure = if let Some((first, _)) = problems.first() {
        let (run, label) = at(*first);
        let all: Vec<&str> = problems.iter().map(|(_, m)| m.as_str()).collect();
        Some(RunFailure {
            run,
            label,
            error: RunError::Incomplete(format!(
                "merged from a partial set of shards: {}",
                all.join("; ")
            )),
        })
    } else if let Some((index, error)) = error {
        let (run, label) = at(index);
        Some(RunFailure { run, label, error })
    } else {
        unmerged
    };
    Ok(Execution {
        results,
        failure,
        interrupted,
        notes,
    })
}
