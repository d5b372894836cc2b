//! DescribeLogDirs over kafkabench's own secured connection. Against a SASL_SSL broker named
//! by KB_WIRE_SASL_BOOTSTRAP, KB_WIRE_SASL_CA, KB_WIRE_SASL_USER, KB_WIRE_SASL_PASSWORD (and
//! KB_WIRE_SASL_PLAIN, its brokers' PLAINTEXT listener, for an independent answer): the bytes
//! asked over SASL_SSL are the broker's own log bytes. Without them only the refusal is checked.
//!
//! Against the local broker: a topic the admin connection created holds records that come back
//! out, and its on-disk bytes are positive and grow with more writes.

use std::time::Duration;

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{CreateTopicsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};

use crate::model::{Props, TopicSpec};
use crate::run::admin::Admin;
use crate::run::logdirs;
use crate::wire::conn::{Conn, Limits};
use crate::wire::Security;

#[test]
fn a_mechanism_kafkabench_does_not_speak_is_named() {
    let mut p = Props::default();
    p.set("security.protocol", "SASL_SSL");
    p.set("sasl.mechanism", "GSSAPI");
    let e = logdirs::security(&p).expect_err("GSSAPI").to_string();
    assert!(e.contains("GSSAPI") && e.contains("kafka-log-dirs"), "{e}");
    let mut p = Props::default();
    p.set("security.protocol", "SSL");
    assert!(logdirs::security(&p).expect("TLS").tls.is_some());
}

#[test]
fn disk_bytes_over_sasl_ssl_are_the_brokers_log_bytes_when_a_broker_is_named() {
    let v = |k: &str| std::env::var(k).ok();
    let (Some(bootstrap), Some(ca), Some(user), Some(password), Some(plain)) = (
        v("KB_WIRE_SASL_BOOTSTRAP"),
        v("KB_WIRE_SASL_CA"),
        v("KB_WIRE_SASL_USER"),
        v("KB_WIRE_SASL_PASSWORD"),
        v("KB_WIRE_SASL_PLAIN"),
    ) else {
        return;
    };
    let kv = [
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "SCRAM-SHA-256"),
        ("sasl.username", user.as_str()),
        ("sasl.password", password.as_str()),
        ("ssl.ca.location", ca.as_str()),
    ];
    let mut props = Props::default();
    for (k, val) in kv {
        props.set(k, val);
    }
    let security = logdirs::security(&props).expect("SASL_SSL is spoken");
    let topic = format!("kb-logdirs-sasl-{}", crate::plan::new_run_id());
    create(&bootstrap, &security, &topic);
    let mut cc = ClientConfig::new();
    cc.set("bootstrap.servers", &bootstrap);
    for (k, val) in kv {
        cc.set(k, val);
    }
    let p: BaseProducer = cc.create().expect("producer");
    let value = vec![b'x'; 200];
    for i in 0..3000 {
        let key = i.to_string();
        let mut rec = BaseRecord::to(&topic).key(&key).payload(&value);
        while let Err((_, back)) = p.send(rec) {
            rec = back;
            p.poll(Duration::from_millis(5));
        }
    }
    p.flush(Duration::from_secs(30)).expect("delivered");
    let brokers = vec![bootstrap.clone()];
    let secured = logdirs::topics_bytes(&brokers, &security, std::slice::from_ref(&topic), 2)
        .expect("DescribeLogDirs over SASL_SSL");
    assert!(secured[0] >= 600_000, "at least the payload: {secured:?}");
    // The same broker asked on its PLAINTEXT listener: the same bytes.
    let plain = logdirs::topic_bytes(&[plain], &topic, 2).expect("plaintext listener");
    assert_eq!(secured[0], plain);
}

fn create(bootstrap: &str, security: &Security, topic: &str) {
    let mut c = Conn::connect(
        bootstrap,
        security,
        Limits::new(Duration::from_secs(10)),
        "kb",
    )
    .expect("connect");
    let r = c
        .request(
            &CreateTopicsRequest::default()
                .with_timeout_ms(10_000)
                .with_topics(vec![CreatableTopic::default()
                    .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                    .with_num_partitions(2)
                    .with_replication_factor(1)]),
        )
        .expect("CreateTopics");
    assert!(r.topics.iter().all(|t| t.error_code == 0), "{:?}", r.topics);
    std::thread::sleep(Duration::from_secs(1)); // leaders elected
}

fn props(bootstrap: &str) -> Props {
    let mut p = Props::default();
    p.set("bootstrap.servers", bootstrap);
    p
}

fn produce(bootstrap: &str, topic: &str, n: usize) {
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "5")
        .create()
        .expect("producer");
    let value = vec![b'x'; 200];
    for i in 0..n {
        let key = i.to_string();
        let mut rec = BaseRecord::to(topic).key(&key).payload(&value);
        loop {
            match p.send(rec) {
                Ok(()) => break,
                Err((_, back)) => {
                    rec = back;
                    p.poll(Duration::from_millis(5));
                }
            }
        }
    }
    p.flush(Duration::from_secs(30))
        .expect("all records delivered");
}

#[tokio::test]
async fn topic_produce_consume_and_disk_bytes() {
    // CI's broker (scripts/kafka-local up, or KAFKA_BOOTSTRAP): connecting names it when absent.
    let bootstrap = std::env::var("KAFKA_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:9092".into());
    let admin = Admin::connect(&props(&bootstrap), &bootstrap).expect("cluster reachable");
    let topic = format!("kb-foundation-{}", crate::plan::new_run_id());
    let spec = TopicSpec {
        name: topic.clone(),
        name_span: None,
        partitions: 3,
        replication: 1,
        configs: Props::default(),
        ignored_configs: Props::default(),
        existing: false,
    };
    admin.create_topic(&spec).await.expect("topic created");
    admin
        .wait_for_leaders(&topic, 3, Duration::from_secs(30))
        .await
        .expect("leaders");
    let brokers = admin.brokers().expect("brokers");

    produce(&bootstrap, &topic, 3000);
    let first = logdirs::partition_sizes(&brokers, &topic, 3).expect("DescribeLogDirs answers");
    assert_eq!(first.len(), 3, "one size per partition: {first:?}");
    assert!(
        first.values().all(|s| *s > 0),
        "every partition holds bytes: {first:?}"
    );
    let before: u64 = first.values().sum();
    // 3000 records of 200 B: at least the payload is on disk.
    assert!(
        before >= 600_000,
        "on-disk bytes {before} below the payload written"
    );

    produce(&bootstrap, &topic, 2000);
    let after = logdirs::topic_bytes(&brokers, &topic, 3).expect("DescribeLogDirs answers");
    assert!(
        after > before,
        "disk bytes grow with writes: {before} -> {after}"
    );

    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", "kb-foundation")
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    for p in 0..3 {
        tpl.add_partition_offset(&topic, p, Offset::Beginning)
            .expect("partition");
    }
    c.assign(&tpl).expect("assign");
    let mut got = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while got < 5000 && std::time::Instant::now() < deadline {
        if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
            assert_eq!(m.payload().map(|p| p.len()), Some(200));
            got += 1;
        }
    }
    assert_eq!(got, 5000, "every record produced is consumed");
    admin.delete_topic(&topic).await.expect("topic deleted");
}
