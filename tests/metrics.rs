//! `--metrics` scraped by a real Prometheus (Debian's `prometheus`, installed by scripts/setup;
//! without it this test fails, it never skips): the totals Prometheus stored equal the run's
//! result file, it saw the runs while they went on (not only their end), and the endpoint
//! stayed up until a scrape read the end. And the endpoint met by hostile clients while a run
//! goes on: malformed, oversized and slow requests leave the run whole and the endpoint serving.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{bootstrap, free_port, http_get as get, repo, require_broker};

struct Prometheus {
    child: Child,
    port: u16,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts Prometheus scraping `target` every second, its data in `dir`.
fn prometheus(dir: &Path, target: u16) -> Prometheus {
    let found = Command::new("prometheus").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "prometheus is missing: --metrics is checked against a real Prometheus \
         (Debian: apt-get install prometheus; scripts/setup installs it)"
    );
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: kafkabench\n    static_configs:\n      \
             - targets: ['127.0.0.1:{target}']\n"
        ),
    )
    .expect("a config written");
    let port = free_port();
    let log = std::fs::File::create(dir.join("prometheus.log")).expect("a log file");
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("prometheus starts");
    let p = Prometheus { child, port };
    let until = Instant::now() + Duration::from_secs(60);
    while get(port, "/-/ready").map(|(c, _)| c) != Some(200) {
        assert!(
            Instant::now() < until,
            "Prometheus not ready in 60 s: {}",
            std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    p
}

/// An instant query's samples: (the `run` label, the value).
fn query(p: &Prometheus, promql: &str) -> Vec<(String, f64)> {
    query_at(p, promql, None)
}

/// The same, evaluated at `time` (Unix seconds) when given.
fn query_at(p: &Prometheus, promql: &str, time: Option<f64>) -> Vec<(String, f64)> {
    let enc: String = promql
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let at = time.map_or(String::new(), |t| format!("&time={t:.3}"));
    let (code, body) = get(p.port, &format!("/api/v1/query?query={enc}{at}")).expect("an answer");
    assert_eq!(code, 200, "{promql}: {body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    v["data"]["result"]
        .as_array()
        .expect("a vector")
        .iter()
        .map(|s| {
            let run = s["metric"]["run"].as_str().unwrap_or("").to_string();
            let value = s["value"][1]
                .as_str()
                .expect("a value")
                .parse()
                .expect("a number");
            (run, value)
        })
        .collect()
}

/// `2026-12-02T07:19:26.838Z` (the result file's instants) as Unix seconds.
fn unix_secs(rfc3339: &str) -> f64 {
    let n = |a: usize, b: usize| -> i64 { rfc3339[a..b].parse().expect("a digit field") };
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs: f64 = rfc3339[17..rfc3339.len() - 1].parse().expect("seconds");
    (days * 86_400 + n(11, 13) * 3600 + n(14, 16) * 60) as f64 + secs
}

/// The value for run `run` in an answer.
fn of(samples: &[(String, f64)], run: &str) -> f64 {
    samples
        .iter()
        .find(|(r, _)| r == run)
        .unwrap_or_else(|| panic!("no sample for run {run} in {samples:?}"))
        .1
}

#[test]
fn prometheus_scrapes_a_run_and_its_totals_equal_the_result_file() {
    require_broker();
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let prom = prometheus(dir.path(), port);
    // Prometheus takes a few seconds to hand a new target to its scraper (discovery is
    // throttled): the run starts once it has tried the port, so it is watched from the start.
    let until = Instant::now() + Duration::from_secs(60);
    while !get(prom.port, "/api/v1/targets")
        .is_some_and(|(_, body)| body.contains("\"lastError\":\"") && !body.contains("0001-01-01"))
    {
        assert!(Instant::now() < until, "Prometheus never tried the target");
        std::thread::sleep(Duration::from_millis(200));
    }
    let scenario = dir.path().join("scraped.kbs");
    std::fs::write(
        &scenario,
        r#"scenario "scraped" {
  topic "kb-test-metrics-{codec}" { partitions = 2 }
  producer { compression.type = {codec} }
  consumer { }
  workload { duration = 5s  rate = 1500/s  warmup = 1s  payload = json(size: 300B) }
  matrix { codec = [none, lz4] }
}
"#,
    )
    .expect("a scenario");
    let json = dir.path().join("scraped.json");
    let out = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(["run", "--quiet", "--metrics-linger", "30s", "--json"])
        .arg(&json)
        .arg("--metrics")
        .arg(format!("127.0.0.1:{port}"))
        .arg(&scenario)
        .env("KAFKA_BOOTSTRAP", bootstrap())
        .current_dir(repo())
        .output()
        .expect("kafkabench runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("http://127.0.0.1:{port}/metrics")),
        "{stderr}"
    );
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("a result file")).expect("JSON");
    let run_id = result["run_id"].as_str().expect("a run id");

    // Stale markers follow a target that went away, so the values are read over a range.
    let at = |m: &str| format!("max_over_time({m}{{run_id=\"{run_id}\"}}[10m])");
    // The last scrape is stored a moment after kafkabench, which answered it, exits.
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let finished = query(&prom, "max_over_time(kafkabench_finished[10m])");
        if finished.first().map(|s| s.1) == Some(1.0) {
            break;
        }
        assert!(
            Instant::now() < until,
            "no scrape saw the end ({finished:?}): the endpoint should linger for one"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let runs = result["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    for (metric, field) in [
        ("kafkabench_records_sent_total", "/sent"),
        ("kafkabench_records_acked_total", "/acked"),
        ("kafkabench_records_failed_total", "/failed"),
        ("kafkabench_records_consumed_total", "/delivery/consumed"),
        ("kafkabench_ack_latency_seconds_count", "/ack/count"),
        ("kafkabench_e2e_latency_seconds_count", "/e2e/count"),
    ] {
        let got = query(&prom, &at(metric));
        for r in runs {
            let label = r["label"].as_str().expect("a label");
            let want = r.pointer(field).and_then(|v| v.as_f64()).expect(field);
            assert_eq!(
                of(&got, label),
                want,
                "{metric} of run {label} as Prometheus stored it, against the result file's {field}"
            );
        }
    }
    for r in runs {
        let label = r["label"].as_str().expect("a label");
        assert!(
            r["acked"].as_f64().expect("acked") > 5000.0,
            "the run sent its 5 s at 1500/s"
        );
        // Watched while it ran: a scrape in the measured phase saw fewer records than the end.
        let during = query(
            &prom,
            &format!(
                "min_over_time(kafkabench_records_acked_total{{run_id=\"{run_id}\"}}[10m]) \
                 < on(run) max_over_time(kafkabench_records_acked_total{{run_id=\"{run_id}\"}}[10m])"
            ),
        );
        of(&during, label);
        let measured = query(
            &prom,
            &format!(
                "max_over_time(kafkabench_phase{{run_id=\"{run_id}\",kafkabench_phase=\"measured\"}}[10m])"
            ),
        );
        assert_eq!(of(&measured, label), 1.0, "the measured phase was scraped");
        let rate = query(&prom, &at("kafkabench_target_rate"));
        assert_eq!(of(&rate, label), 1500.0);
    }
    let cpu = query(&prom, "max_over_time(process_cpu_seconds_total[10m])");
    assert!(cpu.first().is_some_and(|s| s.1 > 0.0), "{cpu:?}");

    // docs/grafana-dashboard.json: every query answers, in the middle of the first run.
    let first = &runs[0];
    let mid = unix_secs(first["started_at"].as_str().expect("started_at"))
        + first["elapsed_secs"].as_f64().expect("elapsed") / 2.0;
    let dashboard: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo().join("docs/grafana-dashboard.json")).expect("the dashboard"),
    )
    .expect("dashboard JSON");
    let mut asked = 0;
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"]
                .as_str()
                .expect("an expr")
                .replace("$scenario", "scraped")
                .replace("$run_id", run_id)
                .replace("$__rate_interval", "4s");
            let got = query_at(&prom, &expr, Some(mid));
            let seen = || {
                query(
                    &prom,
                    &format!(
                        "min_over_time(timestamp(kafkabench_records_acked_total{{run_id=\"{run_id}\"}})[10m:1s])"
                    ),
                )
            };
            assert!(
                !got.is_empty(),
                "panel {:?}: `{expr}` has no data mid-run (at {mid}; first samples at {:?})",
                panel["title"],
                seen()
            );
            asked += 1;
        }
    }
    assert!(asked >= 10, "{asked} queries");
    let p99 = query_at(
        &prom,
        &format!(
            "histogram_quantile(0.99, sum by (run, le) (rate(kafkabench_ack_latency_seconds_bucket{{run_id=\"{run_id}\"}}[4s])))"
        ),
        Some(mid),
    );
    let first_label = first["label"].as_str().expect("a label");
    let p99 = of(&p99, first_label);
    assert!(
        p99 > 0.0 && p99 < 60.0,
        "a mid-run ack p99 from the buckets: {p99} s"
    );
}

