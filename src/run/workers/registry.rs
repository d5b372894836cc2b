//! A run's schemas registered with the scenario's schema registry before its producers start
//! (TopicNameStrategy: `<topic>-value`, `<topic>-key`), and its payload framed with the ids.

use std::sync::Arc;

use crate::model::{KeySpec, PayloadSpec, SchemaPayload, Workload};
use crate::plan::RunPlan;
use crate::run::error::{RegistryFailure, RunError};
use crate::schema::registry;

/// The workload with its schema payload and key framed (the wire prefix with the registered
/// id, encoded lines prefixed once here), or None when nothing is registered.
pub(super) async fn frame(rp: &RunPlan) -> Result<Option<Workload>, RunError> {
    let w = &rp.workload;
    let value = match &w.payload {
        PayloadSpec::Schema(s) if s.registry.is_some() => Some(s),
        _ => None,
    };
    let key = match &w.key {
        KeySpec::Schema(s) if s.registry.is_some() => Some(s),
        _ => None,
    };
    if value.is_none() && key.is_none() {
        return Ok(None);
    }
    let mut framed = w.clone();
    if let (Some(s), PayloadSpec::Schema(out)) = (value, &mut framed.payload) {
        *out = framed_payload(s, register(s, &rp.topics, "value").await?);
    }
    if let (Some(s), KeySpec::Schema(out)) = (key, &mut framed.key) {
        *out = framed_payload(s, register(s, &rp.topics, "key").await?);
    }
    Ok(Some(framed))
}

/// Registers the schema under each topic's subject; the one id they all got. Blocking HTTP,
/// bounded by the client's timeouts, off the async workers.
async fn register(
    s: &SchemaPayload,
    topics: &[String],
    part: &'static str,
) -> Result<u32, RunError> {
    let url = s.registry.clone().unwrap_or_default();
    let schema = s.schema.clone();
    let topics = topics.to_vec();
    let path = s.path.clone();
    tokio::task::spawn_blocking(move || {
        let mut id = None;
        for t in &topics {
            let subject = format!("{t}-{part}");
            let got = registry::register(&url, &subject, &schema).map_err(|error| {
                RunError::SchemaRegistry(RegistryFailure::Register {
                    part,
                    path: path.clone(),
                    subject: subject.clone(),
                    error,
                })
            })?;
            match id {
                Some(first) if first != got => {
                    return Err(RunError::SchemaRegistry(RegistryFailure::DifferentIds {
                        part,
                        first_topic: topics[0].clone(),
                        first,
                        subject,
                        got,
                    }))
                }
                _ => id = Some(got),
            }
        }
        id.ok_or(RunError::SchemaRegistry(RegistryFailure::NoTopic))
    })
    .await?
}

fn framed_payload(s: &SchemaPayload, id: u32) -> SchemaPayload {
    let prefix = s.schema.wire_prefix(id);
    let encoded = s.encoded.as_ref().map(|lines| {
        Arc::new(
            lines
                .iter()
                .map(|l| [prefix.as_slice(), l].concat())
                .collect::<Vec<_>>(),
        )
    });
    SchemaPayload {
        prefix,
        encoded,
        ..s.clone()
    }
}
