//! `kafkabench report` and the HTML report, as a person meets them: re-rendering a saved result
//! file, and a page built from a real run and from a synthetic result file, opened in headless
//! Chromium (Debian's `chromium`; without it these tests fail, they never skip) and checked for
//! script errors, its plots, axis labels and legends. Screenshots land in
//! target/tmp/html-report/ for a person to look at.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{self, expect_exit, fixture, kafkabench, require_broker, text};
use kafkabench::assert::{Bound, RunRef, Shortfall, Verdict};
use kafkabench::measure::{
    new_histogram, record, LatencySummary, RunResult, RunStatus, SeriesPoint, TimeSeries,
};
use kafkabench::model::{CmpOp, Unit};
use kafkabench::model::{Prop, Props};
use kafkabench::report::json::{ResultFile, SCHEMA_VERSION};
use kafkabench::report::verdict::VerdictRecord;

/// Where screenshots and pages are kept after the tests, for a person to look at.
fn keep_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-report");
    std::fs::create_dir_all(&d).expect("the screenshot directory");
    d
}

fn chromium() -> &'static str {
    let found = Command::new("chromium").arg("--version").output();
    match found {
        Ok(o) if o.status.success() => "chromium",
        _ => panic!(
            "chromium is missing: the HTML report is checked in a real browser \
             (Debian: apt-get install chromium; .ci/run installs it)"
        ),
    }
}

/// What Chromium made of a page: its DOM after loading, and what it logged.
struct Rendered {
    dom: String,
    log: String,
}

/// Opens `page` in headless Chromium: the DOM dump, its console log, and a screenshot.
fn open(page: &Path, screenshot: &Path) -> Rendered {
    let browser = chromium();
    let profile = tempfile::tempdir().expect("a profile directory");
    let url = format!(
        "file://{}",
        page.canonicalize().expect("the page").display()
    );
    let base = |extra: &[&str]| {
        let out = Command::new(browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--enable-logging=stderr",
                "--v=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium runs");
        assert!(
            out.status.success(),
            "chromium failed: {}",
            text(&out.stderr)
        );
        out
    };
    let dom = base(&["--dump-dom"]);
    let shot = format!("--screenshot={}", screenshot.display());
    base(&[&shot, "--window-size=1400,3000"]);
    assert!(
        std::fs::metadata(screenshot).is_ok_and(|m| m.len() > 10_000),
        "no screenshot at {}",
        screenshot.display()
    );
    Rendered {
        dom: text(&dom.stdout),
        log: text(&dom.stderr),
    }
}

/// The page loaded with no console message (every script error is one) and nothing fetched.
fn assert_clean(r: &Rendered, html: &str) {
    let console: Vec<&str> = r.log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert!(!html.contains("<script"), "the report needs no script");
    assert!(!r.dom.contains("<script"), "no script element in the DOM");
    for external in ["src=", "<link", "@import", "url("] {
        assert!(
            !html.contains(external),
            "the page fetches something: {external}"
        );
    }
    let http = html.matches("http").count();
    let xmlns = html.matches("http://www.w3.org/2000/svg").count();
    assert_eq!(http, xmlns, "no address other than the SVG namespace");
}

fn assert_has(dom: &str, needles: &[&str]) {
    for n in needles {
        assert!(dom.contains(n), "the page lacks {n:?}");
    }
}

/// A latency distribution: mostly around `base_ms`, with a long tail.
fn latencies(base_ms: f64, n: u64) -> LatencySummary {
    let mut h = new_histogram();
    for i in 0..n {
        let u = (i as f64 + 0.5) / n as f64;
        let tail = (1.0 / (1.0 - u)).sqrt();
        record(&mut h, (base_ms * 1e6 * (0.6 + 0.4 * tail)) as u64);
    }
    LatencySummary::from_histogram(&h)
}

