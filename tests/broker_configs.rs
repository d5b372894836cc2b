//! The brokers' own configuration in every result (issue 52): each broker's configs not at
//! their default, the quotas of the runs' clients and the topic's effective configs, checked
//! against what Kafka's own ConfigCommand says; a broker config changed between two runs named
//! by `compare` and marked by `history`; a planted secret in no file; a cluster whose ACLs
//! refuse DescribeConfigs noted, not failed. Each test reconfigures a broker, so each starts
//! one of its own (scripts/kafka-local, another home and port), never CI's: they run in the
//! `cluster` lane of scripts/test.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{expect_exit, fixture, kafkabench, repo, text};

/// Client ports, clear of CI's broker (9092-9094), tests/faults.rs's (19092), tests/security.rs's
/// (19492-19494) and the tests' cluster (19692-19894); the controller listens one above, a
/// SASL_SSL broker's own PLAINTEXT listener two above.
const PORT: u16 = 19292;
const SECURE_PORT: u16 = 19392;
/// A secret planted as a dynamic config of broker 1: it must not reach any file.
const SECRET: &str = "kb-planted-7f3a9c1e";
const SASL_PASSWORD: &str = "kb-test-acl-51e2d0";

/// A single-node cluster of this test's, stopped and wiped when dropped.
struct OwnBroker {
    home: tempfile::TempDir,
    port: u16,
}

impl OwnBroker {
    fn kafka_local(&self, args: &[&str]) -> Output {
        Command::new(repo().join("scripts/kafka-local"))
            .args(args)
            .env("KAFKA_LOCAL_HOME", self.home.path())
            .env("KAFKA_LOCAL_PORT", self.port.to_string())
            .env("KAFKA_LOCAL_HEAP", "384m")
            .env("KAFKA_LOCAL_SASL_USER", "kafkabench")
            .env("KAFKA_LOCAL_SASL_PASSWORD", SASL_PASSWORD)
            .output()
            .expect("kafka-local runs")
    }

