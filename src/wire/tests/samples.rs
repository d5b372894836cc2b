//! Valid responses of every type the wire client reads, at every version kafka-protocol
//! decodes, encoded by kafka-protocol itself with every field set (arrays of two, unknown
//! tagged fields where the version has them): the seeds the fuzz test mutates.

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    api_versions_response as av, create_topics_response as ct,
    describe_client_quotas_response as dq, describe_configs_response as dc,
    describe_log_dirs_response as dl, find_coordinator_response as fc,
    incremental_alter_configs_response as iac, list_offsets_response as lo,
    metadata_response as md, share_acknowledge_response as sa, share_fetch_response as sf,
    share_group_heartbeat_response as sgh, ApiKey, ApiVersionsRequest, BrokerId,
    CreateTopicsRequest, DescribeClientQuotasRequest, DescribeConfigsRequest,
    DescribeLogDirsRequest, FindCoordinatorRequest, IncrementalAlterConfigsRequest,
    ListOffsetsRequest, MetadataRequest, ResponseHeader, SaslAuthenticateRequest,
    SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse, ShareAcknowledgeRequest,
    ShareFetchRequest, ShareGroupHeartbeatRequest, TopicName,
};
use kafka_protocol::protocol::{Encodable, HeaderVersion, Message, Request, StrBytes};
use uuid::Uuid;

use super::super::bounds::{self, Bounded, Prefix, Walk, MAX_DECODED};
use super::super::conn::decode_response;

/// The correlation id every sample answers.
pub(super) const CORRELATION: i32 = 7;

/// One encoded response, with the client's own decoding entry point for its type.
pub(super) struct Sample {
    pub name: String,
    pub version: i16,
    /// The frame after its length: header and body.
    pub bytes: Vec<u8>,
    /// `conn::decode_response` for this type: what the client runs on a frame.
    pub decode: fn(Bytes, i16) -> Result<(), String>,
    /// The bounds walk alone: how far it read, what it counted, where the lengths are.
    pub walk: fn(&[u8], i16) -> Result<Walked, String>,
}

pub(super) struct Walked {
    pub end: usize,
    pub heap: usize,
    pub prefixes: Vec<(usize, Prefix)>,
}

fn header_version<R: Request>(v: i16) -> i16 {
    if R::KEY == ApiKey::ApiVersions as i16 {
        0
    } else {
        R::Response::header_version(v)
    }
}

fn walk<R: Request>(b: &[u8], v: i16) -> Result<Walked, String>
where
    R::Response: Bounded,
{
    let mut w = Walk::recording(b, MAX_DECODED);
    w.header(header_version::<R>(v))?;
    R::Response::walk(&mut w, v)?;
    // check() is this walk; both must agree.
    assert_eq!(
        bounds::check::<R::Response>(b, header_version::<R>(v), v),
        Ok(w.heap)
    );
    Ok(Walked {
        end: w.at(),
        heap: w.heap,
        prefixes: w.prefixes.unwrap_or_default(),
    })
}

/// The response `make(v)` of request `R`, at every version kafka-protocol decodes.
fn each_version<R: Request>(make: impl Fn(i16) -> R::Response) -> Vec<Sample>
where
    R::Response: Bounded,
{
    let range = <R::Response as Message>::VERSIONS;
    (range.min..=range.max)
        .map(|v| {
            let mut buf = BytesMut::new();
            ResponseHeader::default()
                .with_correlation_id(CORRELATION)
                .with_unknown_tagged_fields(tags(header_version::<R>(v) >= 1))
                .encode(&mut buf, header_version::<R>(v))
                .expect("header encodes");
            make(v)
                .encode(&mut buf, v)
                .unwrap_or_else(|e| panic!("{} v{v} encodes: {e}", api(R::KEY)));
            Sample {
                name: format!("{} v{v}", api(R::KEY)),
                version: v,
                bytes: buf.to_vec(),
                decode: |b, v| decode_response::<R>(b, v, CORRELATION).map(drop),
                walk: walk::<R>,
            }
        })
        .collect()
}

fn api(key: i16) -> String {
    super::super::error::api_name(key)
}

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// Unknown tagged fields, where the version has a tagged-field section.
fn tags(flexible: bool) -> BTreeMap<i32, Bytes> {
    let mut m = BTreeMap::new();
    if flexible {
        m.insert(90, Bytes::from_static(b"x"));
        m.insert(20_000, Bytes::from_static(b"tagged"));
    }
    m
}