/// 30 one-second intervals at a rate stepping from 2000/s to 4000/s, with a stall at 12 s.
fn series(scale: f64) -> TimeSeries {
    let points = (0..30)
        .map(|i| {
            let target = if i < 15 { 2000.0 } else { 4000.0 };
            let stalled = i == 12;
            let acked = if stalled {
                300
            } else {
                (target * scale) as u64
            };
            SeriesPoint {
                t_secs: f64::from(i),
                sent: target as u64,
                acked,
                failed: 0,
                bytes: acked * 200,
                target_rate: Some(target),
                consumed: Some(acked),
                lag: Some(0),
                ack_p50_ms: Some(if stalled {
                    800.0
                } else {
                    2.0 + f64::from(i % 3)
                }),
                ack_p99_ms: Some(if stalled {
                    1500.0
                } else {
                    9.0 + f64::from(i % 4)
                }),
                ack_max_ms: Some(20.0),
                e2e_p50_ms: Some(if stalled { 900.0 } else { 4.0 }),
                e2e_p99_ms: Some(if stalled { 1700.0 } else { 15.0 }),
                e2e_max_ms: Some(30.0),
                ..SeriesPoint::default()
            }
        })
        .collect();
    TimeSeries {
        interval_secs: 1.0,
        points,
    }
}

fn prop(key: &str, value: &str) -> Prop {
    Prop {
        key: key.into(),
        value: value.into(),
        span: None,
    }
}

fn synthetic_run(index: usize, label: &str, base_ms: f64) -> RunResult {
    RunResult {
        index,
        label: label.into(),
        topic: format!("kb-synthetic-{index}"),
        status: RunStatus::Complete,
        sent: 90_000,
        acked: 90_000,
        key_value_bytes: 18_000_000,
        elapsed_secs: 30.0,
        throughput_msgs: 3000.0 / base_ms.sqrt(),
        throughput_bytes: 600_000.0,
        target_rate: Some(3000.0),
        achieved_rate: 3000.0,
        ack: latencies(base_ms, 20_000),
        service: latencies(base_ms * 0.7, 20_000),
        send_delay: latencies(0.01, 20_000),
        e2e: Some(latencies(base_ms * 1.6, 20_000)),
        series: Some(series(1.0 / base_ms.sqrt())),
        producer_config: Props(vec![
            prop("linger.ms", &format!("{base_ms}")),
            prop("sasl.password", "hunter2"),
        ]),
        consumer_config: Some(Props(vec![prop("fetch.min.bytes", "1")])),
        ..RunResult::default()
    }
}

fn synthetic() -> ResultFile {
    let verdict = |pass: bool, index: usize, run: &str| {
        VerdictRecord::of(&Verdict {
            assertion: "ack.p99 < 40ms".into(),
            runs: vec![RunRef {
                index,
                label: run.into(),
            }],
            unit: Unit::Duration,
            pass,
            measured: Some(if pass { 0.021 } else { 0.061 }),
            bound: Some(Bound::Compare(CmpOp::Lt, 0.040)),
            shortfall: (!pass).then_some(Shortfall::OutOfBound),
            recorded: None,
            interval: None,
            broker: None,
        })
    };
    ResultFile {
        schema_version: SCHEMA_VERSION,
        kafkabench_version: "0.1.0".into(),
        librdkafka_version: Some("2.12.1".into()),
        scenario: "synthetic".into(),
        scenario_text: Some(
            "scenario \"synthetic\" {\n  matrix { linger = [1ms, 9ms] }\n}\n".into(),
        ),
        scenario_includes: vec![],
        description: Some("Made up, to look at every plot".into()),
        run_id: "r42".into(),
        started_at: Some("2026-11-30T13:00:00Z".into()),
        scale: 1.0,
        interval_secs: Some(1.0),
        planned_runs: 2,
        outcome: "assertion_failed".into(),
        exit_code: 1,
        failure: None,
        interrupted: false,
        runs: vec![
            synthetic_run(0, "linger=1ms <script>alert(1)</script>", 1.0),
            synthetic_run(1, "linger=9ms", 3.0),
        ],
        assertions: vec![
            verdict(true, 0, "linger=1ms"),
            verdict(false, 1, "linger=9ms"),
        ],
        notes: vec![],
        environment: None,
        shard_environments: Vec::new(),
    }
}

