//! The environment a result was measured in (`measure::Environment`): the client machine,
//! read from the kernel before the first run, and the cluster, asked once it has answered
//! (its brokers' configs by `broker_configs`).

use std::time::Duration;

use kafka_protocol::messages::{ApiKey, ApiVersionsRequest};
use kafka_protocol::protocol::StrBytes;

use super::admin::Admin;
use super::broker_configs::Clients;
use super::logdirs;
use crate::measure::environment::{ClusterPrint, Environment, Host};
use crate::plan::RunPlan;
use crate::wire::conn::{Conn, Limits};
use crate::wire::Security;

/// v3 answers with the finalized features (Kafka 2.4 and later).
const VERSION: i16 = 3;
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// kafkabench, librdkafka and the client machine, now (before any run loads it).
pub(crate) fn local() -> Environment {
    Environment {
        kafkabench: env!("CARGO_PKG_VERSION").to_string(),
        librdkafka: rdkafka::util::get_rdkafka_version().1,
        cluster: None,
        host: Some(host()),
    }
}

fn host() -> Host {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let cpu = read("/proc/cpuinfo").and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    });
    let memory_bytes = read("/proc/meminfo").and_then(|t| {
        let kb: u64 = t
            .lines()
            .find(|l| l.starts_with("MemTotal:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        Some(kb * 1024)
    });
    Host {
        cpu,
        cores: super::cpu::cores(),
        memory_bytes,
        kernel: read("/proc/sys/kernel/osrelease").map(|k| k.trim().to_string()),
        load: read("/proc/loadavg")
            .and_then(|l| l.split_whitespace().next().and_then(|x| x.parse().ok())),
    }
}

/// The cluster of `rp`, as it answers: its id, its brokers, what each announces, and their
/// configs with the quotas that apply to `clients`.
pub(crate) async fn cluster(rp: &RunPlan, clients: &Clients) -> Option<ClusterPrint> {
    let (props, bootstrap) = (rp.admin.clone(), rp.bootstrap.clone());
    let clients = clients.clone();
    super::blocking::blocking(move || {
        let admin = Admin::connect(&props, &bootstrap).ok()?;
        let brokers = admin.brokers().ok()?;
        let mut api: Vec<String> = Vec::new();
        if let Ok(security) = logdirs::security(&props) {
            for b in &brokers {
                if let Some(a) = api_versions(b, &security) {
                    if !api.contains(&a) {
                        api.push(a);
                    }
                }
            }
        }
        Some(ClusterPrint {
            cluster_id: admin.cluster_id(),
            brokers: brokers.len(),
            api,
            configs: Some(super::broker_configs::brokers(&props, &bootstrap, &clients)),
        })
    })
    .await
    .ok()
    .flatten()
}

/// One broker's ApiVersions, summarised: `Produce v12, Fetch v17, Metadata v13, 78 APIs,
/// metadata.version 27`. Connecting asks ApiVersions already (for what the broker serves);
/// asked again here for the finalized features, which only the full answer carries.
fn api_versions(broker: &str, security: &Security) -> Option<String> {
    let mut conn = Conn::connect(broker, security, Limits::new(IO_TIMEOUT), "kafkabench").ok()?;
    let req = ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("kafkabench"))
        .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
    let r = conn.request_v(VERSION, &req).ok()?;
    if r.error_code != 0 {
        return None;
    }
    let max = |k: ApiKey| {
        r.api_keys
            .iter()
            .find(|a| a.api_key == k as i16)
            .map_or("-".to_string(), |a| format!("v{}", a.max_version))
    };
    let mut text = format!(
        "Produce {}, Fetch {}, Metadata {}, {} APIs",
        max(ApiKey::Produce),
        max(ApiKey::Fetch),
        max(ApiKey::Metadata),
        r.api_keys.len()
    );
    if let Some(f) = r
        .finalized_features
        .iter()
        .find(|f| f.name.as_str() == "metadata.version")
    {
        text.push_str(&format!(", metadata.version {}", f.max_version_level));
    }
    Some(text)
}
