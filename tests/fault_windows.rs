//! Fault figures over the records a fault held up, and the unreachable period's start (issue
//! 49), each on a broker of the test's own (scripts/test runs this module in its cluster lane):
//! - the only broker paused for 20 s fails `fault.ack.p99 < 2s` and `fault.e2e.p99 < 2s`, the
//!   records it held up counted where they were due, as many as the topic read back holds
//!   due in the window; a run without a fault has no fault figures;
//! - a broker stopped from outside: each period no broker answered starts within 100 ms of
//!   the real stop, which a /proc watcher stamps.

use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common::broker::SecondBroker;
use crate::common::proc_state::StateWatch;
use crate::common::reader::read_topic;
use crate::common::watch::Watched;
use crate::common::{fixture, repo};

/// kafkabench on `scenario` against `broker` (its faults find it through KAFKA_LOCAL_HOME),
/// writing JSON to `json`.
fn spawn(broker: &SecondBroker, scenario: &str, json: &std::path::Path, id: &str) -> Watched {
    let child = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args([
            "run",
            &fixture(scenario),
            "--keep-topics",
            "--run-id",
            id,
            "--json",
        ])
        .arg(json)
        .args(["--bootstrap", &broker.bootstrap()])
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("KAFKA_LOCAL_HOME", broker.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kafkabench starts");
    Watched::new(child)
}

fn read_json(json: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(json).expect("JSON report written"))
        .expect("valid JSON")
}

fn verdict<'a>(doc: &'a serde_json::Value, assertion: &str, run: &str) -> &'a serde_json::Value {
    doc["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["assertion"] == assertion && v["runs"][0] == run)
        .unwrap_or_else(|| panic!("no verdict of `{assertion}` on {run}: {doc}"))
}

#[test]
fn a_20s_pause_fails_the_fault_bounds_with_the_records_it_held_up() {
    let broker = SecondBroker::up(19092);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let (code, out, err, _) =
        spawn(&broker, "run/paused_20s.kbs", &json, &run_id()).wait(Duration::from_secs(300));
    // The assertions fail: exit 1, not a failed run.
    assert_eq!(code, 1, "stdout:\n{out}\nstderr:\n{err}");
    let doc = read_json(&json);
    let paused = &doc["runs"][0];
    let f = &paused["faults"];
    let ack = &f["ack"];
    // The records due in the pause waited for it: half of them more than 9 s.
    let p50 = ack["p50_ms"].as_f64().unwrap();
    assert!(p50 >= 9_000.0, "fault.ack.p50 {p50} ms: {f}");
    for a in ["fault.ack.p99 < 2s", "fault.e2e.p99 < 2s"] {
        let v = verdict(&doc, a, "paused");
        assert_eq!(v["pass"], false, "{v}");
        let measured = v["judged"]["measured"].as_f64().unwrap();
        assert!(measured > 10.0, "{a}: {measured} s");
    }
    // As many as the topic holds due in the window, read back by another client: the
    // window's due intervals (100 ms) from the stamps' intended times, counted from the
    // first measured record's (the measured phase's start, to the sender's first instant).
    let window = &f["windows"][0];
    let (from, to) = (window[0].as_f64().unwrap(), window[1].as_f64().unwrap());
    let (lo, hi) = (
        (from / 0.1).floor() * 0.1,
        (to / 0.1 - 1e-9).floor() * 0.1 + 0.1,
    );
    let topic = paused["topic"].as_str().unwrap();
    let c = read_topic(&broker.bootstrap(), topic, "read_committed");
    let measured: Vec<u64> = c.measured().map(|r| r.intended_ns).collect();
    let origin = *measured.iter().min().unwrap();
    let mut due: Vec<(u32, u64)> = c
        .measured()
        .filter(|r| {
            let t = (r.intended_ns - origin) as f64 / 1e9;
            (lo..hi).contains(&t)
        })
        .map(|r| (r.producer, r.seq))
        .collect();
    due.sort_unstable();
    due.dedup();
    let counted = ack["count"].as_u64().unwrap() + f["failed"].as_u64().unwrap();
    eprintln!(
        "due in {lo:.1}..{hi:.1} s: kafkabench {counted}, the topic {}; ack p50 {} ms, p99 {} ms",
        due.len(),
        ack["p50_ms"],
        ack["p99_ms"]
    );
    assert!(
        (counted as i64 - due.len() as i64).abs() <= 10,
        "kafkabench counts {counted} records due in {lo:.1}..{hi:.1} s, the topic {}: {f}",
        due.len()
    );
    assert!(
        due.len() >= 39_000,
        "{} records due in the pause",
        due.len()
    );
    // The same records read back: end-to-end, as many (no loss), as late.
    let e2e = &f["e2e"];
    assert!(e2e["p50_ms"].as_f64().unwrap() >= 9_000.0, "{e2e}");
    // A run without a fault has no fault figures, and the bounds are not measured on it.
    let calm = &doc["runs"][1];
    assert_eq!(calm["faults"], serde_json::Value::Null, "{calm}");
    let v = verdict(&doc, "fault.ack.p99 < 2s", "calm");
    assert_eq!(v["judged"]["shortfall"]["kind"], "not_measured", "{v}");
    // The report says what the figures are.
    assert!(
        out.contains("the records due in the fault windows: ack p50"),
        "{out}"
    );
}

