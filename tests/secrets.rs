//! Secrets never appear in any output: a table of command × format × written file, each row
//! planting a secret (a literal in the file and a value from `env()`) and grepping everything
//! the command printed or wrote. A new output or feature adds its row to `rows!` below.

mod common;

use std::path::Path;
use std::process::Command;

/// A secret written in the scenario file.
const LITERAL: &str = "hunter2-literal-7f3a";
/// A secret that arrives through `env("KB_TEST_SECRET")`; it is never in the file.
const FROM_ENV: &str = "hunter2-env-9c1b";

/// One command on one scenario. `@LIT@` in the scenario is replaced by [`LITERAL`]; in `args`,
/// `@FILE@`, `@JSON@`, `@JUNIT@` are paths in a fresh directory and `@BOOTSTRAP@` the broker.
struct Row {
    scenario: &'static str,
    args: &'static [&'static str],
    exit: i32,
    /// A word the output must still contain, so a row cannot pass by printing nothing.
    shows: &'static str,
}

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
            a.replace("@FILE@", &file)
                .replace("@JSON@", &path("out.json"))
                .replace("@JUNIT@", &path("out.xml"))
                .replace("@BOOTSTRAP@", &common::bootstrap())
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(&args)
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("KB_TEST_SECRET", FROM_ENV)
        .output()
        .expect("the kafkabench binary runs");
    let mut outputs = vec![
        ("stdout".to_string(), common::text(&out.stdout)),
        ("stderr".to_string(), common::text(&out.stderr)),
    ];
    for written in ["out.json", "out.xml"] {
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
    for (name, t) in &outputs {
        for secret in [LITERAL, FROM_ENV] {
            // Any fragment would do; the middle one catches a secret cut by line wrapping too.
            for piece in [secret, &secret[..10], &secret[8..]] {
                assert!(
                    !t.contains(piece),
                    "`{piece}` appears in {name} of `{}`:\n{t}",
                    args.join(" ")
                );
            }
        }
    }
    // A run that reached its report wrote the files it was asked for: they were grepped.
    if row.exit != 2 {
        for (tag, written) in [("@JSON@", "out.json"), ("@JUNIT@", "out.xml")] {
            if row.args.contains(&tag) {
                assert!(
                    dir.path().join(written).exists(),
                    "{written} was not written"
                );
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
            "--quiet",
        ],
        exit: 0,
        shows: "sasl.password",
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
    ] {
        assert!(!is_secret(key), "{key}");
    }
}
