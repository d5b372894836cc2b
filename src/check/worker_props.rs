//! A side on a worker client (`client = java`, `client = franz-go`) takes that client's own
//! property names, checked against its table (`model::client::names`, from clients/): the
//! name with "did you mean" among that client's names only, then the value by the type and
//! validator the table gives. librdkafka's sides are still asked of librdkafka (`props`).

use super::axis::Picks;
use super::client::{Clients, SideClient};
use super::{Checker, Setting};
use crate::diagnostic::{closest, Diagnostic, Kind};
use crate::model::client::names::{self, Property};
use crate::model::{ClientKind, Prop, Props, Side};

/// Properties kafkabench's workers set themselves: records go out and come back as bytes.
const OWNED: &[&str] = &[
    "key.serializer",
    "value.serializer",
    "key.deserializer",
    "value.deserializer",
];

/// librdkafka's names people carry over, with the name the Kafka clients use.
const FROM_LIBRDKAFKA: &[(&str, &str)] = &[
    ("queue.buffering.max.ms", "linger.ms"),
    ("queue.buffering.max.kbytes", "buffer.memory"),
    ("queue.buffering.max.messages", "max.buffered.records"),
    ("message.timeout.ms", "delivery.timeout.ms"),
    ("fetch.wait.max.ms", "fetch.max.wait.ms"),
    ("socket.send.buffer.bytes", "send.buffer.bytes"),
    ("socket.receive.buffer.bytes", "receive.buffer.bytes"),
    ("compression.codec", "compression.type"),
    ("max.in.flight", "max.in.flight.requests.per.connection"),
    ("request.required.acks", "acks"),
    ("message.send.max.retries", "retries"),
    ("message.max.bytes", "max.request.size"),
];

