//! `kafkabench k8s` as a user runs it: the manifests of a sharded run, snapshot-tested, and
//! the fields that matter read back through the typed Kubernetes structs.

use std::process::{Command, Output};

use crate::common::{self, expect_exit, fixture, text};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, PodSpec};
use serde::Deserialize;

const SECRET_VALUE: &str = "hunter2-never-in-a-manifest";

/// `kafkabench k8s ARGS` with the variables the fixture reads set, one of them to a value
/// that must not appear anywhere in the output.
fn k8s(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kafkabench"))
        .arg("k8s")
        .args(args)
        .current_dir(common::repo())
        .env("NO_COLOR", "1")
        .env("KB_SASL_USERNAME", "kafkabench")
        .env("KB_SASL_PASSWORD", SECRET_VALUE)
        .output()
        .expect("the kafkabench binary runs")
}

fn orders(extra: &[&str]) -> Output {
    let file = fixture("k8s/orders.kbs");
    let mut args = vec![
        file.as_str(),
        "--shards",
        "4",
        "--image",
        "registry.example.com/kafkabench:0.1",
        "--run-id",
        "t1",
        "--namespace",
        "bench",
    ];
    args.extend(extra);
    k8s(&args)
}

/// The stream's documents: the ConfigMap, the shards' Job, the collector's Job.
fn objects(yaml: &str) -> (ConfigMap, Job, Job) {
    let docs: Vec<serde_yaml::Value> = serde_yaml::Deserializer::from_str(yaml)
        .map(|d| serde_yaml::Value::deserialize(d).unwrap())
        .collect();
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds[..3],
        ["ConfigMap", "Job", "Job"],
        "and no Secret object"
    );
    let typed = |i: usize| serde_yaml::to_string(&docs[i]).unwrap();
    (
        serde_yaml::from_str(&typed(0)).unwrap(),
        serde_yaml::from_str(&typed(1)).unwrap(),
        serde_yaml::from_str(&typed(2)).unwrap(),
    )
}

fn pod(job: &Job) -> &PodSpec {
    job.spec.as_ref().unwrap().template.spec.as_ref().unwrap()
}

#[test]
fn the_manifests_of_a_scenario_with_an_include_and_env_reads() {
    let out = orders(&[]);
    insta::assert_snapshot!(expect_exit(&out, 0));
}

