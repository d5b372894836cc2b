//! Cluster administration through rdkafka: reachability, topic lifecycle, broker addresses.

use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;

use crate::model::{Props, TopicSpec};

/// How long the first contact with a cluster may take before it is called unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Admin {
    client: AdminClient<DefaultClientContext>,
    bootstrap: String,
}

pub fn config(props: &Props) -> ClientConfig {
    let mut c = ClientConfig::new();
    for p in props.iter() {
        c.set(&p.key, &p.value);
    }
    // librdkafka logs connection refusals at error level on stderr; we report them ourselves.
    c.set_log_level(RDKafkaLogLevel::Emerg);
    c
}

impl Admin {
    pub fn connect(props: &Props, bootstrap: &str) -> Result<Admin, String> {
        let client: AdminClient<DefaultClientContext> = config(props)
            .create()
            .map_err(|e| format!("cannot create a Kafka client for {bootstrap}: {e}"))?;
        let a = Admin {
            client,
            bootstrap: bootstrap.to_string(),
        };
        a.brokers()?;
        Ok(a)
    }

    /// `host:port` of every broker, proving the cluster answers.
    pub fn brokers(&self) -> Result<Vec<String>, String> {
        let md = self.client.inner().fetch_metadata(None, CONNECT_TIMEOUT).map_err(|e| {
            format!(
                "cannot reach Kafka at {} within {}s ({e}); start a local broker with `scripts/kafka-local up`, \
                 or point kafkabench elsewhere with --bootstrap or KAFKA_BOOTSTRAP",
                self.bootstrap,
                CONNECT_TIMEOUT.as_secs()
            )
        })?;
        let v: Vec<String> = md
            .brokers()
            .iter()
            .map(|b| format!("{}:{}", b.host(), b.port()))
            .collect();
        if v.is_empty() {
            return Err(format!("Kafka at {} reports no brokers", self.bootstrap));
        }
        Ok(v)
    }

    pub async fn create_topic(&self, t: &TopicSpec) -> Result<(), String> {
        let mut nt = NewTopic::new(
            &t.name,
            t.partitions,
            TopicReplication::Fixed(t.replication),
        );
        for c in t.configs.iter() {
            nt = nt.set(&c.key, &c.value);
        }
        let opts = AdminOptions::new()
            .operation_timeout(Some(Duration::from_secs(30)))
            .request_timeout(Some(Duration::from_secs(30)));
        let res = self
            .client
            .create_topics([&nt], &opts)
            .await
            .map_err(|e| format!("creating topic {}: {e}", t.name))?;
        for r in res {
            match r {
                Ok(_) => {}
                Err((name, RDKafkaErrorCode::TopicAlreadyExists)) => {
                    return Err(format!(
                        "topic {name} already exists; kafkabench writes only into topics it created in this run \
                         (say `existing = true` in the topic block to use an existing topic)"
                    ))
                }
                Err((name, code)) => return Err(format!("the cluster refused to create topic {name}: {code}")),
            }
        }
        Ok(())
    }

    /// Waits until every partition has a leader (a created topic is not writable at once).
    pub async fn wait_for_leaders(
        &self,
        topic: &str,
        partitions: i32,
        timeout: Duration,
    ) -> Result<(), String> {
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
                return Err(format!(
                    "topic {topic} has partitions without a leader after {}s",
                    timeout.as_secs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// How many partitions `topic` has; None when it does not exist.
    pub async fn topic_partitions(&self, topic: &str) -> Result<Option<i32>, String> {
        let md = self
            .client
            .inner()
            .fetch_metadata(Some(topic), Duration::from_secs(10))
            .map_err(|e| e.to_string())?;
        Ok(md
            .topics()
            .iter()
            .find(|t| t.name() == topic && t.error().is_none())
            .map(|t| t.partitions().len() as i32))
    }

    pub async fn delete_topic(&self, topic: &str) -> Result<(), String> {
        let opts = AdminOptions::new()
            .operation_timeout(Some(Duration::from_secs(30)))
            .request_timeout(Some(Duration::from_secs(30)));
        let res = self
            .client
            .delete_topics(&[topic], &opts)
            .await
            .map_err(|e: KafkaError| e.to_string())?;
        for r in res {
            if let Err((name, code)) = r {
                if code != RDKafkaErrorCode::UnknownTopicOrPartition {
                    return Err(format!("deleting topic {name}: {code}"));
                }
            }
        }
        Ok(())
    }
}
