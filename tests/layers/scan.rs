//! Reading the source for the layer rules: files and their modules, the paths a file refers
//! to (uses, groups, `super` chains), comments and strings blanked, and the cycles of a graph.

use std::path::{Path, PathBuf};

use super::LAYERS;

pub(super) fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

pub(super) fn source_files() -> Vec<PathBuf> {
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

pub(super) fn read(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

pub(super) fn shown(file: &Path) -> String {
    let root = src().parent().expect("src has a parent").to_path_buf();
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}

pub(super) fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// src/format.rs → format; src/check/values.rs → check; src/main.rs → main.
pub(super) fn top_module(file: &Path) -> String {
    let rel = file.strip_prefix(src()).expect("a file under src/");
    let first = rel.components().next().expect("a path under src/");
    let first = first.as_os_str().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The module path of a file inside the crate: src/check/values.rs → [check, values];
/// src/check/mod.rs → [check]; src/lib.rs and src/main.rs → [] (the crate root).
pub(super) fn module_path(file: &Path) -> Vec<String> {
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
pub(super) fn crate_references(file: &Path, code: &str) -> Vec<(usize, String)> {
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
pub(super) fn references(file: &Path, code: &str) -> Vec<(usize, Vec<String>)> {
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
pub(super) fn use_tree(chars: &[char], at: usize) -> Vec<Vec<String>> {
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
pub(super) fn after_word(chars: &[char], at: usize, word: &str) -> bool {
    let mut end = at;
    while end > 0 && chars[end - 1].is_whitespace() {
        end -= 1;
    }
    let start = end.saturating_sub(word.chars().count());
    end > start && starts_word(chars, start, word) && start + word.chars().count() == end
}

pub(super) fn followed_by_path(chars: &[char], at: usize) -> bool {
    chars.get(at) == Some(&':') && chars.get(at + 1) == Some(&':')
}

pub(super) fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `word` starts at `at` and is not part of a longer identifier.
pub(super) fn starts_word(chars: &[char], at: usize, word: &str) -> bool {
    let w: Vec<char> = word.chars().collect();
    let before_ok = at == 0 || !is_ident_char(chars[at - 1]);
    let after_ok = chars
        .get(at + w.len())
        .map_or(true, |c| !is_ident_char(*c) || w.last() == Some(&'!'));
    before_ok && after_ok && chars.get(at..at + w.len()) == Some(&w[..])
}

/// `word` in `line` other than as a member (`.stdout(Stdio::piped())`, `child.stdout`,
/// `output.stderr`): a child process's pipe or captured output is not the terminal.
pub(super) fn prints(line: &str, word: &str) -> bool {
    let chars: Vec<char> = line.chars().collect();
    (0..chars.len()).any(|i| starts_word(&chars, i, word) && (i == 0 || chars[i - 1] != '.'))
}

pub(super) fn ident_at(chars: &[char], at: usize) -> (String, usize) {
    let mut end = at;
    while end < chars.len() && is_ident_char(chars[end]) {
        end += 1;
    }
    (chars[at..end].iter().collect(), end)
}

pub(super) fn skip_space(chars: &[char], mut at: usize) -> usize {
    while at < chars.len() && chars[at].is_whitespace() {
        at += 1;
    }
    at
}

/// The code with comments and the contents of string and char literals replaced by spaces;
/// newlines are kept, so line numbers still match the file.
pub(super) fn blank_comments_and_strings(text: &str) -> String {
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
pub(super) fn raw_string_hashes(chars: &[char], at: usize) -> Option<usize> {
    let hashes = chars[at..].iter().take_while(|c| **c == '#').count();
    (chars.get(at + hashes) == Some(&'"')).then_some(hashes)
}

/// The strongly connected components of a graph (Tarjan), each sorted.
pub(super) fn strongly_connected(
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
