//! The brokers' own configuration in a result: each broker's configs that are not at Kafka's
//! default, each with where it was set; the client quotas that apply to the run's client ids;
//! a run's topic's effective configs. And what differs between two results, which `compare`
//! names and `history` marks on a series.
//!
//! Two kinds of config are never kept:
//! - a secret: one the broker calls sensitive, or whose name says it is one
//!   (`model::is_secret`: `*.password`, `*jaas.config`, …), keeps its name only;
//! - a config that names a broker or a place on its host rather than configures it
//!   ([`LEFT_OUT`]): two clusters tuned alike differ in all of them, and every comparison
//!   would report them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Configs that name a broker, its addresses or its paths, left out by name. Besides these,
/// every name ending in `.location` (a keystore's or truststore's path, per listener too) or
/// `.class.path` (a plugin's jars) is left out.
pub const LEFT_OUT: &[&str] = &[
    "node.id",
    "broker.id",
    "broker.rack",
    "listeners",
    "advertised.listeners",
    "controller.quorum.voters",
    "controller.quorum.bootstrap.servers",
    "log.dir",
    "log.dirs",
    "metadata.log.dir",
    "zookeeper.connect",
];

/// Whether a config named `name` is left out of a result ([`LEFT_OUT`]).
pub fn left_out(name: &str) -> bool {
    LEFT_OUT.contains(&name) || name.ends_with(".location") || name.ends_with(".class.path")
}

/// Where a config's value comes from (Kafka's `ConfigSource`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Set on the topic.
    Topic,
    /// Set on this broker at run time (IncrementalAlterConfigs).
    DynamicBroker,
    /// Set at run time for every broker (the cluster-wide default).
    DynamicDefault,
    /// The broker's properties file.
    Static,
    /// Kafka's default.
    Default,
    /// A broker logger's level.
    Logger,
    #[serde(other)]
    Unknown,
}

impl Source {
    /// Kafka's `ConfigSource` id.
    pub fn of(id: i8) -> Source {
        match id {
            1 => Source::Topic,
            2 => Source::DynamicBroker,
            3 => Source::DynamicDefault,
            4 => Source::Static,
            5 => Source::Default,
            6 => Source::Logger,
            _ => Source::Unknown,
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Source::Topic => "set on the topic",
            Source::DynamicBroker => "dynamic, this broker",
            Source::DynamicDefault => "dynamic, every broker",
            Source::Static => "static",
            Source::Default => "default",
            Source::Logger => "logger",
            Source::Unknown => "unknown source",
        }
    }
}

/// One config that is not at its default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub name: String,
    /// Its value; absent for a secret and for a config set to nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub source: Source,
    /// A secret: its value is never kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

impl Config {
    /// A config as the broker described it; a secret's value dropped here, before anything can
    /// keep it.
    pub fn new(name: String, value: Option<String>, source: Source, sensitive: bool) -> Config {
        let sensitive = sensitive || crate::model::is_secret(&name);
        Config {
            value: if sensitive { None } else { value },
            name,
            source,
            sensitive,
        }
    }

    /// The value in words: `(secret)`, `(none)` for a config set to nothing.
    pub fn shown(&self) -> String {
        match (&self.value, self.sensitive) {
            (_, true) => "(secret)".into(),
            (Some(v), false) => v.clone(),
            (None, false) => "(none)".into(),
        }
    }
}

/// Some configs as a broker (or a topic) described them, or why they are missing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Described {
    /// Every config not at Kafka's default, left-out names aside, by name.
    #[serde(default)]
    pub configs: Vec<Config>,
    /// Why there are none: the cluster refused (an ACL) or did not answer. The result is
    /// measured all the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Described {
    /// What to keep of a full DescribeConfigs answer: neither defaults nor left-out names, by
    /// name.
    pub fn kept(all: impl IntoIterator<Item = Config>) -> Described {
        let mut configs: Vec<Config> = (all.into_iter())
            .filter(|c| c.source != Source::Default && !left_out(&c.name))
            .collect();
        configs.sort_by(|a, b| a.name.cmp(&b.name));
        Described {
            configs,
            note: None,
        }
    }

    pub fn refused(why: String) -> Described {
        Described {
            configs: Vec::new(),
            note: Some(why),
        }
    }

    /// The configs that differ from `base`'s, by name (a config at its default reads
    /// `default`); none when either side was not described.
    pub fn differences(&self, base: &Described) -> Vec<Difference> {
        if self.note.is_some() || base.note.is_some() {
            return Vec::new();
        }
        let values = |d: &Described| -> BTreeMap<String, (String, Source)> {
            (d.configs.iter())
                .map(|c| (c.name.clone(), (c.shown(), c.source)))
                .collect()
        };
        differ(&values(base), &values(self))
    }
}

/// One broker's configs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BrokerConfig {
    pub id: i32,
    #[serde(flatten)]
    pub described: Described,
}

/// A client quota that applies to the run's clients: its entity by type (`user`,
/// `client-id`), a null name for the type's default entity, and its values by key
/// (`producer_byte_rate`, …).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Quota {
    pub entity: BTreeMap<String, Option<String>>,
    pub values: BTreeMap<String, f64>,
}

impl Quota {
    /// `user=alice client-id=<default>`
    pub fn entity_words(&self) -> String {
        (self.entity.iter())
            .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("<default>")))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether it applies to a client with one of `client_ids`, as `users` (the user a client
    /// authenticates as; the default user's quotas apply to every user): each of its
    /// components must match, and an IP's connection quota is not about clients.
    pub fn applies(&self, client_ids: &[String], users: &[String]) -> bool {
        let component = |(kind, name): (&String, &Option<String>)| match (kind.as_str(), name) {
            ("client-id", None) | ("user", None) => true,
            ("client-id", Some(n)) => client_ids.contains(n),
            ("user", Some(n)) => users.contains(n),
            _ => false,
        };
        !self.entity.is_empty() && self.entity.iter().all(component)
    }
}

