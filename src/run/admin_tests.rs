//! Foundation, against the local broker: the admin connection creates a topic, records go in
//! and come back out, and DescribeLogDirs (`logdirs`) reports on-disk bytes that are positive
//! and grow with more writes; an unreachable cluster is a clear error in bounded time.

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};

use super::Admin;
use crate::model::{Props, TopicSpec};
use crate::run::logdirs;

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

#[test]
fn unreachable_cluster_is_a_clear_error_in_bounded_time() {
    // Nothing listens on port 1: the error names the address and says how to start a broker.
    let bootstrap = "127.0.0.1:1";
    let started = std::time::Instant::now();
    let err = Admin::connect(&props(bootstrap), bootstrap)
        .err()
        .expect("must fail")
        .to_string();
    // README: the cluster is given up on within 10 s; the margin is for a busy machine.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}, past the 10 s connect bound",
        started.elapsed()
    );
    assert!(err.contains("127.0.0.1:1"), "{err}");
    assert!(err.contains("scripts/kafka-local up"), "{err}");
}
