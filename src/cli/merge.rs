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

use super::{finish_output, print_diagnostics, run::writable};
use crate::exit::Outcome;
use crate::plan::Plan;
use crate::report::json::ResultFile;
use crate::shard::files::{merged, plan_of, Refused, ShardFile};

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Result files (`run --json`) of the shards of one run, in shard order.
    #[arg(required = true, value_name = "RESULT")]
    pub files: Vec<PathBuf>,
    /// The scenario file to evaluate `expect` from, instead of the text the results carry; it
    /// must be the same scenario (its text, secrets masked, and its includes).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Write the merged result file (docs/result-format.md, the same shape as `run --json`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one JUnit test case per assertion, judged on the merged figures.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a self-contained HTML report of the merged figures.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

pub(super) fn command(a: &MergeArgs) -> Outcome {
    let files = match read(a) {
        Ok(files) => files,
        Err(errors) => return invalid(errors),
    };
    let shards: Vec<ShardFile> = files.iter().map(|(path, f)| shard_file(path, f)).collect();
    match plan_of(&shards, a.scenario.as_deref()) {
        Ok(p) => report(a, &files, &shards, &p),
        Err(Refused::Problems(errors)) => invalid(errors),
        Err(Refused::Unchecked {
            diagnostics,
            sources,
            why,
        }) => {
            print_diagnostics(&diagnostics, &sources);
            invalid(vec![why])
        }
    }
}

fn invalid(errors: Vec<String>) -> Outcome {
    for e in errors {
        eprintln!("error: {e}");
    }
    Outcome::Invalid
}

/// Result files as read, each with the path it was read from.
type Files = Vec<(PathBuf, ResultFile)>;

/// The files read, once every output can be written; or every problem found.
fn read(a: &MergeArgs) -> Result<Files, Vec<String>> {
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
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(errors)
    }
}

/// What the shard stage needs of a result file.
fn shard_file<'a>(path: &'a Path, f: &'a ResultFile) -> ShardFile<'a> {
    ShardFile {
        path,
        text: f.scenario_text.as_deref(),
        includes: f
            .scenario_includes
            .iter()
            .map(|i| (i.path.as_str(), i.text.as_str()))
            .collect(),
        scale: f.scale,
        run_id: &f.run_id,
        runs: &f.runs,
        failure: f.failure.as_deref(),
        interrupted: f.interrupted,
    }
}

/// Merges, judges and reports.
fn report(
    a: &MergeArgs,
    files: &[(PathBuf, ResultFile)],
    shards: &[ShardFile],
    p: &Plan,
) -> Outcome {
    let first = &files[0].1;
    let exec = match merged(p, shards) {
        Ok(exec) => exec,
        Err(e) => {
            eprintln!("error: {e}");
            return Outcome::Invalid;
        }
    };
    let verdicts = crate::assert::evaluate(p, &exec.results);
    let mut out = std::io::stdout().lock();
    let written = (|| {
        writeln!(
            out,
            "merged {} result files of run {}",
            files.len(),
            p.run_id
        )?;
        crate::report::table::write(p, &exec, &mut out)?;
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
    super::report::write_outputs(&outputs, p, &exec, &verdicts, outcome, |outcome| {
        let mut result = ResultFile::new(p, &exec, &verdicts, outcome);
        // The texts exactly as the shards carried them (the re-check's copies sit elsewhere).
        result.scenario_text = first.scenario_text.clone();
        result.scenario_includes = first.scenario_includes.clone();
        result.librdkafka_version = first.librdkafka_version.clone();
        result.started_at = files.iter().filter_map(|(_, f)| f.started_at.clone()).min();
        result.interval_secs = first.interval_secs;
        // Each shard file's machine (a file merged before keeps its shards').
        result.shard_environments = files
            .iter()
            .flat_map(|(_, f)| f.environment.iter().chain(&f.shard_environments))
            .cloned()
            .collect();
        result
    })
}
