//! Cluster administration through rdkafka: reachability, topic lifecycle, broker addresses.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::error::KafkaError;
use rdkafka::producer::{BaseProducer, DeliveryResult, Producer, ProducerContext};
use rdkafka::types::RDKafkaErrorCode;

use crate::model::{Prop, Props, TopicSpec};

mod error;
pub(crate) use error::{AdminError, LogDirsCause};

/// How long the first contact with a cluster may take before it is called unreachable.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Topics per CreateTopics or DeleteTopics request of a many-topic run: the cluster works
/// on a request's topics together, and a few hundred keep each request well within its
/// timeout.
pub(crate) const TOPICS_PER_REQUEST: usize = 500;

pub(crate) struct Admin {
    client: AdminClient<DefaultClientContext>,
    bootstrap: String,
}

/// Every admin request waits this long for the cluster's answer and for the operation.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn options() -> AdminOptions {
    AdminOptions::new()
        .operation_timeout(Some(ADMIN_TIMEOUT))
        .request_timeout(Some(ADMIN_TIMEOUT))
}

pub(crate) fn config(props: &Props) -> ClientConfig {
    let mut c = ClientConfig::new();
    for p in props.iter() {
        c.set(&p.key, &p.value);
    }
    // librdkafka logs connection refusals at error level on stderr; we report them ourselves.
    c.set_log_level(RDKafkaLogLevel::Emerg);
    c
}

/// A refusal that waiting cannot cure, as librdkafka reported it while connecting: without it
/// a wrong password or an untrusted certificate would look like an unreachable cluster.
enum Refusal {
    Authentication(String),
    Tls(String),
}

impl Refusal {
    fn at(self, bootstrap: &str) -> AdminError {
        let bootstrap = bootstrap.to_string();
        match self {
            Refusal::Authentication(reason) => AdminError::Authentication { bootstrap, reason },
            Refusal::Tls(reason) => AdminError::Tls { bootstrap, reason },
        }
    }
}

/// What librdkafka's error callback said during the first contact.
#[derive(Default)]
struct Heard {
    refusal: Option<Refusal>,
    /// The latest other broker error: it names a security.protocol mismatch, which librdkafka
    /// can only guess at, so it explains a timeout rather than ending the wait.
    last: Option<String>,
}

#[derive(Default)]
struct FirstContact {
    heard: Mutex<Heard>,
}

impl FirstContact {
    fn heard(&self) -> std::sync::MutexGuard<'_, Heard> {
        self.heard.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ClientContext for FirstContact {
    fn error(&self, error: KafkaError, reason: &str) {
        let mut heard = self.heard();
        match error.rdkafka_error_code() {
            Some(RDKafkaErrorCode::Authentication) => {
                heard
                    .refusal
                    .get_or_insert(Refusal::Authentication(reason.to_string()));
            }
            Some(RDKafkaErrorCode::SSL) => {
                heard
                    .refusal
                    .get_or_insert(Refusal::Tls(reason.to_string()));
            }
            // "1/1 brokers are down" says less than the error that took them down.
            Some(RDKafkaErrorCode::AllBrokersDown) => {}
            _ => heard.last = Some(reason.to_string()),
        }
    }
}

// A producer because its poll serves librdkafka's error events; an admin client's main queue
// is never polled, so its error callback never runs.
impl ProducerContext for FirstContact {
    type DeliveryOpaque = ();
    fn delivery(&self, _: &DeliveryResult<'_>, _: ()) {}
}

/// Asks for metadata until the cluster answers, a refusal arrives, or `CONNECT_TIMEOUT` passes.
fn first_contact(props: &Props, bootstrap: &str) -> Result<(), AdminError> {
    let probe: BaseProducer<FirstContact> = config(props)
        .create_with_context(FirstContact::default())
        .map_err(|source| client_error(bootstrap, source))?;
    let deadline = Instant::now() + CONNECT_TIMEOUT;
    loop {
        let answer = probe
            .client()
            .fetch_metadata(None, Duration::from_millis(250));
        probe.poll(Duration::ZERO);
        let mut heard = probe.context().heard();
        if let Some(refusal) = heard.refusal.take() {
            return Err(refusal.at(bootstrap));
        }
        match answer {
            Ok(_) => return Ok(()),
            Err(e) if Instant::now() >= deadline => {
                let why = heard.last.take().unwrap_or_else(|| e.to_string());
                return Err(unreachable(bootstrap, &why));
            }
            Err(_) => {}
        }
    }
}

fn unreachable(bootstrap: &str, why: &str) -> AdminError {
    AdminError::Unreachable {
        bootstrap: bootstrap.to_string(),
        why: why.to_string(),
    }
}

fn client_error(bootstrap: &str, source: KafkaError) -> AdminError {
    AdminError::Client {
        bootstrap: bootstrap.to_string(),
        source,
    }
}

impl Admin {
    pub(crate) fn connect(props: &Props, bootstrap: &str) -> Result<Admin, AdminError> {
        first_contact(props, bootstrap)?;
        let client: AdminClient<DefaultClientContext> = config(props)
            .create()
            .map_err(|source| client_error(bootstrap, source))?;
        let a = Admin {
            client,
            bootstrap: bootstrap.to_string(),
        };
        a.brokers()?;
        Ok(a)
    }