impl Checker<'_> {
    /// One property of a side, checked by the side's client: librdkafka by librdkafka, a
    /// worker's against its table. A side whose client is unknown is not checked (its
    /// `client` is the mistake, already reported).
    pub(super) fn side_prop(
        &mut self,
        props: &mut Props,
        e: &Setting,
        ctx: &Picks,
        client: &SideClient,
        side: Side,
    ) {
        match client.kind {
            None => {}
            Some(ClientKind::Librdkafka) => self.prop(props, e, ctx),
            Some(worker) => self.worker_prop(props, e, ctx, worker, side),
        }
    }

    fn worker_prop(
        &mut self,
        props: &mut Props,
        e: &Setting,
        ctx: &Picks,
        client: ClientKind,
        side: Side,
    ) {
        let key = e.key.node.as_str();
        if OWNED.contains(&key) {
            self.err(
                Diagnostic::new(
                    Kind::Property,
                    e.key.span,
                    format!("kafkabench's {client} worker sets `{key}` itself"),
                )
                .label("not a setting here")
                .help("the worker sends and reads records as bytes, as kafkabench generated them: drop this line"),
            );
            return;
        }
        if self.secret_varies(e, ctx) {
            return;
        }
        let Some(p) = names::lookup(client, side, key) else {
            self.unknown_worker_prop(e, client, side);
            return;
        };
        let Some(value) = self.prop_text(key, e, ctx) else {
            return;
        };
        if let Err(why) = worker_value(client, p, &value) {
            let vspan = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
            self.err(
                Diagnostic::new(
                    Kind::Property,
                    vspan,
                    if crate::model::is_secret(key) {
                        format!(
                            "{} refuses the value of `{key}` (a secret, not shown)",
                            client.described()
                        )
                    } else {
                        format!("{} refuses `{key} = {value}`", client.described())
                    },
                )
                .label("refused value")
                .help(why),
            );
            return;
        }
        props.0.push(Prop {
            key: key.into(),
            value,
            span: Some(e.key.span),
        });
    }

    /// `cluster { }`'s properties reach every side's client: a side on a worker must know each
    /// by its own name. (Security settings are refused on a worker side as such.)
    pub(super) fn cluster_reaches_workers(
        &mut self,
        cluster: &Props,
        clients: &Clients,
        consumer_on: bool,
    ) {
        for p in cluster.iter() {
            let Some(span) = p.span else { continue };
            if ["security.", "sasl.", "ssl."]
                .iter()
                .any(|x| p.key.starts_with(x))
            {
                continue;
            }
            let sides = [Side::Producer, Side::Consumer];
            let on = sides
                .into_iter()
                .filter(|s| *s == Side::Producer || consumer_on);
            let unknown = on
                .filter_map(|s| Some((s, clients.side(s).worker()?)))
                .find(|(side, worker)| names::lookup(*worker, *side, &p.key).is_none());
            let Some((side, worker)) = unknown else {
                continue;
            };
            self.err(
                Diagnostic::new(
                    Kind::Property,
                    span,
                    format!(
                        "`{}` in `cluster {{ }}` reaches the {}, and {} has no such property",
                        p.key,
                        side.name(),
                        worker.described()
                    ),
                )
                .label(format!("not a {worker} property"))
                .help(format!(
                    "`cluster {{ }}` sets every client; a librdkafka property belongs in the block of a librdkafka side{}",
                    closest(&p.key, names::table(worker, side).unwrap_or_default().iter().map(|x| x.name))
                        .map(|c| format!(" ({} calls something close `{c}`)", worker.described()))
                        .unwrap_or_default()
                )),
            );
        }
    }

    fn unknown_worker_prop(&mut self, e: &Setting, client: ClientKind, side: Side) {
        let key = e.key.node.as_str();
        let other = match side {
            Side::Producer => Side::Consumer,
            Side::Consumer => Side::Producer,
        };
        if names::lookup(client, other, key).is_some() {
            self.err(
                Diagnostic::new(
                    Kind::Property,
                    e.key.span,
                    format!(
                        "`{key}` is a {} property of {}",
                        other.name(),
                        client.described()
                    ),
                )
                .label(format!("not a {} property", side.name()))
                .help(format!("put it in `{} {{ }}`", other.name())),
            );
            return;
        }
        let table = names::table(client, side).unwrap_or_default();
        let renamed = FROM_LIBRDKAFKA
            .iter()
            .find(|(from, to)| *from == key && table.iter().any(|p| p.name == *to))
            .map(|(_, to)| {
                format!(
                    "`{key}` is librdkafka's name: {} calls it `{to}`",
                    client.described()
                )
            });
        let help = renamed
            .or_else(|| librdkafka_only(key, client))
            .or_else(|| {
                closest(key, table.iter().map(|p| p.name)).map(|c| format!("did you mean `{c}`?"))
            })
            .unwrap_or_else(|| {
                format!(
                    "{}'s {} properties are listed in {} (grammar/REFERENCE.md, \"Clients\")",
                    client.described(),
                    side.name(),
                    match client {
                        ClientKind::FranzGo => "clients/franz-go/properties.tsv".to_string(),
                        _ => format!("clients/names/java-{}.tsv", side.name()),
                    }
                )
            });
        self.err(
            Diagnostic::new(
                Kind::Property,
                e.key.span,
                format!(
                    "{} has no {} property `{key}`",
                    client.described(),
                    side.name()
                ),
            )
            .label(format!("not a {client} property"))
            .help(help),
        );
    }
}

/// librdkafka's properties that have no counterpart on a worker, with what the worker does.
fn librdkafka_only(key: &str, client: ClientKind) -> Option<String> {
    Some(match (key, client) {
        ("partitioner", ClientKind::Java) => "the Java client places keys by murmur2 (its built-in partitioner); `partitioner.class` names another, and `partitioner.ignore.keys = true` ignores keys".into(),
        ("partitioner", _) => "franz-go places keys by murmur2 (its default partitioner), which is not a setting here".into(),
        ("batch.num.messages", _) => format!("{} has no record cap: a batch fills by bytes (`batch.size`)", client.described()),
        ("statistics.interval.ms", _) => "kafkabench reads the worker's own metrics: librdkafka's statistics do not apply".into(),
        ("sticky.partitioning.linger.ms", _) => format!("{} switches the partition of records without a key by bytes, not by a timer", client.described()),
        _ => return None,
    })
}

