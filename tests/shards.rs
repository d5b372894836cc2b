//! Sharded runs as a user runs them on one machine: N `run --shard I/N` processes and one
//! `kafkabench collect`, coordinated through the local broker's control topic; the merged
//! report, one verdict per check, one exit code, and nothing left on the broker.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::{self, expect_exit, fixture, kafkabench, repo, wait_bounded};
use rdkafka::ClientConfig;

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .args(args)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kafkabench starts")
}

/// `kafkabench collect` of a fixture over `n` shards, with `extra` arguments.
fn collector(file: &str, id: &str, n: u32, deadline: &str, extra: &[&str]) -> Child {
    let n = n.to_string();
    let mut args = vec![
        "collect",
        "--run-id",
        id,
        "--shards",
        &n,
        "--deadline",
        deadline,
    ];
    let f = fixture(file);
    args.insert(1, &f);
    args.extend_from_slice(extra);
    spawn(&args)
}

fn shard(file: &str, i: u32, n: u32, id: &str) -> Child {
    shard_with(file, i, n, id, &[])
}

fn shard_with(file: &str, i: u32, n: u32, id: &str, extra: &[&str]) -> Child {
    let (f, at) = (fixture(file), format!("{i}/{n}"));
    let mut args = vec!["run", &f, "--quiet", "--shard", &at, "--run-id", id];
    args.extend_from_slice(extra);
    spawn(&args)
}

/// A collector and `n` shards of `file` run to their end: every process exits 0 within
/// `bound`; the collector's stdout and stderr.
fn sharded(
    file: &str,
    id: &str,
    n: u32,
    deadline: &str,
    extra: &[&str],
    bound: Duration,
) -> (String, String) {
    let collector = collector(file, id, n, deadline, extra);
    let shards: Vec<Child> = (0..n).map(|i| shard(file, i, n, id)).collect();
    for (i, s) in shards.into_iter().enumerate() {
        let (code, stdout, stderr, _) = wait_bounded(s, bound);
        assert_eq!(code, 0, "shard {i}:\n{stdout}\n{stderr}");
    }
    let (code, stdout, stderr, _) = wait_bounded(collector, bound);
    assert_eq!(code, 0, "collector:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

/// Scrapes `--metrics` on `port` until the process behind it is gone (it waits for one scrape
/// after its end); the last scrape's text.
fn scrape_to_the_end(port: u16) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(150);
        let mut last = String::new();
        while Instant::now() < until {
            match common::http_get(port, "/metrics") {
                Some((200, body)) => last = body,
                _ if !last.is_empty() => break,
                _ => {}
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        last
    })
}

/// A sample's value in a scrape: the line starting with `name{` and holding `with`.
fn sample(text: &str, name: &str, with: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(&format!("{name}{{")) && l.contains(with))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

/// A run id of this test's own, so its topics are told apart from any other.
fn run_id(tag: &str) -> String {
    format!("{tag}{}", kafkabench::plan::new_run_id())
}

/// The topics on the broker whose names contain `id`.
fn topics_with(id: &str) -> Vec<String> {
    common::broker_topics(|n| n.contains(id))
}

/// The run's topics still listed once their deletion has had time to show: Kafka deletes a
/// topic after answering the request, and a loaded broker's metadata lists it a while longer.
fn topics_left(id: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = topics_with(id);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("the result file")).expect("valid JSON")
}

