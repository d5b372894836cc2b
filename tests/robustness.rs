//! Parse, check and plan never panic, abort, hang or exhaust memory, whatever the input: the
//! concrete crashes as named regressions, then a seeded fuzz run of 20 000 hostile inputs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kafkabench::diagnostic::render_text;
use kafkabench::source::{FileId, Sources};
use proptest::prelude::*;

fn parse_and_check(text: &str) {
    let mut sources = Sources::default();
    let id = sources.add("fuzz.kbs".into(), text.to_string());
    if let Ok(ast) = kafkabench::syntax::parse(id, text) {
        let _ = kafkabench::check::check(&ast, &sources);
    }
}

const TOKENS: &[&str] = &[
    "scenario",
    "\"s\"",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "=",
    ",",
    "..",
    "topic",
    "producer",
    "consumer",
    "workload",
    "matrix",
    "steps",
    "ladder",
    "expect",
    "when",
    "in",
    "and",
    "for",
    "then",
    "linger.ms",
    "{linger}",
    "5ms",
    "1KiB",
    "8000/min",
    "10x",
    "50%",
    "json(size: 1KiB)",
    "ack.p99",
    "<",
    ">=",
    "==",
    "*",
    "-",
    "messages",
    "rate",
    "100_000",
    "codec",
    "zstd",
    "[0ms, 5ms]",
    "#c\n",
    "\n",
    " ",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,400}") {
        parse_and_check(&s);
    }

    #[test]
    fn token_soup_never_panics(toks in proptest::collection::vec(0..TOKENS.len(), 0..120)) {
        let text: String = toks.iter().map(|i| TOKENS[*i]).collect::<Vec<_>>().join(" ");
        parse_and_check(&text);
        let wrapped = format!("scenario \"s\" {{ {text} }}");
        parse_and_check(&wrapped);
    }
}

#[test]
fn deep_nesting_is_refused_quickly_naming_the_limit() {
    let t = Instant::now();
    let text = format!("scenario \"s\" {{ {} }}", "a { ".repeat(50_000));
    let refused = kafkabench::syntax::parse(FileId(0), &text).expect_err("too deep to parse");
    assert_eq!(refused.message, "brackets nest at most 64 deep");
    let expr = format!(
        "scenario \"s\" {{ expect {{ {}1{} < 1 }} }}",
        "(".repeat(20_000),
        ")".repeat(20_000)
    );
    let refused = kafkabench::syntax::parse(FileId(0), &expr).expect_err("too deep to parse");
    assert_eq!(refused.message, "brackets nest at most 64 deep");
    assert_eq!(refused.label.as_deref(), Some("level 65 opens here"));
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );
}

#[test]
fn brackets_in_strings_and_comments_do_not_count_as_nesting() {
    let text = format!(
        "scenario \"{}\" {{ # {}\n description = \"{}\" }}",
        "(".repeat(100),
        "[".repeat(100),
        "{".repeat(100)
    );
    kafkabench::syntax::parse(FileId(0), &text).expect("strings and comments are text");
}

#[test]
fn sixty_four_levels_parse_and_sixty_five_do_not() {
    let at = |n: usize| {
        format!(
            "scenario \"s\" {{ expect {{ {}1{} < 1 }} }}",
            "(".repeat(n),
            ")".repeat(n)
        )
    };
    // `scenario {` and `expect {` are two levels already.
    kafkabench::syntax::parse(FileId(0), &at(62)).expect("64 levels");
    let refused = kafkabench::syntax::parse(FileId(0), &at(63)).expect_err("65 levels");
    assert_eq!(refused.kind.code(), "kb::limit");
}

#[test]
fn a_rate_shape_of_a_thousand_segments_parses_and_one_more_does_not() {
    let shape = |n: usize| {
        format!(
            "scenario \"s\" {{ workload {{ rate = {} }} }}",
            vec!["1/s for 1s"; n].join(", then ")
        )
    };
    kafkabench::syntax::parse(FileId(0), &shape(1_000)).expect("1000 segments");
    let refused = kafkabench::syntax::parse(FileId(0), &shape(1_001)).expect_err("1001");
    assert_eq!(refused.message, "a rate shape has at most 1000 segments");
    assert_eq!(refused.label.as_deref(), Some("segment 1001 starts here"));
}