/// Whether the client takes `value` for `p`, by its table's type and validator; Err says why
/// not, in the table's terms.
fn worker_value(client: ClientKind, p: &Property, value: &str) -> Result<(), String> {
    match client {
        ClientKind::Java => java_value(p, value),
        _ => franz_go_value(p, value),
    }
}

fn java_value(p: &Property, value: &str) -> Result<(), String> {
    let v = value.trim();
    match p.kind {
        "BOOLEAN" => boolean(v),
        "SHORT" | "INT" | "LONG" => {
            let n: i64 = v.parse().map_err(|_| {
                format!(
                    "`{}` takes a whole number ({})",
                    p.name,
                    p.kind.to_lowercase()
                )
            })?;
            let max = match p.kind {
                "SHORT" => i64::from(i16::MAX),
                "INT" => i64::from(i32::MAX),
                _ => i64::MAX,
            };
            if n > max {
                return Err(format!(
                    "`{}` is a Java {}: at most {max}",
                    p.name,
                    p.kind.to_lowercase()
                ));
            }
            validator(p, v, Some(n as f64))
        }
        "DOUBLE" => {
            let x: f64 = v
                .parse()
                .map_err(|_| format!("`{}` takes a number", p.name))?;
            validator(p, v, Some(x))
        }
        "CLASS" => class(p, v),
        "LIST" if p.name.ends_with(".classes") || p.name == "metric.reporters" => v
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .try_for_each(|c| class(p, c)),
        _ => validator(p, v, None),
    }
}

/// A class the Java worker can load: its classpath holds kafka-clients and nothing of yours.
fn class(p: &Property, v: &str) -> Result<(), String> {
    if v.starts_with("org.apache.kafka.") {
        Ok(())
    } else {
        Err(format!("`{}` names a class, and the Java worker's classpath holds kafka-clients only: a class of yours cannot load there (one of kafka-clients', `org.apache.kafka.…`, can)", p.name))
    }
}

fn boolean(v: &str) -> Result<(), String> {
    if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false") {
        Ok(())
    } else {
        Err("it takes `true` or `false`".into())
    }
}

