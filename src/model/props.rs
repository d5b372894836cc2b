//! Client properties, and the masking that keeps a secret out of every output.

use serde::{Deserialize, Serialize};

use crate::source::Span;

/// A client property as librdkafka takes it, already validated by librdkafka. Serializes with
/// a secret's value masked, so no plan, report or result file can print one.
#[derive(Clone, Debug)]
pub struct Prop {
    pub key: String,
    pub value: String,
    pub span: Option<Span>,
}

/// A result file's property, as it was written: a secret's value stays masked.
impl<'de> Deserialize<'de> for Prop {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Kv {
            key: String,
            value: String,
        }
        let kv = Kv::deserialize(d)?;
        Ok(Prop {
            key: kv.key,
            value: kv.value,
            span: None,
        })
    }
}

impl Serialize for Prop {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Prop", 2)?;
        st.serialize_field("key", &self.key)?;
        st.serialize_field("value", self.shown_value())?;
        st.end()
    }
}

impl Prop {
    /// The value as any output may show it: [`MASK`] for a secret.
    pub fn shown_value(&self) -> &str {
        if is_secret(&self.key) {
            MASK
        } else {
            &self.value
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Props(pub Vec<Prop>);

/// What a secret value is replaced with in every output.
pub const MASK: &str = "****";

/// The properties librdkafka 2.12 marks `_RK_SENSITIVE` in `rdkafka_conf.c` and redacts in its
/// own configuration dump. librdkafka offers no API to ask, so the list is copied; a test reads
/// the vendored source to keep it in step.
pub const LIBRDKAFKA_SENSITIVE: &[&str] = &[
    "ssl.key.location",
    "ssl.key.password",
    "ssl.key.pem",
    "ssl_key",
    "ssl.ca.pem",
    "ssl.keystore.password",
    "sasl.username",
    "sasl.password",
    "sasl.oauthbearer.config",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.assertion.private.key.file",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "sasl.oauthbearer.assertion.private.key.pem",
];

/// Keys whose values must not be printed: librdkafka's sensitive properties, and by name every
/// password, passphrase, secret, key, token and JAAS config, librdkafka's or not (a Java name
/// pasted from an article is echoed in its diagnostic). A `*.key.location` or `*.key.file` is a
/// path, not a secret, so the name rule stops at `.key`; librdkafka's own list still masks the
/// two it redacts. `key` is the property name, optionally after a section (`cluster.x`).
/// The consumer protocol's group configs (KIP-848) a `consumer { }` block may set: Kafka's
/// names, set on the group (IncrementalAlterConfigs) before its members join, never given to
/// librdkafka.
pub const CONSUMER_GROUP_CONFIGS: &[&str] = &[
    "consumer.heartbeat.interval.ms",
    "consumer.session.timeout.ms",
];

impl Props {
    /// The properties for librdkafka and the group configs, apart.
    pub fn split_group_configs(&self) -> (Props, Vec<(String, String)>) {
        let (group, client): (Vec<&Prop>, Vec<&Prop>) = self
            .iter()
            .partition(|p| CONSUMER_GROUP_CONFIGS.contains(&p.key.as_str()));
        (
            Props(client.into_iter().cloned().collect()),
            group
                .into_iter()
                .map(|p| (p.key.clone(), p.value.clone()))
                .collect(),
        )
    }
}

pub fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    // A step's `workload.key = uniform(100)` is the key pattern, not a private key.
    if k.starts_with("workload.") {
        return false;
    }
    LIBRDKAFKA_SENSITIVE
        .iter()
        .any(|s| k == *s || k.ends_with(&format!(".{s}")))
        || k.contains("password")
        || k.contains("passphrase")
        || k.contains("secret")
        || k.ends_with(".key")
        || k.ends_with(".key.pem")
        || k.ends_with(".token")
        || k.ends_with("jaas.config")
        || k.ends_with(".credentials")
        || k.ends_with("user.info")
}

impl Props {
    /// A copy with every secret value replaced by [`MASK`], for reports and result files.
    pub fn masked(&self) -> Props {
        let mut m = self.clone();
        for p in &mut m.0 {
            p.value = p.shown_value().into();
        }
        m
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|p| p.key == key)
            .map(|p| p.value.as_str())
    }

    /// Sets unless already present (for kafkabench's defaults).
    pub fn set_default(&mut self, key: &str, value: impl Into<String>) {
        if self.get(key).is_none() {
            self.0.push(Prop {
                key: key.into(),
                value: value.into(),
                span: None,
            });
        }
    }

    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.0.retain(|p| p.key != key);
        self.0.push(Prop {
            key: key.into(),
            value: value.into(),
            span: None,
        });
    }

    pub fn iter(&self) -> impl Iterator<Item = &Prop> {
        self.0.iter()
    }
}
