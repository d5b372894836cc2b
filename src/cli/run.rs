//! `kafkabench run` and `kafkabench test`: load and check every file, then per file plan,
//! execute, assert, report, and say why it stopped; a suite ends with its summary line.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use super::suite::{self, Tally};
use super::{load, only, print_diagnostics, progress, RunArgs};
use crate::assert::Verdict;
use crate::exit::Outcome;
use crate::format::plural;
use crate::model::Scenario;
use crate::plan::{new_run_id, plan, run_id_overflows, Plan, PlanOptions, Selection};
use crate::report::json::ResultFile;
use crate::report::junit::{Skipped, Suite};
use crate::run::{execute, Coordination, Execution, LiveFaults, LiveTopic, RunOptions};
use crate::shard::{ShardArgs, ShardRun};
use crate::source::Sources;

pub(super) fn command(a: &RunArgs, always_summary: bool) -> Outcome {
    let prepared = match prepare(a) {
        Ok(p) => p,
        Err(outcome) => return outcome,
    };
    let metrics = match super::metrics::start(&a.metrics) {
        Ok(m) => m,
        Err(outcome) => return outcome,
    };
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(outcome) => return outcome,
    };
    let live = Live {
        metrics,
        ..Live::default()
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    rt.spawn(signals(
        interrupt.clone(),
        live.topic.clone(),
        live.faults.clone(),
    ));
    let mut outcome = Outcome::Ok;
    let mut tally = Tally::default();
    let mut done: Vec<FileRun> = Vec::new();
    let mut names = ReportNames::default();
    let files = &prepared.files;
    for (k, file) in files.iter().enumerate() {
        if interrupt.load(Ordering::SeqCst) {
            tally.files_not_run = files.len() - k;
            break;
        }
        let ctx = FileContext {
            a,
            several: prepared.several,
            first: k == 0,
            sharding: &prepared.sharding,
            live: &live,
            rt: &rt,
            interrupt: &interrupt,
        };
        let (fr, file_outcome) = run_file(&ctx, file, &mut tally, &mut names);
        outcome = outcome.worst(file_outcome);
        done.push(fr);
    }
    if prepared.several && !write_junit(a, &done) {
        outcome = outcome.worst(Outcome::RunFailed);
    }
    if prepared.several || always_summary || !a.only.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "\n{}", tally.line());
        let _ = out.flush();
    }
    // Dropping the runtime would wait for a blocking call an interrupt gave up on (a connect
    // to a cluster that does not answer).
    rt.shutdown_background();
    if let Some(m) = &live.metrics {
        m.linger(a.metrics.metrics_linger, &interrupt);
    }
    outcome
}

/// One scenario file of the invocation, loaded, checked and planned (once: `--only` and
/// sharding are decided over this plan).
struct Loaded {
    path: PathBuf,
    sources: Sources,
    plan: Plan,
    scenario: Scenario,
}

/// Every file ready to run, or `Invalid` with every reason said (all diagnostics of all files
/// at once, before anything runs).
struct Prepared {
    files: Vec<Loaded>,
    several: bool,
    sharding: Option<Arc<ShardRun>>,
}

