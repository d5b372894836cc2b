use super::*;

fn config(name: &str, value: &str, source: Source) -> Config {
    Config::new(name.into(), Some(value.into()), source, false)
}

fn broker(id: i32, configs: Vec<Config>) -> BrokerConfig {
    BrokerConfig {
        id,
        described: Described::kept(configs),
    }
}

#[test]
fn a_secret_keeps_its_name_only_whether_the_broker_or_its_name_says_so() {
    // A broker that does not mask (not Apache Kafka, which sends null): the name decides.
    let named = config(
        "listener.name.internal.ssl.keystore.password",
        "hunter2",
        Source::Static,
    );
    let flagged = Config::new(
        "x.y".into(),
        Some("s3cr3t".into()),
        Source::DynamicBroker,
        true,
    );
    for c in [&named, &flagged] {
        assert!(c.sensitive && c.value.is_none(), "{c:?}");
        assert_eq!(c.shown(), "(secret)");
    }
    let text = serde_json::to_string(&Described::kept([named, flagged])).unwrap();
    assert!(
        !text.contains("hunter2") && !text.contains("s3cr3t"),
        "{text}"
    );
    assert!(
        text.contains("listener.name.internal.ssl.keystore.password"),
        "{text}"
    );
    // An ordinary config keeps its value.
    let plain = config("num.io.threads", "16", Source::DynamicBroker);
    assert_eq!(
        (plain.value.as_deref(), plain.sensitive),
        (Some("16"), false)
    );
}

#[test]
fn defaults_and_the_names_of_a_broker_and_its_paths_are_left_out() {
    let d = Described::kept([
        config("num.io.threads", "16", Source::DynamicBroker),
        config("num.network.threads", "3", Source::Default),
        config("node.id", "1", Source::Static),
        config("log.dirs", "/data/kafka", Source::Static),
        config("advertised.listeners", "PLAINTEXT://h:9092", Source::Static),
        config(
            "listener.name.ssl.ssl.truststore.location",
            "/tmp/ts.p12",
            Source::Static,
        ),
        config(
            "remote.log.storage.manager.class.path",
            "/opt/rsm.jar",
            Source::Static,
        ),
        config("auto.create.topics.enable", "false", Source::Static),
    ]);
    let names: Vec<&str> = d.configs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["auto.create.topics.enable", "num.io.threads"]);
}

#[test]
fn brokers_that_agree_read_as_one_value_and_those_that_differ_by_broker() {
    let b = BrokerConfigs {
        brokers: vec![
            broker(
                1,
                vec![
                    config("num.io.threads", "16", Source::DynamicBroker),
                    config("a", "1", Source::Static),
                ],
            ),
            broker(2, vec![config("a", "1", Source::Static)]),
        ],
        ..BrokerConfigs::default()
    };
    let v = b.values();
    assert_eq!(v["a"].0, "1");
    assert_eq!(v["num.io.threads"].0, "1: 16, 2: default");
}

#[test]
fn differences_name_each_changed_config_with_where_it_now_comes_from() {
    let base = BrokerConfigs {
        brokers: vec![broker(
            1,
            vec![config("log.flush.interval.ms", "1000", Source::Static)],
        )],
        ..BrokerConfigs::default()
    };
    let mut cur = base.clone();
    cur.brokers[0].described =
        Described::kept([config("num.io.threads", "16", Source::DynamicBroker)]);
    let words: Vec<String> = cur
        .differences(&base)
        .iter()
        .map(Difference::words)
        .collect();
    assert_eq!(
        words,
        [
            "log.flush.interval.ms: 1000 → default",
            "num.io.threads: default → 16 (dynamic, this broker)"
        ]
    );
    assert!(base.differences(&base).is_empty());
    // A side whose brokers refused says nothing changed, not that everything did.
    let refused = BrokerConfigs {
        brokers: vec![BrokerConfig {
            id: 1,
            described: Described::refused("denied".into()),
        }],
        ..BrokerConfigs::default()
    };
    assert!(cur.differences(&refused).is_empty());
    assert!(refused.differences(&cur).is_empty());
}

fn quota(entity: &[(&str, Option<&str>)], rate: f64) -> Quota {
    Quota {
        entity: entity
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect(),
        values: [("producer_byte_rate".to_string(), rate)].into(),
    }
}

#[test]
fn a_quota_applies_when_each_of_its_components_names_the_client_or_its_default() {
    let ids = ["kafkabench".to_string()];
    let users = ["alice".to_string()];
    let applies = |e: &[(&str, Option<&str>)]| quota(e, 1.0).applies(&ids, &users);
    assert!(applies(&[("client-id", Some("kafkabench"))]));
    assert!(applies(&[("client-id", None)]));
    assert!(applies(&[("user", Some("alice")), ("client-id", None)]));
    assert!(applies(&[("user", None)]));
    assert!(!applies(&[("client-id", Some("other"))]));
    assert!(!applies(&[
        ("user", Some("bob")),
        ("client-id", Some("kafkabench"))
    ]));
    assert!(!applies(&[("ip", None)]));
    assert!(!applies(&[]));
}

#[test]
fn a_quota_set_or_changed_is_a_difference() {
    let base = BrokerConfigs::default();
    let cur = BrokerConfigs {
        quotas: vec![quota(&[("client-id", Some("kafkabench"))], 1048576.0)],
        ..BrokerConfigs::default()
    };
    let words: Vec<String> = cur
        .differences(&base)
        .iter()
        .map(Difference::words)
        .collect();
    assert_eq!(
        words,
        ["quota producer_byte_rate of client-id=kafkabench: none → 1048576"]
    );
}

#[test]
fn a_file_without_the_new_fields_reads() {
    let old: crate::measure::environment::ClusterPrint =
        serde_json::from_str(r#"{"cluster_id": "x", "brokers": 1, "api": []}"#).unwrap();
    assert!(old.configs.is_none());
    let t: crate::measure::TopicConfig = serde_json::from_str(
        r#"{"partitions": 3, "replication": 1, "configs": [], "existing": false}"#,
    )
    .unwrap();
    assert!(t.effective.is_none());
    // An unknown source (a newer Kafka's) reads as one.
    let c: Config = serde_json::from_str(r#"{"name": "x", "source": "somewhere_new"}"#).unwrap();
    assert_eq!(c.source, Source::Unknown);
}

#[test]
fn what_was_not_recorded_is_one_line() {
    let refused = |id| BrokerConfig {
        id,
        described: Described::refused(format!("broker {id}'s configs not recorded, refused")),
    };
    let mut b = BrokerConfigs {
        brokers: vec![refused(1), refused(2), refused(3)],
        quotas_note: Some("the client quotas not recorded, refused".into()),
        ..BrokerConfigs::default()
    };
    assert_eq!(
        b.missing().as_deref(),
        Some(
            "broker 1's configs not recorded, refused (and 2 more brokers); \
             the client quotas not recorded, refused"
        )
    );
    b.brokers = vec![broker(1, vec![])];
    b.quotas_note = None;
    assert_eq!(b.missing(), None);
    // Nothing asked: said, and no quota reads as removed.
    let unasked = BrokerConfigs {
        note: Some("the brokers' configs not recorded: GSSAPI".into()),
        ..BrokerConfigs::default()
    };
    assert_eq!(unasked.missing().as_deref(), unasked.note.as_deref());
    let with_quota = BrokerConfigs {
        quotas: vec![quota(&[("client-id", None)], 1.0)],
        ..BrokerConfigs::default()
    };
    assert!(unasked.differences(&with_quota).is_empty());
}
