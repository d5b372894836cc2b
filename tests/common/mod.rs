//! Shared helpers for integration tests: where the broker is, and running the real binary.
// reader.rs keeps `offsets` and `group_lag` for controls that no test uses today.
#![allow(dead_code)]

pub(crate) mod broker;
pub(crate) mod cluster;
pub(crate) mod hdr;
pub(crate) mod proc_state;
pub(crate) mod reader;
pub(crate) mod watch;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

/// The broker the integration tests use: KAFKA_BOOTSTRAP, default 127.0.0.1:9092.
pub(crate) fn bootstrap() -> String {
    std::env::var("KAFKA_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:9092".into())
}

/// Fails with a message that says what was tried and how to start a broker.
pub(crate) fn require_broker() {
    let b = bootstrap();
    let first = b.split(',').next().unwrap_or("127.0.0.1:9092");
    let addr: std::net::SocketAddr = std::net::ToSocketAddrs::to_socket_addrs(first)
        .ok()
        .and_then(|mut a| a.next())
        .unwrap_or_else(|| panic!("KAFKA_BOOTSTRAP={b} does not resolve"));
    if std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(3)).is_err() {
        panic!(
            "no Kafka broker answers at {b}: start one with `scripts/kafka-local up` \
             (or run the whole suite with `scripts/test`, which starts it), or set KAFKA_BOOTSTRAP"
        );
    }
}

pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn kafkabench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(args)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .output()
        .expect("the kafkabench binary runs")
}

/// Writes `text` as `NAME.kbs` in `dir`, runs it quietly with `--json`, asserts the exit
/// code; returns stdout and the result file.
pub(crate) fn run_text_json(
    dir: &Path,
    name: &str,
    text: &str,
    code: i32,
) -> (String, serde_json::Value) {
    run_json_with(dir, name, text, &[], code)
}

/// `run_text_json` with more options after `run FILE` (`--keep-topics`, `--run-id` …).
pub(crate) fn run_json_with(
    dir: &Path,
    name: &str,
    text: &str,
    extra: &[&str],
    code: i32,
) -> (String, serde_json::Value) {
    let file = dir.join(format!("{name}.kbs"));
    std::fs::write(&file, text).expect("a scenario written");
    let json = dir.join(format!("{name}.json"));
    let mut args = vec![
        "run",
        file.to_str().expect("a UTF-8 path"),
        "--quiet",
        "--json",
        json.to_str().expect("a UTF-8 path"),
    ];
    args.extend(extra);
    let stdout = expect_exit(&kafkabench(&args), code);
    let v =
        serde_json::from_slice(&std::fs::read(&json).expect("a result file")).expect("valid JSON");
    (stdout, v)
}

/// A name no other test run uses (groups and files outlive a run; topics get a run id anyway).
pub(crate) fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970")
        .subsec_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

/// Asserts the exit code, showing stdout and stderr when it differs; returns stdout.
pub(crate) fn expect_exit(out: &Output, code: i32) -> String {
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout:\n{stdout}\nstderr:\n{}",
        text(&out.stderr)
    );
    stdout
}

/// Runs a fixture quietly with `--json`, asserts the exit code, and returns stdout and the
/// result file.
pub(crate) fn run_fixture_json(name: &str, code: i32) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let out = kafkabench(&[
        "run",
        &fixture(name),
        "--quiet",
        "--json",
        json.to_str().expect("a UTF-8 temp path"),
    ]);
    let stdout = expect_exit(&out, code);
    let v = serde_json::from_slice(&std::fs::read(&json).expect("the result file"))
        .expect("valid JSON");
    (stdout, v)
}

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub(crate) fn fixture(p: &str) -> String {
    Path::new("tests/fixtures").join(p).display().to_string()
}

/// Waits for the child (spawned with stdout and stderr piped) at most `limit` and returns its
/// exit code, output and how long it took; kills it and fails the test past that.
pub(crate) fn wait_bounded(child: Child, limit: Duration) -> (i32, String, String, Duration) {
    watch::Watched::new(child).wait(limit)
}

/// The names of the topics on the broker that `keep` accepts.
pub(crate) fn broker_topics(keep: impl Fn(&str) -> bool) -> Vec<String> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .create()
        .expect("a client");
    let md = c
        .fetch_metadata(None, Duration::from_secs(10))
        .expect("metadata");
    md.topics()
        .iter()
        .map(|t| t.name().to_string())
        .filter(|n| keep(n))
        .collect()
}

/// A port free a moment ago, below the ephemeral range (32768 and up on Linux): a port the
/// kernel hands out to outgoing connections could be taken again between this check and the
/// process that binds it; one below the range only by another test's listener.
pub(crate) fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    // Spread by process, then stepped, so concurrent tests do not try the same ports.
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = 20_000 + (std::process::id() % 6_000) as u16;
    for _ in 0..2_000 {
        let port = 20_000 + (base - 20_000 + NEXT.fetch_add(7, Ordering::Relaxed)) % 12_000;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port between 20000 and 32000")
}

/// A plain HTTP GET on loopback: the status line's code and the body.
pub(crate) fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n")?.1.to_string();
    // Prometheus answers small queries whole; a chunked body is decoded crudely.
    let body = if text
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(&body)
    } else {
        body
    };
    Some((code, body))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}
