//! Assertion selection without a broker: a plan from inline scenario text (parse, check, plan)
//! and made-up run results, so which runs an `expect` line is judged on — and how — is tested
//! as the pure logic it is.

use kafkabench::assert::{evaluate, Verdict};
use kafkabench::diagnostic::render_text;
use kafkabench::measure::{LatencySummary, PlaceFigures, RunResult, RunStatus};
use kafkabench::plan::{plan, Plan, PlanOptions};
use kafkabench::report::verdict;
use kafkabench::source::Sources;

/// Four runs: codec × linger, in this order.
const RUNS: [&str; 4] = [
    "codec=none linger=0ms",
    "codec=none linger=5ms",
    "codec=zstd linger=0ms",
    "codec=zstd linger=5ms",
];

/// A 2 × 2 matrix scenario with the given `expect` lines.
fn matrix_plan(expect: &str) -> Plan {
    plan_of(&format!(
        r#"scenario "selection" {{
             matrix {{ codec = [none, zstd]  linger = [0ms, 5ms] }}
             topic "t-{{codec}}-{{linger}}" {{ partitions = 1 }}
             producer {{ compression.type = {{codec}}  linger.ms = {{linger}} }}
             workload {{ messages = 10  payload = random(size: 100B) }}
             expect {{ {expect} }}
           }}"#
    ))
}

fn plan_of(text: &str) -> Plan {
    let mut sources = Sources::default();
    let id = sources.add("inline.kbs".into(), text.to_string());
    let ast = kafkabench::syntax::parse(id, text)
        .unwrap_or_else(|d| panic!("{}", render_text(&d.into(), &sources, false, 100)));
    let scenario = kafkabench::check::check(&ast, &sources)
        .unwrap_or_else(|d| panic!("{}", render_text(&d, &sources, false, 100)));
    plan(&scenario, &PlanOptions::default())
}

/// A result for each run of `p` that has a throughput here, in messages per second.
fn results(p: &Plan, throughput: &[Option<f64>]) -> Vec<RunResult> {
    assert_eq!(p.runs.len(), throughput.len(), "one entry per planned run");
    p.runs
        .iter()
        .zip(throughput)
        .filter_map(|(run, t)| {
            t.map(|t| RunResult {
                index: run.index,
                label: run.label.clone(),
                throughput_msgs: t,
                status: RunStatus::Complete,
                ..RunResult::default()
            })
        })
        .collect()
}

/// Each verdict as `[runs] pass|FAIL`, in order: what a reader checks at a glance.
fn summary(verdicts: &[Verdict]) -> Vec<String> {
    verdicts
        .iter()
        .map(|v| {
            let result = if v.pass { "pass" } else { "FAIL" };
            format!("[{}] {result}", verdict::runs(v))
        })
        .collect()
}

#[test]
fn the_plan_has_the_runs_these_tests_name() {
    let labels: Vec<String> = matrix_plan("").runs.into_iter().map(|r| r.label).collect();
    assert_eq!(labels, RUNS);
}

#[test]
fn a_metric_without_a_selector_is_judged_on_every_run() {
    let p = matrix_plan("throughput > 100/s");
    let v = evaluate(
        &p,
        &results(&p, &[Some(150.0), Some(50.0), Some(101.0), Some(100.0)]),
    );
    assert_eq!(
        summary(&v),
        [
            "[codec=none linger=0ms] pass",
            "[codec=none linger=5ms] FAIL",
            "[codec=zstd linger=0ms] pass",
            "[codec=zstd linger=5ms] FAIL",
        ]
    );
}

#[test]
fn when_clauses_select_the_cells_an_assertion_is_judged_on() {
    let all = [Some(1.0); 4];
    for (expect, judged) in [
        ("throughput > 0/s when codec == zstd", vec![2, 3]),
        ("throughput > 0/s when codec != zstd", vec![0, 1]),
        ("throughput > 0/s when linger in [5ms]", vec![1, 3]),
        (
            "throughput > 0/s when linger == 5ms and codec == none",
            vec![1],
        ),
        (
            "throughput > 0/s when codec in [none, zstd]",
            vec![0, 1, 2, 3],
        ),
    ] {
        let p = matrix_plan(expect);
        let runs: Vec<String> = evaluate(&p, &results(&p, &all))
            .into_iter()
            .flat_map(|v| v.runs.into_iter().map(|r| r.label))
            .collect();
        let expected: Vec<&str> = judged.iter().map(|i| RUNS[*i]).collect();
        assert_eq!(runs, expected, "{expect}");
    }
}

