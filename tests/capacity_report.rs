//! A capacity search as the report shows it, from synthetic search cells (no broker): the
//! terminal table with every probe and why it failed, the HTML plot of latency against
//! achieved throughput with the SLO and the capacity drawn on it, and `compare` gating on
//! the capacity. The helpers build cells the way a search records them; `result_file.rs`
//! uses them too.

use std::path::{Path, PathBuf};

use crate::common::{expect_exit, kafkabench, text};
use kafkabench::measure::{
    new_histogram, record, CapacityFigures, GeneratorLoad, LatencySummary, RunResult, RunStatus,
};
use kafkabench::report::json::{ResultFile, SCHEMA_VERSION};
use serde_json::{json, Value};

/// A distribution of 1000 latencies whose p50, p99 and p99.9 are about the given ms.
fn latencies((p50, p99, p999): (f64, f64, f64)) -> LatencySummary {
    let mut h = new_histogram();
    for i in 0..1000u32 {
        let i = f64::from(i);
        let ms = if i < 500.0 {
            p50 * (0.6 + 0.4 * i / 500.0)
        } else if i < 990.0 {
            p50 + (p99 - p50) * (i - 500.0) / 490.0
        } else {
            p99 + (p999 - p99) * (i - 990.0) / 9.0
        };
        record(&mut h, (ms * 1e6) as u64);
    }
    LatencySummary::from_histogram(&h)
}

/// What one probe measured.
pub(crate) struct Probe {
    pub target: f64,
    pub trial: u32,
    pub achieved: f64,
    pub ack: (f64, f64, f64),
    pub e2e: Option<(f64, f64, f64)>,
    /// Its misses as the result file holds them; none: it passed.
    pub misses: Vec<Value>,
    pub generator: Option<GeneratorLoad>,
}

impl Probe {
    fn result(&self, label: &str) -> RunResult {
        RunResult {
            label: label.into(),
            status: RunStatus::Complete,
            sent: (self.target * 10.0) as u64,
            acked: (self.achieved * 10.0) as u64,
            elapsed_secs: 10.0,
            throughput_msgs: self.achieved,
            target_rate: Some(self.target),
            achieved_rate: self.achieved,
            ack: latencies(self.ack),
            service: latencies(self.ack),
            e2e: self.e2e.map(latencies),
            generator: self.generator,
            ..RunResult::default()
        }
    }
}

/// A search cell: its probes in the order they ran and the rest of its figures as JSON
/// (`capacity`, `limit`, `bracket`, …); its own figures are the last passing probe's at the
/// capacity.
pub(crate) fn search_cell(label: &str, index: usize, probes: &[Probe], rest: Value) -> RunResult {
    let mut figures = rest;
    let list: Vec<Value> = probes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            json!({
                "number": i + 1,
                "target": p.target,
                "trial": p.trial,
                "achieved": p.achieved,
                "pass": p.misses.is_empty(),
                "misses": p.misses,
                "result": serde_json::to_value(p.result(label)).unwrap(),
            })
        })
        .collect();
    figures["probes"] = Value::Array(list);
    let figures: CapacityFigures = serde_json::from_value(figures).expect("capacity figures");
    let at = figures.capacity.and_then(|c| {
        probes
            .iter()
            .rposition(|p| p.misses.is_empty() && p.target == c)
    });
    let mut run = at.map_or_else(
        || probes[probes.len() - 1].result(label),
        |i| probes[i].result(label),
    );
    run.index = index;
    run.capacity = Some(Box::new(figures));
    run
}

fn probe(target: f64, achieved: f64, ack: (f64, f64, f64), e2e: (f64, f64, f64)) -> Probe {
    Probe {
        target,
        trial: 1,
        achieved,
        ack,
        e2e: Some(e2e),
        misses: vec![],
        generator: None,
    }
}

fn slo_miss(measured: f64) -> Value {
    json!({"kind": "slo", "condition": "e2e.p99 < 20ms", "measured": measured, "bound": 0.02,
           "unit": "Duration", "read_side": true})
}

fn rate_miss(achieved: f64, target: f64) -> Value {
    json!({"kind": "rate", "achieved": achieved, "least": 0.95 * target})
}

