//! grammar/REFERENCE.md against `check`: every statement of the reference that says something
//! is refused (`refuse`, `refused`, `refusal`, `is a diagnostic`, `are diagnostics`, `may not`,
//! `cannot be`) has a row here, found by a quote of it. A row of `check`'s own gives a scenario
//! the sentence says is refused, with the diagnostic's code, and its contrast the sentence says
//! is fine: the test fails when `check` accepts the first or refuses the second. A row that is
//! not `check`'s (a broker's refusal, a run-time one) says whose it is. A new refusal sentence
//! without a row fails the test, naming its line; so does a row whose quote the reference no
//! longer has (issue 49: the reference said a sharded run refuses a capacity search and a
//! repeated plan, a year after both had worked).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::repo;

mod brokers;
mod clients;
mod workload;

/// Words that make a sentence a refusal, matched case-insensitively.
const TRIGGERS: &[&str] = &[
    "refus",
    "is a diagnostic",
    "are diagnostics",
    "may not",
    "cannot be",
];

enum Case {
    /// `check` refuses `refused` with a diagnostic of `code` and accepts `accepted`; both are
    /// a scenario's entries, inside `scenario "refusal" { }`.
    Check {
        refused: &'static str,
        code: &'static str,
        accepted: &'static str,
    },
    /// Not `check`'s refusal: whose it is.
    Elsewhere(&'static str),
}

use Case::{Check, Elsewhere};

/// Every row: this file's, the Clients section's and the workload's.
fn statements() -> Vec<&'static Statement> {
    STATEMENTS
        .iter()
        .chain(clients::STATEMENTS)
        .chain(workload::STATEMENTS)
        .chain(brokers::STATEMENTS)
        .collect()
}

/// A statement of the reference (a quote of it, whitespace as one space) and its cases.
struct Statement {
    quote: &'static str,
    cases: &'static [Case],
}

const T: &str = "topic \"t\" { partitions = 3 }";

/// Files the cases' scenarios read, written beside them.
const FILES: &[(&str, &[u8])] = &[
    ("bad.bin", b"\x00\x00\x00\x03abc\x00\x00\x00\x09xy"),
    ("good.bin", b"\x00\x00\x00\x03abc\x00\x00\x00\x02xy"),
    (
        "o.avsc",
        br#"{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"qty","type":"int"}]}"#,
    ),
    (
        "bad.jsonl",
        b"{\"id\": 1, \"qty\": 2}\n{\"id\": 2, \"qty\": \"two\"}\n",
    ),
    (
        "good.jsonl",
        b"{\"id\": 1, \"qty\": 2}\n{\"id\": 2, \"qty\": 3}\n",
    ),
    (
        "bad.schema.json",
        br#"{"type":"object","properties":{"ip":{"type":"string","format":"ipv4"}}}"#,
    ),
    (
        "good.schema.json",
        br#"{"type":"object","properties":{"id":{"type":"string","format":"uuid"}}}"#,
    ),
    ("part.kbs", b"workload { messages = 10 }\n"),
];

