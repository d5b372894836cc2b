//! The shards' result files of a sharded run (`kafkabench merge`) turned into the one
//! `Execution` a single machine would have produced: each planned run merged exactly from the
//! files that hold it (`measure::merge`), and every file lacking a run the others have named
//! in a failed run (exit 3). (The collector merges each round as it gathers it.)

use std::collections::BTreeMap;

use super::error::ShardError;
use crate::measure::merge::merge;
use crate::measure::series::Planned;
use crate::measure::RunResult;
use crate::plan::Plan;
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

/// Every planned run merged from the parts that hold it, with `notes` and `interrupted`
/// handed through.
pub(crate) fn execution(
    p: &Plan,
    parts: &[Part],
    notes: Vec<String>,
    interrupted: bool,
) -> Result<Execution, ShardError> {
    let mut problems: Vec<(usize, String)> =
        parts.iter().filter_map(|s| s.problem.clone()).collect();
    let mut results = Vec::new();
    for run in &p.runs {
        let shards: Vec<(&Part, &RunResult)> = parts
            .iter()
            .filter_map(|s| Some((s, s.results.get(&run.index)?)))
            .collect();
        if shards.is_empty() {
            continue;
        }
        for part in parts.iter().filter(|s| !s.results.contains_key(&run.index)) {
            problems.push((run.index, format!("{} has no result for it", part.name)));
        }
        let refs: Vec<&RunResult> = shards.iter().map(|(_, r)| *r).collect();
        match merge(&refs, &Planned::of(&run.workload)) {
            Ok(m) => results.push(m),
            Err(e) => {
                return Err(ShardError::Unmergeable {
                    file: shards[e.shard].0.name.clone(),
                    run: run.index,
                    label: run.label.clone(),
                    source: Box::new(e),
                })
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
    let failure = problems.first().map(|(first, _)| {
        let (index, label) = at(*first);
        RunFailure {
            index,
            label,
            error: RunError::PartialShards(problems.iter().map(|(_, m)| m.clone()).collect()),
        }
    });
    crate::measure::pair_drains(&mut results);
    Ok(Execution {
        results,
        failure,
        interrupted,
        notes,
        // Many machines measured it: each is its shard's.
        environment: None,
        shard_environments: Vec::new(),
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
        let exec = execution(&p, &parts(&p), Vec::new(), false).unwrap();
        assert_eq!(exec.results.len(), 2);
        let failure = exec.failure.expect("a partial merge fails the run");
        assert_eq!(failure.index, 1);
        assert!(
            failure.to_string().contains("b has no result for it"),
            "{failure}"
        );
    }
}
