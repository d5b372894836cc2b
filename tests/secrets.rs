//! Secrets never appear in any output: a table of command × format × written file, each row
//! planting a secret (a literal in the file and a value from `env()`) and grepping everything
//! the command printed or wrote. A new output or feature adds its row to `rows!` below. The
//! commands that read result files (`report`, `merge`, `compare`) and a sharded run with its
//! collector are chained on one run's files in `every_output_of_a_sharded_run_...` below.

use crate::common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// A secret written in the scenario file.
const LITERAL: &str = "hunter2-literal-7f3a";
/// A secret that arrives through `env("KB_TEST_SECRET")`; it is never in the file.
const FROM_ENV: &str = "hunter2-env-9c1b";

/// One command on one scenario. `@LIT@` in the scenario is replaced by [`LITERAL`]; in `args`,
/// `@FILE@`, `@JSON@`, `@JUNIT@`, `@HTML@` are paths in a fresh directory and `@BOOTSTRAP@`
/// the broker.
struct Row {
    scenario: &'static str,
    args: &'static [&'static str],
    exit: i32,
    /// A word the output must still contain, so a row cannot pass by printing nothing.
    shows: &'static str,
}

/// The files a row may ask for, by their placeholder.
const WRITTEN: [(&str, &str); 3] = [
    ("@JSON@", "out.json"),
    ("@JUNIT@", "out.xml"),
    ("@HTML@", "out.html"),
];

fn run_row(row: &Row) {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let file = path("secrets.kbs");
    std::fs::write(&file, row.scenario.replace("@LIT@", LITERAL)).unwrap();
    if row.args.contains(&"run") {
        common::require_broker();
    }
    let args: Vec<String> = row
        .args
        .iter()
        .map(|a| {
            let a = WRITTEN
                .iter()
                .fold(a.to_string(), |a, (tag, name)| a.replace(tag, &path(name)));
            a.replace("@FILE@", &file)
                .replace("@BOOTSTRAP@", &common::bootstrap())
        })
        .collect();
    let out = command(dir.path(), &args)
        .output()
        .expect("the kafkabench binary runs");
    let mut outputs = printed(&args.join(" "), &out);
    for (_, written) in WRITTEN {
        if let Ok(t) = std::fs::read_to_string(dir.path().join(written)) {
            outputs.push((written.to_string(), t));
        }
    }
    let all: String = outputs.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(out.status.code(), Some(row.exit), "{all}");
    assert!(
        all.contains(row.shows),
        "expected `{}` in:\n{all}",
        row.shows
    );
    assert_no_secret(&outputs);
    // A run that reached its report wrote the files it was asked for: they were grepped.
    if row.exit != 2 {
        for (tag, written) in WRITTEN {
            if row.args.contains(&tag) {
                assert!(
                    dir.path().join(written).exists(),
                    "{written} was not written"
                );
            }
        }
    }
}

/// kafkabench with `args` in `dir`, the env() secret set, colours off.
fn command(dir: &Path, args: &[String]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kafkabench"));
    c.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("KB_TEST_SECRET", FROM_ENV);
    c
}

/// What a command printed, named after it.
fn printed(what: &str, out: &Output) -> Vec<(String, String)> {
    vec![
        (format!("stdout of `{what}`"), common::text(&out.stdout)),
        (format!("stderr of `{what}`"), common::text(&out.stderr)),
    ]
}

/// Fails naming the output and the piece of a secret found in it.
fn assert_no_secret(outputs: &[(String, String)]) {
    for (name, t) in outputs {
        for secret in [LITERAL, FROM_ENV] {
            // Any fragment would do; the middle one catches a secret cut by line wrapping too.
            for piece in [secret, &secret[..10], &secret[8..]] {
                assert!(!t.contains(piece), "`{piece}` appears in {name}:\n{t}");
            }
        }
    }
}

/// One `#[test]` per row, so every leak is reported, not only the first.
macro_rules! rows {
    ($($name:ident: $row:expr,)*) => {
        $(#[test]
        fn $name() {
            run_row(&$row);
        })*
    };
}

/// Client settings that carry secrets but leave a PLAINTEXT connection working, so a run
/// reaches its report: librdkafka ignores SASL settings unless the protocol asks for SASL.
const HARMLESS_SECRETS: &str = r#"scenario "secrets" {
  cluster {
    bootstrap = "127.0.0.1:9092"
    sasl.username = "@LIT@"
    sasl.password = env("KB_TEST_SECRET")
    ssl.key.password = "@LIT@"
  }
  producer { sasl.oauthbearer.config = env("KB_TEST_SECRET") }
  topic "kb-secrets" { partitions = 1 }
  workload { messages = 20  payload = random(size: 100B) }
  expect { failed == 0 }
}
"#;