#[test]
fn a_megabyte_line_renders_as_text_without_panicking() {
    let text = format!(
        "scenario \"s\" {{ description = \"{}\" bogus = 1 }}",
        "é".repeat(1_000_000)
    );
    let mut sources = Sources::default();
    let id = sources.add("long.kbs".into(), text.clone());
    let ast = kafkabench::syntax::parse(id, &text).expect("parses");
    let diags = kafkabench::check::check(&ast, &sources).expect_err("bogus is unknown");
    let shown = render_text(&diags, &sources, false, 100);
    assert!(shown.contains("long.kbs:1:1000033"), "{shown}");
    assert!(shown.contains("the source is not shown"), "{shown}");
}

// ---- the fuzz test ----------------------------------------------------------------------------
//
// A child process (this test binary again, running only `fuzz_worker`) runs every case
// in-process under a 1 GiB address-space limit, writing the index of the case it is on before
// each one. The parent watches: a child that panics, aborts (stack overflow), runs out of
// memory or stalls on one case is reported with that case, which is written to
// target/fuzz-failures/ for reproduction, and the child is restarted after it.

#[path = "robustness/cases.rs"]
mod cases;

use std::process::{Command, Stdio};

/// Environment of the worker: the progress file; the seed and case count are passed as is.
const WORKER: &str = "KB_FUZZ_WORKER";
const DEFAULT_SEED: u64 = 0x6b61_666b_6162_656e;
const DEFAULT_CASES: u64 = 20_000;
/// One case taking this long is a hang.
const STALL: Duration = Duration::from_secs(20);
/// The whole run; CI allows five minutes for this test. A machine too busy to try every case
/// in it tries fewer (the same first ones, in order), and says how many: the cases' speed is
/// not what this test checks.
const BUDGET: Duration = Duration::from_secs(270);
/// The address-space cap of the worker: a case that needs more is a leak or a blow-up.
const MEMORY: u64 = 1 << 30;

