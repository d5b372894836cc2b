//! A single-node cluster of a test's own (scripts/kafka-local with another home and port),
//! for tests that pause or kill the broker; stopped (and its data wiped) when dropped. Such
//! tests run in scripts/test's cluster lane, one at a time.

use std::path::PathBuf;
use std::process::Command;

use super::{repo, text};

pub(crate) struct SecondBroker {
    pub(crate) home: tempfile::TempDir,
    pub(crate) port: u16,
}

impl SecondBroker {
    pub(crate) fn kafka_local(&self) -> Command {
        let mut c = Command::new(repo().join("scripts/kafka-local"));
        c.env("KAFKA_LOCAL_HOME", self.home.path())
            .env("KAFKA_LOCAL_PORT", self.port.to_string())
            .env("KAFKA_LOCAL_HEAP", "512m");
        c
    }

    pub(crate) fn up(port: u16) -> SecondBroker {
        let b = SecondBroker {
            home: tempfile::tempdir().unwrap(),
            port,
        };
        let out = b
            .kafka_local()
            .arg("up")
            .output()
            .expect("kafka-local runs");
        assert!(
            out.status.success(),
            "second broker did not start:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        b
    }

    pub(crate) fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The broker's process id (node 1's pid file).
    pub(crate) fn pid(&self) -> i32 {
        let pid_file: PathBuf = self.home.path().join("node1.pid");
        std::fs::read_to_string(pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    pub(crate) fn kill_hard(&self) {
        self.signal(libc::SIGKILL);
    }

    pub(crate) fn signal(&self, sig: i32) {
        // SAFETY: a signal to the broker process this test started.
        unsafe { libc::kill(self.pid(), sig) };
    }
}

impl Drop for SecondBroker {
    fn drop(&mut self) {
        // A paused broker would not stop.
        self.signal(libc::SIGCONT);
        let _ = self.kafka_local().args(["down", "--wipe"]).output();
    }
}
