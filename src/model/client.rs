//! Which Kafka client library a side of a run is driven by (`producer { client = java }`), and
//! which release of it.

use std::fmt;

use serde::{Deserialize, Serialize};

pub mod differences;
pub mod names;

/// The kafka-clients release a Java side runs when the scenario names none: the one
/// `scripts/kafka-local` already resolves from Maven with the broker, so the first run needs
/// nothing more, and the one clients/names/ is made from.
pub const JAVA_DEFAULT_VERSION: &str = "4.4.0";

/// The franz-go release the Go worker is built against (clients/franz-go/go.mod); not a
/// setting: the worker is built from the repository, and clients/franz-go/properties.tsv
/// describes this release's options.
pub const FRANZ_GO_VERSION: &str = "v1.22.3";

/// A client library kafkabench can drive. librdkafka runs in-process; the others run as a
/// worker process of their own, spoken to over a framed protocol (`clients/`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ClientKind {
    #[default]
    Librdkafka,
    Java,
    FranzGo,
}

impl ClientKind {
    pub const ALL: [ClientKind; 3] = [
        ClientKind::Librdkafka,
        ClientKind::Java,
        ClientKind::FranzGo,
    ];

    /// The name a scenario writes (`client = franz-go`).
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Librdkafka => "librdkafka",
            ClientKind::Java => "java",
            ClientKind::FranzGo => "franz-go",
        }
    }

    pub fn from_name(name: &str) -> Option<ClientKind> {
        ClientKind::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The client as a sentence names it: `the Java client`, `franz-go`, `librdkafka`.
    pub fn described(self) -> &'static str {
        match self {
            ClientKind::Librdkafka => "librdkafka",
            ClientKind::Java => "the Java client",
            ClientKind::FranzGo => "franz-go",
        }
    }

    /// The release this kafkabench runs when the scenario names none: librdkafka's is the one
    /// built in, the others' are pinned.
    pub fn default_version(self) -> String {
        match self {
            ClientKind::Librdkafka => crate::native::conf::version(),
            ClientKind::Java => JAVA_DEFAULT_VERSION.to_string(),
            ClientKind::FranzGo => FRANZ_GO_VERSION.to_string(),
        }
    }

    /// Whether a scenario chooses the release (`client = java(version: "3.9.1")`): the Java
    /// worker resolves any kafka-clients release from Maven; librdkafka is built into
    /// kafkabench and the Go worker is built against one franz-go.
    pub fn versioned(self) -> bool {
        self == ClientKind::Java
    }
}

impl fmt::Display for ClientKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The producing or the reading side of a run: each runs on a client of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Producer,
    Consumer,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Producer => "producer",
            Side::Consumer => "consumer",
        }
    }
}

/// A client and its release, as a result file records each side's (`"producer_client":
/// {"name": "java", "version": "4.4.0"}`) and as history keys a series by it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClientRelease {
    pub name: ClientKind,
    pub version: String,
}

impl fmt::Display for ClientRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.version)
    }
}