fn uuid(n: u8) -> Uuid {
    Uuid::from_bytes([n; 16])
}

/// Every sample: each response type the client reads, every version.
pub(super) fn all() -> Vec<Sample> {
    let mut out = Vec::new();
    out.extend(each_version::<ApiVersionsRequest>(api_versions));
    out.extend(each_version::<SaslHandshakeRequest>(|_| {
        SaslHandshakeResponse::default()
            .with_error_code(33)
            .with_mechanisms(vec![s("PLAIN"), s("SCRAM-SHA-512")])
    }));
    out.extend(each_version::<SaslAuthenticateRequest>(|v| {
        SaslAuthenticateResponse::default()
            .with_error_code(58)
            .with_error_message(Some(s("bad password")))
            .with_auth_bytes(Bytes::from_static(b"r=nonce,s=c2FsdA==,i=4096"))
            .with_session_lifetime_ms(if v >= 1 { 3_600_000 } else { 0 })
            .with_unknown_tagged_fields(tags(v >= 2))
    }));
    out.extend(each_version::<FindCoordinatorRequest>(find_coordinator));
    out.extend(each_version::<MetadataRequest>(metadata));
    out.extend(each_version::<IncrementalAlterConfigsRequest>(|v| {
        let r = |name: &str| {
            iac::AlterConfigsResourceResponse::default()
                .with_error_code(40)
                .with_error_message(Some(s("invalid config")))
                .with_resource_type(32)
                .with_resource_name(s(name))
                .with_unknown_tagged_fields(tags(v >= 1))
        };
        iac::IncrementalAlterConfigsResponse::default()
            .with_throttle_time_ms(5)
            .with_responses(vec![r("g1"), r("g2")])
            .with_unknown_tagged_fields(tags(v >= 1))
    }));
    out.extend(each_version::<DescribeLogDirsRequest>(describe_log_dirs));
    out.extend(each_version::<DescribeConfigsRequest>(describe_configs));
    out.extend(each_version::<DescribeClientQuotasRequest>(
        describe_client_quotas,
    ));
    out.extend(each_version::<CreateTopicsRequest>(create_topics));
    out.extend(each_version::<ListOffsetsRequest>(list_offsets));
    out.extend(each_version::<ShareGroupHeartbeatRequest>(|_| {
        let tp = |n: u8| {
            sgh::TopicPartitions::default()
                .with_topic_id(uuid(n))
                .with_partitions(vec![0, 1, 2])
                .with_unknown_tagged_fields(tags(true))
        };
        sgh::ShareGroupHeartbeatResponse::default()
            .with_throttle_time_ms(1)
            .with_error_code(0)
            .with_error_message(Some(s("none")))
            .with_member_id(Some(s("member-1")))
            .with_member_epoch(3)
            .with_heartbeat_interval_ms(5000)
            .with_assignment(Some(
                sgh::Assignment::default()
                    .with_topic_partitions(vec![tp(1), tp(2)])
                    .with_unknown_tagged_fields(tags(true)),
            ))
            .with_unknown_tagged_fields(tags(true))
    }));
    out.extend(each_version::<ShareFetchRequest>(|_| share_fetch()));
    out.extend(each_version::<ShareAcknowledgeRequest>(|_| {
        share_acknowledge()
    }));
    out
}

fn api_versions(v: i16) -> av::ApiVersionsResponse {
    let flex = v >= 3;
    let key = |k: i16| {
        av::ApiVersion::default()
            .with_api_key(k)
            .with_min_version(0)
            .with_max_version(k + 3)
            .with_unknown_tagged_fields(tags(flex))
    };
    let mut r = av::ApiVersionsResponse::default()
        .with_error_code(0)
        .with_api_keys(vec![key(0), key(1), key(78)])
        .with_throttle_time_ms(if v >= 1 { 10 } else { 0 })
        .with_unknown_tagged_fields(tags(flex));
    if flex {
        let feature = |n: &str| {
            av::SupportedFeatureKey::default()
                .with_name(s(n))
                .with_min_version(1)
                .with_max_version(27)
                .with_unknown_tagged_fields(tags(true))
        };
        let finalized = |n: &str| {
            av::FinalizedFeatureKey::default()
                .with_name(s(n))
                .with_max_version_level(27)
                .with_min_version_level(27)
                .with_unknown_tagged_fields(tags(true))
        };
        r = r
            .with_supported_features(vec![feature("metadata.version"), feature("group.version")])
            .with_finalized_features_epoch(42)
            .with_finalized_features(vec![finalized("metadata.version")])
            .with_zk_migration_ready(true);
    }
    r
}

