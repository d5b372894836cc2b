//! Kubernetes manifests for a sharded run (`kafkabench k8s`): the scenario's files in a
//! ConfigMap, an Indexed Job of shards, the collector Job, and the Secret the pods read `env()`
//! values from, by reference only. Built from k8s-openapi's typed structs and written as
//! multi-document YAML (docs/distributed.md).

pub(crate) mod env;
mod layout;
mod monitor;
mod objects;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;

pub(crate) use env::EnvRead;

use crate::model::{PayloadSpec, Scenario};
use crate::source::{FileId, Sources};
use layout::Content;

/// Where the scenario's files are mounted in every pod.
pub(crate) const MOUNT: &str = "/scenario";
/// What a ConfigMap may hold, all files together.
pub(crate) const CONFIG_MAP_LIMIT: usize = 1 << 20;

/// What `kafkabench k8s` was asked for.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub shards: u32,
    pub image: String,
    pub namespace: Option<String>,
    pub run_id: String,
    /// Each shard's requests.
    pub cpu: String,
    pub memory: String,
    /// Every pod serves `--metrics` on this port (annotated for Prometheus); None: no metrics.
    pub metrics_port: Option<u16>,
    /// Also write a PodMonitor (the Prometheus Operator's) selecting the run's pods.
    pub pod_monitor: bool,
}

/// The objects' names, derived from the scenario and the run id.
#[derive(Clone, Debug)]
pub(crate) struct Names {
    pub config_map: String,
    pub shards: String,
    pub collector: String,
    /// The Secret the user creates; one per scenario, so it outlives runs.
    pub secret: String,
    pub run_label: String,
    pub image: String,
}

impl Names {
    fn new(scenario: &str, opts: &Options) -> Names {
        let run = slug(&opts.run_id, 20);
        let base = format!("kb-{}-{run}", slug(scenario, 36 - run.len()));
        Names {
            config_map: format!("{base}-scenario"),
            shards: format!("{base}-shard"),
            collector: format!("{base}-collect"),
            secret: format!("kb-{}-env", slug(scenario, 40)),
            run_label: run,
            image: opts.image.clone(),
        }
    }
}

/// A name part as object names take it: lower-case letters, digits and inner `-`.
fn slug(text: &str, max: usize) -> String {
    let mut s = String::new();
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    s.truncate(max.max(1));
    let s = s.trim_end_matches('-').to_string();
    if s.is_empty() {
        "x".into()
    } else {
        s
    }
}

/// The manifests of one sharded run.
pub(crate) struct Manifests {
    pub scenario: String,
    pub names: Names,
    pub opts: Options,
    pub env: Vec<EnvRead>,
    pub config_map: ConfigMap,
    pub shards: Job,
    pub collector: Job,
    pub pod_monitor: Option<monitor::PodMonitor>,
}

/// Why no manifests could be written; all wording here.
#[derive(Debug, thiserror::Error)]
pub(crate) enum K8sError {
    #[error(
        "{file}:{line} holds a secret value written in the file; a ConfigMap is readable by \
         anyone who may read the namespace"
    )]
    LiteralSecret { file: String, line: usize },
    #[error("cannot read the data file {path}: {reason}")]
    DataFile { path: String, reason: String },
    #[error(
        "the scenario's files take {total} bytes, over a ConfigMap's limit of 1 MiB \
         ({CONFIG_MAP_LIMIT} bytes); the largest is {largest} ({size} bytes)"
    )]
    TooBig {
        total: usize,
        largest: String,
        size: usize,
    },
    #[error("`{0}` (read with env()) cannot be a Secret key")]
    EnvName(String),
}

impl K8sError {
    /// The fix.
    pub(crate) fn help(&self) -> String {
        match self {
            K8sError::LiteralSecret { .. } => "read it with env(\"NAME\"): the pods take env() \
                values from the Secret, which this command names but never holds"
                .into(),
            K8sError::DataFile { .. } => "the data files travel in the ConfigMap: run this \
                where the scenario runs (`kafkabench check` finds them)"
                .into(),
            K8sError::TooBig { .. } => format!(
                "put the data files on a volume the pods mount (a PersistentVolumeClaim, or an \
                 image built with them) at their place below {MOUNT}, and edit the manifests \
                 to mount it"
            ),
            K8sError::EnvName(_) => "Secret keys take letters, digits, `-`, `_` and `.`: \
                rename the variable"
                .into(),
        }
    }
}

