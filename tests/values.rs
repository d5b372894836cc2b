//! The meaning of values, without a broker: which values the check stage refuses, with which
//! reason, and which it accepts (negative numbers where they mean something, arithmetic in
//! `expect`). Each case is inline scenario text through `syntax::parse` and `check::check`.

use kafkabench::check::check;
use kafkabench::diagnostic::render_text;
use kafkabench::model::{Expr, Scenario};
use kafkabench::plan::{plan, PlanOptions};
use kafkabench::source::Sources;
use kafkabench::syntax::parse;

/// A topic, for cases about the workload.
const TOPIC: &str = r#"topic "orders" { }"#;

fn checked(body: &str) -> Result<Scenario, String> {
    let text = format!("scenario \"values\" {{\n{body}\n}}\n");
    let mut sources = Sources::default();
    let file = sources.add("values.kbs".into(), text.clone());
    let ast = parse(file, &text).map_err(|d| format!("{d:?}"))?;
    check(&ast, &sources).map_err(|d| render_text(&d, &sources, false, 100))
}

/// Asserts that `body` does not check, with every one of `wanted` in its diagnostics and none of
/// `unwanted` (the contradictions and false follow-ups a fix removed).
fn refused(body: &str, wanted: &[&str], unwanted: &[&str]) {
    let diagnostics = match checked(body) {
        Ok(s) => panic!("{body}\nchecked into {} runs", s.cells.len()),
        Err(d) => d,
    };
    for w in wanted {
        assert!(
            diagnostics.contains(w),
            "{body}\nwanted {w:?} in:\n{diagnostics}"
        );
    }
    for u in unwanted {
        assert!(
            !diagnostics.contains(u),
            "{body}\ndid not want {u:?} in:\n{diagnostics}"
        );
    }
}

fn accepted(body: &str) -> Scenario {
    checked(body).unwrap_or_else(|d| panic!("{body}\n{d}"))
}

// ---- how much and how long -------------------------------------------------------------------

#[test]
fn zero_messages_is_refused_because_a_run_sends_at_least_one() {
    refused(
        &format!("{TOPIC} workload {{ messages = 0 }}"),
        &["messages must be at least 1"],
        &[],
    );
}

#[test]
fn a_zero_duration_is_refused() {
    refused(
        &format!("{TOPIC} workload {{ duration = 0s }}"),
        &["duration must be longer than 0s"],
        &[],
    );
}

#[test]
fn a_duration_of_centuries_is_refused_with_the_upper_bound() {
    refused(
        &format!("{TOPIC} workload {{ duration = 100000000000000000000000h }}"),
        &["duration must be at most 7 days"],
        &[],
    );
}

#[test]
fn a_fractional_message_count_says_what_was_written_not_that_it_is_not_a_number() {
    refused(
        &format!("{TOPIC} workload {{ messages = 2.5 }}"),
        &["messages is a whole number, not 2.5"],
        &["not a number"],
    );
}

// ---- rates -----------------------------------------------------------------------------------

#[test]
fn a_zero_rate_is_refused_without_calling_it_not_a_rate() {
    refused(
        &format!("{TOPIC} workload {{ messages = 10  rate = 0/s }}"),
        &["a rate must be above 0/s"],
        &["not a rate"],
    );
}

#[test]
fn a_shape_that_sends_nothing_is_refused() {
    refused(
        &format!("{TOPIC} workload {{ rate = 0/s for 10s }}"),
        &["this rate shape sends nothing"],
        &[],
    );
}

#[test]
fn a_pause_inside_a_shape_is_still_allowed() {
    accepted(&format!(
        "{TOPIC} workload {{ rate = 10/s for 1s, then 0/s for 1s, then 10/s for 1s }}"
    ));
}

#[test]
fn a_segment_of_zero_length_is_refused() {
    refused(
        &format!("{TOPIC} workload {{ rate = 100/s for 0s, then 10/s for 1s }}"),
        &["a segment lasts longer than 0s"],
        &[],
    );
}

