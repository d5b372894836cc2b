//! `kafkabench fmt`: the layout (snapshots), its properties on every `.kbs` file in the
//! repository (idempotent, same AST, every comment kept), and the command as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{expect_exit, kafkabench, repo, text};
use kafkabench::source::FileId;
use kafkabench::syntax;

fn fmt(text: &str) -> String {
    syntax::fmt::format(FileId(0), text).unwrap_or_else(|d| panic!("refused: {d:?}\n{text}"))
}

/// Every `.kbs` under tests/ and scenarios/, so a fixture added later is covered too.
fn every_kbs_file() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "kbs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo().join("tests"), &mut files);
    walk(&repo().join("scenarios"), &mut files);
    files.sort();
    assert!(files.len() > 20, "found only {files:?}");
    files
}

/// The comments of a file in order (`#` and `//`, outside strings), trailing blanks trimmed.
fn comments(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let mut in_string = false;
        let mut escaped = false;
        for (i, c) in line.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                '#' if !in_string => {
                    found.push(line[i..].trim_end().to_string());
                    break;
                }
                '/' if !in_string && line[i..].starts_with("//") => {
                    found.push(line[i..].trim_end().to_string());
                    break;
                }
                _ => {}
            }
        }
    }
    found
}

/// A scenario or an included file, as `check` would read it (spans are ignored by equality).
#[derive(Debug, PartialEq)]
enum Parsed {
    Scenario(syntax::Ast),
    Fragment(Vec<syntax::Entry>),
}

fn parse(text: &str) -> Option<Parsed> {
    syntax::parse(FileId(0), text)
        .map(Parsed::Scenario)
        .or_else(|_| syntax::parse_fragment(FileId(0), text).map(Parsed::Fragment))
        .ok()
}

#[test]
fn every_kbs_file_formats_to_the_same_syntax_tree_with_every_comment_idempotently() {
    let mut problems = Vec::new();
    let mut formatted_files = 0;
    for path in every_kbs_file() {
        let shown = path.strip_prefix(repo()).unwrap().display().to_string();
        let original = std::fs::read_to_string(&path).unwrap();
        let Some(before) = parse(&original) else {
            // A fixture with a syntax error: fmt must refuse it (tested below), not format it.
            assert!(
                syntax::fmt::format(FileId(0), &original).is_err(),
                "{shown}"
            );
            continue;
        };
        formatted_files += 1;
        let once = fmt(&original);
        let twice = fmt(&once);
        if twice != once {
            problems.push(format!(
                "{shown}: not idempotent\n--- once\n{once}\n--- twice\n{twice}"
            ));
        }
        if parse(&once).as_ref() != Some(&before) {
            problems.push(format!(
                "{shown}: the formatted file parses differently:\n{once}"
            ));
        }
        if comments(&once) != comments(&original) {
            problems.push(format!(
                "{shown}: comments changed\nbefore: {:#?}\nafter: {:#?}",
                comments(&original),
                comments(&once)
            ));
        }
    }
    assert!(formatted_files > 20);
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn the_comment_counter_skips_strings_and_finds_both_kinds() {
    let text = "a = \"#not\" # yes\n// also\nb = \"x\\\"#\" // too\n";
    assert_eq!(comments(text), ["# yes", "// also", "// too"]);
}

const MESSY: &str = r#"


# header


// second header
scenario   "messy"{ # after open
  description="d"   # eol d
  cluster{bootstrap=env("KAFKA_BOOTSTRAP","127.0.0.1:9092")}


  matrix { codec = [ none , lz4, ]
     size = [1KiB,   # small
             2KiB]  }
  steps { a { x.y = 1  z = 2 } bbbbbb {   } # eol after b
    c { w = 3 }
    # whole line in steps
    d {
      q = 1
    }
  }
  topic # between
    "t" { partitions = 3 }
  workload { rate = 8000/min for 10s,then 200/s for 1m payload = random( size : 300B ) }
  expect { failed == 0   lost==0 when step==a and codec in [ lz4 , none ]
    throughput [codec=zstd] > 2*( throughput[codec = lz4]+1) # why
    ack.p50 in 1ms .. 2ms
    a > # inside
      1

    e2e.p50 < 1s        when step == a   # a new run of assertions: aligned on its own
  }
  include "x.kbs"
} # trailing eol
# trailing own line

"#;

#[test]
fn a_messy_file_gets_the_canonical_layout_with_its_comments_in_place() {
    let once = fmt(MESSY);
    assert_eq!(fmt(&once), once);
    assert_eq!(comments(&once), comments(MESSY));
    insta::assert_snapshot!(once);
}

/// A capacity search: its settings align as a section's do, its `slo { }` lays out as `expect`.
const CAPACITY: &str = r#"scenario "cap" {
  capacity {   # the search
    from = 10k/s
    to=1M/s   # ceiling
    precision   = 2%

    slo {  # every probe
      e2e.p99 < 20ms   # the target
      ack.p999<50ms when codec == zstd
      # a whole-line comment
      ack.p50 <   5ms when codec in [ lz4 , zstd ]   # why
    }
    budget = 10m
  }
  steps { strict { capacity { slo { e2e.p99 < 1s } } } }
}
"#;

