//! Series, change points and the gate on synthetic result files: what groups results and what
//! does not, a version change marked, trials as values, and a bound failing only on a recent
//! change past it. A paced run's throughput, the minimum effect and the family: figure_tests.rs.

use super::*;
use crate::measure::environment::{ClusterPrint, Host};
use crate::measure::trials::Trials;
use crate::measure::RunStatus;
use crate::random::Rng;
use crate::report::compare::parse_bounds;
use crate::report::json::{ResultFile, SCHEMA_VERSION};

/// A run whose throughput is `tput` and ack p50 `p50_ms` (percentiles only, as a trimmed file
/// keeps them).
pub(super) fn run(label: &str, tput: f64, p50_ms: f64) -> RunResult {
    let mut r = RunResult {
        label: label.into(),
        status: RunStatus::Complete,
        throughput_msgs: tput,
        ..RunResult::default()
    };
    r.ack.count = 100;
    r.ack.p50_ms = p50_ms;
    r.ack.p99_ms = p50_ms * 3.0;
    r
}

pub(super) fn env(cores: u32, cluster_id: &str, load: f64) -> Environment {
    Environment {
        kafkabench: "0.1.0".into(),
        librdkafka: "2.12.1".into(),
        cluster: Some(ClusterPrint {
            cluster_id: Some(cluster_id.into()),
            brokers: 1,
            api: vec!["Produce v13".into()],
            configs: None,
        }),
        host: Some(Host {
            cpu: Some("Xeon".into()),
            cores,
            memory_bytes: None,
            kernel: None,
            load: Some(load),
        }),
    }
}

/// Result file `i` of a history: started `i` minutes after a fixed instant.
pub(super) fn loaded(
    i: usize,
    scenario: &str,
    runs: Vec<RunResult>,
    environment: Environment,
) -> Loaded {
    let started_at = format!("2026-12-01T10:{:02}:00.000Z", i % 60);
    let started_ms = read::rfc3339_ms(&started_at).unwrap() + (i / 60) as i64 * 3_600_000;
    Loaded {
        path: format!("h/{i:03}.json"),
        file: ResultFile {
            schema_version: SCHEMA_VERSION,
            kafkabench_version: environment.kafkabench.clone(),
            librdkafka_version: Some(environment.librdkafka.clone()),
            scenario: scenario.into(),
            scenario_text: None,
            scenario_includes: vec![],
            description: None,
            run_id: format!("r{i}"),
            started_at: Some(started_at.clone()),
            scale: 1.0,
            interval_secs: None,
            planned_runs: runs.len(),
            outcome: "ok".into(),
            exit_code: 0,
            failure: None,
            interrupted: false,
            runs,
            assertions: vec![],
            notes: vec![],
            environment: Some(environment),
            shard_environments: Vec::new(),
        },
        started_at,
        started_ms,
    }
}

pub(super) fn options(bounds: &[&str]) -> Options {
    Options {
        alpha: crate::measure::changepoint::ALPHA,
        min_effect: crate::measure::changepoint::MIN_EFFECT,
        last: LAST,
        bounds: parse_bounds(bounds.iter().copied()).unwrap(),
    }
}

/// 40 results of one run: throughput 1000/s with 1 % noise, 10 % lower from `at` on.
fn history_with_drop(at: usize) -> Vec<Loaded> {
    let mut rng = Rng::new(9);
    (0..40)
        .map(|i| {
            let level = if i >= at { 900.0 } else { 1000.0 };
            let tput = level * (1.0 + 0.01 * (rng.next_f64() - 0.5));
            loaded(i, "s", vec![run("linger=0ms", tput, 2.0)], env(2, "c", 0.5))
        })
        .collect()
}