    fn up(port: u16, args: &[&str]) -> OwnBroker {
        let b = OwnBroker {
            home: tempfile::tempdir().expect("a home for the broker"),
            port,
        };
        let out = b.kafka_local(&[&["up"], args].concat());
        assert!(
            out.status.success(),
            "the broker did not start:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        b
    }

    /// Runs one of Kafka's tools (from the broker's own jars) and returns its stdout.
    fn tool(&self, class: &str, args: &[&str]) -> String {
        let out = self.kafka_local(&[&["tool", class], args].concat());
        assert!(
            out.status.success(),
            "{class} {args:?} failed:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// Kafka's ConfigCommand against this broker (IncrementalAlterConfigs, DescribeConfigs).
    fn configs(&self, args: &[&str]) -> String {
        let bootstrap = format!("127.0.0.1:{}", self.port);
        let all = [&["--bootstrap-server", bootstrap.as_str()], args].concat();
        self.tool("org.apache.kafka.tools.ConfigCommand", &all)
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        let _ = self.kafka_local(&["down", "--wipe"]);
    }
}

const SCENARIO: &str = r#"scenario "broker configs" {
  cluster { bootstrap = env("KAFKA_BOOTSTRAP", "127.0.0.1:9092") }
  topic "kb-broker-configs" {
    partitions   = 1
    retention.ms = 1h
  }
  workload { messages = 2000  payload = random(size: 100B) }
}
"#;

fn run(dir: &Path, name: &str, bootstrap: &str) -> (String, String) {
    let file = dir.join("scenario.kbs");
    std::fs::write(&file, SCENARIO).expect("the scenario written");
    let json = dir.join(format!("{name}.json"));
    let out = kafkabench(&[
        "run",
        file.to_str().unwrap(),
        "--quiet",
        "--bootstrap",
        bootstrap,
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = expect_exit(&out, 0);
    (
        stdout,
        std::fs::read_to_string(&json).expect("a result file"),
    )
}

/// The non-default configs of broker 1 as ConfigCommand describes them (`name=value
/// sensitive=… synonyms={SOURCE:name=value, …}`, the synonyms in precedence order): name →
/// (value, source).
fn described_by_kafka(b: &OwnBroker) -> Vec<(String, String, String)> {
    let all = b.configs(&[
        "--entity-type",
        "brokers",
        "--entity-name",
        "1",
        "--describe",
        "--all",
    ]);
    let mut out = Vec::new();
    for line in all.lines().filter(|l| l.starts_with("  ")) {
        let (head, synonyms) = line
            .trim()
            .split_once(" sensitive=")
            .expect("a config line");
        let (name, value) = head.split_once('=').expect("name=value");
        let source = synonyms
            .split_once("synonyms={")
            .and_then(|(_, s)| s.split(':').next())
            .filter(|s| !s.is_empty() && !s.starts_with('}'))
            .unwrap_or("DEFAULT_CONFIG");
        if source != "DEFAULT_CONFIG" {
            out.push((name.to_string(), value.to_string(), source.to_string()));
        }
    }
    out
}

fn broker_configs(file: &Value) -> &Vec<Value> {
    file["environment"]["cluster"]["configs"]["brokers"][0]["configs"]
        .as_array()
        .expect("broker 1's configs in the result")
}

#[test]
fn a_broker_config_changed_between_runs_is_named_by_compare_and_marked_by_history() {
    let b = OwnBroker::up(PORT, &[]);
    let bootstrap = format!("127.0.0.1:{PORT}");
    let broker_1 = [
        "--entity-type",
        "brokers",
        "--entity-name",
        "1",
        "--alter",
        "--add-config",
    ];
    let planted = format!("kb.planted.password={SECRET}");
    b.configs(&[&broker_1[..], &[planted.as_str()]].concat());
    // A quota of the runs' producer (client.id kafkabench), and one of a client that is not
    // theirs, which no result may name.
    for (client, rate) in [("kafkabench", "1073741824"), ("someone-else", "1024")] {
        let q = format!("producer_byte_rate={rate}");
        b.configs(&[
            "--entity-type",
            "clients",
            "--entity-name",
            client,
            "--alter",
            "--add-config",
            &q,
        ]);
    }
    let dir = tempfile::tempdir().unwrap();
    let (out_a, a) = run(dir.path(), "a", &bootstrap);
    b.configs(&[&broker_1[..], &["num.io.threads=16"]].concat());
    let (out_b, b_text) = run(dir.path(), "b", &bootstrap);
    let (fa, fb): (Value, Value) = (
        serde_json::from_str(&a).unwrap(),
        serde_json::from_str(&b_text).unwrap(),
    );

    // What kafkabench recorded is what Kafka's ConfigCommand describes, left-out names aside.
    let kafka = described_by_kafka(&b);
    let left_out = |n: &str| kafkabench::measure::broker_config::left_out(n);
    let expected: BTreeSet<(String, String)> = (kafka.iter())
        .filter(|(n, ..)| !left_out(n))
        .map(|(n, _, s)| (n.clone(), s.clone()))
        .collect();
    let source = |s: &str| match s {
        "static" => "STATIC_BROKER_CONFIG",
        "dynamic_broker" => "DYNAMIC_BROKER_CONFIG",
        "dynamic_default" => "DYNAMIC_DEFAULT_BROKER_CONFIG",
        other => panic!("unexpected source {other}"),
    };
    let recorded: BTreeSet<(String, String)> = (broker_configs(&fb).iter())
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                source(c["source"].as_str().unwrap()).to_string(),
            )
        })
        .collect();
    assert_eq!(recorded, expected, "kafkabench against ConfigCommand");
    assert!(
        kafka.iter().any(|(n, ..)| n == "log.dirs"),
        "a left-out name was there to leave out"
    );
    for c in broker_configs(&fb) {
        let (name, value) = (c["name"].as_str().unwrap(), &c["value"]);
        let theirs = kafka.iter().find(|(n, ..)| n == name).unwrap();
        if c["sensitive"] == true {
            assert!(value.is_null(), "{c}");
        } else {
            assert_eq!(value.as_str(), Some(theirs.1.as_str()), "{name}");
        }
    }
    let io = |f: &Value| {
        broker_configs(f)
            .iter()
            .find(|c| c["name"] == "num.io.threads")
            .cloned()
    };
    assert_eq!(io(&fa), None, "at its default in the first run");
    let io = io(&fb).expect("num.io.threads recorded in the second");
    assert_eq!(
        (io["value"].as_str(), io["source"].as_str()),
        (Some("16"), Some("dynamic_broker"))
    );

    // The quotas that apply to the runs' clients, and no other.
    let quotas = &fb["environment"]["cluster"]["configs"]["quotas"];
    assert_eq!(
        quotas,
        &serde_json::json!([{"entity": {"client-id": "kafkabench"}, "values": {"producer_byte_rate": 1073741824.0}}]),
    );
    // The topic's effective configs: set on it, and inherited (none at the default).
    let topic = &fb["runs"][0]["topic_config"]["effective"]["configs"];
    let retention = topic
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "retention.ms");
    assert_eq!(
        retention.map(|c| (c["value"].clone(), c["source"].clone())),
        Some((3_600_000.to_string().into(), "topic".into()))
    );

    // The planted secret: named, never its value, in any file or output.
    let planted = broker_configs(&fa)
        .iter()
        .find(|c| c["name"] == "kb.planted.password");
    assert_eq!(
        planted,
        Some(
            &serde_json::json!({"name": "kb.planted.password", "source": "dynamic_broker", "sensitive": true})
        )
    );

