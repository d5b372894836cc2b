//! The binary as a user runs it: check and plan, exit codes, bad files.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, fixture, kafkabench, text};

#[test]
fn every_shipped_scenario_checks_clean() {
    let mut files: Vec<String> = std::fs::read_dir(common::repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "kbs"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut args = vec!["check"];
    args.extend(files.iter().map(|s| s.as_str()));
    let out = kafkabench(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).matches(": ok").count(), files.len());
}

#[test]
fn five_mistakes_exit_2_with_five_problems() {
    let out = kafkabench(&["check", &fixture("invalid/five_mistakes.kbs")]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("5 problems found"), "{err}");
    assert!(
        err.contains("five_mistakes.kbs:8:25"),
        "file, line and column: {err}"
    );
}

#[test]
fn json_diagnostics_are_the_same_data() {
    let out = kafkabench(&[
        "check",
        "--format",
        "json",
        &fixture("invalid/five_mistakes.kbs"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let d = &v["files"][0]["diagnostics"];
    assert_eq!(d.as_array().unwrap().len(), 5);
    assert_eq!(d[0]["code"], "kb::variable");
    assert_eq!(d[0]["line"], 8);
    assert_eq!(d[0]["help"], "did you mean `linger`?");
}

#[test]
fn plan_lists_the_nine_promo_cells_with_settings() {
    let out = kafkabench(&["plan", "scenarios/promo_friday.kbs"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("9 runs"), "{s}");
    for l in ["0ms", "5ms", "50ms"] {
        for c in ["none", "lz4", "zstd"] {
            assert!(
                s.contains(&format!("linger={l} codec={c}")),
                "missing cell {l}/{c}:\n{s}"
            );
        }
    }
    assert!(
        s.contains("linger.ms=50 compression.type=zstd batch.size=1048576"),
        "{s}"
    );
    let y = kafkabench(&["plan", "--format", "yaml", "scenarios/promo_friday.kbs"]);
    assert_eq!(y.status.code(), Some(0));
    assert!(text(&y.stdout).contains("scenario: promo_friday"));
}

#[test]
fn scale_shrinks_counts_not_rates() {
    let out = kafkabench(&["plan", "--scale", "0.01", "scenarios/promo_friday.kbs"]);
    assert!(
        text(&out.stdout).contains("1000 messages"),
        "{}",
        text(&out.stdout)
    );
}

fn quick_failure(args: &[&str], needle: &str) {
    let t = Instant::now();
    let out = kafkabench(args);
    // Fast: refused at the first bad byte (~0.1 s even for 10 MB); a parse that went on to read
    // it all, or worse, would take far longer than this margin for a busy machine.
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = text(&out.stderr);
    assert!(err.contains(needle), "{args:?}: {err}");
}

#[test]
fn bad_files_fail_fast_and_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.kbs");
    std::fs::write(&empty, "").unwrap();
    let binary = dir.path().join("bin.kbs");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x80]).unwrap();
    let garbage = dir.path().join("garbage.kbs");
    let mut rng = kafkabench::random::Rng::new(1);
    let junk: String = (0..10_000_000)
        .map(|_| (b' ' + (rng.next_u64() % 94) as u8) as char)
        .collect();
    std::fs::write(&garbage, junk).unwrap();

    quick_failure(&["check", "tests/fixtures/nope.kbs"], "no such file");
    quick_failure(&["check", empty.to_str().unwrap()], "expected");
    quick_failure(&["check", binary.to_str().unwrap()], "not UTF-8");
    quick_failure(&["check", garbage.to_str().unwrap()], "unexpected");
}

#[test]
fn help_documents_exit_codes() {
    let out = kafkabench(&["--help"]);
    let s = text(&out.stdout);
    assert!(s.contains("Exit codes") && s.contains("130"), "{s}");
    let run = text(&kafkabench(&["run", "--help"]).stdout);
    assert!(
        run.contains("--scale") && run.contains("--json") && run.contains("--junit"),
        "{run}"
    );
}

/// Runs the binary in `dir` and kills it after `limit`: a hang fails the test instead of
/// hanging the suite. Returns None when it had to be killed.
fn run_bounded(dir: &Path, args: &[&str], limit: Duration) -> Option<std::process::Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kafkabench binary runs");
    let t = Instant::now();
    while t.elapsed() < limit {
        if child.try_wait().expect("wait").is_some() {
            return Some(child.wait_with_output().expect("output"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn refused_at_once(dir: &Path, args: &[&str], needle: &str) -> String {
    let out = run_bounded(dir, args, Duration::from_secs(5))
        .unwrap_or_else(|| panic!("{args:?} did not finish within 5 s"));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {needle:?} not in\n{err}");
    err
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn a_diagnostic_on_a_megabyte_line_is_shown_without_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!(
        "scenario \"s\" {{ description = \"{}\" bogus = 1 }}\n",
        "a".repeat(1_100_000)
    );
    write(dir.path(), "long.kbs", &long);
    let err = refused_at_once(
        dir.path(),
        &["check", "long.kbs"],
        "not a top-level setting",
    );
    assert!(err.contains("long.kbs:1:1100033"), "{err}");
    assert!(err.contains("the source is not shown"), "{err}");
    assert!(
        err.len() < 2_000,
        "the line itself is not printed: {} bytes",
        err.len()
    );
}

#[test]
fn a_rate_shape_of_200_000_segments_is_refused_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let shape = vec!["1/s for 1s"; 200_000].join(", then ");
    let text = format!("scenario \"s\" {{ topic \"t\" {{}} workload {{ rate = {shape} }} }}\n");
    write(dir.path(), "shape.kbs", &text);
    refused_at_once(dir.path(), &["check", "shape.kbs"], "at most 1000 segments");
    let lines = vec!["1/s for 1s"; 200_000].join(",\n then ");
    let text = format!("scenario \"s\" {{ topic \"t\" {{}} workload {{ rate = {lines} }} }}\n");
    write(dir.path(), "lines.kbs", &text);
    refused_at_once(dir.path(), &["check", "lines.kbs"], "at most 1000 segments");
}

#[test]
fn five_thousand_nested_parentheses_are_refused_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!(
        "scenario \"s\" {{\n  expect {{\n    {}1{} < 1\n  }}\n}}\n",
        "(".repeat(5_000),
        ")".repeat(5_000)
    );
    write(dir.path(), "deep.kbs", &deep);
    refused_at_once(dir.path(), &["check", "deep.kbs"], "nest at most 64 deep");
    refused_at_once(dir.path(), &["plan", "deep.kbs"], "nest at most 64 deep");
}

#[test]
fn check_json_into_a_closed_pipe_exits_quietly() {
    let mut fds = [0; 2];
    // SAFETY: pipe() fills two fresh descriptors; each is owned exactly once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: fds[0] and fds[1] are open and owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // The reader is gone before the first write, as with `| head` that has had enough.
    drop(read);
    for format in ["json", "text"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
            .args([
                "check",
                "--format",
                format,
                &fixture("invalid/five_mistakes.kbs"),
            ])
            .arg("scenarios/promo_friday.kbs")
            .current_dir(common::repo())
            .stdout(Stdio::from(write.try_clone().unwrap()))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert!(!err.contains("panicked"), "{format}: {err}");
        assert_eq!(out.status.code(), Some(2), "{format}: {err}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(["plan", "scenarios/promo_friday.kbs"])
        .current_dir(common::repo())
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(!err.contains("panicked") && err.is_empty(), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

#[test]
fn include_and_payload_file_of_a_device_or_fifo_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for target in ["/dev/zero", "fifo"] {
        write(
            dir.path(),
            "inc.kbs",
            &format!("scenario \"s\" {{\n  include \"{target}\"\n}}\n"),
        );
        refused_at_once(dir.path(), &["check", "inc.kbs"], "not a regular file");
        write(
            dir.path(),
            "pay.kbs",
            &format!(
                "scenario \"s\" {{\n  topic \"t\" {{}}\n  workload {{\n    messages = 1\n    \
                 payload = file(\"{target}\")\n  }}\n}}\n"
            ),
        );
        refused_at_once(dir.path(), &["check", "pay.kbs"], "not a regular file");
    }
}

#[test]
fn a_payload_file_over_the_size_limit_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let big = std::fs::File::create(dir.path().join("big.jsonl")).unwrap();
    big.set_len(300 * 1024 * 1024).unwrap();
    write(
        dir.path(),
        "pay.kbs",
        "scenario \"s\" {\n  topic \"t\" {}\n  workload {\n    messages = 1\n    \
         payload = file(\"big.jsonl\")\n  }\n}\n",
    );
    refused_at_once(dir.path(), &["check", "pay.kbs"], "at most 256 MiB");
}

#[test]
fn help_names_the_folder_even_when_it_is_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "inc.kbs",
        "scenario \"s\" {\n  include \"nope.kbs\"\n}\n",
    );
    write(
        dir.path(),
        "pay.kbs",
        "scenario \"s\" {\n  topic \"t\" {}\n  workload {\n    messages = 1\n    \
         payload = file(\"nope.jsonl\")\n  }\n}\n",
    );
    for file in ["inc.kbs", "pay.kbs"] {
        let err = refused_at_once(dir.path(), &["check", file], "relative to");
        assert!(!err.contains("()"), "{err}");
        assert!(err.contains("folder (.)"), "{err}");
    }
}

#[test]
fn text_and_json_count_columns_in_characters_alike() {
    let f = fixture("invalid/non_ascii_columns.kbs");
    let out = kafkabench(&["check", &f]);
    let err = text(&out.stderr);
    let json = kafkabench(&["check", "--format", "json", &f]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let d = v["files"][0]["diagnostics"]
        .as_array()
        .and_then(|ds| ds.iter().find(|d| d["code"] == "kb::unknown-key"))
        .expect("the unknown key's diagnostic");
    // `partitons` on line 3 starts after 25 characters (28 bytes: each accent takes two).
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(3), Some(26))
    );
    assert_eq!(
        (d["end_line"].as_u64(), d["end_column"].as_u64()),
        (Some(3), Some(35))
    );
    assert_eq!(d["severity"], "error");
    assert!(err.contains("non_ascii_columns.kbs:3:26"), "{err}");
}

#[test]
fn a_malformed_bootstrap_is_invalid_input_at_once() {
    let repo = common::repo();
    for bad in [
        "",
        ",",
        "host:",
        ":9092",
        "host:notaport",
        "a:9092,,b:9092",
        "h:0",
    ] {
        for cmd in ["plan", "run"] {
            let arg = format!("--bootstrap={bad}");
            refused_at_once(
                &repo,
                &[cmd, "scenarios/promo_friday.kbs", &arg],
                "bootstrap",
            );
        }
    }
    for good in [
        "localhost",
        "a:9092,b:9093",
        "[::1]:9092",
        "SSL://broker:9093",
    ] {
        let out = kafkabench(&["plan", "scenarios/promo_friday.kbs", "--bootstrap", good]);
        assert_eq!(out.status.code(), Some(0), "{good}: {}", text(&out.stderr));
    }
}