/// Cases that crash for a reason reported to the owner of that code and not fixed yet: each
/// is skipped by the worker with the reason printed. Keep this empty when nothing is known.
/// Why a case is known to crash, and how to recognise it.
type Known = (&'static str, fn(&str) -> bool);

const KNOWN: &[Known] = &[];

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Parse, check and plan one case as the binary does, and render its diagnostics both ways.
fn run_case(case: &cases::Case) {
    let mut sources = Sources::default();
    let id = sources.add(case.path.clone(), case.text.clone());
    let result = kafkabench::syntax::parse(id, &case.text)
        .map_err(kafkabench::diagnostic::Diagnostics::from)
        .and_then(|ast| kafkabench::check::check(&ast, &sources));
    match result {
        Ok(scenario) => {
            let plan = kafkabench::plan::plan(&scenario, &Default::default());
            let _ = serde_json::to_string(&plan);
        }
        Err(diags) => {
            let _ = render_text(&diags, &sources, false, 100);
            let _ = kafkabench::diagnostic::render_json(&diags, &sources);
        }
    }
}

/// The child's side; a no-op in a normal test run.
#[test]
fn fuzz_worker() {
    let Some(progress) = std::env::var_os(WORKER) else {
        return;
    };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (corpus, explicit) = (cases::corpus(repo), cases::explicit(repo));
    let seed = env_u64("KB_FUZZ_SEED", DEFAULT_SEED);
    let (start, end) = (
        env_u64("KB_FUZZ_START", 0),
        env_u64("KB_FUZZ_CASES", DEFAULT_CASES),
    );
    // KB_FUZZ_SLOW=<ms> names the cases slower than that, to keep the run within its budget.
    let slow = std::env::var("KB_FUZZ_SLOW")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    // The binary's main thread has 8 MiB of stack; test threads only 2.
    let worker = std::thread::Builder::new().stack_size(8 << 20);
    worker
        .spawn(move || {
            for i in start..end {
                std::fs::write(&progress, i.to_string()).expect("progress file");
                let case = cases::generate(seed, i, &corpus, &explicit);
                if let Some((why, _)) = KNOWN.iter().find(|(_, hit)| hit(&case.text)) {
                    eprintln!("case {i}: skipped, known: {why}");
                    continue;
                }
                let t = Instant::now();
                run_case(&case);
                if slow.is_some_and(|ms| t.elapsed() > Duration::from_millis(ms)) {
                    eprintln!("case {i}: {:?}, {} bytes", t.elapsed(), case.text.len());
                }
            }
            std::fs::write(&progress, "done").expect("progress file");
        })
        .expect("worker thread")
        .join()
        .expect("a case panicked: see the message above");
}

struct Failure {
    index: u64,
    what: String,
    saved: PathBuf,
}

#[test]
fn twenty_thousand_hostile_inputs_never_crash_hang_or_exhaust_memory() {
    let seed = env_u64("KB_FUZZ_SEED", DEFAULT_SEED);
    let cases = env_u64("KB_FUZZ_CASES", DEFAULT_CASES);
    eprintln!("fuzz: seed {seed}, {cases} cases (KB_FUZZ_SEED / KB_FUZZ_CASES to change)");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (corpus, explicit) = (cases::corpus(repo), cases::explicit(repo));
    assert!(corpus.len() >= 10, "the seed files are found");
    let dir = tempfile::tempdir().unwrap();
    let progress = dir.path().join("progress");
    let began = Instant::now();
    let mut failures: Vec<Failure> = Vec::new();
    let mut start = 0;
    while start < cases {
        let _ = std::fs::remove_file(&progress);
        let (what, at) = match watch_worker(&progress, seed, start, cases, began) {
            Ok(None) => break,
            Ok(Some(at)) => {
                eprintln!("fuzz: the {BUDGET:?} budget ran out at case {at} of {cases}");
                break;
            }
            Err(e) => e,
        };
        let case = cases::generate(seed, at, &corpus, &explicit);
        let saved = save_failure(seed, at, &case.text);
        failures.push(Failure {
            index: at,
            what,
            saved,
        });
        if failures.len() >= 10 || began.elapsed() > BUDGET {
            break;
        }
        start = at + 1;
    }
    let report: Vec<String> = failures
        .iter()
        .map(|f| {
            format!(
                "case {} (seed {seed}): {}\n  input saved to {}",
                f.index,
                f.what,
                f.saved.display()
            )
        })
        .collect();
    assert!(failures.is_empty(), "{}", report.join("\n"));
}

/// Runs the worker from case `start`: Ok(None) when it tried every case, Ok(Some(case)) when
/// the budget ran out on that case; Err holds what went wrong and the case it was on.
fn watch_worker(
    progress: &Path,
    seed: u64,
    start: u64,
    cases: u64,
    began: Instant,
) -> Result<Option<u64>, (String, u64)> {
    // The worker's test name in the one test binary: its module path less the crate's name.
    let worker = module_path!()
        .split_once("::")
        .map_or("", |(_, m)| m)
        .to_owned()
        + "::fuzz_worker";
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([&worker, "--exact", "--nocapture", "--test-threads=1"])
        .env(WORKER, progress)
        .env("KB_FUZZ_SEED", seed.to_string())
        .env("KB_FUZZ_START", start.to_string())
        .env("KB_FUZZ_CASES", cases.to_string())
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe, and the closure touches nothing else.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            let cap = libc::rlimit {
                rlim_cur: MEMORY,
                rlim_max: MEMORY,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &cap) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let mut child = cmd.spawn().expect("the worker starts");
    // Read stderr on the side, so a chatty worker never blocks on a full pipe.
    let mut pipe = child.stderr.take().expect("stderr");
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut s);
        s
    });
    let on = || std::fs::read_to_string(progress).unwrap_or_default();
    let (mut last, mut since) = (on(), Instant::now());
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        let now = on();
        if now != last {
            (last, since) = (now, Instant::now());
        }
        if began.elapsed() > BUDGET {
            let _ = child.kill();
            let _ = child.wait();
            let _ = stderr.join();
            return Ok(Some(on().parse().unwrap_or(start)));
        }
        if since.elapsed() > STALL {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = stderr.join().unwrap_or_default();
    let last = on();
    if last == "done" && status.is_some_and(|s| s.success()) {
        return Ok(None);
    }
    let at = last.parse().unwrap_or(start);
    let tail: String = err
        .lines()
        .rev()
        .take(40)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n    ");
    let what = match status {
        None => format!("no progress for {STALL:?} (a hang), killed"),
        Some(s) => match std::os::unix::process::ExitStatusExt::signal(&s) {
            Some(sig) => format!("killed by signal {sig} (abort, stack overflow or out of memory)"),
            None => format!("exited with {s} (a panic?)"),
        },
    };
    Err((format!("{what}\n    {tail}"), at))
}

fn save_failure(seed: u64, index: u64, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("seed-{seed}-case-{index}.kbs"));
    let _ = std::fs::write(&path, text);
    path
}