#[test]
fn every_pod_serves_metrics_on_a_named_port_annotated_for_prometheus_and_a_pod_monitor_selects_them(
) {
    let (_, shards, collector) = objects(&expect_exit(&orders(&[]), 0));
    for job in [&shards, &collector] {
        let template = &job.spec.as_ref().unwrap().template;
        let notes = template
            .metadata
            .as_ref()
            .unwrap()
            .annotations
            .as_ref()
            .unwrap();
        assert_eq!(notes["prometheus.io/scrape"], "true");
        assert_eq!(notes["prometheus.io/port"], "9464");
        assert_eq!(notes["prometheus.io/path"], "/metrics");
        let port = &pod(job).containers[0].ports.as_ref().unwrap()[0];
        assert_eq!(
            (port.name.as_deref(), port.container_port),
            (Some("metrics"), 9464)
        );
    }
    // --pod-monitor adds the Prometheus Operator's object, selecting the run's pods.
    let yaml = expect_exit(&orders(&["--pod-monitor", "--metrics-port", "9100"]), 0);
    let docs: Vec<serde_yaml::Value> = serde_yaml::Deserializer::from_str(&yaml)
        .map(|d| serde_yaml::Value::deserialize(d).unwrap())
        .collect();
    let m = &docs[3];
    assert_eq!(m["apiVersion"].as_str(), Some("monitoring.coreos.com/v1"));
    assert_eq!(m["kind"].as_str(), Some("PodMonitor"));
    assert_eq!(m["metadata"]["namespace"].as_str(), Some("bench"));
    assert_eq!(
        m["spec"]["selector"]["matchLabels"]["kafkabench/run-id"].as_str(),
        Some("t1")
    );
    assert_eq!(
        m["spec"]["podMetricsEndpoints"][0]["port"].as_str(),
        Some("metrics")
    );
    assert!(yaml.contains("containerPort: 9100"));
    // No metrics: no port, no annotation, no flag; a PodMonitor of nothing is refused.
    let none = expect_exit(&orders(&["--metrics-port", "0"]), 0);
    assert!(!none.contains("--metrics") && !none.contains("prometheus.io"));
    let refused = orders(&["--metrics-port", "0", "--pod-monitor"]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

#[test]
fn the_shards_are_an_indexed_job_run_once_each_with_its_index_in_the_command() {
    let (_, shards, _) = objects(&expect_exit(&orders(&[]), 0));
    let spec = shards.spec.as_ref().unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!((spec.parallelism, spec.completions), (Some(4), Some(4)));
    assert_eq!(
        spec.backoff_limit,
        Some(0),
        "a failed shard is never run again"
    );
    let pod = pod(&shards);
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    let c = &pod.containers[0];
    let command = c.command.as_ref().unwrap().join(" ");
    assert_eq!(
        command,
        "kafkabench run /scenario/orders.kbs --shard $(JOB_COMPLETION_INDEX)/4 --run-id t1 \
         --metrics :9464 --metrics-linger 60s"
    );
    let index = &c.env.as_ref().unwrap()[0];
    assert_eq!(index.name, "JOB_COMPLETION_INDEX");
    let field = index
        .value_from
        .as_ref()
        .unwrap()
        .field_ref
        .as_ref()
        .unwrap();
    assert!(field
        .field_path
        .contains("batch.kubernetes.io/job-completion-index"));
    let requests = c.resources.as_ref().unwrap().requests.as_ref().unwrap();
    assert!(requests.contains_key("cpu") && requests.contains_key("memory"));
    assert!(
        c.resources.as_ref().unwrap().limits.is_none(),
        "no CPU throttling"
    );
    let anti = pod
        .affinity
        .as_ref()
        .unwrap()
        .pod_anti_affinity
        .as_ref()
        .unwrap();
    let term = &anti
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .unwrap()[0];
    assert_eq!(term.topology_key, "kubernetes.io/hostname");
    assert_eq!(shards.metadata.namespace.as_deref(), Some("bench"));
}

#[test]
fn secrets_are_only_referenced_never_written() {
    let yaml = expect_exit(&orders(&[]), 0);
    assert!(!yaml.contains(SECRET_VALUE));
    let (_, shards, collector) = objects(&yaml);
    for job in [&shards, &collector] {
        let env = pod(job).containers[0].env.as_ref().unwrap();
        let read: Vec<&str> = env
            .iter()
            .filter(|e| e.name != "JOB_COMPLETION_INDEX")
            .map(|e| {
                assert!(e.value.is_none(), "{} has a value written", e.name);
                let r = e
                    .value_from
                    .as_ref()
                    .unwrap()
                    .secret_key_ref
                    .as_ref()
                    .unwrap();
                assert_eq!(r.name, "kb-orders-on-k8s-env");
                assert_eq!(r.key, e.name);
                e.name.as_str()
            })
            .collect();
        assert_eq!(
            read,
            ["KAFKA_BOOTSTRAP", "KB_SASL_USERNAME", "KB_SASL_PASSWORD"]
        );
    }
}

#[test]
fn the_config_map_holds_the_scenario_its_include_and_its_data_file_in_their_places() {
    let (cm, shards, collector) = objects(&expect_exit(&orders(&[]), 0));
    let data = cm.data.unwrap();
    assert_eq!(data.len(), 3);
    assert!(data["01-cluster.kbs"].contains("sasl.password = env(\"KB_SASL_PASSWORD\")"));
    assert!(data["02-orders.jsonl"].starts_with("{\"order\":1"));
    for job in [&shards, &collector] {
        let volume = &pod(job).volumes.as_ref().unwrap()[0];
        let items = volume.config_map.as_ref().unwrap().items.as_ref().unwrap();
        let paths: Vec<&str> = items.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            ["orders.kbs", "shared/cluster.kbs", "data/orders.jsonl"]
        );
    }
    let command = pod(&collector).containers[0]
        .command
        .as_ref()
        .unwrap()
        .join(" ");
    assert_eq!(
        command,
        "kafkabench collect /scenario/orders.kbs --run-id t1 --shards 4 \
         --metrics :9464 --metrics-linger 60s"
    );
}

#[test]
fn out_dir_gets_one_file_per_object_in_the_order_to_apply_them() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("manifests");
    let out = orders(&["--out", out_dir.to_str().unwrap()]);
    expect_exit(&out, 0);
    let mut names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["01-scenario.yaml", "02-shards.yaml", "03-collector.yaml"]
    );
    let stream = expect_exit(&orders(&[]), 0);
    let joined: Vec<String> = names
        .iter()
        .map(|n| std::fs::read_to_string(out_dir.join(n)).unwrap())
        .collect();
    assert_eq!(
        joined.join("---\n"),
        stream,
        "the same documents as the stream"
    );
}