const STATEMENTS: &[Statement] = &[
    Statement {
        quote: "are diagnostics whose help is the fix",
        cases: &[Check {
            refused: "@T workload { messages = 2m }",
            code: "kb::type",
            accepted: "@T workload { messages = 2M }",
        }],
    },
    Statement {
        quote: "`g` is refused (`G`)",
        cases: &[Check {
            refused: "@T workload { messages = 1g }",
            code: "kb::unit",
            accepted: "@T workload { messages = 1G }",
        }],
    },
    Statement {
        quote: "a duration where a size is due is a diagnostic",
        cases: &[Check {
            refused: "@T workload { messages = 10  payload = random(size: 5ms) }",
            code: "kb::type",
            accepted: "@T workload { messages = 10  payload = random(size: 5KiB) }",
        }],
    },
    Statement {
        quote: "A byte rate (`50MB/s`) is refused",
        cases: &[Check {
            refused: "@T workload { messages = 10  rate = 50MB/s }",
            code: "kb::value",
            accepted: "@T workload { messages = 10  rate = 50k/s }",
        }],
    },
    Statement {
        quote: "the Java serializers' name, is refused",
        cases: &[Check {
            refused: "cluster { schema.registry.url = \"http://localhost:8081\" }\n@T workload { messages = 10 }",
            code: "kb::unknown-key",
            accepted: "cluster { schema_registry = \"http://localhost:8081\" }\n@T workload { messages = 10 }",
        }],
    },
    Statement {
        quote: "An unreachable registry or a refusal fails the run before it sends",
        cases: &[Elsewhere("the schema registry's, at run time, when the run registers its schema")],
    },
    Statement {
        quote: "(a refused connection)",
        cases: &[Elsewhere("a broker's, at run time: evidence for `cluster { lost_after }`")],
    },
    Statement {
        quote: "a librdkafka refusal does not quote the value",
        cases: &[Elsewhere("what a refusal shows of a secret, not a refusal (tests/secrets.rs)")],
    },
    Statement {
        quote: "(Java's `sasl.jaas.config` is refused, masked)",
        cases: &[Check {
            refused: "@T producer { sasl.jaas.config = \"x\" }\nworkload { messages = 10 }",
            code: "kb::java-property",
            accepted: "@T producer { sasl.username = \"x\" }\nworkload { messages = 10 }",
        }],
    },
    Statement {
        quote: "A secret cannot be a matrix variable",
        cases: &[
            Check {
                refused: "matrix { pw = [\"a\", \"b\"] }\ntopic \"t-{pw}\" { }\nproducer { sasl.password = {pw} }\nworkload { messages = 10 }",
                code: "kb::value",
                accepted: "matrix { id = [\"a\", \"b\"] }\ntopic \"t-{id}\" { }\nproducer { sasl.password = env(\"KB_PW\", \"x\") }\nworkload { messages = 10 }",
            },
            // Filled into a string, it varies all the same.
            Check {
                refused: "matrix { pw = [\"a\", \"b\"] }\ntopic \"t-{pw}\" { }\nproducer { sasl.password = \"p-{pw}\" }\nworkload { messages = 10 }",
                code: "kb::value",
                accepted: "matrix { id = [\"a\", \"b\"] }\ntopic \"t-{id}\" { }\nproducer { client.id = \"c-{id}\" }\nworkload { messages = 10 }",
            },
        ],
    },
    Statement {
        quote: "a character Kafka refuses is a diagnostic where it is written",
        cases: &[Check {
            refused: "topic \"a/b\" { }\nworkload { messages = 10 }",
            code: "kb::value",
            accepted: "topic \"a-b\" { }\nworkload { messages = 10 }",
        }],
    },
    Statement {
        quote: "but is a diagnostic for an `existing` topic",
        cases: &[Check {
            refused: "matrix { who = [\"cy/dee\", \"x\"] }\ntopic \"by-{who}\" { existing = true }\nworkload { messages = 10 }",
            code: "kb::value",
            accepted: "matrix { who = [\"cy/dee\", \"x\"] }\ntopic \"by-{who}\" { }\nworkload { messages = 10 }",
        }],
    },
    Statement {
        quote: "Two runs may not create the same topic",
        cases: &[Check {
            refused: "matrix { l = [0ms, 5ms] }\ntopic \"t\" { }\nproducer { linger.ms = {l} }\nworkload { messages = 10 }",
            code: "kb::duplicate",
            accepted: "matrix { l = [0ms, 5ms] }\ntopic \"t-{l}\" { }\nproducer { linger.ms = {l} }\nworkload { messages = 10 }",
        }],
    },
    Statement {
        quote: "is taken for a misspelling and refused",
        cases: &[Check {
            refused: "topic \"t\" { retention.msx = 1000 }\nworkload { messages = 10 }",
            code: "kb::unknown-key",
            accepted: "topic \"t\" { configs { retention.msx = 1000 } }\nworkload { messages = 10 }",
        }],
    },
    Statement {
        quote: "A refusal fails the run named for it before any run starts, with the config the broker refuses",
        cases: &[Elsewhere("the broker's answer to a validate-only CreateTopics, before any run (tests/topics.rs)")],
    },
    Statement {
        quote: "A refusal of the topic itself",
        cases: &[Elsewhere("the broker's, as the topic config's above")],
    },
    Statement {
        quote: "a refusal is reported at the property with librdkafka's words",
        cases: &[Check {
            refused: "@T producer { acks = sometimes }\nworkload { messages = 10 }",
            code: "kb::property",
            accepted: "@T producer { acks = all }\nworkload { messages = 10 }",
        }],
    },
    Statement {
        quote: "a record that runs past the end of the file is a diagnostic",
        cases: &[Check {
            refused: "@T workload { messages = 10  payload = file(\"bad.bin\", format: length_prefixed) }",
            code: "kb::payload-file",
            accepted: "@T workload { messages = 10  payload = file(\"good.bin\", format: length_prefixed) }",
        }],
    },
    Statement {
        quote: "A line that does not fit is a diagnostic",
        cases: &[Check {
            refused: "@T workload { messages = 10  payload = avro(\"o.avsc\", lines: \"bad.jsonl\") }",
            code: "kb::payload-file",
            accepted: "@T workload { messages = 10  payload = avro(\"o.avsc\", lines: \"good.jsonl\") }",
        }],
    },
    Statement {
        quote: "are refused by `check` with the reason",
        cases: &[Check {
            refused: "@T workload { messages = 10  payload = json_schema(\"bad.schema.json\") }",
            code: "kb::payload-file",
            accepted: "@T workload { messages = 10  payload = json_schema(\"good.schema.json\") }",
        }],
    },
    Statement {
        quote: "`check` refuses the rest, and a `delete.retention.ms` as long as `within`",
        cases: &[
            Check {
                refused: "topic \"t\" { partitions = 3  cleanup.policy = compact }\nworkload { messages = 10  compaction = verify }",
                code: "kb::value",
                accepted: "topic \"t\" { partitions = 3  cleanup.policy = compact }\nworkload { messages = 10  key = uniform(100)  compaction = verify }",
            },
            Check {
                refused: "topic \"t\" { partitions = 3  cleanup.policy = compact  delete.retention.ms = 2m }\nworkload { messages = 10  key = uniform(100)  tombstones = 5%  compaction = verify(within: 1m) }",
                code: "kb::value",
                accepted: "topic \"t\" { partitions = 3  cleanup.policy = compact  delete.retention.ms = 1s }\nworkload { messages = 10  key = uniform(100)  tombstones = 5%  compaction = verify(within: 1m) }",
            },
        ],
    },
    Statement {
        quote: "`messages = 0` without a backlog is a diagnostic",
        cases: &[Check {
            refused: "@T consumer { }\nworkload { messages = 0 }",
            code: "kb::value",
            accepted: "@T consumer { }\nworkload { messages = 0  backlog = 1k }",
        }],
    },
    Statement {
        quote: "so `existing` there is a diagnostic",
        cases: &[Check {
            refused: "topic \"t\" { }\nconsumer { }\nworkload { messages = 10  backlog = existing }",
            code: "kb::value",
            accepted: "topic \"t\" { existing = true }\nconsumer { }\nworkload { messages = 10  backlog = existing }",
        }],
    },
    Statement {
        quote: "librdkafka refuses the classic protocol's",
        cases: &[Check {
            refused: "@T consumer { group.protocol = consumer  session.timeout.ms = 10000 }\nworkload { messages = 10  consumers = 2 }",
            code: "kb::property",
            accepted: "@T consumer { group.protocol = classic  session.timeout.ms = 10000 }\nworkload { messages = 10  consumers = 2 }",
        }],
    },
    Statement {
        quote: "each is a diagnostic otherwise",
        cases: &[
            Check {
                refused: "@T workload { messages = 10  in_flight = 1  in_flight_until = consumed }",
                code: "kb::missing",
                accepted: "@T consumer { }\nworkload { messages = 10  in_flight = 1  in_flight_until = consumed }",
            },
            Check {
                refused: "@T consumer { }\nworkload { messages = 10  in_flight_until = consumed }",
                code: "kb::missing",
                accepted: "@T consumer { }\nworkload { messages = 10  in_flight = 1  in_flight_until = consumed }",
            },
        ],
    },
    Statement {
        quote: "so `check` refuses, at the property, what librdkafka would refuse",
        cases: &[Check {
            refused: "@T producer { enable.idempotence = false }\nworkload { messages = 10  transaction = 5 }",
            code: "kb::value",
            accepted: "@T producer { enable.idempotence = true }\nworkload { messages = 10  transaction = 5 }",
        }],
    },
    Statement {
        quote: "are diagnostics with a share group",
        cases: &[Check {
            refused: "@T share { }\nconsumer { }\nworkload { messages = 10 }",
            code: "kb::duplicate",
            accepted: "@T share { }\nworkload { messages = 10 }",
        }],
    },
    Statement {
        quote: "(one refused because the lock had expired is `refused`, not counted)",
        cases: &[Elsewhere("the broker's answer to a share acknowledgement, at run time, and the share figure named for it")],
    },
    Statement {
        quote: "is a diagnostic whose help writes the `matrix` for it",
        cases: &[Check {
            refused: "@T producer { linger.ms = [0ms, 5ms] }\nworkload { messages = 10 }",
            code: "kb::type",
            accepted: "@T producer { linger.ms = 5ms }\nworkload { messages = 10 }",
        }],
    },
    Statement {
        quote: "`capacity` cannot be in an SLO",
        cases: &[Check {
            refused: "@T capacity { slo { capacity > 1k/s } }\nworkload { }",
            code: "kb::value",
            accepted: "@T capacity { slo { ack.p99 < 10ms } }\nworkload { }",
        }],
    },
    Statement {
        quote: "`workload` may not set `rate`",
        cases: &[Check {
            refused: "@T capacity { slo { ack.p99 < 10ms } }\nworkload { rate = 1k/s }",
            code: "kb::value",
            accepted: "@T capacity { slo { ack.p99 < 10ms } }\nworkload { }",
        }],
    },
    Statement {
        quote: "Refused on an `existing` topic",
        cases: &[Check {
            refused: "topic \"t\" { existing = true }\nconsumer { }\nworkload { duration = 10s  rate = 1k/s }\nfaults { at 2s delete records of partition 0 before 5 }",
            code: "kb::value",
            accepted: "topic \"t\" { }\nconsumer { }\nworkload { duration = 10s  rate = 1k/s }\nfaults { at 2s delete records of partition 0 before 5 }",
        }],
    },
    Statement {
        quote: "an unknown id is refused then",
        cases: &[Elsewhere("which brokers exist is known only at run time")],
    },
    Statement {
        quote: "and are refused on others",
        cases: &[Elsewhere("said before anything runs, once the cluster is known (tests/fault_timeline.rs)")],
    },
    Statement {
        quote: "or the same consumer may not overlap",
        cases: &[Check {
            refused: "@T consumer { }\nworkload { duration = 10s  rate = 1k/s  consumers = 2 }\nfaults {\n  at 2s stop consumer 1 for 3s\n  at 3s stop consumer 1 for 3s\n}",
            code: "kb::value",
            accepted: "@T consumer { }\nworkload { duration = 10s  rate = 1k/s  consumers = 2 }\nfaults {\n  at 2s stop consumer 1 for 3s\n  at 6s stop consumer 1 for 3s\n}",
        }],
    },
    Statement {
        quote: "a low end above the high end is a diagnostic",
        cases: &[Check {
            refused: "@T workload { messages = 10 }\nexpect { ack.p99 in 10ms..1ms }",
            code: "kb::value",
            accepted: "@T workload { messages = 10 }\nexpect { ack.p99 in 1ms..10ms }",
        }],
    },
    Statement {
        quote: "(`ack.p99 < 10x` is a diagnostic)",
        cases: &[Check {
            refused: "@T workload { messages = 10 }\nexpect { ack.p99 < 10x }",
            code: "kb::type",
            accepted: "@T workload { messages = 10 }\nexpect { ack.p99 < 10ms }",
        }],
    },
    Statement {
        quote: "Naming a value no run has is a diagnostic",
        cases: &[Check {
            refused: "matrix { codec = [none, lz4] }\ntopic \"t-{codec}\" { }\nproducer { compression.type = {codec} }\nworkload { messages = 10 }\nexpect { ack.p99[codec=zstd] < 1s }",
            code: "kb::cell",
            accepted: "matrix { codec = [none, lz4] }\ntopic \"t-{codec}\" { }\nproducer { compression.type = {codec} }\nworkload { messages = 10 }\nexpect { ack.p99[codec=lz4] < 1s }",
        }],
    },
    Statement {
        quote: "An address that cannot be bound is an error before anything runs",
        cases: &[Elsewhere("`run --metrics` binds its address when it starts")],
    },
    Statement {
        quote: "(an included device or FIFO is refused",
        cases: &[Check {
            refused: "@T include \"/dev/null\"\nworkload { messages = 10 }",
            code: "kb::include",
            accepted: "@T include \"part.kbs\"",
        }],
    },
];

