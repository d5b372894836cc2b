//! `kafkabench fmt`: rewrite scenario files in the canonical layout, or with `--check` list the
//! files that are not (with a short diff) and exit 1.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::{finish_output, print_diagnostics, FmtArgs};
use crate::diagnostic::{Diagnostic, Diagnostics, Kind};
use crate::exit::Outcome;
use crate::source::Sources;

/// At most this many lines of diff per file: enough to see what changes, not a second copy.
const DIFF_LINES: usize = 40;

pub(super) fn command(a: &FmtArgs) -> Outcome {
    let mut invalid = false;
    let mut unformatted = false;
    let mut out = std::io::stdout().lock();
    let mut written = Ok(());
    for path in &a.files {
        let stdin = path.as_os_str() == "-";
        let shown = if stdin {
            PathBuf::from("<stdin>")
        } else {
            path.clone()
        };
        let mut sources = Sources::default();
        let text = match read(path, stdin) {
            Ok(t) => t,
            Err(d) => {
                invalid = true;
                print_diagnostics(&Diagnostics::from(d), &sources);
                continue;
            }
        };
        let id = sources.add(shown.clone(), text.clone());
        let formatted = match crate::syntax::fmt::format(id, &text) {
            Ok(f) => f,
            Err(d) => {
                invalid = true;
                print_diagnostics(&Diagnostics::from(d), &sources);
                continue;
            }
        };
        let result = if a.check {
            if formatted == text {
                Ok(())
            } else {
                unformatted = true;
                write_diff(&mut out, &shown, &text, &formatted)
            }
        } else if stdin {
            out.write_all(formatted.as_bytes())
        } else if formatted != text {
            match replace(path, &formatted) {
                Ok(()) => writeln!(out, "formatted {}", shown.display()),
                Err(e) => {
                    invalid = true;
                    let d = Diagnostic::unplaced(
                        Kind::Io,
                        format!("cannot write {}: {e}", shown.display()),
                    );
                    print_diagnostics(&Diagnostics::from(d), &sources);
                    Ok(())
                }
            }
        } else {
            Ok(())
        };
        written = written.and(result);
    }
    // A file that would change fails the check like a failed assertion fails a run: exit 1.
    let outcome = if invalid {
        Outcome::Invalid
    } else if unformatted {
        Outcome::AssertionFailed
    } else {
        Outcome::Ok
    };
    finish_output(outcome, written.and_then(|()| out.flush()))
}

fn read(path: &Path, stdin: bool) -> Result<String, Diagnostic> {
    let shown = if stdin {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    };
    let mut text = String::new();
    let read = if stdin {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else if path.is_dir() {
        return Err(Diagnostic::unplaced(
            Kind::Io,
            format!("{shown} is a directory, not a scenario file"),
        ));
    } else {
        std::fs::read_to_string(path).map(|t| text = t)
    };
    read.map(|()| text)
        .map_err(|e| Diagnostic::unplaced(Kind::Io, format!("cannot read {shown}: {e}")))
}

/// `would reformat FILE` and a unified diff, cut after [`DIFF_LINES`] lines.
fn write_diff(out: &mut dyn Write, path: &Path, old: &str, new: &str) -> std::io::Result<()> {
    writeln!(out, "would reformat {}", path.display())?;
    let shown = path.display().to_string();
    let diff = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(1)
        .header(&shown, &format!("{shown} (formatted)"))
        .to_string();
    let lines: Vec<&str> = diff.lines().collect();
    for line in lines.iter().take(DIFF_LINES) {
        writeln!(out, "{line}")?;
    }
    if lines.len() > DIFF_LINES {
        writeln!(out, "... {} more diff lines", lines.len() - DIFF_LINES)?;
    }
    Ok(())
}

/// Writes a temporary file beside the file and renames it over, so a reader or a crash never
/// sees half a file. A symbolic link stays a link: its target is what gets replaced.
fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    let target = std::fs::canonicalize(path)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.fmt-tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.set_permissions(std::fs::metadata(&target)?.permissions())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
