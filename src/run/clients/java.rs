//! Apache Kafka's Java client (kafka-clients), as a worker: `clients/java/`, compiled with
//! `javac` against the kafka-clients jar of the release asked for (the one `scripts/kafka-local`
//! resolved when it is the same, else from Maven Central), started with `java`.

use crate::run::worker::{Launcher, Tool};

/// The release kafkabench pins: the broker `scripts/kafka-local` runs by default.
pub(crate) const DEFAULT_VERSION: &str = "4.4.0";

pub(crate) const LAUNCHER: Launcher = Launcher {
    client: "java",
    folder: "java",
    needs: &[
        Tool {
            command: "javac",
            probe: &["-version"],
            install: "install a JDK 17 or newer (Debian: apt-get install openjdk-17-jdk-headless)",
        },
        Tool {
            command: "java",
            probe: &["-version"],
            install: "install a JDK 17 or newer (Debian: apt-get install openjdk-17-jdk-headless)",
        },
    ],
    default_version: DEFAULT_VERSION,
};
