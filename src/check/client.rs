//! `client = java` in `producer { }` and `consumer { }`: which client each side of a cell runs
//! on, and which release (`java(version: "3.9.1")`); and the workload's `seed`.

use super::axis::Picks;
use super::{Checker, Setting};
use crate::diagnostic::{closest, Diagnostic, Kind};
use crate::model::{ClientKind, Scalar, Side, SEED_MAX};
use crate::source::Span;
use crate::syntax::ValueKind;

/// The client names a scenario writes, for "did you mean".
const NAMES: [&str; 3] = ["librdkafka", "java", "franz-go"];

/// One side's client in a cell.
#[derive(Clone, Debug)]
pub(super) struct SideClient {
    /// None when `client` names no client kafkabench drives (already reported): the side's
    /// settings are then not checked against any client's list.
    pub kind: Option<ClientKind>,
    pub version: String,
    /// Where `client` was written (its value); None when the side says nothing.
    pub span: Option<Span>,
}

impl SideClient {
    fn librdkafka() -> SideClient {
        SideClient {
            kind: Some(ClientKind::Librdkafka),
            version: ClientKind::Librdkafka.default_version(),
            span: None,
        }
    }

    /// Whether the side runs on a worker (a client other than librdkafka).
    pub(super) fn worker(&self) -> Option<ClientKind> {
        self.kind.filter(|k| *k != ClientKind::Librdkafka)
    }
}

/// Both sides' clients in a cell. The consumer does not follow the producer: the read side is
/// kafkabench's instrument (end-to-end latency, verification), so a matrix over the
/// producer's client compares producers through one reader; `consumer { client = {client} }`
/// varies both.
#[derive(Clone, Debug)]
pub(super) struct Clients {
    pub producer: SideClient,
    pub consumer: SideClient,
}

impl Clients {
    pub(super) fn side(&self, side: Side) -> &SideClient {
        match side {
            Side::Producer => &self.producer,
            Side::Consumer => &self.consumer,
        }
    }
}

impl Checker<'_> {
    /// Each side's client in a cell, librdkafka where the side says nothing.
    pub(super) fn clients(&mut self, settings: &[Setting], ctx: &Picks) -> Clients {
        let side = |this: &mut Self, section: &str| {
            let Some(e) = settings
                .iter()
                .find(|s| s.section == section && s.key.node == "client")
            else {
                return SideClient::librdkafka();
            };
            let span = this.resolve(&e.value, ctx).map(|v| v.span);
            match this.client(e, ctx) {
                Some((kind, version)) => SideClient {
                    kind: Some(kind),
                    version,
                    span,
                },
                None => SideClient {
                    kind: None,
                    version: String::new(),
                    span,
                },
            }
        };
        Clients {
            producer: side(self, "producer"),
            consumer: side(self, "consumer"),
        }
    }

    /// `librdkafka`, `java`, `java(version: "3.9.1")` or `franz-go`: the client and its
    /// release.
    fn client(&mut self, e: &Setting, ctx: &Picks) -> Option<(ClientKind, String)> {
        let v = self.resolve(&e.value, ctx)?.clone();
        let (name, name_span, args) = match &v.kind {
            ValueKind::Word(w) | ValueKind::Str(w) => (w.clone(), v.span, Vec::new()),
            ValueKind::Call { name, args } => (name.node.clone(), name.span, args.clone()),
            _ => {
                self.err(
                    Diagnostic::new(Kind::Client, v.span, "a client is named, not given a value")
                        .label("expected librdkafka, java or franz-go")
                        .help("e.g. `client = java`, `client = java(version: \"3.9.1\")`, or `client = {client}` with `matrix { client = [librdkafka, java, franz-go] }`"),
                );
                return None;
            }
        };
        let Some(kind) = ClientKind::from_name(&name) else {
            self.err(
                Diagnostic::new(
                    Kind::Client,
                    name_span,
                    format!("`{name}` is not a client kafkabench drives"),
                )
                .label("unknown client")
                .help(unknown_client_help(&name)),
            );
            return None;
        };
        let mut version = kind.default_version();
        if args.is_empty() {
            return Some((kind, version));
        }
        if !kind.versioned() {
            self.err(
                Diagnostic::new(
                    Kind::Client,
                    v.span,
                    format!("{}'s release is not a setting", kind.described()),
                )
                .label("no version here")
                .help(match kind {
                    ClientKind::Librdkafka => format!(
                        "librdkafka is built into kafkabench ({version}): write `client = librdkafka`"
                    ),
                    _ => format!(
                        "the franz-go worker is built against franz-go {version} (clients/franz-go/go.mod): write `client = franz-go`"
                    ),
                }),
            );
            return None;
        }
        let spanned = crate::source::Spanned::new(name.clone(), name_span);
        for (_, value) in self.call_args(&spanned, &args, &["version"]) {
            let release = match self.scalar(value, ctx) {
                Some(Scalar::Str(s)) | Some(Scalar::Word(s)) => s,
                Some(other) => {
                    self.err(
                        Diagnostic::new(
                            Kind::Client,
                            value.span,
                            format!(
                                "a release is a string such as \"3.9.1\", not {}",
                                other.kind_name()
                            ),
                        )
                        .label("expected \"X.Y.Z\"")
                        .help("quote it: `java(version: \"3.9.1\")`"),
                    );
                    return None;
                }
                None => return None,
            };
            if !is_release(&release) {
                self.err(
                    Diagnostic::new(
                        Kind::Client,
                        value.span,
                        format!("`{release}` is not a kafka-clients release"),
                    )
                    .label("expected X.Y.Z")
                    .help(format!(
                        "a release as Maven Central names it, e.g. \"3.9.1\"; without `version` the Java client is {}",
                        crate::model::JAVA_DEFAULT_VERSION
                    )),
                );
                return None;
            }
            version = release;
        }
        Some((kind, version))
    }

    /// `seed = 42`: a whole number JSON and every language's doubles hold exactly, so a seed
    /// copied from a result file is the seed that ran.
    pub(super) fn seed(&mut self, e: &Setting, ctx: &Picks) -> Option<u64> {
        self.count(&e.value, ctx, "a seed", 0..=SEED_MAX)
    }

    /// `client` written where no side is chosen (`cluster { }`): each side has its own.
    pub(super) fn client_misplaced(&mut self, e: &Setting) {
        self.err(
            Diagnostic::new(
                Kind::Client,
                e.key.span,
                format!("`client` is chosen per side, not in `{} {{ }}`", e.section),
            )
            .label("not here")
            .help("write it in `producer { }` and, for the read side, in `consumer { }`: `producer { client = java }`"),
        );
    }
}

