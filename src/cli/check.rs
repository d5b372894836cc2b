//! `kafkabench check`: validate scenario files, diagnostics as text or JSON.

use std::io::Write;

use super::{finish_output, load, print_diagnostics, CheckArgs, DiagFormat};
use crate::diagnostic::{render_json, Diagnostics};
use crate::exit::Outcome;
use crate::format::plural;

pub(super) fn command(a: &CheckArgs) -> Outcome {
    let mut outcome = Outcome::Ok;
    let mut json_out = Vec::new();
    let mut out = std::io::stdout().lock();
    // The first failed write ends the output (a closed pipe stays closed); checking goes on,
    // so the exit code still says whether every file is valid.
    let mut written = Ok(());
    for f in &a.files {
        let (sources, result) = load(f);
        match (result, a.format) {
            (Ok(s), DiagFormat::Text) => {
                if !s.notes.is_empty() {
                    print_diagnostics(
                        &Diagnostics {
                            items: s.notes.clone(),
                        },
                        &sources,
                    );
                }
                let runs = s.cells.len();
                if written.is_ok() {
                    written = writeln!(
                        out,
                        "{}: ok ({} run{}, {} assertion{})",
                        f.display(),
                        runs,
                        plural(runs),
                        s.assertions.len(),
                        plural(s.assertions.len())
                    );
                }
            }
            (Ok(s), DiagFormat::Json) => {
                // A valid file's diagnostics are its notes.
                let notes = render_json(&Diagnostics { items: s.notes }, &sources);
                json_out.push(serde_json::json!({
                    "file": f.display().to_string(),
                    "ok": true,
                    "diagnostics": notes["diagnostics"],
                }));
            }
            (Err(d), DiagFormat::Text) => {
                outcome = Outcome::Invalid;
                print_diagnostics(&d, &sources);
            }
            (Err(d), DiagFormat::Json) => {
                outcome = Outcome::Invalid;
                let mut v = render_json(&d, &sources);
                v["file"] = serde_json::json!(f.display().to_string());
                v["ok"] = serde_json::json!(false);
                json_out.push(v);
            }
        }
    }
    if a.format == DiagFormat::Json {
        let doc = serde_json::json!({"schema_version": 1, "files": json_out});
        written = written.and_then(|()| {
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            )
        });
    }
    finish_output(outcome, written.and_then(|()| out.flush()))
}
