//! Schema-shaped payloads checked by code kafkabench does not share: records generated with
//! the library's schema API and JSON lines encoded with it are read back by
//! tests/schema/decode.py (fastavro, protobuf classes compiled by grpc_tools.protoc, jsonschema)
//! from the virtualenv scripts/setup makes; then a short run against the broker, its records
//! read with rdkafka and decoded the same way.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use kafkabench::random::Rng;
use kafkabench::schema::{registry, Format, Schema};

use crate::common::{self, repo};

const N: u64 = 2000;

fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures/schema").join(name)
}

fn python() -> PathBuf {
    let p = repo().join(".cache/pyenv/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run scripts/setup (it makes the decoder's virtualenv)",
        p.display()
    );
    p
}

struct Case {
    format: Format,
    arg: &'static str,
    schema: &'static str,
    message: Option<&'static str>,
    lines: &'static str,
}

const CASES: [Case; 3] = [
    Case {
        format: Format::Avro,
        arg: "avro",
        schema: "order.avsc",
        message: None,
        lines: "orders.avro.jsonl",
    },
    Case {
        format: Format::Protobuf,
        arg: "protobuf",
        schema: "order.proto",
        message: Some("shop.Order"),
        lines: "orders.proto.jsonl",
    },
    Case {
        format: Format::JsonSchema,
        arg: "json",
        schema: "order.schema.json",
        message: None,
        lines: "orders.json.jsonl",
    },
];

fn load(c: &Case) -> Schema {
    Schema::load(c.format, &fixture(c.schema), c.message)
        .unwrap_or_else(|e| panic!("{}: {e}", c.schema))
}

/// Writes records length-prefixed, as decode.py reads them.
fn write_records(path: &Path, records: &[Vec<u8>]) {
    let mut out = Vec::new();
    for r in records {
        out.extend_from_slice(&(r.len() as u32).to_be_bytes());
        out.extend_from_slice(r);
    }
    std::fs::write(path, out).unwrap();
}

/// Runs the decoder; Ok(its summary) or Err(what it reported).
fn decode(
    c: &Case,
    records: &Path,
    lines: Option<&Path>,
    prefix: bool,
) -> Result<serde_json::Value, String> {
    decode_with(c.arg, &fixture(c.schema), c.message, records, lines, prefix)
}

fn decode_with(
    arg: &str,
    schema: &Path,
    message: Option<&str>,
    records: &Path,
    lines: Option<&Path>,
    prefix: bool,
) -> Result<serde_json::Value, String> {
    let mut cmd = Command::new(python());
    cmd.arg(repo().join("tests/schema/decode.py"))
        .arg(arg)
        .arg(schema)
        .arg(records);
    if let Some(m) = message {
        cmd.args(["--message", m]);
    }
    if let Some(l) = lines {
        cmd.arg("--lines").arg(l);
    }
    if prefix {
        cmd.arg("--prefix");
    }
    let out = cmd.output().expect("the decoder runs");
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).expect("a JSON summary"))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn generated(s: &Schema, n: u64, prefix: &[u8]) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(42);
    (0..n)
        .map(|seq| {
            let mut out = prefix.to_vec();
            s.generate(&mut rng, seq, &mut out);
            out
        })
        .collect()
}

#[test]
fn generated_records_decode_with_independent_libraries_and_honour_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let mut sizes = Vec::new();
    for c in &CASES {
        let s = load(c);
        let records = generated(&s, N, &[]);
        let path = dir.path().join(format!("{}.bin", c.arg));
        write_records(&path, &records);
        let summary = decode(c, &path, None, false).unwrap_or_else(|e| panic!("{}: {e}", c.arg));
        assert_eq!(summary["records"], N, "{summary}");
        if c.format == Format::Avro {
            let seen = summary["enum_values"]["status"].as_array().unwrap().len();
            assert_eq!(
                seen, 5,
                "every declared status turns up, nothing else: {summary}"
            );
        }
        let avg = summary["bytes"].as_u64().unwrap() as f64 / N as f64;
        sizes.push(format!("{} {avg:.1} B", c.arg));
        // With a prefix: magic byte, id, (protobuf) message indexes; decoded past it.
        let framed = generated(&s, 50, &s.wire_prefix(77));
        write_records(&path, &framed);
        let summary = decode(c, &path, None, true).unwrap_or_else(|e| panic!("{}: {e}", c.arg));
        assert_eq!(summary["schema_ids"], serde_json::json!([77]));
    }
    println!("bytes per generated order: {}", sizes.join(", "));
}