fn prepare(a: &RunArgs) -> Result<Prepared, Outcome> {
    let (paths, mut errors) = suite::expand(&a.files);
    let several = paths.len() > 1;
    // Before any work: a report that cannot be written would otherwise be found out only
    // after the whole run.
    errors.extend(unwritable(a, several));
    // One id for the whole invocation: every topic of the suite carries it.
    let opts = PlanOptions {
        bootstrap: a.scaling.bootstrap.clone(),
        scale: a.scaling.scale,
        repeat: a.scaling.repeat,
        run_id: a.run_id.clone().unwrap_or_else(new_run_id),
    };
    let mut files = Vec::new();
    let mut invalid = false;
    for path in paths {
        let (sources, result) = load(&path);
        match result {
            Ok(scenario) => {
                if let Some(id) = &a.run_id {
                    let overflow = run_id_overflows(&scenario, id);
                    errors.extend(overflow.into_iter().map(|m| format!("error: {m}")));
                }
                if !scenario.notes.is_empty() && !a.quiet {
                    let notes = crate::diagnostic::Diagnostics {
                        items: scenario.notes.clone(),
                    };
                    print_diagnostics(&notes, &sources);
                }
                let plan = plan(&scenario, &opts);
                let undriven = crate::run::driven::undriven(&plan);
                errors.extend(undriven.into_iter().map(|m| format!("error: {m}")));
                // Built-in faults (kill, pause, restart) need a kafka-local cluster: said
                // before anything runs.
                let preflight = crate::run::faults::preflight(&plan);
                errors.extend(preflight.into_iter().map(|m| format!("error: {m}")));
                // Record sizes drawn past the limits that refuse them: a warning, not a
                // refusal (the failures may be the experiment).
                for w in plan
                    .runs
                    .iter()
                    .flat_map(crate::plan::limits::before_the_run)
                {
                    eprintln!("warning: {w}");
                }
                files.push(Loaded {
                    path,
                    sources,
                    plan,
                    scenario,
                });
            }
            Err(d) => {
                print_diagnostics(&d, &sources);
                invalid = true;
            }
        }
    }
    // Said only when every file loaded: a variable may live in the file that did not.
    if !invalid {
        let scenarios: Vec<&Scenario> = files.iter().map(|f| &f.scenario).collect();
        let problems = only::problems(&a.only, &scenarios);
        errors.extend(problems.into_iter().map(|m| format!("error: {m}")));
    }
    let sharding = match &a.shard {
        Some(text) if !invalid => match shard_args(a, text, &files) {
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
        return Err(Outcome::Invalid);
    }
    Ok(Prepared {
        files,
        several,
        sharding,
    })
}

/// The invocation-wide state every file's run shares.
#[derive(Default)]
struct Live {
    topic: LiveTopic,
    faults: LiveFaults,
    /// `--metrics`' endpoint, serving every file's runs.
    metrics: Option<Arc<super::metrics::Metrics>>,
}

/// The report files' names used so far (several files sharing a stem are told apart).
#[derive(Default)]
struct ReportNames {
    json: Vec<String>,
    html: Vec<String>,
}

/// What running one file needs from the invocation.
struct FileContext<'a> {
    a: &'a RunArgs,
    several: bool,
    first: bool,
    sharding: &'a Option<Arc<ShardRun>>,
    live: &'a Live,
    rt: &'a tokio::runtime::Runtime,
    interrupt: &'a Arc<AtomicBool>,
}

/// One file: its selected runs executed, judged, reported (table, verdicts, files), and how
/// it ended.
fn run_file(
    ctx: &FileContext,
    file: &Loaded,
    tally: &mut Tally,
    names: &mut ReportNames,
) -> (FileRun, Outcome) {
    let a = ctx.a;
    let full = &file.plan;
    let mut out = std::io::stdout().lock();
    if ctx.several {
        let gap = if ctx.first { "" } else { "\n" };
        let _ = writeln!(out, "{gap}== {} ==", file.path.display());
    }
    let selection = Selection::of(full, |i| only::selects(&a.only, &file.scenario, i));
    let skipped = suite::skipped(full, selection.mask());
    let chosen = selection.len();
    if !a.only.is_empty() {
        let _ = writeln!(
            out,
            "--only: {chosen} of {} run{} selected",
            full.runs.len(),
            plural(full.runs.len())
        );
    }
    drop(out);
    // Bars where someone watches, a plain line every few seconds in a CI log; none with
    // --quiet.
    let live = (!a.quiet && !selection.is_empty())
        .then(|| progress::on_stderr(full, &selection, std::io::stderr().is_terminal()));
    let metrics = (ctx.live.metrics.as_ref()).map(|m| m.file(full, a.shard.as_deref()));
    let opts = RunOptions {
        keep_topics: a.keep_topics,
        progress: super::metrics::both(live.as_ref().map(|l| l.sink()), metrics),
        live_topic: ctx.live.topic.clone(),
        interval: a.interval,
        live_faults: ctx.live.faults.clone(),
        shard: ctx.sharding.clone().map(|s| s as Arc<dyn Coordination>),
        rounds: None,
        live_latency: ctx.live.metrics.is_some(),
        // `execute` turns it on for a plan with a backlog.
        by_due: false,
    };
    let started = SystemTime::now();
    let exec = if selection.is_empty() {
        Execution::default()
    } else {
        ctx.rt
            .block_on(execute(full, &selection, &opts, ctx.interrupt.clone()))
    };
    if let Some(l) = &live {
        l.finish();
    }
    // A shard's figures are its share: the collector judges `expect` on the merged ones.
    let verdicts = match ctx.sharding {
        None => crate::assert::evaluate(full, &exec.results),
        Some(_) => Vec::new(),
    };
    let fr = FileRun {
        plan: full.clone(),
        exec,
        verdicts,
        skipped,
    };
    print_file(ctx, &fr, chosen);
    tally.add(&fr.verdicts, &fr.exec.cut_short(), fr.skipped.len());
    tally.files_failed += usize::from(fr.exec.failure.is_some());
    let outcome = write_reports(ctx, file, &fr, started, names);
    if let Some(f) = &fr.exec.failure {
        eprintln!("error: {f}");
    }
    if fr.exec.interrupted {
        eprintln!("interrupted: the report above covers what was measured before the signal");
    }
    (fr, outcome)
}

