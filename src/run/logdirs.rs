//! On-disk bytes per partition via DescribeLogDirs (librdkafka has no such call). Each broker
//! reports its own replicas; we keep the largest replica of each partition, so a topic with
//! replication 3 counts once, not three times.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use kafka_protocol::messages::describe_log_dirs_request::DescribableLogDirTopic;
use kafka_protocol::messages::{
    ApiKey, DescribeLogDirsRequest, DescribeLogDirsResponse, RequestHeader, ResponseHeader,
    TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};

use super::admin::{AdminError, LogDirsCause};
use crate::model::Props;

/// v1 is served by every broker from 2.x to 4.x (v0 was removed in 4.0).
const VERSION: i16 = 1;
const IO_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_RESPONSE: usize = 64 * 1024 * 1024;

/// Size in bytes of each partition of `topic` (largest replica), asking every broker.
#[cfg(test)]
pub(crate) fn partition_sizes(
    brokers: &[String],
    topic: &str,
    partitions: i32,
) -> Result<HashMap<i32, u64>, AdminError> {
    Ok(sizes(brokers, &[topic.to_string()], partitions)?
        .into_iter()
        .map(|((_, p), size)| (p, size))
        .collect())
}

/// Total on-disk bytes of each of `topics` (one replica per partition), in their order: one
/// request per broker for them all.
pub(crate) fn topics_bytes(
    brokers: &[String],
    topics: &[String],
    partitions: i32,
) -> Result<Vec<u64>, AdminError> {
    let sizes = sizes(brokers, topics, partitions)?;
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
    topics: &[String],
    partitions: i32,
) -> Result<HashMap<(String, i32), u64>, AdminError> {
    let mut sizes: HashMap<(String, i32), u64> = HashMap::new();
    for b in brokers {
        let at = |cause| AdminError::LogDirs {
            broker: b.clone(),
            cause,
        };
        let resp = ask(b, topics, partitions).map_err(at)?;
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

/// Whether DescribeLogDirs can be asked of this cluster: it is sent over a plain socket, so a
/// cluster that wants TLS or SASL gets no request (its reply would be garbage, or nothing).
/// Err says why, for the report's note.
pub(crate) fn speaks(admin: &Props) -> Result<(), AdminError> {
    match admin.get("security.protocol") {
        Some(p) if !p.eq_ignore_ascii_case("plaintext") => Err(AdminError::NotPlaintext {
            protocol: p.to_string(),
        }),
        _ => Ok(()),
    }
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

/// kafka-protocol's encoding or decoding error, in its words.
fn codec(e: impl std::fmt::Display) -> LogDirsCause {
    LogDirsCause::Codec(e.to_string())
}

fn ask(
    broker: &str,
    topics: &[String],
    partitions: i32,
) -> Result<DescribeLogDirsResponse, LogDirsCause> {
    let addr = broker
        .to_socket_addrs()?
        .next()
        .ok_or(LogDirsCause::Unresolved)?;
    let mut s = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;

    let header = RequestHeader::default()
        .with_request_api_key(ApiKey::DescribeLogDirs as i16)
        .with_request_api_version(VERSION)
        .with_correlation_id(1)
        .with_client_id(Some(StrBytes::from_static_str("kafkabench")));
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
    let mut body = BytesMut::new();
    header
        .encode(&mut body, DescribeLogDirsRequest::header_version(VERSION))
        .map_err(codec)?;
    req.encode(&mut body, VERSION).map_err(codec)?;
    let mut frame = Vec::with_capacity(body.len() + 4);
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    s.write_all(&frame)?;

    let mut len = [0u8; 4];
    s.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_RESPONSE {
        return Err(LogDirsCause::Implausible(len));
    }
    let mut buf = vec![0u8; len];
    s.read_exact(&mut buf)?;
    let mut buf = bytes::Bytes::from(buf);
    let rh = ResponseHeader::decode(&mut buf, DescribeLogDirsResponse::header_version(VERSION))
        .map_err(codec)?;
    if rh.correlation_id != 1 {
        return Err(LogDirsCause::Correlation);
    }
    let resp = DescribeLogDirsResponse::decode(&mut buf, VERSION).map_err(codec)?;
    let _ = buf.remaining();
    Ok(resp)
}