/// Brackets by doubling from 10k/s (two failures in a row at 80k and 160k/s), then bisects
/// 40k–80k/s to 52.5k/s, limited by `e2e.p99 < 20ms`; latency bends up near the capacity.
pub(crate) fn slo_limited(label: &str, index: usize) -> RunResult {
    let failing = |mut p: Probe, misses: Vec<Value>| {
        p.misses = misses;
        p
    };
    let mut p5 = failing(
        probe(
            160e3,
            54.0e3,
            (120.0, 600.0, 1200.0),
            (150.0, 820.0, 1500.0),
        ),
        vec![
            rate_miss(54.0e3, 160e3),
            json!({"kind": "slip", "behind_secs": 6.5, "allowed_secs": 0.5}),
            json!({"kind": "failed", "records": 12}),
            slo_miss(0.82),
        ],
    );
    p5.generator = Some(GeneratorLoad {
        sender_busy: 0.97,
        reader_busy: 0.0,
        process_cores: 1.8,
        cores: 2,
        ..GeneratorLoad::default()
    });
    let probes = [
        probe(10e3, 10e3, (2.0, 5.0, 8.0), (3.0, 7.0, 11.0)),
        probe(20e3, 20e3, (2.2, 5.5, 9.0), (3.3, 8.0, 12.0)),
        probe(40e3, 39.9e3, (3.0, 8.0, 14.0), (4.5, 12.0, 20.0)),
        failing(
            probe(80e3, 53.1e3, (40.0, 180.0, 320.0), (60.0, 260.0, 480.0)),
            vec![
                rate_miss(53.1e3, 80e3),
                json!({"kind": "slip", "behind_secs": 1.3, "allowed_secs": 0.5}),
                slo_miss(0.26),
            ],
        ),
        p5,
        failing(
            probe(60e3, 57.8e3, (9.0, 24.0, 41.0), (12.0, 31.2, 52.0)),
            vec![slo_miss(0.0312)],
        ),
        probe(50e3, 49.9e3, (4.1, 11.0, 19.0), (6.0, 16.5, 27.0)),
        failing(
            probe(55e3, 54.9e3, (6.0, 17.0, 29.0), (8.5, 23.4, 38.0)),
            vec![slo_miss(0.0234)],
        ),
        probe(52.5e3, 52.4e3, (5.0, 13.8, 23.0), (7.0, 18.9, 31.0)),
        failing(
            probe(53.75e3, 53.7e3, (5.4, 15.1, 25.0), (7.6, 20.8, 34.0)),
            vec![slo_miss(0.0208)],
        ),
    ];
    search_cell(
        label,
        index,
        &probes,
        json!({
            "capacity": 52.5e3, "limit": "slo", "bracket": {"pass": 52.5e3, "fail": 53.75e3},
            "slo": ["e2e.p99 < 20ms", "ack.p99 < 50ms"],
            "slo_lines": [
                {"condition": "e2e.p99 < 20ms", "metric": "e2e.p99", "op": "<", "bound": 0.02},
                {"condition": "ack.p99 < 50ms", "metric": "ack.p99", "op": "<", "bound": 0.05},
            ],
            "tolerance": 0.05, "precision": 0.05, "trials": 1,
            "non_monotone": [], "noisy": [], "elapsed_secs": 131.0,
        }),
    )
}

/// Two trials per rate, no consumer; 500k/s failed a trial (lag grew) yet 1M/s passed both:
/// the upper bound, with a rate that is noisy and a result that is not monotone.
fn upper_bound(label: &str, index: usize) -> RunResult {
    let p = |target: f64, trial: u32, misses: Vec<Value>| Probe {
        target,
        trial,
        achieved: target * 0.998,
        ack: (1.5, 4.0, 7.0),
        e2e: None,
        misses,
        generator: None,
    };
    let lag = json!({"kind": "lag", "growth": 31e3, "allowed": 25e3});
    let probes = [
        p(250e3, 1, vec![]),
        p(250e3, 2, vec![]),
        p(500e3, 1, vec![]),
        p(500e3, 2, vec![lag]),
        p(1e6, 1, vec![]),
        p(1e6, 2, vec![]),
    ];
    search_cell(
        label,
        index,
        &probes,
        json!({
            "capacity": 1e6, "limit": "upper_bound", "bracket": null,
            "slo": ["ack.p99 < 20ms"],
            "slo_lines": [{"condition": "ack.p99 < 20ms", "metric": "ack.p99", "op": "<", "bound": 0.02}],
            "tolerance": 0.05, "precision": 0.02, "trials": 2,
            "non_monotone": [{"failed": 500e3, "passed": 1e6}], "noisy": [500e3],
            "elapsed_secs": 75.5,
        }),
    )
}

/// The first probe failed: the cluster took 6.2k of 10k/s.
fn none_passed(label: &str, index: usize) -> RunResult {
    let probes = [Probe {
        target: 10e3,
        trial: 1,
        achieved: 6.2e3,
        ack: (250.0, 900.0, 1400.0),
        e2e: None,
        misses: vec![rate_miss(6.2e3, 10e3)],
        generator: None,
    }];
    search_cell(
        label,
        index,
        &probes,
        json!({
            "capacity": null, "limit": "cluster", "bracket": null, "slo": [],
            "tolerance": 0.05, "precision": 0.02, "trials": 1,
            "non_monotone": [], "noisy": [], "elapsed_secs": 14.0,
        }),
    )
}

