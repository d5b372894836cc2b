//! The fault timeline against the tests' real 3-node cluster (tests/common/cluster.rs, beside
//! CI's broker, never touching it): a leader killed mid-run loses nothing with acks=all and
//! idempotence, and whatever ends kafkabench in a fault window leaves every broker running.
//!
//! The cluster is started once for the test process (the first test to need it starts it) and
//! stopped when the process exits, failed tests included.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::cluster::NODES;
use crate::common::{self, repo, text, wait_bounded};

/// The process state letter of `pid` (`S`, `R`, `T` for stopped by a signal...).
fn process_state(pid: i32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // pid (comm) STATE ...: the command may hold spaces, the state follows its ')'.
    stat.rsplit(')')
        .next()
        .and_then(|rest| rest.trim().chars().next())
        .unwrap_or('?')
}

/// Every node is running: kafka-local says so, and no process is stopped by a signal.
fn assert_all_running(context: &str) {
    let nodes = NODES.nodes();
    assert_eq!(nodes.len(), 3, "{context}: {nodes:?}");
    for (id, pid, state) in &nodes {
        assert_eq!(state, "running", "{context}: node {id}: {nodes:?}");
        let pid = pid.unwrap_or_else(|| panic!("{context}: node {id} has no pid"));
        assert!(
            !matches!(process_state(pid), 'T' | 't' | 'Z' | '?'),
            "{context}: node {id} (pid {pid}) is in state {}",
            process_state(pid)
        );
    }
    let status = NODES.kafka_local(&["status"]);
    let said = text(&status.stdout);
    assert!(
        !said.contains("PAUSED") && !said.contains("STOPPED"),
        "{context}:\n{said}"
    );
}

/// Waits until node `id` is in `state` (the timeline has fired); fails past `limit`.
fn wait_for_state(id: i32, state: &str, limit: Duration) {
    let started = Instant::now();
    while started.elapsed() < limit {
        if NODES.nodes().iter().any(|(i, _, s)| *i == id && s == state) {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!(
        "node {id} was not {state} within {limit:?}: {:?}",
        NODES.nodes()
    );
}

fn write_scenario(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("faults.kbs");
    std::fs::write(&path, body).unwrap();
    path
}

fn kafkabench(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kafkabench"));
    c.args(args)
        .args(["--bootstrap", &NODES.bootstrap()])
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("KAFKA_LOCAL_HOME", NODES.home())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: a signal to the kafkabench process this test spawned.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// The durability scenario of scenarios/cluster/durability.kbs, small: a leader killed 3 s
/// into an 10 s run, restarted 3 s later.
const DURABILITY: &str = r#"
scenario "durability" {
  topic "durability-{step}" {
    partitions          = 3
    replication         = 3
    min.insync.replicas = 2
  }
  producer { linger.ms = 5ms }
  consumer { }
  workload {
    duration = 10s
    rate     = 2000/s
    payload  = random(size: 256B)
  }
  steps {
    safe { producer.acks = all  producer.enable.idempotence = true }
    fast { producer.acks = 1    producer.enable.idempotence = false }
  }
  faults {
    at 3s kill broker leader(partition 0) for 3s
    at 1s run "echo leader=$KB_PARTITION_LEADER broker=$KB_BROKER_HOST:$KB_BROKER_PORT topic=$KB_TOPIC"
  }
  expect {
    lost == 0        when step == safe
    duplicated == 0  when step == safe
  }
}
"#;

#[test]
fn the_safe_step_loses_nothing_when_the_leader_is_killed_and_the_broker_comes_back() {
    NODES.up();
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), DURABILITY);
    let json = dir.path().join("out.json");
    let child = kafkabench(&[
        "run",
        scenario.to_str().unwrap(),
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ])
    .spawn()
    .unwrap();
    let (code, out, err, _) = wait_bounded(child, Duration::from_secs(120));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("2 of 2 checks held"), "{out}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for run in doc["runs"].as_array().unwrap() {
        // The command saw the resolved target and the run's topic in its environment.
        let command = &run["faults"]["actions"][1];
        let said = command["outcome"].as_str().unwrap();
        let topic = run["topic"].as_str().unwrap();
        assert!(
            said.starts_with("ok (exit 0): leader=")
                && said.contains("broker=127.0.0.1:19")
                && said.ends_with(&format!("topic={topic}")),
            "{command}"
        );
        let action = &run["faults"]["actions"][0];
        assert_eq!(action["at_secs"], 3.0, "{action}");
        // Never early, and it lasts its 3 s; how late a busy machine fires it (resolving the
        // leader, kafka-local's kill) is not the timeline's promise, only that it is within
        // the 10 s run.
        let fired = action["fired_secs"].as_f64().unwrap();
        let ended = action["ended_secs"].as_f64().unwrap();
        assert!((3.0..10.0).contains(&fired), "{action}");
        assert!(ended >= 6.0 && ended >= fired, "{action}");
        assert!(
            action["target"].as_str().unwrap().starts_with("broker "),
            "{action}"
        );
        assert!(
            action["outcome"].as_str().unwrap().starts_with("ok"),
            "{action}"
        );
    }
    let safe = &doc["runs"][0]["delivery"];
    assert_eq!(safe["lost"], 0, "{safe}");
    assert_eq!(safe["incomplete"], false, "{safe}");
    assert_all_running("after the durability runs");
}

