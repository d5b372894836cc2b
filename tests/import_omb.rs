//! `kafkabench import omb`: each OMB-format fixture under tests/fixtures/omb becomes a scenario
//! that checks clean with the real check stage and whose plan has the same topic, partitions,
//! sizes, rates and client settings as the OMB files; the scenario text is snapshotted. Bad
//! files are reported as rendered diagnostics, snapshotted too.

use crate::common;

use std::path::Path;

use kafkabench::diagnostic::{render_text, Diagnostics};
use kafkabench::import::{omb, Imported, OmbFiles};
use kafkabench::model::{KeySpec, PayloadSize, PayloadSpec, RateSpec, Warmup};
use kafkabench::plan::{plan, Plan, PlanOptions, RunPlan};
use kafkabench::source::Sources;

pub(crate) const DIR: &str = "tests/fixtures/omb";

/// The secrets the SASL driver fixture refers to, as a user would export them.
const SECRETS: &[(&str, &str)] = &[
    ("KAFKA_SASL_USERNAME", "bench-from-env"),
    ("KAFKA_SASL_PASSWORD", "password-from-env"),
    ("KAFKA_SSL_KEY_PASSWORD", "key-password-from-env"),
];

/// The scenario text for a workload (and driver) fixture, written as if into tests/fixtures/omb.
fn import(workload: &str, driver: Option<&str>) -> String {
    in_dir(Path::new(DIR), workload, driver).text
}

/// DIR/workloads/WORKLOAD (and DIR/drivers/DRIVER) imported.
pub(crate) fn in_dir(dir: &Path, workload: &str, driver: Option<&str>) -> Imported {
    let d = driver.map(|d| dir.join("drivers").join(d));
    imported(&dir.join("workloads").join(workload), d.as_deref())
}

/// An import of these files, written as if into tests/fixtures/omb.
pub(crate) fn imported(workload: &Path, driver: Option<&Path>) -> Imported {
    let (res, sources) = attempt(workload, driver);
    res.unwrap_or_else(|d| panic!("{}", render_text(&d, &sources, false, 100)))
}

pub(crate) fn attempt(
    workload: &Path,
    driver: Option<&Path>,
) -> (Result<Imported, Diagnostics>, Sources) {
    let mut sources = Sources::default();
    let out_dir = Path::new(DIR);
    let res = omb(
        OmbFiles {
            workload,
            driver,
            out_dir,
        },
        &mut sources,
    );
    (res, sources)
}

/// Checks and plans the text as `kafkabench check` and `plan` would a file in tests/fixtures/omb.
pub(crate) fn planned(text: &str) -> Plan {
    // Tests run in parallel: one may not remove the secrets while another checks with them.
    static SECRETS_SET: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _held = SECRETS_SET.lock().unwrap_or_else(|e| e.into_inner());
    for (k, v) in SECRETS {
        std::env::set_var(k, v);
    }
    let mut sources = Sources::default();
    let id = sources.add(Path::new(DIR).join("imported.kbs"), text.to_string());
    let ast = kafkabench::syntax::parse(id, text).unwrap_or_else(|d| {
        panic!(
            "the import does not parse:\n{}",
            render_text(&d.into(), &sources, false, 100)
        )
    });
    let checked = kafkabench::check::check(&ast, &sources);
    // One test process runs every test: the secrets must not reach the others' kafkabench.
    for (k, _) in SECRETS {
        std::env::remove_var(k);
    }
    let scenario = checked.unwrap_or_else(|d| {
        panic!(
            "the import does not check clean:\n{}\n{text}",
            render_text(&d, &sources, false, 100)
        )
    });
    let opts = PlanOptions {
        run_id: "000000".into(),
        ..PlanOptions::default()
    };
    plan(&scenario, &opts)
}

pub(crate) fn only_run(p: &Plan) -> &RunPlan {
    assert_eq!(p.runs.len(), 1, "an OMB workload is one run");
    &p.runs[0]
}

pub(crate) fn prop<'a>(props: &'a kafkabench::model::Props, key: &str) -> Option<&'a str> {
    props.get(key)
}

