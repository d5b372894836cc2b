//! The Kubernetes objects themselves, built from k8s-openapi's typed structs: a field that
//! does not exist, or a value of the wrong type, does not compile.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Affinity, ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, EnvVar, EnvVarSource,
    KeyToPath, ObjectFieldSelector, PodAffinityTerm, PodAntiAffinity, PodSecurityContext, PodSpec,
    PodTemplateSpec, ResourceRequirements, SecretKeySelector, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::ByteString;

use super::env::EnvRead;
use super::layout::{Content, Placed};
use super::{Names, Options, MOUNT};

const VOLUME: &str = "scenario";
/// The label every object of one run carries, and the shards' anti-affinity selects by.
pub(crate) const RUN_LABEL: &str = "kafkabench/run-id";
const COMPONENT: &str = "app.kubernetes.io/component";

fn meta(name: &str, names: &Names, opts: &Options, component: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: opts.namespace.clone(),
        labels: Some(labels(names, component)),
        ..ObjectMeta::default()
    }
}

fn labels(names: &Names, component: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "app.kubernetes.io/name".to_string(),
            "kafkabench".to_string(),
        ),
        (COMPONENT.to_string(), component.to_string()),
        (RUN_LABEL.to_string(), names.run_label.clone()),
    ])
}

/// The scenario's files, text in `data`, anything else in `binaryData`.
pub(super) fn config_map(files: &[Placed], names: &Names, opts: &Options) -> ConfigMap {
    let (mut data, mut binary) = (BTreeMap::new(), BTreeMap::new());
    for f in files {
        match &f.content {
            Content::Text(t) => {
                data.insert(f.key.clone(), t.clone());
            }
            Content::Binary(b) => {
                binary.insert(f.key.clone(), ByteString(b.clone()));
            }
        }
    }
    ConfigMap {
        metadata: meta(&names.config_map, names, opts, "scenario"),
        data: Some(data),
        binary_data: (!binary.is_empty()).then_some(binary),
        ..ConfigMap::default()
    }
}

/// The Indexed Job of shards: pod i runs shard i, once (`backoffLimit: 0`, `restartPolicy:
/// Never`): a shard run again would send its share twice and start after the barrier.
pub(super) fn shards(
    files: &[Placed],
    env: &[EnvRead],
    scenario: &str,
    names: &Names,
    opts: &Options,
) -> Job {
    let n = opts.shards;
    let command = vec![
        "kafkabench".to_string(),
        "run".into(),
        format!("{MOUNT}/{scenario}"),
        "--shard".into(),
        format!("$(JOB_COMPLETION_INDEX)/{n}"),
        "--run-id".into(),
        opts.run_id.clone(),
    ];
    let command = with_metrics(command, opts);
    // The index as the Job controller annotates each pod; declared here so `$(...)` in the
    // command expands to it.
    let index = EnvVar {
        name: "JOB_COMPLETION_INDEX".into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                    .into(),
                ..ObjectFieldSelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    };
    let resources = requests(&opts.cpu, &opts.memory);
    let mut pod = pod(files, env, names, "shard", command, resources, Some(index));
    pod.containers[0].ports = metrics_ports(opts);
    pod.affinity = Some(Affinity {
        // One shard per node: two on one node would measure that node's limits, not the
        // cluster's. A shard with no node left stays Pending, which the collector's deadline
        // reports, rather than sharing a node silently.
        pod_anti_affinity: Some(PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                label_selector: Some(LabelSelector {
                    match_labels: Some(BTreeMap::from([
                        (RUN_LABEL.to_string(), names.run_label.clone()),
                        (COMPONENT.to_string(), "shard".to_string()),
                    ])),
                    ..LabelSelector::default()
                }),
                topology_key: "kubernetes.io/hostname".into(),
                ..PodAffinityTerm::default()
            }]),
            ..PodAntiAffinity::default()
        }),
        ..Affinity::default()
    });
    job(&names.shards, names, opts, "shard", Some(n), pod)
}

/// The collector: one pod that creates the topics, waits for the shards' results on the
/// control topic, merges them and judges `expect` once; its exit code is the run's.
pub(super) fn collector(
    files: &[Placed],
    env: &[EnvRead],
    scenario: &str,
    names: &Names,
    opts: &Options,
) -> Job {
    let command = vec![
        "kafkabench".to_string(),
        "collect".into(),
        format!("{MOUNT}/{scenario}"),
        "--run-id".into(),
        opts.run_id.clone(),
        "--shards".into(),
        opts.shards.to_string(),
    ];
    let command = with_metrics(command, opts);
    let resources = requests("250m", "256Mi");
    let mut pod = pod(files, env, names, "collector", command, resources, None);
    pod.containers[0].ports = metrics_ports(opts);
    job(&names.collector, names, opts, "collector", None, pod)
}

