//! Which Kafka client library a side of a run is driven by (`producer { client = java }`).

use std::fmt;

use serde::Serialize;

/// A client library kafkabench can drive. librdkafka runs in-process; the others run as a
/// worker process of their own, spoken to over a framed protocol (`clients/`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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
}

impl fmt::Display for ClientKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