/// The reference's paragraphs (a list item, a table row, a heading and a paragraph each one;
/// code blocks left out), whitespace as one space, with the line each starts on.
fn paragraphs(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut code = false;
    let flush = |cur: &mut Vec<&str>, start: usize, out: &mut Vec<(usize, String)>| {
        if !cur.is_empty() {
            out.push((start, cur.join(" ")));
            cur.clear();
        }
    };
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.starts_with("```") {
            code = !code;
            flush(&mut cur, start, &mut out);
            continue;
        }
        if code {
            continue;
        }
        let item = l.starts_with("- ")
            || l.starts_with('|')
            || l.starts_with('#')
            || l.split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok());
        if l.is_empty() || item {
            flush(&mut cur, start, &mut out);
        }
        if !l.is_empty() {
            if cur.is_empty() {
                start = i + 1;
            }
            cur.push(l);
        }
    }
    flush(&mut cur, start, &mut out);
    out.into_iter()
        .map(|(n, p)| (n, p.split_whitespace().collect::<Vec<_>>().join(" ")))
        .collect()
}

/// Every refusal the reference states has a row, and every row's quote is in the reference.
fn rows_cover_the_reference(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let all = statements();
    let mut found = vec![false; all.len()];
    for (line, p) in paragraphs(text) {
        let lower = p.to_lowercase();
        let mut covered: Vec<(usize, usize)> = Vec::new();
        for (k, s) in all.iter().enumerate() {
            for (at, _) in p.match_indices(s.quote) {
                covered.push((at, at + s.quote.len()));
                found[k] = true;
            }
        }
        for t in TRIGGERS {
            for (at, _) in lower.match_indices(t) {
                if !covered.iter().any(|(a, b)| *a <= at && at + t.len() <= *b) {
                    let (mut from, mut to) = (at.saturating_sub(60), (at + 60).min(p.len()));
                    while !p.is_char_boundary(from) {
                        from -= 1;
                    }
                    while !p.is_char_boundary(to) {
                        to += 1;
                    }
                    problems.push(format!(
                        "grammar/REFERENCE.md:{line} states a refusal with no row here: …{}…",
                        &p[from..to]
                    ));
                }
            }
        }
    }
    for (s, f) in all.iter().zip(found) {
        if !f {
            problems.push(format!(
                "the row quoting `{}` is not in grammar/REFERENCE.md any more: change the row with the sentence",
                s.quote
            ));
        }
    }
    problems
}

