//! The slips people make coming from other tools (OpenMessaging Benchmark's YAML, k6 scripts,
//! kafka-producer-perf-test's flags, Java properties) and from other languages. Each fixture
//! under tests/fixtures/slips is one slip, its first line a comment saying where the habit comes
//! from; its diagnostics are snapshot-tested as `check` renders them. Every diagnostic points at
//! a place and says how to fix it, and none names a rule of the grammar, for these files and for
//! every cut or damaged copy of the example scenarios.

use std::path::Path;

use kafkabench::diagnostic::{render_text, Diagnostic};
use kafkabench::source::Sources;
use kafkabench::syntax::Rule;

use crate::diagnostics::{load, rendered};

const FIXTURES: &str = "tests/fixtures/slips";

/// One `#[test]` per fixture; its snapshot is `slips__<file>.snap`.
macro_rules! each_slip {
    ($($test:ident = $file:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                let text = rendered(&Path::new(FIXTURES).join(concat!($file, ".kbs")));
                insta::assert_snapshot!($file, text);
            }
        )*

        const LISTED: &[&str] = &[$($file),*];
    };
}

each_slip!(
    unclosed_block = "01_unclosed_block",
    extra_brace = "02_extra_brace",
    variable_rate_unit = "03_variable_rate_unit",
    variable_for = "04_variable_for",
    omb_colon = "05_omb_colon",
    omb_workload_file = "06_omb_workload_file",
    yaml_block = "07_yaml_block",
    k6_script = "08_k6_script",
    k6_single_quotes = "09_k6_single_quotes",
    k6_names = "10_k6_names",
    js_object = "11_js_object",
    perf_flag = "12_perf_flag",
    perf_command_line = "13_perf_command_line",
    properties_misplaced = "14_properties_misplaced",
    properties_colon = "15_properties_colon",
    json_quoted_names = "16_json_quoted_names",
    semicolons = "17_semicolons",
    block_comment = "18_block_comment",
    double_equals = "19_double_equals",
    expect_single_equals = "20_expect_single_equals",
    unquoted_topic = "21_unquoted_topic",
    unquoted_bootstrap = "22_unquoted_bootstrap",
    rate_without_period = "23_rate_without_period",
    digit_commas = "24_digit_commas",
    unit_in_words = "25_unit_in_words",
    rate_in_words = "26_rate_in_words",
    then_without_comma = "27_then_without_comma",
    comma_between_settings = "28_comma_between_settings",
    list_without_brackets = "29_list_without_brackets",
    missing_value = "30_missing_value",
    unclosed_string = "31_unclosed_string",
    assertions_with_and = "32_assertions_with_and",
    unclosed_list = "33_unclosed_list",
    scenario_name_unquoted = "34_scenario_name_unquoted",
    comparison_in_words = "35_comparison_in_words",
    compound_duration = "36_compound_duration",
    call_argument_equals = "37_call_argument_equals",
    condition_with_if = "38_condition_with_if",
    fault_time_last = "39_fault_time_last",
    include_unquoted = "40_include_unquoted",
);

fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(FIXTURES)
        .expect("the slips fixtures")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "kbs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_slip_has_its_own_test_and_says_where_the_habit_comes_from() {
    assert_eq!(fixture_names(), LISTED, "add the new fixture to each_slip!");
    for name in LISTED {
        let text = std::fs::read_to_string(Path::new(FIXTURES).join(format!("{name}.kbs")))
            .expect("a fixture");
        let first = text.lines().next().unwrap_or("");
        assert!(
            (first.starts_with("# ") || first.starts_with("// ")) && first.len() > 20,
            "{name}: the first line says where the habit comes from: {first:?}"
        );
    }
}

/// What a diagnostic says beyond the source it shows.
fn words(d: &Diagnostic) -> String {
    format!(
        "{}\n{}\n{}",
        d.message,
        d.label.as_deref().unwrap_or(""),
        d.help.as_deref().unwrap_or("")
    )
}

#[test]
fn every_slip_points_at_its_place_and_writes_the_right_form() {
    for name in LISTED {
        let (_, result) = load(&Path::new(FIXTURES).join(format!("{name}.kbs")));
        let diags = result.expect_err(name);
        for d in &diags.items {
            let span = d.span.unwrap_or_else(|| panic!("{name}: no place: {d:?}"));
            assert!(span.end > span.start, "{name}: an empty span: {d:?}");
            let help = d.help.as_deref().unwrap_or("");
            // The fix is written out: a form in backquotes, not only a description.
            assert!(help.contains('`'), "{name}: no form in the help: {d:?}");
        }
    }
}

