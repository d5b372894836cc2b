//! Each client's own property names and defaults: the Java client's and franz-go's from the
//! tables checked in under clients/ (read into the binary, so `check` never starts a JVM),
//! librdkafka's from its own configuration dump.

use std::sync::OnceLock;

use super::{ClientKind, Side};

const JAVA_PRODUCER: &str = include_str!("../../../clients/names/java-producer.tsv");
const JAVA_CONSUMER: &str = include_str!("../../../clients/names/java-consumer.tsv");
const FRANZ_GO: &str = include_str!("../../../clients/franz-go/properties.tsv");

/// One property of a worker client's table.
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    pub name: &'static str,
    /// The Java client's ConfigDef type (`INT`, `STRING`, …), or franz-go's value kind (`ms`,
    /// `bytes`, `count`, `bool`, `string`, or the values it takes, `a|b|c`).
    pub kind: &'static str,
    /// The default as the client writes it (`<required>`, `null`, `unlimited`, …).
    pub default: &'static str,
    /// The Java client's validator in its own words (`[0,...]`); empty for franz-go.
    pub valid: &'static str,
    /// franz-go's option (`ProducerLinger`); empty for the Java client.
    pub option: &'static str,
    /// franz-go: how it differs from the Java client's property of the same name.
    pub note: &'static str,
}

/// A worker client's properties on one side, in name order; None for librdkafka, which
/// validates its own (`native::conf`).
pub fn table(client: ClientKind, side: Side) -> Option<&'static [Property]> {
    static JAVA: OnceLock<[Vec<Property>; 2]> = OnceLock::new();
    static FRANZ: OnceLock<[Vec<Property>; 2]> = OnceLock::new();
    let at = match side {
        Side::Producer => 0,
        Side::Consumer => 1,
    };
    match client {
        ClientKind::Librdkafka => None,
        ClientKind::Java => {
            Some(&JAVA.get_or_init(|| [java(JAVA_PRODUCER), java(JAVA_CONSUMER)])[at][..])
        }
        ClientKind::FranzGo => Some(
            &FRANZ.get_or_init(|| [franz_go(Side::Producer), franz_go(Side::Consumer)])[at][..],
        ),
    }
}

/// A worker client's property on one side.
pub fn lookup(client: ClientKind, side: Side, name: &str) -> Option<&'static Property> {
    table(client, side)?.iter().find(|p| p.name == name)
}

/// librdkafka's properties with their defaults, as a fresh configuration dumps them (global,
/// then topic-level).
pub fn librdkafka_defaults() -> &'static [(String, String)] {
    static DEFAULTS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    DEFAULTS.get_or_init(crate::native::conf::defaults)
}

/// A client's default for a property, as it writes it; None when the client has no such
/// property or no default for it.
pub fn default_of(client: ClientKind, side: Side, name: &str) -> Option<&'static str> {
    match client {
        ClientKind::Librdkafka => librdkafka_defaults()
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str()),
        _ => lookup(client, side, name)
            .map(|p| p.default)
            .filter(|d| *d != "<required>"),
    }
}

/// The rows of a table: comments (`#`) and the header row left out.
fn rows(text: &'static str) -> impl Iterator<Item = Vec<&'static str>> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .skip(1)
        .map(|l| l.split('\t').collect())
}

fn java(text: &'static str) -> Vec<Property> {
    rows(text)
        .map(|c| Property {
            name: c[0],
            kind: c.get(1).copied().unwrap_or(""),
            default: c.get(2).copied().unwrap_or(""),
            valid: c.get(3).copied().unwrap_or(""),
            option: "",
            note: "",
        })
        .collect()
}

fn franz_go(side: Side) -> Vec<Property> {
    let mut out: Vec<Property> = rows(FRANZ_GO)
        .filter(|c| c.get(1).is_some_and(|s| *s == "both" || *s == side.name()))
        .map(|c| Property {
            name: c[0],
            kind: c.get(3).copied().unwrap_or(""),
            default: c.get(4).copied().unwrap_or(""),
            valid: "",
            option: c.get(2).copied().unwrap_or(""),
            note: c.get(5).copied().unwrap_or(""),
        })
        .collect();
    out.sort_by_key(|p| p.name);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_of_every_table_has_its_columns() {
        for (text, columns) in [(JAVA_PRODUCER, 4), (JAVA_CONSUMER, 4), (FRANZ_GO, 6)] {
            let mut n = 0;
            for r in rows(text) {
                assert_eq!(r.len(), columns, "{r:?}");
                assert!(!r[0].is_empty() && !r[0].contains(' '), "{r:?}");
                n += 1;
            }
            assert!(n > 20, "a table of {n} rows");
        }
        for r in rows(FRANZ_GO) {
            assert!(["producer", "consumer", "both"].contains(&r[1]), "{r:?}");
            let kind = r[3];
            assert!(
                ["ms", "bytes", "count", "bool", "string"].contains(&kind) || kind.contains('|'),
                "{r:?}"
            );
        }
    }

    #[test]
    fn each_side_finds_its_own_names() {
        let java = |s, n| lookup(ClientKind::Java, s, n).map(|p| p.default);
        assert_eq!(java(Side::Producer, "batch.size"), Some("16384"));
        assert_eq!(java(Side::Producer, "fetch.min.bytes"), None);
        assert_eq!(
            java(Side::Consumer, "isolation.level"),
            Some("read_uncommitted")
        );
        let franz = |s, n| lookup(ClientKind::FranzGo, s, n).map(|p| p.option);
        assert_eq!(franz(Side::Producer, "linger.ms"), Some("ProducerLinger"));
        assert_eq!(franz(Side::Consumer, "client.id"), Some("ClientID"));
        assert_eq!(franz(Side::Consumer, "linger.ms"), None);
        assert!(table(ClientKind::Librdkafka, Side::Producer).is_none());
        assert_eq!(
            default_of(ClientKind::Librdkafka, Side::Producer, "partitioner"),
            Some("consistent_random")
        );
        assert_eq!(
            default_of(ClientKind::Librdkafka, Side::Producer, "enable.idempotence"),
            Some("false")
        );
    }
}