/// `expected`: `key=value` pairs, separated by spaces.
pub(crate) fn assert_props(props: &kafkabench::model::Props, expected: &str) {
    for (k, v) in expected
        .split_whitespace()
        .filter_map(|p| p.split_once('='))
    {
        assert_eq!(prop(props, k), Some(v), "{k} in {props:?}");
    }
}

/// Each of these is said in the text (a comment).
pub(crate) fn has(text: &str, said: &[&str]) {
    for said in said {
        assert!(text.contains(said), "no comment says `{said}`:\n{text}");
    }
}

fn minutes(m: u64) -> std::time::Duration {
    std::time::Duration::from_secs(60 * m)
}

#[test]
fn omb_shipped_1kb_workload_with_the_exactly_once_driver_keeps_every_setting() {
    let text = import(
        "1-topic-1-partition-1kb.yaml",
        Some("kafka-exactly-once.yaml"),
    );
    insta::assert_snapshot!("shipped_1kb_exactly_once", text);
    let p = planned(&text);
    let run = only_run(&p);
    assert_eq!(run.topic.name, "1-topic-1-partition-1kb-000000");
    assert_eq!((run.topic.partitions, run.topic.replication), (1, 3));
    assert_props(&run.topic.configs, "min.insync.replicas=2");
    assert_props(
        &run.producer,
        "\
        enable.idempotence=true max.in.flight=1 retries=2147483647 acks=all linger.ms=1 \
        batch.size=1048576",
    );
    let consumer = run.consumer.as_ref().expect("one subscription reads");
    assert_props(
        consumer,
        "auto.offset.reset=earliest enable.auto.commit=false max.partition.fetch.bytes=10485760",
    );
    let w = &run.workload;
    assert_eq!(w.duration, Some(minutes(15)));
    assert!(matches!(w.warmup, Some(Warmup::Duration(d)) if d == minutes(1)));
    assert!(matches!(w.rate, RateSpec::Fixed(r) if r == 50_000.0));
    assert_eq!(w.producers, 1);
    assert!(matches!(w.key, KeySpec::None));
    let file = std::fs::read(Path::new(DIR).join("payload/payload-1Kb.data")).unwrap();
    match &w.payload {
        PayloadSpec::File { lines, .. } => assert_eq!(**lines, vec![file]),
        other => panic!("the payload file is one constant record, not {other:?}"),
    }
}

