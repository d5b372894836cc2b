//! `kafkabench import omb` says what is true: what a file is comes first (a driver file in the
//! workload's place, a workload as `--driver`, another system's template, AutoMQ's topic
//! groups), and what the language can say is mapped (`consumers`, `backlog`, a pure drain,
//! a vendor's topic config) rather than called missing.

use std::path::Path;

use kafkabench::diagnostic::render_text;

use crate::import_omb::{
    assert_props, attempt, has, imported, in_dir, only_run, planned, says, DIR,
};

/// The rendered diagnostics of an import that must fail.
fn refused(workload: &str, driver: Option<&str>) -> String {
    let d = driver.map(|d| Path::new(DIR).join(d));
    let (res, sources) = attempt(&Path::new(DIR).join(workload), d.as_deref());
    match res {
        Ok(i) => panic!("{workload} should not import:\n{}", i.text),
        Err(diags) => render_text(&diags, &sources, false, 100),
    }
}

/// How many diagnostics a rendering holds.
fn count(rendered: &str) -> usize {
    rendered
        .lines()
        .filter(|l| l.trim_start().starts_with('×'))
        .count()
}

#[test]
fn automq_topic_groups_are_refused_at_topic_groups_before_any_missing_field() {
    let out = refused("forks/automq/refused/massive.yaml", None);
    assert_eq!(count(&out), 1, "one reason, the true one:\n{out}");
    assert!(!out.contains("has no `topics`"), "{out}");
    insta::assert_snapshot!("topic_groups_massive", out);
}

#[test]
fn one_topic_group_is_the_workload_with_the_top_level_duration_and_key() {
    let w = Path::new(DIR).join("workloads/one-topic-group.yaml");
    let out = imported(&w, None);
    let p = planned(&out.text);
    let run = only_run(&p);
    let w = &run.workload;
    assert_eq!((run.topic.partitions, w.topics, w.producers), (6, 2, 4));
    assert!(matches!(w.rate, kafkabench::model::RateSpec::Fixed(r) if r == 20_000.0));
    assert_eq!(
        w.consumers,
        Some(6),
        "3 consumers per subscription × 2 topics"
    );
    assert_eq!(w.duration, Some(std::time::Duration::from_secs(300)));
    // AutoMQ keys every group with the top level's distributor; the group's is a warning.
    assert!(
        matches!(w.key, kafkabench::model::KeySpec::Uniform(10_000)),
        "{:?}",
        w.key
    );
    let said = ["does not read the top level's topics", "groupName: main"];
    says(&out, &said, &["the topic group's `keyDistributor`"]);
}

#[test]
fn a_driver_file_given_as_the_workload_is_named_as_a_driver_file_alone() {
    let out = refused("drivers/kafka-exactly-once.yaml", None);
    assert_eq!(count(&out), 1, "{out}");
    insta::assert_snapshot!("driver_as_workload", out);
}

#[test]
fn a_workload_given_as_the_driver_is_named_as_a_workload() {
    let w = "workloads/1-topic-1-partition-1kb.yaml";
    let out = refused(w, Some(w));
    assert_eq!(count(&out), 1, "{out}");
    insta::assert_snapshot!("workload_as_driver", out);
}

#[test]
fn another_systems_ansible_template_is_named_by_its_driver_class_not_its_yaml() {
    let w = "workloads/1-topic-1-partition-1kb.yaml";
    let out = refused(w, Some("invalid/nats-ansible-template.yaml"));
    assert!(out.contains("is OMB's NATS driver"), "{out}");
    assert!(!out.contains("not valid YAML"), "{out}");
    let out = refused("invalid/nats-ansible-template.yaml", None);
    assert!(out.contains("this is an OMB driver file"), "{out}");
}

#[test]
fn confluent_backlog_workload_is_a_backlog_of_its_gigabytes_in_records() {
    let dir = Path::new(DIR).join("forks/confluent");
    let w = dir.join("workloads/backlog-1-topic-16-partitions-1kb.yaml");
    let d = dir.join("drivers/kafka-sync-group-all-1ms.yaml");
    let out = imported(&w, Some(&d));
    let p = planned(&out.text);
    let w = &only_run(&p).workload;
    // 100 GiB of 1 KiB records.
    let backlog = format!("{:?}", w.backlog);
    assert_eq!(
        (w.consumers, backlog.as_str()),
        (Some(1), "Some(Records(104857600))")
    );
    has(
        &out.text,
        &["builds the backlog during the test, at producerRate"],
    );
}

#[test]
fn consumer_only_with_a_backlog_is_a_pure_drain() {
    let w = Path::new(DIR).join("workloads/consumer-only-backlog.yaml");
    let out = imported(&w, None);
    let p = planned(&out.text);
    let w = &only_run(&p).workload;
    assert_eq!(w.messages, Some(0), "the producers send nothing measured");
    assert_eq!(w.consumers, Some(4));
    assert_eq!(format!("{:?}", w.backlog), "Some(Records(1048576))");
    says(&out, &["consumerOnly: true (Confluent's fork)"], &[]);
}