/// The brokers' configuration, asked once per result file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BrokerConfigs {
    /// Each broker's configs not at their default, by broker id.
    pub brokers: Vec<BrokerConfig>,
    /// The client ids the runs use, whose quotas were asked.
    #[serde(default)]
    pub client_ids: Vec<String>,
    /// The quotas that apply to them.
    #[serde(default)]
    pub quotas: Vec<Quota>,
    /// Why the quotas are missing: the cluster refused or did not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quotas_note: Option<String>,
    /// Why nothing was asked: kafkabench's own connection could not reach the cluster (a
    /// mechanism it does not speak, such as GSSAPI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A config that differs between two results.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub name: String,
    pub from: String,
    pub to: String,
    /// Where the new value comes from; None when it went back to its default.
    pub source: Option<Source>,
}

impl Difference {
    /// `num.io.threads: 8 → 16 (dynamic, this broker)`
    pub fn words(&self) -> String {
        let source = self
            .source
            .map_or(String::new(), |s| format!(" ({})", s.words()));
        format!("{}: {} → {}{source}", self.name, self.from, self.to)
    }
}

/// The differences between two `name → (value, source)` maps; a name on one side only is at
/// its default on the other.
fn differ(
    base: &BTreeMap<String, (String, Source)>,
    cur: &BTreeMap<String, (String, Source)>,
) -> Vec<Difference> {
    let mut names: Vec<&String> = base.keys().chain(cur.keys()).collect();
    names.sort();
    names.dedup();
    let default = || "default".to_string();
    names
        .into_iter()
        .filter_map(|n| {
            let from = base.get(n).map_or_else(default, |v| v.0.clone());
            let (to, source) = cur
                .get(n)
                .map_or((default(), None), |v| (v.0.clone(), Some(v.1)));
            (from != to).then(|| Difference {
                name: n.clone(),
                from,
                to,
                source,
            })
        })
        .collect()
}

impl BrokerConfigs {
    /// Each config's value across the brokers that answered, by name: `16` when they agree
    /// (a broker without it: `default`), `1: 8, 2: 16` when they do not; empty when none
    /// answered.
    pub fn values(&self) -> BTreeMap<String, (String, Source)> {
        let answered: Vec<&BrokerConfig> = (self.brokers.iter())
            .filter(|b| b.described.note.is_none())
            .collect();
        let mut by_name: BTreeMap<&str, BTreeMap<i32, &Config>> = BTreeMap::new();
        for b in &answered {
            for c in &b.described.configs {
                by_name.entry(&c.name).or_default().insert(b.id, c);
            }
        }
        (by_name.into_iter())
            .map(|(name, on)| {
                let shown = |id: &i32| on.get(id).map_or("default".to_string(), |c| c.shown());
                let all: Vec<String> = answered.iter().map(|b| shown(&b.id)).collect();
                let source = on.values().next().map_or(Source::Unknown, |c| c.source);
                let text = if all.windows(2).all(|w| w[0] == w[1]) {
                    all.first().cloned().unwrap_or_default()
                } else {
                    (answered.iter())
                        .map(|b| format!("{}: {}", b.id, shown(&b.id)))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                (name.to_string(), (text, source))
            })
            .collect()
    }

    /// What was not recorded, in one line for the report's notes: the first broker's note
    /// (with how many more there are) and the quotas'; None when everything was.
    pub fn missing(&self) -> Option<String> {
        let notes: Vec<&String> = (self.brokers.iter())
            .filter_map(|b| b.described.note.as_ref())
            .collect();
        let mut parts: Vec<String> = self.note.iter().cloned().collect();
        if let Some(first) = notes.first() {
            parts.push(match notes.len() - 1 {
                0 => first.to_string(),
                n => format!("{first} (and {n} more broker{})", crate::format::plural(n)),
            });
        }
        parts.extend(self.quotas_note.clone());
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// Whether any broker's configs were described.
    pub fn answered(&self) -> bool {
        self.brokers.iter().any(|b| b.described.note.is_none())
    }

    /// The broker configs, then the quotas, that differ from `base`'s: none when either side
    /// has no broker's answer (or, for the quotas, none).
    pub fn differences(&self, base: &BrokerConfigs) -> Vec<Difference> {
        let mut out = Vec::new();
        if self.answered() && base.answered() {
            out = differ(&base.values(), &self.values());
        }
        let asked = |b: &BrokerConfigs| b.note.is_none() && b.quotas_note.is_none();
        if asked(self) && asked(base) {
            let quotas = |b: &BrokerConfigs| -> BTreeMap<String, (String, Source)> {
                (b.quotas.iter())
                    .flat_map(|q| {
                        (q.values.iter()).map(move |(k, v)| {
                            let name = format!("quota {k} of {}", q.entity_words());
                            (name, (format!("{v}"), Source::Unknown))
                        })
                    })
                    .collect()
            };
            let mut q = differ(&quotas(base), &quotas(self));
            for d in &mut q {
                d.source = None;
                for side in [&mut d.from, &mut d.to] {
                    if side == "default" {
                        *side = "none".into();
                    }
                }
            }
            out.extend(q);
        }
        out
    }
}

#[cfg(test)]
#[path = "broker_config_tests.rs"]
mod tests;