#[test]
fn every_workload_field_and_a_secured_driver_map_to_their_nearest_settings() {
    let text = import("every-field.yaml", Some("kafka-sasl-scram.yaml"));
    insta::assert_snapshot!("every_field_sasl_scram", text);
    for literal in ["s3cr3t-pass", "trust-pass", "key-pass", "\"bench\"", "jaas"] {
        assert!(
            !text.contains(literal) || literal == "jaas" && !text.contains("jaas.config ="),
            "`{literal}` from the driver file reached the scenario:\n{text}"
        );
    }
    let p = planned(&text);
    let run = only_run(&p);
    assert_eq!((run.topic.partitions, run.topic.replication), (12, 3));
    assert_props(
        &run.topic.configs,
        "min.insync.replicas=2 retention.ms=3600000 unclean.leader.election.enable=false",
    );
    // Kafka 3's config, kept for the broker to judge (a Kafka 4 one refuses it up front).
    assert_props(&run.topic.configs, "message.downconversion.enable=false");
    // commonConfig reaches every client; its secrets come from the environment.
    for props in [&run.producer, run.consumer.as_ref().unwrap(), &run.admin] {
        assert_props(
            props,
            "\
            security.protocol=SASL_SSL sasl.mechanism=SCRAM-SHA-512 sasl.username=bench-from-env \
            sasl.password=password-from-env ssl.endpoint.identification.algorithm=none \
            client.id=omb-{zone.id} request.timeout.ms=30000",
        );
    }
    assert_props(
        &run.producer,
        "\
        acks=all linger.ms=5 batch.size=131072 compression.type=lz4 max.in.flight=5 \
        enable.idempotence=true queue.buffering.max.kbytes=65536 message.max.bytes=2097152 \
        socket.send.buffer.bytes=0 ssl.key.password=key-password-from-env \
        delivery.timeout.ms=120000",
    );
    let java_only = "max.block.ms key.serializer partitioner.class buffer.memory";
    for java_only in java_only.split(' ') {
        assert_eq!(prop(&run.producer, java_only), None, "{java_only}");
    }
    assert_props(
        run.consumer.as_ref().unwrap(),
        "\
        fetch.min.bytes=1 fetch.wait.max.ms=500 max.partition.fetch.bytes=10485760 \
        socket.receive.buffer.bytes=65536 isolation.level=read_committed",
    );
    let group = prop(run.consumer.as_ref().unwrap(), "group.id").unwrap();
    assert!(group.starts_with("kafkabench-"), "{group}");
    let w = &run.workload;
    assert_eq!(w.duration, Some(minutes(10)));
    assert!(matches!(w.warmup, Some(Warmup::Duration(d)) if d == minutes(2)));
    // 3 topics with 4 producers each: 12 producers, each on one topic, at the whole rate.
    assert!(matches!(w.rate, RateSpec::Fixed(r) if r == 30_000.0));
    assert_eq!(w.topics, 3);
    assert_eq!(w.producers, 12);
    assert!(matches!(w.key, KeySpec::Sequence));
    assert!(
        matches!(w.payload, PayloadSpec::Random { size: PayloadSize::Fixed(512), compressibility } if (compressibility - 0.75).abs() < 1e-9)
    );
    // 2 GiB of 512-byte records over 2 subscriptions: what each has unread when OMB's is full.
    assert_eq!(
        (w.consumers, format!("{:?}", w.backlog)),
        (Some(9), "Some(Records(2097152))".into())
    );
    has(
        &text,
        &[
            "OMB reads every record 2 times",
            "kafkabench's consumers form one group",
            "consumerPerSubscription 3 × 3 topics, in one group",
            "consumerBacklogSizeGB 2 GiB of 512-byte records, over 2 subscriptions",
            "backlogDrainRatio: 0.9",
            "randomizedPayloadPoolSize: 1000",
            "payloadFile payload/payload-1Kb.data is not used",
            "producersPerTopic 4 × 3 topics: each producer on one topic",
            "reset: true",
            "`linger.ms` is given twice; the last one counts",
            "`group.id = omb-bench` dropped",
        ],
    );
}

#[test]
fn omb_shipped_backlog_workload_with_the_zstd_driver_keeps_rate_size_and_codec() {
    let text = import(
        "1-topic-100-partitions-1kb-4p-4c-200k-backlog.yaml",
        Some("kafka-big-batches-zstd.yaml"),
    );
    insta::assert_snapshot!("shipped_backlog_zstd", text);
    let p = planned(&text);
    let run = only_run(&p);
    assert_eq!((run.topic.partitions, run.topic.replication), (100, 3));
    assert_props(
        &run.producer,
        "acks=all linger.ms=200 batch.size=1048576 compression.type=zstd",
    );
    let w = &run.workload;
    assert!(matches!(w.rate, RateSpec::Fixed(r) if r == 200_000.0));
    assert_eq!(w.producers, 4);
    assert!(
        matches!(w.payload, PayloadSpec::Random { size: PayloadSize::Fixed(1024), compressibility } if (compressibility - 0.5).abs() < 1e-9)
    );
    assert!(text.contains("consumerBacklogSizeGB: 512"));
}