/// Schemas shaped like public projects' (tests/fixtures/schema/realistic/cases.txt: a
/// Debezium envelope, Confluent's example, every Avro corner, proto3 with well-known types
/// and local imports, proto2 with groups, JSON Schema with references and choices): their
/// generated records, with the wire prefix, decode with the independent libraries.
#[test]
fn realistic_schemas_generate_records_the_independent_decoders_accept() {
    let dir = tempfile::tempdir().unwrap();
    let cases = fixture("realistic/cases.txt");
    let mut failed = Vec::new();
    let mut n = 0;
    for line in std::fs::read_to_string(&cases).unwrap().lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (format, arg) = match words.first() {
            Some(&"avro") => (Format::Avro, "avro"),
            Some(&"protobuf") => (Format::Protobuf, "protobuf"),
            Some(&"json") => (Format::JsonSchema, "json"),
            _ => continue,
        };
        n += 1;
        let schema = fixture("realistic").join(words[1]);
        let message = words.get(2).copied();
        let s = match Schema::load(format, &schema, message) {
            Ok(s) => s,
            Err(e) => {
                failed.push(format!("{line}: {e}"));
                continue;
            }
        };
        let path = dir.path().join(format!("{n}.bin"));
        write_records(&path, &generated(&s, 500, &s.wire_prefix(12)));
        if let Err(e) = decode_with(arg, &schema, message, &path, None, true) {
            failed.push(format!("{line}: {e}"));
        }
    }
    assert!(n >= 8, "{} lists {n} cases", cases.display());
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn json_lines_encoded_with_each_schema_decode_to_the_same_documents() {
    let dir = tempfile::tempdir().unwrap();
    for c in &CASES {
        let s = load(c);
        let text = std::fs::read_to_string(fixture(c.lines)).unwrap();
        let mut records = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let mut out = Vec::new();
            s.encode_json(&v, &mut out)
                .unwrap_or_else(|e| panic!("{}: {e}: {line}", c.lines));
            records.push(out);
        }
        let path = dir.path().join(format!("{}.bin", c.arg));
        write_records(&path, &records);
        let summary = decode(c, &path, Some(&fixture(c.lines)), false)
            .unwrap_or_else(|e| panic!("{}: {e}", c.lines));
        assert_eq!(summary["records"], records.len(), "{summary}");
        let total: usize = records.iter().map(Vec::len).sum();
        let json: usize = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l)
                    .unwrap()
                    .to_string()
                    .len()
            })
            .sum();
        println!(
            "{}: {} lines, {total} B encoded ({json} B as compact JSON)",
            c.lines,
            records.len()
        );
    }
}

#[test]
fn the_decoder_reports_a_truncated_record_and_one_of_another_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.bin");
    for c in &CASES {
        let s = load(c);
        let mut records = generated(&s, 20, &[]);
        // Cut in the middle of the last record.
        let last = records.last_mut().unwrap();
        last.truncate(last.len() / 2);
        write_records(&path, &records);
        let e = decode(c, &path, None, false).expect_err("a truncated record is refused");
        assert!(e.starts_with("record 19:"), "{}: {e}", c.arg);
    }
    // A record of another schema under the order's.
    let other = |fmt, file: &str, text: &str, msg| {
        let p = dir.path().join(file);
        std::fs::write(&p, text).unwrap();
        Schema::load(fmt, &p, msg).unwrap()
    };
    let wrong = [
        other(
            Format::Avro,
            "k.avsc",
            r#"{"type":"record","name":"Key","fields":[{"name":"id","type":"string"},{"name":"n","type":"double"}]}"#,
            None,
        ),
        other(
            Format::Protobuf,
            "k.proto",
            "syntax = \"proto3\"; message Key { string id = 1; double n = 99; }",
            Some("Key"),
        ),
        other(
            Format::JsonSchema,
            "k.json",
            r#"{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}}"#,
            None,
        ),
    ];
    for (c, w) in CASES.iter().zip(&wrong) {
        write_records(&path, &generated(w, 5, &[]));
        let e = decode(c, &path, None, false).expect_err("a record of another schema is refused");
        assert!(e.starts_with("record 0:"), "{}: {e}", c.arg);
    }
}

