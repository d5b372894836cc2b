//! The wire module against the local broker (KAFKA_BOOTSTRAP, default 127.0.0.1:9092) and
//! against fake brokers that answer garbage or nothing.

mod alloc;
mod bench;
mod fake;
mod fuzz;
mod fuzz_records;
mod hostile;
mod records;
mod samples;
mod secure;
mod share;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::{CreateTopicsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::ClientConfig;

use super::admin::{self, bootstrap_conn};
use super::conn::Limits;
use super::{Security, ShareConfig};

pub(super) fn bootstrap() -> String {
    std::env::var("KAFKA_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:9092".into())
}

/// A name no other test (or earlier run) uses.
pub(super) fn unique(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "kb-wire-{prefix}-{}-{}-{}",
        std::process::id(),
        nanos % 1_000_000_000_000,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Create `topic` (replication 1) and wait until every partition has a leader.
pub(super) fn create_topic(topic: &str, partitions: i32) {
    create_topic_at(&bootstrap(), &Security::plaintext(), topic, partitions);
}

pub(super) fn create_topic_at(bootstrap: &str, security: &Security, topic: &str, partitions: i32) {
    let bs = vec![bootstrap.to_string()];
    let limits = Limits::new(Duration::from_secs(10));
    let mut conn = bootstrap_conn(&bs, security, limits, "kb-test").expect("broker");
    let req = CreateTopicsRequest::default()
        .with_timeout_ms(10_000)
        .with_topics(vec![CreatableTopic::default()
            .with_name(TopicName(StrBytes::from_string(topic.to_string())))
            .with_num_partitions(partitions)
            .with_replication_factor(1)
            .with_configs(vec![CreatableTopicConfig::default()
                .with_name(StrBytes::from_static_str("min.insync.replicas"))
                .with_value(Some(StrBytes::from_static_str("1")))])]);
    let resp = conn.request(&req).expect("CreateTopics answered");
    for t in &resp.topics {
        assert_eq!(t.error_code, 0, "create {topic}: {:?}", t.error_message);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let m = admin::metadata(&mut conn, &[topic.to_string()]).expect("metadata");
        if let Some(t) = m.topics.get(topic) {
            if t.error == 0
                && t.leaders.len() == partitions as usize
                && t.leaders.iter().all(|l| *l >= 0)
            {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{topic} has no leaders after 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Produce `n` records to partition 0.. of `topic`: key `i`, value `value(i)`, header
/// `i` = decimal i, compressed with `codec` ("none", "gzip", ...).
pub(super) fn produce(topic: &str, n: usize, codec: &str, value: impl Fn(usize) -> Vec<u8>) {
    produce_with(topic, n, &[("compression.type", codec)], value);
}

/// `produce` with producer properties of the caller's.
pub(super) fn produce_with(
    topic: &str,
    n: usize,
    props: &[(&str, &str)],
    value: impl Fn(usize) -> Vec<u8>,
) {
    let mut cc = ClientConfig::new();
    cc.set("bootstrap.servers", bootstrap())
        .set("linger.ms", "20");
    for (k, v) in props {
        cc.set(*k, *v);
    }
    let p: BaseProducer = cc.create().expect("producer");
    for i in 0..n {
        let key = i.to_string();
        let v = value(i);
        let headers = OwnedHeaders::new().insert(Header {
            key: "i",
            value: Some(key.as_bytes()),
        });
        let mut rec = BaseRecord::to(topic).key(&key).payload(&v).headers(headers);
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

/// A share group whose members start at the earliest record, with `extra` configs.
pub(super) fn share_group(extra: &[(&str, &str)]) -> String {
    let group = unique("g");
    let mut configs = vec![("share.auto.offset.reset", "earliest")];
    configs.extend_from_slice(extra);
    admin::alter_group_configs(&[bootstrap()], &Security::plaintext(), &group, &configs)
        .expect("group configs set");
    group
}

pub(super) fn config(group: &str, topics: &[&str]) -> ShareConfig {
    ShareConfig {
        bootstrap: vec![bootstrap()],
        group_id: group.to_string(),
        client_id: "kb-wire-test".to_string(),
        topics: topics.iter().map(|t| t.to_string()).collect(),
        max_wait: Duration::from_millis(200),
        max_records: 500,
        max_bytes: 8 << 20,
        min_bytes: 1,
        request_timeout: Duration::from_secs(10),
        security: Security::plaintext(),
    }
}

/// The lag Kafka's own ShareGroupCommand reports for `group` on `topic`, when KB_KAFKA_TOOL
/// names a `kafka-local` script to run it with (an independent count); None otherwise.
pub(super) fn kafka_tool_lag(group: &str, topic: &str) -> Option<i64> {
    let tool = std::env::var("KB_KAFKA_TOOL").ok()?;
    // The tool's report goes to a file (this module writes nothing to the terminal).
    let report = std::env::temp_dir().join(format!("{group}.describe"));
    let status = std::process::Command::new("sh")
        .args([
            "-c",
            "\"$0\" tool org.apache.kafka.tools.consumer.group.ShareGroupCommand \
             --bootstrap-server \"$1\" --describe --group \"$2\" --offsets >\"$3\" 2>&1",
        ])
        .arg(&tool)
        .arg(bootstrap())
        .arg(group)
        .arg(&report)
        .status()
        .expect("ShareGroupCommand runs");
    assert!(status.success(), "ShareGroupCommand failed");
    let text = std::fs::read_to_string(&report).expect("its report");
    let _ = std::fs::remove_file(&report);
    let line = text.lines().find(|l| l.contains(topic))?;
    line.split_whitespace().last()?.parse().ok()
}
