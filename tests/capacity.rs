//! The capacity search end to end: its plan, and on the local broker a search whose limit is
//! known — a broker-side client quota — with the answer checked by plain fixed-rate runs at
//! 0.9 × and 1.2 × the capacity it found, its probes never above an overload nor at twice a
//! failure, and its plan's worst case above its real time; across shards, with a long phase
//! (`hold`) whose length every shard gets.

use crate::common::{self, expect_exit, fixture, kafkabench, reader::kafka_tool};
use std::time::Duration;

#[test]
fn plan_shows_the_search_its_slo_per_cell_and_its_worst_case() {
    let out = kafkabench(&["plan", &fixture("capacity/steps.kbs")]);
    insta::assert_snapshot!("capacity_plan", expect_exit(&out, 0));
}

/// A scenario that searches the capacity of producer `client` under its quota, on a topic of
/// `partitions`, with `extra` capacity settings.
fn quota_search(client: &str, partitions: u32, extra: &str) -> String {
    format!(
        r#"scenario "capacity_quota" {{
  topic "capacity-quota" {{ partitions = {partitions} }}
  producer {{ client.id = "{client}"  linger.ms = 20 }}
  workload {{ payload = random(size: 1KiB) }}
  capacity {{
    from      = 100/s
    to        = 20k/s
    precision = 5%
    probe     = 3s
    warmup    = 1s
    {extra}
    slo {{ ack.p99 < 200ms }}
  }}
  expect {{ capacity > 100/s }}
}}
"#
    )
}

/// The worst case `kafkabench plan` states for the search in `file`, seconds.
fn planned_worst_case(file: &std::path::Path) -> f64 {
    let out = kafkabench(&["plan", file.to_str().unwrap(), "--format", "json"]);
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the plan as JSON");
    plan["runs"][0]["estimate"]["seconds"]
        .as_f64()
        .expect("a search's estimate")
}

/// No probe above the first overload, and none at twice a failed rate unless a rate between
/// them passed (the failure was a fluke): the search never doubles past a failure.
fn assert_no_probe_past_a_failure(probes: &[serde_json::Value]) {
    let overload = |p: &serde_json::Value| {
        p["misses"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["kind"] == "rate" || m["kind"] == "slip")
    };
    let rate = |p: &serde_json::Value| p["target"].as_f64().unwrap();
    for (i, p) in probes.iter().enumerate() {
        let before = &probes[..i];
        if let Some(o) = before.iter().find(|q| overload(q)) {
            assert!(
                rate(p) < rate(o),
                "{} after an overload at {}",
                rate(p),
                rate(o)
            );
        }
        for f in before.iter().filter(|q| q["pass"] == false) {
            let fluke = before
                .iter()
                .any(|q| q["pass"] == true && rate(q) > rate(f) && rate(q) < rate(p));
            assert!(
                rate(p) < 2.0 * rate(f) || fluke,
                "{} is twice the failed {}",
                rate(p),
                rate(f)
            );
        }
    }
}

/// Fixed-rate runs of the same producer at `rates`, judged by the same SLO and sustain test.
fn fixed_runs(client: &str, rates: &[f64]) -> String {
    let rates: Vec<String> = rates.iter().map(|r| format!("{r:.0}/s")).collect();
    format!(
        r#"scenario "capacity_fixed" {{
  topic "capacity-fixed-{{r}}" {{ partitions = 1 }}
  matrix {{ r = [{}] }}
  producer {{ client.id = "{client}"  linger.ms = 20 }}
  workload {{
    payload  = random(size: 1KiB)
    rate     = {{r}}
    duration = 3s
    warmup   = 1s
  }}
  expect {{
    ack.p99 < 200ms
    throughput >= 0.95 * rate.target
  }}
}}
"#,
        rates.join(", ")
    )
}

