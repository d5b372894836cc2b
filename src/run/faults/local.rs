//! A cluster started by `scripts/kafka-local`: found from a run's bootstrap servers, and acted
//! on one node at a time through the script (node N is broker id N).
//!
//! The script owns the nodes' state (pid files, how a node is started); kafkabench only calls
//! it, so `scripts/kafka-local status` always tells the truth about what a fault left behind.

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::capture::{self, Capture, REDIRECT};
use super::error::FaultError;

/// How long the script may take to bring a restarted node's port up.
const START_TIMEOUT_SECS: &str = "60";

/// One node as `scripts/kafka-local nodes` lists it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub id: i32,
    pub port: u16,
    /// `running`, `paused` or `stopped`.
    pub state: String,
}

/// A kafka-local cluster: its home (state directory), the script that drives it, its nodes.
#[derive(Clone, Debug)]
pub(crate) struct LocalCluster {
    pub home: PathBuf,
    script: PathBuf,
    pub nodes: Vec<Node>,
}

/// The kafka-local cluster `bootstrap` points at, or why there is none. Looked for in
/// `KAFKA_LOCAL_HOME`, then `.cache/kafka-local` under the current directory and under the
/// repository kafkabench was built from (the script's default home); a home matches when one
/// of its nodes' addresses is one of the bootstrap servers.
pub(crate) fn local_cluster(bootstrap: &str) -> Result<LocalCluster, FaultError> {
    let wanted = addresses(bootstrap);
    let mut looked = Vec::new();
    for home in candidates() {
        let Ok(theirs) = std::fs::read_to_string(home.join("bootstrap")) else {
            looked.push(format!("{} (no cluster)", home.display()));
            continue;
        };
        if addresses(&theirs).is_disjoint(&wanted) {
            looked.push(format!(
                "{} (a cluster at {})",
                home.display(),
                theirs.trim()
            ));
            continue;
        }
        let script = script_of(&home);
        let mut c = LocalCluster {
            home,
            script,
            nodes: Vec::new(),
        };
        c.nodes = parse_nodes(&c.call(&["nodes"])?);
        return Ok(c);
    }
    Err(FaultError::NoLocalCluster {
        bootstrap: bootstrap.to_string(),
        looked,
    })
}

impl LocalCluster {
    /// Node `id`, or why it is not one of this cluster's.
    pub(crate) fn node(&self, id: i32) -> Result<&Node, FaultError> {
        self.nodes
            .iter()
            .find(|n| n.id == id)
            .ok_or_else(|| FaultError::NotANode {
                id,
                home: self.home.clone(),
                ids: self.nodes.iter().map(|n| n.id).collect(),
            })
    }

    /// SIGKILL: no controlled shutdown, the way a machine dies.
    pub(crate) fn kill(&self, id: i32) -> Result<String, FaultError> {
        self.call(&["stop", &id.to_string(), "--kill"])
    }

    /// A controlled shutdown (SIGTERM), as a rolling restart does it.
    pub(crate) fn stop(&self, id: i32) -> Result<String, FaultError> {
        self.call(&["stop", &id.to_string()])
    }

    /// Starts a stopped node on its data and waits until its port accepts connections.
    pub(crate) fn start(&self, id: i32) -> Result<String, FaultError> {
        self.call(&["start", &id.to_string()])
    }

    /// SIGSTOP: the node keeps its connections and answers nothing.
    pub(crate) fn pause(&self, id: i32) -> Result<String, FaultError> {
        self.call(&["pause", &id.to_string()])
    }

    pub(crate) fn resume(&self, id: i32) -> Result<String, FaultError> {
        self.call(&["resume", &id.to_string()])
    }

    /// Runs the script on this home; its output, or its error message.
    fn call(&self, args: &[&str]) -> Result<String, FaultError> {
        let capture = Capture::new();
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("{REDIRECT}; exec \"$0\" \"$@\""))
            .arg(&self.script)
            .args(args)
            .env(capture::VAR, &capture.path)
            .env("KAFKA_LOCAL_HOME", &self.home)
            .env("KAFKA_LOCAL_READY_TIMEOUT", START_TIMEOUT_SECS)
            .stdin(Stdio::null())
            // Its own process group: a Ctrl-C meant for kafkabench must not cut a restart short.
            .process_group(0)
            .status()
            .map_err(|e| FaultError::Script {
                script: self.script.clone(),
                source: std::sync::Arc::new(e),
            })?;
        let said = capture.text().trim().to_string();
        if status.success() {
            return Ok(said);
        }
        let last = said.lines().last().unwrap_or("");
        Err(FaultError::ScriptFailed {
            args: args.join(" "),
            status,
            last: last.trim_start_matches("kafka-local: ").to_string(),
        })
    }
}

/// Where a kafka-local home may be, most specific first, without duplicates.
fn candidates() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    if let Some(h) = std::env::var_os("KAFKA_LOCAL_HOME") {
        v.push(PathBuf::from(h));
    }
    if let Ok(cwd) = std::env::current_dir() {
        v.push(cwd.join(".cache/kafka-local"));
    }
    v.push(Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/kafka-local"));
    let mut seen = BTreeSet::new();
    v.retain(|p| seen.insert(p.clone()));
    v
}

/// The script that started the cluster in `home` (it writes its own path there), else the
/// repository's.
fn script_of(home: &Path) -> PathBuf {
    std::fs::read_to_string(home.join("script"))
        .ok()
        .map(|s| PathBuf::from(s.trim()))
        .filter(|p| p.exists())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/kafka-local"))
}

/// `host:port` addresses of a bootstrap list, `localhost` as `127.0.0.1`, any
/// `PLAINTEXT://`-style prefix dropped.
fn addresses(list: &str) -> BTreeSet<String> {
    list.split(',')
        .map(|a| a.trim())
        .filter(|a| !a.is_empty())
        .map(|a| a.rsplit("://").next().unwrap_or(a))
        .map(|a| match a.strip_prefix("localhost:") {
            Some(port) => format!("127.0.0.1:{port}"),
            None => a.to_string(),
        })
        .collect()
}

/// `scripts/kafka-local nodes`: `id port pid state` per line.
fn parse_nodes(text: &str) -> Vec<Node> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [id, port, _pid, state] => Some(Node {
                    id: id.parse().ok()?,
                    port: port.parse().ok()?,
                    state: state.to_string(),
                }),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_addresses_match_whatever_way_they_are_written() {
        let a = addresses("localhost:19692, PLAINTEXT://127.0.0.1:19792,");
        let b = addresses("127.0.0.1:19692,127.0.0.1:19792,127.0.0.1:19892");
        assert_eq!(a.len(), 2);
        assert!(a.is_subset(&b));
        assert!(addresses("10.0.0.1:9092").is_disjoint(&b));
    }

    #[test]
    fn the_node_list_reads_every_state() {
        let nodes = parse_nodes("1 19692 123 running\n2 19792 124 paused\n3 19892 - stopped\n");
        assert_eq!(nodes.len(), 3);
        assert_eq!(nodes[1].state, "paused");
        assert_eq!(nodes[2].port, 19892);
    }

    #[test]
    fn a_bootstrap_no_home_serves_is_refused_naming_where_it_looked() {
        let e = local_cluster("192.0.2.1:9999").unwrap_err().to_string();
        assert!(e.contains("none runs at 192.0.2.1:9999"), "{e}");
        assert!(e.contains("KAFKA_LOCAL_HOME"), "{e}");
    }
}
