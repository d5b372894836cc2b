//! The brokers' own configuration (`measure::broker_config`): asked once per result file, with
//! the client quotas that apply to the runs' clients, and a run's topic's effective configs,
//! asked before it measures. A broker answers DescribeConfigs only for its own id, so each is
//! asked over a connection of its own; the quotas and a topic's configs, of any broker. A
//! cluster that refuses (an ACL) or does not answer leaves a note in the result, never a
//! failed run.

use std::time::Duration;

use crate::measure::broker_config::{
    BrokerConfig, BrokerConfigs, Config, Described, Quota, Source,
};
use crate::model::Props;
use crate::plan::RunPlan;
use crate::wire::admin::{bootstrap_conn, bootstrap_list, metadata};
use crate::wire::configs::{self, describe_client_quotas, describe_configs};
use crate::wire::conn::{Conn, Limits};
use crate::wire::{Security, WireError};

const IO_TIMEOUT: Duration = Duration::from_secs(5);
const CLIENT_ID: &str = "kafkabench";

/// Whose quotas apply: the runs' client ids, and the users they authenticate as.
#[derive(Clone, Debug, Default)]
pub(super) struct Clients {
    pub ids: Vec<String>,
    pub users: Vec<String>,
}

/// The client ids of `runs`' producers, consumers and share groups, and their user: the SASL
/// user, or Kafka's `ANONYMOUS` for a plaintext connection or TLS without a client
/// certificate. A certificate's principal is not known here, so only the default user's
/// quotas match then.
pub(super) fn clients(runs: &[&RunPlan]) -> Clients {
    let mut c = Clients::default();
    let add = |list: &mut Vec<String>, v: Option<&str>| {
        if let Some(v) = v.filter(|v| !list.iter().any(|x| x == v)) {
            list.push(v.to_string());
        }
    };
    for rp in runs {
        add(&mut c.ids, rp.producer.get("client.id"));
        add(
            &mut c.ids,
            rp.consumer.as_ref().and_then(|p| p.get("client.id")),
        );
        if let Some(s) = &rp.share {
            let id = s.client.get("client.id");
            add(
                &mut c.ids,
                Some(id.unwrap_or(super::share::DEFAULT_CLIENT_ID)),
            );
        }
        let certificate = [
            "ssl.certificate.location",
            "ssl.certificate.pem",
            "ssl.keystore.location",
        ]
        .iter()
        .any(|k| rp.admin.get(k).is_some());
        let user = match (rp.admin.get("sasl.username"), protocol(&rp.admin).as_str()) {
            (Some(u), _) => Some(u),
            (None, "plaintext") => Some("ANONYMOUS"),
            (None, "ssl") if !certificate => Some("ANONYMOUS"),
            (None, _) => None,
        };
        add(&mut c.users, user);
    }
    c
}

fn protocol(p: &Props) -> String {
    p.get("security.protocol")
        .unwrap_or("plaintext")
        .to_ascii_lowercase()
}

/// Every broker's configs, and the quotas that apply to `clients`, of the cluster at
/// `bootstrap`, reached as `admin` says (blocking); a note of why not when kafkabench's own
/// connection cannot reach the cluster at all.
pub(super) fn brokers(admin: &Props, bootstrap: &str, clients: &Clients) -> BrokerConfigs {
    asked(admin, bootstrap, clients).unwrap_or_else(|why| BrokerConfigs {
        client_ids: clients.ids.clone(),
        note: Some(format!("the brokers' configs not recorded: {why}")),
        ..BrokerConfigs::default()
    })
}