fn find_coordinator(v: i16) -> fc::FindCoordinatorResponse {
    let mut r = fc::FindCoordinatorResponse::default()
        .with_throttle_time_ms(if v >= 1 { 2 } else { 0 })
        .with_unknown_tagged_fields(tags(v >= 3));
    if v <= 3 {
        r = r
            .with_error_code(15)
            .with_error_message(if v >= 1 {
                Some(s("not available"))
            } else {
                None
            })
            .with_node_id(BrokerId(2))
            .with_host(s("broker-2.example"))
            .with_port(9092);
    } else {
        let c = |g: &str| {
            fc::Coordinator::default()
                .with_key(s(g))
                .with_node_id(BrokerId(1))
                .with_host(s("broker-1.example"))
                .with_port(9093)
                .with_error_code(0)
                .with_error_message(Some(s("")))
                .with_unknown_tagged_fields(tags(true))
        };
        r = r
            .with_error_message(Some(s("")))
            .with_coordinators(vec![c("g1"), c("g2")]);
    }
    r
}

fn metadata(v: i16) -> md::MetadataResponse {
    let flex = v >= 9;
    let broker = |id: i32| {
        md::MetadataResponseBroker::default()
            .with_node_id(BrokerId(id))
            .with_host(s("broker.example"))
            .with_port(9092 + id)
            .with_rack(if v >= 1 { Some(s("rack-a")) } else { None })
            .with_unknown_tagged_fields(tags(flex))
    };
    let partition = |i: i32| {
        md::MetadataResponsePartition::default()
            .with_error_code(0)
            .with_partition_index(i)
            .with_leader_id(BrokerId(1))
            .with_leader_epoch(if v >= 7 { 4 } else { -1 })
            .with_replica_nodes(vec![BrokerId(1), BrokerId(2)])
            .with_isr_nodes(vec![BrokerId(1)])
            .with_offline_replicas(if v >= 5 { vec![BrokerId(2)] } else { vec![] })
            .with_unknown_tagged_fields(tags(flex))
    };
    let topic = |name: &str, n: u8| {
        md::MetadataResponseTopic::default()
            .with_error_code(0)
            .with_name(Some(TopicName(s(name))))
            .with_topic_id(if v >= 10 { uuid(n) } else { Uuid::nil() })
            .with_is_internal(v >= 1)
            .with_partitions(vec![partition(0), partition(1)])
            .with_topic_authorized_operations(if v >= 8 { 0x0f } else { i32::MIN })
            .with_unknown_tagged_fields(tags(flex))
    };
    md::MetadataResponse::default()
        .with_throttle_time_ms(if v >= 3 { 3 } else { 0 })
        .with_brokers(vec![broker(1), broker(2)])
        .with_cluster_id(if v >= 2 { Some(s("cluster")) } else { None })
        .with_controller_id(BrokerId(if v >= 1 { 1 } else { -1 }))
        .with_topics(vec![topic("a", 1), topic("b", 2)])
        .with_cluster_authorized_operations(if (8..=10).contains(&v) {
            0x1f
        } else {
            i32::MIN
        })
        .with_error_code(if v >= 13 { 5 } else { 0 })
        .with_unknown_tagged_fields(tags(flex))
}

fn describe_log_dirs(v: i16) -> dl::DescribeLogDirsResponse {
    let flex = v >= 2;
    let partition = |i: i32| {
        dl::DescribeLogDirsPartition::default()
            .with_partition_index(i)
            .with_partition_size(1 << 30)
            .with_offset_lag(0)
            .with_is_future_key(i == 1)
            .with_unknown_tagged_fields(tags(flex))
    };
    let topic = |name: &str| {
        dl::DescribeLogDirsTopic::default()
            .with_name(TopicName(s(name)))
            .with_partitions(vec![partition(0), partition(1)])
            .with_unknown_tagged_fields(tags(flex))
    };
    let dir = |path: &str| {
        dl::DescribeLogDirsResult::default()
            .with_error_code(0)
            .with_log_dir(s(path))
            .with_topics(vec![topic("a"), topic("b")])
            .with_total_bytes(if v >= 4 { 1 << 40 } else { -1 })
            .with_usable_bytes(if v >= 4 { 1 << 39 } else { -1 })
            .with_unknown_tagged_fields(tags(flex))
    };
    dl::DescribeLogDirsResponse::default()
        .with_throttle_time_ms(0)
        .with_error_code(0)
        .with_results(vec![dir("/data/1"), dir("/data/2")])
        .with_unknown_tagged_fields(tags(flex))
}

