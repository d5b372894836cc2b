//! Lowering, without a broker: a scenario's matrix, steps and ladder become which runs, in which
//! order, with which settings. Each case is inline scenario text through `syntax::parse`,
//! `check::check` and `plan::plan`, and a table of the runs it must give.

use kafkabench::check::check;
use kafkabench::diagnostic::render_text;
use kafkabench::model::Scenario;
use kafkabench::plan::{plan, PlanOptions, RunPlan};
use kafkabench::source::Sources;
use kafkabench::syntax::parse;

/// The suffix `plan` appends to topic names; fixed here so names can be compared.
const RUN_ID: &str = "r1";

/// A topic and a workload, for cases about something else. The topic exists, so every run may
/// write into it (a created topic is one per run, so its name needs a variable in a matrix).
const BASICS: &str = r#"topic "orders" { existing = true }  workload { messages = 1000 }"#;

fn checked(body: &str) -> Result<Scenario, String> {
    let text = format!("scenario \"lowering\" {{\n{body}\n}}\n");
    let mut sources = Sources::default();
    let file = sources.add("lowering.kbs".into(), text.clone());
    let ast = parse(file, &text).map_err(|d| format!("{d:?}"))?;
    check(&ast, &sources).map_err(|d| render_text(&d, &sources, false, 100))
}

fn runs(body: &str) -> Vec<RunPlan> {
    let scenario = checked(body).unwrap_or_else(|diagnostics| panic!("{body}\n{diagnostics}"));
    let options = PlanOptions {
        bootstrap: None,
        scale: 1.0,
        repeat: None,
        run_id: RUN_ID.into(),
    };
    plan(&scenario, &options).runs
}

/// One setting of a run as text, `-` when it is absent: `producer.linger.ms`, `topic.name`,
/// `topic.partitions`, `workload.messages`, `workload.producers`, `workload.headers`, `consumer`.
fn setting(run: &RunPlan, name: &str) -> String {
    let absent = || "-".to_string();
    match name.split_once('.') {
        Some(("producer", key)) => run.producer.get(key).map_or_else(absent, str::to_string),
        Some(("consumer", key)) => run
            .consumer
            .as_ref()
            .and_then(|c| c.get(key))
            .map_or_else(absent, str::to_string),
        _ => match name {
            "topic.name" => run.topic.name.clone(),
            "topic.partitions" => run.topic.partitions.to_string(),
            "workload.messages" => run.workload.messages.map_or_else(absent, |m| m.to_string()),
            "workload.producers" => run.workload.producers.to_string(),
            "workload.headers" => {
                let headers: Vec<String> = run
                    .workload
                    .headers
                    .iter()
                    .map(|(k, v)| format!("{k}:{v}"))
                    .collect();
                if headers.is_empty() {
                    absent()
                } else {
                    headers.join(",")
                }
            }
            "consumer" => if run.consumer.is_some() { "yes" } else { "no" }.to_string(),
            _ => panic!("the table names `{name}`, which `setting` does not know"),
        },
    }
}

/// Asserts the runs `body` lowers to: run 1, 2, ... in order, each with its label and the
/// values of `columns`.
fn expect_runs(body: &str, columns: &[&str], expected: &[(&str, &[&str])]) {
    let runs = runs(body);
    let actual: Vec<(usize, String, Vec<String>)> = runs
        .iter()
        .map(|r| {
            let values = columns.iter().map(|c| setting(r, c)).collect();
            (r.index + 1, r.label.clone(), values)
        })
        .collect();
    let wanted: Vec<(usize, String, Vec<String>)> = expected
        .iter()
        .enumerate()
        .map(|(i, (label, values))| {
            assert_eq!(
                values.len(),
                columns.len(),
                "row {label} has a value per column"
            );
            let values = values.iter().map(|v| v.to_string()).collect();
            (i + 1, label.to_string(), values)
        })
        .collect();
    assert_eq!(actual, wanted, "runs of:\n{body}\ncolumns: {columns:?}");
}

