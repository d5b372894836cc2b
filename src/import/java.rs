//! Java client properties, as OMB's driver files hold them (`topicConfig: |` blocks in Java's
//! properties format), and what each becomes in librdkafka's terms.
//!
//! Only what needs knowledge is here: renamed properties, values that mean the same in other
//! words, serializers, `sasl.jaas.config` and secrets. Whether librdkafka (or the broker's topic
//! configs) knows a name is asked of the checker itself when the scenario is written.

use crate::model::is_secret;

/// One Java property, carried over or not.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Translated {
    /// `key = value`; the note says what changed on the way, if anything did.
    Set {
        key: String,
        value: Val,
        note: Option<String>,
    },
    /// Not carried over; the note says why (and never quotes a secret).
    Dropped(String),
    /// `bootstrap.servers`: the cluster block's `bootstrap`.
    Bootstrap(String),
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Val {
    Text(String),
    /// A secret, read from this environment variable when the scenario is checked.
    Env(String),
}

/// A properties text's `key=value` pairs in order: `#`/`!` comments, `=`, `:` or a space
/// between key and value, `\` line continuations and escapes, as `java.util.Properties` reads.
pub(super) fn parse(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(first) = lines.next() {
        let mut logical = first.trim_start().to_string();
        if logical.is_empty() || logical.starts_with('#') || logical.starts_with('!') {
            continue;
        }
        while continues(&logical) {
            logical.pop();
            match lines.next() {
                Some(next) => logical.push_str(next.trim_start()),
                None => break,
            }
        }
        let (key, value) = split_pair(&logical);
        // Kafka's ConfigDef trims values; trailing blanks in a driver file mean nothing.
        out.push((unescape(key), unescape(value).trim_end().to_string()));
    }
    out
}

/// A line continues when it ends in an odd number of backslashes.
fn continues(line: &str) -> bool {
    line.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1
}

fn split_pair(line: &str) -> (&str, &str) {
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || c.is_whitespace() {
            let rest = line[i..].trim_start();
            let rest = if c.is_whitespace() {
                rest.strip_prefix(['=', ':']).unwrap_or(rest)
            } else {
                &rest[1..]
            };
            return (&line[..i], rest.trim_start());
        }
    }
    (line, "")
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// The environment variable a secret property is read from: `KAFKA_` and the name in capitals.
pub(super) fn env_name(key: &str) -> String {
    let mut name = String::from("KAFKA_");
    for c in key.chars() {
        name.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        });
    }
    name
}