pub(crate) fn file(runs: Vec<RunResult>) -> ResultFile {
    ResultFile {
        schema_version: SCHEMA_VERSION,
        kafkabench_version: "0.1.0".into(),
        librdkafka_version: None,
        scenario: "capacity".into(),
        scenario_text: None,
        scenario_includes: vec![],
        description: None,
        run_id: "cap1".into(),
        started_at: None,
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
        environment: None,
        shard_environments: Vec::new(),
    }
}

fn three_cells() -> Vec<RunResult> {
    vec![
        slo_limited("partitions=6", 0),
        upper_bound("partitions=24", 1),
        none_passed("partitions=1", 2),
    ]
}

fn save(dir: &Path, name: &str, f: &ResultFile) -> PathBuf {
    let path = dir.join(name);
    let mut buf = Vec::new();
    f.write(&mut buf).expect("written");
    std::fs::write(&path, buf).expect("saved");
    path
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

#[test]
fn the_table_shows_each_search_its_probes_and_why_each_failed() {
    let mut out = Vec::new();
    let runs = three_cells();
    kafkabench::report::table::write_results("capacity", 3, &runs, &[], &mut out).unwrap();
    let table = String::from_utf8(out).unwrap();
    let at = table.find(" search ").expect("the search table");
    let search = &table[table[..at].rfind('\n').map_or(0, |n| n + 1)..];
    insta::assert_snapshot!(search);
    // The searches' table fits 100 columns; a probe table with e2e is a few wider.
    for line in search.lines().take_while(|l| !l.is_empty()) {
        assert!(line.chars().count() <= 100, "over 100 columns: {line}");
    }
}

#[test]
fn a_result_without_a_search_shows_no_search_table() {
    let mut out = Vec::new();
    let run = RunResult {
        label: "fixed".into(),
        ..RunResult::default()
    };
    kafkabench::report::table::write_results("s", 1, &[run], &[], &mut out).unwrap();
    assert!(!text(&out).contains("capacity"), "{}", text(&out));
}

/// The page of the three cells, written where a person can look at it (and screenshot it).
fn page() -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capacity-report");
    std::fs::create_dir_all(&dir).unwrap();
    let json = save(&dir, "capacity.json", &file(three_cells()));
    let html = dir.join("capacity.html");
    expect_exit(&kafkabench(&["report", s(&json), "--html", s(&html)]), 0);
    std::fs::read_to_string(&html).expect("the page")
}

/// The SVG of the capacity plot in the section of run `index`.
fn plot_of(page: &str, index: usize) -> &str {
    let section = &page[page
        .find(&format!("id=\"run-{index}\""))
        .expect("the run's section")..];
    let at = section
        .find("aria-label=\"Latency against throughput")
        .expect("the capacity plot");
    let end = section[at..].find("</svg>").expect("its end");
    &section[at..at + end]
}

#[test]
fn the_page_plots_latency_against_achieved_throughput_one_point_per_probe_and_series() {
    let page = page();
    let plot = plot_of(&page, 0);
    // Ten probes, each on ack and e2e p50, p99 and p99.9.
    assert_eq!(plot.matches("class=\"probe ").count(), 60, "{plot}");
    assert_eq!(plot.matches("class=\"probe fail\"").count(), 5 * 6);
    for series in [
        "ack p50",
        "ack p99",
        "ack p99.9",
        "e2e p50",
        "e2e p99",
        "e2e p99.9",
    ] {
        assert_eq!(
            plot.matches(&format!(", {series} ")).count(),
            10,
            "{series}: one point per probe"
        );
    }
    assert!(
        plot.contains(">e2e.p99 &lt; 20ms</text>"),
        "the SLO line's label"
    );
    assert!(plot.contains(">ack.p99 &lt; 50ms</text>"));
    assert!(plot.contains(
        "stroke=\"#a40e26\" stroke-width=\"1.5\" stroke-linejoin=\"round\" stroke-dasharray"
    ));
    assert!(
        plot.contains(">capacity 52.5k/s</text>"),
        "the capacity line's label"
    );
    assert!(
        plot.contains("latency (ms, log scale)"),
        "2 to 1500 ms: a log axis"
    );
    assert!(plot.contains("achieved throughput (acknowledged records/s)"));
    // The probe table, in the terminal's words.
    assert!(page.contains("capacity <strong>52.5k/s</strong>, limited by slo"));
    assert!(page.contains("acked 53.1k/s, under 76k/s (95% of the target)"));
    assert!(page.contains("load generator busy: sender thread 97%, process 1.8 of 2 cores"));
    assert!(
        !page.contains("NaN") && !page.contains("inf<"),
        "no broken number"
    );
}

