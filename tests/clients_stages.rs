//! The run stage's other shapes with a producer on a worker (issue 51, item 8's first stage):
//! `repeat`, a capacity search and a sharded run with `client = java` and `client = franz-go`,
//! each small enough for CI's busy two cores. What each checks is a count the schedule fixes
//! (a trial's or a probe's records, a shard's share), never a timing.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::{self, wait_bounded};

/// The clients other than librdkafka.
const WORKERS: &[&str] = &["java", "franz-go"];

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Three trials per client: each a whole run of its own on its own topic, counted by
/// kafkabench's (librdkafka) reader, and the run's counts the trials' sums.
#[test]
fn repeat_runs_every_trial_on_the_workers() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let name = common::unique("kb-clients-repeat");
    let text = format!(
        r#"
scenario "clients_repeat" {{
  repeat = 3
  topic "{name}-{{client}}" {{ partitions = 2 }}
  matrix {{ client = [{}] }}
  producer {{ client = {{client}} }}
  consumer {{ }}
  workload {{
    messages = 600
    rate     = 1000/s
    payload  = random(size: 100B)
  }}
}}
"#,
        WORKERS.join(", ")
    );
    let (said, v) = common::run_json_with(dir.path(), &name, &text, &[], 0);
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), WORKERS.len(), "{said}");
    for (r, client) in runs.iter().zip(WORKERS) {
        assert_eq!(r["producer_client"]["name"], *client, "{r}");
        let trials = r["trials"]["results"].as_array().expect("every trial kept");
        assert_eq!(trials.len(), 3, "{client}");
        let mut topics: Vec<&str> = trials
            .iter()
            .map(|t| t["topic"].as_str().unwrap())
            .collect();
        for t in trials {
            assert_eq!(u(&t["acked"]), 600, "{client}: {t}");
            assert_eq!(u(&t["delivery"]["consumed"]), 600, "{client}: {t}");
            assert_eq!(t["delivery"]["lost"], 0, "{client}");
            assert_eq!(t["delivery"]["duplicated"], 0, "{client}");
        }
        topics.dedup();
        assert_eq!(topics.len(), 3, "{client}: a topic per trial");
        assert_eq!(u(&r["acked"]), 1800, "{client}: the trials' sum");
        assert_eq!(u(&r["delivery"]["consumed"]), 1800, "{client}");
    }
}

/// A capacity search per client: every probe is the worker sent at the probe's rate, so a
/// probe's measured records are its rate × its length (the schedule's count, however late the
/// records go out), and the search's figures come from the worker's completions.
#[test]
fn a_capacity_search_probes_each_rate_on_the_workers() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let name = common::unique("kb-clients-capacity");
    let text = format!(
        r#"
scenario "clients_capacity" {{
  topic "{name}-{{client}}" {{ partitions = 1 }}
  matrix {{ client = [{}] }}
  producer {{ client = {{client}} }}
  workload {{ payload = random(size: 200B) }}
  capacity {{
    from      = 100/s
    to        = 400/s
    precision = 25%
    probe     = 2s
    warmup    = 500ms
    slo {{ ack.p99 < 20s }}
  }}
}}
"#,
        WORKERS.join(", ")
    );
    let (said, v) = common::run_json_with(dir.path(), &name, &text, &[], 0);
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), WORKERS.len(), "{said}");
    for (r, client) in runs.iter().zip(WORKERS) {
        assert_eq!(r["producer_client"]["name"], *client, "{r}");
        let probes = r["capacity"]["probes"].as_array().expect("the probes");
        assert!(!probes.is_empty(), "{client}: {r}");
        let mut rates: Vec<f64> = Vec::new();
        for p in probes {
            let target = p["target"].as_f64().unwrap();
            let sent = u(&p["result"]["sent"]);
            let due = target * 2.0;
            assert!(
                (sent as f64 - due).abs() <= 1.0,
                "{client}: a probe at {target}/s for 2 s sent {sent}"
            );
            assert_eq!(p["result"]["failed"], 0, "{client}: {p}");
            assert!(u(&p["result"]["acked"]) > 0, "{client}");
            rates.push(target);
        }
        // A search whose first rate held goes on above it (`to` is four times `from`); one
        // that failed there (a slip on a busy machine) stops, and its one probe is checked.
        if probes[0]["pass"] == true {
            rates.dedup();
            assert!(rates.len() >= 2, "{client}: the search moved: {rates:?}");
        }
    }
}

/// Two shards and a collector with the producers on each worker: each shard's worker sends its
/// share of the one schedule on its own partitions; the collector's merged counts are the
/// scenario's, verified by kafkabench's reader (librdkafka) on every shard.
#[test]
fn a_sharded_run_splits_the_schedule_between_workers() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    for client in WORKERS {
        let id = format!("kbcs{}", kafkabench::plan::new_run_id());
        let file = dir.path().join(format!("sharded-{client}.kbs"));
        std::fs::write(
            &file,
            format!(
                r#"
scenario "clients_sharded" {{
  topic "kb-test-clients-shards" {{ partitions = 4 }}
  producer {{ client = {client} }}
  consumer {{ }}
  workload {{
    producers = 2
    messages  = 4000
    rate      = 2000/s
    payload   = random(size: 100B)
    key       = uniform(100)
  }}
  expect {{
    acked == 4000
    lost == 0
    duplicated == 0
  }}
}}
"#
            ),
        )
        .unwrap();
        let out = dir.path().join(format!("merged-{client}.json"));
        let f = file.to_str().unwrap();
        let spawn = |args: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_kafkabench"))
                .args(args)
                .current_dir(common::repo())
                .env("NO_COLOR", "1")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("kafkabench starts")
        };
        let collector = spawn(&[
            "collect",
            f,
            "--run-id",
            &id,
            "--shards",
            "2",
            "--deadline",
            "3m",
            "--json",
            out.to_str().unwrap(),
        ]);
        let shards: Vec<_> = (0..2)
            .map(|i| {
                let at = format!("{i}/2");
                spawn(&["run", f, "--quiet", "--shard", &at, "--run-id", &id])
            })
            .collect();
        for (i, s) in shards.into_iter().enumerate() {
            let (code, stdout, stderr, _) = wait_bounded(s, Duration::from_secs(180));
            assert_eq!(code, 0, "{client} shard {i}:\n{stdout}\n{stderr}");
        }
        let (code, stdout, stderr, _) = wait_bounded(collector, Duration::from_secs(180));
        assert_eq!(code, 0, "{client} collector:\n{stdout}\n{stderr}");
        assert!(stdout.contains("merged 2 of 2 shards"), "{stdout}");
        let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let r = &v["runs"][0];
        assert_eq!(r["producer_client"]["name"], *client, "{r}");
        assert_eq!(u(&r["sent"]), 4000, "{client}: {r}");
        assert_eq!(u(&r["acked"]), 4000, "{client}");
        assert_eq!(u(&r["delivery"]["consumed"]), 4000, "{client}");
        assert_eq!(r["delivery"]["lost"], 0, "{client}");
        assert_eq!(r["delivery"]["duplicated"], 0, "{client}");
    }
}
