//! A producer's start before the clock: the partition leaders learned and connected, one
//! native handle per topic.

use std::time::{Duration, Instant};

use rdkafka::producer::{BaseProducer, NoCustomPartitioner, Producer};

use super::{native, ProducerJob, Quiet};
use crate::run::shared::Shared;

/// Learns the partition leaders and connects before the clock starts.
pub(super) fn learn_leaders(
    producer: &BaseProducer<Quiet, NoCustomPartitioner>,
    job: &ProducerJob,
    shared: &Shared,
) {
    // Learn the partition leaders and connect before the clock starts: otherwise the first
    // records of a run wait for librdkafka's lazy metadata request, a start-up stall that would
    // be charged to the workload. A failure here is left to the run itself to report.
    // In short tries, so an interrupt is not held up by a cluster that does not answer.
    // Several topics: one request for all of them (librdkafka keeps what it learns).
    let metadata_by = Instant::now() + Duration::from_secs(10);
    let ask_for = (job.topics.len() < 2).then_some(job.topic.as_str());
    while !shared.stopping() && Instant::now() < metadata_by {
        let tried = producer
            .client()
            .fetch_metadata(ask_for, Duration::from_millis(500));
        if tried.is_ok() {
            break;
        }
    }
}

/// The native producer with a handle for each of the run's topics, created once.
pub(super) fn topic_handles<'p>(
    producer: &'p BaseProducer<Quiet, NoCustomPartitioner>,
    job: &ProducerJob,
) -> Result<native::Producer<'p>, String> {
    let mut native = native::Producer::new(producer, &job.topic)?;
    for t in job.topics.iter().skip(1) {
        native.add_topic(t)?;
    }
    Ok(native)
}