/// Writes the synthetic result file into `dir`, returns its path.
fn synthetic_json(dir: &Path) -> PathBuf {
    let path = dir.join("synthetic.json");
    let mut buf = Vec::new();
    synthetic().write(&mut buf).expect("serialized");
    std::fs::write(&path, buf).expect("written");
    path
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

#[test]
fn a_synthetic_result_with_a_time_series_renders_every_plot_in_chromium() {
    let json = synthetic_json(&keep_dir());
    let html = keep_dir().join("synthetic.html");
    let out = kafkabench(&["report", s(&json), "--html", s(&html)]);
    expect_exit(&out, 0);
    let page = std::fs::read_to_string(&html).expect("the report");
    let r = open(&html, &keep_dir().join("synthetic.png"));
    assert_clean(&r, &page);
    // Per run: percentiles, throughput and latency over time; then two comparison plots.
    assert_eq!(r.dom.matches("<svg").count(), 2 * 3 + 2, "{}", r.dom);
    assert_has(
        &r.dom,
        &[
            "Latency by percentile",
            "99.999 %",
            "99.9 %",
            "50 %",
            "latency (ms, log scale)",
            "ack (intended send → ack)",
            "service (produce → ack)",
            "e2e (intended send → consumed)",
            "Throughput over time",
            "records per second",
            "time since the measured phase began (s)",
            "acked/s",
            "consumed/s",
            "target rate",
            "Latency over time (per interval)",
            "ack p99",
            "e2e p50",
            "Throughput per run",
            "p99 latency per run",
            "PASS",
            "FAIL",
            "measured 61ms against &lt; 40ms (+52.5%)",
            "2.12.1",
            "r42",
            "2026-11-30T13:00:00Z",
            "scenario \"synthetic\"",
            "fetch.min.bytes",
        ],
    );
}

#[test]
fn a_label_with_markup_is_shown_as_text_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let json = synthetic_json(dir.path());
    let html = dir.path().join("r.html");
    expect_exit(&kafkabench(&["report", s(&json), "--html", s(&html)]), 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("<script"),
        "the label reached the page as markup"
    );
    assert!(page.contains("linger=1ms &lt;script&gt;alert(1)&lt;/script&gt;"));
    let r = open(&html, &dir.path().join("r.png"));
    assert_clean(&r, &page);
}

#[test]
fn a_secret_in_a_result_file_stays_masked_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let json = synthetic_json(dir.path());
    let html = dir.path().join("r.html");
    expect_exit(&kafkabench(&["report", s(&json), "--html", s(&html)]), 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("hunter2"));
    assert!(page.contains("sasl.password"));
    assert!(page.contains("****"));
}

#[test]
fn report_shows_the_table_and_the_verdicts_again_and_exits_0_whatever_the_run_did() {
    let dir = tempfile::tempdir().unwrap();
    let json = synthetic_json(dir.path());
    let out = kafkabench(&["report", s(&json)]);
    let stdout = expect_exit(&out, 0);
    assert!(
        stdout.contains("scenario synthetic (2 of 2 runs)"),
        "{stdout}"
    );
    assert!(stdout.contains("linger=9ms"), "{stdout}");
    assert!(stdout.contains("expect: 1 of 2 checks held"), "{stdout}");
    assert!(stdout.contains("FAIL  ack.p99 < 40ms"), "{stdout}");
    assert!(
        stdout.contains("outcome: assertion_failed (the run exited 1); run r42"),
        "{stdout}"
    );
}

