//! The walk of each response type kafkabench reads, one function per struct, field by field
//! as kafka-protocol 0.18's `Decodable` impl of that struct reads it (same version conditions,
//! same order). Element sizes are the crate's own, so the count is what its Vecs reserve.

use std::mem::size_of;

use kafka_protocol::messages::{
    api_versions_response as av, create_topics_response as ct,
    describe_client_quotas_response as dq, describe_configs_response as dc,
    describe_log_dirs_response as dl, find_coordinator_response as fc,
    incremental_alter_configs_response as iac, list_offsets_response as lo,
    metadata_response as md, sasl_authenticate_response as sau, sasl_handshake_response as sh,
    share_acknowledge_response as sa, share_fetch_response as sf,
    share_group_heartbeat_response as sgh,
};
use kafka_protocol::protocol::StrBytes;

use super::{Bounded, Step, Walk};

impl Bounded for av::ApiVersionsResponse {
    fn walk(w: &mut Walk<'_>, v: i16) -> Step {
        let flex = v >= 3;
        w.i16()?;
        w.array(flex, size_of::<av::ApiVersion>(), |w| {
            w.i16()?;
            w.i16()?;
            w.i16()?;
            w.tags(flex)
        })?;
        if v >= 1 {
            w.i32()?;
        }
        w.tags_known(flex, |tag, w| match tag {
            0 => Some(features(w, size_of::<av::SupportedFeatureKey>())),
            1 => Some(w.i64()),
            2 => Some(features(w, size_of::<av::FinalizedFeatureKey>())),
            3 => Some(w.boolean()),
            _ => None,
        })
    }
}

/// ApiVersions' supported and finalized features: a name and two INT16s each.
fn features(w: &mut Walk<'_>, size: usize) -> Step {
    w.array(true, size, |w| {
        w.string(true)?;
        w.i16()?;
        w.i16()?;
        w.tags(true)
    })
}

impl Bounded for sh::SaslHandshakeResponse {
    fn walk(w: &mut Walk<'_>, _v: i16) -> Step {
        w.i16()?;
        w.array(false, size_of::<StrBytes>(), |w| w.string(false))
    }
}

impl Bounded for sau::SaslAuthenticateResponse {
    fn walk(w: &mut Walk<'_>, v: i16) -> Step {
        let flex = v >= 2;
        w.i16()?;
        w.string(flex)?;
        w.bytes(flex)?;
        if v >= 1 {
            w.i64()?;
        }
        w.tags(flex)
    }
}

impl Bounded for fc::FindCoordinatorResponse {
    fn walk(w: &mut Walk<'_>, v: i16) -> Step {
        let compact = v >= 3;
        if v >= 1 {
            w.i32()?;
        }
        if v <= 3 {
            w.i16()?;
            if v >= 1 {
                w.string(compact)?;
            }
            w.i32()?;
            w.string(compact)?;
            w.i32()?;
        }
        if v >= 4 {
            w.array(true, size_of::<fc::Coordinator>(), |w| {
                w.string(true)?;
                w.i32()?;
                w.string(true)?;
                w.i32()?;
                w.i16()?;
                w.string(true)?;
                w.tags(true)
            })?;
        }
        w.tags(v >= 3)
    }
}

impl Bounded for md::MetadataResponse {
    fn walk(w: &mut Walk<'_>, v: i16) -> Step {
        let flex = v >= 9;
        if v >= 3 {
            w.i32()?;
        }
        w.array(flex, size_of::<md::MetadataResponseBroker>(), |w| {
            w.i32()?;
            w.string(flex)?;
            w.i32()?;
            if v >= 1 {
                w.string(flex)?;
            }
            w.tags(flex)
        })?;
        if v >= 2 {
            w.string(flex)?;
        }
        if v >= 1 {
            w.i32()?;
        }
        w.array(flex, size_of::<md::MetadataResponseTopic>(), |w| {
            w.i16()?;
            w.string(flex)?;
            if v >= 10 {
                w.uuid()?;
            }
            if v >= 1 {
                w.boolean()?;
            }
            w.array(flex, size_of::<md::MetadataResponsePartition>(), |w| {
                w.i16()?;
                w.i32()?;
                w.i32()?;
                if v >= 7 {
                    w.i32()?;
                }
                w.ints(flex)?;
                w.ints(flex)?;
                if v >= 5 {
                    w.ints(flex)?;
                }
                w.tags(flex)
            })?;
            if v >= 8 {
                w.i32()?;
            }
            w.tags(flex)
        })?;
        if (8..=10).contains(&v) {
            w.i32()?;
        }
        if v >= 13 {
            w.i16()?;
        }
        w.tags(flex)
    }
}

