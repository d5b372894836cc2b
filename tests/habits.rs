//! The habits people bring from k6, OpenMessaging Benchmark and kafka-producer-perf-test, each
//! accepted with the meaning they expect: count suffixes, `p99.9` and `median`, `acks = -1`,
//! ramps, calls as matrix values, other delimiters and length-prefixed payload files. The
//! habits that are refused are diagnostics fixtures (tests/fixtures/invalid/habit_*.kbs).

use std::time::Duration;

use kafkabench::check::check;
use kafkabench::diagnostic::render_text;
use kafkabench::model::{
    Expr, LatencyKind, Metric, PayloadSize, PayloadSpec, RateSpec, Scenario, Stat, Test, Workload,
};
use kafkabench::source::Sources;
use kafkabench::syntax::parse;

/// A topic, for cases about the workload and the producer.
const TOPIC: &str = r#"topic "orders" { existing = true }"#;

/// Payload files for these cases, relative to the crate (where an inline scenario lives).
const DATA: &str = "tests/fixtures/habits";

fn checked(body: &str) -> Result<Scenario, String> {
    let text = format!("scenario \"habits\" {{\n{body}\n}}\n");
    let mut sources = Sources::default();
    let file = sources.add("habits.kbs".into(), text.clone());
    let ast = parse(file, &text).map_err(|d| format!("{d:?}"))?;
    check(&ast, &sources).map_err(|d| render_text(&d, &sources, false, 100))
}

fn accepted(body: &str) -> Scenario {
    checked(body).unwrap_or_else(|d| panic!("{body}\n{d}"))
}

/// The workload of a scenario of one run.
fn workload(body: &str) -> Workload {
    let s = accepted(&format!("{TOPIC} {body}"));
    assert_eq!(s.cells.len(), 1, "{body}");
    s.cells[0].spec.workload.clone()
}

/// The records the workload's rate alone schedules (no count or time limit), as the plan
/// estimates them; None when unbounded. The pacer's own schedule of these rates is checked in
/// src/run/pacer_tests.rs.
fn scheduled(w: &Workload) -> Option<u64> {
    let rate_alone = Workload {
        messages: None,
        duration: None,
        warmup: None,
        ..w.clone()
    };
    kafkabench::plan::estimate(&rate_alone).measured.records
}

fn records(payload: &PayloadSpec) -> Vec<Vec<u8>> {
    match payload {
        PayloadSpec::File { lines, .. } => lines.as_ref().clone(),
        other => panic!("not a file payload: {other:?}"),
    }
}

// ---- counts ----------------------------------------------------------------------------------

#[test]
fn counts_take_k_m_and_g_suffixes_as_people_write_them() {
    for (written, count) in [
        ("300k", 300_000),
        ("10K", 10_000),
        ("1M", 1_000_000),
        ("1.5M", 1_500_000),
        ("1.1k", 1_100),
        ("2G", 2_000_000_000),
        ("100_000", 100_000),
    ] {
        let w = workload(&format!("workload {{ messages = {written} }}"));
        assert_eq!(w.messages, Some(count), "messages = {written}");
    }
}

#[test]
fn a_rate_takes_a_count_suffix_before_its_period() {
    let w = workload("workload { messages = 10  rate = 100k/s }");
    assert!(
        matches!(w.rate, RateSpec::Fixed(r) if r == 100_000.0),
        "{:?}",
        w.rate
    );
    let w = workload("workload { messages = 10  rate = 1.2M/min }");
    assert!(
        matches!(w.rate, RateSpec::Fixed(r) if r == 20_000.0),
        "{:?}",
        w.rate
    );
}

#[test]
fn a_count_suffix_in_a_client_property_becomes_the_whole_number() {
    let s = accepted(&format!(
        "{TOPIC} workload {{ messages = 1 }} producer {{ queue.buffering.max.messages = 1M  batch.num.messages = 10k }}"
    ));
    let p = &s.cells[0].spec.producer;
    assert_eq!(p.get("queue.buffering.max.messages"), Some("1000000"));
    assert_eq!(p.get("batch.num.messages"), Some("10000"));
}

