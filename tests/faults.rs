//! What a user gets when a run is cut short: by Ctrl-C (exit 130) or by losing the cluster
//! (exit 3). Either way the runs that finished are reported, the cut run is marked incomplete,
//! and kafkabench returns in bounded time. The broker-loss test starts a second local broker of
//! its own (scripts/kafka-local with another home and port) and kills it mid-run.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub(crate) use crate::common::broker::SecondBroker;
use crate::common::watch::Watched;
use crate::common::{self, fixture, repo, wait_bounded};

/// Starts kafkabench on the two-run fixture, writing JSON to `json`, and waits until the long
/// run (the second) has records acknowledged: the short one finished, the long one measuring,
/// however long a busy machine took to get there.
fn spawn_long_run(json: &std::path::Path, bootstrap: Option<&str>) -> Watched {
    let mut w = Watched::new(spawn(
        &["run", &fixture("run/long_paced.kbs"), "--json"],
        json,
        bootstrap,
    ));
    w.wait_for_acked("run 2 of 2", Duration::from_secs(120));
    w
}

/// Starts kafkabench with `args` and then `json`.
fn spawn(args: &[&str], json: &std::path::Path, bootstrap: Option<&str>) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kafkabench"));
    cmd.args(args)
        .arg(json)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(b) = bootstrap {
        cmd.args(["--bootstrap", b]);
    }
    cmd.spawn().expect("kafkabench starts")
}

fn runs(json: &std::path::Path) -> (serde_json::Value, Vec<serde_json::Value>) {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).expect("JSON report written"))
            .expect("valid JSON");
    let runs = doc["runs"].as_array().cloned().unwrap_or_default();
    (doc, runs)
}

#[test]
fn ctrl_c_reports_what_was_measured_and_exits_130() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let child = spawn_long_run(&json, None);
    signal(child.id(), libc::SIGINT);
    let (code, out, err, after) = child.wait(Duration::from_secs(90));
    assert_eq!(code, 130, "stdout:\n{out}\nstderr:\n{err}");
    // Bounded: the drain of ~1000 records a second and the topic's deletion, each bounded by
    // its own timeout (30 s), not the 120 s left of the run.
    assert!(
        after < Duration::from_secs(60),
        "took {after:?} after Ctrl-C"
    );
    assert!(out.contains("short") && out.contains("long"), "{out}");
    assert!(err.contains("interrupted"), "{err}");
    let (doc, runs) = runs(&json);
    assert_eq!(doc["outcome"], "interrupted");
    assert_eq!(doc["exit_code"], 130);
    assert_eq!(runs.len(), 2, "{doc}");
    assert_eq!(runs[0]["complete"], true);
    assert_eq!(runs[1]["complete"], false);
    let sent = runs[1]["sent"].as_u64().unwrap();
    // Records were acknowledged before the signal: partial, not empty, not the full 120 000.
    assert!((1..120_000).contains(&sent), "long run sent {sent}");
    assert_eq!(
        runs[1]["acked"].as_u64(),
        Some(sent),
        "the drain delivers what was sent"
    );
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: sends a signal to the child this test spawned.
    unsafe { libc::kill(pid as i32, sig) };
}

#[test]
fn sigterm_is_handled_like_ctrl_c_with_report_files_and_topic_deleted() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (dir.path().join("out.json"), dir.path().join("junit.xml"));
    let mut child = Watched::new(spawn(
        &[
            "run",
            &fixture("run/long_consumed.kbs"),
            "--junit",
            junit.to_str().unwrap(),
            "--json",
        ],
        &json,
        None,
    ));
    child.wait_for_acked("run 1 of 1", Duration::from_secs(120));
    signal(child.id(), libc::SIGTERM);
    let (code, out, err, after) = child.wait(Duration::from_secs(90));
    assert_eq!(code, 130, "stdout:\n{out}\nstderr:\n{err}");
    // Bounded as Ctrl-C is: by the drain's and the topic deletion's own timeouts.
    assert!(
        after < Duration::from_secs(60),
        "took {after:?} after SIGTERM"
    );
    assert!(out.contains("incomplete"), "{out}");
    assert!(
        out.contains("[run] run `run` was cut short: this figure is incomplete"),
        "{out}"
    );
    assert!(
        !out.contains("could not delete") && !err.contains("left behind"),
        "the topic is deleted:\n{out}\n{err}"
    );
    let (doc, runs) = runs(&json);
    assert_eq!(doc["outcome"], "interrupted");
    assert_eq!(runs[0]["complete"], false);
    // The consumer stopped with the run: what it had not read yet is not lost.
    let d = &runs[0]["delivery"];
    assert_eq!(d["incomplete"], true, "{d}");
    assert_eq!(d["lost"], serde_json::Value::Null, "{d}");
    let junit = std::fs::read_to_string(&junit).expect("JUnit written");
    assert!(junit.contains(r#"errors="1""#), "{junit}");
    assert!(junit.contains("<error message=\"interrupted"), "{junit}");
    assert!(junit.contains("<skipped message="), "{junit}");
}

#[test]
fn ctrl_c_while_connecting_exits_130_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    // Nothing answers there: connecting would wait for its 10 s bound.
    let child = spawn(
        &["run", &fixture("run/long_paced.kbs"), "--quiet", "--json"],
        &json,
        Some("127.0.0.1:1"),
    );
    wait_until_it_catches_sigint(child.id());
    signal(child.id(), libc::SIGINT);
    let (code, out, err, after) = wait_bounded(child, Duration::from_secs(20));
    assert_eq!(code, 130, "stdout:\n{out}\nstderr:\n{err}");
    // "At once": well before the ~9 s left of the connect bound, with room for a busy machine.
    assert!(
        after < Duration::from_secs(6),
        "took {after:?} after Ctrl-C"
    );
    let (doc, runs) = runs(&json);
    assert_eq!(doc["outcome"], "interrupted");
    assert!(runs.is_empty(), "{doc}");
}