#[test]
fn a_capacity_block_and_its_slo_are_laid_out_as_sections_and_expect_are() {
    let once = fmt(CAPACITY);
    assert_eq!(fmt(&once), once);
    assert_eq!(comments(&once), comments(CAPACITY));
    assert_eq!(parse(&once), parse(CAPACITY));
    insta::assert_snapshot!(once);
}

#[test]
fn settings_align_within_a_run_and_a_blank_line_starts_a_new_run() {
    let text = "scenario \"s\" {\n  producer {\n    linger.ms = 5ms\n    # why\n    batch.size=1MiB\n\n    acks = all\n    queue.buffering.max.messages = 1\n  }\n}\n";
    insta::assert_snapshot!(fmt(text));
}

#[test]
fn a_list_written_over_several_lines_or_too_long_for_one_gets_one_item_per_line() {
    let text = "scenario \"s\" {\n  workload { payload = [\n random(size: 1KiB),  file(\"a.jsonl\") , ] }\n  matrix { a = [1, 2]\n b = [ ]\n c = [\n1]\n d = [[1,2],\n [3]]\n e = [1111111111, 2222222222, 3333333333, 4444444444, 5555555555, 6666666666, 7777777777] }\n}\n";
    let once = fmt(text);
    assert_eq!(fmt(&once), once);
    insta::assert_snapshot!(once);
}

#[test]
fn an_included_file_of_bare_entries_is_formatted_too() {
    let text = "# shared\nproducer{linger.ms=5ms}\ncluster {\n bootstrap = \"a:1\"\n}\n";
    insta::assert_snapshot!(fmt(text));
}

#[test]
fn a_formatted_file_is_left_byte_for_byte_as_it_is() {
    for path in every_kbs_file()
        .iter()
        .filter(|p| p.starts_with(repo().join("scenarios")))
    {
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(fmt(&text), text, "{} is not formatted", path.display());
    }
}

#[test]
fn windows_line_ends_and_tabs_become_the_canonical_layout() {
    let text = "scenario \"s\" {\r\n\tworkload {\r\n\t\tmessages = 1  # one\r\n\t}\r\n}\r\n";
    assert_eq!(
        fmt(text),
        "scenario \"s\" {\n  workload {\n    messages = 1  # one\n  }\n}\n"
    );
}

// ---- the command --------------------------------------------------------------------------

fn temp_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.kbs");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

const UNFORMATTED: &str = "scenario \"s\" {\n workload { messages=1 }   # one\n}\n";
const FORMATTED: &str = "scenario \"s\" {\n  workload { messages = 1 }  # one\n}\n";

#[test]
fn check_lists_a_file_that_would_change_with_a_diff_exits_1_and_changes_nothing() {
    let (_dir, path) = temp_file(UNFORMATTED);
    let p = path.display().to_string();
    let out = kafkabench(&["fmt", "--check", &p]);
    let stdout = expect_exit(&out, 1);
    assert!(stdout.contains(&format!("would reformat {p}")), "{stdout}");
    assert!(
        stdout.contains("- workload { messages=1 }   # one"),
        "{stdout}"
    );
    assert!(
        stdout.contains("+  workload { messages = 1 }  # one"),
        "{stdout}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), UNFORMATTED);
}

#[test]
fn check_is_silent_and_exits_0_on_a_formatted_file() {
    let (_dir, path) = temp_file(FORMATTED);
    let out = kafkabench(&["fmt", "--check", &path.display().to_string()]);
    assert_eq!(expect_exit(&out, 0), "");
}

#[test]
fn every_shipped_scenario_passes_fmt_check() {
    let files: Vec<String> = every_kbs_file()
        .iter()
        .filter(|p| p.starts_with(repo().join("scenarios")))
        .map(|p| p.display().to_string())
        .collect();
    let mut args = vec!["fmt", "--check"];
    args.extend(files.iter().map(String::as_str));
    expect_exit(&kafkabench(&args), 0);
}

#[test]
fn fmt_rewrites_the_file_in_place_keeping_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, path) = temp_file(UNFORMATTED);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let p = path.display().to_string();
    let stdout = expect_exit(&kafkabench(&["fmt", &p]), 0);
    assert_eq!(stdout, format!("formatted {p}\n"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FORMATTED);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    // Nothing left beside it, and a second run has nothing to do.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    assert_eq!(expect_exit(&kafkabench(&["fmt", &p]), 0), "");
}