/// The manifests of `scenario`, loaded into `sources`; `cwd` resolves relative paths. Every
/// problem at once.
pub(crate) fn manifests(
    sources: &Sources,
    scenario: &Scenario,
    opts: &Options,
    cwd: &Path,
) -> Result<Manifests, Vec<K8sError>> {
    let mut problems = Vec::new();
    let mut files: Vec<(PathBuf, Content)> = Vec::new();
    let mut env = Vec::new();
    for id in sources.ids() {
        let f = sources.get(id);
        let shown = sources.shown_text(id);
        if let Some(at) = shown.bytes().zip(f.text.bytes()).position(|(a, b)| a != b) {
            problems.push(K8sError::LiteralSecret {
                file: f.path.display().to_string(),
                line: f.line_col(at).0,
            });
        }
        let entries = if id == FileId(0) {
            crate::syntax::parse(id, &f.text).map(|a| a.entries)
        } else {
            crate::syntax::parse_fragment(id, &f.text)
        };
        // Parsed once already by the check; nothing new to report.
        if let Ok(entries) = entries {
            env::reads(&entries, &mut env);
        }
        files.push((f.path.clone(), Content::Text(f.text.clone())));
    }
    for path in data_files(scenario) {
        match std::fs::read(&path) {
            Ok(bytes) => {
                let content = match String::from_utf8(bytes) {
                    Ok(t) => Content::Text(t),
                    Err(e) => Content::Binary(e.into_bytes()),
                };
                files.push((path, content));
            }
            Err(e) => problems.push(K8sError::DataFile {
                path: path.display().to_string(),
                reason: e.to_string(),
            }),
        }
    }
    for r in &env {
        if r.name.is_empty()
            || !r
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            problems.push(K8sError::EnvName(r.name.clone()));
        }
    }
    let placed = layout::place(files, cwd);
    let total: usize = placed.iter().map(|p| p.content.stored_len()).sum();
    if total > CONFIG_MAP_LIMIT {
        let big = placed.iter().max_by_key(|p| p.content.stored_len());
        problems.push(K8sError::TooBig {
            total,
            largest: big.map_or_else(String::new, |p| p.path.clone()),
            size: big.map_or(0, |p| p.content.stored_len()),
        });
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let names = Names::new(&scenario.name, opts);
    let main = placed[0].path.clone();
    Ok(Manifests {
        scenario: scenario.name.clone(),
        config_map: objects::config_map(&placed, &names, opts),
        shards: objects::shards(&placed, &env, &main, &names, opts),
        collector: objects::collector(&placed, &env, &main, &names, opts),
        pod_monitor: opts
            .metrics_port
            .filter(|_| opts.pod_monitor)
            .map(|_| monitor::pod_monitor(&names, opts)),
        names,
        opts: opts.clone(),
        env,
    })
}

/// Payload files (and sizes files) the runs read, each once, in the order met.
fn data_files(scenario: &Scenario) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for c in &scenario.cells {
        let w = &c.spec.workload;
        let mut paths: Vec<&PathBuf> = Vec::new();
        match &w.payload {
            PayloadSpec::File { path, .. } => paths.push(path),
            PayloadSpec::Schema(s) => paths.extend([&s.path].into_iter().chain(&s.lines)),
            _ => {}
        }
        // `size: sizes("data/sizes.csv")`: read again where the pod checks the scenario.
        if let Some(path) = (w.payload.size())
            .and_then(|s| s.dist())
            .and_then(|d| d.shape.file())
        {
            paths.push(path);
        }
        if let crate::model::KeySpec::Schema(s) = &w.key {
            paths.extend([&s.path].into_iter().chain(&s.lines));
        }
        for path in paths {
            if !out.contains(path) {
                out.push(path.clone());
            }
        }
    }
    out
}

impl Manifests {
    /// The manifests as files: a name and its YAML, in the order to apply them.
    pub(crate) fn documents(&self) -> io::Result<Vec<(&'static str, String)>> {
        let mut docs = vec![
            (
                "01-scenario.yaml",
                format!("{}{}", self.header(), yaml(&self.config_map)?),
            ),
            ("02-shards.yaml", yaml(&self.shards)?),
            ("03-collector.yaml", yaml(&self.collector)?),
        ];
        if let Some(m) = &self.pod_monitor {
            docs.push(("04-podmonitor.yaml", yaml(m)?));
        }
        Ok(docs)
    }

    /// All of it as one multi-document YAML stream.
    pub(crate) fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        for (i, (_, doc)) in self.documents()?.iter().enumerate() {
            if i > 0 {
                writeln!(out, "---")?;
            }
            out.write_all(doc.as_bytes())?;
        }
        Ok(())
    }

    /// What to do before applying: comments at the top of the first document.
    fn header(&self) -> String {
        let ns = self
            .opts
            .namespace
            .as_ref()
            .map_or(String::new(), |n| format!(" -n {n}"));
        let mut h = format!(
            "# kafkabench k8s: scenario \"{}\", run {}, {} shard{} (docs/distributed.md).\n\
             # Apply with `kubectl apply{ns} -f FILE`; the collector's exit status is the run's.\n",
            self.scenario,
            self.opts.run_id,
            self.opts.shards,
            if self.opts.shards == 1 { "" } else { "s" },
        );
        if let Some(port) = self.opts.metrics_port {
            h.push_str(&format!(
                "# Every pod serves live metrics at :{port}/metrics, annotated for Prometheus\n\
                 # (prometheus.io/scrape){}; at its end a pod waits up to {} for a last scrape.\n",
                if self.pod_monitor.is_some() {
                    " and selected by the PodMonitor"
                } else {
                    ""
                },
                objects::METRICS_LINGER
            ));
        }
        if !self.env.is_empty() {
            let secret = &self.names.secret;
            h.push_str(&format!(
                "# The scenario reads variables with env(): the pods take them from the Secret\n\
                 # {secret}, by reference (this file holds no secret value). Create it first:\n\
                 #   kubectl create secret generic {secret}{ns}"
            ));
            for r in &self.env {
                h.push_str(&format!(" \\\n#     --from-literal={}=...", r.name));
            }
            h.push('\n');
            let optional: Vec<&str> = self
                .env
                .iter()
                .filter(|r| r.optional)
                .map(|r| r.name.as_str())
                .collect();
            if !optional.is_empty() {
                h.push_str(&format!(
                    "# ({} {} a default in the scenario, so may be left out.)\n",
                    optional.join(", "),
                    if optional.len() == 1 { "has" } else { "have" }
                ));
            }
        }
        h
    }
}

fn yaml<T: serde::Serialize>(object: &T) -> io::Result<String> {
    serde_yaml::to_string(object).map_err(io::Error::other)
}
