//! `kafkabench report`: a saved result file shown again — the table and the verdicts on
//! stdout, and with `--html` the self-contained page. A viewer: its exit code says whether it
//! could show the file (0, or 2 for an unreadable or invalid one), not how the run went.

use std::io::Write;

use super::{finish_output, run::writable, ReportArgs};
use crate::exit::Outcome;
use crate::report::json::ResultFile;

pub(super) fn command(a: &ReportArgs) -> Outcome {
    let file = match ResultFile::read(&a.file) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return Outcome::Invalid;
        }
    };
    if let Some(path) = &a.html {
        if let Err(e) = writable(path) {
            eprintln!("error: cannot write --html {}: {e}", path.display());
            return Outcome::Invalid;
        }
    }
    let mut out = std::io::stdout().lock();
    let written = render(&file, &mut out).and_then(|()| out.flush());
    let mut outcome = finish_output(Outcome::Ok, written);
    if let Some(path) = &a.html {
        if let Err(e) = write_html(&file, path) {
            eprintln!("error: cannot write {}: {e}", path.display());
            outcome = Outcome::RunFailed;
        }
    }
    outcome
}

/// What `run` printed, from what the file keeps, and how that run ended.
fn render(f: &ResultFile, out: &mut dyn Write) -> std::io::Result<()> {
    crate::report::table::write_results(&f.scenario, f.planned_runs, &f.runs, &f.notes, out)?;
    crate::report::verdicts_text(&f.verdicts(), out)?;
    if let Some(failure) = &f.failure {
        writeln!(out, "run failed: {failure}")?;
    }
    if f.interrupted {
        writeln!(
            out,
            "interrupted: the figures cover what was measured before the signal"
        )?;
    }
    writeln!(
        out,
        "outcome: {} (the run exited {}); run {}{}",
        f.outcome,
        f.exit_code,
        f.run_id,
        f.started_at
            .as_ref()
            .map_or(String::new(), |t| format!(", started {t}"))
    )
}

/// Writes the HTML report of a result file (also what `run --html` calls).
pub(super) fn write_html(f: &ResultFile, path: &std::path::Path) -> std::io::Result<()> {
    std::fs::write(path, crate::report::html::page(f))
}

/// The report files of a merged run (`merge`, `collect`), asked for with `--junit`, `--json`
/// and `--html`.
pub(super) struct Outputs<'a> {
    pub junit: Option<&'a std::path::Path>,
    pub json: Option<&'a std::path::Path>,
    pub html: Option<&'a std::path::Path>,
}

/// Writes the JUnit file first, then the result file (made by `result` from the outcome so
/// far, so a JUnit file that failed is in it) and its HTML page; each failure is said on
/// stderr and makes the outcome a failed run.
pub(super) fn write_outputs(
    o: &Outputs,
    p: &crate::plan::Plan,
    exec: &crate::run::Execution,
    verdicts: &[crate::assert::Verdict],
    mut outcome: Outcome,
    result: impl FnOnce(Outcome) -> ResultFile,
) -> Outcome {
    let failed_output = || crate::assert::outcome(exec, verdicts, true);
    if let Some(path) = o.junit {
        let w = std::fs::File::create(path)
            .and_then(|mut f| crate::report::junit::write(p, exec, verdicts, &mut f));
        if let Err(e) = w {
            eprintln!("error: cannot write {}: {e}", path.display());
            outcome = outcome.worst(failed_output());
        }
    }
    if o.json.is_none() && o.html.is_none() {
        return outcome;
    }
    let result = result(outcome);
    if let Some(path) = o.json {
        let w = std::fs::File::create(path).and_then(|mut f| result.write(&mut f));
        if let Err(e) = w {
            eprintln!("error: cannot write {}: {e}", path.display());
            outcome = outcome.worst(failed_output());
        }
    }
    if let Some(path) = o.html {
        if let Err(e) = write_html(&result, path) {
            eprintln!("error: cannot write {}: {e}", path.display());
            outcome = outcome.worst(failed_output());
        }
    }
    outcome
}