#[test]
fn a_secret_written_in_the_file_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.kbs");
    std::fs::write(
        &file,
        "scenario \"s\" {\n  cluster { sasl.password = \"hunter2\" }\n  topic \"t\" { partitions = 2 }\n  workload { messages = 10 }\n}\n",
    )
    .unwrap();
    let out = k8s(&[file.to_str().unwrap(), "--shards", "2", "--image", "kb:1"]);
    expect_exit(&out, 2);
    let err = text(&out.stderr);
    assert!(
        err.contains("s.kbs:2 holds a secret value written in the file"),
        "{err}"
    );
    assert!(err.contains("read it with env(\"NAME\")"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn files_over_the_config_map_limit_are_refused_naming_a_volume() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.kbs");
    std::fs::write(
        &file,
        "scenario \"big\" {\n  topic \"t\" { partitions = 2 }\n  workload { messages = 10  payload = file(\"big.jsonl\") }\n}\n",
    )
    .unwrap();
    let line = format!("{}\n", "x".repeat(1023));
    std::fs::write(dir.path().join("big.jsonl"), line.repeat(1100)).unwrap();
    let out = k8s(&[file.to_str().unwrap(), "--shards", "2", "--image", "kb:1"]);
    expect_exit(&out, 2);
    let err = text(&out.stderr);
    assert!(err.contains("over a ConfigMap's limit of 1 MiB"), "{err}");
    assert!(err.contains("the largest is big.jsonl"), "{err}");
    assert!(err.contains("volume"), "{err}");
}

#[test]
fn a_malformed_namespace_quantity_or_shard_count_is_refused() {
    for bad in [
        &["--namespace", "Bench_1"][..],
        &["--cpu", "two"][..],
        &["--memory", "1GB"][..],
    ] {
        let out = orders(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out.stderr));
    }
    let file = fixture("k8s/orders.kbs");
    let zero = k8s(&[&file, "--shards", "0", "--image", "kb:1"]);
    assert_eq!(zero.status.code(), Some(2));
}

#[test]
fn a_plan_the_pods_would_refuse_gets_no_manifests() {
    // A share group: every shard and the collector refuse it at their start, so the
    // manifests would start pods that fail. Refused here, all of its runs at once.
    let out = k8s(&[
        "scenarios/share_work_queue.kbs",
        "--shards",
        "2",
        "--image",
        "kb:1",
    ]);
    expect_exit(&out, 2);
    assert!(out.stdout.is_empty(), "no manifest is written");
    let err = text(&out.stderr);
    assert_eq!(err.matches("is read by a share group").count(), 2, "{err}");
    assert!(
        err.contains("`kafkabench run` runs it on one machine"),
        "{err}"
    );
}

#[test]
fn a_capacity_search_gets_manifests_whose_collector_drives_the_probes() {
    // The collector runs the search and names each probe to the shards: both Jobs are the
    // plain sharded run's, with nothing of the search on the shards' command line.
    let out = k8s(&[
        "scenarios/capacity_linger_codec.kbs",
        "--shards",
        "2",
        "--image",
        "kb:1",
        "--run-id",
        "t1",
        "--metrics-port",
        "0",
    ]);
    let yaml = expect_exit(&out, 0);
    let (_, shards, collector) = objects(&yaml);
    let command = |j: &Job| pod(j).containers[0].command.as_ref().unwrap().join(" ");
    assert_eq!(
        command(&shards),
        "kafkabench run /scenario/capacity_linger_codec.kbs --shard $(JOB_COMPLETION_INDEX)/2 \
         --run-id t1"
    );
    assert_eq!(
        command(&collector),
        "kafkabench collect /scenario/capacity_linger_codec.kbs --run-id t1 --shards 2"
    );
    // No shard sets a client.id of its own: they share the scenario's, so a broker's quota
    // per client id throttles them as the one client a single machine would be.
    assert!(!yaml.contains("client.id"), "{yaml}");
}
