//! The Prometheus Operator's PodMonitor for a run's pods: k8s-openapi has no types for custom
//! resources, so the few fields used are typed here, as the operator's CRD names them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde::Serialize;

use super::objects::{METRICS_PORT_NAME, RUN_LABEL};
use super::{Names, Options};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodMonitor {
    api_version: &'static str,
    kind: &'static str,
    metadata: ObjectMeta,
    spec: PodMonitorSpec,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PodMonitorSpec {
    selector: LabelSelector,
    pod_metrics_endpoints: Vec<PodMetricsEndpoint>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PodMetricsEndpoint {
    port: &'static str,
    path: &'static str,
    /// Shorter than the operator's default (30 s): runs last minutes, probes less.
    interval: &'static str,
}

/// Selects every pod of the run (shards and collector) by the run's label.
pub(super) fn pod_monitor(names: &Names, opts: &Options) -> PodMonitor {
    PodMonitor {
        api_version: "monitoring.coreos.com/v1",
        kind: "PodMonitor",
        metadata: ObjectMeta {
            name: Some(format!("kb-{}-metrics", names.run_label)),
            namespace: opts.namespace.clone(),
            labels: Some(BTreeMap::from([
                (
                    "app.kubernetes.io/name".to_string(),
                    "kafkabench".to_string(),
                ),
                (RUN_LABEL.to_string(), names.run_label.clone()),
            ])),
            ..ObjectMeta::default()
        },
        spec: PodMonitorSpec {
            selector: LabelSelector {
                match_labels: Some(BTreeMap::from([(
                    RUN_LABEL.to_string(),
                    names.run_label.clone(),
                )])),
                ..LabelSelector::default()
            },
            pod_metrics_endpoints: vec![PodMetricsEndpoint {
                port: METRICS_PORT_NAME,
                path: "/metrics",
                interval: "5s",
            }],
        },
    }
}