impl Bounded for iac::IncrementalAlterConfigsResponse {
    fn walk(w: &mut Walk<'_>, v: i16) -> Step {
        let flex = v >= 1;
        w.i32()?;
        w.array(flex, size_of::<iac::AlterConfigsResourceResponse>(), |w| {
            w.i16()?;
            w.string(flex)?;
            w.i8()?;
            w.string(flex)?;
            w.tags(flex)
        })?;
        w.tags(flex)
    }
}

impl Bounded for dl::DescribeLogDirsResponse {
    fn walk(w: &mut Walk<'_>, v: i16) -> Step {
        let flex = v >= 2;
        w.i32()?;
        if v >= 3 {
            w.i16()?;
        }
        w.array(flex, size_of::<dl::DescribeLogDirsResult>(), |w| {
            w.i16()?;
            w.string(flex)?;
            w.array(flex, size_of::<dl::DescribeLogDirsTopic>(), |w| {
                w.string(flex)?;
                w.array(flex, size_of::<dl::DescribeLogDirsPartition>(), |w| {
                    w.i32()?;
                    w.i64()?;
                    w.i64()?;
                    w.boolean()?;
                    w.tags(flex)
                })?;
                w.tags(flex)
            })?;
            if v >= 4 {
                w.i64()?;
                w.i64()?;
            }
            w.tags(flex)
        })?;
        w.tags(flex)
    }
}

impl Bounded for dc::DescribeConfigsResponse {
    fn walk(w: &mut Walk<'_>, v: i16) -> Step {
        let flex = v >= 4;
        w.i32()?;
        w.array(flex, size_of::<dc::DescribeConfigsResult>(), |w| {
            w.i16()?;
            w.string(flex)?;
            w.i8()?;
            w.string(flex)?;
            w.array(flex, size_of::<dc::DescribeConfigsResourceResult>(), |w| {
                w.string(flex)?;
                w.string(flex)?;
                w.boolean()?;
                w.i8()?;
                w.boolean()?;
                w.array(flex, size_of::<dc::DescribeConfigsSynonym>(), |w| {
                    w.string(flex)?;
                    w.string(flex)?;
                    w.i8()?;
                    w.tags(flex)
                })?;
                if v >= 3 {
                    w.i8()?;
                    w.string(flex)?;
                }
                w.tags(flex)
            })?;
            w.tags(flex)
        })?;
        w.tags(flex)
    }
}

impl Bounded for dq::DescribeClientQuotasResponse {
    fn walk(w: &mut Walk<'_>, v: i16) -> Step {
        let flex = v >= 1;
        w.i32()?;
        w.i16()?;
        w.string(flex)?;
        w.array(flex, size_of::<dq::EntryData>(), |w| {
            w.array(flex, size_of::<dq::EntityData>(), |w| {
                w.string(flex)?;
                w.string(flex)?;
                w.tags(flex)
            })?;
            w.array(flex, size_of::<dq::ValueData>(), |w| {
                w.string(flex)?;
                w.i64()?; // a FLOAT64
                w.tags(flex)
            })?;
            w.tags(flex)
        })?;
        w.tags(flex)
    }
}