#[test]
fn a_registry_returns_the_schema_for_the_id_in_the_prefix() {
    let url = std::env::var("KAFKABENCH_TEST_REGISTRY").unwrap_or_else(|_| {
        panic!(
            "no schema registry: start one with `scripts/registry-local up` and set \
             KAFKABENCH_TEST_REGISTRY to the URL it prints (scripts/test does both)"
        )
    });
    let dir = tempfile::tempdir().unwrap();
    for c in &CASES {
        let s = load(c);
        let subject = format!("kafkabench-test-{}-value", c.arg);
        let id = registry::register(&url, &subject, &s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            registry::register(&url, &subject, &s).unwrap(),
            id,
            "registering again is idempotent"
        );
        let path = dir.path().join("r.bin");
        write_records(&path, &generated(&s, 10, &s.wire_prefix(id)));
        let summary = decode(c, &path, None, true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(summary["schema_ids"], serde_json::json!([id]));
        let text = registry::schema_by_id(&url, id).unwrap();
        if c.format == Format::Protobuf {
            assert!(text.contains("message Order"), "{text}");
        } else {
            let got: serde_json::Value = serde_json::from_str(&text).unwrap();
            let want: serde_json::Value = serde_json::from_str(s.text()).unwrap();
            assert_eq!(got, want);
        }
    }
}

/// A `.proto` importing local files (one beside it, one in a subfolder that imports the
/// first): each is registered under its import name and named as a reference, as
/// Confluent's serializers do, so a registry that resolves imports accepts the file.
#[test]
fn a_registry_gets_a_protos_local_imports_as_references() {
    let Ok(url) = std::env::var("KAFKABENCH_TEST_REGISTRY") else {
        panic!("no schema registry: set KAFKABENCH_TEST_REGISTRY (scripts/test does)")
    };
    let schema = fixture("realistic/shop.proto");
    let s = Schema::load(Format::Protobuf, &schema, Some("com.acme.shop.v1.Order")).unwrap();
    let id = registry::register(&url, "kafkabench-test-imports-value", &s)
        .unwrap_or_else(|e| panic!("{e}"));
    let get = |path: &str| -> serde_json::Value {
        let out = Command::new("curl")
            .args(["-sf", &format!("{url}{path}")])
            .output()
            .expect("curl runs");
        assert!(out.status.success(), "GET {path}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let refs = |subject: &str| {
        get(&format!("/subjects/{subject}/versions/latest"))["references"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|r| {
                format!(
                    "{} {}",
                    r["name"].as_str().unwrap(),
                    r["subject"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        refs("kafkabench-test-imports-value"),
        [
            "common.proto common.proto",
            "sub/money.proto sub/money.proto"
        ]
    );
    assert_eq!(refs("sub%2Fmoney.proto"), ["common.proto common.proto"]);
    assert!(registry::schema_by_id(&url, id)
        .unwrap()
        .contains("message Order"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.bin");
    write_records(&path, &generated(&s, 50, &s.wire_prefix(id)));
    let summary = decode_with(
        "protobuf",
        &schema,
        Some("com.acme.shop.v1.Order"),
        &path,
        None,
        true,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(summary["schema_ids"], serde_json::json!([id]));
}

/// A registry URL with credentials that `check` refuses: the message masks the password and
/// the line holding it is not shown. (Another diagnostic whose snippet takes in that line
/// still shows it: the renderer does not mask source lines.)
#[test]
fn a_refused_registry_url_never_shows_its_password() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("order.avsc"), dir.path().join("order.avsc")).unwrap();
    for url in [
        "http://bob:hunter2@registry:80x",
        "bob:hunter2@registry:8081",
        "http://bob:hunter2/x@h:1a",
    ] {
        let file = dir.path().join("pw.kbs");
        std::fs::write(
            &file,
            format!("scenario \"pw\" {{\n  cluster {{ schema_registry = \"{url}\" }}\n  topic \"pw\" {{ partitions = 1 }}\n  workload {{\n    messages = 10\n    payload = avro(\"order.avsc\")\n  }}\n}}\n"),
        )
        .unwrap();
        for format in ["text", "json"] {
            let out = common::kafkabench(&["check", "--format", format, file.to_str().unwrap()]);
            let shown = format!("{}{}", common::text(&out.stdout), common::text(&out.stderr));
            assert_eq!(out.status.code(), Some(2), "{shown}");
            assert!(shown.contains("bob:***@"), "{shown}");
            assert!(!shown.contains("hunter2"), "{url} ({format}): {shown}");
        }
    }
}

/// A stand-in registry for the run: answers every registration with id 9 and says which
/// subjects it was asked for (the real registry's test comes with the lead's registry).
fn fake_registry() -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/apis/ccompat/v7", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for s in listener.incoming().take(8) {
            let Ok(mut s) = s else { return };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = vec![0u8; 65536];
            let mut n = 0;
            // The head, then the body its Content-Length announces.
            while let Ok(k) = s.read(&mut buf[n..]) {
                n += k;
                let text = String::from_utf8_lossy(&buf[..n]).to_string();
                let done = text.find("\r\n\r\n").is_some_and(|end| {
                    let len = text
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    n >= end + 4 + len
                });
                if k == 0 || done {
                    break;
                }
            }
            let head = String::from_utf8_lossy(&buf[..n])
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            let _ = tx.send(head);
            let body = r#"{"id":9}"#;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, rx)
}

#[test]
fn a_run_with_an_avro_payload_writes_records_another_reader_decodes() {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::Message;
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("order.avsc"), dir.path().join("order.avsc")).unwrap();
    let (registry_url, subjects) = fake_registry();
    let scenario = format!(
        "scenario \"schema-e2e\" {{\n  cluster {{ bootstrap = \"{}\"  schema_registry = \"{registry_url}\" }}\n  topic \"schema-e2e\" {{ partitions = 1 }}\n  workload {{\n    messages = 500\n    rate = 1000/s\n    payload = avro(\"order.avsc\")\n  }}\n}}\n",
        common::bootstrap()
    );
    let file = dir.path().join("avro.kbs");
    std::fs::write(&file, scenario).unwrap();
    let json = dir.path().join("avro.json");
    let out = common::kafkabench(&[
        "run",
        "--keep-topics",
        "--json",
        json.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let topic = result["runs"][0]["topics"][0]["topic"]
        .as_str()
        .or_else(|| result["runs"][0]["topic"].as_str())
        .unwrap_or_else(|| panic!("no topic in {}", result["runs"][0]))
        .to_string();
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", common::bootstrap())
        .set("group.id", "kafkabench-schema-test")
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    c.subscribe(&[&topic]).unwrap();
    let mut records = Vec::new();
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while records.len() < 500 && std::time::Instant::now() < until {
        if let Some(Ok(m)) = c.poll(Duration::from_millis(200)) {
            records.push(m.payload().unwrap_or_default().to_vec());
        }
    }
    drop(c);
    let admin: rdkafka::admin::AdminClient<_> = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", common::bootstrap())
        .create()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _ = rt.block_on(admin.delete_topics(&[&topic], &rdkafka::admin::AdminOptions::new()));
    assert_eq!(records.len(), 500, "records read back from {topic}");
    let path = dir.path().join("e2e.bin");
    write_records(&path, &records);
    let summary = decode(&CASES[0], &path, None, true).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(summary["records"], 500);
    assert_eq!(
        summary["schema_ids"],
        serde_json::json!([9]),
        "every record carries the registered id"
    );
    let asked = subjects.recv_timeout(Duration::from_secs(1)).unwrap();
    assert_eq!(
        asked,
        format!("POST /apis/ccompat/v7/subjects/{topic}-value/versions HTTP/1.1")
    );
}

#[test]
fn generating_a_record_costs_about_a_microsecond_or_less() {
    // Measured, not asserted tightly (a shared machine): 100,000 records into one buffer,
    // cleared each time, as the send loop does.
    let mut figures = Vec::new();
    for c in &CASES {
        let s = load(c);
        let mut rng = Rng::new(7);
        let mut out = Vec::with_capacity(4096);
        let started = std::time::Instant::now();
        let n = 100_000u64;
        for seq in 0..n {
            out.clear();
            s.generate(&mut rng, seq, &mut out);
        }
        let ns = started.elapsed().as_nanos() as f64 / n as f64;
        assert!(ns < 50_000.0, "{}: {ns:.0} ns per record", c.arg);
        figures.push(format!("{} {ns:.0} ns", c.arg));
    }
    println!("generate() per record: {}", figures.join(", "));
}
