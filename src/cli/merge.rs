//! `kafkabench merge RESULT...`: result files of the shards of one run (gathered by CI
//! artifacts, a shared volume, any means) merged run by run into the report one machine would
//! have written, with the `expect` block evaluated once on the merged figures.
//!
//! The scenario to evaluate is the one the files carry (`scenario_text` and its includes),
//! checked and planned again; `--scenario FILE` names it on disk instead (for a scenario the
//! files cannot carry whole: a literal secret, masked in them, or a payload data file).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{finish_output, load, print_diagnostics, run::writable};
use crate::exit::Outcome;
use crate::measure::merge::merge;
use crate::measure::series::Planned;
use crate::measure::RunResult;
use crate::model::Scenario;
use crate::plan::{plan, Plan, PlanOptions};
use crate::report::json::ResultFile;
use crate::run::{Execution, RunError, RunFailure};
use crate::source::Sources;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Result files (`run --json`) of the shards of one run, in shard order.
    #[arg(required = true, value_name = "RESULT")]
    pub files: Vec<PathBuf>,
    /// The scenario file to evaluate `expect` from, instead of the text the results carry; it
    /// must be the same scenario (its text, secrets masked, and its includes).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Write the merged result file (schema_version 2, docs/result-format.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one JUnit test case per assertion, judged on the merged figures.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a self-contained HTML report of the merged figures.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

pub fn command(a: &MergeArgs) -> Outcome {
    match prepare(a) {
        Ok((files, scenario)) => merged(a, &files, &scenario),
        Err(errors) => {
            for e in errors {
                eprintln!("error: {e}");
            }
            Outcome::Invalid
        }
    }
}

/// Result files as read, each with the path it was read from.
type Files = Vec<(PathBuf, ResultFile)>;