fn describe_configs(v: i16) -> dc::DescribeConfigsResponse {
    let flex = v >= 4;
    let synonym = |source: i8| {
        dc::DescribeConfigsSynonym::default()
            .with_name(s("log.retention.hours"))
            .with_value(Some(s("168")))
            .with_source(source)
            .with_unknown_tagged_fields(tags(flex))
    };
    let config = |name: &str| {
        dc::DescribeConfigsResourceResult::default()
            .with_name(s(name))
            .with_value(Some(s("8")))
            .with_read_only(false)
            .with_config_source(2)
            .with_is_sensitive(false)
            .with_synonyms(vec![synonym(2), synonym(5)])
            .with_config_type(if v >= 3 { 3 } else { 0 })
            .with_documentation(if v >= 3 {
                Some(s("threads"))
            } else {
                Some(s(""))
            })
            .with_unknown_tagged_fields(tags(flex))
    };
    let result = |name: &str| {
        dc::DescribeConfigsResult::default()
            .with_error_code(0)
            .with_error_message(Some(s("")))
            .with_resource_type(4)
            .with_resource_name(s(name))
            .with_configs(vec![
                config("num.io.threads"),
                config("num.network.threads"),
            ])
            .with_unknown_tagged_fields(tags(flex))
    };
    dc::DescribeConfigsResponse::default()
        .with_throttle_time_ms(0)
        .with_results(vec![result("1"), result("2")])
        .with_unknown_tagged_fields(tags(flex))
}

fn describe_client_quotas(v: i16) -> dq::DescribeClientQuotasResponse {
    let flex = v >= 1;
    let entity = |kind: &str, name: Option<&str>| {
        dq::EntityData::default()
            .with_entity_type(s(kind))
            .with_entity_name(name.map(s))
            .with_unknown_tagged_fields(tags(flex))
    };
    let value = |key: &str| {
        dq::ValueData::default()
            .with_key(s(key))
            .with_value(1048576.0)
            .with_unknown_tagged_fields(tags(flex))
    };
    let entry = |client: Option<&str>| {
        dq::EntryData::default()
            .with_entity(vec![
                entity("user", Some("alice")),
                entity("client-id", client),
            ])
            .with_values(vec![
                value("producer_byte_rate"),
                value("consumer_byte_rate"),
            ])
            .with_unknown_tagged_fields(tags(flex))
    };
    dq::DescribeClientQuotasResponse::default()
        .with_throttle_time_ms(0)
        .with_error_code(0)
        .with_error_message(None)
        .with_entries(Some(vec![entry(Some("kafkabench")), entry(None)]))
        .with_unknown_tagged_fields(tags(flex))
}

fn list_offsets(v: i16) -> lo::ListOffsetsResponse {
    let flex = v >= 6;
    let partition = |i: i32| {
        lo::ListOffsetsPartitionResponse::default()
            .with_partition_index(i)
            .with_error_code(0)
            .with_timestamp(-1)
            .with_offset(1 << 40)
            .with_leader_epoch(if v >= 4 { 3 } else { -1 })
            .with_unknown_tagged_fields(tags(flex))
    };
    let topic = |name: &str| {
        lo::ListOffsetsTopicResponse::default()
            .with_name(TopicName(s(name)))
            .with_partitions(vec![partition(0), partition(1)])
            .with_unknown_tagged_fields(tags(flex))
    };
    lo::ListOffsetsResponse::default()
        .with_throttle_time_ms(if v >= 2 { 4 } else { 0 })
        .with_topics(vec![topic("a"), topic("b")])
        .with_unknown_tagged_fields(tags(flex))
}

