//! kafkabench against a secured cluster: SASL_SSL with SCRAM and PLAIN, the password and the CA
//! from the environment. A wrong password or an untrusted certificate is named as such, exits 3
//! within the connect bound, leaks no secret and leaves no topic behind. These tests start a
//! SASL_SSL broker of their own (scripts/kafka-local --security sasl_ssl, another home and port)
//! and share it: it is started once and stopped when the test process exits.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, Producer};

use crate::common::{fixture, repo, text};

/// Client port; the controller listens one above and the brokers' PLAINTEXT listener two above.
/// Clear of the main broker (9092-9094) and of tests/faults.rs's second broker (19092-19093).
const PORT: u16 = 19492;
const USER: &str = "kafkabench";
const PASSWORD: &str = "kb-test-Right-5e3f1a";
const WRONG_PASSWORD: &str = "kb-test-Wrong-c0ffee";
/// librdkafka's 10 s connect bound, plus the process starting and the report being written on
/// a busy machine; still short of any other timeout (30 s) a refusal could wait out.
const CONNECT_BOUND: Duration = Duration::from_secs(20);

struct SecureBroker {
    bootstrap: String,
    ca: PathBuf,
}

fn home() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kafka-local-sasl-ssl")
}

fn kafka_local(args: &[&str]) -> Command {
    let mut c = Command::new(repo().join("scripts/kafka-local"));
    c.args(args)
        .env("KAFKA_LOCAL_HOME", home())
        .env("KAFKA_LOCAL_PORT", PORT.to_string())
        .env("KAFKA_LOCAL_HEAP", "384m")
        .env("KAFKA_LOCAL_READY_TIMEOUT", "120")
        .env("KAFKA_LOCAL_SASL_USER", USER)
        .env("KAFKA_LOCAL_SASL_PASSWORD", PASSWORD);
    c
}

extern "C" fn stop_broker() {
    let _ = kafka_local(&["down", "--wipe"]).output();
}

/// The shared broker, started on first use. libtest has no after-all hook, so it is stopped by
/// an `atexit` handler: after the last test, whether tests passed or not.
fn broker() -> &'static SecureBroker {
    static BROKER: OnceLock<Result<SecureBroker, String>> = OnceLock::new();
    BROKER
        .get_or_init(start_broker)
        .as_ref()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn start_broker() -> Result<SecureBroker, String> {
    // One left by an interrupted earlier run would hold another CA.
    let _ = kafka_local(&["down", "--wipe"]).output();
    // SAFETY: registers a function that takes no arguments and captures nothing.
    unsafe { libc::atexit(stop_broker) };
    std::fs::create_dir_all(home()).map_err(|e| e.to_string())?;
    let log = home().join("up.log");
    let out = File::create(&log).map_err(|e| e.to_string())?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut up = kafka_local(&["up", "--security", "sasl_ssl"])
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("scripts/kafka-local does not run: {e}"))?;
    let limit = Duration::from_secs(180);
    let status = loop {
        if let Some(status) = up.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > limit {
            let _ = up.kill();
            return Err(format!(
                "the SASL_SSL broker was not ready within {limit:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    if !status.success() {
        return Err(format!("the SASL_SSL broker did not start:\n{said}"));
    }
    eprintln!("SASL_SSL broker ready in {:.1?}", started.elapsed());
    Ok(SecureBroker {
        bootstrap: format!("127.0.0.1:{PORT}"),
        ca: home().join("security/ca.pem"),
    })
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    json: String,
    took: Duration,
}

impl Outcome {
    fn everything(&self) -> String {
        format!("{}{}{}", self.stdout, self.stderr, self.json)
    }
}

/// Runs a fixture against the secure broker; `env` sets what the fixture reads with env().
fn run(scenario: &str, env: &[(&str, &str)]) -> Outcome {
    let b = broker();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kafkabench"));
    cmd.args(["run", &fixture(scenario), "--quiet", "--json"])
        .arg(&json)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("KB_SECURE_BOOTSTRAP", &b.bootstrap)
        .env("KB_SSL_CA", &b.ca)
        .env("KB_SASL_PASSWORD", PASSWORD)
        .env_remove("KB_SASL_MECHANISM");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let out = cmd.output().expect("kafkabench runs");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
        json: std::fs::read_to_string(&json).unwrap_or_default(),
        took: started.elapsed(),
    }
}

/// The cause first (stderr, then the report's outcome and failure): CI keeps only the start of
/// a long failure message, and the table would push the cause out of it.
fn expect_code(o: &Outcome, code: i32) {
    let said = serde_json::from_str::<serde_json::Value>(&o.json).ok();
    let field = |k: &str| said.as_ref().map(|d| d[k].to_string()).unwrap_or_default();
    assert_eq!(
        o.code,
        code,
        "stderr:\n{}\noutcome: {} failure: {} assertions: {}\nstdout:\n{}",
        o.stderr,
        field("outcome"),
        field("failure"),
        field("assertions"),
        o.stdout
    );
}

/// Topics of the run that wrote `o` (their names end in its run id): other tests write
/// topics on the same broker at the same time.
fn topics_of(o: &Outcome) -> Vec<String> {
    let doc = report(o);
    let id = doc["run_id"]
        .as_str()
        .expect("the report names its run id")
        .to_string();
    topics().into_iter().filter(|t| t.contains(&id)).collect()
}

fn report(o: &Outcome) -> serde_json::Value {
    serde_json::from_str(&o.json).expect("the JSON report is written and valid")
}

/// Topics on the secure broker, listed with the right credentials.
fn topics() -> BTreeSet<String> {
    let b = broker();
    let client: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &b.bootstrap)
        .set("security.protocol", "SASL_SSL")
        .set("sasl.mechanism", "SCRAM-SHA-512")
        .set("sasl.username", USER)
        .set("sasl.password", PASSWORD)
        .set("ssl.ca.location", b.ca.display().to_string())
        .create()
        .expect("a client for the secure broker");
    let md = client
        .client()
        .fetch_metadata(None, Duration::from_secs(10))
        .expect("the secure broker answers with the right password");
    md.topics()
        .iter()
        .map(|t| t.name().to_string())
        .filter(|n| !n.starts_with("__"))
        .collect()
}