impl Bounded for lo::ListOffsetsResponse {
    fn walk(w: &mut Walk<'_>, v: i16) -> Step {
        let flex = v >= 6;
        if v >= 2 {
            w.i32()?;
        }
        w.array(flex, size_of::<lo::ListOffsetsTopicResponse>(), |w| {
            w.string(flex)?;
            w.array(flex, size_of::<lo::ListOffsetsPartitionResponse>(), |w| {
                w.i32()?;
                w.i16()?;
                w.i64()?;
                w.i64()?;
                if v >= 4 {
                    w.i32()?;
                }
                w.tags(flex)
            })?;
            w.tags(flex)
        })?;
        w.tags(flex)
    }
}

impl Bounded for ct::CreateTopicsResponse {
    fn walk(w: &mut Walk<'_>, v: i16) -> Step {
        let flex = v >= 5;
        w.i32()?;
        w.array(flex, size_of::<ct::CreatableTopicResult>(), |w| {
            w.string(flex)?;
            if v >= 7 {
                w.uuid()?;
            }
            w.i16()?;
            w.string(flex)?;
            if flex {
                w.i32()?;
                w.i16()?;
                w.array(true, size_of::<ct::CreatableTopicConfigs>(), |w| {
                    w.string(true)?;
                    w.string(true)?;
                    w.boolean()?;
                    w.i8()?;
                    w.boolean()?;
                    w.tags(true)
                })?;
            }
            // Tag 0: topic_config_error_code.
            w.tags_known(flex, |tag, w| (tag == 0).then(|| w.i16()))
        })?;
        w.tags(flex)
    }
}

impl Bounded for sgh::ShareGroupHeartbeatResponse {
    fn walk(w: &mut Walk<'_>, _v: i16) -> Step {
        w.i32()?;
        w.i16()?;
        w.string(true)?;
        w.string(true)?;
        w.i32()?;
        w.i32()?;
        w.option(|w| {
            w.array(true, size_of::<sgh::TopicPartitions>(), |w| {
                w.uuid()?;
                w.ints(true)?;
                w.tags(true)
            })?;
            w.tags(true)
        })?;
        w.tags(true)
    }
}

/// A partition leader as ShareFetch and ShareAcknowledge name it.
fn leader(w: &mut Walk<'_>) -> Step {
    w.i32()?;
    w.i32()?;
    w.tags(true)
}

/// The brokers ShareFetch and ShareAcknowledge name, of `size` each.
fn node_endpoints(w: &mut Walk<'_>, size: usize) -> Step {
    w.array(true, size, |w| {
        w.i32()?;
        w.string(true)?;
        w.i32()?;
        w.string(true)?;
        w.tags(true)
    })
}

impl Bounded for sf::ShareFetchResponse {
    fn walk(w: &mut Walk<'_>, _v: i16) -> Step {
        w.i32()?;
        w.i16()?;
        w.string(true)?;
        w.i32()?;
        w.array(true, size_of::<sf::ShareFetchableTopicResponse>(), |w| {
            w.uuid()?;
            w.array(true, size_of::<sf::PartitionData>(), |w| {
                w.i32()?;
                w.i16()?;
                w.string(true)?;
                w.i16()?;
                w.string(true)?;
                leader(w)?;
                w.bytes(true)?;
                w.array(true, size_of::<sf::AcquiredRecords>(), |w| {
                    w.i64()?;
                    w.i64()?;
                    w.i16()?;
                    w.tags(true)
                })?;
                w.tags(true)
            })?;
            w.tags(true)
        })?;
        node_endpoints(w, size_of::<sf::NodeEndpoint>())?;
        w.tags(true)
    }
}

impl Bounded for sa::ShareAcknowledgeResponse {
    fn walk(w: &mut Walk<'_>, _v: i16) -> Step {
        w.i32()?;
        w.i16()?;
        w.string(true)?;
        w.array(true, size_of::<sa::ShareAcknowledgeTopicResponse>(), |w| {
            w.uuid()?;
            w.array(true, size_of::<sa::PartitionData>(), |w| {
                w.i32()?;
                w.i16()?;
                w.string(true)?;
                leader(w)?;
                w.tags(true)
            })?;
            w.tags(true)
        })?;
        node_endpoints(w, size_of::<sa::NodeEndpoint>())?;
        w.tags(true)
    }
}
