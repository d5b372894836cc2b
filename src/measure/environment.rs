//! Where a result was measured: kafkabench and librdkafka, the cluster as it answers, and the
//! client machine before the run. Two results from different places measure the places as
//! much as the change; `compare` names what differs.

use serde::{Deserialize, Serialize};

/// The environment of one invocation, in the result file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// kafkabench's version.
    pub kafkabench: String,
    /// librdkafka's version, as it reports it.
    pub librdkafka: String,
    #[serde(default)]
    pub cluster: Option<ClusterPrint>,
    #[serde(default)]
    pub host: Option<Host>,
}

/// The cluster, as its brokers answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterPrint {
    pub cluster_id: Option<String>,
    pub brokers: usize,
    /// What the brokers announce in ApiVersions, a release's signature: the highest version of
    /// Produce, Fetch and Metadata, the number of APIs, and the finalized `metadata.version`
    /// level (KRaft). One entry per distinct answer (a rolling upgrade shows two). None for a
    /// cluster that wants TLS or SASL (asked over a plain socket only).
    #[serde(default)]
    pub api: Vec<String>,
    /// The brokers' own configs and the client quotas (`measure::broker_config`); None in files
    /// of an older kafkabench.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configs: Option<super::broker_config::BrokerConfigs>,
}

/// The client machine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub cpu: Option<String>,
    pub cores: u32,
    pub memory_bytes: Option<u64>,
    pub kernel: Option<String>,
    /// The 1-minute load average before the first run.
    pub load: Option<f64>,
}

impl Environment {
    /// What differs between a baseline's environment and this one, in words, one item each
    /// (the load only when it differs by more than a core).
    pub fn differences(&self, base: &Environment) -> Vec<String> {
        let mut out = Vec::new();
        let mut differ = |what: &str, a: String, b: String| {
            if a != b {
                out.push(format!("{what}: {a} → {b}"));
            }
        };
        differ(
            "kafkabench",
            base.kafkabench.clone(),
            self.kafkabench.clone(),
        );
        differ(
            "librdkafka",
            base.librdkafka.clone(),
            self.librdkafka.clone(),
        );
        let opt = |s: &Option<String>| s.clone().unwrap_or_else(|| "unknown".into());
        if let (Some(a), Some(b)) = (&base.cluster, &self.cluster) {
            differ("cluster id", opt(&a.cluster_id), opt(&b.cluster_id));
            differ("brokers", a.brokers.to_string(), b.brokers.to_string());
            if !a.api.is_empty() && !b.api.is_empty() {
                differ("broker APIs", a.api.join("; "), b.api.join("; "));
            }
        }
        if let (Some(a), Some(b)) = (&base.host, &self.host) {
            differ("client CPU", opt(&a.cpu), opt(&b.cpu));
            differ("client cores", a.cores.to_string(), b.cores.to_string());
            let gib = |m: Option<u64>| {
                m.map_or("unknown".into(), |m| {
                    format!("{:.1} GiB", m as f64 / (1u64 << 30) as f64)
                })
            };
            differ("client memory", gib(a.memory_bytes), gib(b.memory_bytes));
            differ("client kernel", opt(&a.kernel), opt(&b.kernel));
            if let (Some(x), Some(y)) = (a.load, b.load) {
                if (x - y).abs() > 1.0 {
                    out.push(format!("client load before the run: {x:.2} → {y:.2}"));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_what_changed_and_nothing_else() {
        let base = Environment {
            kafkabench: "0.1.0".into(),
            librdkafka: "2.12.1".into(),
            cluster: Some(ClusterPrint {
                cluster_id: Some("abc".into()),
                brokers: 1,
                api: vec!["Produce v12".into()],
                configs: None,
            }),
            host: Some(Host {
                cpu: Some("EPYC".into()),
                cores: 2,
                memory_bytes: Some(24 << 30),
                kernel: Some("6.1".into()),
                load: Some(0.5),
            }),
        };
        assert!(base.differences(&base).is_empty());
        let mut cur = base.clone();
        cur.cluster.as_mut().unwrap().brokers = 3;
        cur.host.as_mut().unwrap().cores = 8;
        cur.host.as_mut().unwrap().load = Some(0.9);
        assert_eq!(
            cur.differences(&base),
            vec!["brokers: 1 → 3", "client cores: 2 → 8"]
        );
    }
}