/// Asserts that `body` does not check, with a diagnostic containing `message`.
fn expect_diagnostic(body: &str, message: &str) {
    match checked(body) {
        Ok(s) => panic!("{body}\nchecked into {} runs", s.cells.len()),
        Err(diagnostics) => assert!(
            diagnostics.contains(message),
            "{body}\nwanted {message:?} in:\n{diagnostics}"
        ),
    }
}

// ---- matrix order ----------------------------------------------------------------------------

#[test]
fn a_scenario_with_neither_matrix_nor_steps_is_one_run_labelled_run() {
    expect_runs(
        r#"topic "orders" { }  workload { messages = 1000 }"#,
        &["topic.name", "workload.messages"],
        &[("run", &["orders-r1", "1000"])],
    );
}

#[test]
fn matrix_cells_run_in_written_order_with_the_first_variable_varying_slowest() {
    expect_runs(
        &format!(
            "{BASICS}
             producer {{ linger.ms = {{linger}}  compression.type = {{codec}} }}
             matrix {{ linger = [0ms, 5ms]  codec = [none, lz4, zstd] }}"
        ),
        &["producer.linger.ms", "producer.compression.type"],
        &[
            ("linger=0ms codec=none", &["0", "none"]),
            ("linger=0ms codec=lz4", &["0", "lz4"]),
            ("linger=0ms codec=zstd", &["0", "zstd"]),
            ("linger=5ms codec=none", &["5", "none"]),
            ("linger=5ms codec=lz4", &["5", "lz4"]),
            ("linger=5ms codec=zstd", &["5", "zstd"]),
        ],
    );
}

#[test]
fn steps_vary_slower_than_the_matrix_and_label_a_run_by_the_step_name_alone() {
    expect_runs(
        &format!(
            "{BASICS}
             producer {{ compression.type = {{codec}} }}
             matrix {{ codec = [none, zstd] }}
             steps {{ small {{ }}  big {{ producer.batch.size = 64KiB }} }}"
        ),
        &["producer.compression.type", "producer.batch.size"],
        &[
            ("small codec=none", &["none", "-"]),
            ("small codec=zstd", &["zstd", "-"]),
            ("big codec=none", &["none", "65536"]),
            ("big codec=zstd", &["zstd", "65536"]),
        ],
    );
}

#[test]
fn a_matrix_value_keeps_its_written_text_in_the_label() {
    expect_runs(
        &format!(
            "{BASICS}
             producer {{ batch.size = {{batch}} }}
             matrix {{ batch = [16KiB, 1MiB] }}"
        ),
        &["producer.batch.size"],
        &[("batch=16KiB", &["16384"]), ("batch=1MiB", &["1048576"])],
    );
}

// ---- steps and ladders -----------------------------------------------------------------------

#[test]
fn independent_steps_each_start_from_the_base_settings() {
    expect_runs(
        &format!(
            "{BASICS}
             producer {{ linger.ms = 1ms }}
             steps {{
               base   {{ }}
               batch  {{ producer.batch.size = 64KiB }}
               linger {{ producer.linger.ms = 5ms }}
             }}"
        ),
        &["producer.batch.size", "producer.linger.ms"],
        &[
            ("base", &["-", "1"]),
            ("batch", &["65536", "1"]),
            ("linger", &["-", "5"]),
        ],
    );
}

#[test]
fn a_ladder_step_keeps_the_overrides_of_every_step_before_it() {
    expect_runs(
        &format!(
            "{BASICS}
             ladder {{
               base     {{ }}
               batching {{ producer.batch.size = 64KiB  producer.linger.ms = 5ms }}
               zstd     {{ producer.compression.type = zstd }}
               scale    {{ topic.partitions = 6  workload.producers = 2 }}
             }}"
        ),
        &[
            "producer.batch.size",
            "producer.linger.ms",
            "producer.compression.type",
            "topic.partitions",
            "workload.producers",
        ],
        &[
            ("base", &["-", "-", "-", "1", "1"]),
            ("batching", &["65536", "5", "-", "1", "1"]),
            ("zstd", &["65536", "5", "zstd", "1", "1"]),
            ("scale", &["65536", "5", "zstd", "6", "2"]),
        ],
    );
}

