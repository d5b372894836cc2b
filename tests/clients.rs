//! `client` and `seed` in the language: lowered per side and per cell, checked against each
//! client's own names (the Java client's tables against its jar, franz-go's table against
//! REFERENCE.md), shown by `plan` with the defaults that differ, refused by `run` while no
//! worker drives them, and the seed that makes a run's records the same again (checked on the
//! broker: two runs of one seed, read back by an independent reader).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::{self, expect_exit, kafkabench, repo, text};
use kafkabench::check::check;
use kafkabench::model::{ClientKind, JAVA_DEFAULT_VERSION};
use kafkabench::plan::{plan, PlanOptions, RunPlan};
use kafkabench::source::Sources;
use kafkabench::syntax::parse;

fn checked(body: &str) -> Result<kafkabench::model::Scenario, String> {
    let text = format!("scenario \"clients\" {{\n{body}\n}}\n");
    let mut sources = Sources::default();
    let file = sources.add("clients.kbs".into(), text);
    let ast = parse(file, sources.get(file).text.as_str()).map_err(|d| format!("{d:?}"))?;
    check(&ast, &sources).map_err(|d| kafkabench::diagnostic::render_text(&d, &sources, false, 100))
}

fn runs(body: &str, run_id: &str) -> Vec<RunPlan> {
    let s = checked(body).unwrap_or_else(|d| panic!("{body}\n{d}"));
    let opts = PlanOptions {
        bootstrap: None,
        scale: 1.0,
        repeat: None,
        run_id: run_id.into(),
    };
    plan(&s, &opts).runs
}

const MATRIX: &str = r#"
  topic "t-{client}" { partitions = 3 }
  matrix { client = [librdkafka, java, franz-go] }
  producer { client = {client}  linger.ms = 20ms  compression.type = lz4 }
  consumer { }
  workload { messages = 1000  key = uniform(100) }
"#;

#[test]
fn a_matrix_over_the_client_lowers_each_side_and_the_reader_stays_librdkafka() {
    let r = runs(MATRIX, "abc123");
    let clients: Vec<ClientKind> = r.iter().map(|r| r.producer_client).collect();
    assert_eq!(
        clients,
        [
            ClientKind::Librdkafka,
            ClientKind::Java,
            ClientKind::FranzGo
        ]
    );
    assert!(r
        .iter()
        .all(|r| r.consumer_client == ClientKind::Librdkafka));
    assert_eq!(r[1].producer_version, JAVA_DEFAULT_VERSION);
    assert_eq!(r[2].producer_version, "v1.22.3");
    // Each client's own defaults of kafkabench: librdkafka's statistics, the Java client's
    // bounded delivery at least linger + request timeout.
    assert_eq!(r[0].producer.get("statistics.interval.ms"), Some("500"));
    assert_eq!(r[1].producer.get("statistics.interval.ms"), None);
    assert_eq!(r[1].producer.get("delivery.timeout.ms"), Some("30020"));
    assert_eq!(r[2].producer.get("delivery.timeout.ms"), Some("30000"));
    assert_eq!(r[1].producer.get("linger.ms"), Some("20"));
}

#[test]
fn a_consumer_follows_only_when_told_and_a_version_is_the_java_clients() {
    let r = runs(
        r#"
  topic "t-{step}" { partitions = 1 }
  consumer { }
  workload { messages = 10 }
  steps {
    base { }
    old_java { producer.client = java(version: "3.9.1")  consumer.client = java(version: "3.9.1") }
  }
"#,
        "abc123",
    );
    assert_eq!(r[0].consumer_client, ClientKind::Librdkafka);
    assert_eq!(r[1].consumer_client, ClientKind::Java);
    assert_eq!(r[1].consumer_version, "3.9.1");
    assert_eq!(r[1].producer_version, "3.9.1");
    // The Java reader reads committed records, as librdkafka's does by default.
    let c = r[1].consumer.as_ref().unwrap();
    assert_eq!(c.get("isolation.level"), Some("read_committed"));
    assert_eq!(c.get("queued.min.messages"), None);
    // A step's override sets it too.
    let r = runs(
        r#"
  topic "t-{step}" { partitions = 1 }
  workload { messages = 10 }
  steps { base { } java { producer.client = java  producer.buffer.memory = 64MiB } }
"#,
        "abc123",
    );
    assert_eq!(r[1].producer_client, ClientKind::Java);
    assert_eq!(r[1].producer.get("buffer.memory"), Some("67108864"));
}