/// A long pause of broker 2, so the signal lands inside its window.
const LONG_PAUSE: &str = r#"
scenario "pause" {
  topic "pause" { partitions = 3  replication = 3 }
  producer { acks = all }
  workload { duration = 40s  rate = 500/s }
  faults { at 1s pause broker 2 for 30s }
}
"#;

#[test]
fn sigterm_in_a_pause_window_continues_the_paused_broker_before_exiting() {
    NODES.up();
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), LONG_PAUSE);
    let child = kafkabench(&["run", scenario.to_str().unwrap(), "--quiet"])
        .spawn()
        .unwrap();
    wait_for_state(2, "paused", Duration::from_secs(60));
    signal(&child, libc::SIGTERM);
    let (code, out, err, _) = wait_bounded(child, Duration::from_secs(60));
    assert_eq!(code, 130, "stdout:\n{out}\nstderr:\n{err}");
    assert_all_running("after SIGTERM in a pause window");
}

/// A long kill of broker 3.
const LONG_KILL: &str = r#"
scenario "kill" {
  topic "kill" { partitions = 3  replication = 3 }
  producer { acks = all }
  workload { duration = 40s  rate = 500/s }
  faults { at 1s kill broker 3 for 30s }
}
"#;

#[test]
fn a_second_signal_restarts_the_killed_broker_before_the_process_exits() {
    NODES.up();
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), LONG_KILL);
    let child = kafkabench(&["run", scenario.to_str().unwrap(), "--quiet"])
        .spawn()
        .unwrap();
    wait_for_state(3, "stopped", Duration::from_secs(60));
    // The second ends the process without the orderly cleanup (apart from a moment, so the
    // two are not merged into one).
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGINT);
    let (code, out, err, _) = wait_bounded(child, Duration::from_secs(90));
    assert_eq!(code, 130, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("interrupted again"), "{err}");
    assert_all_running("after a second signal in a kill window");
}

#[test]
fn built_in_faults_against_a_cluster_kafka_local_did_not_start_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), LONG_KILL);
    let out = Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(["run", scenario.to_str().unwrap(), "--quiet"])
        .args(["--bootstrap", "127.0.0.1:1"])
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("KAFKA_LOCAL_HOME", NODES.home())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("kill, pause and restart act on a cluster started by scripts/kafka-local")
            && err.contains("none runs at 127.0.0.1:1"),
        "{err}"
    );
}

#[test]
fn the_cluster_scenarios_check_and_keep_the_canonical_layout() {
    // CI's suite over scenarios/ does not read scenarios/cluster/ (it needs three brokers).
    for file in ["durability", "availability"] {
        let path = format!("scenarios/cluster/{file}.kbs");
        let out = common::kafkabench(&["check", &path]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let out = common::kafkabench(&["fmt", "--check", &path]);
        assert!(out.status.success(), "{}", text(&out.stdout));
    }
}