#[test]
fn a_later_ladder_step_replaces_what_an_earlier_one_set() {
    expect_runs(
        &format!(
            "{BASICS}
             ladder {{
               five {{ producer.linger.ms = 5ms }}
               ten  {{ producer.linger.ms = 10ms }}
               more {{ producer.batch.size = 1MiB }}
             }}"
        ),
        &["producer.linger.ms", "producer.batch.size"],
        &[
            ("five", &["5", "-"]),
            ("ten", &["10", "-"]),
            ("more", &["10", "1048576"]),
        ],
    );
}

#[test]
fn a_step_overrides_topic_workload_and_producer_settings_and_the_next_step_inherits_the_base() {
    expect_runs(
        r#"topic "orders-{step}" { partitions = 3 }
           producer { acks = all }
           workload { messages = 1000  producers = 1 }
           steps {
             heavy { topic.partitions = 12  workload.messages = 5000  producer.acks = 1 }
             plain { }
           }"#,
        &["topic.partitions", "workload.messages", "producer.acks"],
        &[
            ("heavy", &["12", "5000", "1"]),
            ("plain", &["3", "1000", "all"]),
        ],
    );
}

#[test]
fn a_step_may_hold_whole_sections_instead_of_dotted_keys() {
    expect_runs(
        &format!(
            "{BASICS}
             steps {{
               base  {{ }}
               tuned {{ producer {{ linger.ms = 20ms  batch.size = 128KiB }} }}
             }}"
        ),
        &["producer.linger.ms", "producer.batch.size"],
        &[("base", &["-", "-"]), ("tuned", &["20", "131072"])],
    );
}

/// A consumer in any step makes the scenario one with a consumer: every run reads, and the
/// step's consumer settings stay its own.
#[test]
fn a_consumer_in_one_step_makes_every_run_read_but_its_settings_stay_in_that_step() {
    expect_runs(
        &format!(
            "{BASICS}
             steps {{
               without {{ }}
               with    {{ consumer {{ fetch.min.bytes = 64KiB }} }}
             }}"
        ),
        &["consumer", "consumer.fetch.min.bytes"],
        &[("without", &["yes", "-"]), ("with", &["yes", "65536"])],
    );
}

