//! The result file (schema_version 6) as a user keeps it: run the real binary against a broker,
//! read the file back, and hold it to what docs/result-format.md promises — histograms that
//! decode to the percentiles beside them, a time series that adds up to the run's counts,
//! warm-up left out, the target rate per interval, the scenario text with secrets masked.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use crate::common::watch::Watched;
use crate::common::{self, expect_exit, fixture, hdr, kafkabench};
use kafkabench::measure::{LatencySummary, RunResult};
use kafkabench::report::json::ResultFile;
use serde_json::Value;

/// The 9-run matrix, run once for every test that reads its result file (about 30 s).
fn matrix() -> &'static (Value, ResultFile) {
    static RESULT: OnceLock<(Value, ResultFile)> = OnceLock::new();
    RESULT.get_or_init(|| run_json("run/result/matrix.kbs", &["--interval", "500ms"]))
}

/// Runs a fixture with `--json`, expecting exit 0; the file as JSON and as read back.
fn run_json(name: &str, extra: &[&str]) -> (Value, ResultFile) {
    common::require_broker();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let f = fixture(name);
    let mut args = vec![
        "run",
        f.as_str(),
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    expect_exit(&kafkabench(&args), 0);
    let text = std::fs::read_to_string(&json).expect("the result file");
    let value: Value = serde_json::from_str(&text).expect("valid JSON");
    let file = ResultFile::read(Path::new(&json)).expect("it reads back");
    // What `report`, `compare` and `merge` read is what was written: the same lines, but for
    // a float's last digit (serde_json's parsing is not exact to the bit).
    let mut again = Vec::new();
    file.write(&mut again).expect("written again");
    let again = String::from_utf8(again).unwrap();
    assert_eq!(again.lines().count(), text.lines().count(), "{name}");
    for (a, b) in again.lines().zip(text.lines()) {
        if a != b {
            let number = |l: &str| {
                l.trim_end_matches(',')
                    .rsplit(' ')
                    .next()?
                    .parse::<f64>()
                    .ok()
            };
            let (x, y) = (number(a).expect(a), number(b).expect(b));
            assert!((x - y).abs() <= y.abs() * 1e-12, "{name}: {a} ≠ {b}");
        }
    }
    (value, file)
}

fn families(r: &RunResult) -> Vec<(&'static str, &LatencySummary)> {
    let mut f = vec![
        ("ack", &r.ack),
        ("service", &r.service),
        ("send_delay", &r.send_delay),
    ];
    if let Some(e2e) = &r.e2e {
        f.push(("e2e", e2e));
    }
    f
}

#[test]
fn a_nine_run_matrix_keeps_every_histogram_decodable_to_the_percentiles_beside_it() {
    let (json, file) = matrix();
    assert_eq!(json["schema_version"], 6);
    assert_eq!(file.runs.len(), 9);
    for (i, run) in json["runs"].as_array().unwrap().iter().enumerate() {
        for family in ["ack", "service", "send_delay", "e2e"] {
            let s = &run[family];
            let text = s["histogram"].as_str().unwrap_or_else(|| {
                panic!("run {i} {family}: no histogram in {s}");
            });
            let h = hdr::decode(text).unwrap();
            let ms = |ns: u64| ns as f64 / 1e6;
            assert_eq!(h.len(), s["count"].as_u64().unwrap(), "run {i} {family}");
            for (field, q) in [
                ("p50_ms", 0.5),
                ("p90_ms", 0.9),
                ("p99_ms", 0.99),
                ("p999_ms", 0.999),
            ] {
                let want = s[field].as_f64().unwrap();
                assert_eq!(ms(h.value_at_quantile(q)), want, "run {i} {family}.{field}");
            }
            assert_eq!(ms(h.max()), s["max_ms"].as_f64().unwrap());
            assert_eq!(ms(h.min()), s["min_ms"].as_f64().unwrap());
        }
    }
    // Read back, the summaries hand out the same distributions.
    for r in &file.runs {
        for (name, s) in families(r) {
            let h = s
                .histogram()
                .unwrap_or_else(|| panic!("{} {name}", r.label));
            assert_eq!(h.value_at_quantile(0.99) as f64 / 1e6, s.p99_ms);
        }
    }
}

#[test]
fn every_runs_time_series_adds_up_to_its_counts() {
    let (_, file) = matrix();
    for r in &file.runs {
        let s = r
            .series
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no series", r.label));
        assert_eq!(s.interval_secs, 0.5, "--interval 500ms");
        let sum = |f: fn(&kafkabench::measure::SeriesPoint) -> u64| -> u64 {
            s.points.iter().map(f).sum()
        };
        assert_eq!(sum(|p| p.acked), r.acked, "{}: acked", r.label);
        assert_eq!(sum(|p| p.sent), r.sent, "{}: sent", r.label);
        assert_eq!(sum(|p| p.failed), r.failed, "{}: failed", r.label);
        assert_eq!(sum(|p| p.bytes), r.key_value_bytes, "{}: bytes", r.label);
        let consumed = r.delivery.as_ref().expect("a consumer ran").consumed;
        assert_eq!(sum(|p| p.consumed.unwrap_or(0)), consumed, "{}", r.label);
        assert_eq!(
            s.points.last().and_then(|p| p.lag),
            Some(0),
            "{}: all read back in the end",
            r.label
        );
        for (i, p) in s.points.iter().enumerate() {
            assert!((p.t_secs - i as f64 * 0.5).abs() < 1e-9, "{}", r.label);
            if p.acked > 0 {
                let h = hdr::decode(p.ack_histogram.as_deref().unwrap()).unwrap();
                assert_eq!(h.len(), p.acked, "{} interval {i}", r.label);
                assert_eq!(Some(h.max() as f64 / 1e6), p.ack_max_ms);
            } else {
                assert_eq!(p.ack_p99_ms, None, "no acks, no latency");
            }
        }
    }
}

#[test]
fn a_paced_run_with_warm_up_has_several_intervals_and_no_warm_up_in_them() {
    let (_, file) = matrix();
    let paced: Vec<&RunResult> = file
        .runs
        .iter()
        .filter(|r| r.label.starts_with("paced"))
        .collect();
    assert_eq!(paced.len(), 3);
    for r in paced {
        let s = r.series.as_ref().unwrap();
        // 2000 records at 1000/s: 2 s, four half-second intervals (and a tail for the drain).
        assert!(s.points.len() >= 4, "{}: {:?}", r.label, s.points);
        let sent: u64 = s.points.iter().map(|p| p.sent).sum();
        assert_eq!(
            sent, 2000,
            "{}: the 300 warm-up records are not counted",
            r.label
        );
        let consumed: u64 = s.points.iter().filter_map(|p| p.consumed).sum();
        assert_eq!(consumed, 2000, "{}: nor read back", r.label);
        let last = s.points.len() - 1;
        for (i, p) in s.points[..4].iter().enumerate() {
            assert_eq!(p.target_rate, Some(1000.0), "{}", r.label);
            // The last interval ends with the run's last record, which may fall just before
            // the interval's own end.
            if i == last {
                assert!(p.span_secs > 0.0 && p.span_secs <= 0.5, "{}", p.span_secs);
            } else {
                assert_eq!(p.span_secs, 0.5);
            }
        }
    }
}

#[test]
fn the_result_file_keeps_the_scenario_masked_and_says_what_ran_when() {
    let (json, file) = matrix();
    let text = json.to_string();
    assert!(
        !text.contains("not-really-a-secret"),
        "a secret in the result file"
    );
    let scenario = file.scenario_text.as_deref().expect("scenario text");
    assert!(scenario.contains("include \"common.kbs\""), "{scenario}");
    assert_eq!(file.scenario_includes.len(), 1);
    let inc = &file.scenario_includes[0];
    assert!(inc.path.ends_with("common.kbs"), "{}", inc.path);
    assert!(inc.text.contains("sasl.password = ****"), "{}", inc.text);
    assert!(file
        .librdkafka_version
        .as_deref()
        .is_some_and(|v| v.contains('.')));
    assert_eq!(file.kafkabench_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(file.interval_secs, Some(0.5));
    assert!(!file.run_id.is_empty());
    let rfc3339 = |t: &str| {
        t.len() == 24 && t.ends_with('Z') && t.as_bytes()[10] == b'T' && t.starts_with("20")
    };
    assert!(
        file.started_at.as_deref().is_some_and(rfc3339),
        "{:?}",
        file.started_at
    );
    for r in &file.runs {
        assert!(r.started_at.as_deref().is_some_and(rfc3339), "{}", r.label);
        let t = r.topic_config.as_ref().expect("topic config");
        assert_eq!((t.partitions, t.replication, t.existing), (2, 1, false));
        let cfg = serde_json::to_string(&r.producer_config).unwrap();
        assert!(cfg.contains("compression.type"), "{cfg}");
    }
}

#[test]
fn a_rate_shape_shows_interval_by_interval_with_its_target() {
    let (_, file) = run_json("run/result/shape.kbs", &["--interval", "500ms"]);
    let r = &file.runs[0];
    let s = r.series.as_ref().unwrap();
    let targets: Vec<Option<f64>> = s.points.iter().take(6).map(|p| p.target_rate).collect();
    let (lo, hi) = (Some(1000.0), Some(3000.0));
    assert_eq!(targets, [lo, lo, lo, hi, hi, hi]);
    // How closely each interval's count follows the target is the machine's; that no record
    // is sent before it is due is the schedule's: by each interval's end, at most the records
    // due by then (record 0 is due at 0) were sent, and in the end all 6000.
    let due = |t: f64| 1000.0 * t.min(1.5) + 3000.0 * (t - 1.5).max(0.0);
    let mut sent = 0;
    for (i, p) in s.points.iter().take(6).enumerate() {
        sent += p.sent;
        let by = due((i + 1) as f64 * 0.5).min(6000.0) as u64 + 1;
        assert!(
            sent <= by,
            "{sent} sent by the end of interval {i}, {by} due: {:?}",
            s.points
        );
    }
    assert_eq!(r.sent, 6000);
    assert_eq!(r.acked, 6000);
    assert_eq!(s.points.iter().map(|p| p.acked).sum::<u64>(), r.acked);
    assert!(s
        .points
        .iter()
        .all(|p| p.consumed.is_none() && p.lag.is_none()));
    assert!(s.points.iter().all(|p| p.e2e_p99_ms.is_none()));
}

#[test]
fn the_interval_is_one_second_unless_asked() {
    let (_, file) = run_json("run/bound_ok.kbs", &[]);
    assert_eq!(file.interval_secs, Some(1.0));
    let s = file.runs[0].series.as_ref().unwrap();
    assert_eq!(s.interval_secs, 1.0);
    assert_eq!(
        s.points.iter().map(|p| p.acked).sum::<u64>(),
        file.runs[0].acked
    );
}

#[test]
fn a_bad_interval_is_refused_before_anything_connects() {
    for (arg, says) in [
        ("5", "`5` has no unit: write 5s or 5ms"),
        ("500mss", "did you mean `500ms`?"),
        ("1ms", "use 10ms to 1h"),
    ] {
        let out = kafkabench(&[
            "run",
            &fixture("run/bound_ok.kbs"),
            "--bootstrap",
            "127.0.0.1:1",
            "--interval",
            arg,
        ]);
        expect_exit(&out, 2);
        let err = common::text(&out.stderr);
        assert!(err.contains(says), "{arg}: {err}");
    }
}

#[test]
fn an_interrupted_run_keeps_the_series_of_what_it_measured() {
    common::require_broker();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(["run", &fixture("run/long_consumed.kbs"), "--json"])
        .arg(&json)
        .current_dir(common::repo())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kafkabench starts");
    // Interrupted in its measured phase, once records are acknowledged (its progress says so).
    let mut child = Watched::new(child);
    child.wait_for_acked("run 1 of 1", Duration::from_secs(120));
    // SAFETY: sends SIGTERM to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let (code, out, err, _) = child.wait(Duration::from_secs(120));
    assert_eq!(code, 130, "stdout:\n{out}\nstderr:\n{err}");
    let file = ResultFile::read(&json).expect("the partial result file");
    let r = &file.runs[0];
    let s = r.series.as_ref().expect("a series");
    assert!(!s.points.is_empty() && r.acked > 0, "{r:?}");
    assert_eq!(s.points.iter().map(|p| p.acked).sum::<u64>(), r.acked);
    assert_eq!(s.points.iter().map(|p| p.sent).sum::<u64>(), r.sent);
    let consumed = r.delivery.as_ref().expect("a consumer ran").consumed;
    assert_eq!(
        s.points.iter().filter_map(|p| p.consumed).sum::<u64>(),
        consumed
    );
}

/// The merge example of docs/result-format.md, as written there (crates `hdrhistogram` and
/// `base64` only): two runs' ack histograms added give the percentiles of all their records.
#[test]
fn the_documented_merge_example_merges_two_runs_exactly() {
    use base64::{engine::general_purpose::STANDARD, Engine};
    use hdrhistogram::{serialization::Deserializer, Histogram};

    fn decode(b64: &str) -> Histogram<u64> {
        let bytes = STANDARD.decode(b64).expect("base64");
        Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .expect("HdrHistogram V2")
    }
    let (json, _) = matrix();
    let (run_a, run_b) = (&json["runs"][0], &json["runs"][3]);
    let mut all = decode(run_a["ack"]["histogram"].as_str().unwrap());
    all.add(decode(run_b["ack"]["histogram"].as_str().unwrap()))
        .unwrap();
    let count = |r: &Value| r["ack"]["count"].as_u64().unwrap();
    assert_eq!(all.len(), count(run_a) + count(run_b));
    let max = |r: &Value| r["ack"]["max_ms"].as_f64().unwrap();
    assert_eq!(all.max() as f64 / 1e6, max(run_a).max(max(run_b)));
}

/// A search cell's file keeps everything the search found: the capacity, its limit, every
/// probe with its misses and its own histograms, and kafkabench's CPU; read back the same.
#[test]
fn a_capacity_search_is_written_and_read_back_with_every_probe_and_its_histograms() {
    let file = crate::capacity_report::file(vec![crate::capacity_report::slo_limited("cell", 0)]);
    let mut text = Vec::new();
    file.write(&mut text).expect("written");
    let text = String::from_utf8(text).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["runs"][0]["capacity"]["limit"], "slo");
    assert_eq!(
        json["runs"][0]["capacity"]["probes"][4]["misses"][0]["kind"],
        "rate"
    );
    let back = ResultFile::parse(&text, "capacity.json").expect("it reads back");
    let (a, b) = (
        file.runs[0].capacity.as_deref().unwrap(),
        back.runs[0].capacity.as_deref().unwrap(),
    );
    assert_eq!(b.capacity, Some(52.5e3));
    assert_eq!(a.limit, b.limit);
    assert_eq!(a.bracket, b.bracket);
    assert_eq!((&a.slo, &a.slo_lines), (&b.slo, &b.slo_lines));
    assert_eq!(a.probes.len(), 10);
    assert_eq!(a.probes.len(), b.probes.len());
    for (p, q) in a.probes.iter().zip(&b.probes) {
        assert_eq!(
            (p.number, p.target, p.trial, p.achieved, p.pass),
            (q.number, q.target, q.trial, q.achieved, q.pass)
        );
        assert_eq!(p.misses, q.misses, "probe {}", p.number);
        assert_eq!(p.result.generator, q.result.generator, "probe {}", p.number);
        for (x, y) in [
            (&p.result.ack, &q.result.ack),
            (
                p.result.e2e.as_ref().unwrap(),
                q.result.e2e.as_ref().unwrap(),
            ),
        ] {
            let (hx, hy) = (x.histogram().unwrap(), y.histogram().unwrap());
            assert_eq!(
                hx, hy,
                "probe {}: the histogram decodes to what was kept",
                p.number
            );
            assert_eq!(hy.value_at_quantile(0.99) as f64 / 1e6, y.p99_ms);
        }
    }
    assert!(b.probes[4].result.generator.unwrap().saturated());
    // A fixed run's file has neither field.
    let fixed = crate::capacity_report::file(vec![RunResult::default()]);
    let mut text = Vec::new();
    fixed.write(&mut text).unwrap();
    let json: Value = serde_json::from_slice(&text).unwrap();
    assert!(
        json["runs"][0].get("capacity").is_none() && json["runs"][0].get("generator").is_none()
    );
}
