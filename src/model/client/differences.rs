//! The settings whose defaults differ between the clients: what a figure measured on one client
//! may not carry over to another. Each row says, per client, which property sets it, or what
//! the client does that no property changes. Read from each client's own reference
//! (librdkafka's CONFIGURATION.md, Kafka's ProducerConfig and ConsumerConfig, franz-go's
//! pkg/kgo/config.go at v1.22.3), 2026-12-05; the defaults themselves come from the name
//! tables and librdkafka's dump (`names`), so they cannot drift from what `check` knows.

use super::{ClientKind, Side};

/// How one client says a row.
#[derive(Clone, Copy, Debug)]
pub enum Says {
    /// A property: its names, the first shown, the rest aliases a scenario may write.
    Property(&'static [&'static str]),
    /// What the client does, which no property changes.
    Fixed(&'static str),
    /// Where a keyed record goes: read from the partitioner's settings ([`placement`]).
    Partitioner,
}

/// A setting whose defaults differ between clients.
#[derive(Clone, Copy, Debug)]
pub struct Difference {
    /// What it is, in words (`batch size`).
    pub what: &'static str,
    pub side: Side,
    pub librdkafka: Says,
    pub java: Says,
    pub franz_go: Says,
}

impl Difference {
    pub fn says(&self, client: ClientKind) -> Says {
        match client {
            ClientKind::Librdkafka => self.librdkafka,
            ClientKind::Java => self.java,
            ClientKind::FranzGo => self.franz_go,
        }
    }
}

use Says::{Fixed, Partitioner, Property};

/// The rows, producer first.
pub const DIFFERENCES: &[Difference] = &[
    Difference {
        what: "batch size",
        side: Side::Producer,
        librdkafka: Property(&["batch.size"]),
        java: Property(&["batch.size"]),
        franz_go: Property(&["batch.size"]),
    },
    Difference {
        what: "records per batch",
        side: Side::Producer,
        librdkafka: Property(&["batch.num.messages"]),
        java: Fixed("no record cap: a batch fills by bytes"),
        franz_go: Fixed("no record cap: a batch fills by bytes"),
    },
    Difference {
        what: "linger",
        side: Side::Producer,
        librdkafka: Property(&["linger.ms", "queue.buffering.max.ms"]),
        java: Property(&["linger.ms"]),
        franz_go: Property(&["linger.ms"]),
    },
    Difference {
        what: "keyed partitioning",
        side: Side::Producer,
        librdkafka: Partitioner,
        java: Partitioner,
        franz_go: Partitioner,
    },
    Difference {
        what: "null-key partitioning",
        side: Side::Producer,
        librdkafka: Property(&["sticky.partitioning.linger.ms"]),
        java: Fixed("sticky, switching after batch.size bytes, away from slow brokers (KIP-794)"),
        franz_go: Fixed("sticky, switching after 64 KiB, away from slow brokers"),
    },
    Difference {
        what: "buffered records",
        side: Side::Producer,
        librdkafka: Property(&["queue.buffering.max.messages"]),
        java: Fixed("no record cap: buffer.memory bounds the bytes"),
        franz_go: Property(&["max.buffered.records"]),
    },
    Difference {
        what: "buffered bytes",
        side: Side::Producer,
        librdkafka: Property(&["queue.buffering.max.kbytes"]),
        java: Property(&["buffer.memory"]),
        franz_go: Property(&["buffer.memory"]),
    },
    Difference {
        what: "a full buffer",
        side: Side::Producer,
        librdkafka: Fixed(
            "produce() fails with QUEUE_FULL, which kafkabench counts, then polls and retries",
        ),
        java: Fixed("send() blocks, at most max.block.ms"),
        franz_go: Fixed("produce blocks"),
    },
    Difference {
        what: "idempotence",
        side: Side::Producer,
        librdkafka: Property(&["enable.idempotence"]),
        java: Property(&["enable.idempotence"]),
        franz_go: Property(&["enable.idempotence"]),
    },
    Difference {
        what: "requests in flight",
        side: Side::Producer,
        librdkafka: Property(&["max.in.flight.requests.per.connection", "max.in.flight"]),
        java: Property(&["max.in.flight.requests.per.connection"]),
        franz_go: Property(&["max.in.flight.requests.per.connection"]),
    },
    Difference {
        what: "compression",
        side: Side::Producer,
        librdkafka: Property(&["compression.type", "compression.codec"]),
        java: Property(&["compression.type"]),
        franz_go: Property(&["compression.type"]),
    },
    Difference {
        what: "produce request timeout",
        side: Side::Producer,
        librdkafka: Property(&["request.timeout.ms"]),
        java: Property(&["request.timeout.ms"]),
        franz_go: Property(&["request.timeout.ms"]),
    },
    Difference {
        what: "isolation",
        side: Side::Consumer,
        librdkafka: Property(&["isolation.level"]),
        java: Property(&["isolation.level"]),
        franz_go: Property(&["isolation.level"]),
    },
    Difference {
        what: "fetch wait",
        side: Side::Consumer,
        librdkafka: Property(&["fetch.wait.max.ms"]),
        java: Property(&["fetch.max.wait.ms"]),
        franz_go: Property(&["fetch.max.wait.ms"]),
    },
    Difference {
        what: "group protocol",
        side: Side::Consumer,
        librdkafka: Property(&["group.protocol"]),
        java: Property(&["group.protocol"]),
        franz_go: Property(&["group.protocol"]),
    },
    Difference {
        what: "assignors",
        side: Side::Consumer,
        librdkafka: Property(&["partition.assignment.strategy"]),
        java: Property(&["partition.assignment.strategy"]),
        franz_go: Property(&["partition.assignment.strategy"]),
    },
    Difference {
        what: "CRC checks",
        side: Side::Consumer,
        librdkafka: Property(&["check.crcs"]),
        java: Property(&["check.crcs"]),
        franz_go: Property(&["check.crcs"]),
    },
];