    let (fa_path, fb_path) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let compare = kafkabench(&[
        "compare",
        fa_path.to_str().unwrap(),
        fb_path.to_str().unwrap(),
    ]);
    let compared = expect_exit(&compare, 0);
    assert!(
        compared.contains("the brokers' configs differ, so a change may be theirs: num.io.threads: default → 16 (dynamic, this broker)"),
        "{compared}"
    );
    let h_path = dir.path().join("history.json");
    let history = kafkabench(&[
        "history",
        "--json",
        h_path.to_str().unwrap(),
        fa_path.to_str().unwrap(),
        fb_path.to_str().unwrap(),
    ]);
    let text_history = expect_exit(&history, 0);
    let h_text = std::fs::read_to_string(&h_path).expect("history's JSON");
    let h: Value = serde_json::from_str(&h_text).expect("history's JSON");
    assert_eq!(
        h["series"][0]["versions"],
        serde_json::json!([{"index": 1, "what": "broker config", "from": "num.io.threads = default", "to": "num.io.threads = 16"}]),
        "{h}"
    );
    assert!(
        text_history.contains(
            "broker config num.io.threads = default → num.io.threads = 16 from result #2"
        ),
        "{text_history}"
    );

    for (what, t) in [
        ("a.json", &a),
        ("b.json", &b_text),
        ("run a", &out_a),
        ("run b", &out_b),
        ("compare", &compared),
        ("history", &text_history),
        ("history.json", &h_text),
    ] {
        assert!(!t.contains(SECRET), "{what} holds the planted secret");
    }
}

#[test]
fn a_cluster_whose_acls_refuse_describe_configs_gets_a_note_not_a_failure() {
    let b = OwnBroker::up(SECURE_PORT, &["--security", "sasl_ssl"]);
    // An authorizer, on a restart: the brokers and the controller talk PLAINTEXT among
    // themselves (ANONYMOUS, a super user); the client authenticates as `kafkabench`.
    let stop = b.kafka_local(&["stop", "1"]);
    assert!(stop.status.success(), "{}", text(&stop.stderr));
    let props = b.home.path().join("node1.properties");
    let mut p = std::fs::read_to_string(&props).expect("node 1's properties");
    p.push_str(
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n\
         super.users=User:ANONYMOUS\n\
         allow.everyone.if.no.acl.found=true\n",
    );
    std::fs::write(&props, p).unwrap();
    let start = b.kafka_local(&["start", "1"]);
    assert!(start.status.success(), "{}", text(&start.stderr));
    // Everything on the cluster and the topics, except describing their configs.
    let internal = format!("127.0.0.1:{}", SECURE_PORT + 2);
    for (kind, op) in [
        ("--allow-principal", "All"),
        ("--deny-principal", "DescribeConfigs"),
    ] {
        b.tool(
            "org.apache.kafka.tools.AclCommand",
            &[
                "--bootstrap-server",
                &internal,
                "--add",
                kind,
                "User:kafkabench",
                "--operation",
                op,
                "--cluster",
                "--topic",
                "*",
            ],
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let ca = b.home.path().join("security/ca.pem");
    let out = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args([
            "run",
            &fixture("security/sasl_ssl.kbs"),
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("KB_SECURE_BOOTSTRAP", format!("127.0.0.1:{SECURE_PORT}"))
        .env("KB_SSL_CA", &ca)
        .env("KB_SASL_PASSWORD", SASL_PASSWORD)
        .env_remove("KB_SASL_MECHANISM")
        .output()
        .expect("kafkabench runs");
    expect_exit(&out, 0);
    let f: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let configs = &f["environment"]["cluster"]["configs"];
    let note = configs["brokers"][0]["note"].as_str().unwrap_or_default();
    assert!(note.contains("CLUSTER_AUTHORIZATION_FAILED"), "{configs}");
    assert!(
        note.starts_with("broker 1's configs not recorded, refused"),
        "{note}"
    );
    assert!(
        configs["brokers"][0]["configs"]
            .as_array()
            .is_some_and(Vec::is_empty),
        "{configs}"
    );
    let quotas = configs["quotas_note"].as_str().unwrap_or_default();
    assert!(quotas.contains("CLUSTER_AUTHORIZATION_FAILED"), "{configs}");
    let topic = &f["runs"][0]["topic_config"]["effective"];
    let topic_note = topic["note"].as_str().unwrap_or_default();
    assert!(topic_note.contains("TOPIC_AUTHORIZATION_FAILED"), "{topic}");
    // Said among the report's notes too, once.
    let said: Vec<&Value> = (f["notes"].as_array().unwrap().iter())
        .filter(|n| n.as_str().is_some_and(|n| n.contains("not recorded")))
        .collect();
    assert_eq!(said.len(), 1, "{}", f["notes"]);
    // The run itself measured as ever.
    assert_eq!(f["runs"][0]["status"], "complete");
    assert!(f["runs"][0]["acked"].as_u64() > Some(0));
}