/// Sets (or with None removes) the broker's produce quota of `client`, in bytes per second.
fn quota(client: &str, bytes_per_sec: Option<u64>) {
    let b = common::bootstrap();
    let change = match bytes_per_sec {
        Some(n) => [
            "--add-config".to_string(),
            format!("producer_byte_rate={n}"),
        ],
        None => [
            "--delete-config".to_string(),
            "producer_byte_rate".to_string(),
        ],
    };
    kafka_tool(
        "org.apache.kafka.tools.ConfigCommand",
        &[
            "--bootstrap-server",
            &b,
            "--alter",
            &change[0],
            &change[1],
            "--entity-type",
            "clients",
            "--entity-name",
            client,
        ],
    );
}

/// Removes the quota when the test ends, passed or not.
struct QuotaGuard(String);

impl Drop for QuotaGuard {
    fn drop(&mut self) {
        quota(&self.0, None);
    }
}

#[test]
fn a_search_under_a_quota_finds_it_and_fixed_runs_confirm_the_answer() {
    common::require_broker();
    // The broker throttles this client at 500 KiB/s: about 490 records of 1 KiB a second once
    // batch and request overhead are counted. The machine's own limit is far above that.
    let client = format!("kb-quota-{}", std::process::id());
    quota(&client, Some(512_000));
    let _guard = QuotaGuard(client.clone());
    let dir = tempfile::tempdir().unwrap();
    // The same search across three shards and a collector, under a quota of its own client
    // id (shards share the id, so the broker throttles them as one client), alongside.
    let sharded = ShardedSearch::start(dir.path());

    let v = common::run_text_json(dir.path(), "search", &quota_search(&client, 1, ""), 0).1;
    let run = &v["runs"][0];
    let c = &run["capacity"];
    let probes = c["probes"].as_array().unwrap();
    assert_no_probe_past_a_failure(probes);
    // `plan`'s worst case is never below what the search took, canaries included.
    let worst = planned_worst_case(&dir.path().join("search.kbs"));
    let took = c["elapsed_secs"].as_f64().unwrap();
    assert!(worst >= took, "planned at worst {worst}s, took {took}s");
    // The quota is 500 records/s of 1 KiB; a quota lets short bursts through, so the answer
    // may lie a little above it, within the search's precision (5 %).
    let cap = c["capacity"].as_f64().expect("a capacity");
    assert!((400.0..=525.0).contains(&cap), "capacity {cap}/s: {c}");
    assert_eq!(c["limit"], "cluster", "the quota throttles: {c}");
    let probes = c["probes"].as_array().unwrap();
    assert!(probes.len() >= 6, "bracket and refinement: {probes:?}");
    // Every failing probe says why, with its figures; the one at the capacity passed.
    for p in probes {
        let pass = p["pass"].as_bool().unwrap();
        assert_eq!(pass, p["misses"].as_array().unwrap().is_empty(), "{p}");
        assert!(p["result"]["ack"]["histogram"].is_string(), "{p}");
    }
    // The capacity is the fitted rate at which the SLO holds in 80 % of probes, inside its
    // band; the bracket's pass is at or below it and its failure above it.
    let band = &c["band"];
    let (low, high) = (
        band["low"].as_f64().unwrap(),
        band["high"].as_f64().unwrap(),
    );
    assert!(low <= cap && cap <= high, "{c}");
    let b = &c["bracket"];
    assert!(
        b["pass"].as_f64().unwrap() <= cap && b["fail"].as_f64().unwrap() > cap,
        "{c}"
    );
    // The run's own figures are those of the passing probe nearest the capacity, below it.
    let shown = run["target_rate"].as_f64().unwrap();
    assert!(shown <= cap && shown >= 0.9 * low, "{run}");

    // Plain fixed-rate runs, which know nothing of the search: 0.9 × C meets the SLO and
    // keeps up, 1.2 × C does not. Under a client id of their own with the same quota: the
    // broker measures a client's rate over the last 11 s, so under the search's id the bytes
    // of its last probes above the quota would throttle the first one.
    let fixed_client = format!("{client}-fixed");
    quota(&fixed_client, Some(512_000));
    let _fixed_guard = QuotaGuard(fixed_client.clone());
    let fixed = common::run_text_json(
        dir.path(),
        "fixed",
        &fixed_runs(&fixed_client, &[0.9 * cap, 1.2 * cap]),
        1,
    )
    .1;
    let verdicts = fixed["assertions"].as_array().unwrap();
    let held = |run: &str| {
        verdicts
            .iter()
            .filter(|a| a["runs"].to_string().contains(run))
            .all(|a| a["pass"].as_bool().unwrap())
    };
    let (low, high) = (
        format!("r={:.0}/s", 0.9 * cap),
        format!("r={:.0}/s", 1.2 * cap),
    );
    assert!(held(&low), "0.9 × capacity fails: {verdicts:?}");
    assert!(!held(&high), "1.2 × capacity passes: {verdicts:?}");

    // The sharded search: the collector drove every probe on all three shards and judged
    // their merged recordings; it finds the capacity the single process found, within the
    // search's precision (5 %), and the same limit. (Fixed sharded runs at 0.9 × and 1.2 ×
    // its answer, three times each: bench/sharded.sh.)
    let s = sharded.finish();
    let sc = &s["runs"][0]["capacity"];
    assert_no_probe_past_a_failure(sc["probes"].as_array().unwrap());
    // The long phase ran across the shards: each long probe measured for 12 s, its series cut
    // into 100 ms intervals so that the steady-state detector could judge it; a rate held.
    let hold = &sc["hold"];
    let long = hold["probes"].as_array().expect("long probes");
    assert!(long.len() >= 3, "{hold}");
    for p in long {
        let r = &p["result"];
        let secs = r["elapsed_secs"].as_f64().unwrap();
        assert!(
            (11.0..=13.5).contains(&secs),
            "a long probe of {secs}s: {p}"
        );
        assert_eq!(r["series"]["interval_secs"].as_f64(), Some(0.1), "{p}");
        assert_ne!(r["steady_after"]["state"], "too_short", "{p}");
    }
    let held = hold["answer"]["rate"].as_f64().expect("a rate that holds");
    assert_eq!(hold["answer"]["state"], "holds", "{hold}");
    assert!(held <= 1.05 * sc["capacity"].as_f64().unwrap(), "{hold}");
    let sharded_cap = sc["capacity"].as_f64().expect("a sharded capacity");
    assert!(
        (sharded_cap - cap).abs() <= 0.05 * cap,
        "sharded {sharded_cap}/s against one process's {cap}/s: {sc}"
    );
    // The quota shows first as latency and then as a rate not kept: at the boundary either
    // is the cluster's doing, never kafkabench's own (its sender or reader).
    assert!(
        sc["limit"] == "cluster" || sc["limit"] == "slo",
        "{}",
        sc["limit"]
    );
    let probes = sc["probes"].as_array().unwrap();
    assert!(probes.len() >= 6, "bracket and refinement: {probes:?}");
    for p in probes {
        // Every probe is the three shards' halves of one schedule merged: its rate is the
        // search's, not a shard's share of it.
        let (target, achieved) = (
            p["target"].as_f64().unwrap(),
            p["achieved"].as_f64().unwrap(),
        );
        assert!(achieved <= target * 1.02, "{p}");
        if p["pass"] == true {
            assert!(achieved >= 0.9 * target, "a passing probe kept up: {p}");
        }
    }
}

