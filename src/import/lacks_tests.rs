//! The import's claims against the reference: what it says kafkabench lacks is not documented,
//! every denial it writes (in its source, in the scenarios and warnings it makes of every
//! fixture, in docs/import-omb.md) is one of the table's, and every setting its comments name
//! is one the reference documents.

use std::path::{Path, PathBuf};

use super::*;
use crate::import::{omb, Imported, OmbFiles};
use crate::source::Sources;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The reference's code: its fenced blocks and its inline `code`, one space between words.
fn reference_code() -> String {
    let text = read("grammar/REFERENCE.md");
    let mut code = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            code.push_str(line);
            code.push('\n');
            continue;
        }
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 1 {
                code.push_str(span);
                code.push('\n');
            }
        }
    }
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The settings (`key = …`) the reference's code shows.
fn documented_keys(code: &str) -> Vec<String> {
    let words: Vec<&str> = code.split(' ').collect();
    words
        .windows(2)
        .filter(|w| w[1] == "=" || w[1].starts_with('='))
        .map(|w| w[0].trim_start_matches(['{', '(']).to_string())
        .collect()
}

#[test]
fn what_the_import_says_kafkabench_lacks_the_reference_does_not_document() {
    let code = reference_code();
    // The extraction reads the reference: the settings the import maps are there.
    for said in [
        "consumers = 3",
        "backlog = 1M",
        "existing = true",
        "messages = 0",
    ] {
        assert!(code.contains(said), "the reference's code shows `{said}`");
    }
    for lack in ALL {
        for form in lack.forms() {
            assert!(
                !code.contains(form),
                "the import says \"{}\", but the reference documents `{form}`",
                lack.words()
            );
        }
        assert!(denials(lack.words()).iter().all(|(_, covered)| *covered));
    }
}

#[test]
fn a_denial_outside_the_table_is_caught() {
    let found =
        denials("backlogDrainRatio 0.5; kafkabench has no backlog phase: its consumer reads");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(!found[0].1, "{found:?}");
    assert!(found[0].0.contains("has no backlog phase"), "{found:?}");
    let table = format!("x: {}", Lack::SeveralGroups.words());
    assert!(denials(&table).iter().all(|(_, covered)| *covered));
}

#[test]
fn the_import_source_denies_nothing_outside_the_table() {
    for entry in std::fs::read_dir(repo("src/import")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "lacks.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Code, without its tests and its comments (a comment may say what the code avoids).
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for (said, covered) in denials(&code) {
            assert!(
                covered,
                "{name} denies kafkabench something the table does not hold: {said}"
            );
        }
    }
}

/// Every fixture the import reads, each workload alone and each driver with a plain workload.
fn imports() -> Vec<(String, Imported)> {
    let dir = repo("tests/fixtures/omb");
    let plain = dir.join("workloads/1-topic-1-partition-1kb.yaml");
    let yaml = |d: PathBuf| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        v.sort();
        v
    };
    let mut pairs: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    let mut folders = vec![dir.clone()];
    folders.extend(yaml_dirs(&dir.join("forks")));
    for f in folders {
        pairs.extend(yaml(f.join("workloads")).into_iter().map(|w| (w, None)));
        pairs.extend(
            yaml(f.join("drivers"))
                .into_iter()
                .map(|d| (plain.clone(), Some(d))),
        );
    }
    let out_dir = dir.clone();
    pairs
        .into_iter()
        .filter_map(|(w, d)| {
            let mut sources = Sources::default();
            let files = OmbFiles {
                workload: &w,
                driver: d.as_deref(),
                out_dir: &out_dir,
            };
            let shown = format!(
                "{} {}",
                w.display(),
                d.as_deref()
                    .map_or(String::new(), |d| d.display().to_string())
            );
            omb(files, &mut sources).ok().map(|i| (shown, i))
        })
        .collect()
}

fn yaml_dirs(forks: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(forks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn no_comment_or_warning_of_any_fixture_denies_what_the_table_does_not_hold() {
    let keys = documented_keys(&reference_code());
    let imports = imports();
    assert!(imports.len() > 20, "the fixtures import: {}", imports.len());
    for (files, imported) in &imports {
        let comments: Vec<&str> = imported
            .text
            .lines()
            .filter_map(|l| l.split_once('#').map(|(_, c)| c))
            .collect();
        let said = format!("{}\n{}", comments.join("\n"), imported.warnings.join("\n"));
        for (denial, covered) in denials(&said) {
            assert!(covered, "{files}: a denial outside the table: {denial}");
        }
        // A setting a comment names as kafkabench's is one the reference documents.
        for c in &comments {
            for (i, code) in c.split('`').enumerate() {
                let Some((key, _)) = code.split_once(" = ").filter(|_| i % 2 == 1) else {
                    continue;
                };
                if key.contains('.') || key.contains(' ') {
                    continue; // a client property or a topic config: the checker's to judge
                }
                assert!(
                    keys.iter().any(|k| k == key),
                    "{files}: a comment names `{key} = …`, which the reference does not document: {c}"
                );
            }
        }
    }
}

#[test]
fn the_docs_deny_only_what_the_table_holds_and_list_all_of_it() {
    let doc = read("docs/import-omb.md");
    let (body, cannot) = doc
        .split_once("## What a scenario cannot say")
        .expect("docs/import-omb.md has its section of what a scenario cannot say");
    for (denial, covered) in denials(body) {
        assert!(
            covered,
            "docs/import-omb.md: a denial outside the table: {denial}"
        );
    }
    let listed: Vec<String> = cannot
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    for lack in ALL {
        assert!(
            listed.iter().any(|l| l.contains(lack.words())),
            "docs/import-omb.md does not list \"{}\"",
            lack.words()
        );
    }
}
