//! The cluster-level requests the share consumer needs: a bootstrap connection, the group's
//! coordinator, topic metadata (ids, leaders, broker addresses), and group configs.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{
    ApiKey, FindCoordinatorRequest, IncrementalAlterConfigsRequest, MetadataRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::conn::{Conn, Limits};
use super::{Security, WireError};

/// The addresses of a `bootstrap.servers` list, in its order.
pub(crate) fn bootstrap_list(servers: &str) -> Vec<String> {
    servers
        .split(',')
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .collect()
}

/// Connect to the first of `bootstrap` that answers; the error of the last one otherwise.
pub(crate) fn bootstrap_conn(
    bootstrap: &[String],
    security: &Security,
    limits: Limits,
    client_id: &str,
) -> Result<Conn, WireError> {
    let mut last = WireError::Config("no bootstrap address given".to_string());
    for b in bootstrap {
        match Conn::connect(b, security, limits, client_id) {
            Ok(c) => return Ok(c),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Retriable coordinator errors: COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
/// NOT_COORDINATOR.
pub(crate) fn coordinator_moving(code: i16) -> bool {
    matches!(code, 14..=16)
}

/// The address ("host:port") of `group`'s coordinator, asking `conn`; a coordinator that is
/// still loading or not yet elected is asked again (briefly backing off) until `deadline`.
pub(crate) fn find_coordinator(
    conn: &mut Conn,
    group: &str,
    deadline: Instant,
) -> Result<String, WireError> {
    let key = ApiKey::FindCoordinator as i16;
    let mut backoff = Duration::from_millis(50);
    loop {
        let v = conn.version::<FindCoordinatorRequest>()?;
        let g = StrBytes::from_string(group.to_string());
        // v4 asks for several keys at once; before it, one key. Key type 0: a group.
        let req = if v >= 4 {
            FindCoordinatorRequest::default()
                .with_key_type(0)
                .with_coordinator_keys(vec![g])
        } else {
            FindCoordinatorRequest::default()
                .with_key_type(0)
                .with_key(g)
        };
        let resp = conn.request_v(v, &req)?;
        let (code, msg, host, port) = if v >= 4 {
            match resp.coordinators.into_iter().next() {
                Some(c) => (c.error_code, c.error_message, c.host, c.port),
                None => return Err(conn.garbled(key, "no coordinator in the answer".to_string())),
            }
        } else {
            (resp.error_code, resp.error_message, resp.host, resp.port)
        };
        if code == 0 {
            return Ok(format!("{}:{}", host.as_str(), port));
        }
        if !coordinator_moving(code) || Instant::now() + backoff >= deadline {
            return Err(conn.kafka_err(key, code, msg.as_ref(), &format!("group {group}")));
        }
        std::thread::sleep(backoff);
        backoff = (backoff * 2).min(Duration::from_millis(500));
    }
}

/// One topic as the cluster describes it.
#[derive(Debug, Clone)]
pub(crate) struct TopicMeta {
    pub id: Uuid,
    /// Leader broker id per partition index; -1 where there is none.
    pub leaders: Vec<i32>,
    /// The topic's error (UNKNOWN_TOPIC_OR_PARTITION when it does not exist), or 0.
    pub error: i16,
}

/// What Metadata says about some topics and the brokers.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClusterMeta {
    pub brokers: HashMap<i32, String>,
    pub topics: HashMap<String, TopicMeta>,
}

/// Metadata for `topics` (by name; no auto-creation).
pub(crate) fn metadata(conn: &mut Conn, topics: &[String]) -> Result<ClusterMeta, WireError> {
    // v10+ carries topic ids, which ShareFetch and the share assignment speak.
    let v = conn.version_within::<MetadataRequest>(10, 13)?;
    let req = MetadataRequest::default()
        .with_allow_auto_topic_creation(false)
        .with_topics(Some(
            topics
                .iter()
                .map(|t| {
                    MetadataRequestTopic::default()
                        .with_name(Some(TopicName(StrBytes::from_string(t.clone()))))
                })
                .collect(),
        ));
    let resp = conn.request_v(v, &req)?;
    let mut out = ClusterMeta::default();
    for b in resp.brokers {
        out.brokers
            .insert(b.node_id.0, format!("{}:{}", b.host.as_str(), b.port));
    }
    for t in resp.topics {
        let Some(name) = t.name else { continue };
        let mut leaders = Vec::new();
        for p in &t.partitions {
            let i = p.partition_index;
            if !(0..1 << 20).contains(&i) {
                continue; // an implausible index: ignore rather than allocate for it
            }
            if leaders.len() <= i as usize {
                leaders.resize(i as usize + 1, -1);
            }
            leaders[i as usize] = if p.error_code == 0 || p.leader_id.0 >= 0 {
                p.leader_id.0
            } else {
                -1
            };
        }
        out.topics.insert(
            name.0.as_str().to_string(),
            TopicMeta {
                id: t.topic_id,
                leaders,
                error: t.error_code,
            },
        );
    }
    Ok(out)
}

/// Set configs of share (or consumer) group `group` (IncrementalAlterConfigs, resource type
/// GROUP = 32, operation SET), e.g. `share.auto.offset.reset=earliest` before members join.
pub(crate) fn alter_group_configs(
    bootstrap: &[String],
    security: &Security,
    group: &str,
    configs: &[(&str, &str)],
) -> Result<(), WireError> {
    alter_configs(
        bootstrap,
        security,
        32,
        group,
        &format!("group {group}"),
        configs,
    )
}

/// Set configs of topic `topic` (resource type TOPIC = 2, operation SET), leaving its other
/// configs as they are (which the older AlterConfigs would reset).
pub(crate) fn alter_topic_configs(
    bootstrap: &[String],
    security: &Security,
    topic: &str,
    configs: &[(&str, &str)],
) -> Result<(), WireError> {
    alter_configs(
        bootstrap,
        security,
        2,
        topic,
        &format!("topic {topic}"),
        configs,
    )
}

fn alter_configs(
    bootstrap: &[String],
    security: &Security,
    resource_type: i8,
    name: &str,
    what: &str,
    configs: &[(&str, &str)],
) -> Result<(), WireError> {
    let mut conn = bootstrap_conn(
        bootstrap,
        security,
        Limits::new(Duration::from_secs(10)),
        "kafkabench",
    )?;
    let req = IncrementalAlterConfigsRequest::default().with_resources(vec![
        AlterConfigsResource::default()
            .with_resource_type(resource_type)
            .with_resource_name(StrBytes::from_string(name.to_string()))
            .with_configs(
                configs
                    .iter()
                    .map(|(k, v)| {
                        AlterableConfig::default()
                            .with_name(StrBytes::from_string(k.to_string()))
                            .with_config_operation(0)
                            .with_value(Some(StrBytes::from_string(v.to_string())))
                    })
                    .collect(),
            ),
    ]);
    let resp = conn.request(&req)?;
    for r in resp.responses {
        if r.error_code != 0 {
            return Err(conn.kafka_err(
                ApiKey::IncrementalAlterConfigs as i16,
                r.error_code,
                r.error_message.as_ref(),
                what,
            ));
        }
    }
    Ok(())
}