/// A run id of the test's own, so it knows its topic's name.
fn run_id() -> String {
    let ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{:06x}", ns & 0xff_ffff)
}

/// Waits until `topic`'s partitions have grown by 500 records, asked by a client of the
/// test's own: its producer writes again. Fails past a minute.
fn writing_again(bootstrap: &str, topic: &str) {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("a client");
    let total = || -> i64 {
        (0..3)
            .map(|p| {
                c.fetch_watermarks(topic, p, Duration::from_secs(10))
                    .map_or(0, |(_, high)| high)
            })
            .sum()
    };
    let (from, started) = (total(), std::time::Instant::now());
    while total() < from + 500 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{topic} was not written again"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Seconds since the Unix epoch of an RFC 3339 UTC instant as result files write them.
fn epoch_secs(rfc3339: &str) -> f64 {
    let (date, time) = rfc3339.trim_end_matches('Z').split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    let (y, m, day) = (d[0], d[1], d[2]);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let t: Vec<f64> = time.split(':').map(|x| x.parse().unwrap()).collect();
    days as f64 * 86_400.0 + t[0] * 3600.0 + t[1] * 60.0 + t[2]
}

fn unix(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

#[test]
fn the_unreachable_period_starts_at_the_brokers_real_stop() {
    let broker = SecondBroker::up(19092);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let id = run_id();
    let mut w = spawn(&broker, "run/stopped_thrice.kbs", &json, &id);
    w.wait_for_acked("run 1 of 1", Duration::from_secs(120));
    let topic = format!("kb-test-stopped-{id}");
    let watch = StateWatch::start(broker.pid());
    // Stopped long enough for librdkafka to find it gone (a request past socket.timeout.ms,
    // 1 s, and its timeout scan, every second), and again only once the producer writes
    // again: until its clients are back (librdkafka's reconnect backs off, up to seconds after
    // a stop), a stop is not the end of an answer.
    for _ in 0..3 {
        writing_again(&broker.bootstrap(), &topic);
        std::thread::sleep(Duration::from_secs(1));
        broker.signal(libc::SIGSTOP);
        std::thread::sleep(Duration::from_secs(6));
        broker.signal(libc::SIGCONT);
    }
    let (code, out, err, _) = w.wait(Duration::from_secs(180));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let stops = watch.stops();
    drop(watch);
    assert_eq!(stops.len(), 3, "the watcher saw {stops:?}");
    let doc = read_json(&json);
    let r = &doc["runs"][0];
    let start = epoch_secs(r["started_at"].as_str().unwrap());
    let periods: Vec<f64> = r["unavailable"]
        .as_array()
        .expect("unavailability recorded")
        .iter()
        .map(|p| p["from_secs"].as_f64().unwrap())
        .collect();
    for (stopped, _) in &stops {
        let real = unix(*stopped) - start;
        // The period this stop began: the one starting nearest it.
        let from = periods
            .iter()
            .copied()
            .min_by(|a, b| (a - real).abs().total_cmp(&(b - real).abs()))
            .unwrap_or(f64::NAN);
        eprintln!("stopped at {real:.3} s, the period starts at {from:.3} s");
        // The watcher stamps a stop up to 5 ms late, started_at is to the millisecond.
        assert!(
            (from - real).abs() <= 0.1,
            "the broker stopped at {real:.3} s, no period starts within 100 ms: {periods:?}"
        );
    }
}