#[test]
fn a_byte_rate_is_refused_with_the_message_rate_for_the_payload_size() {
    refused(
        &format!("{TOPIC} workload {{ duration = 1s  rate = 50MB/s  payload = json(size: 1KiB) }}"),
        &["byte rate", "rate = 48828/s"],
        &[],
    );
    refused(
        &format!("{TOPIC} workload {{ duration = 1s  rate = 50MB/s }}"),
        &["rate = 500000/s"],
        &[],
    );
}

// ---- sizes -----------------------------------------------------------------------------------

#[test]
fn a_size_too_large_to_hold_says_so_with_the_limit_instead_of_echoing_a_saturated_number() {
    refused(
        &format!(
            "{TOPIC} workload {{ messages = 1  payload = random(size: 100000000000000000000000GiB) }}"
        ),
        &["too large", "8PiB"],
        &["18446744073709551615"],
    );
}

// ---- negative numbers ------------------------------------------------------------------------

#[test]
fn a_negative_partition_count_is_refused_with_the_reason() {
    refused(
        r#"topic "t" { partitions = -1 }  workload { messages = 1 }"#,
        &["partitions must be at least 1"],
        &["`_`"],
    );
}

#[test]
fn negative_counts_and_durations_in_the_workload_are_refused_per_key() {
    refused(
        &format!("{TOPIC} workload {{ messages = -5  warmup = -5ms  producers = -2 }}"),
        &[
            "messages must be at least 1",
            "a duration is never negative",
            "producers must be at least 1",
        ],
        &[],
    );
}

#[test]
fn a_negative_rate_is_refused() {
    refused(
        &format!("{TOPIC} workload {{ messages = 10  rate = -5/s }}"),
        &["a rate must be above 0/s"],
        &[],
    );
}

#[test]
fn a_segment_with_a_negative_length_is_refused_once_and_its_rate_is_not_blamed() {
    refused(
        &format!("{TOPIC} workload {{ rate = 5/s for -1s }}"),
        &["a duration is never negative"],
        &["not a rate", "neither how many"],
    );
}

#[test]
fn acks_minus_one_is_a_client_property_librdkafka_accepts() {
    let s = accepted(&format!(
        "{TOPIC} producer {{ acks = -1 }} workload {{ messages = 1 }}"
    ));
    assert_eq!(s.cells[0].spec.producer.get("acks"), Some("-1"));
}

#[test]
fn a_negative_constant_in_expect_is_a_negative_duration() {
    let s = accepted(&format!(
        "{TOPIC} workload {{ messages = 1 }}  expect {{ ack.p50 > -1ms }}"
    ));
    let kafkabench::model::Test::Compare(_, Expr::Const(x, _)) = &s.assertions[0].test else {
        panic!("{:?}", s.assertions[0].test)
    };
    assert_eq!(*x, -0.001);
}

#[test]
fn a_minus_glued_to_a_number_after_a_metric_still_subtracts() {
    for text in [
        "ack.p99 -1ms < 5ms",
        "ack.p99 - 1ms < 5ms",
        "ack.p99-1ms < 5ms",
    ] {
        let s = accepted(&format!(
            "{TOPIC} workload {{ messages = 1 }}  expect {{ {text} }}"
        ));
        assert!(
            matches!(s.assertions[0].lhs, Expr::Binary(..)),
            "{text}: {:?}",
            s.assertions[0].lhs
        );
    }
}

// ---- expect ----------------------------------------------------------------------------------

#[test]
fn a_range_whose_low_end_is_above_its_high_end_is_refused() {
    refused(
        &format!("{TOPIC} workload {{ messages = 1 }}  expect {{ ack.p50 in 600ms..400ms }}"),
        &["the low end is above the high end"],
        &[],
    );
}

// ---- every problem at once -------------------------------------------------------------------

#[test]
fn an_empty_matrix_list_does_not_hide_the_other_mistakes() {
    refused(
        r#"topic "t-{codec}" { }  producer { linger.mss = 5 }  workload { mesages = 1 }
           matrix { codec = [] }"#,
        &[
            "has no values",
            "librdkafka has no property `linger.mss`",
            "unknown workload setting `mesages`",
        ],
        &["unknown variable"],
    );
}