#[test]
fn three_shards_and_a_collector_give_the_scenarios_totals_judged_once() {
    common::require_broker();
    let id = run_id("s3");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("merged.json");
    // Every process serves --metrics; a scraper reads each to its end.
    let ports: Vec<u16> = (0..4).map(|_| common::free_port()).collect();
    let addr = |k: usize| format!("127.0.0.1:{}", ports[k]);
    let scrapes: Vec<_> = ports.iter().map(|&p| scrape_to_the_end(p)).collect();
    let collector = collector(
        "shards/steady.kbs",
        &id,
        3,
        "2m",
        &[
            "--json",
            out.to_str().unwrap(),
            "--metrics",
            &addr(3),
            "--metrics-linger",
            "30s",
        ],
    );
    let shards: Vec<Child> = (0..3)
        .map(|i| {
            let a = addr(i as usize);
            let extra = ["--metrics", &a, "--metrics-linger", "30s"];
            shard_with("shards/steady.kbs", i, 3, &id, &extra)
        })
        .collect();
    for (i, s) in shards.into_iter().enumerate() {
        let (code, stdout, stderr, _) = wait_bounded(s, Duration::from_secs(150));
        assert_eq!(code, 0, "shard {i}:\n{stdout}\n{stderr}");
        // A shard reports its share and judges nothing.
        assert!(stdout.contains(&format!("shard {i} of 3")), "{stdout}");
        assert!(
            !stdout.contains("PASS") && !stdout.contains("FAIL"),
            "{stdout}"
        );
    }
    let (code, stdout, stderr, _) = wait_bounded(collector, Duration::from_secs(150));
    assert_eq!(code, 0, "collector:\n{stdout}\n{stderr}");
    assert!(stdout.contains("merged 3 of 3 shards"), "{stdout}");
    for check in [
        "acked == 15000",
        "lost == 0",
        "duplicated == 0",
        "e2e.p99 < 30s",
    ] {
        let verdicts = stdout.matches(&format!("PASS  {check}")).count();
        assert_eq!(verdicts, 1, "`{check}` judged once:\n{stdout}");
    }
    let v = json(&out);
    let r = &v["runs"][0];
    assert_eq!(r["sent"], 15000, "{r}");
    assert_eq!(r["acked"], 15000);
    let (achieved, target) = (
        r["achieved_rate"].as_f64().unwrap(),
        r["target_rate"].as_f64().unwrap(),
    );
    assert_eq!(target, 3000.0);
    // How close to the target a shard keeps is the machine's (bench/ measures pacing). The
    // merge's part holds anywhere: the rate is over the union of the shards' spans, so not
    // their sum (9000/s); no shard sends early, so not above the target (but for the few
    // schedule gaps between the shards' first records, docs/distributed.md).
    assert!(
        achieved > 0.0 && achieved <= target * 1.01,
        "achieved {achieved}/s against the target {target}/s"
    );
    // What each shard showed live adds up to the merged total the collector exposed and wrote.
    let texts: Vec<String> = scrapes.into_iter().map(|h| h.join().unwrap()).collect();
    let mut live_sum = 0.0;
    for (i, t) in texts[..3].iter().enumerate() {
        assert!(
            t.contains("kafkabench_finished 1"),
            "shard {i} lingered for a scrape:\n{t}"
        );
        let acked = sample(
            t,
            "kafkabench_records_acked_total",
            &format!("shard=\"{i}/3\""),
        );
        live_sum += acked.unwrap_or_else(|| panic!("shard {i}'s own series:\n{t}"));
    }
    assert_eq!(live_sum, 15000.0, "the shards' scraped totals");
    let merged = sample(&texts[3], "kafkabench_records_acked_total", "shard=\"all\"");
    assert_eq!(merged, Some(15000.0), "the collector's:\n{}", texts[3]);
    // The collector measured the disk once, for the whole topic.
    assert!(r["disk_bytes"].as_u64().unwrap() > 15000 * 100, "{r}");
    assert_eq!(
        topics_left(&id),
        Vec::<String>::new(),
        "nothing left behind"
    );
}

#[test]
fn eight_shards_at_a_low_rate_meet_at_both_barriers() {
    common::require_broker();
    let id = run_id("s8");
    let (stdout, stderr) = sharded(
        "shards/many.kbs",
        &id,
        8,
        "2m",
        &[],
        Duration::from_secs(150),
    );
    assert!(stderr.contains("8 shards warmed up"), "{stderr}");
    assert!(stdout.contains("PASS  acked == 2000"), "{stdout}");
    assert_eq!(topics_left(&id), Vec::<String>::new());
}