/// The Java client's validator in its own words: `[0,...]`, `[1,...,9] or -1`, `[none, gzip]`,
/// `(case insensitive) [FULL, INCREMENTAL]`, `non-empty string`. Words it does not know are
/// left to the client.
fn validator(p: &Property, v: &str, number: Option<f64>) -> Result<(), String> {
    let (insensitive, rule) = match p.valid.strip_prefix("(case insensitive) ") {
        Some(r) => (true, r),
        None => (false, p.valid),
    };
    if rule == "non-empty string" {
        return if v.is_empty() {
            Err(format!("`{}` cannot be empty", p.name))
        } else {
            Ok(())
        };
    }
    let Some(inner) = rule.strip_prefix('[') else {
        return Ok(());
    };
    let Some((list, rest)) = inner.split_once(']') else {
        return Ok(());
    };
    let also = rest.trim().strip_prefix("or ").map(str::trim);
    if also == Some(v) {
        return Ok(());
    }
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    if items.contains(&"...") {
        let bound = |s: Option<&&str>| s.and_then(|s| s.parse::<f64>().ok());
        let (low, high) = match items.as_slice() {
            [lo, "..."] => (bound(Some(lo)), None),
            [lo, "...", hi] => (bound(Some(lo)), bound(Some(hi))),
            _ => return Ok(()),
        };
        let Some(n) = number else { return Ok(()) };
        let inside = low.map_or(true, |l| n >= l) && high.map_or(true, |h| n <= h);
        return if inside {
            Ok(())
        } else {
            Err(format!(
                "`{}` takes {}{}",
                p.name,
                match (low, high) {
                    (Some(l), Some(h)) => format!("{l} to {h}"),
                    (Some(l), None) => format!("at least {l}"),
                    (None, Some(h)) => format!("at most {h}"),
                    (None, None) => "any number".into(),
                },
                also.map(|a| format!(", or {a}")).unwrap_or_default()
            ))
        };
    }
    let matches = |item: &&str| match item.split_once(':') {
        // `by_duration:PnDTnHnMn.nS`: a prefix and a pattern.
        Some((prefix, _)) => v.starts_with(&format!("{prefix}:")),
        None if insensitive => item.eq_ignore_ascii_case(v),
        None => *item == v,
    };
    if items.iter().any(matches) {
        Ok(())
    } else {
        Err(format!(
            "`{}` takes {}",
            p.name,
            items
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

fn franz_go_value(p: &Property, value: &str) -> Result<(), String> {
    let v = value.trim();
    match p.kind {
        "ms" | "bytes" | "count" => match v.parse::<u64>() {
            Ok(_) => Ok(()),
            Err(_) => Err(format!(
                "`{}` takes a whole number{} ({} sets kgo's {})",
                p.name,
                match p.kind {
                    "ms" => " of milliseconds, or a duration such as 5ms",
                    "bytes" => " of bytes, or a size such as 1MiB",
                    _ => "",
                },
                p.name,
                p.option
            )),
        },
        "bool" => boolean(v),
        "string" => Ok(()),
        choices => {
            if choices.split('|').any(|c| c.eq_ignore_ascii_case(v)) {
                Ok(())
            } else {
                Err(format!(
                    "`{}` takes {}",
                    p.name,
                    choices
                        .split('|')
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java(side: Side, name: &str, value: &str) -> Result<(), String> {
        java_value(names::lookup(ClientKind::Java, side, name).unwrap(), value)
    }

    fn franz(side: Side, name: &str, value: &str) -> Result<(), String> {
        franz_go_value(
            names::lookup(ClientKind::FranzGo, side, name).unwrap(),
            value,
        )
    }

    #[test]
    fn the_java_validators_are_read_as_the_client_reads_them() {
        assert!(java(Side::Producer, "acks", "all").is_ok());
        assert!(java(Side::Producer, "acks", "-1").is_ok());
        assert!(java(Side::Producer, "acks", "2")
            .unwrap_err()
            .contains("`all`, `-1`, `0`, `1`"));
        assert!(java(Side::Producer, "batch.size", "65536").is_ok());
        assert!(java(Side::Producer, "batch.size", "-1")
            .unwrap_err()
            .contains("at least 0"));
        assert!(java(Side::Producer, "batch.size", "1.5").is_err());
        assert!(java(Side::Producer, "batch.size", "4294967296")
            .unwrap_err()
            .contains("int"));
        assert!(java(Side::Producer, "compression.gzip.level", "-1").is_ok());
        assert!(java(Side::Producer, "compression.gzip.level", "10")
            .unwrap_err()
            .contains("1 to 9, or -1"));
        assert!(java(Side::Producer, "enable.idempotence", "yes").is_err());
        assert!(java(
            Side::Producer,
            "buffer.memory.allocation.strategy",
            "incremental"
        )
        .is_ok());
        assert!(java(Side::Producer, "partitioner.class", "com.example.Mine").is_err());
        assert!(java(
            Side::Producer,
            "partitioner.class",
            "org.apache.kafka.clients.producer.RoundRobinPartitioner"
        )
        .is_ok());
        assert!(java(Side::Consumer, "auto.offset.reset", "earliest").is_ok());
        assert!(java(Side::Consumer, "auto.offset.reset", "by_duration:PT1H").is_ok());
        assert!(java(Side::Consumer, "auto.offset.reset", "smallest").is_err());
        assert!(java(Side::Producer, "transactional.id", "").is_err());
    }

    #[test]
    fn franz_go_values_are_read_by_their_kind() {
        assert!(franz(Side::Producer, "linger.ms", "20").is_ok());
        assert!(franz(Side::Producer, "linger.ms", "-1").is_err());
        assert!(franz(Side::Producer, "compression.type", "zstd").is_ok());
        assert!(franz(Side::Producer, "compression.type", "brotli")
            .unwrap_err()
            .contains("`snappy`"));
        assert!(franz(Side::Producer, "enable.idempotence", "false").is_ok());
        assert!(franz(Side::Consumer, "group.protocol", "classic").is_ok());
    }
}
