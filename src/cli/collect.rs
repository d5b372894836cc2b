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
use crate::plan::{plan, PlanOptions};
use crate::report::json::ResultFile;
use crate::run::LiveTopic;
use crate::shard::collect::{collect, CollectOptions};
use crate::shard::policy;

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
    #[command(flatten)]
    pub metrics: super::MetricsArgs,
}

pub(super) fn command(a: &CollectArgs) -> Outcome {
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
            repeat: a.scaling.repeat,
            run_id: a.run_id.clone(),
        },
    );
    let mut errors = policy::problems(&p, a.shards);
    errors.extend(crate::run::driven::undriven(&p));
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
    let metrics = match super::metrics::start(&a.metrics) {
        Ok(m) => m,
        Err(outcome) => return outcome,
    };
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
    let wait = a.deadline.unwrap_or_else(|| policy::collector_wait(&p));
    let opts = CollectOptions {
        shards: a.shards,
        hash: crate::shard::digest(&sources, &p),
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
    let collected = rt.block_on(collect(&p, &opts, interrupt.clone()));
    rt.shutdown_background();
    let (reported, exec) = (collected.reported, collected.execution);
    if let Some(m) = &metrics {
        m.collected(&p, &exec.results);
    }
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
    let outcome =
        super::report::write_outputs(&outputs, &p, &exec, &verdicts, outcome, |outcome| {
            ResultFile::new(&p, &exec, &verdicts, outcome)
                .with_sources(&sources)
                .started(started)
        });
    if let Some(m) = metrics {
        m.linger(a.metrics.metrics_linger, &interrupt);
    }
    outcome
}