/// A capacity search run as three `run --shard I/3` processes and a `collect`, under a quota
/// of its own client id.
struct ShardedSearch {
    /// Taken by `finish`; whatever is left when the test fails is killed on drop, so that a
    /// failed test leaves no shard behind to load the machine for the tests after it.
    collector: Option<std::process::Child>,
    shards: Vec<std::process::Child>,
    json: std::path::PathBuf,
    _quota: QuotaGuard,
}

impl ShardedSearch {
    fn start(dir: &std::path::Path) -> ShardedSearch {
        let client = format!("kb-quota-sharded-{}", std::process::id());
        quota(&client, Some(512_000));
        let guard = QuotaGuard(client.clone());
        let file = dir.join("sharded.kbs");
        std::fs::write(&file, quota_search(&client, 3, "hold = 12s")).unwrap();
        let json = dir.join("sharded.json");
        let id = format!("cq{}", kafkabench::plan::new_run_id());
        let spawn = |args: &[&str]| {
            std::process::Command::new(env!("CARGO_BIN_EXE_kafkabench"))
                .args(args)
                .current_dir(common::repo())
                .env("NO_COLOR", "1")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("kafkabench starts")
        };
        let f = file.to_str().unwrap();
        let collector = spawn(&[
            "collect",
            f,
            "--run-id",
            &id,
            "--shards",
            "3",
            "--json",
            json.to_str().unwrap(),
        ]);
        let shards = (0..3)
            .map(|i| {
                let at = format!("{i}/3");
                spawn(&["run", f, "--quiet", "--shard", &at, "--run-id", &id])
            })
            .collect();
        ShardedSearch {
            collector: Some(collector),
            shards,
            json,
            _quota: guard,
        }
    }