#[test]
fn a_symbolic_link_stays_a_link_and_its_target_is_formatted() {
    let (dir, path) = temp_file(UNFORMATTED);
    let link = dir.path().join("link.kbs");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    expect_exit(&kafkabench(&["fmt", &link.display().to_string()]), 0);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FORMATTED);
}

#[test]
fn a_file_with_a_syntax_error_is_refused_with_its_diagnostic_and_left_untouched() {
    let broken = "scenario \"s\" {\n workload { messages= }\n}\n";
    let (_dir, path) = temp_file(broken);
    let (_dir2, good) = temp_file(UNFORMATTED);
    let out = kafkabench(&[
        "fmt",
        &path.display().to_string(),
        &good.display().to_string(),
    ]);
    expect_exit(&out, 2);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("kb::syntax") && stderr.contains("s.kbs:2:23"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    // The other files are still formatted: every problem at once, not the first.
    assert_eq!(std::fs::read_to_string(&good).unwrap(), FORMATTED);
}

#[test]
fn a_missing_file_is_an_io_diagnostic_and_exit_2() {
    let out = kafkabench(&["fmt", "--check", "no/such/file.kbs"]);
    expect_exit(&out, 2);
    assert!(text(&out.stderr).contains("cannot read no/such/file.kbs"));
}

#[test]
fn a_dash_reads_stdin_and_writes_the_result_to_stdout() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(["fmt", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(UNFORMATTED.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(expect_exit(&out, 0), FORMATTED);
}

// ---- any layout of the same file ----------------------------------------------------------

/// The whitespace runs of `text` outside strings and comments, as (start, end, holds a newline
/// that must stay: the one ending a comment).
fn whitespace_runs(text: &str) -> Vec<(usize, usize, bool)> {
    let b = text.as_bytes();
    let (mut runs, mut i, mut after_comment) = (Vec::new(), 0, false);
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                after_comment = true;
            }
            c if c.is_ascii_whitespace() => {
                let start = i;
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
                runs.push((start, i, after_comment));
                after_comment = false;
            }
            _ => i += 1,
        }
    }
    runs
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any spacing of a shipped scenario formats to a file that parses the same, keeps every
    /// comment, and formats to itself.
    #[test]
    fn any_spacing_of_a_scenario_formats_idempotently_to_the_same_tree(
        file in 0usize..8,
        seeds in proptest::collection::vec(0u8..5, 600),
    ) {
        let scenarios: Vec<PathBuf> = every_kbs_file()
            .into_iter()
            .filter(|p| p.starts_with(repo().join("scenarios")))
            .collect();
        let original = std::fs::read_to_string(&scenarios[file % scenarios.len()]).unwrap();
        let mut respaced = String::new();
        let mut pos = 0;
        for (n, (start, end, keep_newline)) in whitespace_runs(&original).into_iter().enumerate() {
            respaced.push_str(&original[pos..start]);
            let pick = ["  ", "\n", " \t ", "\n\n\n", " "][seeds[n % seeds.len()] as usize];
            respaced.push_str(if keep_newline && !pick.contains('\n') { "\n" } else { pick });
            pos = end;
        }
        respaced.push_str(&original[pos..]);
        let before = parse(&respaced).expect("respacing keeps the meaning");
        let once = fmt(&respaced);
        proptest::prop_assert_eq!(parse(&once), Some(before));
        proptest::prop_assert_eq!(comments(&once), comments(&original));
        proptest::prop_assert_eq!(fmt(&once), once);
    }
}

#[test]
fn repeat_auto_keeps_its_tolerance_and_an_argument_named_without_a_colon() {
    let text = "scenario \"s\" {\n  repeat=auto( ±5% ,max 20 )\n  workload { messages = 1 }\n}\n";
    let once = fmt(text);
    assert_eq!(fmt(&once), once);
    assert_eq!(parse(&once), parse(text));
    assert!(once.contains("repeat = auto(±5%, max 20)"), "{once}");
}