#[test]
fn the_upper_bound_and_a_search_where_nothing_passed_say_so_on_the_page() {
    let page = page();
    let plot = plot_of(&page, 1);
    assert_eq!(
        plot.matches("class=\"probe ").count(),
        18,
        "6 probes × ack 3"
    );
    assert!(plot.contains(">capacity ≥ 1M/s</text>"), "{plot}");
    assert!(plot.contains("latency (ms)<"), "1.5 to 20 ms: linear");
    assert!(
        page.contains("note: 1M/s passed above 500k/s, which failed: the result is not monotone")
    );
    assert!(page.contains("note: 500k/s: trials disagreed"));
    let plot = plot_of(&page, 2);
    assert!(!plot.contains(">capacity"), "no capacity, no line");
    assert!(page.contains("none: every probe failed at 10k/s"));
}

fn compared(base: &ResultFile, cur: &ResultFile, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let (b, c) = (
        save(dir.path(), "b.json", base),
        save(dir.path(), "c.json", cur),
    );
    let mut args = vec!["compare", s(&b), s(&c)];
    args.extend_from_slice(extra);
    kafkabench(&args)
}

/// The SLO-limited cell with its capacity (and its run's figures) set to another rate.
fn with_capacity(capacity: Option<f64>) -> ResultFile {
    let mut run = slo_limited("partitions=6", 0);
    run.capacity.as_mut().unwrap().capacity = capacity;
    file(vec![run])
}

#[test]
fn compare_shows_a_search_cells_capacity_and_gates_on_its_fall() {
    let (base, cur) = (with_capacity(Some(52.5e3)), with_capacity(Some(45e3)));
    let out = compared(&base, &cur, &["--fail-on", "capacity:-10%"]);
    let stdout = expect_exit(&out, 1);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("partitions=6"))
        .expect("the cell's first row");
    assert!(
        row.contains("52500/s") && row.contains("45000/s"),
        "{stdout}"
    );
    assert!(row.contains("-14.3%") && row.contains("worse"), "{stdout}");
    assert!(
        stdout.contains("capacity fell 14.3% (52500/s → 45000/s), more than the 10% allowed"),
        "{stdout}"
    );
    let stdout = expect_exit(
        &compared(
            &base,
            &with_capacity(Some(50e3)),
            &["--fail-on", "capacity:-10%"],
        ),
        0,
    );
    assert!(stdout.contains("every bound held (1 check)"), "{stdout}");
    // A fixed run has no capacity row.
    let fixed = file(vec![RunResult {
        label: "partitions=6".into(),
        ..RunResult::default()
    }]);
    let stdout = expect_exit(&compared(&fixed, &fixed, &[]), 0);
    assert!(!stdout.contains("  capacity  "), "{stdout}");
}

#[test]
fn a_search_where_no_rate_passed_compares_as_zero_and_fails_the_gate() {
    let out = compared(
        &with_capacity(Some(52.5e3)),
        &with_capacity(None),
        &["--fail-on", "capacity:-10%"],
    );
    let stdout = expect_exit(&out, 1);
    assert!(
        stdout.contains("no rate passed (capacity none: every probe failed at 10k/s)"),
        "{stdout}"
    );
    assert!(stdout.contains("capacity fell 100.0%"), "{stdout}");
}

#[test]
fn a_band_not_narrowed_claims_no_capacity_in_the_table_and_compares_as_zero() {
    // The probes ran out with a band 4× wide: the table says so with the band, and a gate on
    // the capacity fails rather than compare the fit's estimate as if it were an answer.
    let mut cur = slo_limited("partitions=6", 0);
    {
        let c = cur.capacity.as_mut().unwrap();
        c.capacity = None;
        c.bracket = None;
        c.reliability = 0.8;
        c.band = Some(serde_json::from_value(json!({"low": 128e3, "high": 519e3})).unwrap());
        c.not_narrowed = Some(serde_json::from_value(json!({"estimate": 298e3})).unwrap());
    }
    let mut out = Vec::new();
    kafkabench::report::table::write_results("capacity", 1, &[cur.clone()], &[], &mut out).unwrap();
    let table = String::from_utf8(out).unwrap();
    assert!(
        table.contains("capacity: not narrowed: 80% between 128k and 519k/s after"),
        "{table}"
    );
    assert!(table.contains("the fit's estimate is 298k/s"), "{table}");
    let out = compared(
        &with_capacity(Some(52.5e3)),
        &file(vec![cur]),
        &["--fail-on", "capacity:-10%"],
    );
    let stdout = expect_exit(&out, 1);
    assert!(
        stdout.contains("the capacity was not narrowed (capacity not narrowed: 80% between"),
        "{stdout}"
    );
}