/// Waits until process `pid` has its SIGINT handler installed (its `SigCgt` mask in /proc), so
/// the signal is kafkabench's to handle, however slowly a busy machine started it.
fn wait_until_it_catches_sigint(pid: u32) {
    let started = std::time::Instant::now();
    let catches = || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .is_some_and(|mask| mask & (1 << (libc::SIGINT - 1)) != 0)
    };
    while !catches() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "kafkabench never installed its SIGINT handler"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn losing_the_broker_mid_run_reports_finished_runs_and_exits_3() {
    let broker = SecondBroker::up(19092);
    let bootstrap = format!("127.0.0.1:{}", broker.port);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let child = spawn_long_run(&json, Some(&bootstrap));
    broker.kill_hard();
    let (code, out, err, after) = child.wait(Duration::from_secs(120));
    assert_eq!(code, 3, "stdout:\n{out}\nstderr:\n{err}");
    // Not the 110 s left of the run, nor message.timeout.ms: the loss is noticed and what is
    // held purged (README: within a second), then only bounded waits remain.
    assert!(
        after < Duration::from_secs(60),
        "took {after:?} after the broker died"
    );
    assert!(
        out.contains("short"),
        "the finished run is reported:\n{out}"
    );
    // Not librdkafka's "all brokers are down (0/1 brokers are down)": how long, and the bound.
    assert!(err.contains("no broker answered for"), "{err}");
    assert!(err.contains("lost_after = 5s"), "{err}");
    let (doc, runs) = runs(&json);
    assert_eq!(doc["outcome"], "run_failed");
    assert_eq!(doc["exit_code"], 3);
    assert_eq!(runs[0]["complete"], true, "{doc}");
    assert_eq!(runs[0]["failed"], 0);
    if let Some(cut) = runs.get(1) {
        assert_eq!(cut["complete"], false, "{doc}");
    }
}

/// Runs `scenario` against `broker`, pauses it (SIGSTOP: sockets open, nothing answered)
/// `after` the first acknowledgement for `pause`, and returns how the run ended, with the
/// stdout, the stderr and its only run from the result file.
fn run_through_a_pause(
    broker: &SecondBroker,
    scenario: &str,
    after: Duration,
    pause: Duration,
) -> (i32, String, String, serde_json::Value) {
    let bootstrap = format!("127.0.0.1:{}", broker.port);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut w = Watched::new(spawn(
        &["run", &fixture(scenario), "--keep-topics", "--json"],
        &json,
        Some(&bootstrap),
    ));
    w.wait_for_acked("run 1 of 1", Duration::from_secs(120));
    std::thread::sleep(after);
    broker.signal(libc::SIGSTOP);
    std::thread::sleep(pause);
    broker.signal(libc::SIGCONT);
    let (code, out, err, _) = w.wait(Duration::from_secs(180));
    let run = if code == 0 {
        runs(&json).1.swap_remove(0)
    } else {
        serde_json::Value::Null
    };
    (code, out, err, run)
}

/// The seconds of a run's periods of unavailability, as its result file gives them.
fn unavailable_secs(r: &serde_json::Value) -> f64 {
    let elapsed = r["elapsed_secs"].as_f64().unwrap();
    r["unavailable"]
        .as_array()
        .expect("unavailability recorded")
        .iter()
        .map(|o| o["to_secs"].as_f64().unwrap_or(elapsed) - o["from_secs"].as_f64().unwrap())
        .sum()
}

