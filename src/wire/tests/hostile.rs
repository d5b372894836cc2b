//! Hostile brokers on a real socket: a frame length of 2 GiB, a frame that never completes, and
//! a broker that speaks Kafka well until one answer claims 2^32 elements (to Metadata, to a
//! share member's heartbeat, to its ShareFetch). Each is an error within the client's timeouts;
//! the process neither aborts nor waits for ever.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use kafka_protocol::messages::{
    api_versions_response as av, find_coordinator_response as fc, metadata_response as md,
    share_group_heartbeat_response as sgh, ApiKey, ApiVersionsResponse, BrokerId,
    FindCoordinatorResponse, MetadataResponse, ShareGroupHeartbeatResponse, TopicName,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use uuid::Uuid;

use super::super::admin;
use super::super::conn::{Conn, Limits};
use super::super::{Security, ShareConsumer, WireError};
use super::config;

struct Req {
    api: i16,
    version: i16,
}

enum Reply {
    /// A response body: the broker adds the header and the length.
    Body(Vec<u8>),
    /// Bytes written as they are.
    Raw(Vec<u8>),
}

/// A broker on a free port that answers every request on every connection with `answer`.
fn broker(answer: impl Fn(&Req, u16) -> Reply + Send + Sync + 'static) -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            let a = Arc::clone(&answer);
            std::thread::spawn(move || serve(s, &*a, port));
        }
    });
    format!("127.0.0.1:{port}")
}

