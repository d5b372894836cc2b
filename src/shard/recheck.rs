//! The scenario a result file carries, checked again: its texts written into a private
//! temporary folder in their original layout (includes resolve relative to the including file),
//! then loaded like any scenario file.

use std::path::{Component, Path, PathBuf};

use crate::diagnostic::{Diagnostic, Diagnostics, Kind};
use crate::model::Scenario;
use crate::source::{FileId, Sources};
use crate::syntax::Entry;

/// Deep enough that includes reaching up with `..` (at most 8 nested) stay inside the folder.
const DEPTH: usize = 8;

/// The carried scenario (its main text, and each include's recorded path and text) checked;
/// Err diagnostics as for a file on disk.
pub(super) fn recheck(
    main: &str,
    includes: &[(&str, &str)],
) -> (Sources, Result<Scenario, Diagnostics>) {
    let unplaced = |m: String| {
        let d = Diagnostic::unplaced(Kind::Io, m);
        (Sources::default(), Err(Diagnostics::from(d)))
    };
    let top = std::env::temp_dir().join(format!(
        "kafkabench-merge-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let root = (0..DEPTH).fold(top.clone(), |p, _| p.join("r"));
    let main_path = root.join(main_dir(main, includes)).join("scenario.kbs");
    let written = std::iter::once((main_path.clone(), main))
        .chain(
            includes
                .iter()
                .map(|(path, text)| (root.join(inside(Path::new(path))), *text)),
        )
        .try_for_each(|(path, text)| {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&path, text)
        });
    let result = match written {
        Ok(()) => {
            let mut sources = Sources::default();
            let checked = crate::check::load(&main_path, &mut sources);
            (sources, checked)
        }
        Err(e) => unplaced(format!(
            "cannot write the carried scenario to {}: {e}",
            top.display()
        )),
    };
    let _ = std::fs::remove_dir_all(&top);
    result
}

/// The main file's folder, as the run saw it: an include's recorded path is that folder
/// joined with the path the include line names, so the first include of the main file gives
/// it away. Empty without includes.
fn main_dir(main: &str, includes: &[(&str, &str)]) -> PathBuf {
    let (Ok(ast), Some((recorded, _))) = (crate::syntax::parse(FileId(0), main), includes.first())
    else {
        return PathBuf::new();
    };
    let Some(named) = first_include(&ast.entries) else {
        return PathBuf::new();
    };
    let dir = recorded.strip_suffix(named.as_str()).unwrap_or_default();
    inside(Path::new(dir))
}

/// Includes are expanded depth-first in the order written, so the first met is the main
/// file's first include line (sections included).
fn first_include(entries: &[Entry]) -> Option<String> {
    entries.iter().find_map(|e| match e {
        Entry::Include(p) => Some(p.node.clone()),
        Entry::Section(s) => first_include(&s.entries),
        _ => None,
    })
}

/// An absolute path made relative (its root dropped), so it lands inside the folder.
fn inside(p: &Path) -> PathBuf {
    p.components()
        .filter(|c| !matches!(c, Component::RootDir | Component::Prefix(_)))
        .collect()
}
