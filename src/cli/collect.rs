//! `kafkabench collect`: the coordinator of a sharded run. It creates the topics, holds the
//! barriers, gathers the shards' results over the control topic, merges them exactly, judges
//! `expect` once and reports like `run` (docs/distributed.md).

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use clap::Args;

use super::{interval, load, parse_run_id, print_diagnostics, Scaling};
use crate::exit::Outcome;
use crate::measure::merge::merge;
use crate::measure::series::Planned;
use crate::measure::RunResult;
use crate::plan::{plan, Plan, PlanOptions};
use crate::report::json::ResultFile;
use crate::run::collect::{collect, CollectOptions, Collected};
use crate::run::{Execution, LiveTopic, RunError, RunFailure};

#[derive(Args, Debug)]
pub struct CollectArgs {
    /// The scenario file (.kbs): the same files the shards run (their digests must match).
    pub file: PathBuf,
    #[command(flatten)]
    pub scaling: Scaling,
    /// The run id every shard was started with (`run --shard I/N --run-id ID`).
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    pub run_id: String,
    /// How many shards take part.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub shards: u32,
    /// Stop waiting for shards after this long (e.g. 10m); default: the planned duration
    /// plus a minute.
    #[arg(long, value_name = "DURATION", value_parser = interval::parse_deadline)]
    pub deadline: Option<std::time::Duration>,
    /// Write the merged figures as a result file (schema 2), like `run --json`.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one JUnit test case per assertion.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a self-contained HTML report of the merged figures.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Keep the run's topics and the control topic (normally deleted at the end).
    #[arg(long)]
    pub keep_topics: bool,
}

pub fn command(a: &CollectArgs) -> Outcome {
    let (sources, checked) = load(&a.file);
    let scenario = match checked {
        Ok(s) => s,
        Err(d) => {
            print_diagnostics(&d, &sources);
            return Outcome::Invalid;
        }
    };
    let p = plan(
        &scenario,
        &PlanOptions {
            bootstrap: a.scaling.bootstrap.clone(),
            scale: a.scaling.scale,
            run_id: a.run_id.clone(),
        },
    );
    let mut errors = super::shard::problems(&p, a.shards);
    for (flag, path) in [
        ("--json", &a.json),
        ("--junit", &a.junit),
        ("--html", &a.html),
    ] {
        if let Some(path) = path {
            if let Err(e) = super::run::writable(path) {
                errors.push(format!("cannot write {flag} {}: {e}", path.display()));
            }
        }
    }
    if !errors.is_empty() {
        for e in errors {
            eprintln!("error: {e}");
        }
        return Outcome::Invalid;
    }
    let rt = match super::run::runtime() {
        Ok(rt) => rt,
        Err(outcome) => return outcome,
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    let live_topic = LiveTopic::default();
    rt.spawn(super::run::signals(
        interrupt.clone(),
        live_topic.clone(),
        crate::run::LiveFaults::default(),
    ));
    let wait = a
        .deadline
        .unwrap_or_else(|| super::shard::planned(&p) + std::time::Duration::from_secs(60));
    let opts = CollectOptions {
        shards: a.shards,
        hash: super::shard::digest(&sources, &p),
        deadline: Instant::now() + wait,
        keep_topics: a.keep_topics,
        live_topic,
        say: Some(Arc::new(|line| eprintln!("collect: {line}"))),
    };
    eprintln!(
        "collecting run {} from {} shard{} (deadline in {}s)",
        p.run_id,
        a.shards,
        if a.shards == 1 { "" } else { "s" },
        wait.as_secs()
    );
    let started = SystemTime::now();
    let collected = rt.block_on(collect(&p, &opts, interrupt));
    rt.shutdown_background();
    let reported = reported(&collected);
    let exec = execution(&p, collected);
    let verdicts = crate::assert::evaluate(&p, &exec.results);
    let mut out = std::io::stdout().lock();
    let written = (|| {
        writeln!(
            out,
            "merged {reported} of {} shards of run {}",
            a.shards, p.run_id
        )?;
        crate::report::table::write(&p, &exec, &mut out)?;
        crate::report::verdicts_text(&verdicts, &mut out)?;
        out.flush()
    })();
    drop(out);
    let outcome = super::finish_output(crate::assert::outcome(&exec, &verdicts, false), written);
    if let Some(f) = &exec.failure {
        eprintln!("error: {f}");
    }
    if exec.interrupted {
        eprintln!("interrupted: the report above covers what was collected before the signal");
    }
    let outputs = super::report::Outputs {
        junit: a.junit.as_deref(),
        json: a.json.as_deref(),
        html: a.html.as_deref(),
    };
    super::report::write_outputs(&outputs, &p, &exec, &verdicts, outcome, |outcome| {
        ResultFile::new(&p, &exec, &verdicts, outcome)
            .with_sources(&sources)
            .started(started)
    })
}

/// How many shards' results went into the last run collected.
fn reported(c: &Collected) -> usize {
    c.runs.last().map_or(0, |r| r.results.len())
}

/// The merged execution: each collected run merged from the shards that reported it, with
/// the collector's own disk measurement; every shard that let the run down makes it a failed
/// run (exit 3) naming the shard.
fn execution(p: &Plan, c: Collected) -> Execution {
    let mut results = Vec::new();
    let mut failure = None;
    let mut notes = c.notes;
    for run in &c.runs {
        let Some(rp) = p.runs.get(run.index) else {
            continue;
        };
        let shards: Vec<(u32, &RunResult)> = run.results.iter().map(|(s, r)| (*s, r)).collect();
        if shards.is_empty() {
            continue;
        }
        let refs: Vec<&RunResult> = shards.iter().map(|(_, r)| *r).collect();
        match merge(&refs, &Planned::of(&rp.workload)) {
            Ok(mut m) => {
                let (each, total) = match &run.disk {
                    Some((each, total)) => (Some(each.as_slice()), Some(*total)),
                    None => (None, None),
                };
                m.set_disk(each, total);
                if total.is_none() {
                    notes.push(format!("run {}: on-disk size unavailable", rp.index + 1));
                }
                results.push(m);
            }
            Err(e) => {
                failure.get_or_insert(RunFailure {
                    index: rp.index,
                    label: rp.label.clone(),
                    error: RunError::Incomplete(format!(
                        "shard {}'s result cannot be merged: {e}",
                        shards[e.shard].0
                    )),
                });
            }
        }
    }
    // A run's index and label.
    let at = |index: usize| {
        p.runs
            .get(index)
            .map_or((index, String::new()), |rp| (rp.index, rp.label.clone()))
    };
    if !c.problems.is_empty() {
        let named: Vec<String> = c
            .problems
            .iter()
            .map(|(s, why)| format!("shard {s} {why}"))
            .collect();
        // The shards let down the last run collected.
        let (run, label) = at(c.runs.last().map_or(0, |r| r.index));
        failure = Some(RunFailure {
            index: run,
            label,
            error: RunError::Incomplete(format!(
                "merged from a partial set of shards: {}",
                named.join("; ")
            )),
        });
    } else if let Some(e) = c.error {
        // The collector stopped at the run after the last one it collected.
        let (run, label) = at(c.runs.len());
        failure = Some(RunFailure {
            index: run,
            label,
            error: e,
        });
    }
    Execution {
        results,
        failure,
        interrupted: c.interrupted,
        notes,
    }
}