#[test]
fn a_kafka_3_topic_config_is_kept_with_a_warning_that_kafka_4_refuses_it() {
    let w = Path::new(DIR).join("workloads/1-topic-1-partition-1kb.yaml");
    let d = Path::new(DIR).join("drivers/kafka-sasl-scram.yaml");
    let out = imported(&w, Some(&d));
    let configs = only_run(&planned(&out.text)).topic.configs.clone();
    assert_props(&configs, "message.downconversion.enable=false");
    has(&out.text, &["removed in Kafka 4.0"]);
    let warned = out
        .warnings
        .iter()
        .any(|w| w.contains("`message.downconversion.enable` was removed in Kafka 4.0"));
    assert!(warned, "{:?}", out.warnings);
}

#[test]
fn a_field_of_no_fork_is_a_comment_and_a_warning_even_near_a_field_the_file_has() {
    let out = in_dir(Path::new(DIR), "fields-of-no-fork.yaml", None);
    planned(&out.text);
    let said = "topicCount: 2 is not an OMB workload field: OMB ignores fields it does not know";
    let warned = "fields-of-no-fork.yaml:3: `topicCount` is not an OMB workload field (nor a known fork's): ignored, as OMB does, and carried as a comment";
    says(&out, &[said], &[warned]);
}

#[test]
fn fgelcer_placeholders_are_their_defaults_and_its_transactions_a_transaction() {
    let d = "forks/fgelcer/drivers";
    let w = Path::new(DIR).join("forks/fgelcer/workloads/generic-workload.yaml");
    let out = imported(
        &w,
        Some(&Path::new(DIR).join(d).join("kafka-s4k-trans.yaml")),
    );
    let p = planned(&out.text);
    let run = only_run(&p);
    let wl = &run.workload;
    // `topics: ${TOPICS:-10}`, `partitionsPerTopic: ${PARTITIONS:-3}`, …: the fork's defaults.
    assert_eq!((wl.topics, run.topic.partitions, wl.producers), (10, 3, 10));
    assert!(matches!(wl.rate, kafkabench::model::RateSpec::Fixed(r) if r == 1_000_000.0));
    assert_eq!(wl.duration, Some(std::time::Duration::from_secs(15 * 60)));
    let tx = format!("{:?}", wl.transaction);
    assert_eq!(tx, "Some(TxnSpec { size: Messages(2500), abort: 0.0 })");
    let consumer = run.consumer.as_ref().unwrap();
    assert_props(consumer, "isolation.level=read_uncommitted");
    has(&out.text, &[r#"env("KAFKA_BOOTSTRAP", "localhost:9092")"#]);
    let said = [
        "${kafkaServiceUrl:-localhost:9092}: a placeholder fgelcer's fork of OMB fills",
        "${TOPICS:-10}: a placeholder",
        "each send writes its record 2500 times over",
        "useTransactions: true (fgelcer's fork)",
        "maxConcurrentTransactions: 10 (fgelcer's fork)",
    ];
    let placeholder = "is a placeholder (fgelcer's fork fills it from the environment)";
    let warned = [placeholder; 7].into_iter().chain([
        "`batchSize` (fgelcer's fork) writes each record 2500 times",
        "`maxConcurrentTransactions` (fgelcer's fork) is not imported",
    ]);
    says(&out, &said, &warned.collect::<Vec<_>>());
    // The sync driver's field is said as what it is, never "not a field of OMB's Kafka driver".
    let out = imported(
        &w,
        Some(&Path::new(DIR).join(d).join("kafka-s4k-sync.yaml")),
    );
    planned(&out.text);
    has(&out.text, &["sync: true (fgelcer's fork)"]);
    assert!(
        !out.text.contains("not a field of OMB's Kafka driver"),
        "{}",
        out.text
    );
    // Its workload fields too: the rate's climb is said, never "not an OMB workload field".
    let w = Path::new(DIR).join("forks/fgelcer/workloads/1-topic-1-partition-1kb-increment.yaml");
    let out = imported(&w, None);
    let p = planned(&out.text);
    let rate = &only_run(&p).workload.rate;
    assert!(matches!(rate, kafkabench::model::RateSpec::Fixed(r) if *r == 1000.0));
    let said =
        ["producerIncrementRate: 100 (fgelcer's fork): the rate climbs from producerStartRate"];
    let warned = [
        "is a placeholder",
        "`producerStartRate` (fgelcer's fork) is not imported",
        "`producerIncrementRate`",
        "`producerIncrementSeconds`",
    ];
    says(&out, &said, &warned);
    assert!(
        !out.text.contains("not an OMB workload field"),
        "{}",
        out.text
    );
}

#[test]
fn starlight_for_rabbitmq_and_a_helm_template_are_named_for_what_they_are() {
    let w = "workloads/1-topic-1-partition-1kb.yaml";
    for (name, driver) in [
        (
            "starlight_rabbitmq",
            "forks/fgelcer/refused/starlight-rabbitmq.yaml",
        ),
        (
            "helm_driver_template",
            "forks/redpanda/refused/driverConfig.yaml",
        ),
    ] {
        let out = refused(w, Some(driver));
        assert_eq!(count(&out), 1, "one reason, the true one:\n{out}");
        assert!(!out.contains("not valid YAML"), "{out}");
        insta::assert_snapshot!(name, out);
    }
}
