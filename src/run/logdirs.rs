//! On-disk bytes per partition via DescribeLogDirs (librdkafka has no such call). Each broker
//! reports its own replicas; we keep the largest replica of each partition, so a topic with
//! replication 3 counts once, not three times. Asked over `wire::conn`, secured as the
//! cluster block's properties say (TLS, SASL).

use std::collections::HashMap;
use std::time::Duration;

use kafka_protocol::messages::describe_log_dirs_request::DescribableLogDirTopic;
use kafka_protocol::messages::{DescribeLogDirsRequest, DescribeLogDirsResponse, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::admin::{AdminError, LogDirsCause};
use crate::model::Props;
use crate::wire::conn::{Conn, Limits};
use crate::wire::Security;

/// v1 is served by every broker from 2.x to 4.x (v0 was removed in 4.0); later versions
/// answer the same sizes.
const VERSIONS: (i16, i16) = (1, 4);
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Size in bytes of each partition of `topic` (largest replica), asking every broker over
/// plain connections.
#[cfg(test)]
pub(crate) fn partition_sizes(
    brokers: &[String],
    topic: &str,
    partitions: i32,
) -> Result<HashMap<i32, u64>, AdminError> {
    Ok(sizes(
        brokers,
        &Security::plaintext(),
        &[topic.to_string()],
        partitions,
    )?
    .into_iter()
    .map(|((_, p), size)| (p, size))
    .collect())
}

/// Total on-disk bytes of each of `topics` (one replica per partition), in their order: one
/// request per broker for them all.
pub(crate) fn topics_bytes(
    brokers: &[String],
    security: &Security,
    topics: &[String],
    partitions: i32,
) -> Result<Vec<u64>, AdminError> {
    let sizes = sizes(brokers, security, topics, partitions)?;
    let index: HashMap<&str, usize> = topics
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let mut out = vec![0u64; topics.len()];
    for ((topic, _), size) in sizes {
        if let Some(&i) = index.get(topic.as_str()) {
            out[i] += size;
        }
    }
    Ok(out)
}

/// Size of each partition of `topics` (largest replica), by topic and partition.
fn sizes(
    brokers: &[String],
    security: &Security,
    topics: &[String],
    partitions: i32,
) -> Result<HashMap<(String, i32), u64>, AdminError> {
    let mut sizes: HashMap<(String, i32), u64> = HashMap::new();
    for b in brokers {
        let at = |cause| AdminError::LogDirs {
            broker: b.clone(),
            cause,
        };
        let resp = ask(b, security, topics, partitions).map_err(at)?;
        if resp.error_code != 0 {
            return Err(at(LogDirsCause::Code(resp.error_code)));
        }
        for dir in resp.results {
            if dir.error_code != 0 {
                continue;
            }
            for t in dir.topics {
                let name = t.name.0.as_str().to_string();
                for p in t.partitions.into_iter().filter(|p| !p.is_future_key) {
                    let e = sizes.entry((name.clone(), p.partition_index)).or_default();
                    *e = (*e).max(p.partition_size.max(0) as u64);
                }
            }
        }
    }
    Ok(sizes)
}

/// How to reach this cluster's brokers, from the cluster block's properties (librdkafka's
/// names): plaintext, TLS, SASL. Err when they name something kafkabench's own connection does
/// not speak (e.g. GSSAPI), for the report's note.
pub(crate) fn security(admin: &Props) -> Result<Security, AdminError> {
    Security::from_props(|k| admin.get(k).map(str::to_string))
        .map_err(|detail| AdminError::Security { detail })
}

/// Total on-disk bytes of `topic` (one replica per partition).
#[cfg(test)]
pub(crate) fn topic_bytes(
    brokers: &[String],
    topic: &str,
    partitions: i32,
) -> Result<u64, AdminError> {
    Ok(partition_sizes(brokers, topic, partitions)?.values().sum())
}

fn ask(
    broker: &str,
    security: &Security,
    topics: &[String],
    partitions: i32,
) -> Result<DescribeLogDirsResponse, LogDirsCause> {
    // The cause is shown after the broker's address already: not twice.
    let wire = |e: crate::wire::WireError| {
        let text = e.to_string();
        let own = format!("{broker}: ");
        LogDirsCause::Wire(text.strip_prefix(&own).unwrap_or(&text).to_string())
    };
    let mut conn =
        Conn::connect(broker, security, Limits::new(IO_TIMEOUT), "kafkabench").map_err(wire)?;
    let req = DescribeLogDirsRequest::default().with_topics(Some(
        topics
            .iter()
            .map(|t| {
                DescribableLogDirTopic::default()
                    .with_topic(TopicName(StrBytes::from_string(t.clone())))
                    .with_partitions((0..partitions).collect())
            })
            .collect(),
    ));
    let v = conn
        .version_within::<DescribeLogDirsRequest>(VERSIONS.0, VERSIONS.1)
        .map_err(wire)?;
    conn.request_v(v, &req).map_err(wire)
}

#[cfg(test)]
#[path = "logdirs_tests.rs"]
mod tests;