#[test]
fn producer_rate_zero_is_a_capacity_search_and_no_subscription_means_no_consumer() {
    let text = import("max-rate-random-keys.yaml", Some("kafka-exactly-once.yaml"));
    insta::assert_snapshot!("max_rate_random_keys", text);
    let p = planned(&text);
    let run = only_run(&p);
    assert!(run.consumer.is_none());
    let w = &run.workload;
    // Each probe's rate and length are the search's.
    assert!(matches!(w.rate, RateSpec::Unlimited));
    assert_eq!((w.duration, w.messages), (None, None));
    assert!(w.warmup.is_none());
    assert!(matches!(w.key, KeySpec::Uniform(10_000)));
    assert!(
        matches!(w.payload, PayloadSpec::Random { size: PayloadSize::Fixed(100), compressibility } if compressibility == 1.0)
    );
    let c = run
        .capacity
        .as_ref()
        .expect("producerRate 0 is a capacity search");
    // testDurationMinutes: 5 is cut to a 1-minute probe; warmupDurationMinutes: 0 stays 0.
    assert_eq!((c.probe, c.warmup), (minutes(1), minutes(0)));
    assert_eq!((c.from, c.to, c.trials), (1_000.0, 10_000_000.0, 1));
    assert!(c.slo.is_empty(), "OMB's search has no latency target");
    assert!(c.budget.is_none());
    has(
        &text,
        &[
            "OMB searches for the highest rate (producerRate: 0)",
            "kafkabench's capacity search does the same",
            "No latency target, as in OMB",
            "OMB's testDurationMinutes (5) is its whole search",
        ],
    );
    assert!(!text.contains("unlimited"), "{text}");
}

#[test]
fn an_absent_producer_rate_is_the_search_too_with_omb_default_warm_up_cut_short() {
    let text = import("max-rate-1kb-default-rate.yaml", None);
    insta::assert_snapshot!("max_rate_default_rate", text);
    let p = planned(&text);
    let run = only_run(&p);
    assert!(run.consumer.is_some());
    let c = run
        .capacity
        .as_ref()
        .expect("no producerRate is a capacity search");
    // OMB's 15-minute run and 1-minute warm-up become a 1-minute probe after 10 s.
    assert_eq!(
        (c.probe, c.warmup),
        (minutes(1), std::time::Duration::from_secs(10))
    );
    assert!(
        text.contains("producerRate is absent: OMB reads it as 0"),
        "{text}"
    );
    assert_eq!(run.workload.duration, None);
}

#[test]
fn a_text_payload_file_with_line_breaks_is_one_constant_record() {
    let text = import("text-payload.yaml", None);
    insta::assert_snapshot!("text_payload_no_driver", text);
    let p = planned(&text);
    let run = only_run(&p);
    let file = std::fs::read(Path::new(DIR).join("payload/lines-64b.data")).unwrap();
    match &run.workload.payload {
        PayloadSpec::Constant { bytes, size } => {
            assert_eq!((**bytes).clone(), file);
            assert!(matches!(size, PayloadSize::Fixed(64)));
        }
        other => panic!("expected a constant payload, not {other:?}"),
    }
    // No driver: kafkabench's defaults.
    assert_eq!(run.topic.replication, 1);
    assert_eq!(prop(&run.producer, "acks"), None);
}

#[test]
fn a_binary_payload_file_with_line_breaks_is_one_record_cut_at_a_delimiter_it_never_holds() {
    let text = import("binary-payload.yaml", None);
    insta::assert_snapshot!("binary_payload", text);
    let file = std::fs::read(Path::new(DIR).join("payload/binary-32b.data")).unwrap();
    assert!(file.contains(&b'\n'), "the fixture has line-break bytes");
    match only_run(&planned(&text)).workload.payload.clone() {
        PayloadSpec::File { lines, .. } => assert_eq!(*lines, vec![file], "the whole file"),
        other => panic!("expected the file as one record, not {other:?}"),
    }
}

/// One `#[test]` per bad fixture, its rendered diagnostics snapshotted.
macro_rules! each_invalid {
    ($($name:ident: $workload:expr, $driver:expr;)*) => {
        $(
            #[test]
            fn $name() {
                invalid_renders_like_its_snapshot(stringify!($name), $workload, $driver);
            }
        )*
    };
}