/// What to say about a client name kafkabench does not drive: the client it meant, or the
/// library a wrapper wraps.
fn unknown_client_help(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let meant = match lower.as_str() {
        "kafka-clients" | "kafka" | "apache-kafka" | "jvm" | "kafka-java" => Some("java"),
        "kgo" | "franz" | "franzgo" | "franz_go" => Some("franz-go"),
        "rdkafka"
        | "rust-rdkafka"
        | "node-rdkafka"
        | "confluent-kafka"
        | "confluent_kafka"
        | "confluent-kafka-go"
        | "confluent-kafka-python"
        | "confluent-kafka-dotnet" => Some("librdkafka"),
        _ => closest(&lower, NAMES),
    };
    match meant {
        Some("librdkafka") if lower != "librdkafka" && !lower.starts_with("libr") => format!(
            "`{name}` wraps librdkafka: write `client = librdkafka` (the default)"
        ),
        Some(c) => format!("did you mean `{c}`?"),
        None => "kafkabench drives `librdkafka` (the default), `java` (the Apache Kafka client) and `franz-go`".to_string(),
    }
}

/// `3.9.1`, `4.0.0-rc1`: digits in three parts, and an optional qualifier.
fn is_release(s: &str) -> bool {
    let (numbers, qualifier) = match s.split_once('-') {
        Some((n, q)) if !q.is_empty() => (n, q),
        Some(_) => return false,
        None => (s, ""),
    };
    let parts: Vec<&str> = numbers.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && qualifier
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_three_numbers_and_a_qualifier() {
        for ok in ["3.9.1", "4.4.0", "4.0.0-rc1"] {
            assert!(is_release(ok), "{ok}");
        }
        for bad in ["3.9", "v3.9.1", "3.9.x", "", "3..1", "3.9.1-"] {
            assert!(!is_release(bad), "{bad}");
        }
    }

    #[test]
    fn a_wrapper_is_sent_to_what_it_wraps() {
        assert!(unknown_client_help("confluent-kafka-go").contains("wraps librdkafka"));
        assert!(unknown_client_help("kgo").contains("`franz-go`"));
        assert!(unknown_client_help("jav").contains("`java`"));
        assert!(unknown_client_help("sarama").contains("drives"));
    }
}