#[test]
fn a_series_is_a_scenarios_run_in_one_setting_and_not_its_cluster_id_or_load() {
    let files: Vec<Loaded> = (0..8)
        .map(|i| {
            // A fresh cluster id and another load every time: still one series.
            let e = env(if i < 4 { 2 } else { 8 }, &format!("cluster-{i}"), i as f64);
            let scenario = if i % 2 == 0 { "a" } else { "b" };
            loaded(
                i,
                scenario,
                vec![run("x=1", 1000.0, 2.0), run("x=2", 900.0, 3.0)],
                e,
            )
        })
        .collect();
    let h = analyse(&files, &options(&[]), vec![]);
    let keys: Vec<(String, String, Option<u32>, usize)> = (h.series.iter())
        .map(|s| {
            (
                s.scenario.clone(),
                s.run.clone(),
                s.setting.cores,
                s.results.len(),
            )
        })
        .collect();
    let want = |sc: &str, run: &str, cores: u32| (sc.to_string(), run.to_string(), Some(cores), 2);
    assert_eq!(
        keys,
        vec![
            want("a", "x=1", 2),
            want("a", "x=2", 2),
            want("b", "x=1", 2),
            want("b", "x=2", 2),
            want("a", "x=1", 8),
            want("a", "x=2", 8),
            want("b", "x=1", 8),
            want("b", "x=2", 8),
        ]
    );
}

#[test]
fn a_drop_is_found_where_it_happened_with_its_means() {
    let h = analyse(&history_with_drop(25), &options(&[]), vec![]);
    assert_eq!(h.series.len(), 1);
    let f = (h.series[0].figures.iter())
        .find(|f| f.name == "throughput")
        .unwrap();
    assert_eq!(f.change_points.len(), 1, "{:?}", f.change_points);
    let c = &f.change_points[0];
    assert_eq!(
        (c.index, c.run_id.as_str(), c.verdict),
        (25, "r25", "worse")
    );
    assert!(
        (c.before - 1000.0).abs() < 5.0 && (c.after - 900.0).abs() < 5.0,
        "{c:?}"
    );
    assert!((c.change_pct.unwrap() + 10.0).abs() < 0.5, "{c:?}");
    // The ack latency did not move: no change point there.
    let ack = (h.series[0].figures.iter())
        .find(|f| f.name == "ack.p50")
        .unwrap();
    assert!(ack.change_points.is_empty());
}

#[test]
fn the_gate_fails_on_a_recent_change_past_its_bound_only() {
    // The drop is among the last 10 results: past -5 %, not past -15 %.
    let files = history_with_drop(33);
    let h = analyse(&files, &options(&["throughput:-5%"]), vec![]);
    assert_eq!((h.checks, h.breaches.len()), (1, 1), "{:?}", h.breaches);
    let b = &h.breaches[0];
    assert_eq!((b.figure.as_str(), b.index), ("throughput", 33));
    assert!(
        text::breach_text(b).contains(
            "throughput fell 10.1% from result #34 (2026-12-01 10:33:00; 1002/s → 900.94/s)"
        ),
        "{}",
        text::breach_text(b)
    );
    assert!(analyse(&files, &options(&["throughput:-15%"]), vec![])
        .breaches
        .is_empty());
    // Older than the last K results: history, not news.
    let h = analyse(
        &history_with_drop(20),
        &options(&["throughput:-5%"]),
        vec![],
    );
    assert_eq!((h.checks, h.breaches.len()), (1, 0));
    // A bound on a figure no result measured is said, not passed silently.
    let h = analyse(&files, &options(&["e2e.p99:+10%"]), vec![]);
    assert_eq!(h.checks, 0);
    assert!(
        h.unchecked[0].contains("e2e.p99 is not measured"),
        "{:?}",
        h.unchecked
    );
}

#[test]
fn an_improvement_does_not_fail_the_gate() {
    let mut files = history_with_drop(33);
    for l in &mut files {
        let r = &mut l.file.runs[0];
        r.throughput_msgs = 2000.0 - r.throughput_msgs;
    }
    let h = analyse(&files, &options(&["throughput:-5%"]), vec![]);
    let f = &h.series[0].figures[0];
    assert_eq!(f.change_points[0].verdict, "better");
    assert!(h.breaches.is_empty());
}