#[test]
fn report_of_a_missing_file_exits_2_and_names_it() {
    let out = kafkabench(&["report", "no/such/result.json"]);
    expect_exit(&out, 2);
    let err = text(&out.stderr);
    assert!(err.contains("cannot read no/such/result.json"), "{err}");
}

#[test]
fn report_of_a_file_that_is_not_a_result_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.json");
    std::fs::write(&path, "{\"hello\": 1}").unwrap();
    let out = kafkabench(&["report", s(&path)]);
    expect_exit(&out, 2);
    assert!(text(&out.stderr).contains("is not a kafkabench result file"));
}

#[test]
fn report_of_a_version_1_file_exits_2_and_says_to_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.json");
    std::fs::write(&path, "{\"schema_version\": 1, \"runs\": []}").unwrap();
    let out = kafkabench(&["report", s(&path)]);
    expect_exit(&out, 2);
    assert!(text(&out.stderr).contains("re-run the scenario with --json"));
}

#[test]
fn an_html_path_that_cannot_be_written_exits_2_before_anything_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let json = synthetic_json(dir.path());
    let out = kafkabench(&["report", s(&json), "--html", "/no/such/dir/r.html"]);
    assert_eq!(expect_exit(&out, 2), "");
    assert!(text(&out.stderr).contains("cannot write --html /no/such/dir/r.html"));
    let out = kafkabench(&[
        "run",
        &fixture("run/html_report.kbs"),
        "--html",
        "/no/such/dir/r.html",
    ]);
    expect_exit(&out, 2);
    assert!(text(&out.stderr).contains("cannot write --html"));
}

#[test]
fn a_real_run_renders_in_chromium_from_run_html_and_from_report() {
    require_broker();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let direct = keep_dir().join("run-direct.html");
    let out = kafkabench(&[
        "run",
        &fixture("run/html_report.kbs"),
        "--quiet",
        "--json",
        s(&json),
        "--html",
        s(&direct),
    ]);
    expect_exit(&out, 0);
    let html = keep_dir().join("run.html");
    let out = kafkabench(&["report", s(&json), "--html", s(&html)]);
    let stdout = expect_exit(&out, 0);
    assert!(stdout.contains("expect: 6 of 6 checks held"), "{stdout}");
    for (page_path, shot) in [(&html, "run.png"), (&direct, "run-direct.png")] {
        let page = std::fs::read_to_string(page_path).unwrap();
        let r = open(page_path, &keep_dir().join(shot));
        assert_clean(&r, &page);
        assert_has(
            &r.dom,
            &[
                "Latency by percentile",
                "99.9 %",
                "latency (ms, log scale)",
                "ack (intended send → ack)",
                "e2e (intended send → consumed)",
                "linger=0ms",
                "linger=5ms",
                "Throughput per run",
                "p99 latency per run",
                "PASS",
                "linger.ms",
            ],
        );
        // Per run: percentiles, the partitions' heat map, throughput over time, latency over
        // time; then two across runs.
        assert_has(&r.dom, &["Throughput over time", "target rate"]);
        assert_has(&r.dom, &["Records acknowledged per partition over time"]);
        // The terminal table's read-side columns: the runs have a consumer.
        assert_has(&r.dom, &["<th>read/s</th>", "<th>lag max</th>"]);
        assert_eq!(r.dom.matches("<svg").count(), 2 * 4 + 2);
    }
}

/// A line chart's SVG (by its title) out of a page.
fn chart<'a>(page: &'a str, title: &str) -> &'a str {
    let at = page
        .find(&format!("aria-label=\"{title}\""))
        .unwrap_or_else(|| panic!("no plot {title:?}"));
    let start = page[..at].rfind("<svg").expect("the plot's start");
    let end = at + page[at..].find("</svg>").expect("the plot's end");
    &page[start..end]
}

