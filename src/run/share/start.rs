//! Starting a run's share group: its configs set on the group before any member joins, then
//! one member per thread; and where an existing topic's records begin and end.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::Duration;

use super::super::blocking::blocking;
use super::super::consumer::{ConsumerOutcome, Layout, Reads};
use super::super::error::{RunError, ShareGroupError};
use super::super::shared::Shared;
use super::{run, ShareJob};
use crate::model::ShareSpec;
use crate::plan::RunPlan;
use crate::wire::{Security, ShareConfig};

/// A member's client id when the scenario sets none.
pub(in crate::run) const DEFAULT_CLIENT_ID: &str = "kafkabench-share";

/// What the members of a run's share group share, to start them.
pub(in crate::run) struct Members<'a> {
    pub layout: &'a Arc<Layout>,
    pub base: Arc<Vec<i64>>,
    /// Records of an existing topic the group drains (`backlog = existing`), else 0.
    pub existing: u64,
    pub shared: &'a Arc<Shared>,
    pub reads: &'a Arc<Reads>,
    pub barrier: &'a Arc<Barrier>,
    pub count: u32,
    pub interval: Duration,
}

/// Sets the group's configs (before any member joins: `share.auto.offset.reset` decides
/// where a new group starts), then starts the members, each joining on its own thread.
pub(in crate::run) async fn start(
    rp: &RunPlan,
    spec: &ShareSpec,
    m: Members<'_>,
) -> Result<Vec<JoinHandle<ConsumerOutcome>>, RunError> {
    let security = Security::from_props(|k| rp.admin.get(k).map(str::to_string))
        .map_err(|e| RunError::ShareGroup(ShareGroupError::Security(e)))?;
    let brokers = crate::wire::admin::bootstrap_list(&rp.bootstrap);
    let group = spec
        .client
        .get("group.id")
        .unwrap_or("kafkabench-share")
        .to_string();
    let configs: Vec<(String, String)> = spec
        .group
        .iter()
        .map(|p| (p.key.clone(), p.value.clone()))
        .collect();
    {
        let (brokers, security, name) = (brokers.clone(), security.clone(), group.clone());
        blocking(move || {
            let pairs: Vec<(&str, &str)> = configs
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            crate::wire::alter_group_configs(&brokers, &security, &name, &pairs)
        })
        .await?
        .map_err(|error| {
            RunError::ShareGroup(ShareGroupError::Configs {
                group: group.clone(),
                error: Box::new(error),
            })
        })?;
    }
    let num = |key: &str, default: i64| -> i64 {
        spec.client
            .get(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let config = ShareConfig {
        bootstrap: brokers,
        group_id: group,
        client_id: spec
            .client
            .get("client.id")
            .unwrap_or(DEFAULT_CLIENT_ID)
            .to_string(),
        topics: m.layout.topics.clone(),
        max_wait: Duration::from_millis(num("fetch.max.wait.ms", 500) as u64),
        max_records: num("max.poll.records", 500) as i32,
        max_bytes: num("fetch.max.bytes", 50 * 1024 * 1024) as i32,
        min_bytes: num("fetch.min.bytes", 1) as i32,
        request_timeout: Duration::from_millis(num("request.timeout.ms", 30_000) as u64),
        security,
    };
    let fetch_wait = config.max_wait;
    let settled_existing = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for index in 0..m.count {
        let job = ShareJob {
            config: config.clone(),
            spec: spec.clone(),
            layout: m.layout.clone(),
            index,
            producers: rp.workload.producers,
            shared: m.shared.clone(),
            reads: m.reads.clone(),
            barrier: m.barrier.clone(),
            // Poison records come back until the delivery count limit: give them the lock
            // duration too, in case a member's lock has to expire first.
            drain: Duration::from_secs(10) + fetch_wait * 2 + lock_duration(spec),
            interval: m.interval,
            base: m.base.clone(),
            existing: m.existing,
            settled_existing: settled_existing.clone(),
        };
        let h = std::thread::Builder::new()
            .name(format!("kb-share-{index}"))
            .spawn(move || run(job))
            .map_err(|source| RunError::ThreadStart {
                thread: "a share consumer thread",
                source,
            })?;
        handles.push(h);
    }
    Ok(handles)
}

/// The group's acquisition lock (Kafka's default 30 s when the scenario is silent).
fn lock_duration(spec: &ShareSpec) -> Duration {
    let ms = spec
        .group
        .get("share.record.lock.duration.ms")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30_000u64);
    Duration::from_millis(ms)
}

/// Each run partition's low and high watermark (an existing topic: what a share group
/// starting at the earliest offset finds there).
pub(in crate::run) fn watermarks(
    config: &rdkafka::config::ClientConfig,
    layout: &Layout,
) -> Result<Vec<(i64, i64)>, super::super::admin::AdminError> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let c: BaseConsumer = config
        .create()
        .map_err(super::super::admin::AdminError::EndsConsumer)?;
    let mut out = Vec::with_capacity(layout.len());
    for t in &layout.topics {
        for p in 0..layout.partitions {
            let (low, high) =
                c.fetch_watermarks(t, p, Duration::from_secs(10))
                    .map_err(|source| super::super::admin::AdminError::End {
                        topic: t.clone(),
                        partition: p,
                        source,
                    })?;
            out.push((low.max(0), high.max(0)));
        }
    }
    Ok(out)
}
