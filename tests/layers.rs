//! The architecture, checked: `src/` modules import only from layers below them, and only the
//! command layer writes to the terminal. Both tests read the source text, so a violation is
//! reported as file:line before anyone has to find it in review.
//!
//! Comments and string literals are blanked before searching, so prose that mentions
//! `crate::run` or "stderr" is not an import or a print. `#[cfg(test)]` code in `src/` gets no
//! exemption: the rules stay simple and exact, and a unit test has no reason to print.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

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
    let files: Vec<PathBuf> = source_files()
        .into_iter()
        .filter(|f| top_module(f) == "run")
        .filter(|f| {
            !f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("_tests.rs"))
        })
        .collect();
    let unit = |path: &[String]| path.get(1).cloned().unwrap_or_else(|| "run".to_string());
    let units: std::collections::BTreeSet<String> =
        files.iter().map(|f| unit(&module_path(f))).collect();
    // unit → (unit it imports, where)
    let mut edges: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
    for u in units.iter().filter(|u| *u != "run") {
        let at = "src/run/mod.rs (declares it)".to_string();
        edges.entry("run".into()).or_default().push((u.clone(), at));
    }
    for file in &files {
        let from = unit(&module_path(file));
        let code = blank_comments_and_strings(&read(file));
        for (line, path) in references(file, &code) {
            if path.first().map(String::as_str) != Some("run") {
                continue;
            }
            // An item of the root (a re-export, say) is the root's.
            let to = path
                .get(1)
                .filter(|m| units.contains(*m))
                .cloned()
                .unwrap_or_else(|| "run".to_string());
            if to != from {
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
    assert!(
        report.is_empty(),
        "modules of run/ import each other:\n{report}"
    );
}

/// The strongly connected components of a graph (Tarjan), each sorted.
fn strongly_connected(
    nodes: &std::collections::BTreeSet<String>,
    edges: &std::collections::BTreeMap<String, Vec<(String, String)>>,
) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a std::collections::BTreeMap<String, Vec<(String, String)>>,
        index: std::collections::BTreeMap<String, (usize, usize)>,
        stack: Vec<String>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit(s: &mut State, v: &str) {
        s.index.insert(v.to_string(), (s.next, s.next));
        s.next += 1;
        s.stack.push(v.to_string());
        let targets: Vec<String> = s
            .edges
            .get(v)
            .into_iter()
            .flatten()
            .map(|(t, _)| t.clone())
            .collect();
        for w in targets {
            if !s.index.contains_key(&w) {
                visit(s, &w);
                let low = s.index[&w].1.min(s.index[v].1);
                s.index.get_mut(v).unwrap().1 = low;
            } else if s.stack.contains(&w) {
                let low = s.index[&w].0.min(s.index[v].1);
                s.index.get_mut(v).unwrap().1 = low;
            }
        }
        if s.index[v].0 == s.index[v].1 {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                let done = w == v;
                component.push(w);
                if done {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut s = State {
        edges,
        index: Default::default(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
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

// ---- reading the source ----------------------------------------------------------------------

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn source_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("src/ is readable") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&src(), &mut files);
    files.sort();
    assert!(files.len() > 10, "found the sources: {files:?}");
    files
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

fn shown(file: &Path) -> String {
    let root = src().parent().expect("src has a parent").to_path_buf();
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// src/format.rs → format; src/check/values.rs → check; src/main.rs → main.
fn top_module(file: &Path) -> String {
    let rel = file.strip_prefix(src()).expect("a file under src/");
    let first = rel.components().next().expect("a path under src/");
    let first = first.as_os_str().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The module path of a file inside the crate: src/check/values.rs → [check, values];
/// src/check/mod.rs → [check]; src/lib.rs and src/main.rs → [] (the crate root).
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("a file under src/");
    let mut path: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(path.last().map(String::as_str), Some("mod")) || path == ["lib"] || path == ["main"]
    {
        path.pop();
    }
    // `#[path = "x_tests.rs"] mod tests;` in x.rs: the file is x's `tests`.
    if let Some(of) = path
        .last()
        .and_then(|l| l.strip_suffix("_tests"))
        .map(str::to_string)
    {
        path.pop();
        path.extend([of, "tests".to_string()]);
    }
    path
}

/// Every top-level module a file refers to through `crate::` or a `super::` chain that climbs
/// to the crate root, with its 1-based line. `crate::{a::X, b}` names `a` and `b`.
fn crate_references(file: &Path, code: &str) -> Vec<(usize, String)> {
    let own = top_module(file);
    let mut refs = Vec::new();
    for (line, path) in references(file, code) {
        match path.first() {
            Some(head) => refs.push((line, head.clone())),
            // A glob of the crate root (`crate::*`): nothing named; from within the file's own
            // module, the module itself.
            None => refs.push((line, own.clone())),
        }
    }
    refs.dedup();
    refs
}

/// Every path a file names through `crate::` or a `super::` chain, made absolute (from the
/// crate root), with its 1-based line: `use super::{a::X, b}` in src/run/c.rs names
/// [run, a, X] and [run, b]. A glob names the module it is in.
fn references(file: &Path, code: &str) -> Vec<(usize, Vec<String>)> {
    let file_path = module_path(file);
    let chars: Vec<char> = code.chars().collect();
    let mut refs = Vec::new();
    let mut line = 1;
    // Brace depths at which inline `mod name {` blocks opened: `super` climbs out of them first.
    let mut inline_mods: Vec<usize> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    let found = |line: usize, base: &[String], at: usize, refs: &mut Vec<_>| {
        for rel in use_tree(&chars, at) {
            let mut path = base.to_vec();
            path.extend(rel);
            refs.push((line, path));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
        } else if c == '{' {
            depth += 1;
        } else if c == '}' {
            depth -= 1;
            if inline_mods.last() == Some(&depth) {
                inline_mods.pop();
            }
        } else if starts_word(&chars, i, "mod") {
            let (name, after) = ident_at(&chars, skip_space(&chars, i + 3));
            if !name.is_empty() && chars.get(skip_space(&chars, after)) == Some(&'{') {
                inline_mods.push(depth);
            }
        } else if starts_word(&chars, i, "crate")
            && followed_by_path(&chars, i + 5)
            && !after_word(&chars, i, "in")
        {
            // `pub(in crate::run)` is a visibility, not an import.
            found(line, &[], i + 7, &mut refs);
            i += 7;
            continue;
        } else if starts_word(&chars, i, "super") && followed_by_path(&chars, i + 5) {
            let mut at = i;
            let mut climbs = 0;
            while starts_word(&chars, at, "super") && followed_by_path(&chars, at + 5) {
                climbs += 1;
                at += 7;
            }
            // From inside inline modules, the first climbs stay within this file's module.
            let out = (climbs as usize).saturating_sub(inline_mods.len());
            let base = &file_path[..file_path.len().saturating_sub(out)];
            found(line, base, at, &mut refs);
            i = at;
            continue;
        }
        i += 1;
    }
    refs
}

/// The paths of a use tree (or of an expression's path) starting at `at`, relative to where
/// it starts: `a::{b, c::D}` → [a, b], [a, c, D]; `*` and `self` name the module they are in.
fn use_tree(chars: &[char], at: usize) -> Vec<Vec<String>> {
    fn tree(chars: &[char], at: usize) -> (Vec<Vec<String>>, usize) {
        let at = skip_space(chars, at);
        match chars.get(at) {
            Some('{') => {
                let mut all = Vec::new();
                let mut i = at + 1;
                loop {
                    i = skip_space(chars, i);
                    match chars.get(i) {
                        None => return (all, i),
                        Some('}') => return (all, i + 1),
                        Some(',') => i += 1,
                        _ => {
                            let (paths, end) = tree(chars, i);
                            all.extend(paths);
                            // Past anything the item's tree did not read (`as name`).
                            i = end.max(i + 1);
                            while i < chars.len() && !matches!(chars[i], ',' | '}') {
                                i += 1;
                            }
                        }
                    }
                }
            }
            Some('*') => (vec![vec![]], at + 1),
            _ => {
                let (name, after) = ident_at(chars, at);
                if name.is_empty() {
                    return (vec![], at);
                }
                if name == "self" {
                    return (vec![vec![]], after);
                }
                if followed_by_path(chars, after) {
                    let (rest, end) = tree(chars, after + 2);
                    if rest.is_empty() {
                        return (vec![vec![name]], end);
                    }
                    let paths = rest
                        .into_iter()
                        .map(|r| std::iter::once(name.clone()).chain(r).collect())
                        .collect();
                    return (paths, end);
                }
                (vec![vec![name]], after)
            }
        }
    }
    tree(chars, at).0
}

/// The word before `at` (spaces skipped) is `word`.
fn after_word(chars: &[char], at: usize, word: &str) -> bool {
    let mut end = at;
    while end > 0 && chars[end - 1].is_whitespace() {
        end -= 1;
    }
    let start = end.saturating_sub(word.chars().count());
    end > start && starts_word(chars, start, word) && start + word.chars().count() == end
}

fn followed_by_path(chars: &[char], at: usize) -> bool {
    chars.get(at) == Some(&':') && chars.get(at + 1) == Some(&':')
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `word` starts at `at` and is not part of a longer identifier.
fn starts_word(chars: &[char], at: usize, word: &str) -> bool {
    let w: Vec<char> = word.chars().collect();
    let before_ok = at == 0 || !is_ident_char(chars[at - 1]);
    let after_ok = chars
        .get(at + w.len())
        .map_or(true, |c| !is_ident_char(*c) || w.last() == Some(&'!'));
    before_ok && after_ok && chars.get(at..at + w.len()) == Some(&w[..])
}

/// `word` in `line` other than as a member (`.stdout(Stdio::piped())`, `child.stdout`,
/// `output.stderr`): a child process's pipe or captured output is not the terminal.
fn prints(line: &str, word: &str) -> bool {
    let chars: Vec<char> = line.chars().collect();
    (0..chars.len()).any(|i| starts_word(&chars, i, word) && (i == 0 || chars[i - 1] != '.'))
}

fn ident_at(chars: &[char], at: usize) -> (String, usize) {
    let mut end = at;
    while end < chars.len() && is_ident_char(chars[end]) {
        end += 1;
    }
    (chars[at..end].iter().collect(), end)
}

fn skip_space(chars: &[char], mut at: usize) -> usize {
    while at < chars.len() && chars[at].is_whitespace() {
        at += 1;
    }
    at
}

/// The code with comments and the contents of string and char literals replaced by spaces;
/// newlines are kept, so line numbers still match the file.
fn blank_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !is_ident_char(chars[i - 1]))
            && raw_string_hashes(&chars, i + 1).is_some()
        {
            let hashes = raw_string_hashes(&chars, i + 1).expect("checked");
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat('#').take(hashes))
                .collect();
            out.push('r');
            i += 1;
            for _ in 0..hashes + 1 {
                out.push(chars[i]);
                i += 1;
            }
            while i < chars.len() && chars.get(i..i + close.len()) != Some(&close[..]) {
                out.push(blank(chars[i]));
                i += 1;
            }
            for _ in 0..close.len().min(chars.len() - i) {
                out.push(chars[i]);
                i += 1;
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    out.push(' ');
                    i += 1;
                }
                out.push(blank(chars[i]));
                i += 1;
            }
            if i < chars.len() {
                out.push('"');
                i += 1;
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') is blanked; a lifetime ('a) is left alone.
            let end = if next == Some('\\') {
                (i + 3..chars.len()).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push('\'');
                    out.extend(std::iter::repeat(' ').take(end - i - 1));
                    out.push('\'');
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// After an `r`: `#*"` opens a raw string with that many hashes.
fn raw_string_hashes(chars: &[char], at: usize) -> Option<usize> {
    let hashes = chars[at..].iter().take_while(|c| **c == '#').count();
    (chars.get(at + hashes) == Some(&'"')).then_some(hashes)
}
