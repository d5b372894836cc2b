//! The 3-node kafka-local cluster of the test process, beside CI's broker and never touching
//! it: started by the first test that needs it (a leftover from a killed process is repaired
//! and reused), stopped and wiped when the process exits, failed tests included. Every test
//! that pauses, kills or restarts a broker (tests/delivery.rs, tests/fault_timeline.rs) shares
//! it and leaves it whole.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{repo, text};

/// Ports in use: CI's broker 9092-9094, the broker-loss test 19092-19093, the security test
/// 19492-19494, this cluster 19692/19792/19892.
pub(crate) struct Nodes {
    /// Node 1's client port; node i listens on it + 100·(i-1), its controller one above.
    pub port: u16,
}

/// The one cluster: one test process, one cluster, so the nodes start once.
pub(crate) const NODES: Nodes = Nodes { port: 19692 };

static STARTED: OnceLock<u16> = OnceLock::new();

extern "C" fn stop_at_exit() {
    if let Some(port) = STARTED.get() {
        let _ = (Nodes { port: *port }).kafka_local(&["down", "--wipe"]);
    }
}

impl Nodes {
    pub(crate) fn home(&self) -> PathBuf {
        std::env::temp_dir().join(format!("kafkabench-nodes-{}", self.port))
    }

    pub(crate) fn bootstrap(&self) -> String {
        (0..3)
            .map(|i| format!("127.0.0.1:{}", self.port + 100 * i))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub(crate) fn kafka_local(&self, args: &[&str]) -> Output {
        Command::new(repo().join("scripts/kafka-local"))
            .args(args)
            .env("KAFKA_LOCAL_HOME", self.home())
            .env("KAFKA_LOCAL_PORT", self.port.to_string())
            .env("KAFKA_LOCAL_HEAP", "320m")
            .output()
            .expect("kafka-local runs")
    }

    /// Starts the cluster once per process, and stops it when the process exits.
    pub(crate) fn up(&self) {
        let port = *STARTED.get_or_init(|| {
            let out = self.kafka_local(&["up", "--brokers", "3"]);
            // SAFETY: registers a plain function to run at exit; it only spawns a process.
            unsafe { libc::atexit(stop_at_exit) };
            assert!(
                out.status.success(),
                "the 3-node cluster did not start:\n{}{}",
                text(&out.stdout),
                text(&out.stderr)
            );
            self.port
        });
        assert_eq!(port, self.port, "one test process, one cluster");
    }

    /// `(id, pid, state)` of every node, as kafka-local sees them.
    pub(crate) fn nodes(&self) -> Vec<(i32, Option<i32>, String)> {
        let out = self.kafka_local(&["nodes"]);
        text(&out.stdout)
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f[0].parse().unwrap(), f[2].parse().ok(), f[3].to_string())
            })
            .collect()
    }

    /// Waits until every node runs and the cluster lists all three brokers again (a restarted
    /// broker takes a moment to register); fails past `limit`.
    pub(crate) fn wait_whole(&self, limit: Duration) {
        let started = Instant::now();
        loop {
            let nodes = self.nodes();
            let running = nodes.len() == 3 && nodes.iter().all(|(_, _, s)| s == "running");
            if running && self.listed_brokers() == 3 {
                return;
            }
            assert!(
                started.elapsed() < limit,
                "the cluster is not whole after {limit:?}: {nodes:?}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn listed_brokers(&self) -> usize {
        use rdkafka::consumer::{BaseConsumer, Consumer};
        let c: BaseConsumer = match rdkafka::ClientConfig::new()
            .set("bootstrap.servers", self.bootstrap())
            .create()
        {
            Ok(c) => c,
            Err(_) => return 0,
        };
        c.fetch_metadata(None, Duration::from_secs(5))
            .map_or(0, |m| m.brokers().len())
    }
}
