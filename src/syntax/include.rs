//! Loading: reads a scenario file and splices in the files it includes, refusing cycles, deep
//! nesting and files no scenario could be (devices, FIFOs, anything over the size limit). Every file read is added to [`Sources`].

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{parse, parse_fragment, Ast, Entry};
use crate::diagnostic::{shown_folder, Diagnostic, Diagnostics, Kind};
use crate::source::Sources;

/// Files larger than this are refused before parsing: no scenario is this big.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Deeper than any sensible layering of shared settings; bounds the recursion on a mistake.
const MAX_INCLUDE_DEPTH: usize = 8;

/// A parsed scenario file with its includes spliced in, and what went wrong with includes.
pub struct Loaded {
    pub ast: Ast,
    /// Includes that could not be read or parsed. They are left out of `ast`, so the rest of
    /// the file can still be checked and every problem reported at once.
    pub include_errors: Diagnostics,
}

/// Reads and parses a scenario file, splicing in included files. Every file read is added to
/// `sources` so diagnostics can show it. Err only when the file itself cannot be read or parsed.
pub fn load(path: &Path, sources: &mut Sources) -> Result<Loaded, Diagnostics> {
    let text = read_text(path, Origin::CommandLine).map_err(Diagnostics::from)?;
    let id = sources.add(path.to_path_buf(), text);
    let text = sources.get(id).text.clone();
    let mut ast = parse(id, &text)?;
    let mut include_errors = Diagnostics::default();
    let mut including = vec![path.canonicalize().unwrap_or_else(|_| path.to_path_buf())];
    ast.entries = expand(
        std::mem::take(&mut ast.entries),
        sources,
        &mut including,
        &mut include_errors,
    );
    Ok(Loaded {
        ast,
        include_errors,
    })
}

/// What may be read: the scenario named on the command line may be a pipe (`<(generate)`),
/// an included file must be a regular file: a FIFO would block and a device never end.
#[derive(Clone, Copy, PartialEq)]
enum Origin {
    CommandLine,
    Include,
}

fn read_text(path: &Path, origin: Origin) -> Result<String, Diagnostic> {
    let shown = path.display();
    let cannot = |e: std::io::Error| {
        Diagnostic::unplaced(Kind::Io, format!("cannot read {shown}: {}", io_reason(&e)))
    };
    // stat, not open: opening a FIFO blocks until someone writes to it.
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if meta.is_dir() {
        return Err(Diagnostic::unplaced(
            Kind::Io,
            format!("{shown} is a directory, not a scenario file"),
        ));
    }
    if origin == Origin::Include && !meta.is_file() {
        return Err(Diagnostic::unplaced(
            Kind::Io,
            format!("{shown} is not a regular file (a device, a pipe or a socket)"),
        ));
    }
    let too_big = || {
        Diagnostic::unplaced(
            Kind::Io,
            format!(
                "{shown} is too big: a scenario file is at most {} MiB",
                MAX_FILE_BYTES >> 20
            ),
        )
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big());
    }
    // Bounded even after the size check: a pipe has no size, and a file can grow meanwhile.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| {
        Diagnostic::unplaced(
            Kind::Io,
            format!(
                "{shown} is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
        .help("scenario files are UTF-8 text")
    })
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Replaces each `include` with the included file's entries, recursively. `including` holds the
/// files whose includes are being expanded, outermost first: meeting one again is a cycle.
fn expand(
    entries: Vec<Entry>,
    sources: &mut Sources,
    including: &mut Vec<PathBuf>,
    diags: &mut Diagnostics,
) -> Vec<Entry> {
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        match e {
            Entry::Include(p) => {
                let dir = sources.get(p.span.file).dir().to_path_buf();
                let path = dir.join(&p.node);
                let canon = path.canonicalize().unwrap_or_else(|_| path.clone());
                if including.contains(&canon) {
                    diags.push(
                        Diagnostic::new(
                            Kind::Include,
                            p.span,
                            format!("{} includes itself", p.node),
                        )
                        .label("include cycle"),
                    );
                    continue;
                }
                if including.len() > MAX_INCLUDE_DEPTH {
                    diags.push(
                        Diagnostic::new(Kind::Include, p.span, "includes nest too deeply")
                            .label("here"),
                    );
                    continue;
                }
                let text = match read_text(&path, Origin::Include) {
                    Ok(t) => t,
                    Err(d) => {
                        diags.push(
                            Diagnostic::new(Kind::Include, p.span, d.message)
                                .label("this include")
                                .help(format!(
                                    "paths are relative to the including file's folder ({})",
                                    shown_folder(&dir)
                                )),
                        );
                        continue;
                    }
                };
                let id = sources.add(path, text);
                let text = sources.get(id).text.clone();
                match parse_fragment(id, &text) {
                    Ok(inner) => {
                        including.push(canon);
                        out.extend(expand(inner, sources, including, diags));
                        including.pop();
                    }
                    Err(d) => diags.push(d),
                }
            }
            Entry::Section(mut s) => {
                s.entries = expand(std::mem::take(&mut s.entries), sources, including, diags);
                out.push(Entry::Section(s));
            }
            other => out.push(other),
        }
    }
    out
}
