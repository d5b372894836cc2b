//! `kafkabench run` and `kafkabench test`: load and check every file, then per file plan,
//! execute, assert, report, and say why it stopped; a suite ends with its summary line.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use super::suite::{self, Tally};
use super::{load, only, print_diagnostics, progress, RunArgs};
use crate::assert::Verdict;
use crate::exit::Outcome;
use crate::format::plural;
use crate::model::Scenario;
use crate::plan::{new_run_id, plan, run_id_overflows, Plan, PlanOptions};
use crate::report::json::ResultFile;
use crate::report::junit::{Skipped, Suite};
use crate::run::{execute, Execution, LiveFaults, LiveTopic, RunOptions, Shard, ShardRun};

pub fn command(a: &RunArgs, always_summary: bool) -> Outcome {
    let (files, mut errors) = suite::expand(&a.files);
    let several = files.len() > 1;
    // Before any work: a report that cannot be written would otherwise be found out only
    // after the whole run.
    errors.extend(unwritable(a, several));
    // Every file is checked before anything runs: all diagnostics of all files at once.
    let mut loaded = Vec::new();
    let mut invalid = false;
    for f in &files {
        let (sources, result) = load(f);
        match result {
            Ok(s) => loaded.push((f.clone(), sources, s)),
            Err(d) => {
                print_diagnostics(&d, &sources);
                invalid = true;
            }
        }
    }
    // Said only when every file loaded: a variable may live in the file that did not.
    if !invalid {
        let scenarios: Vec<&Scenario> = loaded.iter().map(|(_, _, s)| s).collect();
        errors.extend(
            only::problems(&a.only, &scenarios)
                .into_iter()
                .map(|m| format!("error: {m}")),
        );
    }
    if let Some(id) = &a.run_id {
        for (_, _, s) in &loaded {
            errors.extend(
                run_id_overflows(s, id)
                    .into_iter()
                    .map(|m| format!("error: {m}")),
            );
        }
    }
    // Built-in faults (kill, pause, restart) need a kafka-local cluster: said before anything runs.
    for (_, _, s) in &loaded {
        let p = plan(
            s,
            &PlanOptions {
                bootstrap: a.scaling.bootstrap.clone(),
                scale: a.scaling.scale,
                ..PlanOptions::default()
            },
        );
        errors.extend(
            crate::run::faults::preflight(&p)
                .into_iter()
                .map(|m| format!("error: {m}")),
        );
    }
    let sharding = match &a.shard {
        Some(text) if !invalid => match shard_args(a, text, files.len(), &loaded) {
            Ok(s) => Some(s),
            Err(e) => {
                errors.extend(e.into_iter().map(|m| format!("error: {m}")));
                None
            }
        },
        _ => None,
    };
    if invalid || !errors.is_empty() {
        for e in &errors {
            eprintln!("{e}");
        }
        return Outcome::Invalid;
    }
    let live_topic = LiveTopic::default();
    let live_faults = LiveFaults::default();
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(outcome) => return outcome,
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    rt.spawn(signals(
        interrupt.clone(),
        live_topic.clone(),
        live_faults.clone(),
    ));
    // One id for the whole invocation: every topic of the suite carries it.
    let run_id = a.run_id.clone().unwrap_or_else(new_run_id);
    let mut outcome = Outcome::Ok;
    let mut tally = Tally::default();
    let mut done: Vec<FileRun> = Vec::new();
    let (mut json_names, mut html_names) = (Vec::new(), Vec::new());
    for (k, (file, sources, scenario)) in loaded.iter().enumerate() {
        if interrupt.load(Ordering::SeqCst) {
            tally.files_not_run = loaded.len() - k;
            break;
        }
        let mut out = std::io::stdout().lock();
        if several {
            let gap = if k == 0 { "" } else { "\n" };
            let _ = writeln!(out, "{gap}== {} ==", file.display());
        }
        let full = plan(
            scenario,
            &PlanOptions {
                bootstrap: a.scaling.bootstrap.clone(),
                scale: a.scaling.scale,
                run_id: run_id.clone(),
            },
        );
        let selected: Vec<bool> = (0..full.runs.len())
            .map(|i| only::selects(&a.only, scenario, i))
            .collect();
        let skipped = suite::skipped(&full, &selected);
        let chosen = selected.iter().filter(|x| **x).count();
        if !a.only.is_empty() {
            let _ = writeln!(
                out,
                "--only: {chosen} of {} run{} selected",
                full.runs.len(),
                plural(full.runs.len())
            );
        }
        drop(out);
        let (sub, original) = selected_plan(&full, &selected);
        // Bars where someone watches, a plain line every few seconds in a CI log; none with
        // --quiet.
        let live = (!a.quiet && !sub.runs.is_empty())
            .then(|| progress::on_stderr(&sub, std::io::stderr().is_terminal()));
        let opts = RunOptions {
            keep_topics: a.keep_topics,
            progress: live.as_ref().map(|l| l.sink()),
            live_topic: live_topic.clone(),
            interval: a.interval,
            live_faults: live_faults.clone(),
            shard: sharding.clone(),
        };
        let started = SystemTime::now();
        let exec = run_selected(&rt, &sub, &original, &opts, &interrupt);
        if let Some(l) = &live {
            l.finish();
        }
        // A shard's figures are its share: the collector judges `expect` on the merged ones.
        let verdicts = match &sharding {
            None => crate::assert::evaluate(&full, &exec.results),
            Some(_) => Vec::new(),
        };
        let mut out = std::io::stdout().lock();
        if chosen > 0 {
            let _ = crate::report::table::write(&full, &exec, &mut out);
        }
        let _ = crate::report::verdicts_text(&verdicts, &mut out);
        if let Some(s) = &sharding {
            let _ = writeln!(
                out,
                "\nshard {} of {}: the figures above are this shard's share; `kafkabench \
                 collect` merges every shard's and judges `expect` once",
                s.shard.index, s.shard.count
            );
        }
        if verdicts.is_empty() && !skipped.is_empty() {
            let _ = writeln!(out, "\nexpect: no check judged");
        }
        let _ = skipped_text(&skipped, &mut out);
        let _ = out.flush();
        drop(out);
        tally.add(&verdicts, &exec.cut_short(), skipped.len());
        tally.files_failed += usize::from(exec.failure.is_some());
        let mut file_outcome = crate::assert::outcome(&exec, &verdicts, false);
        let fr = FileRun {
            plan: full,
            exec,
            verdicts,
            skipped,
        };
        // One file: JUnit first, so the JSON's outcome can include a JUnit file that failed.
        if !several && !write_junit(a, std::slice::from_ref(&fr)) {
            file_outcome = crate::assert::outcome(&fr.exec, &fr.verdicts, true);
        }
        if a.json.is_some() || a.html.is_some() {
            let result = ResultFile::new(&fr.plan, &fr.exec, &fr.verdicts, file_outcome)
                .with_sources(sources)
                .started(started)
                .interval(a.interval);
            if let Some(json) = &a.json {
                let path = suite::report_path(json, file, several, "json", &mut json_names);
                if !write_file(&path, |f| result.write(f)) {
                    file_outcome = crate::assert::outcome(&fr.exec, &fr.verdicts, true);
                }
            }
            if let Some(html) = &a.html {
                let path = suite::report_path(html, file, several, "html", &mut html_names);
                if let Err(e) = super::report::write_html(&result, &path) {
                    eprintln!("error: cannot write {}: {e}", path.display());
                    file_outcome = crate::assert::outcome(&fr.exec, &fr.verdicts, true);
                }
            }
        }
        if let Some(f) = &fr.exec.failure {
            eprintln!("error: {f}");
        }
        if fr.exec.interrupted {
            eprintln!("interrupted: the report above covers what was measured before the signal");
        }
        outcome = outcome.worst(file_outcome);
        done.push(fr);
    }
    if several && !write_junit(a, &done) {
        outcome = outcome.worst(Outcome::RunFailed);
    }
    if several || always_summary || !a.only.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "\n{}", tally.line());
        let _ = out.flush();
    }
    // Dropping the runtime would wait for a blocking call an interrupt gave up on (a connect
    // to a cluster that does not answer).
    rt.shutdown_background();
    outcome
}

