//! Each side's client in the plan: its release, the settings whose value on it differs from
//! what another client would use with the same scenario (`model::client::differences`), and
//! every client's defaults, so a plan says what a figure measured on one client rests on.

use serde::Serialize;

use crate::model::client::differences::{self, DIFFERENCES};
use crate::model::client::names;
use crate::model::{ClientKind, Prop, Props, Side};

/// A setting whose value on a run's client differs from another client's, with the same
/// scenario.
#[derive(Clone, Debug, Serialize)]
pub struct Difference {
    /// What it is, in words (`batch size`).
    pub setting: &'static str,
    /// This client's property (null: a behaviour no property changes) and value.
    pub key: Option<&'static str>,
    pub value: String,
    /// Set by the scenario or by kafkabench; false: the client's own default.
    pub set: bool,
    /// Each other client that differs: how it says the setting with the same scenario.
    pub others: Vec<Other>,
}

/// Another client's way of saying a setting.
#[derive(Clone, Debug, Serialize)]
pub struct Other {
    pub client: ClientKind,
    pub key: Option<&'static str>,
    pub value: String,
}

/// One client's every default on one side, once per plan.
#[derive(Clone, Debug, Serialize)]
pub struct ClientDefaults {
    pub client: ClientKind,
    pub version: String,
    pub side: Side,
    /// In the client's order (librdkafka's dump, the tables' name order); secrets masked.
    pub defaults: Props,
}

/// The settings of a side on `client`, run with `props`, that another client would set
/// differently given the same scenario: the other client reads the property the run sets by
/// its own name where it has it, else keeps its default.
pub(super) fn differences(side: Side, client: ClientKind, props: &Props) -> Vec<Difference> {
    let run = |k: &str| props.get(k).map(str::to_string);
    let mut out = Vec::new();
    for d in DIFFERENCES.iter().filter(|d| d.side == side) {
        let default =
            |c: ClientKind| move |k: &str| names::default_of(c, side, k).map(str::to_string);
        let mine = differences::value(d, client, &run, &default(client));
        let others: Vec<Other> = (ClientKind::ALL.into_iter())
            .filter(|c| *c != client)
            .filter_map(|c| {
                let theirs = differences::value(d, c, &run, &default(c));
                (!differences::same(&mine.compared, &theirs.compared)).then_some(Other {
                    client: c,
                    key: theirs.key,
                    value: theirs.value,
                })
            })
            .collect();
        if !others.is_empty() {
            out.push(Difference {
                setting: d.what,
                key: mine.key,
                value: mine.value,
                set: mine.set,
                others,
            });
        }
    }
    out
}

/// Every default of `client` on `side`.
pub(super) fn defaults(client: ClientKind, version: &str, side: Side) -> ClientDefaults {
    let pairs: Vec<(String, String)> = match names::table(client, side) {
        None => names::librdkafka_defaults().to_vec(),
        Some(t) => (t.iter())
            .filter(|p| p.default != "<required>")
            .map(|p| (p.name.to_string(), p.default.to_string()))
            .collect(),
    };
    ClientDefaults {
        client,
        version: version.to_string(),
        side,
        defaults: Props(
            pairs
                .into_iter()
                .map(|(key, value)| Prop {
                    key,
                    value,
                    span: None,
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn differs(side: Side, client: ClientKind, props: &[(&str, &str)]) -> Vec<String> {
        let mut p = Props::default();
        for (k, v) in props {
            p.set(k, *v);
        }
        differences(side, client, &p)
            .into_iter()
            .map(|d| d.setting.to_string())
            .collect()
    }

    #[test]
    fn the_known_defaults_differ_and_a_shared_setting_does_not() {
        let librdkafka = differs(Side::Producer, ClientKind::Librdkafka, &[]);
        for row in [
            "batch size",
            "keyed partitioning",
            "idempotence",
            "requests in flight",
        ] {
            assert!(
                librdkafka.contains(&row.to_string()),
                "{row}: {librdkafka:?}"
            );
        }
        // linger.ms is 5 on librdkafka and Java, 10 on franz-go: the same 20 everywhere.
        assert!(librdkafka.contains(&"linger".to_string()));
        let set = differs(
            Side::Producer,
            ClientKind::Librdkafka,
            &[("linger.ms", "20")],
        );
        assert!(!set.contains(&"linger".to_string()), "{set:?}");
        let consumer = differs(Side::Consumer, ClientKind::Java, &[]);
        assert!(consumer.contains(&"isolation".to_string()), "{consumer:?}");
    }

    #[test]
    fn murmur2_random_aligns_librdkafka_with_the_others() {
        let aligned = differs(
            Side::Producer,
            ClientKind::Librdkafka,
            &[("partitioner", "murmur2_random")],
        );
        assert!(
            !aligned.contains(&"keyed partitioning".to_string()),
            "{aligned:?}"
        );
    }

    #[test]
    fn every_client_has_defaults_on_each_side() {
        for c in ClientKind::ALL {
            for side in [Side::Producer, Side::Consumer] {
                let d = defaults(c, "x", side);
                assert!(d.defaults.0.len() > 10, "{c} {side:?}");
            }
        }
    }
}