#[test]
fn the_seed_is_the_scenarios_else_the_run_ids_and_the_same_in_every_run() {
    let given = runs(
        "topic \"t\" { }\n workload { messages = 10  seed = 42 }",
        "abc123",
    );
    assert_eq!(given[0].workload.seed, Some(42));
    let a = runs(MATRIX, "abc123");
    let b = runs(MATRIX, "def456");
    let seeds: Vec<Option<u64>> = a.iter().map(|r| r.workload.seed).collect();
    assert!(
        seeds[0].is_some() && seeds.iter().all(|s| *s == seeds[0]),
        "{seeds:?}"
    );
    assert_eq!(runs(MATRIX, "abc123")[0].workload.seed, seeds[0]);
    assert_ne!(b[0].workload.seed, seeds[0]);
    // The placeholder names no run, so no seed.
    assert_eq!(runs(MATRIX, "<run-id>")[0].workload.seed, None);
}

#[test]
fn a_plan_across_clients_names_each_and_marks_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("clients.kbs");
    std::fs::write(&f, format!("scenario \"clients\" {{{MATRIX}}}\n")).unwrap();
    let out = kafkabench(&["plan", f.to_str().unwrap(), "--bootstrap", "127.0.0.1:9092"]);
    let plan_text = expect_exit(&out, 0);
    insta::assert_snapshot!("plan_across_clients", plan_text);
    // JSON: every client's defaults once, the differences per run.
    let out = kafkabench(&["plan", f.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&expect_exit(&out, 0)).unwrap();
    let defaults = v["client_defaults"].as_array().unwrap();
    let used: Vec<(String, String)> = defaults
        .iter()
        .map(|d| (d["client"].to_string(), d["side"].to_string()))
        .collect();
    assert_eq!(used.len(), 4, "{used:?}");
    let java = &v["runs"][1];
    assert_eq!(java["producer_client"], "java");
    let batch = java["producer_differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["setting"] == "batch size")
        .expect("batch size differs");
    assert_eq!(batch["value"], "16384");
    assert_eq!(batch["set"], false);
    // The same keys land elsewhere: a note, with the way to align them.
    assert_eq!(v["notes"][0]["code"], "kb::key-placement");
    assert!(v["notes"][0]["help"]
        .as_str()
        .unwrap()
        .contains("murmur2_random"));
}

#[test]
fn a_plan_on_librdkafka_alone_reads_as_before_unless_defaults_are_asked() {
    let f = common::fixture("plan/estimates.kbs");
    let plain = expect_exit(&kafkabench(&["plan", &f]), 0);
    assert!(!plain.contains("librdkafka 2"), "{plain}");
    assert!(!plain.contains('≠'), "{plain}");
    let all = expect_exit(&kafkabench(&["plan", &f, "--defaults"]), 0);
    assert!(all.contains("  clients   producer librdkafka"), "{all}");
    assert!(
        all.contains("≠ batch size: batch.size=1000000 (default); java batch.size=16384"),
        "{all}"
    );
    assert!(all.contains("defaults of librdkafka"), "{all}");
    assert!(
        all.contains("  queue.buffering.max.messages=100000\n"),
        "{all}"
    );
}

#[test]
fn aligned_partitioners_need_no_note() {
    let s = checked(
        r#"
  topic "t-{step}" { partitions = 3 }
  workload { messages = 10  key = uniform(10) }
  steps {
    librdkafka { producer.client = librdkafka  producer.partitioner = murmur2_random }
    java { producer.client = java }
  }
"#,
    )
    .unwrap();
    assert!(s.notes.is_empty(), "{:?}", s.notes);
}

#[test]
fn the_key_placement_note_reads_as_snapshotted() {
    let mut sources = Sources::default();
    let s = kafkabench::check::load(
        &repo().join("tests/fixtures/notes/key_placement.kbs"),
        &mut sources,
    )
    .expect("valid");
    let notes = kafkabench::diagnostic::Diagnostics { items: s.notes };
    let shown = kafkabench::diagnostic::render_text(&notes, &sources, false, 100);
    // The path as the other snapshots show it: relative to the repository.
    let shown = shown.replace(&format!("{}/", repo().display()), "");
    insta::assert_snapshot!("key_placement_note", shown);
}

#[test]
fn check_says_a_note_and_stays_valid() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("clients.kbs");
    std::fs::write(&f, format!("scenario \"clients\" {{{MATRIX}}}\n")).unwrap();
    let out = kafkabench(&["check", f.to_str().unwrap()]);
    let stdout = expect_exit(&out, 0);
    assert!(stdout.contains("ok (3 runs"), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("kb::key-placement"), "{stderr}");
    assert!(stderr.contains("1 note"), "{stderr}");
    let out = kafkabench(&["check", f.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&expect_exit(&out, 0)).unwrap();
    let file = &v["files"][0];
    assert_eq!(file["ok"], true);
    assert_eq!(file["diagnostics"][0]["severity"], "note");
}

#[test]
fn run_drives_the_java_client_rather_than_refusing_it() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("java.kbs");
    std::fs::write(
        &f,
        "scenario \"java\" { topic \"t\" { } producer { client = java } workload { messages = 1 } }\n",
    )
    .unwrap();
    // An unreachable broker: the run starts (a worker drives the Java client) and fails on
    // the connection, not on the client.
    let out = kafkabench(&[
        "run",
        f.to_str().unwrap(),
        "--bootstrap",
        "127.0.0.1:1",
        "--quiet",
    ]);
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("no worker for it"), "{stderr}");
}