/// A shard's part in a sharded run, from `--shard` and the one scenario it runs; or every
/// reason it cannot take part.
fn shard_args(
    a: &RunArgs,
    text: &str,
    files: usize,
    loaded: &[(std::path::PathBuf, crate::source::Sources, Scenario)],
) -> Result<Arc<ShardRun>, Vec<String>> {
    let job_index = std::env::var("JOB_COMPLETION_INDEX").ok();
    let shard = Shard::parse(text, job_index.as_deref())
        .map_err(|e| vec![format!("--shard {text}: {e}")])?;
    let mut errors = Vec::new();
    if a.run_id.is_none() {
        errors.push(
            "--shard needs --run-id: every shard and the collector name the run's topics and \
             control topic with one id"
                .to_string(),
        );
    }
    if files != 1 {
        errors.push(format!("--shard runs one scenario file, not {files}"));
    }
    if !a.only.is_empty() {
        errors.push(
            "--shard runs every run of the scenario (the collector waits for each): drop --only"
                .into(),
        );
    }
    let Some((_, sources, scenario)) = loaded.first() else {
        return Err(errors);
    };
    let p = plan(
        scenario,
        &PlanOptions {
            bootstrap: a.scaling.bootstrap.clone(),
            scale: a.scaling.scale,
            run_id: a.run_id.clone().unwrap_or_default(),
        },
    );
    errors.extend(super::shard::problems(&p, shard.count));
    if !errors.is_empty() {
        return Err(errors);
    }
    // A little longer than the collector's own default deadline: it, not a shard, gives up.
    let wait = super::shard::planned(&p) + std::time::Duration::from_secs(120);
    Ok(Arc::new(ShardRun::new(
        shard,
        super::shard::digest(sources, &p),
        std::time::Instant::now() + wait,
    )))
}