#[test]
fn a_new_kafkabench_is_marked_on_the_series_not_a_new_series() {
    let mut files = history_with_drop(25);
    for l in &mut files[25..] {
        l.file.kafkabench_version = "0.2.0".into();
    }
    let h = analyse(&files, &options(&[]), vec![]);
    assert_eq!(h.series.len(), 1);
    let s = &h.series[0];
    assert_eq!(
        s.versions,
        vec![VersionChange {
            index: 25,
            what: "kafkabench",
            from: "0.1.0".into(),
            to: "0.2.0".into()
        }]
    );
    let c = &s
        .figures
        .iter()
        .find(|f| f.name == "throughput")
        .unwrap()
        .change_points[0];
    assert_eq!(c.versions, vec!["kafkabench 0.1.0 → 0.2.0 at this result"]);
}

#[test]
fn trials_are_each_runs_values_and_incomplete_runs_are_left_out() {
    let mut rng = Rng::new(4);
    let mut files: Vec<Loaded> = (0..30)
        .map(|i| {
            let level = if i >= 15 { 4.0 } else { 2.0 };
            let trials: Vec<RunResult> = (0..3)
                .map(|_| run("r", 1000.0, level * (1.0 + 0.05 * rng.next_f64())))
                .collect();
            let mut shown = trials[1].clone();
            shown.trials = Some(Box::new(Trials {
                results: trials,
                ..Trials::default()
            }));
            loaded(i, "s", vec![shown], env(2, "c", 0.1))
        })
        .collect();
    files[3].file.runs[0].status = RunStatus::Interrupted;
    let h = analyse(&files, &options(&[]), vec![]);
    let s = &h.series[0];
    assert_eq!((s.results.len(), s.left_out.len()), (29, 1));
    assert!(
        s.left_out[0].reason.contains("did not complete"),
        "{:?}",
        s.left_out
    );
    assert_eq!(s.results[0].trials, 3);
    let f = s.figures.iter().find(|f| f.name == "ack.p50").unwrap();
    assert!(f.values.iter().all(|v| v.len() == 3));
    let c = &f.change_points[0];
    // Result 15 of the files is the 14th of the series: file 3 was left out.
    assert_eq!(
        (c.index, c.run_id.as_str(), c.verdict),
        (14, "r15", "worse")
    );
    assert!(
        (c.before - 0.00205).abs() < 1e-4 && (c.after - 0.0041).abs() < 2e-4,
        "{c:?}"
    );
}

#[test]
fn the_json_document_carries_its_version_and_outcome() {
    let h = analyse(
        &history_with_drop(33),
        &options(&["throughput:-5%"]),
        vec![],
    );
    let mut buf = Vec::new();
    h.write_json(&mut buf).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    assert_eq!(v["history_version"], 2);
    assert_eq!(v["outcome"], "gate_failed");
    assert_eq!(v["series"][0]["figures"][0]["name"], "throughput");
    assert_eq!(
        v["series"][0]["figures"][0]["change_points"][0]["index"],
        33
    );
    assert_eq!(v["breaches"][0]["bound"], "throughput:-5%");
}

#[test]
fn a_latency_level_change_shows_through_rare_stalls_of_100_times_it() {
    // ack.p50 about 1 ms, 12 ms from result 15 on (linger); a busy machine stalls a few trials
    // before it for 0.2–1.1 s, as the local broker's history under load did.
    let mut rng = Rng::new(8);
    let stalls = [
        (0, 0, 1100.0),
        (1, 1, 190.0),
        (1, 2, 200.0),
        (13, 0, 390.0),
        (14, 0, 110.0),
    ];
    let files: Vec<Loaded> = (0..30)
        .map(|i| {
            let level = if i >= 15 { 12.0 } else { 1.0 };
            let trials: Vec<RunResult> = (0..3)
                .map(|t| {
                    let stall = stalls.iter().find(|s| (s.0, s.1) == (i, t));
                    let ms = stall.map_or(level * (1.0 + 0.2 * rng.next_f64()), |s| s.2);
                    run("r", 1000.0, ms)
                })
                .collect();
            let mut shown = trials[1].clone();
            shown.trials = Some(Box::new(Trials {
                results: trials,
                ..Trials::default()
            }));
            loaded(i, "s", vec![shown], env(2, "c", 0.1))
        })
        .collect();
    let h = analyse(&files, &options(&[]), vec![]);
    let f = (h.series[0].figures.iter())
        .find(|f| f.name == "ack.p50")
        .unwrap();
    let at: Vec<usize> = f.change_points.iter().map(|c| c.index).collect();
    assert_eq!(at, [15], "{:?}", f.change_points);
    // Summarised as the search sees them: geometric means, 2 ms → 13 ms (five stalls of 45
    // values double the first), where the means of the values were 45 ms → 13 ms.
    let c = &f.change_points[0];
    assert!(
        c.before < 0.0025 && (c.after - 0.0132).abs() < 1e-3,
        "{c:?}"
    );
    assert_eq!(f.summary, "geometric mean");
}