/// A rule's name as the grammar spells it, where only words a user knows belong: in a syntax
/// diagnostic's words, a name only the grammar uses (`string_inner`, `EOI`), and in an
/// "expected" list, a piece of a rule (`_` of a name, `.` of a key, `-` of a number).
fn leak(d: &Diagnostic) -> Option<String> {
    let text = words(d);
    for rule in Rule::all_rules() {
        let name = format!("{rule:?}");
        let internal = name.contains('_') || name.chars().all(|c| c.is_ascii_uppercase());
        if internal && text.contains(&name) {
            return Some(name);
        }
    }
    let expected = d
        .help
        .as_deref()
        .filter(|h| h.starts_with("expected"))
        .unwrap_or("");
    [
        "`_`", "`.`", "`-`", "`%`", "`\"`", "`#`", "`//`", "`\\`", "` `",
    ]
    .into_iter()
    .find(|piece| expected.contains(piece))
    .map(str::to_string)
}

#[test]
fn no_slip_diagnostic_names_a_rule_of_the_grammar() {
    for dir in [FIXTURES, "tests/fixtures/invalid"] {
        for entry in std::fs::read_dir(dir).expect("fixtures") {
            let path = entry.expect("an entry").path();
            if path.extension().is_none_or(|e| e != "kbs") {
                continue;
            }
            let (_, result) = load(&path);
            for d in result.err().map(|d| d.items).unwrap_or_default() {
                assert_eq!(leak(&d), None, "{}: {d:?}", path.display());
            }
        }
    }
}

/// Every example scenario, cut short at many places, with a character deleted, and with a
/// character replaced by one a slip puts there: each syntax error is explained without naming
/// a rule, points inside the file, and renders.
#[test]
fn no_diagnostic_of_a_cut_or_damaged_scenario_names_a_rule_of_the_grammar() {
    let mut files: Vec<_> = std::fs::read_dir("scenarios")
        .expect("the example scenarios")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "kbs"))
        .collect();
    files.sort();
    let mut errors = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a scenario");
        let boundaries: Vec<usize> = (0..text.len())
            .filter(|&k| text.is_char_boundary(k))
            .collect();
        let mut variants: Vec<String> = Vec::new();
        for (n, &k) in boundaries.iter().enumerate() {
            if n % 5 == 0 {
                variants.push(text[..k].to_string());
            }
            let next = boundaries.get(n + 1).copied().unwrap_or(text.len());
            if n % 11 == 0 {
                variants.push(format!("{}{}", &text[..k], &text[next..]));
            }
            if n % 7 == 0 {
                let with = [":", ";", ",", "{", "}", "'", "=", " ", "\n"][n % 9];
                variants.push(format!("{}{with}{}", &text[..k], &text[next..]));
            }
        }
        for v in variants {
            let mut sources = Sources::default();
            let id = sources.add(path.clone(), v.clone());
            let Err(d) = kafkabench::syntax::parse(id, &v) else {
                continue;
            };
            errors += 1;
            assert_eq!(leak(&d), None, "{}:\n{v}\n{d:?}", path.display());
            let span = d.span.expect("a syntax error has a place");
            assert!(span.end <= v.len() && span.start <= span.end, "{d:?}");
            let shown = render_text(&d.clone().into(), &sources, false, 100);
            assert!(shown.contains("kb::syntax"), "{shown}");
        }
    }
    // The sweep met many errors, not a few.
    assert!(errors > 2_000, "only {errors} syntax errors");
}

/// A slip next to a secret never quotes the secret back: the help writes the form with the
/// value left out.
#[test]
fn a_slip_in_a_secret_setting_does_not_repeat_the_secret() {
    for line in [
        "sasl.password: hunter2-secret",
        "sasl.password == hunter2-secret",
        "sasl.password = 'hunter2-secret'",
        "sasl.password = \"hunter2-secret",
        "sasl.password hunter2-secret",
        "\"sasl.password\" = hunter2-secret",
        "sasl.password = hunter2-secret;",
        "sasl.password = hunter2-secret more",
        "sasl.password = hunter2:secret",
    ] {
        let text = format!("scenario \"s\" {{\n  cluster {{\n    {line}\n  }}\n}}\n");
        let mut sources = Sources::default();
        let id = sources.add("s.kbs".into(), text.clone());
        let d = kafkabench::syntax::parse(id, &text).expect_err(line);
        assert!(
            !words(&d).contains("hunter2"),
            "{line}: the secret is repeated: {d:?}"
        );
    }
}