/// A Job run once: `indexed` with that many pods (each gets its index), or a single pod.
fn job(
    name: &str,
    names: &Names,
    opts: &Options,
    component: &str,
    indexed: Option<u32>,
    pod: PodSpec,
) -> Job {
    let n = indexed.map_or(1, |n| i32::try_from(n).unwrap_or(i32::MAX));
    Job {
        metadata: meta(name, names, opts, component),
        spec: Some(JobSpec {
            completion_mode: indexed.map(|_| "Indexed".into()),
            completions: Some(n),
            parallelism: Some(n),
            backoff_limit: Some(0),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(names, component)),
                    annotations: opts.metrics_port.map(scrape_annotations),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod),
            },
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

/// The process serves `--metrics` on the port, and lingers up to a minute at the end until a
/// scrape has read the final totals (an in-cluster Prometheus scrapes every 15 to 60 s).
fn with_metrics(mut command: Vec<String>, opts: &Options) -> Vec<String> {
    if let Some(port) = opts.metrics_port {
        command.extend([
            "--metrics".into(),
            format!(":{port}"),
            "--metrics-linger".into(),
            METRICS_LINGER.into(),
        ]);
    }
    command
}

/// How long a pod waits at its end for a scrape.
pub(crate) const METRICS_LINGER: &str = "60s";
/// The container port's name, which a PodMonitor selects.
pub(crate) const METRICS_PORT_NAME: &str = "metrics";

/// The named port `--metrics` is served on, for a PodMonitor to select.
fn metrics_ports(opts: &Options) -> Option<Vec<ContainerPort>> {
    opts.metrics_port.map(|port| {
        vec![ContainerPort {
            name: Some(METRICS_PORT_NAME.into()),
            container_port: i32::from(port),
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]
    })
}

/// The annotations a Prometheus with the common `kubernetes-pods` scrape job follows.
fn scrape_annotations(port: u16) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("prometheus.io/scrape".to_string(), "true".to_string()),
        ("prometheus.io/port".to_string(), port.to_string()),
        ("prometheus.io/path".to_string(), "/metrics".to_string()),
    ])
}

/// Requests only: a CPU limit would throttle the send loop and show up as latency.
fn requests(cpu: &str, memory: &str) -> ResourceRequirements {
    ResourceRequirements {
        requests: Some(BTreeMap::from([
            ("cpu".to_string(), Quantity(cpu.to_string())),
            ("memory".to_string(), Quantity(memory.to_string())),
        ])),
        ..ResourceRequirements::default()
    }
}

fn pod(
    files: &[Placed],
    env: &[EnvRead],
    names: &Names,
    container: &str,
    command: Vec<String>,
    resources: ResourceRequirements,
    index: Option<EnvVar>,
) -> PodSpec {
    // Secrets by reference only: the values live in a Secret the user creates.
    let secrets = env.iter().map(|r| EnvVar {
        name: r.name.clone(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: names.secret.clone(),
                key: r.name.clone(),
                optional: r.optional.then_some(true),
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    });
    let env: Vec<EnvVar> = index.into_iter().chain(secrets).collect();
    PodSpec {
        restart_policy: Some("Never".into()),
        security_context: Some(PodSecurityContext {
            run_as_non_root: Some(true),
            ..PodSecurityContext::default()
        }),
        containers: vec![Container {
            name: container.into(),
            image: Some(names.image.clone()),
            command: Some(command),
            env: (!env.is_empty()).then_some(env),
            resources: Some(resources),
            volume_mounts: Some(vec![VolumeMount {
                name: VOLUME.into(),
                mount_path: MOUNT.into(),
                read_only: Some(true),
                ..VolumeMount::default()
            }]),
            ..Container::default()
        }],
        volumes: Some(vec![Volume {
            name: VOLUME.into(),
            config_map: Some(ConfigMapVolumeSource {
                name: names.config_map.clone(),
                items: Some(
                    files
                        .iter()
                        .map(|f| KeyToPath {
                            key: f.key.clone(),
                            path: f.path.clone(),
                            ..KeyToPath::default()
                        })
                        .collect(),
                ),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        }]),
        ..PodSpec::default()
    }
}