/// A scraper that does not ask for OpenMetrics (curl, promtool, an older agent) gets Prometheus'
/// text format 0.0.4, which `promtool check metrics` (a second, stricter parser) accepts mid-run.
#[test]
fn promtool_accepts_a_plain_scrape_mid_run() {
    require_broker();
    let found = Command::new("promtool").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "promtool is missing (Debian's prometheus package has it; scripts/setup installs it)"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("plain.kbs");
    std::fs::write(
        &scenario,
        r#"scenario "plain" {
  topic "kb-test-metrics-plain" { partitions = 1 }
  consumer { }
  workload { duration = 4s  rate = 500/s }
}
"#,
    )
    .expect("a scenario");
    let port = free_port();
    let mut run = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(["run", "--quiet", "--metrics-linger", "0s", "--metrics"])
        .arg(format!("127.0.0.1:{port}"))
        .arg(&scenario)
        .env("KAFKA_BOOTSTRAP", bootstrap())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("kafkabench runs");
    let measured = "kafkabench_phase=\"measured\"} 1";
    let until = Instant::now() + Duration::from_secs(60);
    let body = loop {
        if let Some((200, body)) = get(port, "/metrics") {
            if body.contains(measured) {
                break body;
            }
        }
        assert!(
            Instant::now() < until && run.try_wait().expect("waits").is_none(),
            "no scrape saw the measured phase"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(!body.contains("# EOF") && body.contains("# TYPE kafkabench_phase gauge"));
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    check
        .stdin
        .take()
        .expect("stdin")
        .write_all(body.as_bytes())
        .expect("the scrape written to promtool");
    let out = check.wait_with_output().expect("promtool ends");
    assert!(
        out.status.success(),
        "promtool: {}{}\n{body}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(run.wait().expect("the run ends").code(), Some(0));
}

/// Sends `request` on a fresh connection and reads until the server closes it: the answer's
/// status code, None when it closed (or reset) without one. Panics if the server holds the
/// connection for a minute.
fn probe(port: u16, request: &[u8]) -> Option<u16> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("the endpoint accepts");
    c.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("a timeout");
    // A server that refuses early closes before a large request is all written.
    let _ = c.write_all(request);
    answer(&mut c)
}

fn answer(c: &mut TcpStream) -> Option<u16> {
    let mut got = Vec::new();
    if let Err(e) = c.read_to_end(&mut got) {
        assert!(
            !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "the endpoint held a connection for a minute"
        );
    }
    String::from_utf8_lossy(&got)
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The answers a probe may get: a status code, or None for a close (or reset) without one.
type Answers = &'static [Option<u16>];

/// Malformed, oversized and slow requests while a run goes on: each is refused or closed, a
/// scrape after them is answered, and the run's figures are complete and consistent (every
/// record of the scenario's count sent, acknowledged and read back, none lost), as the last
/// scrape also says.
#[test]
fn hostile_requests_mid_run_are_refused_and_the_run_is_whole() {
    require_broker();
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("probed.kbs");
    // 12 s at 1000/s: longer than the probes take (about the endpoint's 5 s header timeout).
    std::fs::write(
        &scenario,
        r#"scenario "probed" {
  topic "kb-test-metrics-probed" { partitions = 2 }
  consumer { }
  workload { messages = 12000  rate = 1000/s  payload = json(size: 200B) }
}
"#,
    )
    .expect("a scenario");
    let json = dir.path().join("probed.json");
    let port = free_port();
    let mut run = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(["run", "--quiet", "--metrics-linger", "60s", "--json"])
        .arg(&json)
        .arg("--metrics")
        .arg(format!("127.0.0.1:{port}"))
        .arg(&scenario)
        .env("KAFKA_BOOTSTRAP", bootstrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kafkabench runs");
    let measured = "kafkabench_phase=\"measured\"} 1";
    let until = Instant::now() + Duration::from_secs(60);
    while !get(port, "/metrics").is_some_and(|(_, body)| body.contains(measured)) {
        assert!(
            Instant::now() < until && run.try_wait().expect("waits").is_none(),
            "no scrape saw the measured phase"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Malformed, oversized, and what the endpoint does not serve.
    let header = format!("X-Big: {}\r\n", "y".repeat(1 << 20));
    let many: String = (0..500).map(|i| format!("X-{i}: y\r\n")).collect();
    let cases: Vec<(&str, Vec<u8>, Answers)> = vec![
        (
            "TLS hello",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03".to_vec(),
            &[Some(400), None],
        ),
        (
            "binary",
            (0..=255u8).cycle().take(4096).collect(),
            &[Some(400), None],
        ),
        ("no version", b"GET /metrics\r\n\r\n".to_vec(), &[Some(400)]),
        (
            "bad header",
            b"GET /metrics HTTP/1.1\r\nHost a\r\n\r\n".to_vec(),
            &[Some(400)],
        ),
        (
            "HTTP/2 preface",
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(),
            &[Some(400), Some(505), None],
        ),
        (
            "a megabyte of head",
            format!("GET /metrics HTTP/1.1\r\n{header}\r\n").into_bytes(),
            &[Some(431), None],
        ),
        (
            "500 headers",
            format!("GET /metrics HTTP/1.1\r\n{many}\r\n").into_bytes(),
            &[Some(431), None],
        ),
        (
            "POST",
            b"POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello".to_vec(),
            &[Some(405)],
        ),
        (
            "DELETE",
            b"DELETE /metrics HTTP/1.1\r\n\r\n".to_vec(),
            &[Some(405)],
        ),
        (
            "another path",
            b"GET /admin HTTP/1.1\r\n\r\n".to_vec(),
            &[Some(404)],
        ),
    ];
    for (what, request, want) in &cases {
        for _ in 0..5 {
            let got = probe(port, request);
            assert!(
                want.contains(&got),
                "{what}: {got:?}, expected one of {want:?}"
            );
        }
    }

    // Slow: a hundred clients (past the cap of 32) that start a head and never finish it.
    let mut slow: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut c = TcpStream::connect(("127.0.0.1", port)).expect("a connection");
            c.set_read_timeout(Some(Duration::from_secs(60)))
                .expect("a timeout");
            let _ = c.write_all(b"GET /metrics HTTP/1.1\r\nHost: a\r\nX-Slow: ");
            c
        })
        .collect();
    // While they hold it, a scrape is answered or refused (503, or a reset when the refusal
    // closes on its unread request), never left hanging.
    let mut scraper = TcpStream::connect(("127.0.0.1", port)).expect("a connection");
    scraper
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("a timeout");
    let _ = scraper.write_all(b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n");
    let during = answer(&mut scraper);
    assert!(matches!(during, Some(200 | 503) | None), "{during:?}");

    // Every slow client is closed by the endpoint: refused at the cap, or timed out.
    let (mut refused, mut closed) = (0, 0);
    for c in &mut slow {
        match answer(c) {
            Some(503) => refused += 1,
            Some(408) | None => closed += 1,
            other => panic!("a slow client got {other:?}"),
        }
    }
    assert_eq!(refused + closed, 100, "{refused} refused, {closed} closed");
    let after = get(port, "/metrics").expect("a scrape after the probes");
    assert_eq!(after.0, 200, "{}", after.1);

    // The run goes on to its end; a scrape of the final totals ends the linger.
    let last = loop {
        if let Some((200, body)) = get(port, "/metrics") {
            if body.lines().any(|l| l == "kafkabench_finished 1") {
                break body;
            }
        }
        assert!(
            Instant::now() < until + Duration::from_secs(120),
            "the run never finished"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = run.wait_with_output().expect("the run ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("a result file")).expect("JSON");
    let r = &result["runs"][0];
    for (field, want) in [
        ("/sent", 12000.0),
        ("/acked", 12000.0),
        ("/failed", 0.0),
        ("/delivery/consumed", 12000.0),
        ("/delivery/lost", 0.0),
        ("/ack/count", 12000.0),
    ] {
        assert_eq!(
            r.pointer(field).and_then(|v| v.as_f64()),
            Some(want),
            "{field}"
        );
    }
    assert_eq!(r["complete"], true);
    for (metric, want) in [
        ("kafkabench_records_sent_total", 12000),
        ("kafkabench_records_acked_total", 12000),
        ("kafkabench_records_failed_total", 0),
        ("kafkabench_records_consumed_total", 12000),
        ("kafkabench_ack_latency_seconds_count", 12000),
    ] {
        let line = last
            .lines()
            .find(|l| l.starts_with(&format!("{metric}{{")))
            .unwrap_or_else(|| panic!("no {metric} in\n{last}"));
        assert!(line.ends_with(&format!(" {want}")), "{line}");
    }
}