rows! {
    plan_text_masks_every_secret: Row {
        scenario: HARMLESS_SECRETS,
        args: &["plan", "@FILE@"],
        exit: 0,
        shows: "sasl.username=****",
    },
    plan_json_masks_every_secret: Row {
        scenario: HARMLESS_SECRETS,
        args: &["plan", "--format", "json", "@FILE@"],
        exit: 0,
        shows: "\"sasl.password\"",
    },
    plan_yaml_masks_every_secret: Row {
        scenario: HARMLESS_SECRETS,
        args: &["plan", "--format", "yaml", "@FILE@"],
        exit: 0,
        shows: "sasl.password",
    },
    run_masks_every_secret_on_screen_and_in_its_files: Row {
        scenario: HARMLESS_SECRETS,
        args: &[
            "run", "@FILE@", "--bootstrap", "@BOOTSTRAP@", "--json", "@JSON@", "--junit", "@JUNIT@",
            "--html", "@HTML@",
        ],
        exit: 0,
        // Not --quiet: stderr is a pipe, so it gets the plain progress lines.
        shows: "progress: run 1 of 1",
    },
    check_text_masks_a_secret_beside_a_typo_on_its_line: Row {
        scenario: r#"scenario "secrets" {
  cluster { sasl.password = "@LIT@"  bootstrp = "127.0.0.1:9092" }
  topic "kb-secrets" { partitions = 1 }
  workload { messages = 20 }
}
"#,
        args: &["check", "@FILE@"],
        exit: 2,
        shows: "bootstrp",
    },
    check_text_masks_a_secret_on_a_line_shown_for_context: Row {
        scenario: r#"scenario "secrets" {
  producer { linger.ms = 5ms  bach.size = 1KiB }
  cluster { ssl.key.password = "@LIT@" }
  topic "kb-secrets" { partitions = 1 }
  workload { messages = 20 }
}
"#,
        args: &["check", "@FILE@"],
        exit: 2,
        shows: "bach.size",
    },
    check_text_masks_a_registry_urls_password_on_a_line_shown_for_context: Row {
        scenario: r#"scenario "secrets" {
  cluster { schema_registry = "http://bob:@LIT@@127.0.0.1:8081" }
  workload { messages = 20  bogus = 1 }
  topic "kb-secrets" { partitions = 1 }
}
"#,
        args: &["check", "@FILE@"],
        exit: 2,
        shows: "bogus",
    },
    check_text_masks_a_secret_refused_by_librdkafka: Row {
        scenario: r#"scenario "secrets" {
  cluster { ssl_key = "@LIT@" }
  producer { ssl_key = env("KB_TEST_SECRET") }
  topic "kb-secrets" { partitions = 1 }
  workload { messages = 20 }
}
"#,
        args: &["check", "@FILE@"],
        exit: 2,
        shows: "ssl_key",
    },
    check_json_masks_a_secret_refused_by_librdkafka: Row {
        scenario: r#"scenario "secrets" {
  cluster { ssl_key = "@LIT@" }
  producer { ssl_key = env("KB_TEST_SECRET") }
  topic "kb-secrets" { partitions = 1 }
  workload { messages = 20 }
}
"#,
        args: &["check", "--format", "json", "@FILE@"],
        exit: 2,
        shows: "kb::property",
    },
    check_text_masks_a_jaas_config_pasted_from_java: Row {
        scenario: r#"scenario "secrets" {
  cluster { sasl.jaas.config = "PlainLoginModule required username=u password=@LIT@;" }
  topic "kb-secrets" { partitions = 1 }
  workload { messages = 20 }
}
"#,
        args: &["check", "@FILE@"],
        exit: 2,
        shows: "sasl.jaas.config",
    },
    plan_refuses_a_secret_that_varies_with_the_matrix: Row {
        scenario: r#"scenario "secrets" {
  matrix { pw = ["@LIT@", "another-one"] }
  cluster { sasl.password = {pw} }
  topic "kb-secrets" { partitions = 1 }
  workload { messages = 20 }
}
"#,
        args: &["plan", "@FILE@"],
        exit: 2,
        shows: "cannot vary",
    },
    check_text_masks_a_secret_beside_a_syntax_error: Row {
        scenario: r#"scenario "secrets" {
  cluster { sasl.password = "@LIT@"  bootstrap == "127.0.0.1:9092" }
  topic "kb-secrets" { partitions = 1 }
  workload { messages = 20 }
}
"#,
        args: &["check", "@FILE@"],
        exit: 2,
        shows: "kb::syntax",
    },
    run_masks_a_secret_refused_by_librdkafka: Row {
        scenario: r#"scenario "secrets" {
  producer { ssl_key = env("KB_TEST_SECRET") }
  topic "kb-secrets" { partitions = 1 }
  workload { messages = 20 }
}
"#,
        args: &["run", "@FILE@", "--bootstrap", "@BOOTSTRAP@", "--json", "@JSON@", "--quiet"],
        exit: 2,
        shows: "ssl_key",
    },
}