/// The orchestration's runtime: it is light (the work is on the run's own threads), so one
/// worker will do.
pub(super) fn runtime() -> Result<tokio::runtime::Runtime, Outcome> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("error: cannot start the runtime: {e}");
            Outcome::RunFailed
        })
}

/// One file of the invocation, as run.
struct FileRun {
    /// The whole plan (assertions resolve over every run, selected or not).
    plan: Plan,
    /// Results carry their index in `plan`.
    exec: Execution,
    verdicts: Vec<Verdict>,
    skipped: Vec<Skipped>,
}

/// The selected runs of `full`, numbered 1..n for progress, and each one's index in `full`.
fn selected_plan(full: &Plan, selected: &[bool]) -> (Plan, Vec<usize>) {
    let mut sub = full.clone();
    let original: Vec<usize> = (0..full.runs.len()).filter(|i| selected[*i]).collect();
    sub.runs = original
        .iter()
        .enumerate()
        .map(|(j, i)| {
            let mut r = full.runs[*i].clone();
            r.index = j;
            r
        })
        .collect();
    (sub, original)
}

/// Executes `sub` (from `selected_plan`) and hands back results and failure numbered as in
/// the whole plan.
fn run_selected(
    rt: &tokio::runtime::Runtime,
    sub: &Plan,
    original: &[usize],
    opts: &RunOptions,
    interrupt: &Arc<AtomicBool>,
) -> Execution {
    if sub.runs.is_empty() {
        return Execution {
            results: Vec::new(),
            failure: None,
            interrupted: false,
            notes: Vec::new(),
        };
    }
    let mut exec = rt.block_on(execute(sub, opts, interrupt.clone()));
    for r in &mut exec.results {
        r.index = original[r.index];
    }
    if let Some(f) = &mut exec.failure {
        f.index = original[f.index];
    }
    exec
}

/// `SKIP` per assertion with instances `--only` left unjudged.
fn skipped_text(skipped: &[Skipped], out: &mut dyn Write) -> std::io::Result<()> {
    let mut order: Vec<&str> = Vec::new();
    for s in skipped {
        if !order.contains(&s.assertion.as_str()) {
            order.push(&s.assertion);
        }
    }
    for text in order {
        let n = skipped.iter().filter(|s| s.assertion == text).count();
        writeln!(
            out,
            "  SKIP  {text}  ({n} check{}: --only left out a run {} read{})",
            plural(n),
            if n == 1 { "it" } else { "they" },
            if n == 1 { "s" } else { "" }
        )?;
    }
    Ok(())
}

/// The one JUnit file, when asked for; false when it could not be written.
fn write_junit(a: &RunArgs, files: &[FileRun]) -> bool {
    let Some(path) = &a.junit else {
        return true;
    };
    let suites: Vec<Suite> = files
        .iter()
        .map(|f| Suite {
            plan: &f.plan,
            exec: &f.exec,
            verdicts: &f.verdicts,
            skipped: &f.skipped,
        })
        .collect();
    write_file(path, |f| crate::report::junit::write_suites(&suites, f))
}

/// The report files that cannot be written, said as errors. With several files `--json` and
/// `--html` are directories (created when missing).
fn unwritable(a: &RunArgs, several: bool) -> Vec<String> {
    let mut errors = Vec::new();
    for (flag, ext, given) in [("--json", "json", &a.json), ("--html", "html", &a.html)] {
        let Some(dir) = given.as_deref().filter(|_| several) else {
            continue;
        };
        if dir.is_file() {
            errors.push(format!(
                "error: with several files, {flag} names a directory (one NAME.{ext} per \
                 file); {} is a file",
                dir.display()
            ));
        } else if let Err(e) = std::fs::create_dir_all(dir) {
            errors.push(format!(
                "error: cannot create {flag} {}: {e}",
                dir.display()
            ));
        }
    }
    let json = a.json.as_ref().filter(|_| !several);
    let html = a.html.as_ref().filter(|_| !several);
    for (flag, path) in [
        ("--json", json),
        ("--junit", a.junit.as_ref()),
        ("--html", html),
    ] {
        if let Some(path) = path {
            if let Err(e) = writable(path) {
                errors.push(format!(
                    "error: cannot write {flag} {}: {e}",
                    path.display()
                ));
            }
        }
    }
    errors
}

/// Ctrl-C and SIGTERM (CI timeouts, `docker stop`, Kubernetes) stop the run the same way: the
/// first lets it report and clean up; a second ends the process at once, saying what it
/// leaves behind.
pub(super) async fn signals(
    interrupt: Arc<AtomicBool>,
    live_topic: LiveTopic,
    live_faults: LiveFaults,
) {
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
        // A fault never outlives the run: brokers are continued and restarted before exiting.
        for undone in live_faults.undo_now() {
            eprintln!("interrupted again: {undone}");
        }
        let left = live_topic.left_behind();
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