/// The Java client's config tables, as the jar defines them now: the test runs
/// clients/names/DumpNames.java against the kafka-clients jar `scripts/kafka-local` resolved.
#[test]
fn the_java_name_tables_are_the_jars() {
    let lib = repo().join(format!(".cache/kafka-{JAVA_DEFAULT_VERSION}/lib"));
    let jar = lib.join(format!("kafka-clients-{JAVA_DEFAULT_VERSION}.jar"));
    assert!(
        jar.exists(),
        "{} is missing: `scripts/kafka-local up` resolves it",
        jar.display()
    );
    let slf4j = std::fs::read_dir(&lib)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("slf4j-api-"))
        })
        .expect("slf4j-api beside kafka-clients");
    let classes = tempfile::tempdir().unwrap();
    let cp = format!("{}:{}", jar.display(), slf4j.display());
    let javac = Command::new("javac")
        .args(["-d", classes.path().to_str().unwrap(), "-cp", &cp])
        .arg(repo().join("clients/names/DumpNames.java"))
        .output()
        .expect("javac runs (Java 17: scripts/setup installs it)");
    assert!(javac.status.success(), "{}", text(&javac.stderr));
    for side in ["producer", "consumer"] {
        let out = Command::new("java")
            .args([
                "-cp",
                &format!("{cp}:{}", classes.path().display()),
                "DumpNames",
                side,
            ])
            .output()
            .expect("java runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let file =
            std::fs::read_to_string(repo().join(format!("clients/names/java-{side}.tsv"))).unwrap();
        let rows: Vec<&str> = file
            .lines()
            .filter(|l| !l.starts_with('#'))
            .skip(1)
            .collect();
        let jar_rows: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
        assert_eq!(
            rows, jar_rows,
            "clients/names/java-{side}.tsv differs from the jar: run clients/names/regenerate"
        );
    }
}

