//! `kafkabench run`: load, check, plan, execute, assert, report, and say why it stopped.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{load, print_diagnostics, progress, RunArgs};
use crate::exit::Outcome;
use crate::plan::{plan, PlanOptions};
use crate::run::{execute, LiveTopic, RunOptions};

pub fn command(a: &RunArgs) -> Outcome {
    // Before any work: a report that cannot be written would otherwise be found out only
    // after the whole run.
    let unwritable: Vec<String> = [
        ("--json", &a.json),
        ("--junit", &a.junit),
        ("--html", &a.html),
    ]
    .into_iter()
    .filter_map(|(flag, path)| {
        let path = path.as_deref()?;
        writable(path)
            .err()
            .map(|e| format!("error: cannot write {flag} {}: {e}", path.display()))
    })
    .collect();
    let (sources, result) = load(&a.file);
    let scenario = match result {
        Ok(s) if unwritable.is_empty() => s,
        Ok(_) => {
            eprintln!("{}", unwritable.join("\n"));
            return Outcome::Invalid;
        }
        Err(d) => {
            print_diagnostics(&d, &sources);
            for e in &unwritable {
                eprintln!("{e}");
            }
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
        live_topic: LiveTopic::default(),
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
    rt.spawn(signals(interrupt.clone(), opts.live_topic.clone()));
    let exec = rt.block_on(execute(&p, &opts, interrupt));
    let verdicts = crate::assert::evaluate(&p, &exec.results);
    let mut out = std::io::stdout().lock();
    let _ = crate::report::table::write(&p, &exec, &mut out);
    let _ = crate::report::verdicts_text(&verdicts, &mut out);
    let _ = out.flush();
    let mut outcome = crate::assert::outcome(&exec, &verdicts, false);
    // JUnit first, so the JSON's outcome can include a JUnit file that failed.
    if let Some(path) = &a.junit {
        if !write_file(path, |f| {
            crate::report::junit::write(&p, &exec, &verdicts, f)
        }) {
            outcome = crate::assert::outcome(&exec, &verdicts, true);
        }
    }
    if let Some(path) = &a.json {
        let json_outcome = outcome;
        if !write_file(path, |f| {
            crate::report::json::write(&p, &exec, &verdicts, json_outcome, f)
        }) {
            outcome = crate::assert::outcome(&exec, &verdicts, true);
        }
    }
    if let Some(path) = &a.html {
        let file = crate::report::json::ResultFile::new(&p, &exec, &verdicts, outcome);
        if let Err(e) = super::report::write_html(&file, path) {
            eprintln!("error: cannot write {}: {e}", path.display());
            outcome = crate::assert::outcome(&exec, &verdicts, true);
        }
    }
    if let Some(f) = &exec.failure {
        eprintln!("error: {f}");
    }
    if exec.interrupted {
        eprintln!("interrupted: the report above covers what was measured before the signal");
    }
    // Dropping the runtime would wait for a blocking call an interrupt gave up on (a connect
    // to a cluster that does not answer).
    rt.shutdown_background();
    outcome
}

/// Ctrl-C and SIGTERM (CI timeouts, `docker stop`, Kubernetes) stop the run the same way: the
/// first lets it report and clean up; a second ends the process at once, saying what it
/// leaves behind.
async fn signals(interrupt: Arc<AtomicBool>, live_topic: LiveTopic) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        eprintln!("warning: cannot listen for signals; an interrupt ends the run unreported");
        return;
    };
    let mut first = true;
    loop {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        if first {
            first = false;
            interrupt.store(true, Ordering::SeqCst);
            eprintln!("interrupted: stopping and cleaning up (interrupt again to exit at once)");
            continue;
        }
        let left = match live_topic.get() {
            Some(t) => format!("topic {t} is left behind"),
            None => "nothing is left behind".into(),
        };
        eprintln!("interrupted again: exiting without a report; {left}");
        std::process::exit(i32::from(Outcome::Interrupted.code()));
    }
}

/// Whether `path` can be written as a file, found out without changing it: an existing file
/// is opened for writing (not truncated); a new one is created and removed again.
pub(super) fn writable(path: &Path) -> std::io::Result<()> {
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    if path.exists() {
        open.open(path).map(drop)
    } else {
        open.create_new(true).open(path)?;
        std::fs::remove_file(path)
    }
}

/// Writes one report file; a failure is said on stderr (the report is on stdout already).
/// False when it failed.
fn write_file(path: &Path, write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>) -> bool {
    match std::fs::File::create(path).and_then(|mut f| write(&mut f)) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            false
        }
    }
}