#[test]
fn an_unknown_variable_in_a_topic_name_does_not_add_that_there_is_no_topic() {
    refused(
        r#"topic "t-{codex}" { }  workload { messages = 1 }  matrix { codec = [none, lz4] }"#,
        &["unknown variable `codex`"],
        &["declares no topic"],
    );
}

#[test]
fn a_refused_rate_segment_does_not_add_that_the_workload_has_no_length() {
    refused(
        &format!("{TOPIC} workload {{ rate = 10/s for 5KiB }}"),
        &["a segment lasts a duration"],
        &["neither how many messages nor how long"],
    );
}

// ---- plan ------------------------------------------------------------------------------------

#[test]
fn topic_configs_of_an_existing_topic_are_shown_as_ignored_in_every_plan_format() {
    let s = accepted(
        r#"topic "shared" { existing = true  retention.ms = 1h }  workload { messages = 1 }"#,
    );
    let p = plan(&s, &PlanOptions::default());
    let mut text = Vec::new();
    kafkabench::report::plan_text(&p, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("ignored on an existing topic: retention.ms=3600000"),
        "{text}"
    );
    let json = serde_json::to_value(&p).unwrap();
    let topic = &json["runs"][0]["topic"];
    assert_eq!(topic["configs"], serde_json::json!([]), "{topic}");
    assert_eq!(
        topic["ignored_configs"][0]["key"], "retention.ms",
        "{topic}"
    );
}

#[test]
fn a_backslash_in_a_constant_payload_is_kept_and_a_multibyte_character_after_it_is_no_crash() {
    let s = accepted(&format!(
        "{TOPIC}\nworkload {{ messages = 1  payload = constant(\"a\\\\é\\\\b\\{{x\\}}\") }}"
    ));
    match &s.cells[0].spec.workload.payload {
        kafkabench::model::PayloadSpec::Constant { bytes, .. } => {
            assert_eq!(std::str::from_utf8(bytes).unwrap(), "a\\é\\b{x}");
        }
        other => panic!("not a constant: {other:?}"),
    }
}

// ---- repeat ------------------------------------------------------------------------------------

#[test]
fn repeat_auto_is_accepted_in_every_spelling_and_repeat_keeps_its_max() {
    for (text, within, max) in [
        ("auto", 0.05, 20),
        ("auto(±5%, max 20)", 0.05, 20),
        ("auto(+-2.5%)", 0.025, 20),
        ("auto(within: ±10%, max: 12)", 0.10, 12),
        ("auto(max 8)", 0.05, 8),
        ("auto(5%, max 100)", 0.05, 100),
    ] {
        let s = accepted(&format!(
            "{TOPIC} workload {{ messages = 1 }} repeat = {text}"
        ));
        let a = s.repeat_auto.unwrap_or_else(|| panic!("{text}"));
        assert!((a.within - within).abs() < 1e-12, "{text}: {a:?}");
        assert_eq!((a.max, s.repeat), (max, max), "{text}");
    }
    let s = accepted(&format!("{TOPIC} workload {{ messages = 1 }} repeat = 5"));
    assert_eq!((s.repeat, s.repeat_auto), (5, None));
}

// ---- warm-up -----------------------------------------------------------------------------------

#[test]
fn warmup_auto_is_accepted_with_or_without_its_bound() {
    use kafkabench::model::Warmup;
    use std::time::Duration;
    for (text, max) in [
        ("auto", Warmup::AUTO_MAX),
        ("auto(max: 20s)", Duration::from_secs(20)),
        ("auto(max 1m)", Duration::from_secs(60)),
        ("auto(45s)", Duration::from_secs(45)),
    ] {
        let s = accepted(&format!(
            "{TOPIC} workload {{ messages = 1  rate = 1k/s  warmup = {text} }}"
        ));
        match &s.cells[0].spec.workload.warmup {
            Some(Warmup::Auto { max: m }) => assert_eq!(*m, max, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}