#[test]
fn a_selector_picks_the_run_that_differs_only_in_its_coordinates() {
    // From each linger, `[codec=zstd]` and `[codec=none]` are that linger's two runs; the cells
    // that resolve to the same pair are judged once.
    let p = matrix_plan("throughput[codec=zstd] >= 0.8 * throughput[codec=none]");
    let v = evaluate(
        &p,
        &results(&p, &[Some(100.0), Some(100.0), Some(90.0), Some(70.0)]),
    );
    assert_eq!(
        summary(&v),
        [
            "[codec=zstd linger=0ms vs codec=none linger=0ms] pass",
            "[codec=zstd linger=5ms vs codec=none linger=5ms] FAIL",
        ]
    );
}

#[test]
fn a_selector_with_every_coordinate_names_one_run_from_everywhere() {
    let p = matrix_plan("throughput >= throughput[codec=none, linger=0ms] when codec == zstd");
    let v = evaluate(
        &p,
        &results(&p, &[Some(100.0), Some(1.0), Some(100.0), Some(99.0)]),
    );
    assert_eq!(
        summary(&v),
        [
            "[codec=zstd linger=0ms vs codec=none linger=0ms] pass",
            "[codec=zstd linger=5ms vs codec=none linger=0ms] FAIL",
        ]
    );
}

#[test]
fn bounds_hold_or_fail_at_their_exact_margins() {
    for (expect, measured, pass) in [
        ("throughput > 100/s", 100.0, false),
        ("throughput > 100/s", 100.5, true),
        ("throughput >= 100/s", 100.0, true),
        ("throughput < 100/s", 100.0, false),
        ("throughput <= 100/s", 100.0, true),
        ("throughput == 100/s", 100.0, true),
        ("throughput != 100/s", 100.0, false),
        ("throughput in 100/s..200/s", 100.0, true),
        ("throughput in 100/s..200/s", 200.0, true),
        ("throughput in 100/s..200/s", 99.0, false),
        ("throughput in 100/s..200/s", 201.0, false),
    ] {
        let p = matrix_plan(&format!("{expect} when codec == none and linger == 0ms"));
        let v = evaluate(&p, &results(&p, &[Some(measured), None, None, None]));
        assert_eq!(v.len(), 1, "{expect}");
        assert_eq!(v[0].pass, pass, "{expect} with {measured}/s: {:?}", v[0]);
        assert_eq!(
            v[0].shortfall.is_none(),
            pass,
            "{expect}: {:?}",
            v[0].shortfall
        );
    }
}

#[test]
fn a_failed_bound_says_what_was_measured_against_what_and_by_how_much() {
    let p = matrix_plan("throughput > 100/s when codec == none and linger == 0ms");
    let v = evaluate(&p, &results(&p, &[Some(50.0), None, None, None]));
    assert_eq!(verdict::measured(&v[0]), "50/s");
    assert_eq!(verdict::bound(&v[0]), "> 100/s");
    assert_eq!(
        verdict::detail(&v[0]).as_deref(),
        Some("measured 50/s against > 100/s (-50.0%)")
    );
}

#[test]
fn a_range_that_fails_is_measured_against_the_end_it_missed() {
    let p = matrix_plan("throughput in 100/s..200/s when codec == none and linger == 0ms");
    let low = evaluate(&p, &results(&p, &[Some(90.0), None, None, None]));
    assert_eq!(
        verdict::detail(&low[0]).as_deref(),
        Some("measured 90/s against in 100/s..200/s (-10.0%)")
    );
    let high = evaluate(&p, &results(&p, &[Some(300.0), None, None, None]));
    assert_eq!(
        verdict::detail(&high[0]).as_deref(),
        Some("measured 300/s against in 100/s..200/s (+50.0%)")
    );
}