#[test]
fn a_step_adds_workload_headers_by_their_dotted_name() {
    expect_runs(
        &format!(
            "{BASICS}
             steps {{
               plain  {{ }}
               tagged {{ workload.headers.source = \"pos\" }}
             }}"
        ),
        &["workload.headers"],
        &[("plain", &["-"]), ("tagged", &["source:pos"])],
    );
}

// ---- topic names -----------------------------------------------------------------------------

#[test]
fn variables_in_a_topic_name_take_each_cells_values_as_written() {
    expect_runs(
        r#"topic "lg-{step}-{linger}" { }
           workload { messages = 1000 }
           producer { linger.ms = {linger} }
           matrix { linger = [0ms, 5ms] }
           steps { a { }  b { } }"#,
        &["topic.name"],
        &[
            ("a linger=0ms", &["lg-a-0ms-r1"]),
            ("a linger=5ms", &["lg-a-5ms-r1"]),
            ("b linger=0ms", &["lg-b-0ms-r1"]),
            ("b linger=5ms", &["lg-b-5ms-r1"]),
        ],
    );
}

#[test]
fn characters_kafka_refuses_in_a_variables_value_become_underscores_in_a_created_topic() {
    expect_runs(
        r#"topic "by-{who}" { }
           workload { messages = 1000 }
           matrix { who = ["ann & bo", "cy/dee"] }"#,
        &["topic.name"],
        &[
            ("who=ann & bo", &["by-ann___bo-r1"]),
            ("who=cy/dee", &["by-cy_dee-r1"]),
        ],
    );
}

#[test]
fn an_escaped_brace_in_a_topic_name_is_not_a_variable_and_not_a_topic_name_character() {
    expect_diagnostic(
        r#"topic "t\{x\}" { }  workload { messages = 1000 }"#,
        "`{` cannot stand in a topic name",
    );
}

#[test]
fn a_character_kafka_refuses_written_in_a_topic_name_is_refused_not_replaced() {
    expect_diagnostic(
        r#"topic "my/topic" { }  workload { messages = 1000 }"#,
        "`/` cannot stand in a topic name",
    );
}

#[test]
fn an_existing_topic_whose_name_kafka_refuses_is_refused_even_through_a_variable() {
    expect_diagnostic(
        r#"topic "my/topic" { existing = true }  workload { messages = 1000 }"#,
        "`/` cannot stand in a topic name",
    );
    expect_diagnostic(
        r#"topic "by-{who}" { existing = true }  workload { messages = 1000 }
           matrix { who = ["cy/dee"] }"#,
        "the existing topic `by-cy/dee` has a character Kafka does not allow",
    );
}

#[test]
fn a_topic_name_longer_than_kafka_allows_with_the_run_suffix_is_refused() {
    let fits = "t".repeat(249 - 7);
    runs(&format!(
        r#"topic "{fits}" {{ }}  workload {{ messages = 1 }}"#
    ));
    expect_diagnostic(
        &format!(r#"topic "{fits}x" {{ }}  workload {{ messages = 1 }}"#),
        "is 250 characters with the run suffix; Kafka allows 249",
    );
    let existing = "t".repeat(250);
    expect_diagnostic(
        &format!(r#"topic "{existing}" {{ existing = true }}  workload {{ messages = 1 }}"#),
        "is 250 characters; Kafka allows 249",
    );
}

#[test]
fn two_runs_that_would_create_the_same_topic_are_refused_naming_both() {
    expect_diagnostic(
        r#"topic "orders" { }  workload { messages = 1 }  producer { linger.ms = {linger} }
           matrix { linger = [0ms, 5ms] }"#,
        "runs `linger=0ms` and `linger=5ms` would both create topic `orders`",
    );
}

#[test]
fn an_existing_topic_keeps_its_name_without_the_run_suffix() {
    expect_runs(
        r#"topic "shared" { existing = true }  workload { messages = 1000 }"#,
        &["topic.name"],
        &[("run", &["shared"])],
    );
}

#[test]
fn an_unknown_variable_in_a_topic_name_is_a_diagnostic() {
    expect_diagnostic(
        r#"topic "t-{codex}" { }  workload { messages = 1000 }  matrix { codec = [none] }"#,
        "unknown variable `codex` in this name",
    );
}

// ---- how many cells --------------------------------------------------------------------------

#[test]
fn a_matrix_of_exactly_max_cells_lowers_every_cell() {
    let ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
    let runs = runs(&format!(
        "{BASICS}  matrix {{ a = {ten}  b = {ten}  c = {ten} }}"
    ));
    assert_eq!(runs.len(), 1000);
    assert_eq!(runs[0].label, "a=0 b=0 c=0");
    assert_eq!(runs[999].label, "a=9 b=9 c=9");
}

#[test]
fn a_matrix_of_more_than_max_cells_is_a_diagnostic_naming_the_count() {
    let ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
    expect_diagnostic(
        &format!("{BASICS}  matrix {{ a = {ten}  b = {ten}  c = {ten}  d = [0, 1] }}"),
        "this expands to 2000 runs; at most 1000 are allowed",
    );
}

#[test]
fn a_matrix_whose_run_count_overflows_reports_the_true_count() {
    let values = |n: usize| {
        format!(
            "[{}]",
            (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
        )
    };
    let matrix = |vars: usize, n: usize| {
        (0..vars)
            .map(|v| format!("v{v} = {}", values(n)))
            .collect::<Vec<_>>()
            .join("  ")
    };
    expect_diagnostic(
        &format!("{BASICS}  matrix {{ {} }}", matrix(16, 16)),
        "this expands to 18446744073709551616 runs",
    );
    expect_diagnostic(
        &format!("{BASICS}  matrix {{ {} }}", matrix(30, 10)),
        "this expands to 1000000000000000000000000000000 runs",
    );
}

#[test]
fn steps_count_towards_max_cells_too() {
    let ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
    expect_diagnostic(
        &format!(
            "{BASICS}  matrix {{ a = {ten}  b = {ten}  c = {ten} }}  steps {{ x {{ }}  y {{ }} }}"
        ),
        "this expands to 2000 runs; at most 1000 are allowed",
    );
}
