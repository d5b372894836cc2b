//! Records too large for the limits that would refuse them: a size drawn from a distribution
//! can reach far past its mean, and a record above the producer's `message.max.bytes` fails
//! on the client (MSG_SIZE_TOO_LARGE), one above the topic's `max.message.bytes` on the
//! broker (RECORD_TOO_LARGE). Said before a run measures: by `plan` and `run` from what the
//! scenario sets, by the run once the topic's effective configs are known.

use crate::format::human_bytes;
use crate::model::{KeySpec, PayloadSpec};

use super::RunPlan;

/// librdkafka's default `message.max.bytes`.
pub(crate) const LIBRDKAFKA_MESSAGE_MAX_BYTES: u64 = 1_000_000;

/// Kafka's default `max.message.bytes` of a topic (the brokers' `message.max.bytes`).
pub(crate) const KAFKA_MAX_MESSAGE_BYTES: u64 = 1_048_588;

/// What a record batch of one record adds to its key, value and headers: the v2 batch header
/// (61 B) and the record's own length fields, at most a few dozen bytes more.
const ONE_RECORD_BATCH: u64 = 61 + 40;

/// The largest record a run can send, when its value's size is drawn from a distribution
/// (None otherwise: a fixed size too large fails at once and says so itself).
pub(crate) fn largest_drawn_record(rp: &RunPlan) -> Option<u64> {
    let w = &rp.workload;
    let value = w.payload.size()?.dist()?.largest as u64;
    let key = match &w.key {
        KeySpec::None => 0,
        KeySpec::Fixed(k) => k.len(),
        // `key-` and up to 20 digits.
        KeySpec::Sequence | KeySpec::Uniform(_) | KeySpec::Zipf { .. } => 24,
        KeySpec::Schema(s) => s.nominal_size(),
    } as u64;
    // kafkabench's end-to-end stamp: the header `kb` and 21 bytes.
    let stamp = if rp.consumer.is_some() || rp.share.is_some() {
        23
    } else {
        0
    };
    let headers: u64 = (w.headers.iter())
        .map(|(k, v)| (k.len() + v.len()) as u64)
        .sum();
    Some(value + key + stamp + headers + ONE_RECORD_BATCH)
}

/// What `plan` and `run` say before a run measures, from what the scenario sets: the
/// producer's `message.max.bytes` (librdkafka's default when unset), and the topic's
/// `max.message.bytes` when the topic block sets it (the brokers' own default is known only
/// once the run describes the topic: [`at_the_run`]).
pub(crate) fn before_the_run(rp: &RunPlan) -> Vec<String> {
    let topic = (rp.topic.configs.get("max.message.bytes")).and_then(|v| v.parse::<u64>().ok());
    let topic = topic.and_then(|t| topic_refuses(rp, t, "the topic's max.message.bytes"));
    producer_refuses(rp).into_iter().chain(topic).collect()
}

/// The same once the topic is described, for the run's notes: its effective
/// `max.message.bytes` (`limit`; Kafka's default when the description lists none).
pub(crate) fn at_the_run(rp: &RunPlan, limit: Option<u64>) -> Vec<String> {
    let limit = limit.unwrap_or(KAFKA_MAX_MESSAGE_BYTES);
    let topic = topic_refuses(rp, limit, "the topic's effective max.message.bytes");
    producer_refuses(rp).into_iter().chain(topic).collect()
}

fn producer_refuses(rp: &RunPlan) -> Option<String> {
    let largest = largest_drawn_record(rp)?;
    let limit = (rp.producer.get("message.max.bytes"))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(LIBRDKAFKA_MESSAGE_MAX_BYTES);
    (largest > limit).then(|| {
        too_large(
            rp,
            largest,
            &format!("the producer's message.max.bytes ({limit})"),
            "the producer refuses them (MSG_SIZE_TOO_LARGE)",
        )
    })
}

fn topic_refuses(rp: &RunPlan, limit: u64, what: &str) -> Option<String> {
    let largest = largest_drawn_record(rp)?;
    (largest > limit).then(|| {
        too_large(
            rp,
            largest,
            &format!("{what} ({limit})"),
            "the broker refuses them (RECORD_TOO_LARGE) unless compression brings their batch \
             under it",
        )
    })
}

fn too_large(rp: &RunPlan, largest: u64, limit: &str, then: &str) -> String {
    let shape = match &rp.workload.payload {
        PayloadSpec::Random { size, .. }
        | PayloadSpec::Json { size, .. }
        | PayloadSpec::Constant { size, .. } => size.dist().map(|d| d.shape.describe()),
        _ => None,
    }
    .unwrap_or_default();
    format!(
        "run {} ({}): `size: {shape}` can draw records of up to {} with their key, headers \
         and batch, above {limit}: {then}",
        super::RunNo(rp.index),
        rp.label,
        human_bytes(largest as f64),
    )
}