each_invalid! {
    bad_yaml_is_reported_at_its_line: "invalid/bad-yaml.yaml", None;
    unknown_fields_are_each_reported_with_a_did_you_mean: "invalid/unknown-fields.yaml", None;
    values_of_the_wrong_kind_are_each_reported_at_the_value: "invalid/wrong-types.yaml", None;
    numbers_out_of_range_are_reported_with_the_range: "invalid/out-of-range.yaml", None;
    missing_fields_are_named: "invalid/missing-fields.yaml", None;
    a_payload_file_that_is_not_there_says_where_it_was_looked_for: "invalid/missing-payload-file.yaml", None;
    a_payload_file_of_another_size_than_message_size_is_refused_as_omb_does: "invalid/payload-size-mismatch.yaml", None;
    a_workload_file_that_does_not_exist_is_named: "invalid/no-such-workload.yaml", None;
    a_driver_of_another_system_and_its_unknown_fields_are_reported: "workloads/1-topic-1-partition-1kb.yaml", Some("invalid/pulsar-driver.yaml");
    a_driver_with_wrong_values_is_reported_with_the_workload_problems_at_once: "invalid/unknown-fields.yaml", Some("invalid/bad-driver-values.yaml");
    a_field_given_twice_is_reported_at_its_second_line: "invalid/duplicate-field.yaml", None;
    a_driver_file_that_does_not_exist_is_named: "workloads/1-topic-1-partition-1kb.yaml", Some("drivers/no-such-driver.yaml");
    producer_rate_zero_with_a_backlog_is_refused_as_omb_does: "invalid/max-rate-with-backlog.yaml", None;
    no_producer_rate_with_a_backlog_is_refused_as_zero_is: "invalid/default-rate-with-backlog.yaml", None;
    a_kafka_on_pulsar_driver_is_refused_naming_the_system: "workloads/1-topic-1-partition-1kb.yaml", Some("invalid/kop-driver.yaml");
    a_workload_generator_template_is_refused_as_what_it_is: "invalid/generator-template.yaml", None;
}

fn invalid_renders_like_its_snapshot(name: &str, workload: &str, driver: Option<&str>) {
    let d = driver.map(|d| Path::new(DIR).join(d));
    let (res, sources) = attempt(&Path::new(DIR).join(workload), d.as_deref());
    let diags = match res {
        Ok(imported) => panic!("{workload} should not import:\n{}", imported.text),
        Err(d) => d,
    };
    insta::assert_snapshot!(name, render_text(&diags, &sources, false, 100));
}

#[test]
fn the_command_writes_to_stdout_or_to_a_file_that_checks_clean() {
    let w = "tests/fixtures/omb/workloads/1-topic-1-partition-1kb.yaml";
    let d = "tests/fixtures/omb/drivers/kafka-exactly-once.yaml";
    let stdout = common::expect_exit(&common::kafkabench(&["import", "omb", w, "--driver", d]), 0);
    assert!(stdout.starts_with("# Imported from OpenMessaging Benchmark"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nested-name.kbs");
    let out_s = out.display().to_string();
    common::expect_exit(&common::kafkabench(&["import", "omb", w, "-o", &out_s]), 0);
    // The payload file is named relative to where the scenario was written.
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.contains("payload-1Kb.data"), "{written}");
    common::expect_exit(&common::kafkabench(&["check", &out_s]), 0);
}

#[test]
fn an_imported_capacity_search_passes_check_and_plans_its_probes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("max-rate.kbs");
    let out_s = out.display().to_string();
    let w = "tests/fixtures/omb/workloads/max-rate-random-keys.yaml";
    common::expect_exit(&common::kafkabench(&["import", "omb", w, "-o", &out_s]), 0);
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.contains("capacity {"), "{written}");
    common::expect_exit(&common::kafkabench(&["check", &out_s]), 0);
    common::expect_exit(&common::kafkabench(&["plan", &out_s]), 0);
}