#[test]
fn runs_that_did_not_execute_are_not_judged() {
    let p = matrix_plan("throughput[codec=zstd] >= 0.8 * throughput[codec=none]");
    // linger=5ms with zstd never ran (an interrupted invocation): only linger=0ms is judged.
    let v = evaluate(
        &p,
        &results(&p, &[Some(100.0), Some(100.0), Some(90.0), None]),
    );
    assert_eq!(
        summary(&v),
        ["[codec=zstd linger=0ms vs codec=none linger=0ms] pass"]
    );
}

#[test]
fn a_metric_that_was_not_measured_fails_and_says_so() {
    let p = matrix_plan("disk.ratio > 1x when codec == none and linger == 0ms");
    let v = evaluate(&p, &results(&p, &[Some(1.0), None, None, None]));
    assert!(!v[0].pass);
    assert_eq!(verdict::measured(&v[0]), "-");
    assert_eq!(
        verdict::detail(&v[0]).as_deref(),
        Some("not measured in run `codec=none linger=0ms`")
    );
}

#[test]
fn steps_are_selected_by_name() {
    let p = plan_of(
        r#"scenario "steps" {
             steps { baseline { }  batched { producer.linger.ms = 50ms } }
             topic "t-{step}" { partitions = 1 }
             workload { messages = 10  payload = random(size: 100B) }
             expect {
               throughput[step=batched] >= 2 * throughput[step=baseline]
               throughput > 0/s when step == baseline
             }
           }"#,
    );
    let v = evaluate(&p, &results(&p, &[Some(100.0), Some(250.0)]));
    assert_eq!(
        summary(&v),
        ["[batched vs baseline] pass", "[baseline] pass"]
    );
}

/// A result per run of `p` whose brokers acknowledged with these ack latencies (ms), each
/// broker's records all at one latency.
fn by_broker(p: &Plan, brokers: &[(i32, u64)]) -> Vec<RunResult> {
    let mut rs = results(p, &vec![Some(1.0); p.runs.len()]);
    for r in &mut rs {
        r.brokers = brokers
            .iter()
            .map(|&(id, ms)| {
                let mut h =
                    hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3)
                        .unwrap();
                h.record_n(ms * 1_000_000, 100).unwrap();
                PlaceFigures {
                    id,
                    records: 100,
                    bytes: 10_000,
                    ack: LatencySummary::from_histogram(&h),
                }
            })
            .collect();
    }
    rs
}

#[test]
fn every_broker_is_judged_alone_and_a_failure_names_it() {
    let p = plan_of(
        r#"scenario "brokers" {
             topic "t" { partitions = 3 }
             workload { messages = 10  payload = random(size: 100B) }
             expect {
               ack.p99 of every broker < 20ms
               ack.p99 of broker 3 < 20ms
               ack.p99 of broker 4 < 20ms
             }
           }"#,
    );
    let v = evaluate(&p, &by_broker(&p, &[(1, 5), (2, 2000), (3, 7)]));
    let every: Vec<(Option<i32>, bool)> = v
        .iter()
        .filter(|x| x.assertion == "ack.p99 of every broker < 20ms")
        .map(|x| (x.broker, x.pass))
        .collect();
    assert_eq!(every, [(Some(1), true), (Some(2), false), (Some(3), true)]);
    let failed = v.iter().find(|x| x.broker == Some(2)).unwrap();
    let label = &failed.runs[0].label;
    assert_eq!(verdict::runs(failed), format!("{label}, broker 2"));
    let three = v
        .iter()
        .find(|x| x.assertion.contains("broker 3 "))
        .unwrap();
    assert!(three.pass);
    // A broker that acknowledged nothing has no figure: not measured, a failure.
    let four = v.iter().find(|x| x.assertion.contains("broker 4")).unwrap();
    assert!(!four.pass);
    assert_eq!(verdict::measured(four), "-");
    // A run without figures per broker (a worker client) is not measured, never passed.
    let none = evaluate(&p, &results(&p, &[Some(1.0)]));
    assert!(none.iter().all(|x| !x.pass), "{none:?}");
}
