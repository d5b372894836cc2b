//! `kafkabench k8s FILE --shards N --image IMAGE`: the Kubernetes manifests of a sharded run
//! (a ConfigMap of the scenario's files, the Indexed Job of shards, the collector Job), as
//! multi-document YAML on stdout or one file per object in a folder.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::{finish_output, load, print_diagnostics};
use crate::exit::Outcome;
use crate::k8s::{manifests, Options};
use crate::plan::{new_run_id, plan, run_id_overflows, PlanOptions};
use crate::shard::policy;

#[derive(Args, Debug)]
pub struct K8sArgs {
    /// The scenario file (.kbs); its includes and payload data files travel with it.
    pub file: PathBuf,
    /// How many shards (pods, one per node) share every run.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub shards: u32,
    /// The container image with kafkabench in it (the Dockerfile builds one).
    #[arg(long, value_name = "IMAGE", value_parser = parse_image)]
    pub image: String,
    /// The namespace of every object (default: kubectl's current one).
    #[arg(long, value_name = "NS", value_parser = parse_namespace)]
    pub namespace: Option<String>,
    /// The run id the shards and the collector share (default: a fresh random one).
    #[arg(long, value_name = "ID", value_parser = super::parse_run_id)]
    pub run_id: Option<String>,
    /// CPU each shard requests (no limit is set: throttling would read as latency).
    #[arg(long, value_name = "QUANTITY", default_value = "1", value_parser = parse_quantity)]
    pub cpu: String,
    /// Memory each shard requests.
    #[arg(long, value_name = "QUANTITY", default_value = "1Gi", value_parser = parse_quantity)]
    pub memory: String,
    /// `-` writes one YAML stream to stdout; a folder gets one file per object, numbered in
    /// the order to apply them (`kubectl apply -f DIR`).
    #[arg(long, value_name = "DIR|-", default_value = "-")]
    pub out: PathBuf,
    /// The port every pod serves `--metrics` on, annotated (`prometheus.io/scrape`, `port`,
    /// `path`) for a Prometheus that discovers pods; 0 for no metrics.
    #[arg(long, value_name = "PORT", default_value_t = 9464)]
    pub metrics_port: u16,
    /// Also write a PodMonitor (the Prometheus Operator's) that selects the run's pods.
    #[arg(long)]
    pub pod_monitor: bool,
}

pub(super) fn command(a: &K8sArgs) -> Outcome {
    let (sources, checked) = load(&a.file);
    let scenario = match checked {
        Ok(s) => s,
        Err(d) => {
            print_diagnostics(&d, &sources);
            return Outcome::Invalid;
        }
    };
    let run_id = a.run_id.clone().unwrap_or_else(new_run_id);
    let overflows = run_id_overflows(&scenario, &run_id);
    if !overflows.is_empty() {
        for m in overflows {
            eprintln!("error: {m}");
        }
        return Outcome::Invalid;
    }
    if a.pod_monitor && a.metrics_port == 0 {
        eprintln!("error: --pod-monitor selects the pods' metrics port, and --metrics-port 0 serves none\n  help: leave --metrics-port at its default (9464) or name a port");
        return Outcome::Invalid;
    }
    // What every pod would refuse at its start (`run --shard`, `collect`) is refused here,
    // before a manifest is written: the same policy, on the plan the pods would make.
    let p = plan(
        &scenario,
        &PlanOptions {
            run_id: run_id.clone(),
            ..PlanOptions::default()
        },
    );
    let refused = policy::problems(&p, a.shards);
    for e in &refused {
        eprintln!("error: {e}");
    }
    if !refused.is_empty() {
        eprintln!(
            "  help: the shards and the collector would refuse this plan at their start; \
             `kafkabench run` runs it on one machine"
        );
    }
    let opts = Options {
        shards: a.shards,
        image: a.image.clone(),
        namespace: a.namespace.clone(),
        run_id,
        cpu: a.cpu.clone(),
        memory: a.memory.clone(),
        metrics_port: (a.metrics_port != 0).then_some(a.metrics_port),
        pod_monitor: a.pod_monitor,
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    // Every problem at once: the plan's and the manifests'.
    let m = match manifests(&sources, &scenario, &opts, &cwd) {
        Ok(m) if refused.is_empty() => m,
        Ok(_) => return Outcome::Invalid,
        Err(problems) => {
            for p in problems {
                eprintln!("error: {p}\n  help: {}", p.help());
            }
            return Outcome::Invalid;
        }
    };
    if a.out.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        let written = m.write(&mut out).and_then(|()| out.flush());
        return finish_output(Outcome::Ok, written);
    }
    let written = m.documents().and_then(|docs| {
        std::fs::create_dir_all(&a.out)?;
        for (name, text) in docs {
            let path = a.out.join(name);
            std::fs::write(&path, text)?;
            println!("wrote {}", path.display());
        }
        Ok(())
    });
    match written {
        Ok(()) => Outcome::Ok,
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", a.out.display());
            Outcome::RunFailed
        }
    }
}

/// An image reference is one word.
fn parse_image(s: &str) -> Result<String, String> {
    if s.is_empty() || s.chars().any(char::is_whitespace) {
        Err("an image is one word, e.g. `registry.example.com/kafkabench:0.1`".into())
    } else {
        Ok(s.to_string())
    }
}

/// A namespace is a DNS label: lower-case letters, digits and inner `-`, at most 63.
fn parse_namespace(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-');
    if ok {
        Ok(s.to_string())
    } else {
        Err("a namespace takes lower-case letters, digits and inner `-`, at most 63".into())
    }
}

/// A Kubernetes quantity: a number and an optional suffix (`500m`, `2`, `1.5Gi`, `512Mi`).
fn parse_quantity(s: &str) -> Result<String, String> {
    const SUFFIXES: &[&str] = &[
        "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &s[digits.len()..];
    let number = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.matches('.').count() <= 1
        && digits.chars().any(|c| c.is_ascii_digit());
    if number && SUFFIXES.contains(&suffix) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "`{s}` is not a Kubernetes quantity: a number with an optional suffix, e.g. 500m, \
             2, 512Mi, 4Gi"
        ))
    }
}