fn scenario(entries: &str) -> String {
    format!(
        "scenario \"refusal\" {{\n{}\n}}\n",
        entries.replace("@T ", &format!("{T}\n"))
    )
}

/// Each file's diagnostics' codes, by file name, from one `check --format json` of them all.
fn check_all(dir: &Path, files: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut args = vec!["check", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(&args)
        .current_dir(dir)
        .output()
        .expect("the kafkabench binary runs");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check --format json: {e}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    v["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            let codes = f["diagnostics"]
                .as_array()
                .map(|d| {
                    d.iter()
                        .map(|x| x["code"].as_str().unwrap_or("").to_string())
                        .collect()
                })
                .unwrap_or_default();
            (f["file"].as_str().unwrap_or("").to_string(), codes)
        })
        .collect()
}

#[test]
fn every_refusal_the_reference_states_is_checks_and_its_contrast_is_accepted() {
    let text = std::fs::read_to_string(repo().join("grammar/REFERENCE.md")).unwrap();
    let mut problems = rows_cover_the_reference(&text);
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in FILES {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    // (file, the statement's quote, the code it must show, or None: accepted)
    let mut expected: Vec<(String, &str, Option<&str>)> = Vec::new();
    for (k, s) in statements().into_iter().enumerate() {
        for (c, case) in s.cases.iter().enumerate() {
            let Check {
                refused,
                code,
                accepted,
            } = case
            else {
                continue;
            };
            for (side, text, code) in [
                ("refused", refused, Some(*code)),
                ("accepted", accepted, None),
            ] {
                let name = format!("s{k}_{c}_{side}.kbs");
                std::fs::write(dir.path().join(&name), scenario(text)).unwrap();
                expected.push((name, s.quote, code));
            }
        }
    }
    let files: Vec<String> = expected.iter().map(|e| e.0.clone()).collect();
    let said = check_all(dir.path(), &files);
    for (file, quote, code) in &expected {
        let codes = said
            .get(file)
            .unwrap_or_else(|| panic!("check said nothing of {file}: {said:?}"));
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        match code {
            Some(code) if !codes.iter().any(|c| c == code) => problems.push(format!(
                "REFERENCE.md says `{quote}`, but check gave {codes:?}, not {code}, for:\n{text}"
            )),
            None if !codes.is_empty() => problems.push(format!(
                "REFERENCE.md's `{quote}` allows this, but check refused it with {codes:?}:\n{text}"
            )),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    // The rows that are not check's say whose refusal it is.
    assert!(statements()
        .into_iter()
        .flat_map(|s| s.cases)
        .all(|c| !matches!(c, Elsewhere(w) if w.is_empty())));
}

/// The coverage rule itself: a refusal sentence without a row is found, with its line.
#[test]
fn a_refusal_sentence_without_a_row_fails_naming_its_line() {
    let text = "# kafkabench\n\nA topic named `x` is refused by the broker.\n\n```\nrefused in code\n```\n";
    let problems = rows_cover_the_reference(text);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("grammar/REFERENCE.md:3 states a refusal with no row here")),
        "{problems:?}"
    );
    assert!(
        !problems.iter().any(|p| p.contains("in code")),
        "{problems:?}"
    );
    // Every row's quote missing from this text is named too.
    assert!(problems
        .iter()
        .any(|p| p.contains("is not in grammar/REFERENCE.md any more")));
}