/// Secrets in every client block and two partitions, so two shards can split it.
const SHARDED_SECRETS: &str = r#"scenario "secrets" {
  cluster {
    bootstrap = "127.0.0.1:9092"
    sasl.username = "@LIT@"
    sasl.password = env("KB_TEST_SECRET")
    ssl.key.password = "@LIT@"
  }
  producer { sasl.oauthbearer.config = env("KB_TEST_SECRET") }
  consumer { sasl.oauthbearer.config = "@LIT@" }
  topic "kb-secrets" { partitions = 2 }
  workload { messages = 200  rate = 200/s  payload = random(size: 100B) }
  expect { failed == 0 }
}
"#;

fn spawn(dir: &Path, args: &[String]) -> Child {
    command(dir, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kafkabench starts")
}

/// One sharded run (two shards with their progress lines, a collector), then every command
/// that reads its result files: `merge`, `report` (text and HTML), `compare`. Everything each
/// printed or wrote is grepped, so the files are made once and every reader is checked on them.
#[test]
fn every_output_of_a_sharded_run_and_of_the_commands_reading_its_files_masks_every_secret() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("secrets.kbs");
    std::fs::write(&file, SHARDED_SECRETS.replace("@LIT@", LITERAL)).unwrap();
    let at = |name: &str| d.join(name).display().to_string();
    let args = |list: &[&str]| -> Vec<String> {
        list.iter()
            .map(|a| match *a {
                "@FILE@" => at("secrets.kbs"),
                "@BOOTSTRAP@" => common::bootstrap(),
                a if a.contains('.') && !a.contains('/') => at(a),
                a => a.to_string(),
            })
            .collect()
    };
    let id = format!("sec{}", kafkabench::plan::new_run_id());
    let mut steps: Vec<Vec<String>> = vec![args(&[
        "collect",
        "@FILE@",
        "--bootstrap",
        "@BOOTSTRAP@",
        "--run-id",
        &id,
        "--shards",
        "2",
        "--deadline",
        "2m",
        "--json",
        "collected.json",
        "--junit",
        "collected.xml",
        "--html",
        "collected.html",
    ])];
    for i in 0..2 {
        let (json, html) = (format!("shard-{i}.json"), format!("shard-{i}.html"));
        let shard = format!("{i}/2");
        steps.push(args(&[
            "run",
            "@FILE@",
            "--bootstrap",
            "@BOOTSTRAP@",
            "--shard",
            &shard,
            "--run-id",
            &id,
            "--json",
            &json,
            "--html",
            &html,
        ]));
    }
    let children: Vec<Child> = steps.iter().map(|a| spawn(d, a)).collect();
    let mut outputs = Vec::new();
    for (a, child) in steps.iter().zip(children) {
        let (code, stdout, stderr, _) = common::wait_bounded(child, Duration::from_secs(150));
        assert_eq!(code, 0, "`{}`:\n{stdout}\n{stderr}", a.join(" "));
        outputs.push((format!("stdout of `{}`", a.join(" ")), stdout));
        outputs.push((format!("stderr of `{}`", a.join(" ")), stderr));
    }
    let readers: [(&[&str], i32); 6] = [
        // The literal secrets are masked in the carried scenario, so it does not check again:
        // refused, showing it masked.
        (&["merge", "shard-0.json", "shard-1.json"], 2),
        (
            &[
                "merge",
                "shard-0.json",
                "shard-1.json",
                "--scenario",
                "@FILE@",
                "--json",
                "merged.json",
                "--junit",
                "merged.xml",
                "--html",
                "merged.html",
            ],
            0,
        ),
        (&["report", "collected.json"], 0),
        (&["report", "merged.json", "--html", "report.html"], 0),
        (&["compare", "shard-0.json", "collected.json"], 0),
        (&["compare", "merged.json", "collected.json"], 0),
    ];
    for (list, exit) in readers {
        let a = args(list);
        let out = command(d, &a).output().expect("kafkabench runs");
        let shown = printed(&a.join(" "), &out);
        assert_eq!(out.status.code(), Some(exit), "{shown:?}");
        outputs.extend(shown);
    }
    for entry in std::fs::read_dir(d).unwrap() {
        let path = entry.unwrap().path();
        if path != file {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            outputs.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    // Nothing passes by being empty: each kind of output is there, and shows the masked names.
    let find = |name: &str| {
        outputs
            .iter()
            .find(|(n, _)| n == name || n.starts_with(name))
            .map(|(_, t)| t.as_str())
            .unwrap_or_else(|| panic!("no {name}"))
    };
    for written in [
        "collected.json",
        "collected.html",
        "shard-0.json",
        "shard-1.html",
        "merged.json",
        "merged.html",
        "report.html",
    ] {
        let t = find(written);
        assert!(
            t.contains("sasl.password") && t.contains("****"),
            "{written}:\n{t}"
        );
    }
    assert!(
        find("stderr of `run").contains("progress: "),
        "the shards' progress lines"
    );
    assert!(
        find("stdout of `compare").contains("secrets"),
        "{outputs:?}"
    );
    assert!(
        find("stdout of `report").contains("scenario secrets"),
        "{outputs:?}"
    );
    assert_no_secret(&outputs);
}

/// kafkabench masks what librdkafka redacts: its list is copied from `rdkafka_conf.c`, so the
/// vendored source is read to catch a librdkafka upgrade that marks another property.
#[test]
fn the_mask_covers_every_property_librdkafka_marks_sensitive() {
    let Some(conf) = vendored_rdkafka_conf() else {
        eprintln!("rdkafka-sys sources not found under CARGO_HOME; skipped");
        return;
    };
    let text = std::fs::read_to_string(conf).unwrap();
    let mut marked = Vec::new();
    // A table entry reads `{_RK_GLOBAL | _RK_SENSITIVE, "name", ...`: the flag, a comma, the name.
    for (i, flag) in text.match_indices("_RK_SENSITIVE") {
        let rest = text[i + flag.len()..].trim_start();
        let Some(rest) = rest.strip_prefix(',') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix('"') else {
            continue;
        };
        if let Some(close) = rest.find('"') {
            marked.push(rest[..close].to_string());
        }
    }
    assert!(marked.len() >= 10, "{marked:?}");
    for name in &marked {
        assert!(
            kafkabench::model::is_secret(name),
            "librdkafka redacts `{name}`; add it to model::LIBRDKAFKA_SENSITIVE"
        );
    }
}

fn vendored_rdkafka_conf() -> Option<std::path::PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(Into::into)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let lock = std::fs::read_to_string(common::repo().join("Cargo.lock")).ok()?;
    let at = lock.find("name = \"rdkafka-sys\"")?;
    let version = lock[at..].lines().nth(1)?.trim();
    let version = version.strip_prefix("version = \"")?.trim_end_matches('"');
    for registry in std::fs::read_dir(home.join("registry/src")).ok()? {
        let p = registry.ok()?.path().join(format!(
            "rdkafka-sys-{version}/librdkafka/src/rdkafka_conf.c"
        ));
        if p.exists() {
            return Some(p);
        }
    }
    None
}

#[test]
fn names_that_say_secret_are_masked_and_paths_are_not() {
    use kafkabench::model::is_secret;
    for key in [
        "sasl.password",
        "ssl.truststore.password",
        "sasl.oauthbearer.client.secret",
        "sasl.jaas.config",
        "ssl.keystore.key",
        "ssl.key.pem",
        "sasl.username",
        "ssl.key.location",
    ] {
        assert!(is_secret(key), "{key}");
    }
    for key in [
        "ssl.certificate.location",
        "ssl.ca.location",
        "linger.ms",
        "sasl.mechanism",
        "ssl.keystore.location",
        "sasl.oauthbearer.token.endpoint.url",
        // A step's key pattern (`workload.key = uniform(100)`) is shown as written.
        "workload.key",
    ] {
        assert!(!is_secret(key), "{key}");
    }
}