/// The value of an attribute in one element's text (after its tag name).
fn attr(element: &str, name: &str) -> f64 {
    let element = format!(" {element}");
    let at = element
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {element}"));
    let rest = &element[at + name.len() + 3..];
    rest[..rest.find('"').unwrap()].parse().unwrap()
}

/// A tick label (`2000`, `2.5k`) as a number.
fn tick_value(label: &str) -> f64 {
    let (n, scale) = match label.strip_suffix('k') {
        Some(n) => (n, 1e3),
        None => (label, 1.0),
    };
    n.parse::<f64>()
        .unwrap_or_else(|_| panic!("tick {label:?}"))
        * scale
}

/// The last point of the solid line drawn in `color`, read off the plot as a person reads it:
/// its height mapped back through the y axis's tick labels, its place through the x axis's.
fn last_point(svg: &str, color: &str) -> (f64, f64) {
    let mut x_ticks = Vec::new();
    let mut y_ticks = Vec::new();
    for t in svg.split("<text ").skip(1) {
        let label = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
        if t.contains("class=\"tick\"") && t.contains("text-anchor=\"end\"") {
            // Drawn 4 px below the tick it labels.
            y_ticks.push((attr(t, "y") - 4.0, tick_value(label)));
        } else if t.contains("class=\"tick\"") {
            x_ticks.push((attr(t, "x"), tick_value(label)));
        }
    }
    let line = svg
        .split("<polyline ")
        .skip(1)
        .filter(|l| l.contains(&format!("stroke=\"{color}\"")) && !l.contains("dasharray"))
        .last()
        .unwrap_or_else(|| panic!("no line in {color}"));
    let points = &line["points=\"".len()..];
    let last = points[..points.find('"').unwrap()]
        .rsplit(' ')
        .next()
        .unwrap();
    let (px, py) = last.split_once(',').unwrap();
    let read = |ticks: &[(f64, f64)], p: f64| {
        let (a, b) = (ticks[0], ticks[ticks.len() - 1]);
        a.1 + (p - a.0) * (b.1 - a.1) / (b.0 - a.0)
    };
    (
        read(&x_ticks, px.parse().unwrap()),
        read(&y_ticks, py.parse().unwrap()),
    )
}

/// A steady run's throughput ends where the run did, at its rate: the drain tail after the
/// schedule (a few milliseconds of acknowledgements) is not drawn as a rate over a whole
/// interval, which made every run end in a collapse to zero.
#[test]
fn a_steady_runs_throughput_plot_ends_at_its_rate_not_in_a_drop() {
    require_broker();
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("steady.kbs");
    std::fs::write(
        &scenario,
        format!(
            "scenario \"steady\" {{\n  cluster {{ bootstrap = \"{}\" }}\n  \
             topic \"kb-test-html-steady\" {{ partitions = 2 }}\n  \
             workload {{ duration = 5s  rate = 2000/s  payload = random(size: 200B) }}\n}}\n",
            common::bootstrap()
        ),
    )
    .unwrap();
    let html = keep_dir().join("steady.html");
    let out = kafkabench(&["run", s(&scenario), "--quiet", "--html", s(&html)]);
    expect_exit(&out, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    let (x, acked) = last_point(chart(&page, "Throughput over time"), "#0072b2");
    // The drain after the schedule (nothing due) is not drawn: the last point is the middle of
    // an interval within the 5 s. Generous on its rate: a busy machine acknowledges late, so
    // its last second's acks spill into the drain (807/s at load 16) or the drain's come in a
    // burst (12 775/s over 0.2 s, when it was drawn), but a drain drawn over a whole interval
    // is a few records a second.
    assert!(
        x <= 5.0 && (400.0..=4000.0).contains(&acked),
        "the plot ends at {acked:.0}/s (at {x:.2} s) on a run at 2000/s"
    );
    let r = open(&html, &keep_dir().join("steady.png"));
    assert_clean(&r, &page);
    assert_has(&r.dom, &["over the time it covered"]);
}
