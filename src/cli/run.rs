//! `kafkabench run`: load, check, plan, execute, assert, report, and say why it stopped.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::{load, print_diagnostics, progress, RunArgs};
use crate::exit::Outcome;
use crate::plan::{plan, PlanOptions};
use crate::run::{execute, RunOptions};

pub fn command(a: &RunArgs) -> Outcome {
    let (sources, result) = load(&a.file);
    let scenario = match result {
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
            ..PlanOptions::default()
        },
    );
    let opts = RunOptions {
        keep_topics: a.keep_topics,
        // A live line only where someone watches it: not in CI logs, not with --quiet.
        progress: (!a.quiet && std::io::stderr().is_terminal()).then(progress::on_stderr),
    };
    // The orchestration is light (the work is on the run's own threads): one worker will do.
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return Outcome::RunFailed;
        }
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    let exec = rt.block_on(execute(&p, &opts, interrupt));
    let verdicts = crate::assert::evaluate(&p, &exec.results);
    let mut out = std::io::stdout().lock();
    let _ = crate::report::table::write(&p, &exec, &mut out);
    let _ = crate::report::verdicts_text(&verdicts, &mut out);
    let _ = out.flush();
    let outcome = crate::assert::outcome(&exec, &verdicts);
    if let Some(path) = &a.json {
        write_file(path, |f| {
            crate::report::json::write(&p, &exec, &verdicts, outcome, f)
        });
    }
    if let Some(path) = &a.junit {
        write_file(path, |f| {
            crate::report::junit::write(&p, &exec, &verdicts, f)
        });
    }
    if let Some(f) = &exec.failure {
        eprintln!("error: {f}");
    }
    if exec.interrupted {
        eprintln!("interrupted: the report above covers what was measured before Ctrl-C");
    }
    outcome
}

/// Writes one report file; a failure is said on stderr (the report is on stdout already).
fn write_file(path: &Path, write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>) {
    if let Err(e) = std::fs::File::create(path).and_then(|mut f| write(&mut f)) {
        eprintln!("error: cannot write {}: {e}", path.display());
    }
}