    /// The cluster's id, when it tells it within the connect bound.
    pub(crate) fn cluster_id(&self) -> Option<String> {
        self.client.inner().fetch_cluster_id(CONNECT_TIMEOUT)
    }

    /// `host:port` of every broker, proving the cluster answers.
    pub(crate) fn brokers(&self) -> Result<Vec<String>, AdminError> {
        let md = self
            .client
            .inner()
            .fetch_metadata(None, CONNECT_TIMEOUT)
            .map_err(|e| unreachable(&self.bootstrap, &e.to_string()))?;
        let v: Vec<String> = md
            .brokers()
            .iter()
            .map(|b| format!("{}:{}", b.host(), b.port()))
            .collect();
        if v.is_empty() {
            return Err(AdminError::NoBrokers {
                bootstrap: self.bootstrap.clone(),
            });
        }
        Ok(v)
    }

    pub(crate) async fn create_topic(&self, t: &TopicSpec) -> Result<(), AdminError> {
        let mut nt = NewTopic::new(
            &t.name,
            t.partitions,
            TopicReplication::Fixed(t.replication),
        );
        for c in t.configs.iter() {
            nt = nt.set(&c.key, &c.value);
        }
        let opts = options();
        let res = self
            .client
            .create_topics([&nt], &opts)
            .await
            .map_err(|source| AdminError::CreateTopic {
                topic: t.name.clone(),
                source,
            })?;
        for r in res {
            match r {
                Ok(_) => {}
                Err((topic, RDKafkaErrorCode::TopicAlreadyExists)) => {
                    return Err(AdminError::TopicExists { topic, one: true })
                }
                Err((topic, code)) => return Err(AdminError::TopicRefused { topic, code }),
            }
        }
        Ok(())
    }

    /// Whether the cluster would create topic `name` with `t`'s partitions and replication
    /// and these of its configs (CreateTopics with validate_only: nothing is created). Err:
    /// the cluster's refusal, or a request it did not answer.
    pub(crate) async fn validate_topic(
        &self,
        t: &TopicSpec,
        name: &str,
        configs: &[&Prop],
    ) -> Result<(), AdminError> {
        let mut nt = NewTopic::new(name, t.partitions, TopicReplication::Fixed(t.replication));
        for c in configs {
            nt = nt.set(&c.key, &c.value);
        }
        let opts = options().validate_only(true);
        let res = self
            .client
            .create_topics([&nt], &opts)
            .await
            .map_err(|source| AdminError::CreateTopic {
                topic: name.to_string(),
                source,
            })?;
        match res.into_iter().find_map(Result::err) {
            Some((topic, code)) => Err(AdminError::TopicRefused { topic, code }),
            None => Ok(()),
        }
    }

    /// Creates every topic of `names` with `t`'s partitions, replication and configs: a
    /// request per [`TOPICS_PER_REQUEST`] names, each created by the cluster in parallel.
    /// Every name gets its own answer: created, or why not.
    pub(crate) async fn create_topics(
        &self,
        t: &TopicSpec,
        names: &[String],
    ) -> Vec<(String, Result<(), AdminError>)> {
        let opts = options();
        let mut out = Vec::with_capacity(names.len());
        for batch in names.chunks(TOPICS_PER_REQUEST) {
            let new: Vec<NewTopic> = batch
                .iter()
                .map(|name| {
                    let mut nt =
                        NewTopic::new(name, t.partitions, TopicReplication::Fixed(t.replication));
                    for c in t.configs.iter() {
                        nt = nt.set(&c.key, &c.value);
                    }
                    nt
                })
                .collect();
            match self.client.create_topics(new.iter(), &opts).await {
                Err(e) => out.extend(batch.iter().map(|n| {
                    let why = AdminError::CreateTopic {
                        topic: n.clone(),
                        source: e.clone(),
                    };
                    (n.clone(), Err(why))
                })),
                Ok(res) => out.extend(res.into_iter().map(|r| match r {
                    Ok(name) => (name, Ok(())),
                    Err((name, RDKafkaErrorCode::TopicAlreadyExists)) => {
                        let why = AdminError::TopicExists {
                            topic: name.clone(),
                            one: false,
                        };
                        (name, Err(why))
                    }
                    Err((name, code)) => {
                        let why = AdminError::TopicRefused {
                            topic: name.clone(),
                            code,
                        };
                        (name, Err(why))
                    }
                })),
            }
        }
        out
    }