/// Which partition a keyed record goes to, as far as it depends on the client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Placement {
    /// murmur2 of the key, as Kafka's Java client places it: the same key lands on the same
    /// partition from every client that uses it.
    Murmur2,
    /// CRC32 of the key (librdkafka's `consistent` and `consistent_random`, its default).
    Crc32,
    /// FNV-1a of the key (librdkafka's `fnv1a` and `fnv1a_random`).
    Fnv1a,
    /// The key is not used to place the record.
    KeysIgnored,
    /// A partitioner named by the scenario whose placement kafkabench does not know.
    Other(String),
}

impl Placement {
    pub fn describe(&self) -> String {
        match self {
            Placement::Murmur2 => "murmur2".into(),
            Placement::Crc32 => "CRC32".into(),
            Placement::Fnv1a => "FNV-1a".into(),
            Placement::KeysIgnored => "keys ignored".into(),
            Placement::Other(p) => format!("`{p}`"),
        }
    }
}

/// Where a keyed record goes on `client`, given how its settings read a property (the run's
/// value, else the client's default).
pub fn placement<'a>(client: ClientKind, get: impl Fn(&str) -> Option<&'a str>) -> Placement {
    match client {
        ClientKind::Librdkafka => match get("partitioner").unwrap_or("consistent_random") {
            "murmur2" | "murmur2_random" => Placement::Murmur2,
            "consistent" | "consistent_random" => Placement::Crc32,
            "fnv1a" | "fnv1a_random" => Placement::Fnv1a,
            "random" => Placement::KeysIgnored,
            other => Placement::Other(other.to_string()),
        },
        ClientKind::Java => {
            if get("partitioner.ignore.keys").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
                return Placement::KeysIgnored;
            }
            match get("partitioner.class").map(str::trim) {
                None | Some("" | "null") => Placement::Murmur2,
                Some("org.apache.kafka.clients.producer.RoundRobinPartitioner") => {
                    Placement::KeysIgnored
                }
                Some(class) => Placement::Other(class.to_string()),
            }
        }
        // kgo's default UniformBytesPartitioner hashes keys with KafkaHasher(murmur2).
        ClientKind::FranzGo => Placement::Murmur2,
    }
}