/// The files read and found to be of one scenario, and that scenario checked; or every
/// problem found. Diagnostics of the scenario are printed here (they need the sources).
fn prepare(a: &MergeArgs) -> Result<(Files, Scenario), Vec<String>> {
    let mut errors = Vec::new();
    for (flag, path) in [
        ("--json", &a.json),
        ("--junit", &a.junit),
        ("--html", &a.html),
    ] {
        if let Some(p) = path {
            if let Err(e) = writable(p) {
                errors.push(format!("cannot write {flag} {}: {e}", p.display()));
            }
        }
    }
    let mut files = Vec::new();
    for path in &a.files {
        match ResultFile::read(path) {
            Ok(f) => files.push((path.clone(), f)),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let (first_path, first) = &files[0];
    let hash = fingerprint(first).ok_or_else(|| vec![carries_nothing(first_path)])?;
    for (path, f) in &files[1..] {
        match fingerprint(f) {
            None => errors.push(carries_nothing(path)),
            Some(h) if h != hash => errors.push(format!(
                "{} is of another scenario than {} (sources {h} against {hash}): only shards \
                 of one scenario merge",
                path.display(),
                first_path.display()
            )),
            Some(_) if f.scale != first.scale => errors.push(format!(
                "{} ran at --scale {} and {} at --scale {}: shards of one run share the scale",
                path.display(),
                f.scale,
                first_path.display(),
                first.scale
            )),
            Some(_) => {}
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let (sources, checked) = match &a.scenario {
        Some(path) => load(path),
        None => recheck(first),
    };
    let scenario = match checked {
        Ok(s) => s,
        Err(d) => {
            print_diagnostics(&d, &sources);
            let hint = if a.scenario.is_some() {
                String::new()
            } else {
                " (a literal secret is masked in a result file, and payload data files are \
                 not in it: give the scenario file with --scenario FILE)"
                    .to_string()
            };
            return Err(vec![format!(
                "the scenario of {} does not check here{hint}",
                first_path.display()
            )]);
        }
    };
    if let Some(path) = &a.scenario {
        let on_disk = sources_fingerprint(&sources);
        if on_disk != hash {
            return Err(vec![format!(
                "{} is not the scenario the results ran (sources {on_disk} against {hash})",
                path.display(),
            )]);
        }
    }
    Ok((files, scenario))
}

fn carries_nothing(path: &Path) -> String {
    format!(
        "{} carries no scenario text (written by an older kafkabench): re-run the shards, or \
         merge with --scenario FILE",
        path.display()
    )
}

/// Merges, judges and reports.
fn merged(a: &MergeArgs, files: &[(PathBuf, ResultFile)], scenario: &Scenario) -> Outcome {
    let first = &files[0].1;
    let p = plan(
        scenario,
        &PlanOptions {
            bootstrap: None,
            scale: first.scale,
            run_id: first.run_id.clone(),
        },
    );
    let exec = match execution(&p, files) {
        Ok(exec) => exec,
        Err(e) => {
            eprintln!("error: {e}");
            return Outcome::Invalid;
        }
    };
    let verdicts = crate::assert::evaluate(&p, &exec.results);
    let mut out = std::io::stdout().lock();
    let written = (|| {
        writeln!(
            out,
            "merged {} result files of run {}",
            files.len(),
            p.run_id
        )?;
        crate::report::table::write(&p, &exec, &mut out)?;
        crate::report::verdicts_text(&verdicts, &mut out)?;
        out.flush()
    })();
    drop(out);
    let outcome = finish_output(crate::assert::outcome(&exec, &verdicts, false), written);
    if let Some(f) = &exec.failure {
        eprintln!("error: {f}");
    }
    let outputs = super::report::Outputs {
        junit: a.junit.as_deref(),
        json: a.json.as_deref(),
        html: a.html.as_deref(),
    };
    super::report::write_outputs(&outputs, &p, &exec, &verdicts, outcome, |outcome| {
        let mut result = ResultFile::new(&p, &exec, &verdicts, outcome);
        // The texts exactly as the shards carried them (the re-check's copies sit elsewhere).
        result.scenario_text = first.scenario_text.clone();
        result.scenario_includes = first.scenario_includes.clone();
        result.librdkafka_version = first.librdkafka_version.clone();
        result.started_at = files.iter().filter_map(|(_, f)| f.started_at.clone()).min();
        result.interval_secs = first.interval_secs;
        result
    })
}

/// Every planned run merged from the files that hold it. A file that failed, was interrupted
/// or lacks a run the others have makes the merge a failed run (exit 3) naming it, with the
/// rest merged and reported. Err: files that do not fit the plan (not mergeable at all).
fn execution(p: &Plan, files: &[(PathBuf, ResultFile)]) -> Result<Execution, String> {
    let mut problems: Vec<(usize, String)> = Vec::new();
    let mut notes = Vec::new();
    let ids: Vec<&str> = files.iter().map(|(_, f)| f.run_id.as_str()).collect();
    if ids.iter().any(|id| *id != ids[0]) {
        notes.push(format!(
            "the files have different run ids ({}): shards of one run share one, so these \
             wrote different topics",
            ids.join(", ")
        ));
    }
    for (path, f) in files {
        for r in &f.runs {
            let planned = p.runs.get(r.index).map(|run| run.label.as_str());
            if planned != Some(r.label.as_str()) {
                return Err(format!(
                    "{} holds run {} `{}`, which the scenario does not plan",
                    path.display(),
                    r.index + 1,
                    r.label
                ));
            }
        }
        let last = f.runs.iter().map(|r| r.index).max().unwrap_or(0);
        if let Some(failure) = &f.failure {
            problems.push((last, format!("{}: {failure}", path.display())));
        } else if f.interrupted {
            problems.push((last, format!("{}: interrupted", path.display())));
        }
    }
    let mut results = Vec::new();
    for run in &p.runs {
        let shards: Vec<(&PathBuf, &RunResult)> = files
            .iter()
            .filter_map(|(path, f)| Some((path, f.runs.iter().find(|r| r.index == run.index)?)))
            .collect();
        if shards.is_empty() {
            continue;
        }
        for (path, f) in files {
            if !f.runs.iter().any(|r| r.index == run.index) {
                problems.push((
                    run.index,
                    format!("{} has no result for it", path.display()),
                ));
            }
        }
        let schedule = Planned::of(&run.workload);
        let refs: Vec<&RunResult> = shards.iter().map(|(_, r)| *r).collect();
        let merged = merge(&refs, &schedule).map_err(|e| {
            format!(
                "{}: run {} ({}): {e}",
                shards[e.shard].0.display(),
                run.index + 1,
                run.label
            )
        })?;
        results.push(merged);
    }
    problems.sort_by_key(|(run, _)| *run);
    let failure = problems.first().map(|(run, _)| {
        let all: Vec<&str> = problems.iter().map(|(_, m)| m.as_str()).collect();
        RunFailure {
            index: *run,
            label: p
                .runs
                .get(*run)
                .map_or_else(String::new, |r| r.label.clone()),
            error: RunError::Incomplete(format!(
                "merged from a partial set of shards: {}",
                all.join("; ")
            )),
        }
    });
    Ok(Execution {
        results,
        failure,
        interrupted: false,
        notes,
    })
}

/// A stable digest of the scenario a result file carries (main text, then the includes' texts
/// in the order met, secrets masked, as every shard masks them alike); None when it carries no
/// text. Paths are left out: they depend on where each machine keeps the file, and the include
/// lines in the texts already name them. FNV-1a: a check that the shards ran one scenario, not
/// a defence against forgery.
pub fn fingerprint(f: &ResultFile) -> Option<String> {
    let main = f.scenario_text.as_deref()?;
    let texts = std::iter::once(main).chain(f.scenario_includes.iter().map(|i| i.text.as_str()));
    Some(digest(texts.map(str::as_bytes)))
}

/// The same digest of scenario sources as they were loaded here.
fn sources_fingerprint(sources: &Sources) -> String {
    let texts: Vec<String> = sources.ids().map(|id| sources.shown_text(id)).collect();
    digest(texts.iter().map(String::as_bytes))
}

/// FNV-1a over the pieces, each ended by a 0 byte, in hex.
pub(super) fn digest<'a>(pieces: impl Iterator<Item = &'a [u8]>) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for t in pieces {
        for b in t.iter().copied().chain([0u8]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

mod recheck;
use recheck::recheck;