/// A Java client property in librdkafka's terms.
pub(super) fn translate(key: &str, value: &str) -> Vec<Translated> {
    let set = |k: &str, v: String, note: Option<String>| Translated::Set {
        key: k.to_string(),
        value: Val::Text(v),
        note,
    };
    let renamed = |to: &str| Some(format!("Java's `{key}` is librdkafka's `{to}`"));
    match key {
        "bootstrap.servers" => vec![Translated::Bootstrap(value.to_string())],
        "key.serializer" | "value.serializer" | "key.deserializer" | "value.deserializer" => {
            vec![Translated::Dropped(format!(
                "`{key}` dropped: librdkafka has no serializers; kafkabench sends and reads raw bytes"
            ))]
        }
        "sasl.jaas.config" => jaas(value),
        "group.id" => vec![Translated::Dropped(format!(
            "`group.id = {value}` dropped: OMB names each subscription's group itself, and kafkabench gives every run a group of its own"
        ))],
        "max.in.flight.requests.per.connection" => vec![set(
            "max.in.flight",
            value.to_string(),
            Some(format!("Java's `{key}`")),
        )],
        "fetch.max.wait.ms" => vec![set("fetch.wait.max.ms", value.to_string(), renamed("fetch.wait.max.ms"))],
        "max.request.size" => vec![set("message.max.bytes", value.to_string(), renamed("message.max.bytes"))],
        "send.buffer.bytes" | "receive.buffer.bytes" => {
            let to = format!("socket.{key}");
            // Java's -1 is "the OS default", which librdkafka spells 0.
            let v = if value.trim() == "-1" { "0".to_string() } else { value.to_string() };
            vec![set(&to, v, renamed(&to))]
        }
        "buffer.memory" => match value.trim().parse::<u64>() {
            Ok(bytes) => vec![set(
                "queue.buffering.max.kbytes",
                bytes.div_ceil(1024).to_string(),
                Some(format!(
                    "Java's `buffer.memory = {value}` (bytes) is librdkafka's `queue.buffering.max.kbytes` (KiB)"
                )),
            )],
            Err(_) => vec![Translated::Dropped(format!(
                "`buffer.memory = {value}` dropped: not a byte count; librdkafka's equivalent is `queue.buffering.max.kbytes` (KiB)"
            ))],
        },
        "ssl.endpoint.identification.algorithm" if value.trim().is_empty() => vec![set(
            key,
            "none".to_string(),
            Some("Java's empty value (no host name check) is librdkafka's `none`".to_string()),
        )],
        "ssl.truststore.location" | "ssl.truststore.password" | "ssl.truststore.type" => {
            vec![Translated::Dropped(format!(
                "`{key}` dropped: librdkafka reads no Java trust store; export its CA certificate as PEM and set `ssl.ca.location`"
            ))]
        }
        // Vanlightly's fork's consumer reads this from consumerConfig; the Kafka client does not.
        "offsetCommitLingerMs" => vec![Translated::Dropped(format!(
            "`offsetCommitLingerMs = {value}` dropped: Vanlightly's fork's setting, not the Kafka client's: with auto commit off, its consumer commits asynchronously at most every {value} ms after the last commit completed; the nearest here is the workload's `commit = auto(…)`, librdkafka's auto commit at that interval"
        ))],
        "default.api.timeout.ms" => vec![Translated::Dropped(format!(
            "`default.api.timeout.ms = {value}` dropped: the Java client's timeout for its blocking calls (commitSync, position, …); librdkafka has no such default"
        ))],
        "socket.connection.setup.timeout.max.ms" => vec![Translated::Dropped(format!(
            "`{key} = {value}` dropped: the Java client's ceiling on a connection set-up timeout that grows with each failure; librdkafka's `socket.connection.setup.timeout.ms` is one fixed timeout"
        ))],
        "ssl.keystore.type" => vec![Translated::Dropped(format!(
            "`ssl.keystore.type = {value}` dropped: librdkafka reads a PKCS#12 key store from `ssl.keystore.location` (convert a JKS one with keytool)"
        ))],
        _ if is_secret(key) => vec![Translated::Set {
            key: key.to_string(),
            value: Val::Env(env_name(key)),
            note: Some(format!(
                "a secret: read from ${} when checked, never copied from the driver file",
                env_name(key)
            )),
        }],
        _ => vec![set(key, value.to_string(), None)],
    }
}

/// Java's PEM stores (`ssl.truststore.type` / `ssl.keystore.type` = PEM): files librdkafka reads
/// under other names; None for a property that is not one of them, or a store that is not PEM.
/// `pem` says which stores are PEM: (trust store, key store).
pub(super) fn pem_store(key: &str, value: &str, pem: (bool, bool)) -> Option<Vec<Translated>> {
    let set = |k: &str, note: &str| Translated::Set {
        key: k.to_string(),
        value: Val::Text(value.to_string()),
        note: Some(note.to_string()),
    };
    let typed = |what: &str| {
        Translated::Dropped(format!(
            "`{key} = {value}`: librdkafka reads PEM files without a type; the {what} location is carried over"
        ))
    };
    match key {
        "ssl.truststore.type" if is_pem(value) => Some(vec![typed("trust store's")]),
        "ssl.keystore.type" if is_pem(value) => Some(vec![typed("key store's")]),
        "ssl.truststore.location" if pem.0 => Some(vec![set(
            "ssl.ca.location",
            "Java's PEM trust store is librdkafka's `ssl.ca.location`",
        )]),
        // A PEM key store holds the private key and the certificate chain in one file.
        "ssl.keystore.location" if pem.1 => Some(vec![
            set("ssl.certificate.location", "Java's PEM key store: its certificate chain"),
            set("ssl.key.location", "Java's PEM key store: its private key"),
        ]),
        "ssl.truststore.certificates" => Some(vec![set(
            "ssl.ca.pem",
            "Java's `ssl.truststore.certificates` (PEM text) is librdkafka's `ssl.ca.pem`",
        )]),
        "ssl.keystore.certificate.chain" => Some(vec![set(
            "ssl.certificate.pem",
            "Java's `ssl.keystore.certificate.chain` (PEM text) is librdkafka's `ssl.certificate.pem`",
        )]),
        "ssl.keystore.key" => Some(vec![Translated::Set {
            key: "ssl.key.pem".into(),
            value: Val::Env(env_name("ssl.key.pem")),
            note: Some(format!(
                "Java's `ssl.keystore.key` (a PEM private key) is librdkafka's `ssl.key.pem`: read from ${} when checked, never copied",
                env_name("ssl.key.pem")
            )),
        }]),
        _ => None,
    }
}

