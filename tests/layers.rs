//! The architecture, checked: `src/` modules import only from layers below them, and only the
//! command layer writes to the terminal. Both tests read the source text, so a violation is
//! reported as file:line before anyone has to find it in review.
//!
//! Comments and string literals are blanked before searching, so prose that mentions
//! `crate::run` or "stderr" is not an import or a print. `#[cfg(test)]` code in `src/` gets no
//! exemption: the rules stay simple and exact, and a unit test has no reason to print.

use std::fmt::Write as _;
use std::path::PathBuf;

mod scan;
use scan::*;

/// Bottom → top. A module may import from a strictly lower layer, or from itself; modules on the
/// same layer may not import each other. `main` and `lib` (the crate root) stand above all.
const LAYERS: &[&[&str]] = &[
    &["format", "exit", "source", "random"],
    &["diagnostic"],
    &["native", "wire", "schema"],
    &["model"],
    &["syntax"],
    &["check"],
    &["plan"],
    &["measure"],
    &["run"],
    &["shard"],
    &["assert"],
    &["report"],
    &["import", "k8s"],
    &["cli"],
    &["main", "lib"],
];

/// The only places allowed to write to stdout or stderr.
const MAY_PRINT: &[&str] = &["cli", "main"];

/// Whole words that write to the terminal (macros are matched with their `!`).
const PRINTING: &[&str] = &[
    "print!",
    "println!",
    "eprint!",
    "eprintln!",
    "dbg!",
    "stdout",
    "stderr",
];