#[test]
fn scram_sha_512_over_tls_runs_end_to_end_with_secrets_from_the_environment() {
    let o = run("security/sasl_ssl.kbs", &[]);
    expect_code(&o, 0);
    let doc = report(&o);
    let r = &doc["runs"][0];
    assert_eq!(r["acked"], 2000, "{doc}");
    assert_eq!(r["delivery"]["consumed"], 2000, "{doc}");
    assert!(!o.everything().contains(PASSWORD), "{}", o.everything());
    // DescribeLogDirs speaks SASL_SSL too: the disk bytes are measured.
    assert!(r["disk_bytes"].as_u64().is_some_and(|b| b > 0), "{doc}");
    assert_eq!(
        topics_of(&o),
        Vec::<String>::new(),
        "the run's topic is deleted"
    );
}

#[test]
fn scram_sha_256_and_plain_authenticate_too() {
    for mechanism in ["SCRAM-SHA-256", "PLAIN"] {
        let o = run("security/sasl_ssl.kbs", &[("KB_SASL_MECHANISM", mechanism)]);
        expect_code(&o, 0);
        assert_eq!(report(&o)["runs"][0]["acked"], 2000, "{mechanism}");
    }
}

/// The topic's bytes on the broker's disk, as Kafka's LogDirsCommand reports them over the
/// same SASL_SSL listener (its own Java client, with kafka-local's client config).
fn log_dir_bytes(topic: &str) -> u64 {
    let b = broker();
    let config = home().join("security/client.properties");
    let out = kafka_local(&[
        "tool",
        "org.apache.kafka.tools.LogDirsCommand",
        "--bootstrap-server",
        &b.bootstrap,
        "--command-config",
        config.to_str().expect("a UTF-8 path"),
        "--describe",
        "--topic-list",
        topic,
    ])
    .output()
    .expect("LogDirsCommand runs");
    let said = text(&out.stdout);
    let json = said
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON from LogDirsCommand:\n{said}{}", text(&out.stderr)));
    let v: serde_json::Value = serde_json::from_str(json).expect("LogDirsCommand's JSON");
    let mut total = 0;
    for broker in v["brokers"].as_array().expect("brokers") {
        for dir in broker["logDirs"].as_array().expect("logDirs") {
            for p in dir["partitions"].as_array().expect("partitions") {
                if p["partition"]
                    .as_str()
                    .is_some_and(|n| n.starts_with(topic))
                {
                    total += p["size"].as_u64().expect("a size");
                }
            }
        }
    }
    total
}