fn create_topics(v: i16) -> ct::CreateTopicsResponse {
    let flex = v >= 5;
    let config = |name: &str| {
        ct::CreatableTopicConfigs::default()
            .with_name(s(name))
            .with_value(Some(s("1")))
            .with_read_only(true)
            .with_config_source(5)
            .with_is_sensitive(true)
            .with_unknown_tagged_fields(tags(true))
    };
    let topic = |name: &str, n: u8| {
        let mut t = ct::CreatableTopicResult::default()
            .with_name(TopicName(s(name)))
            .with_topic_id(if v >= 7 { uuid(n) } else { Uuid::nil() })
            .with_error_code(36)
            .with_error_message(Some(s("exists")))
            .with_unknown_tagged_fields(tags(flex));
        if flex {
            t = t
                .with_topic_config_error_code(29)
                .with_num_partitions(3)
                .with_replication_factor(1)
                .with_configs(Some(vec![config("min.insync.replicas"), config("x")]));
        }
        t
    };
    ct::CreateTopicsResponse::default()
        .with_throttle_time_ms(0)
        .with_topics(vec![topic("a", 1), topic("b", 2)])
        .with_unknown_tagged_fields(tags(flex))
}

fn share_fetch() -> sf::ShareFetchResponse {
    let leader = sf::LeaderIdAndEpoch::default()
        .with_leader_id(1)
        .with_leader_epoch(2)
        .with_unknown_tagged_fields(tags(true));
    let acquired = |first: i64| {
        sf::AcquiredRecords::default()
            .with_first_offset(first)
            .with_last_offset(first + 9)
            .with_delivery_count(1)
            .with_unknown_tagged_fields(tags(true))
    };
    let partition = |i: i32| {
        sf::PartitionData::default()
            .with_partition_index(i)
            .with_error_code(0)
            .with_error_message(Some(s("")))
            .with_acknowledge_error_code(0)
            .with_acknowledge_error_message(Some(s("")))
            .with_current_leader(leader.clone())
            .with_records(Some(Bytes::from_static(&[0; 70])))
            .with_acquired_records(vec![acquired(0), acquired(10)])
            .with_unknown_tagged_fields(tags(true))
    };
    let topic = |n: u8| {
        sf::ShareFetchableTopicResponse::default()
            .with_topic_id(uuid(n))
            .with_partitions(vec![partition(0), partition(1)])
            .with_unknown_tagged_fields(tags(true))
    };
    let node = |id: i32| {
        sf::NodeEndpoint::default()
            .with_node_id(BrokerId(id))
            .with_host(s("broker.example"))
            .with_port(9092)
            .with_rack(Some(s("rack-a")))
            .with_unknown_tagged_fields(tags(true))
    };
    sf::ShareFetchResponse::default()
        .with_throttle_time_ms(0)
        .with_error_code(0)
        .with_error_message(Some(s("")))
        .with_acquisition_lock_timeout_ms(30_000)
        .with_responses(vec![topic(1), topic(2)])
        .with_node_endpoints(vec![node(1), node(2)])
        .with_unknown_tagged_fields(tags(true))
}

fn share_acknowledge() -> sa::ShareAcknowledgeResponse {
    let leader = sa::LeaderIdAndEpoch::default()
        .with_leader_id(1)
        .with_leader_epoch(2)
        .with_unknown_tagged_fields(tags(true));
    let partition = |i: i32| {
        sa::PartitionData::default()
            .with_partition_index(i)
            .with_error_code(0)
            .with_error_message(Some(s("")))
            .with_current_leader(leader.clone())
            .with_unknown_tagged_fields(tags(true))
    };
    let topic = |n: u8| {
        sa::ShareAcknowledgeTopicResponse::default()
            .with_topic_id(uuid(n))
            .with_partitions(vec![partition(0), partition(1)])
            .with_unknown_tagged_fields(tags(true))
    };
    let node = |id: i32| {
        sa::NodeEndpoint::default()
            .with_node_id(BrokerId(id))
            .with_host(s("broker.example"))
            .with_port(9092)
            .with_rack(None)
            .with_unknown_tagged_fields(tags(true))
    };
    sa::ShareAcknowledgeResponse::default()
        .with_throttle_time_ms(0)
        .with_error_code(0)
        .with_error_message(None)
        .with_responses(vec![topic(1), topic(2)])
        .with_node_endpoints(vec![node(1), node(2)])
        .with_unknown_tagged_fields(tags(true))
}