fn serve(mut s: TcpStream, answer: &dyn Fn(&Req, u16) -> Reply, port: u16) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    loop {
        let mut len = [0u8; 4];
        if s.read_exact(&mut len).is_err() {
            return;
        }
        let mut req = vec![0u8; (u32::from_be_bytes(len) as usize).min(1 << 20)];
        if s.read_exact(&mut req).is_err() || req.len() < 8 {
            return;
        }
        let r = Req {
            api: i16::from_be_bytes([req[0], req[1]]),
            version: i16::from_be_bytes([req[2], req[3]]),
        };
        let out = match answer(&r, port) {
            Reply::Raw(b) => b,
            Reply::Body(body) => {
                let hv =
                    ApiKey::try_from(r.api).map_or(0, |k| k.response_header_version(r.version));
                let mut frame = vec![0; 4];
                frame.extend_from_slice(&req[4..8]); // the correlation id
                if hv >= 1 {
                    frame.push(0); // no tagged fields
                }
                frame.extend_from_slice(&body);
                let n = (frame.len() - 4) as u32;
                frame[..4].copy_from_slice(&n.to_be_bytes());
                frame
            }
        };
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

fn encode(m: &impl Encodable, version: i16) -> Vec<u8> {
    let mut b = BytesMut::new();
    m.encode(&mut b, version).expect("encodes");
    b.to_vec()
}

fn s(t: &str) -> StrBytes {
    StrBytes::from_string(t.to_string())
}

const TOPIC_ID: Uuid = Uuid::from_bytes([7; 16]);

/// Honest answers for ApiVersions, Metadata, FindCoordinator and ShareGroupHeartbeat (this
/// broker is node 1, the leader and coordinator of everything).
fn honest(r: &Req, port: u16) -> Option<Vec<u8>> {
    let key = |k: ApiKey, lo: i16, hi: i16| {
        av::ApiVersion::default()
            .with_api_key(k as i16)
            .with_min_version(lo)
            .with_max_version(hi)
    };
    Some(match ApiKey::try_from(r.api).ok()? {
        ApiKey::ApiVersions => encode(
            &ApiVersionsResponse::default().with_api_keys(vec![
                key(ApiKey::ApiVersions, 0, 3),
                key(ApiKey::Metadata, 0, 13),
                key(ApiKey::FindCoordinator, 0, 6),
                key(ApiKey::ShareGroupHeartbeat, 1, 1),
                key(ApiKey::ShareFetch, 1, 1),
                key(ApiKey::ShareAcknowledge, 1, 1),
            ]),
            r.version,
        ),
        ApiKey::Metadata => encode(
            &MetadataResponse::default()
                .with_brokers(vec![md::MetadataResponseBroker::default()
                    .with_node_id(BrokerId(1))
                    .with_host(s("127.0.0.1"))
                    .with_port(i32::from(port))])
                .with_topics(vec![md::MetadataResponseTopic::default()
                    .with_name(Some(TopicName(s("t"))))
                    .with_topic_id(TOPIC_ID)
                    .with_partitions(vec![md::MetadataResponsePartition::default()
                        .with_partition_index(0)
                        .with_leader_id(BrokerId(1))])]),
            r.version,
        ),
        ApiKey::FindCoordinator => encode(
            &FindCoordinatorResponse::default().with_coordinators(vec![fc::Coordinator::default()
                .with_key(s("g"))
                .with_node_id(BrokerId(1))
                .with_host(s("127.0.0.1"))
                .with_port(i32::from(port))]),
            r.version,
        ),
        ApiKey::ShareGroupHeartbeat => encode(
            &ShareGroupHeartbeatResponse::default()
                .with_member_epoch(1)
                .with_heartbeat_interval_ms(5000)
                .with_assignment(Some(sgh::Assignment::default().with_topic_partitions(
                    vec![
                    sgh::TopicPartitions::default()
                        .with_topic_id(TOPIC_ID)
                        .with_partitions(vec![0]),
                ],
                ))),
            r.version,
        ),
        _ => return None,
    })
}

/// A compact array count of 2^32 - 2, as an unsigned varint.
const HUGE: [u8; 5] = [0xff, 0xff, 0xff, 0xff, 0x0f];

fn limits() -> Limits {
    Limits::new(Duration::from_secs(2))
}

fn garbled(e: &WireError, api: &str) {
    assert!(matches!(e, WireError::Garbled { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains(api), "{text}");
}

#[test]
fn a_frame_of_2_gib_or_1_gib_is_refused_unread() {
    for len in [0x8000_0000u32, 0x4000_0000] {
        let addr = broker(move |_, _| {
            let mut b = len.to_be_bytes().to_vec();
            b.extend_from_slice(&[0; 64]);
            Reply::Raw(b)
        });
        let e = Conn::connect(&addr, &Security::plaintext(), limits(), "t").expect_err("too large");
        garbled(&e, "ApiVersions");
        assert!(e.to_string().contains("the limit is"), "{e}");
    }
}

#[test]
fn a_frame_that_never_completes_times_out() {
    // 60 MiB announced (under the cap), 16 bytes sent, then silence.
    let addr = broker(|_, _| {
        let mut b = (60u32 << 20).to_be_bytes().to_vec();
        b.extend_from_slice(&[0; 16]);
        Reply::Raw(b)
    });
    let mut l = limits();
    l.request = Duration::from_millis(500);
    let e = Conn::connect(&addr, &Security::plaintext(), l, "t").expect_err("never completes");
    assert!(matches!(e, WireError::TimedOut { .. }), "{e}");
}

#[test]
fn a_hostile_count_in_api_versions_is_refused() {
    // error_code 0, then api_keys claiming 2^32 - 2 entries.
    let addr = broker(|_, _| Reply::Body([&[0u8, 0][..], &HUGE, &[0; 8]].concat()));
    let e = Conn::connect(&addr, &Security::plaintext(), limits(), "t").expect_err("hostile");
    garbled(&e, "ApiVersions");
    assert!(e.to_string().contains("4294967294 elements"), "{e}");
}

#[test]
fn a_hostile_metadata_after_an_honest_handshake_is_refused() {
    let addr = broker(|r, port| {
        if r.api == ApiKey::Metadata as i16 {
            // throttle_time_ms, then brokers claiming 2^32 - 2 entries.
            return Reply::Body([&[0u8; 4][..], &HUGE, &[0; 8]].concat());
        }
        Reply::Body(honest(r, port).expect("asked what the fake serves"))
    });
    let mut conn = Conn::connect(&addr, &Security::plaintext(), limits(), "t").expect("honest");
    let e = admin::metadata(&mut conn, &["t".to_string()]).expect_err("hostile");
    garbled(&e, "Metadata");
    assert!(conn.is_broken());
}

fn share_config(addr: &str) -> super::super::ShareConfig {
    let mut cfg = config("g", &["t"]);
    cfg.bootstrap = vec![addr.to_string()];
    cfg.request_timeout = Duration::from_secs(1);
    cfg.max_wait = Duration::from_millis(50);
    cfg
}

#[test]
fn a_hostile_heartbeat_fails_the_join() {
    let addr = broker(|r, port| {
        if r.api == ApiKey::ShareGroupHeartbeat as i16 {
            // throttle, error 0, null message and member id, epoch, interval, an assignment
            // whose topics claim 2^32 - 2 entries.
            let mut b = vec![0u8; 6];
            b.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 0, 0x13, 0x88, 1]);
            b.extend_from_slice(&HUGE);
            return Reply::Body(b);
        }
        Reply::Body(honest(r, port).expect("asked what the fake serves"))
    });
    let e = ShareConsumer::join(share_config(&addr)).expect_err("hostile heartbeat");
    garbled(&e, "ShareGroupHeartbeat");
}

#[test]
fn a_hostile_share_fetch_fails_the_poll() {
    let addr = broker(|r, port| {
        if r.api == ApiKey::ShareFetch as i16 {
            // throttle, error 0, null message, lock timeout, responses claiming 2^32 - 2.
            let mut b = vec![0u8; 7];
            b.extend_from_slice(&30_000i32.to_be_bytes());
            b.extend_from_slice(&HUGE);
            return Reply::Body(b);
        }
        Reply::Body(honest(r, port).expect("asked what the fake serves"))
    });
    let mut c = ShareConsumer::join(share_config(&addr)).expect("honest join");
    assert_eq!(c.assignment(), &[(0, 0)]);
    // Polls retry a broken fetch until failures have lasted request_timeout (1 s), backing
    // off 100 ms each time: well within 100 polls.
    let mut polls = 0;
    let e = loop {
        polls += 1;
        assert!(polls <= 100, "still polling");
        match c.poll(|_| {}) {
            Ok(_) => continue,
            Err(e) => break e,
        }
    };
    garbled(&e, "ShareFetch");
    assert!(e.to_string().contains("4294967294 elements"), "{e}");
}