/// Whether a store type is PEM (Java compares it without case).
pub(super) fn is_pem(value: &str) -> bool {
    value.trim().eq_ignore_ascii_case("PEM")
}

/// `sasl.jaas.config`: librdkafka takes no JAAS; PLAIN and SCRAM's user and password become
/// properties read from the environment. The text itself holds the password: never quoted.
fn jaas(value: &str) -> Vec<Translated> {
    let module = value.split_whitespace().next().unwrap_or("");
    let short = module.rsplit('.').next().unwrap_or(module).to_string();
    let has = |option: &str| {
        value
            .split(|c: char| c.is_whitespace() || c == ';')
            .any(|tok| tok.split('=').next() == Some(option) && tok.contains('='))
    };
    match short.as_str() {
        "PlainLoginModule" | "ScramLoginModule" => {
            let mut out = Vec::new();
            for (option, key) in [("username", "sasl.username"), ("password", "sasl.password")] {
                if has(option) {
                    out.push(Translated::Set {
                        key: key.to_string(),
                        value: Val::Env(env_name(key)),
                        note: Some(format!(
                            "the {option} of Java's `sasl.jaas.config` ({short}): read from ${} when checked, never copied",
                            env_name(key)
                        )),
                    });
                }
            }
            if out.is_empty() {
                out.push(Translated::Dropped(format!(
                    "`sasl.jaas.config` ({short}) dropped: it names no username or password; set `sasl.username` and `sasl.password = env(\"KAFKA_SASL_PASSWORD\")`"
                )));
            }
            out
        }
        "OAuthBearerLoginModule" => vec![Translated::Dropped(
            "`sasl.jaas.config` (OAuthBearerLoginModule) dropped: librdkafka configures OAUTHBEARER with `sasl.oauthbearer.*` properties (docs/security.md), secrets through env()".to_string(),
        )],
        "Krb5LoginModule" => vec![Translated::Dropped(
            "`sasl.jaas.config` (Krb5LoginModule) dropped: librdkafka takes Kerberos as `sasl.kerberos.principal` and `sasl.kerberos.keytab`".to_string(),
        )],
        _ => vec![Translated::Dropped(format!(
            "`sasl.jaas.config` ({}) dropped: librdkafka takes no JAAS configuration",
            if short.is_empty() { "empty" } else { short.as_str() }
        ))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_text_reads_as_java_reads_it() {
        let text = "# comment\n! also\n\nacks=all\nlinger.ms : 5\nclient.id kb\nlong=a\\\n    b\nesc\\=key=x\\ty\nempty=\n";
        assert_eq!(
            parse(text),
            [
                ("acks", "all"),
                ("linger.ms", "5"),
                ("client.id", "kb"),
                ("long", "ab"),
                ("esc=key", "x\ty"),
                ("empty", ""),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
    }

    #[test]
    fn a_jaas_password_becomes_environment_references_and_is_never_quoted() {
        let out = jaas("org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"hunter2\";");
        assert_eq!(out.len(), 2);
        let text = format!("{out:?}");
        assert!(
            !text.contains("hunter2") && !text.contains("alice"),
            "{text}"
        );
        assert!(text.contains("KAFKA_SASL_PASSWORD"));
    }

    #[test]
    fn java_names_are_renamed_to_librdkafka_names() {
        let key_of = |k: &str, v: &str| match &translate(k, v)[0] {
            Translated::Set {
                key,
                value: Val::Text(v),
                ..
            } => (key.clone(), v.clone()),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            key_of("buffer.memory", "33554432"),
            ("queue.buffering.max.kbytes".into(), "32768".into())
        );
        assert_eq!(
            key_of("send.buffer.bytes", "-1"),
            ("socket.send.buffer.bytes".into(), "0".into())
        );
        assert_eq!(
            key_of("max.in.flight.requests.per.connection", "1"),
            ("max.in.flight".into(), "1".into())
        );
    }

    #[test]
    fn a_forks_setting_and_java_only_timeouts_are_dropped_as_what_they_are() {
        for (key, said) in [
            (
                "offsetCommitLingerMs",
                "Vanlightly's fork's setting, not the Kafka client's",
            ),
            (
                "default.api.timeout.ms",
                "the Java client's timeout for its blocking calls",
            ),
            (
                "socket.connection.setup.timeout.max.ms",
                "the Java client's ceiling",
            ),
        ] {
            match &translate(key, "5000")[..] {
                [Translated::Dropped(note)] => assert!(note.contains(said), "{note}"),
                other => panic!("{key}: {other:?}"),
            }
        }
    }
}
