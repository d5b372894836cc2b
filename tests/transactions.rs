//! Transactions: the scenario keys as `check` sees them (rendered diagnostics, snapshot-tested,
//! and what a valid scenario lowers to), and transactional runs against the real broker: a
//! read_committed consumer never reads an aborted record and reads each committed one once,
//! the schedule's counts of committed and aborted transactions are what was run, and a fenced
//! producer is a failed run that says so.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::watch::Watched;
use crate::common::{self, expect_exit, fixture};
use kafkabench::diagnostic::render_text;
use kafkabench::model::{Scenario, TxnSize, TxnSpec};
use kafkabench::source::Sources;
use serde_json::Value;

const FIXTURES: &str = "tests/fixtures/transactions";

fn load(
    name: &str,
) -> (
    Sources,
    Result<Scenario, kafkabench::diagnostic::Diagnostics>,
) {
    let mut sources = Sources::default();
    let path = Path::new(FIXTURES).join(format!("{name}.kbs"));
    let result = kafkabench::check::load(&path, &mut sources);
    (sources, result)
}

/// The fixture's diagnostics as `kafkabench check` renders them, without colour.
fn diagnostics_of(name: &str) -> String {
    let (sources, result) = load(name);
    let diags = result
        .err()
        .unwrap_or_else(|| panic!("{name}.kbs should be invalid"));
    render_text(&diags, &sources, false, 100)
}

#[test]
fn every_producer_property_a_transaction_cannot_take_is_reported_at_once() {
    insta::assert_snapshot!("producer_conflicts", diagnostics_of("producer_conflicts"));
}

#[test]
fn a_transaction_is_a_record_count_or_a_duration_and_aborts_a_percentage() {
    insta::assert_snapshot!("values", diagnostics_of("values"));
}

#[test]
fn aborts_and_a_transactional_id_each_need_transaction() {
    insta::assert_snapshot!("missing", diagnostics_of("missing"));
}

#[test]
fn a_closed_loop_on_the_consumer_cannot_wait_across_a_transaction() {
    insta::assert_snapshot!("closed_loop", diagnostics_of("closed_loop"));
}

#[test]
fn delivery_and_transaction_timeouts_must_fit_the_transaction() {
    insta::assert_snapshot!("timeouts", diagnostics_of("timeouts"));
}

/// Checks inline scenario text and returns each run's transactions.
fn transactions_of(body: &str) -> Vec<Option<TxnSpec>> {
    let text = format!("scenario \"t\" {{\n{body}\n}}\n");
    let mut sources = Sources::default();
    let file = sources.add("t.kbs".into(), text.clone());
    let ast = kafkabench::syntax::parse(file, &text).expect("parses");
    let scenario = kafkabench::check::check(&ast, &sources)
        .unwrap_or_else(|d| panic!("{}", render_text(&d, &sources, false, 100)));
    scenario
        .cells
        .iter()
        .map(|c| c.spec.workload.transaction.clone())
        .collect()
}