/// REFERENCE.md's franz-go table says what clients/franz-go/properties.tsv holds, row for row.
#[test]
fn the_franz_go_table_is_documented_as_it_is() {
    let tsv = std::fs::read_to_string(repo().join("clients/franz-go/properties.tsv")).unwrap();
    let reference = std::fs::read_to_string(repo().join("grammar/REFERENCE.md")).unwrap();
    let documented: BTreeMap<String, Vec<String>> = reference
        .lines()
        .map(str::trim)
        .filter(|l| {
            l.starts_with("| `")
                && ["both", "producer", "consumer"]
                    .iter()
                    .any(|s| l.contains(&format!("` | {s} | `")))
        })
        .filter_map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().replace(" \\| ", "|"))
                .collect();
            // The property and the option are code; the other cells as the table writes them.
            let mut cells = cells;
            for i in [0, 2] {
                cells[i] = cells[i].trim_matches('`').to_string();
            }
            (cells.len() == 6).then(|| (cells[0].clone(), cells))
        })
        .collect();
    let mut rows = 0;
    for line in tsv.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let cells: Vec<String> = line.split('\t').map(str::to_string).collect();
        let doc = documented
            .get(&cells[0])
            .unwrap_or_else(|| panic!("`{}` is not in REFERENCE.md's franz-go table", cells[0]));
        assert_eq!(doc, &cells, "REFERENCE.md's row of `{}`", cells[0]);
        rows += 1;
    }
    assert_eq!(
        rows,
        documented.len(),
        "REFERENCE.md lists a property the table does not"
    );
}

/// A record's key and value.
type Record = (Option<Vec<u8>>, Vec<u8>);

/// The stamps' (producer, sequence) → key and value of every record of a topic.
fn records(topic: &str) -> BTreeMap<(u32, u64), Record> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::{Headers, Message};
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", common::bootstrap())
        .set("group.id", common::unique("kb-seed-reader"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    c.subscribe(&[topic]).unwrap();
    let mut out = BTreeMap::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while out.len() < 500 && std::time::Instant::now() < deadline {
        let Some(m) = c.poll(Duration::from_millis(200)) else {
            continue;
        };
        let m = m.unwrap();
        let stamp = m
            .headers()
            .and_then(|h| h.iter().find(|h| h.key == "kb").and_then(|h| h.value))
            .expect("a stamp")
            .to_vec();
        let producer = u32::from_le_bytes(stamp[8..12].try_into().unwrap());
        let seq = u64::from_le_bytes(stamp[12..20].try_into().unwrap());
        out.insert(
            (producer, seq),
            (
                m.key().map(<[u8]>::to_vec),
                m.payload().unwrap_or_default().to_vec(),
            ),
        );
    }
    out
}

fn seeded_run(dir: &Path, seed: &str) -> (u64, String) {
    let name = common::unique("seed");
    let text = format!(
        "scenario \"seed\" {{\n  topic \"{name}\" {{ partitions = 2 }}\n  consumer {{ }}\n  workload {{ messages = 500  producers = 2  key = uniform(50)  payload = random(size: 64B, compressibility: 50%)  tombstones = 10%{seed} }}\n}}\n"
    );
    let (_, v) = common::run_json_with(dir, &name, &text, &["--keep-topics"], 0);
    let seed = v["runs"][0]["seed"]
        .as_u64()
        .expect("the seed in the result file");
    (seed, v["runs"][0]["topic"].as_str().unwrap().to_string())
}

/// The same seed sends the same records: two runs read back by an independent reader hold
/// the same keys and values for every (producer, sequence); another seed does not.
#[test]
fn a_seed_sends_the_same_records_again() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let (s1, t1) = seeded_run(dir.path(), "  seed = 7");
    let (s2, t2) = seeded_run(dir.path(), "  seed = 7");
    let (s3, t3) = seeded_run(dir.path(), "");
    assert_eq!((s1, s2), (7, 7));
    assert_ne!(s3, 7);
    let (a, b, c) = (records(&t1), records(&t2), records(&t3));
    for t in [&t1, &t2, &t3] {
        common::reader::delete_topic(&common::bootstrap(), t);
    }
    assert_eq!(a.len(), 500);
    assert_eq!(a, b, "two runs of seed 7 sent different records");
    assert_ne!(a, c, "another seed sent the same records");
    // Tombstones are drawn from the seed too: the same ones, and some.
    let tombstones = a.values().filter(|(_, v)| v.is_empty()).count();
    assert!(tombstones > 10 && tombstones < 100, "{tombstones}");
}
