//! Result files of one run's shards (`kafkabench merge`, gathered by CI artifacts, a shared
//! volume, any means): found to be of one scenario at one scale, that scenario checked again
//! from the texts they carry (or the one on disk, found to be the same), its plan, and the
//! files as parts of the run to merge.

use std::collections::BTreeMap;
use std::path::Path;

use super::digest;
use super::error::ShardError;
use super::execution::{execution, Part};
use super::recheck::recheck;
use crate::diagnostic::Diagnostics;
use crate::measure::RunResult;
use crate::plan::{plan, Plan, PlanOptions};
use crate::run::Execution;
use crate::source::Sources;

/// What one result file holds, as far as merging goes.
pub(crate) struct ShardFile<'a> {
    pub path: &'a Path,
    /// The scenario's main text, and each include's recorded path and text.
    pub text: Option<&'a str>,
    pub includes: Vec<(&'a str, &'a str)>,
    pub scale: f64,
    pub run_id: &'a str,
    pub runs: &'a [RunResult],
    /// How the shard's own run ended, when it failed.
    pub failure: Option<&'a str>,
    pub interrupted: bool,
}

/// Why the files cannot be merged (exit 2).
pub(crate) enum Refused {
    /// Every problem found, each one error.
    Problems(Vec<String>),
    /// The scenario does not check here: its diagnostics, and then why that stops the merge.
    Unchecked {
        diagnostics: Diagnostics,
        sources: Sources,
        why: String,
    },
}

/// The plan the files ran: the scenario they carry (or `scenario`, the same one on disk),
/// checked and planned again at their scale and run id.
pub(crate) fn plan_of(files: &[ShardFile], scenario: Option<&Path>) -> Result<Plan, Refused> {
    let first = &files[0];
    let (Some(main), Some(hash)) = (first.text, fingerprint(first)) else {
        return Err(Refused::Problems(vec![carries_nothing(first.path)]));
    };
    let mut errors = Vec::new();
    for f in &files[1..] {
        match fingerprint(f) {
            None => errors.push(carries_nothing(f.path)),
            Some(h) if h != hash => errors.push(format!(
                "{} is of another scenario than {} (sources {h} against {hash}): only shards \
                 of one scenario merge",
                f.path.display(),
                first.path.display()
            )),
            Some(_) if f.scale != first.scale => errors.push(format!(
                "{} ran at --scale {} and {} at --scale {}: shards of one run share the scale",
                f.path.display(),
                f.scale,
                first.path.display(),
                first.scale
            )),
            Some(_) => {}
        }
    }
    if !errors.is_empty() {
        return Err(Refused::Problems(errors));
    }
    let (sources, checked) = match scenario {
        Some(path) => {
            let mut sources = Sources::default();
            let checked = crate::check::load(path, &mut sources);
            (sources, checked)
        }
        None => recheck(main, &first.includes),
    };
    let scenario_checked = match checked {
        Ok(s) => s,
        Err(diagnostics) => {
            let hint = if scenario.is_some() {
                ""
            } else {
                " (a literal secret is masked in a result file, and payload data files are \
                 not in it: give the scenario file with --scenario FILE)"
            };
            return Err(Refused::Unchecked {
                diagnostics,
                sources,
                why: format!(
                    "the scenario of {} does not check here{hint}",
                    first.path.display()
                ),
            });
        }
    };
    if let Some(path) = scenario {
        let on_disk = digest::of_sources(&sources);
        if on_disk != hash {
            return Err(Refused::Problems(vec![format!(
                "{} is not the scenario the results ran (sources {on_disk} against {hash})",
                path.display(),
            )]));
        }
    }
    let p = plan(
        &scenario_checked,
        &PlanOptions {
            bootstrap: None,
            scale: first.scale,
            repeat: None,
            run_id: first.run_id.to_string(),
        },
    );
    // A shard's file holds its share of a repeated run's trials combined, and of a search
    // only its last probe: the rounds to merge are not in it.
    let rounds = p.runs.iter().any(|r| r.capacity.is_some())
        || files
            .iter()
            .any(|f| f.runs.iter().any(|r| r.trials.is_some()));
    if rounds {
        return Err(Refused::Problems(vec![
            "these files hold trials or a capacity search: a shard's file keeps only its share \
             of each run, not of each trial and probe; `kafkabench collect` merges those as \
             the shards run them"
                .into(),
        ]));
    }
    Ok(p)
}

/// Every planned run merged from the files that hold it. A file that failed, was interrupted
/// or lacks a run the others have makes the merge a failed run (exit 3) naming it, with the
/// rest merged and reported. Err: files that do not fit the plan (not mergeable at all).
pub(crate) fn merged(p: &Plan, files: &[ShardFile]) -> Result<Execution, ShardError> {
    for f in files {
        for r in f.runs {
            let planned = p.runs.get(r.index).map(|run| run.label.as_str());
            if planned != Some(r.label.as_str()) {
                return Err(ShardError::NotPlanned {
                    file: f.path.display().to_string(),
                    run: r.index,
                    label: r.label.clone(),
                });
            }
        }
    }
    let mut notes = Vec::new();
    let ids: Vec<&str> = files.iter().map(|f| f.run_id).collect();
    if ids.iter().any(|id| *id != ids[0]) {
        notes.push(format!(
            "the files have different run ids ({}): shards of one run share one, so these \
             wrote different topics",
            ids.join(", ")
        ));
    }
    let parts: Vec<Part> = files
        .iter()
        .map(|f| {
            let name = f.path.display().to_string();
            let last = f.runs.iter().map(|r| r.index).max().unwrap_or(0);
            let problem = match f.failure {
                Some(failure) => Some((last, format!("{name}: {failure}"))),
                None if f.interrupted => Some((last, format!("{name}: interrupted"))),
                None => None,
            };
            // A file holding one run twice merges its first, as one file always did.
            let mut results = BTreeMap::new();
            for r in f.runs {
                results.entry(r.index).or_insert_with(|| r.clone());
            }
            Part {
                name,
                results,
                problem,
            }
        })
        .collect();
    execution(p, &parts, notes, false)
}

/// A stable digest of the scenario a result file carries; None when it carries no text.
fn fingerprint(f: &ShardFile) -> Option<String> {
    let main = f.text?;
    Some(digest::of_texts(main, f.includes.iter().map(|(_, t)| *t)))
}

fn carries_nothing(path: &Path) -> String {
    format!(
        "{} carries no scenario text (written by an older kafkabench): re-run the shards, or \
         merge with --scenario FILE",
        path.display()
    )
}
