//! Rendered diagnostics, snapshot-tested: each fixture under tests/fixtures/invalid is its own
//! test, rendered without colour at a fixed width, so a change in wording or span shows up in
//! review and one failing fixture does not hide the others.

use std::path::Path;

use kafkabench::diagnostic::{render_text, Diagnostics};
use kafkabench::model::Scenario;
use kafkabench::source::Sources;

const FIXTURES: &str = "tests/fixtures/invalid";

/// One `#[test]` per fixture, named after the file; its snapshot is `diagnostics__<name>.snap`.
macro_rules! each_fixture {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                renders_like_its_snapshot(stringify!($name));
            }
        )*

        const LISTED: &[&str] = &[$(stringify!($name)),*];
    };
}

each_fixture!(
    bad_expectations,
    broker_figures,
    broker_figures_clients,
    byte_rate,
    capacity_mistakes,
    cascades,
    cascades_into_expect,
    client_mistakes,
    client_properties,
    client_unsupported,
    compaction_mistakes,
    compaction_unchecked,
    drain_without_backlog,
    empty_matrix,
    five_mistakes,
    group_configs,
    habit_counts,
    habit_files,
    habit_lists,
    habit_ramps,
    java_properties,
    meaningless_values,
    missing_include,
    missing_payload_file,
    non_ascii_columns,
    repeat_auto,
    schema_payloads,
    schema_registry,
    secrets,
    share_misplaced,
    share_mistakes,
    size_distributions,
    syntax_error,
    unknown_names,
    warmup_auto,
    warmup_auto_args,
    warmup_auto_probe,
    wrong_kind,
);

/// Parse and check, as `kafkabench check` does.
pub(crate) fn load(path: &Path) -> (Sources, Result<Scenario, Diagnostics>) {
    let mut sources = Sources::default();
    let result = kafkabench::check::load(path, &mut sources);
    (sources, result)
}

fn renders_like_its_snapshot(name: &str) {
    let text = rendered(&Path::new(FIXTURES).join(format!("{name}.kbs")));
    insta::assert_snapshot!(name, text);
}

/// An invalid file's diagnostics as `check` shows them: no colour, 100 columns (also used by
/// tests/slips.rs).
pub(crate) fn rendered(path: &Path) -> String {
    let (sources, result) = load(path);
    let diags = result
        .err()
        .unwrap_or_else(|| panic!("{} should be invalid", path.display()));
    let text = render_text(&diags, &sources, false, 100);
    assert!(
        !text.contains("rule") && !text.contains("EOI"),
        "pest internals leaked:\n{text}"
    );
    text
}

#[test]
fn every_invalid_fixture_has_its_own_test() {
    let mut on_disk: Vec<String> = std::fs::read_dir(FIXTURES)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "kbs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, LISTED, "add the new fixture to each_fixture!");
}

#[test]
fn five_independent_mistakes_give_five_diagnostics() {
    let (_, result) = load(Path::new("tests/fixtures/invalid/five_mistakes.kbs"));
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

#[test]
fn four_independent_mistakes_next_to_an_empty_matrix_give_four_diagnostics() {
    let (_, result) = load(Path::new("tests/fixtures/invalid/cascades.kbs"));
    let d = result.expect_err("invalid");
    let messages: Vec<&str> = d.items.iter().map(|x| x.message.as_str()).collect();
    assert_eq!(d.len(), 4, "{messages:#?}");
}