#[test]
fn a_count_suffix_in_an_assertion_is_a_plain_number() {
    let s = accepted(&format!(
        "{TOPIC} workload {{ messages = 300k }} expect {{ acked >= 300k  throughput > 50k/s }}"
    ));
    let constants: Vec<f64> = s
        .assertions
        .iter()
        .map(|a| match &a.test {
            Test::Compare(_, Expr::Const(x, _)) => *x,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(constants, [300_000.0, 50_000.0]);
}

#[test]
fn units_written_either_way_are_both_accepted_with_their_own_meaning() {
    // `1000ms` and `1s` are the same length; `KB` counts thousands and `KiB` 1024s; `messages =
    // 1M` is a million (tests/fixtures/slips has the forms that are refused, each with its fix).
    let a = workload("workload { duration = 1000ms  payload = random(size: 100KB) }");
    let b = workload("workload { duration = 1s  payload = random(size: 100KiB)  messages = 1M }");
    assert_eq!(a.duration, b.duration);
    assert_eq!(a.duration, Some(Duration::from_secs(1)));
    assert!(
        matches!(
            a.payload,
            PayloadSpec::Random {
                size: PayloadSize::Fixed(100_000),
                ..
            }
        ),
        "{:?}",
        a.payload
    );
    assert!(
        matches!(
            b.payload,
            PayloadSpec::Random {
                size: PayloadSize::Fixed(102_400),
                ..
            }
        ),
        "{:?}",
        b.payload
    );
    assert_eq!(b.messages, Some(1_000_000));
}

// ---- percentiles -----------------------------------------------------------------------------

fn lhs_metric(assertion: &str) -> Metric {
    let s = accepted(&format!(
        "{TOPIC} workload {{ messages = 1 }} consumer {{ }} expect {{ {assertion} }}"
    ));
    match &s.assertions[0].lhs {
        Expr::Metric { metric, .. } => *metric,
        other => panic!("{other:?}"),
    }
}

#[test]
fn p99_9_written_with_a_dot_is_the_same_metric_as_p999() {
    assert_eq!(lhs_metric("ack.p99.9 < 5ms"), lhs_metric("ack.p999 < 5ms"));
    assert_eq!(
        lhs_metric("e2e.p99.99 < 5ms"),
        Metric::Latency(LatencyKind::E2e, Stat::Percentile(99.99))
    );
}

#[test]
fn the_median_is_p50_not_the_mean() {
    assert_eq!(
        lhs_metric("ack.median < 5ms"),
        Metric::Latency(LatencyKind::Ack, Stat::Percentile(50.0))
    );
    assert_eq!(lhs_metric("e2e.median < 5ms"), lhs_metric("e2e.p50 < 5ms"));
}

#[test]
fn a_malformed_dotted_percentile_is_an_unknown_metric_not_a_syntax_error() {
    let d = checked(&format!(
        "{TOPIC} workload {{ messages = 1 }} expect {{ ack.p99.9.9 < 5ms }}"
    ))
    .expect_err("refused");
    assert!(d.contains("unknown metric `ack.p99.9.9`"), "{d}");
}

// ---- acks ------------------------------------------------------------------------------------

#[test]
fn acks_minus_one_is_accepted_as_librdkafka_and_the_java_client_do() {
    let s = accepted(&format!(
        "{TOPIC} workload {{ messages = 1 }} producer {{ acks = -1 }}"
    ));
    assert_eq!(s.cells[0].spec.producer.get("acks"), Some("-1"));
}

// ---- ramps -----------------------------------------------------------------------------------

#[test]
fn a_ramp_alone_is_the_rate_and_sets_the_length() {
    let w = workload("workload { rate = ramp 1000/s to 20000/s over 30s }");
    let RateSpec::Shape(segments) = &w.rate else {
        panic!("{:?}", w.rate)
    };
    assert_eq!(segments.len(), 1);
    assert_eq!(segments[0].per_sec, 1000.0);
    assert_eq!(segments[0].ramp_to, Some(20000.0));
    assert_eq!(w.rate.total_duration(), Some(Duration::from_secs(30)));
    assert_eq!(scheduled(&w), Some(315_000));
}

#[test]
fn ramps_mix_with_constant_segments_and_pauses_in_a_shape() {
    let w = workload(
        "workload { rate = ramp 0/s to 100/s over 10s, then 100/s for 10s, then 0/s for 5s, then ramp 100/s to 0/s over 10s }",
    );
    assert_eq!(w.rate.total_duration(), Some(Duration::from_secs(35)));
    assert_eq!(scheduled(&w), Some(500 + 1000 + 500));
}

#[test]
fn a_ramp_in_a_shape_takes_count_suffixes_and_any_period() {
    let w = workload("workload { rate = ramp 60k/min to 2k/s over 1m }");
    let RateSpec::Shape(segments) = &w.rate else {
        panic!("{:?}", w.rate)
    };
    assert_eq!(
        (segments[0].per_sec, segments[0].ramp_to),
        (1000.0, Some(2000.0))
    );
}

#[test]
fn a_ramp_that_sends_nothing_is_refused() {
    let d = checked(&format!(
        "{TOPIC} workload {{ rate = ramp 0/s to 0/s over 10s }}"
    ))
    .expect_err("refused");
    assert!(d.contains("this rate shape sends nothing"), "{d}");
}

// ---- calls and shapes as matrix values -------------------------------------------------------

#[test]
fn payload_calls_are_matrix_values_each_checked_in_its_own_run() {
    let s = accepted(&format!(
        r#"topic "orders-{{payload}}" {{ }}
           workload {{ messages = 10  payload = {{payload}} }}
           matrix {{ payload = [random(size: 512B), file("{DATA}/orders.jsonl"), json(size: 1KiB)] }}"#
    ));
    let labels: Vec<String> = s.cells.iter().map(|c| c.label()).collect();
    assert_eq!(
        labels,
        [
            "payload=random(size: 512B)".to_string(),
            format!("payload=file(\"{DATA}/orders.jsonl\")"),
            "payload=json(size: 1KiB)".to_string(),
        ]
    );
    let w: Vec<&PayloadSpec> = s.cells.iter().map(|c| &c.spec.workload.payload).collect();
    assert!(
        matches!(
            w[0],
            PayloadSpec::Random {
                size: PayloadSize::Fixed(512),
                ..
            }
        ),
        "{:?}",
        w[0]
    );
    assert_eq!(records(w[1]).len(), 2);
    assert!(
        matches!(
            w[2],
            PayloadSpec::Json {
                size: PayloadSize::Fixed(1024),
                ..
            }
        ),
        "{:?}",
        w[2]
    );
}

#[test]
fn a_mistake_inside_a_call_in_the_matrix_is_reported_once_at_the_call() {
    let d = checked(
        r#"topic "orders-{payload}-{n}" { }
           workload { messages = {n}  payload = {payload} }
           matrix { payload = [random(size: 5ms), json(size: 1KiB)]  n = [1, 2] }"#,
    )
    .expect_err("refused");
    assert_eq!(
        d.matches("size is a size, not a duration").count(),
        1,
        "{d}"
    );
}

#[test]
fn rate_shapes_and_ramps_are_matrix_values() {
    let s = accepted(&format!(
        "{TOPIC} workload {{ rate = {{r}} }} matrix {{ r = [100/s for 10s, ramp 10/s to 100/s over 10s] }}"
    ));
    let totals: Vec<Option<u64>> = s
        .cells
        .iter()
        .map(|c| scheduled(&c.spec.workload))
        .collect();
    assert_eq!(totals, [Some(1000), Some(550)]);
}

// ---- payload files ---------------------------------------------------------------------------

#[test]
fn a_file_payload_takes_any_delimiter_with_escapes_decoded() {
    let w = workload(&format!(
        r#"workload {{ messages = 1  payload = file("{DATA}/orders.rs1", delimiter: "\x1e") }}"#
    ));
    assert_eq!(
        records(&w.payload),
        [
            b"{\"order\":1}".to_vec(),
            b"{\"order\":2,\n \"lines\":\"two\"}".to_vec()
        ]
    );
}

#[test]
fn a_file_payload_of_lines_is_the_default_and_may_be_named() {
    let w = workload(&format!(
        r#"workload {{ messages = 1  payload = file("{DATA}/orders.jsonl", format: lines) }}"#
    ));
    assert_eq!(records(&w.payload).len(), 2);
}

#[test]
fn a_length_prefixed_file_gives_its_binary_records_byte_for_byte() {
    let w = workload(&format!(
        r#"workload {{ messages = 1  payload = file("{DATA}/records.bin", format: length_prefixed) }}"#
    ));
    assert_eq!(
        records(&w.payload),
        [b"\x00\x01\x02binary".to_vec(), vec![], vec![0xff; 300]]
    );
}

#[test]
fn one_file_cut_two_ways_is_two_payloads() {
    let s = accepted(&format!(
        r#"topic "t-{{p}}" {{ }} workload {{ messages = 1  payload = {{p}} }}
           matrix {{ p = [file("{DATA}/orders.rs1"), file("{DATA}/orders.rs1", delimiter: "\x1e")] }}"#
    ));
    let counts: Vec<usize> = s
        .cells
        .iter()
        .map(|c| records(&c.spec.workload.payload).len())
        .collect();
    // By lines, the record separator is inside the records: the file has two lines.
    assert_eq!(counts, [2, 2]);
    assert_ne!(
        records(&s.cells[0].spec.workload.payload),
        records(&s.cells[1].spec.workload.payload)
    );
}

// ---- all of them at once ---------------------------------------------------------------------

/// One scenario written with every habit, read back run by run: what each habit became.
#[test]
fn a_scenario_written_with_every_habit_checks_into_what_each_habit_means() {
    let s = accepted(&format!(
        r#"topic "orders-{{payload}}-{{r}}" {{ }}
           producer {{ acks = -1  queue.buffering.max.messages = 1M }}
           consumer {{ }}
           workload {{ messages = 300k  rate = {{r}}  payload = {{payload}} }}
           matrix {{
             payload = [random(size: 512B), file("{DATA}/records.bin", format: length_prefixed)]
             r = [100k/s, ramp 1k/s to 20k/s over 30s]
           }}
           expect {{ ack.p99.9 < 5ms  e2e.median < 1ms  sent >= 1.5M }}"#
    ));
    let mut out = String::new();
    for c in &s.cells {
        let w = &c.spec.workload;
        let payload = match &w.payload {
            PayloadSpec::File { lines, .. } => format!("{} records from a file", lines.len()),
            other => format!("{other:?}"),
        };
        out += &format!(
            "{}\n  messages {:?}, rate {:?}, {} records scheduled\n  payload {payload}\n  acks={} queue.buffering.max.messages={}\n",
            c.label(),
            w.messages,
            w.rate,
            scheduled(w).map_or("unbounded".into(), |t| t.to_string()),
            c.spec.producer.get("acks").unwrap_or("-"),
            c.spec.producer.get("queue.buffering.max.messages").unwrap_or("-"),
        );
    }
    for a in &s.assertions {
        let Expr::Metric { metric, .. } = &a.lhs else {
            panic!("{a:?}")
        };
        let Test::Compare(op, rhs) = &a.test else {
            panic!("{a:?}")
        };
        out += &format!("{}: {metric:?} {op:?} {rhs:?}\n", a.text);
    }
    insta::assert_snapshot!(out);
}