#[test]
fn disk_bytes_over_sasl_ssl_equal_what_the_broker_reports() {
    let b = broker();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args([
            "run",
            &fixture("security/sasl_ssl.kbs"),
            "--quiet",
            "--keep-topics",
        ])
        .args(["--run-id", "d15c0b", "--json"])
        .arg(&json)
        .current_dir(repo())
        .env("KB_SECURE_BOOTSTRAP", &b.bootstrap)
        .env("KB_SSL_CA", &b.ca)
        .env("KB_SASL_PASSWORD", PASSWORD)
        .env_remove("KB_SASL_MECHANISM")
        .output()
        .expect("kafkabench runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let mine = doc["runs"][0]["disk_bytes"]
        .as_u64()
        .expect("disk bytes measured");
    let topic = "kb-test-sasl-ssl-d15c0b";
    let theirs = log_dir_bytes(topic);
    let _ = kafka_local(&[
        "tool",
        "org.apache.kafka.tools.TopicCommand",
        "--bootstrap-server",
        &b.bootstrap,
        "--command-config",
        home().join("security/client.properties").to_str().unwrap(),
        "--delete",
        "--topic",
        topic,
    ])
    .output();
    // The run's growth over its measured phase is the whole topic: it was created empty.
    assert_eq!(
        mine, theirs,
        "kafkabench's disk bytes against LogDirsCommand's"
    );
}

#[test]
fn a_share_group_reads_over_sasl_ssl_with_every_mechanism() {
    for mechanism in ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"] {
        let o = run(
            "security/share_sasl_ssl.kbs",
            &[("KB_SASL_MECHANISM", mechanism)],
        );
        expect_code(&o, 0);
        let doc = report(&o);
        let r = &doc["runs"][0];
        assert_eq!(r["share"]["accepted"], 1000, "{mechanism}: {doc}");
        assert_eq!(r["delivery"]["lost"], 0, "{mechanism}: {doc}");
        assert!(!o.everything().contains(PASSWORD), "{}", o.everything());
    }
}

#[test]
fn a_wrong_password_is_an_authentication_failure_that_leaks_nothing_and_leaves_no_topic() {
    let o = run(
        "security/sasl_ssl.kbs",
        &[("KB_SASL_PASSWORD", WRONG_PASSWORD)],
    );
    expect_code(&o, 3);
    assert!(o.took < CONNECT_BOUND, "took {:?}", o.took);
    assert!(o.stderr.contains("authentication failed"), "{}", o.stderr);
    assert!(!o.stderr.contains("brokers are down"), "{}", o.stderr);
    let doc = report(&o);
    assert_eq!(doc["outcome"], "run_failed", "{doc}");
    assert!(
        doc["failure"]
            .as_str()
            .is_some_and(|f| f.contains("authentication failed")),
        "{doc}"
    );
    assert!(
        !o.everything().contains(WRONG_PASSWORD),
        "{}",
        o.everything()
    );
    assert_eq!(
        topics_of(&o),
        Vec::<String>::new(),
        "no topic is left behind"
    );
}

#[test]
fn a_certificate_from_an_unknown_ca_is_refused_as_a_tls_error() {
    let unrelated = repo().join(fixture("security/unrelated-ca.pem"));
    let wrong_ca: &Path = &unrelated;
    let cases = [
        ("security/sasl_ssl.kbs", Some(wrong_ca)),
        ("security/no_ca.kbs", None),
    ];
    for (scenario, ca) in cases {
        let ca = ca.map(|p| p.display().to_string());
        let env: Vec<(&str, &str)> = ca.iter().map(|c| ("KB_SSL_CA", c.as_str())).collect();
        let o = run(scenario, &env);
        expect_code(&o, 3);
        assert!(o.took < CONNECT_BOUND, "{scenario} took {:?}", o.took);
        assert!(
            o.stderr.contains("TLS handshake") && o.stderr.contains("certificate verify failed"),
            "{scenario}: {}",
            o.stderr
        );
        assert!(!o.everything().contains(PASSWORD), "{}", o.everything());
    }
}
