//! Rendered diagnostics, snapshot-tested: every fixture under tests/fixtures/invalid renders
//! without colour at a fixed width, so a change in wording or span shows up in review.

use std::path::Path;

use kafkabench::diagnostic::render_text;

#[test]
fn invalid_fixtures_render_stably() {
    let mut files: Vec<_> = std::fs::read_dir("tests/fixtures/invalid")
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "kbs"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "fixtures present: {files:?}");
    for f in files {
        let (sources, result) = kafkabench::cli::load(Path::new(&f));
        let diags = result
            .err()
            .unwrap_or_else(|| panic!("{} should be invalid", f.display()));
        let text = render_text(&diags, &sources, false, 100);
        assert!(
            !text.contains("rule") && !text.contains("EOI"),
            "pest internals leaked:\n{text}"
        );
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        insta::assert_snapshot!(name, text);
    }
}

#[test]
fn five_independent_mistakes_give_five_diagnostics() {
    let (_, result) = kafkabench::cli::load(Path::new("tests/fixtures/invalid/five_mistakes.kbs"));
    let d = result.expect_err("invalid");
    assert_eq!(d.len(), 5, "{d:#?}");
    let helps: Vec<String> = d.items.iter().filter_map(|x| x.help.clone()).collect();
    for expected in [
        "did you mean `linger`?",
        "queue.buffering.max.kbytes",
        "did you mean `rate`?",
        "did you mean `s`?",
        "did you mean `zstd`?",
    ] {
        assert!(
            helps.iter().any(|h| h.contains(expected)),
            "missing help {expected:?} in {helps:#?}"
        );
    }
    assert!(
        d.items.iter().all(|x| x.span.is_some()),
        "every diagnostic has a span"
    );
}
