//! `kafkabench report`: a saved result file shown again — the table and the verdicts on
//! stdout, and with `--html` the self-contained page. A viewer: its exit code says whether it
//! could show the file (0, or 2 for an unreadable or invalid one), not how the run went.

use std::io::Write;

use super::{finish_output, run::writable, ReportArgs};
use crate::exit::Outcome;
use crate::report::json::ResultFile;

pub fn command(a: &ReportArgs) -> Outcome {
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
    crate::report::verdicts_text(&f.assertions, out)?;
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
pub fn write_html(f: &ResultFile, path: &std::path::Path) -> std::io::Result<()> {
    std::fs::write(path, crate::report::html::page(f))
}