#[test]
fn a_paused_broker_is_measured_unavailability_not_the_end_of_the_run() {
    let broker = SecondBroker::up(19092);
    // The event: a broker that answers nothing for 3 s, sockets open (a GC pause).
    let (code, out, err, r) = run_through_a_pause(
        &broker,
        "run/blip.kbs",
        Duration::ZERO,
        Duration::from_secs(3),
    );
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("the cluster was unreachable for"), "{out}");
    assert_eq!(r["complete"], true, "{r}");
    let down = unavailable_secs(&r);
    assert!((2.0..=6.0).contains(&down), "unavailable {down} s: {r}");
    // Every delivery figure against the topic read back by another client.
    let topic = r["topic"].as_str().unwrap();
    let bootstrap = format!("127.0.0.1:{}", broker.port);
    let c = crate::common::reader::read_topic(&bootstrap, topic, "read_committed");
    let acked = r["acked"].as_u64().unwrap();
    let failed = r["failed"].as_u64().unwrap();
    let d = &r["delivery"];
    assert_eq!(
        acked + d["failed_but_delivered"].as_u64().unwrap(),
        c.distinct_measured(),
        "{r}"
    );
    assert_eq!(d["lost"], 0, "{r}");
    assert_eq!(d["duplicated"].as_u64().unwrap(), c.duplicates(), "{r}");
    assert_eq!(acked + failed, r["sent"].as_u64().unwrap(), "{r}");
}

#[test]
fn a_share_groups_acknowledgements_unanswered_through_a_pause_are_not_counted_lost() {
    let broker = SecondBroker::up(19092);
    // The event: the broker frozen for 5 s, past the members' 2 s request timeout, while their
    // fetches carry acknowledgements; it applies them when it wakes, the answers go nowhere.
    let (code, out, err, r) = run_through_a_pause(
        &broker,
        "share/paused.kbs",
        Duration::from_secs(1),
        Duration::from_secs(5),
    );
    assert_eq!(code, 0, "stderr:\n{err}\nstdout:\n{out}");
    let share = &r["share"];
    let unanswered = share["unanswered"].as_u64().unwrap_or(0);
    assert!(unanswered > 0, "no acknowledgement was in flight: {r}");
    // Against the topic read back by another client: every record written was accepted once
    // by the group (the log's copies, a producer's retries included), and none is lost.
    let topic = r["topic"].as_str().unwrap();
    let bootstrap = format!("127.0.0.1:{}", broker.port);
    let c = crate::common::reader::read_topic(&bootstrap, topic, "read_committed");
    let in_log = c.measured().count() as u64;
    assert_eq!(share["accepted"].as_u64().unwrap(), in_log, "{r}");
    assert_eq!(r["delivery"]["lost"], 0, "{r}");
    let acked = r["acked"].as_u64().unwrap();
    let failed_but_delivered = r["delivery"]["failed_but_delivered"].as_u64().unwrap();
    assert_eq!(acked + failed_but_delivered, c.distinct_measured(), "{r}");
    assert!(
        out.contains("acknowledgements unanswered (their request failed"),
        "{out}"
    );
}

#[test]
fn a_pause_after_an_idle_stretch_is_measured_from_the_silence_not_the_last_record() {
    let broker = SecondBroker::up(19092);
    // Paused 17 s to 24 s into the shape: the last record is 14 s old, and sending resumes
    // at 23 s into the paused broker.
    let (code, out, err, r) = run_through_a_pause(
        &broker,
        "run/blip_idle.kbs",
        Duration::from_secs(17),
        Duration::from_secs(7),
    );
    // Measured from the last record, the silence passes `lost_after = 12s` (exit 3).
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(r["complete"], true, "{r}");
    let down = unavailable_secs(&r);
    // The consumer's fetches go unanswered from the pause on: its 7 s, give or take a
    // statistics interval and the probe.
    assert!((5.5..=10.0).contains(&down), "unavailable {down} s: {r}");
    assert_eq!(r["delivery"]["lost"], 0, "{r}");
}

#[test]
fn a_second_interrupt_exits_at_once_naming_the_topic_left_behind() {
    let broker = SecondBroker::up(19092);
    let bootstrap = format!("127.0.0.1:{}", broker.port);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let child = spawn_long_run(&json, Some(&bootstrap));
    // A paused broker answers nothing and drops nothing: every wait on it runs to its bound.
    broker.signal(libc::SIGSTOP);
    signal(child.id(), libc::SIGINT);
    std::thread::sleep(Duration::from_secs(8));
    signal(child.id(), libc::SIGINT);
    let (code, out, err, after) = child.wait(Duration::from_secs(60));
    broker.signal(libc::SIGCONT);
    assert_eq!(code, 130, "stdout:\n{out}\nstderr:\n{err}");
    // "At once": not after the 30 s bounds of the waits on the paused broker.
    assert!(
        after < Duration::from_secs(6),
        "took {after:?} after the second interrupt"
    );
    assert!(
        err.contains("interrupted again") && err.contains("topic kb-test-long-long"),
        "names what it leaves behind:\n{err}"
    );
    assert!(err.contains("left behind"), "{err}");
}