#[test]
fn a_search_that_could_not_say_its_capacity_is_no_point_of_the_capacity_series() {
    // 30 searches at about 50k/s; every fifth said "not narrowed" or "no stable capacity".
    // Read as 0 (as `compare` does), those would be change points no cluster made.
    use crate::measure::capacity::{CapacityFigures, Limit, NotNarrowed, Unstable};
    let mut rng = Rng::new(3);
    let history: Vec<Loaded> = (0..30)
        .map(|i| {
            let mut r = run("search", 1000.0, 2.0);
            let mut c = CapacityFigures {
                capacity: Some(50_000.0 * (1.0 + 0.01 * (rng.next_f64() - 0.5))),
                limit: Limit::Slo,
                ..CapacityFigures::default()
            };
            if i % 5 == 4 {
                c.capacity = None;
                if i % 10 == 4 {
                    c.not_narrowed = Some(NotNarrowed { estimate: 60e3 });
                } else {
                    c.unstable = Some(Unstable {
                        passes: 9,
                        probes: 15,
                        low: 10e3,
                        high: 41e3,
                    });
                }
            }
            r.capacity = Some(Box::new(c));
            loaded(i, "s", vec![r], env(2, "c", 0.5))
        })
        .collect();
    let h = analyse(&history, &options(&["capacity:-5%"]), vec![]);
    let f = (h.series[0].figures.iter())
        .find(|f| f.name == "capacity")
        .expect("the capacity series");
    assert_eq!(f.results.len(), 24, "{:?}", f.results);
    assert!(!f.results.contains(&4) && f.results.contains(&5));
    assert!(f.change_points.is_empty(), "{:?}", f.change_points);
    assert!(h.breaches.is_empty());
}

#[test]
fn a_series_is_keyed_by_its_clients_and_a_workers_release() {
    use crate::model::{ClientKind, ClientRelease};
    let on = |name, version: &str| {
        let mut r = run("run", 1000.0, 2.0);
        r.producer_client = Some(ClientRelease {
            name,
            version: version.into(),
        });
        r
    };
    let mut older = run("run", 1000.0, 2.0);
    older.producer_client = None;
    let files = vec![
        // A file of an older kafkabench and one on librdkafka 2.13: one series, the release
        // marked as before.
        loaded(0, "s", vec![older], env(2, "c", 0.5)),
        loaded(
            1,
            "s",
            vec![on(ClientKind::Librdkafka, "2.13.0")],
            env(2, "c", 0.5),
        ),
        loaded(
            2,
            "s",
            vec![on(ClientKind::Java, "4.4.0")],
            env(2, "c", 0.5),
        ),
        loaded(
            3,
            "s",
            vec![on(ClientKind::Java, "4.4.0")],
            env(2, "c", 0.5),
        ),
        loaded(
            4,
            "s",
            vec![on(ClientKind::Java, "3.9.1")],
            env(2, "c", 0.5),
        ),
    ];
    let h = analyse(&files, &options(&[]), vec![]);
    let series: Vec<(Option<String>, usize)> = (h.series.iter())
        .map(|s| (s.setting.clients.clone(), s.results.len()))
        .collect();
    assert_eq!(
        series,
        vec![
            (None, 2),
            (Some("producer java 4.4.0".into()), 2),
            (Some("producer java 3.9.1".into()), 1),
        ]
    );
    assert!(h.series[1]
        .setting
        .describe()
        .starts_with("producer java 4.4.0, 1 broker"));
}