#[test]
fn modules_import_only_from_lower_layers() {
    let mut violations = String::new();
    for file in source_files() {
        let from = top_module(&file);
        let from_layer = layer(&from).unwrap_or_else(|| panic!("{from} has no layer in LAYERS"));
        let code = blank_comments_and_strings(&read(&file));
        for (line, to) in crate_references(&file, &code) {
            let allowed = to == from || layer(&to).is_some_and(|l| l < from_layer);
            if !allowed {
                let _ = writeln!(
                    violations,
                    "{}:{line}: {from} (layer {}) imports {to} (layer {})",
                    shown(&file),
                    from_layer + 1,
                    layer(&to).map_or("none".into(), |l| (l + 1).to_string())
                );
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against the layer order:\n{violations}"
    );
}

/// The stages inside `run/` form no cycle: no module imports one that imports it back. The
/// root (run/mod.rs) declares and drives every other module, so nothing imports from it either:
/// an item two modules share lives in a module of its own. A unit-test file (`*_tests.rs`)
/// may drive a whole run through the root (`run::execute`, as run/worker/run_tests.rs does
/// on each client): no stage imports a test, so it closes no cycle of the stages.
#[test]
fn no_module_of_run_imports_one_that_imports_it_back() {
    let report = cycles_within("run", Root::DeclaresAll);
    assert!(
        report.is_empty(),
        "modules of run/ import each other:\n{report}"
    );
}

/// The checkers inside `check/` form no cycle either. Their root (check/mod.rs) holds the
/// `Checker` every file extends, so importing it closes no cycle; what two checkers share
/// (the axes and a cell's picks, `check/axis.rs`) is a module that uses none of them.
#[test]
fn no_checker_imports_one_that_imports_it_back() {
    let report = cycles_within("check", Root::Shared);
    assert!(
        report.is_empty(),
        "modules of check/ import each other:\n{report}"
    );
}

/// What a stage's root is to its modules.
#[derive(PartialEq)]
enum Root {
    /// It declares and drives them all: an import of it closes a cycle.
    DeclaresAll,
    /// It holds state they all extend: its edges are left out.
    Shared,
}

/// The cycles among the modules of `top/` (its files grouped by their first module below
/// `top`), each edge named where it is written; empty when there are none.
fn cycles_within(top: &str, root: Root) -> String {
    let files: Vec<PathBuf> = source_files()
        .into_iter()
        .filter(|f| top_module(f) == top)
        .filter(|f| {
            !f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("_tests.rs"))
        })
        .collect();
    let unit = |path: &[String]| path.get(1).cloned().unwrap_or_else(|| top.to_string());
    let mut units: std::collections::BTreeSet<String> =
        files.iter().map(|f| unit(&module_path(f))).collect();
    if root == Root::Shared {
        units.remove(top);
    }
    // unit → (unit it imports, where)
    let mut edges: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
    if root == Root::DeclaresAll {
        for u in units.iter().filter(|u| *u != top) {
            let at = format!("src/{top}/mod.rs (declares it)");
            edges.entry(top.into()).or_default().push((u.clone(), at));
        }
    }
    for file in &files {
        let from = unit(&module_path(file));
        if !units.contains(&from) {
            continue;
        }
        let code = blank_comments_and_strings(&read(file));
        for (line, path) in references(file, &code) {
            if path.first().map(String::as_str) != Some(top) {
                continue;
            }
            // An item of the root (a re-export, say) is the root's.
            let to = path
                .get(1)
                .filter(|m| units.contains(*m))
                .cloned()
                .unwrap_or_else(|| top.to_string());
            if to != from && units.contains(&to) {
                let at = format!("{}:{line}", shown(file));
                edges.entry(from.clone()).or_default().push((to, at));
            }
        }
    }
    let cycles = strongly_connected(&units, &edges);
    let mut report = String::new();
    for cycle in cycles.iter().filter(|c| c.len() > 1) {
        let _ = writeln!(report, "a cycle through {}:", cycle.join(", "));
        for from in cycle {
            for (to, at) in edges.get(from).into_iter().flatten() {
                if cycle.contains(to) {
                    let _ = writeln!(report, "  {at}: {from} imports {to}");
                }
            }
        }
    }
    report
}

#[test]
fn only_the_command_layer_writes_to_the_terminal() {
    let mut violations = String::new();
    for file in source_files() {
        let module = top_module(&file);
        if MAY_PRINT.contains(&module.as_str()) {
            continue;
        }
        // A unit-test file may say the figures it measured (cargo test keeps them unless
        // asked); the library's own code never prints.
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.ends_with("_tests.rs") {
            continue;
        }
        let code = blank_comments_and_strings(&read(&file));
        for (i, text) in code.lines().enumerate() {
            for word in PRINTING {
                if prints(text, word) {
                    let _ = writeln!(
                        violations,
                        "{}:{}: {module} uses {word}",
                        shown(&file),
                        i + 1
                    );
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "writes to the terminal outside src/cli and src/main.rs:\n{violations}"
    );
}

// ---- the rules, checked on small texts -------------------------------------------------------

#[test]
fn a_file_maps_to_its_top_level_module() {
    for (path, module) in [
        ("src/format.rs", "format"),
        ("src/check/values.rs", "check"),
        ("src/check/mod.rs", "check"),
        ("src/run/producer/pacer.rs", "run"),
        ("src/main.rs", "main"),
        ("src/lib.rs", "lib"),
    ] {
        assert_eq!(
            top_module(&src().join(path.trim_start_matches("src/"))),
            module
        );
    }
}

#[test]
fn references_are_found_in_uses_groups_paths_and_super_chains() {
    let code = blank_comments_and_strings(
        "use crate::model::Props;\n\
         use crate::{diagnostic::Kind, source::{Span, Spanned}};\n\
         let x = crate::format::plural(2);\n\
         use super::super::plan::Plan;\n\
         use super::Checker;\n\
         mod tests { use super::*; }\n\
         // crate::cli in a comment\n\
         let s = \"crate::run in a string\";\n",
    );
    let refs = crate_references(&src().join("check/values.rs"), &code);
    assert_eq!(
        refs,
        [
            (1, "model".to_string()),
            (2, "diagnostic".to_string()),
            (2, "source".to_string()),
            (3, "format".to_string()),
            (4, "plan".to_string()),
            (5, "check".to_string()),
            (6, "check".to_string()),
        ]
    );
}

#[test]
fn printing_is_found_as_whole_words_outside_comments_and_strings() {
    let code = blank_comments_and_strings(
        "let out = std::io::stdout();\n\
         // eprintln! in a comment\n\
         let s = \"println! in a string\";\n\
         let stdout_like = 1; let c = '\"'; eprint!(\"x\");\n\
         cmd.stdout(Stdio::piped()); let p = child.stderr.take();\n",
    );
    let hits: Vec<(usize, &str)> = code
        .lines()
        .enumerate()
        .flat_map(|(i, l)| {
            PRINTING
                .iter()
                .filter(move |w| prints(l, w))
                .map(move |w| (i + 1, *w))
        })
        .collect();
    assert_eq!(hits, [(1, "stdout"), (4, "eprint!")]);
}
