//! `--json FILE`: every figure, percentile and effective setting, for tools and for history.

use std::io::{self, Write};

use serde::Serialize;

use crate::assert::Verdict;
use crate::exit::Outcome;
use crate::measure::RunResult;
use crate::plan::Plan;
use crate::run::Execution;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Report<'a> {
    schema_version: u32,
    kafkabench_version: &'static str,
    scenario: &'a str,
    description: Option<&'a str>,
    run_id: &'a str,
    scale: f64,
    planned_runs: usize,
    outcome: &'static str,
    exit_code: u8,
    failure: Option<String>,
    interrupted: bool,
    runs: &'a [RunResult],
    assertions: &'a [Verdict],
    notes: &'a [String],
}

pub fn write(
    p: &Plan,
    exec: &Execution,
    verdicts: &[Verdict],
    outcome: Outcome,
    out: &mut dyn Write,
) -> io::Result<()> {
    let r = Report {
        schema_version: SCHEMA_VERSION,
        kafkabench_version: env!("CARGO_PKG_VERSION"),
        scenario: &p.scenario,
        description: p.description.as_deref(),
        run_id: &p.run_id,
        scale: p.scale,
        planned_runs: p.runs.len(),
        outcome: outcome.name(),
        exit_code: outcome.code(),
        failure: exec.failure.as_ref().map(ToString::to_string),
        interrupted: exec.interrupted,
        runs: &exec.results,
        assertions: verdicts,
        notes: &exec.notes,
    };
    serde_json::to_writer_pretty(&mut *out, &r).map_err(io::Error::other)?;
    writeln!(out)
}