/// How one client says a row in a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Said {
    /// The property shown; None for a behaviour no property changes.
    pub key: Option<&'static str>,
    /// Its value as shown, or the behaviour in words.
    pub value: String,
    /// What is compared between clients: the value, or where a keyed record goes.
    pub compared: String,
    /// The run sets it (the scenario or kafkabench); false: the client's default.
    pub set: bool,
}

/// How `client` says `d` in a run: the run's own value (read by `run`) else the client's
/// default. Every alias is looked for in the run before any default.
pub fn value(
    d: &Difference,
    client: ClientKind,
    run: &dyn Fn(&str) -> Option<String>,
    default: &dyn Fn(&str) -> Option<String>,
) -> Said {
    match d.says(client) {
        Property(names) => {
            let set = names.iter().find_map(|n| run(n));
            let value = (set.clone())
                .or_else(|| names.iter().find_map(|n| default(n)))
                .unwrap_or_else(|| "not set".to_string());
            Said {
                key: Some(names[0]),
                compared: value.clone(),
                value,
                set: set.is_some(),
            }
        }
        Fixed(words) => Said {
            key: None,
            value: words.to_string(),
            compared: words.to_string(),
            set: false,
        },
        Partitioner => {
            let keys = [
                "partitioner",
                "partitioner.class",
                "partitioner.ignore.keys",
            ];
            let values: Vec<(&str, Option<String>)> = keys
                .iter()
                .map(|k| (*k, run(k).or_else(|| default(k))))
                .collect();
            let get =
                |k: &str| (values.iter().find(|(n, _)| *n == k)).and_then(|(_, v)| v.as_deref());
            let p = placement(client, get);
            let set = keys.iter().any(|k| run(k).is_some());
            let (key, value) = match client {
                ClientKind::Librdkafka => (
                    Some("partitioner"),
                    format!(
                        "{} ({})",
                        get("partitioner").unwrap_or("consistent_random"),
                        p.describe()
                    ),
                ),
                _ => (None, p.describe()),
            };
            Said {
                key,
                value,
                compared: p.describe(),
                set,
            }
        }
    }
}

/// Whether two clients' values of a row say the same: numbers by value, words without case,
/// the partitioner by where it puts a key.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.eq_ignore_ascii_case(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur2_random_places_keys_as_java_and_franz_go() {
        let none = |_: &str| None;
        assert_eq!(placement(ClientKind::Librdkafka, none), Placement::Crc32);
        assert_eq!(placement(ClientKind::Java, none), Placement::Murmur2);
        assert_eq!(placement(ClientKind::FranzGo, none), Placement::Murmur2);
        let murmur = |k: &str| (k == "partitioner").then_some("murmur2_random");
        assert_eq!(
            placement(ClientKind::Librdkafka, murmur),
            Placement::Murmur2
        );
        let ignore = |k: &str| (k == "partitioner.ignore.keys").then_some("true");
        assert_eq!(placement(ClientKind::Java, ignore), Placement::KeysIgnored);
    }

    #[test]
    fn every_row_names_a_side_its_clients_know() {
        for d in DIFFERENCES {
            for c in ClientKind::ALL {
                let Property(names) = d.says(c) else { continue };
                let known = match c {
                    ClientKind::Librdkafka => {
                        let all = crate::native::conf::property_names();
                        names.iter().any(|n| all.iter().any(|x| x == n))
                            || super::super::names::default_of(c, d.side, names[0]).is_some()
                    }
                    _ => super::super::names::lookup(c, d.side, names[0]).is_some(),
                };
                assert!(known, "{} on {c}: {names:?}", d.what);
            }
        }
    }
}
