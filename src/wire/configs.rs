//! A resource's configuration and the client quotas, as DescribeConfigs and DescribeClientQuotas
//! answer them. librdkafka has no call for quotas, and its DescribeConfigs would be a second
//! way to ask what this one connection (secured as every other of kafkabench's) already can.
//! The answers are returned whole, as the broker gave them: which ones a result keeps, and
//! what of a secret, is the caller's decision.

use kafka_protocol::messages::describe_client_quotas_request::ComponentData;
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::{ApiKey, DescribeClientQuotasRequest, DescribeConfigsRequest};
use kafka_protocol::protocol::StrBytes;

use super::conn::Conn;
use super::WireError;

/// DescribeConfigs' resource types.
pub(crate) const TOPIC: i8 = 2;
pub(crate) const BROKER: i8 = 4;

/// v1 has each config's source (v0's `is_default` only; Kafka 4 serves v1 to v4).
const CONFIG_VERSIONS: (i16, i16) = (1, 4);

/// One config as DescribeConfigs answered it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Described {
    pub name: String,
    /// None when the broker withholds it (a sensitive config) or it is unset.
    pub value: Option<String>,
    /// Kafka's `ConfigSource`: 1 topic, 2 dynamic broker, 3 dynamic default, 4 static, 5 the
    /// default, 6 a broker logger's; 0 unknown.
    pub source: i8,
    pub sensitive: bool,
}

/// Every config of one resource (`BROKER` with the broker's id, which only that broker answers;
/// `TOPIC` with its name), without synonyms or documentation.
pub(crate) fn describe_configs(
    conn: &mut Conn,
    resource_type: i8,
    name: &str,
) -> Result<Vec<Described>, WireError> {
    let v = conn.version_within::<DescribeConfigsRequest>(CONFIG_VERSIONS.0, CONFIG_VERSIONS.1)?;
    let req = DescribeConfigsRequest::default()
        .with_include_synonyms(false)
        .with_include_documentation(false)
        .with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(resource_type)
            .with_resource_name(StrBytes::from_string(name.to_string()))
            .with_configuration_keys(None)]);
    let resp = conn.request_v(v, &req)?;
    let what = match resource_type {
        BROKER => format!("broker {name}"),
        TOPIC => format!("topic {name}"),
        _ => name.to_string(),
    };
    let Some(r) = resp.results.into_iter().next() else {
        let detail = format!("no result for {what}");
        return Err(conn.garbled(ApiKey::DescribeConfigs as i16, detail));
    };
    if r.error_code != 0 {
        let key = ApiKey::DescribeConfigs as i16;
        return Err(conn.kafka_err(key, r.error_code, r.error_message.as_ref(), &what));
    }
    Ok(r.configs
        .into_iter()
        .map(|c| Described {
            name: c.name.to_string(),
            value: c.value.map(|v| v.to_string()),
            source: c.config_source,
            sensitive: c.is_sensitive,
        })
        .collect())
}

/// One quota entity's values: its components by type (`user`, `client-id`, `ip`), a `None`
/// name for the type's default entity.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QuotaEntry {
    pub entity: Vec<(String, Option<String>)>,
    pub values: Vec<(String, f64)>,
}

/// Every client quota the cluster holds (no filter component, not strict: Kafka answers all of
/// them); the caller keeps those that apply to it.
pub(crate) fn describe_client_quotas(conn: &mut Conn) -> Result<Vec<QuotaEntry>, WireError> {
    let req = DescribeClientQuotasRequest::default()
        .with_components(Vec::<ComponentData>::new())
        .with_strict(false);
    let resp = conn.request(&req)?;
    if resp.error_code != 0 {
        let key = ApiKey::DescribeClientQuotas as i16;
        return Err(conn.kafka_err(key, resp.error_code, resp.error_message.as_ref(), ""));
    }
    Ok(resp
        .entries
        .unwrap_or_default()
        .into_iter()
        .map(|e| QuotaEntry {
            entity: (e.entity.into_iter())
                .map(|c| {
                    (
                        c.entity_type.to_string(),
                        c.entity_name.map(|n| n.to_string()),
                    )
                })
                .collect(),
            values: (e.values.into_iter())
                .map(|v| (v.key.to_string(), v.value))
                .collect(),
        })
        .collect())
}