/// The table, the verdicts and what was not judged, on stdout.
fn print_file(ctx: &FileContext, fr: &FileRun, chosen: usize) {
    let mut out = std::io::stdout().lock();
    if chosen > 0 {
        let _ = crate::report::table::write(&fr.plan, &fr.exec, &mut out);
    }
    let _ = crate::report::verdicts_text(&fr.verdicts, &mut out);
    if let Some(s) = ctx.sharding {
        let _ = writeln!(
            out,
            "\nshard {} of {}: the figures above are this shard's share; `kafkabench \
             collect` merges every shard's and judges `expect` once",
            s.shard.index, s.shard.count
        );
    }
    if fr.verdicts.is_empty() && !fr.skipped.is_empty() {
        let _ = writeln!(out, "\nexpect: no check judged");
    }
    let _ = skipped_text(&fr.skipped, &mut out);
    let _ = out.flush();
}

/// The file's JUnit (when it is the only file), JSON and HTML reports; the file's outcome,
/// worse when one of them could not be written.
fn write_reports(
    ctx: &FileContext,
    file: &Loaded,
    fr: &FileRun,
    started: SystemTime,
    names: &mut ReportNames,
) -> Outcome {
    let a = ctx.a;
    let mut outcome = crate::assert::outcome(&fr.exec, &fr.verdicts, false);
    let failed_output = || crate::assert::outcome(&fr.exec, &fr.verdicts, true);
    // One file: JUnit first, so the JSON's outcome can include a JUnit file that failed.
    if !ctx.several && !write_junit(a, std::slice::from_ref(fr)) {
        outcome = failed_output();
    }
    if a.json.is_none() && a.html.is_none() {
        return outcome;
    }
    let result = ResultFile::new(&fr.plan, &fr.exec, &fr.verdicts, outcome)
        .with_sources(&file.sources)
        .started(started)
        .interval(a.interval);
    if let Some(json) = &a.json {
        let path = suite::report_path(json, &file.path, ctx.several, "json", &mut names.json);
        if !write_file(&path, |f| result.write(f)) {
            outcome = failed_output();
        }
    }
    if let Some(html) = &a.html {
        let path = suite::report_path(html, &file.path, ctx.several, "html", &mut names.html);
        if let Err(e) = super::report::write_html(&result, &path) {
            eprintln!("error: cannot write {}: {e}", path.display());
            outcome = failed_output();
        }
    }
    outcome
}

/// A shard's part in a sharded run, from `--shard` and the one scenario it runs; or every
/// reason it cannot take part.
fn shard_args(a: &RunArgs, text: &str, loaded: &[Loaded]) -> Result<Arc<ShardRun>, Vec<String>> {
    let files = loaded.len();
    let job_index = std::env::var("JOB_COMPLETION_INDEX").ok();
    let args = ShardArgs {
        shard: text,
        job_index: job_index.as_deref(),
        run_id: a.run_id.is_some(),
        files,
        only: !a.only.is_empty(),
    };
    let planned = loaded.first().map(|f| (&f.sources, &f.plan));
    ShardRun::prepare(&args, planned).map(Arc::new)
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