fn asked(admin: &Props, bootstrap: &str, clients: &Clients) -> Result<BrokerConfigs, String> {
    let security = super::logdirs::security(admin).map_err(|e| e.to_string())?;
    let limits = Limits::new(IO_TIMEOUT);
    let bootstrap = bootstrap_list(bootstrap);
    let mut conn =
        bootstrap_conn(&bootstrap, &security, limits, CLIENT_ID).map_err(|e| e.to_string())?;
    let cluster = metadata(&mut conn, &[]).map_err(|e| e.to_string())?;
    let mut ids: Vec<(i32, String)> = cluster.brokers.into_iter().collect();
    ids.sort();
    let brokers = (ids.into_iter())
        .map(|(id, address)| BrokerConfig {
            id,
            described: broker(&address, id, &security),
        })
        .collect();
    let (quotas, quotas_note) = match describe_client_quotas(&mut conn) {
        Ok(all) => (
            (all.into_iter())
                .map(|q| Quota {
                    entity: q.entity.into_iter().collect(),
                    values: q.values.into_iter().collect(),
                })
                .filter(|q| q.applies(&clients.ids, &clients.users))
                .collect(),
            None,
        ),
        Err(e) => (Vec::new(), Some(refusal("the client quotas", &e))),
    };
    Ok(BrokerConfigs {
        brokers,
        client_ids: clients.ids.clone(),
        quotas,
        quotas_note,
        note: None,
    })
}

/// Broker `id`'s configs, asked of it at `address`.
fn broker(address: &str, id: i32, security: &Security) -> Described {
    let asked = Conn::connect(address, security, Limits::new(IO_TIMEOUT), CLIENT_ID)
        .and_then(|mut c| describe_configs(&mut c, configs::BROKER, &id.to_string()));
    match asked {
        Ok(all) => Described::kept(all.into_iter().map(config)),
        Err(e) => Described::refused(refusal(&format!("broker {id}'s configs"), &e)),
    }
}

/// The effective configs of `rp`'s topic (the first, with `topics = N`: they are created
/// alike), asked before it measures.
pub(super) async fn topic(rp: &RunPlan) -> Described {
    let name = rp.topics.first().unwrap_or(&rp.topic.name).clone();
    let (admin, bootstrap) = (rp.admin.clone(), rp.bootstrap.clone());
    let asked = super::blocking::blocking(move || {
        let security = super::logdirs::security(&admin).map_err(|e| e.to_string())?;
        let limits = Limits::new(IO_TIMEOUT);
        bootstrap_conn(&bootstrap_list(&bootstrap), &security, limits, CLIENT_ID)
            .and_then(|mut c| describe_configs(&mut c, configs::TOPIC, &name))
            .map_err(|e| refusal(&format!("topic {name}'s configs"), &e))
    })
    .await;
    match asked {
        Ok(Ok(all)) => Described::kept(all.into_iter().map(config)),
        Ok(Err(why)) => Described::refused(why),
        Err(e) => Described::refused(format!("the topic's configs not recorded: {e}")),
    }
}

fn config(c: configs::Described) -> Config {
    Config::new(c.name, c.value, Source::of(c.source), c.sensitive)
}

/// `broker 1's configs not recorded: …`, saying an authorization failure as one.
fn refusal(what: &str, e: &WireError) -> String {
    // TOPIC_AUTHORIZATION_FAILED, GROUP_…, CLUSTER_AUTHORIZATION_FAILED.
    let denied = matches!(e.kafka_code(), Some(29..=31));
    let why = if denied {
        "refused: the client may not describe configs (DESCRIBE_CONFIGS is not allowed)"
    } else {
        "no answer"
    };
    format!("{what} not recorded, {why}: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_are_every_runs_producer_and_consumer_once_with_their_sasl_user() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("clients.kbs");
        std::fs::write(
            &path,
            r#"scenario "clients" {
  cluster {
    bootstrap = "127.0.0.1:1"
    security.protocol = "SASL_PLAINTEXT"
    sasl.mechanism = "PLAIN"
    sasl.username = "alice"
    sasl.password = "x"
  }
  topic "t-{step}" { partitions = 1 }
  producer { client.id = "writer" }
  consumer { }
  steps {
    a { }
    b { producer.client.id = "writer-2" }
  }
  workload { messages = 10 }
}"#,
        )
        .unwrap();
        let mut sources = crate::source::Sources::default();
        let scenario = crate::check::load(&path, &mut sources).expect("a valid scenario");
        let plan = crate::plan::plan(&scenario, &Default::default());
        let c = clients(&plan.runs.iter().collect::<Vec<_>>());
        assert_eq!(c.ids, ["writer", "kafkabench-consumer", "writer-2"]);
        assert_eq!(c.users, ["alice"]);
    }
}