#[test]
fn transactions_lower_to_records_or_a_duration_with_their_abort_fraction() {
    let got = transactions_of(
        r#"topic "t-{n}" { }
           producer { acks = all  enable.idempotence = true }
           matrix { n = [1k, 250ms] }
           workload { messages = 10_000  transaction = {n}  aborts = 12.5% }"#,
    );
    let want = [
        TxnSize::Messages(1000),
        TxnSize::Duration(Duration::from_millis(250)),
    ];
    for (got, size) in got.iter().zip(want) {
        assert_eq!(got.as_ref(), Some(&TxnSpec { size, abort: 0.125 }));
    }
    let plain = transactions_of(r#"topic "t" { } workload { messages = 10 }"#);
    assert_eq!(plain, vec![None], "no transaction unless asked");
    let one = transactions_of(
        r#"topic "t" { } producer { acks = -1  transactional.id = "app-1" }
           workload { messages = 10  transaction = 5 }"#,
    );
    assert_eq!(one[0].as_ref().map(|t| t.abort), Some(0.0));
    // As issue 11 writes it: the count may say what it counts.
    let worded = transactions_of(
        r#"topic "t" { } workload { messages = 10k records  transaction = 1000 messages }"#,
    );
    assert_eq!(
        worded[0].as_ref().map(|t| t.size.clone()),
        Some(TxnSize::Messages(1000))
    );
}

// ---- against the broker -------------------------------------------------------------------

/// Runs a fixture with `--json`, asserts the exit code, and returns the single run's result.
fn run(name: &str, code: i32) -> Value {
    common::require_broker();
    let (_, v) = common::run_fixture_json(&format!("transactions/{name}.kbs"), code);
    v["runs"][0].clone()
}

fn u(v: &Value, path: &[&str]) -> u64 {
    let mut x = v;
    for p in path {
        x = &x[p];
    }
    x.as_u64()
        .unwrap_or_else(|| panic!("{} is not a count in {v:#}", path.join(".")))
}

/// Records of aborted transactions the consumer read: counted apart, never in `consumed`. A
/// missing field fails (a count of 0 must be reported, not assumed).
fn aborted_read(r: &Value) -> u64 {
    u(r, &["consume", "aborted_read"])
}

#[test]
fn a_read_committed_consumer_reads_every_committed_record_once_and_no_aborted_one() {
    let r = run("run_aborts", 0);
    // The expectations (lost, duplicated, the schedule's counts, commit p50) held: exit 0.
    assert_eq!(u(&r, &["txn", "committed"]), 160);
    assert_eq!(u(&r, &["txn", "aborted"]), 40);
    assert_eq!(u(&r, &["txn", "committed_records"]), 8000);
    assert_eq!(u(&r, &["txn", "aborted_records"]), 2000);
    assert_eq!(u(&r, &["acked"]), 10_000, "aborted records are acked too");
    // Exactly the committed ones, each once. An aborted record read would not show here: the
    // verifier counts it apart, in aborted_read, which must be 0.
    assert_eq!(u(&r, &["delivery", "consumed"]), 8000);
    assert_eq!(u(&r, &["delivery", "lost"]), 0);
    assert_eq!(u(&r, &["delivery", "duplicated"]), 0);
    assert_eq!(aborted_read(&r), 0);
    let commit = &r["txn"]["commit"];
    assert_eq!(u(commit, &["count"]), 160, "one commit latency per commit");
    assert!(
        commit["p50_ms"].as_f64().is_some_and(|p| p > 0.0),
        "{commit}"
    );
    assert!(
        commit["histogram"].is_string(),
        "the whole histogram is kept"
    );
}

#[test]
fn a_read_uncommitted_consumer_sees_the_aborted_records_which_are_still_not_lost() {
    let r = run("run_uncommitted", 0);
    assert_eq!(u(&r, &["txn", "committed"]), 10);
    assert_eq!(u(&r, &["txn", "aborted"]), 10);
    // Written and then aborted, not dropped: an uncommitted read sees all 2000, the committed
    // ones as consumed and the aborted ones counted apart.
    assert_eq!(u(&r, &["txn", "committed_records"]), 1000);
    assert_eq!(u(&r, &["delivery", "consumed"]), 1000);
    assert_eq!(aborted_read(&r), 1000);
    assert_eq!(u(&r, &["delivery", "lost"]), 0);
}

#[test]
fn transactions_bounded_by_time_follow_the_abort_schedule_exactly() {
    let r = run("run_timed", 0);
    let (committed, aborted) = (u(&r, &["txn", "committed"]), u(&r, &["txn", "aborted"]));
    let n = committed + aborted;
    // 2 s in transactions of 50 ms: at most 41 (each begins with its first record after the
    // last commit, so the commits' own time makes them fewer, how many fewer depends on the
    // machine's speed).
    assert!((1..=41).contains(&n), "{n} transactions of 50 ms in 2 s");
    assert_eq!(aborted, n / 4, "every fourth of {n} transactions aborts");
    let records = u(&r, &["txn", "committed_records"]) + u(&r, &["txn", "aborted_records"]);
    assert_eq!(records, u(&r, &["sent"]));
    assert_eq!(
        u(&r, &["delivery", "consumed"]),
        u(&r, &["txn", "committed_records"])
    );
    assert_eq!(u(&r, &["delivery", "lost"]), 0);
}

#[test]
fn a_producer_fenced_by_a_newer_one_with_its_transactional_id_fails_the_run_saying_so() {
    common::require_broker();
    let id = format!("kb-test-fenced-{}", std::process::id());
    let start = |name: &str, quiet: bool| {
        Command::new(env!("CARGO_BIN_EXE_kafkabench"))
            .args(["run", &fixture(&format!("transactions/{name}.kbs"))])
            .args(quiet.then_some("--quiet"))
            .current_dir(common::repo())
            .env("NO_COLOR", "1")
            .env("KB_TEST_TXN_ID", &id)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the kafkabench binary starts")
    };
    // Fenced only once its transactions are initialised and records acknowledged (else the
    // fencer's producer would be the older one), however long a busy machine took for that.
    let mut fenced = Watched::new(start("run_fenced", false));
    fenced.wait_for_acked("run 1 of 1", Duration::from_secs(60));
    let started = Instant::now();
    let fencer = start("run_fencer", true)
        .wait_with_output()
        .expect("fencer ran");
    expect_exit(&fencer, 0);
    let (code, out, err, _) = fenced.wait(Duration::from_secs(120));
    let all = format!("{out}{err}");
    assert_eq!(code, 3, "a failed run:\n{all}");
    assert!(all.contains("fenced"), "the cause is named:\n{all}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the fenced run stopped instead of waiting out its 90 s"
    );
}