#[test]
fn a_shard_killed_mid_run_makes_the_collector_exit_3_naming_it_with_the_others_results() {
    common::require_broker();
    let id = run_id("sk");
    let started = Instant::now();
    let mut collector = collector("shards/long.kbs", &id, 3, "45s", &[]);
    // The collector's progress, line by line, to know when the measured phase runs.
    let (tx, rx) = mpsc::channel();
    let err = collector.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let mut shards: Vec<Child> = (0..3)
        .map(|i| shard("shards/long.kbs", i, 3, &id))
        .collect();
    let measuring = rx
        .iter()
        .any(|line| line.contains("the measured phase starts"));
    assert!(measuring, "the collector never started the measured phase");
    std::thread::sleep(Duration::from_secs(3));
    shards[1].kill().expect("kill shard 1");
    let _ = shards[1].wait();
    let code = loop {
        if let Some(status) = collector.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed() > Duration::from_secs(150) {
            let _ = collector.kill();
            panic!("the collector did not end within its deadline");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let took = started.elapsed();
    let mut stdout = String::new();
    collector
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let stderr = reader.join().unwrap();
    assert_eq!(code, 3, "collector:\n{stdout}\n{stderr}");
    // The 45 s deadline, then merging, the disk and the topics' deletion, each bounded by
    // its own timeout: far short of a shard's own deadline (the collector's plus 2 min).
    assert!(
        took < Duration::from_secs(100),
        "bounded by its deadline: {took:?}"
    );
    assert!(
        stderr.contains("shard 1 sent no result of run 1 before the deadline"),
        "{stderr}"
    );
    // The others' results are merged and reported.
    assert!(stdout.contains("merged 2 of 3 shards"), "{stdout}");
    for i in [0, 2] {
        let s = shards.remove(if i == 0 { 0 } else { 1 });
        let (code, stdout, stderr, _) = wait_bounded(s, Duration::from_secs(60));
        assert_eq!(code, 0, "shard {i}:\n{stdout}\n{stderr}");
    }
    assert_eq!(
        topics_left(&id),
        Vec::<String>::new(),
        "nothing left behind"
    );
}

#[test]
fn a_shard_of_another_scenario_is_refused_and_named() {
    common::require_broker();
    let id = run_id("sh");
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("many.kbs");
    let text = std::fs::read_to_string(repo().join(fixture("shards/many.kbs"))).unwrap();
    std::fs::create_dir_all(dir.path().join("common")).unwrap();
    std::fs::copy(
        repo().join(fixture("shards/common/cluster.kbs")),
        dir.path().join("common/cluster.kbs"),
    )
    .unwrap();
    std::fs::write(&other, text.replace("400/s", "500/s")).unwrap();
    let collector = collector("shards/many.kbs", &id, 2, "40s", &[]);
    let good = shard("shards/many.kbs", 0, 2, &id);
    let bad = spawn(&[
        "run",
        other.to_str().unwrap(),
        "--quiet",
        "--shard",
        "1/2",
        "--run-id",
        &id,
    ]);
    let (code, stdout, stderr, _) = wait_bounded(bad, Duration::from_secs(90));
    assert_eq!(code, 3, "the refused shard:\n{stdout}\n{stderr}");
    assert!(stderr.contains("refused this shard"), "{stderr}");
    assert!(stderr.contains("another scenario"), "{stderr}");
    let (code, stdout, stderr, _) = wait_bounded(collector, Duration::from_secs(90));
    assert_eq!(code, 3, "collector:\n{stdout}\n{stderr}");
    assert!(stderr.contains("shard 1 refused"), "{stderr}");
    let _ = wait_bounded(good, Duration::from_secs(60));
    assert_eq!(topics_left(&id), Vec::<String>::new());
}

#[test]
fn what_a_sharded_run_cannot_do_is_said_before_anything_connects() {
    let f = fixture("shards/group.kbs");
    let out = kafkabench(&["run", &f, "--shard", "0/3", "--run-id", "x1"]);
    let stderr = common::text(&out.stderr);
    expect_exit(&out, 2);
    assert!(stderr.contains("consumer group"), "{stderr}");
    assert!(stderr.contains("2 partitions for 3 shards"), "{stderr}");
    let out = kafkabench(&["collect", &f, "--shards", "3", "--run-id", "x1"]);
    expect_exit(&out, 2);
    let steady = fixture("shards/steady.kbs");
    let out = kafkabench(&["run", &steady, "--shard", "0/3"]);
    expect_exit(&out, 2);
    assert!(common::text(&out.stderr).contains("--shard needs --run-id"));
    let out = kafkabench(&["run", &steady, "--shard", "3/3", "--run-id", "x1"]);
    expect_exit(&out, 2);
    assert!(common::text(&out.stderr).contains("from 0 to 2"));
}

#[test]
fn a_run_id_whose_control_topic_was_left_behind_is_refused_not_mixed_in() {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    use rdkafka::client::DefaultClientContext;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    common::require_broker();
    let id = run_id("so");
    // What a collector killed mid-run leaves: its control topic, with its messages.
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", common::bootstrap())
        .create()
        .expect("a producer");
    let topic = format!("kafkabench-control-{id}");
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", common::bootstrap())
        .create()
        .expect("an admin client");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let created = rt.block_on(admin.create_topics(
        [&NewTopic::new(&topic, 1, TopicReplication::Fixed(1))],
        &AdminOptions::new(),
    ));
    assert!(created.expect("created").iter().all(Result::is_ok));
    p.send(
        BaseRecord::<str, str>::to(&topic)
            .key("topics")
            .payload(r#"{"kind":"topics","collector":1,"round":1,"of":{"run":0}}"#),
    )
    .expect("queued");
    p.flush(Duration::from_secs(30)).expect("written");
    let out = kafkabench(&[
        "collect",
        &fixture("shards/many.kbs"),
        "--run-id",
        &id,
        "--shards",
        "2",
        "--deadline",
        "30s",
    ]);
    let stderr = common::text(&out.stderr);
    expect_exit(&out, 3);
    assert!(stderr.contains("was used before"), "{stderr}");
    assert!(stderr.contains("new --run-id"), "{stderr}");
    // Only the left-behind control topic: the collector created no run topic.
    assert_eq!(topics_with(&id), vec![topic.clone()]);
    let _ = rt.block_on(admin.delete_topics(&[topic.as_str()], &AdminOptions::new()));
}

#[test]
fn a_shard_that_never_starts_is_named_and_the_others_are_stopped_not_left_waiting() {
    common::require_broker();
    let id = run_id("sn");
    let collector = collector("shards/many.kbs", &id, 2, "15s", &[]);
    let only = shard("shards/many.kbs", 0, 2, &id);
    let (code, stdout, stderr, took) = wait_bounded(collector, Duration::from_secs(120));
    assert_eq!(code, 3, "collector:\n{stdout}\n{stderr}");
    assert!(
        stderr.contains("shard 1 was not ready for run 1 by the deadline"),
        "{stderr}"
    );
    // The 15 s deadline and the topics' deletion (its own 30 s bound), not more.
    assert!(took < Duration::from_secs(70), "{took:?}");
    // The shard that came is told to stop at once, not at its own (later) deadline.
    let (code, stdout, stderr, took) = wait_bounded(only, Duration::from_secs(90));
    assert_eq!(code, 3, "shard 0:\n{stdout}\n{stderr}");
    assert!(stderr.contains("the collector stopped the run"), "{stderr}");
    // At once, with room for a busy machine: its own deadline is minutes away.
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert_eq!(topics_left(&id), Vec::<String>::new());
}

#[test]
fn trials_across_shards_are_each_merged_from_every_shard_and_combined_as_on_one_machine() {
    common::require_broker();
    let id = run_id("st");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trials.json");
    // Only the collector is told --repeat: it names every trial to the shards.
    let (stdout, _) = sharded(
        "shards/trials.kbs",
        &id,
        2,
        "3m",
        &["--repeat", "3", "--json", out.to_str().unwrap()],
        Duration::from_secs(200),
    );
    assert!(stdout.contains("merged 2 of 2 shards"), "{stdout}");
    assert!(stdout.contains("PASS  acked == 3600"), "{stdout}");
    let v = json(&out);
    for (k, step) in ["a", "b"].iter().enumerate() {
        let run = &v["runs"][k];
        let trials = run["trials"]["results"].as_array().expect("trials kept");
        assert_eq!(trials.len(), 3, "{step}: {run}");
        for (t, trial) in trials.iter().enumerate() {
            // Each trial is both shards' halves of one schedule, on the trial's own topic.
            assert_eq!(trial["sent"], 1200, "{step} trial {}: {trial}", t + 1);
            assert_eq!(trial["delivery"]["consumed"], 1200, "{trial}");
            assert!(
                trial["topic"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("-t{}", t + 1)),
                "{trial}"
            );
        }
        assert_eq!(run["sent"], 3600);
        assert_eq!(run["delivery"]["lost"], 0);
        let fig = run["trials"]["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["metric"] == "throughput")
            .expect("the throughput over the trials");
        assert_eq!(fig["values"].as_array().unwrap().len(), 3, "{fig}");
    }
    // The merged file keeps each shard's machine, and claims no single one.
    let machines = v["shard_environments"]
        .as_array()
        .expect("the shards' machines");
    assert_eq!(machines.len(), 2, "{machines:?}");
    assert!(
        machines.iter().all(|m| m["host"].is_object()),
        "{machines:?}"
    );
    // The collector's environment is the cluster's alone.
    assert!(v["environment"]["host"].is_null(), "{}", v["environment"]);
    assert_eq!(
        topics_left(&id),
        Vec::<String>::new(),
        "no trial's topic left behind"
    );
}

/// Per partition, a sharded run's merged records are the partition's log end offset
/// (GetOffsetShell: no warm-up, idempotent, so every acked record is one offset and nothing
/// else is), summing to the acked count; and its file keeps the brokers' configs as an
/// unsharded run's does, asked once by the collector.
#[test]
fn a_sharded_run_counts_each_partition_exactly_and_keeps_the_brokers_configs() {
    common::require_broker();
    let id = run_id("sp");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("placed.json");
    let extra = ["--json", out.to_str().unwrap(), "--keep-topics"];
    sharded(
        "shards/placed.kbs",
        &id,
        2,
        "2m",
        &extra,
        Duration::from_secs(150),
    );
    let v = json(&out);
    let r = &v["runs"][0];
    let topic = r["topic"].as_str().expect("the run's topic").to_string();
    let leo = common::reader::offset_shell(&common::bootstrap(), &topic, -1);
    for t in topics_with(&id) {
        common::reader::delete_topic(&common::bootstrap(), &t);
    }
    assert_eq!(r["acked"], 4000, "{r}");
    let parts = r["partitions"].as_array().expect("figures per partition");
    let counted: Vec<(i64, i64)> = parts
        .iter()
        .map(|p| (p["id"].as_i64().unwrap(), p["records"].as_i64().unwrap()))
        .collect();
    let kafka: Vec<(i64, i64)> = leo.iter().map(|&(p, o)| (i64::from(p), o)).collect();
    assert_eq!(
        counted, kafka,
        "records per partition against GetOffsetShell"
    );
    let brokers: i64 = (r["brokers"].as_array().expect("figures per broker").iter())
        .map(|b| b["records"].as_i64().unwrap())
        .sum();
    assert_eq!(brokers, 4000, "{}", r["brokers"]);
    // The cluster and its brokers' configs, once; no single machine claimed.
    let env = &v["environment"];
    assert!(env["host"].is_null(), "{env}");
    let configs = &env["cluster"]["configs"]["brokers"];
    let n = env["cluster"]["brokers"].as_u64().expect("the cluster");
    assert_eq!(configs.as_array().map(Vec::len), Some(n as usize), "{env}");
    for b in configs.as_array().unwrap() {
        assert!(b["note"].is_null() && b["configs"].is_array(), "{b}");
    }
    assert_eq!(v["shard_environments"].as_array().map(Vec::len), Some(2));
}
