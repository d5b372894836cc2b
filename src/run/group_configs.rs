//! The consumer protocol's group configs (KIP-848) a scenario sets in `consumer { }`
//! (`consumer.heartbeat.interval.ms` …), as a step before the group's members start.

use super::blocking::blocking;
use super::error::RunError;
use crate::plan::RunPlan;

/// The consumer protocol's group configs (`consumer.heartbeat.interval.ms` …) set on the
/// group before its members join; a refusal (a value outside the broker's bounds) fails the
/// run before it measures.
pub(super) async fn set(
    rp: &RunPlan,
    client: &crate::model::Props,
    configs: Vec<(String, String)>,
) -> Result<(), RunError> {
    if configs.is_empty() {
        return Ok(());
    }
    let group = client.get("group.id").unwrap_or_default().to_string();
    let security = super::logdirs::security(&rp.admin).map_err(RunError::TopicLookup)?;
    let brokers = crate::wire::admin::bootstrap_list(&rp.bootstrap);
    let name = group.clone();
    blocking(move || {
        let pairs: Vec<(&str, &str)> = configs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        crate::wire::admin::alter_group_configs(&brokers, &security, &name, &pairs)
    })
    .await?
    .map_err(|error| RunError::GroupConfigs {
        group,
        error: Box::new(error),
    })
}