    /// Creates a sharded run's control topic unless another participant already did: one
    /// partition (one order for everyone), replicated like a small internal topic.
    pub(crate) async fn ensure_control_topic(&self, name: &str) -> Result<(), AdminError> {
        let brokers = self.brokers()?.len() as i32;
        let nt = NewTopic::new(name, 1, TopicReplication::Fixed(brokers.clamp(1, 3)));
        let opts = options();
        let res = self
            .client
            .create_topics([&nt], &opts)
            .await
            .map_err(|source| AdminError::CreateControlTopic {
                topic: name.to_string(),
                source,
            })?;
        for r in res {
            match r {
                Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
                Err((_, code)) => {
                    return Err(AdminError::ControlTopicRefused {
                        topic: name.to_string(),
                        code,
                    })
                }
            }
        }
        self.wait_for_leaders(name, 1, Duration::from_secs(30))
            .await
    }

    /// Deletes every topic of `names` (a request per [`TOPICS_PER_REQUEST`]); the ones that
    /// could not be deleted, each with why. A topic already gone counts as deleted.
    pub(crate) async fn delete_topics(&self, names: &[String]) -> Vec<(String, String)> {
        let opts = options();
        let mut left = Vec::new();
        for batch in names.chunks(TOPICS_PER_REQUEST) {
            let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
            match self.client.delete_topics(&refs, &opts).await {
                Err(e) => left.extend(batch.iter().map(|n| (n.clone(), e.to_string()))),
                Ok(res) => left.extend(res.into_iter().filter_map(|r| match r {
                    Err((name, code)) if code != RDKafkaErrorCode::UnknownTopicOrPartition => {
                        Some((name, code.to_string()))
                    }
                    _ => None,
                })),
            }
        }
        left
    }

    /// Waits until every partition of every topic in `names` has a leader: one metadata
    /// request per try for them all (one topic asks for itself alone).
    pub(crate) async fn wait_for_all_leaders(
        &self,
        names: &[String],
        partitions: i32,
        timeout: Duration,
    ) -> Result<(), AdminError> {
        if let [one] = names {
            return self.wait_for_leaders(one, partitions, timeout).await;
        }
        let deadline = Instant::now() + timeout;
        let mut waiting: Vec<&String> = names.iter().collect();
        loop {
            if let Ok(md) = self
                .client
                .inner()
                .fetch_metadata(None, Duration::from_secs(5))
            {
                let ready: std::collections::HashSet<&str> = md
                    .topics()
                    .iter()
                    .filter(|t| {
                        t.error().is_none()
                            && t.partitions().len() as i32 >= partitions
                            && t.partitions()
                                .iter()
                                .all(|p| p.leader() >= 0 && p.error().is_none())
                    })
                    .map(|t| t.name())
                    .collect();
                waiting.retain(|n| !ready.contains(n.as_str()));
                if waiting.is_empty() {
                    return Ok(());
                }
            }
            if Instant::now() >= deadline {
                return Err(AdminError::NoLeaders {
                    waiting: waiting.len(),
                    of: names.len(),
                    after: timeout,
                    first: waiting.iter().take(3).map(|n| n.to_string()).collect(),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until every partition has a leader (a created topic is not writable at once).
    pub(crate) async fn wait_for_leaders(
        &self,
        topic: &str,
        partitions: i32,
        timeout: Duration,
    ) -> Result<(), AdminError> {
        let deadline = Instant::now() + timeout;
        loop {
            let md = self
                .client
                .inner()
                .fetch_metadata(Some(topic), Duration::from_secs(5));
            if let Ok(md) = md {
                if let Some(t) = md.topics().iter().find(|t| t.name() == topic) {
                    let ready = t.error().is_none()
                        && t.partitions().len() as i32 >= partitions
                        && t.partitions()
                            .iter()
                            .all(|p| p.leader() >= 0 && p.error().is_none());
                    if ready {
                        return Ok(());
                    }
                }
            }
            if Instant::now() >= deadline {
                return Err(AdminError::NoLeader {
                    topic: topic.to_string(),
                    after: timeout,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// How many partitions `topic` has; None when it does not exist.
    pub(crate) async fn topic_partitions(&self, topic: &str) -> Result<Option<i32>, AdminError> {
        let md = self
            .client
            .inner()
            .fetch_metadata(Some(topic), Duration::from_secs(10))
            .map_err(AdminError::Request)?;
        Ok(md
            .topics()
            .iter()
            .find(|t| t.name() == topic && t.error().is_none())
            .map(|t| t.partitions().len() as i32))
    }

    #[cfg(test)]
    pub(crate) async fn delete_topic(&self, topic: &str) -> Result<(), AdminError> {
        let opts = options();
        let res = self
            .client
            .delete_topics(&[topic], &opts)
            .await
            .map_err(AdminError::Request)?;
        for r in res {
            if let Err((topic, code)) = r {
                if code != RDKafkaErrorCode::UnknownTopicOrPartition {
                    return Err(AdminError::DeleteRefused { topic, code });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "admin_tests.rs"]
mod tests;