#[test]
fn the_command_exits_2_with_the_diagnostics_when_a_file_is_bad() {
    let out = common::kafkabench(&["import", "omb", "tests/fixtures/omb/invalid/bad-yaml.yaml"]);
    common::expect_exit(&out, 2);
    let stderr = common::text(&out.stderr);
    assert!(stderr.contains("bad-yaml.yaml:4"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// A fork's fixture pair under tests/fixtures/omb/forks/FORK (real files, with their LICENSE).
fn fork(fork: &str, workload: &str, driver: Option<&str>) -> Imported {
    in_dir(&Path::new(DIR).join("forks").join(fork), workload, driver)
}

/// Each text is in the scenario (a comment), and the warnings are these, in order.
pub(crate) fn says(out: &Imported, comments: &[&str], warnings: &[&str]) {
    has(&out.text, comments);
    assert_eq!(out.warnings.len(), warnings.len(), "{:?}", out.warnings);
    for (w, said) in out.warnings.iter().zip(warnings) {
        assert!(w.contains(said), "the warning `{w}` does not say `{said}`");
    }
}

#[test]
fn every_fork_fixture_imports_and_checks_clean() {
    for fork in std::fs::read_dir(Path::new(DIR).join("forks")).unwrap() {
        let dir = fork.unwrap().path();
        assert!(dir.join("LICENSE").is_file(), "{dir:?}: the fork's LICENSE");
        let files = |sub: &str| {
            let entries = std::fs::read_dir(dir.join(sub)).into_iter().flatten();
            entries.map(|e| e.unwrap().path())
        };
        let mut workloads: Vec<_> = files("workloads").collect();
        workloads.push(Path::new(DIR).join("workloads/1-topic-1-partition-1kb.yaml"));
        for w in &workloads {
            planned(&imported(w, None).text);
        }
        for d in files("drivers") {
            planned(&imported(&workloads[0], Some(&d)).text);
        }
    }
}

#[test]
fn redpanda_tx_driver_is_transactions_and_sample_rate_a_comment_with_a_warning() {
    let out = fork("redpanda", "e2e.yaml", Some("redpanda-ack-all-tx-2.yaml"));
    insta::assert_snapshot!("fork_redpanda_tx", out.text);
    let p = planned(&out.text);
    let run = only_run(&p);
    let tx = format!("{:?}", run.workload.transaction);
    assert_eq!(tx, "Some(TxnSpec { size: Messages(2), abort: 0.0 })");
    assert_eq!(run.topic.replication, 3);
    let consumer = run.consumer.as_ref().unwrap();
    assert_eq!(prop(consumer, "isolation.level"), Some("read_uncommitted"));
    let said = [
        "tx variant",
        "sampleRateMillis: 1000 (Redpanda's fork)",
        "--interval 1000ms",
    ];
    let warned = "e2e.yaml:34: `sampleRateMillis` (Redpanda's fork) is not imported, how often";
    says(&out, &said, &[warned]);
    let eod = Some("redpanda-ack-all-linger-1ms-eod-true.yaml");
    let swarm = fork("redpanda", "e2e.yaml", eod);
    says(&swarm, &["Redpanda's fork", "swarm variant"], &[warned]);
    let p = planned(&swarm.text);
    assert!(only_run(&p).workload.transaction.is_none());
}

#[test]
fn automq_rate_schedule_and_log_interval_are_comments_with_warnings() {
    let out = fork("automq", "auto-scaling.yaml", Some("driver.yaml"));
    insta::assert_snapshot!("fork_automq_auto_scaling", out.text);
    let p = planned(&out.text);
    let run = only_run(&p);
    assert!(matches!(run.workload.rate, RateSpec::Fixed(r) if r == 19_200.0));
    assert_props(&run.topic.configs, "flush.messages=1");
    let said = [
        "producerRateList: [[4, 0, 10240], [4, 30, 204800]",
        "does not follow the time of day",
    ];
    let warned = "auto-scaling.yaml:25: `producerRateList` (AutoMQ's fork)";
    says(&out, &said, &[warned]);
    let tail = fork("automq", "tail-read-500m.yaml", None);
    let said = "logIntervalMillis: 1000 (AutoMQ's fork)";
    says(&tail, &[said], &["`logIntervalMillis`"]);
}

#[test]
fn aiven_template_driver_keeps_its_placeholders_its_diskless_config_and_cuts_a_million_topics() {
    let diskless = Some("diskless-high-throughput.yaml");
    let out = fork("aiven", "w-128MiB-3xfanout.yaml", diskless);
    insta::assert_snapshot!("fork_aiven_template", out.text);
    let bootstrap = r#"env("KAFKA_BOOTSTRAP", "\{\{ kafka_service_uri \}\}")"#;
    let warned = "diskless-high-throughput.yaml:1: the driver file is a template";
    let run = only_run(&planned(&out.text)).topic.configs.clone();
    assert_props(&run, "diskless.enable=true"); // a vendor's config, for the broker to judge
    says(&out, &["driver: {{ svc_name }}", bootstrap], &[warned]);
    let many = fork("aiven", "1m-topic-1kb-4p-4c-2000k.yaml", None);
    assert_eq!(only_run(&planned(&many.text)).workload.topics, 10_000);
    let said = "topics: 1000000: kafkabench spreads a run over at most 10000 topics";
    says(&many, &[said], &["`topics: 1000000`: kafkabench spreads"]);
}

#[test]
fn the_command_prints_the_warnings_on_stderr_and_the_scenario_on_stdout() {
    let e2e = "tests/fixtures/omb/forks/redpanda/workloads/e2e.yaml";
    let out = common::kafkabench(&["import", "omb", e2e]);
    let stdout = common::expect_exit(&out, 0);
    assert!(stdout.contains("# sampleRateMillis: 1000"), "{stdout}");
    let stderr = common::text(&out.stderr);
    let warned = format!("warning: {e2e}:34: `sampleRateMillis` (Redpanda's fork)");
    assert!(stderr.starts_with(&warned), "{stderr}");
}

#[test]
fn solace_fixed_key_is_one_key_and_aklivity_java_trust_store_is_warned() {
    let out = fork("solace", "1-topic-3-partitions-1k-fixedKeyed.yaml", None);
    says(&out, &["FIXED_KEY (Solace's fork)"], &[]);
    let key = only_run(&planned(&out.text)).workload.key.clone();
    assert!(
        matches!(&key, KeySpec::Fixed(k) if k == "omb-fixkey"),
        "{key:?}"
    );
    let w = Path::new(DIR).join("workloads/1-topic-1-partition-1kb.yaml");
    let d = Path::new(DIR).join("forks/aklivity/drivers/ssl-kafka-all-background-commit.yaml");
    let out = imported(&w, Some(&d));
    planned(&out.text);
    let jks = "yaml:30: commonConfig: `ssl.truststore.location` dropped: librdkafka reads no Java";
    let warned = [
        jks,
        "yaml:31: commonConfig: `ssl.truststore.password` dropped",
    ];
    says(&out, &["skipCreateTopic: false (aklivity's fork)"], &warned);
}

#[test]
fn names_near_optional_fields_and_unknown_key_distributors_are_warnings_and_pem_stores_files() {
    let w = Path::new(DIR).join("workloads/near-optional-fields.yaml");
    let out = imported(
        &w,
        Some(&Path::new(DIR).join("drivers/prefix-and-pem-stores.yaml")),
    );
    let p = planned(&out.text);
    let run = only_run(&p);
    assert!(matches!(run.workload.key, KeySpec::None));
    assert_eq!(
        run.topic.name, "bench-000000",
        "aklivity's topicPrefix names the topic"
    );
    let pem = "ssl.ca.location=certs/ca.pem ssl.certificate.location=certs/client.pem \
        ssl.key.location=certs/client.pem";
    assert_props(&run.producer, pem);
    assert_eq!(prop(&run.producer, "batch.size"), None);
    let warned = [
        "`keyDistributor: ROUND_ROBIN` is not a key distributor OMB knows (did you mean `KEY_ROUND_ROBIN`?): read as NO_KEY",
        "`warmupMinutes` is not an OMB workload field (nor a known fork's) (did you mean `warmupDurationMinutes`?)",
        "`warmupProducerRate` (Vanlightly's fork) is not imported, since the import warms up at `rate`",
        "prefix-and-pem-stores.yaml:14: producerConfig: `batch.size = 0` left out",
    ];
    says(
        &out,
        &[
            "topicPrefix: \"bench\" (aklivity's fork)",
            "warmupProducerRate: 500",
        ],
        &warned,
    );
}