    /// Waits for every process (each exits 0) and reads the collector's result file.
    fn finish(mut self) -> serde_json::Value {
        let limit = Duration::from_secs(700);
        for i in 0..self.shards.len() {
            // One at a time out of `self`: a failure leaves the rest to be killed on drop.
            let (code, stdout, stderr, _) = common::wait_bounded(self.shards.remove(0), limit);
            assert_eq!(code, 0, "shard {i}:\n{stdout}\n{stderr}");
        }
        let collector = self.collector.take().expect("finished once");
        let (code, stdout, stderr, _) = common::wait_bounded(collector, limit);
        assert_eq!(code, 0, "collector:\n{stdout}\n{stderr}");
        assert!(stdout.contains("merged 3 of 3 shards"), "{stdout}");
        serde_json::from_slice(&std::fs::read(&self.json).expect("a result file")).unwrap()
    }
}

impl Drop for ShardedSearch {
    fn drop(&mut self) {
        for c in self.shards.iter_mut().chain(self.collector.as_mut()) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A reader held back on purpose (a pause after every record read, through the test hook
/// `KAFKABENCH_TEST_HOLD_READER_US`): the run says its reader fell behind, and a search whose
/// probes miss their end-to-end SLO names kafkabench's reader as the limit, not the cluster.
#[test]
fn a_reader_held_back_is_named_by_the_run_and_by_the_search() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let run = r#"scenario "held_reader" {
  topic "held-reader" { partitions = 2 }
  consumer { }
  workload {
    payload  = random(size: 100B)
    rate     = 8k/s
    duration = 1s
    warmup   = 0
  }
}
"#;
    let search = r#"scenario "held_reader_search" {
  topic "held-reader-search" { partitions = 2 }
  consumer { }
  workload { payload = random(size: 100B) }
  capacity {
    from   = 8k/s
    to     = 10k/s
    probe  = 1s
    warmup = 0s
    slo { e2e.p99 < 200ms }
  }
}
"#;
    let held = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kafkabench"))
            .args(["run", path.to_str().unwrap(), "--quiet"])
            .env("KAFKABENCH_TEST_HOLD_READER_US", "500")
            .env("NO_COLOR", "1")
            .output()
            .expect("kafkabench runs");
        common::text(&out.stdout)
    };
    let out = held("run.kbs", run);
    assert!(
        out.contains("kafkabench's reader fell behind"),
        "the run names its reader:\n{out}"
    );
    let out = held("search.kbs", search);
    assert!(
        out.contains("load generator (reader)"),
        "the search names kafkabench's reader as its limit:\n{out}"
    );
}
