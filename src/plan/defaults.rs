//! kafkabench's own client defaults, per client and in each client's own names: what `plan`
//! sets where the scenario is silent, each for the reason said beside it. The same intent on
//! every client (bounded delivery, a reader from the earliest offset that commits as the
//! workload says and reads committed records), said the way each client takes it.

use crate::model::{ClientKind, CommitPolicy, Props, RunSpec};

use super::STATS_INTERVAL_MS;

/// Bounded delivery: a record the cluster does not take fails after 30 s on every client, not
/// librdkafka's 300 s, the Java client's 120 s or franz-go's never; the run itself ends only
/// at `cluster { lost_after }` (60 s).
const DELIVERY_TIMEOUT_MS: u64 = 30_000;

/// The producer's defaults.
pub(super) fn producer(p: &mut Props, client: ClientKind) {
    p.set_default("client.id", "kafkabench");
    match client {
        ClientKind::Librdkafka => {
            p.set_default("statistics.interval.ms", STATS_INTERVAL_MS.to_string());
            if p.get("delivery.timeout.ms").is_none() {
                p.set_default("message.timeout.ms", DELIVERY_TIMEOUT_MS.to_string());
            }
        }
        ClientKind::Java => {
            // The Java client refuses a delivery timeout below linger.ms + request.timeout.ms.
            let ms = |k: &str, d: u64| p.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(d);
            let floor = ms("linger.ms", 5) + ms("request.timeout.ms", 30_000);
            p.set_default(
                "delivery.timeout.ms",
                DELIVERY_TIMEOUT_MS.max(floor).to_string(),
            );
        }
        ClientKind::FranzGo => {
            p.set_default("delivery.timeout.ms", DELIVERY_TIMEOUT_MS.to_string());
        }
    }
}

/// The consumer's defaults (not for a share group's connection): its group, and how it
/// commits and starts.
pub(super) fn consumer(p: &mut Props, client: ClientKind, spec: &RunSpec, group: String) {
    p.set_default("group.id", group);
    p.set_default("client.id", "kafkabench-consumer");
    if client == ClientKind::Librdkafka {
        p.set_default("statistics.interval.ms", STATS_INTERVAL_MS.to_string());
        // The fetch queue's thresholds, chosen so that they never stall a prompt reader
        // (REFERENCE.md, "Consumer defaults"). librdkafka's default count (100 000 per
        // partition) stops its fetchers while a burst is being read: on a 1 M × 100 B
        // burst the last record was read 3.0 s after the last ack with it and 0.2–0.3 s
        // with a million (bench/README.md).
        p.set_default("queued.min.messages", "1000000");
        // librdkafka's default, written out: the queue's bytes bound the memory.
        p.set_default("queued.max.messages.kbytes", "65536");
        // When the queue does pass a threshold, fetching resumes 10 ms after, not
        // librdkafka's 1 s: one pause of the reader then costs a second of records
        // waiting on the broker, which the catch-up refills the queue with
        // (docs/results.md, "The reader's own fetch backoff").
        p.set_default("fetch.queue.backoff.ms", "10");
    } else {
        // The reader counts what was committed, as librdkafka's does by default: a worker
        // reading aborted transactions would count them delivered.
        p.set_default("isolation.level", "read_committed");
    }
    // A group commits as its `commit` policy says: auto commit of the offsets kafkabench
    // stores once it has processed a record.
    match (spec.workload.consumers, &spec.workload.commit) {
        (Some(_), CommitPolicy::Auto { interval }) => {
            p.set_default("enable.auto.commit", "true");
            p.set_default("auto.commit.interval.ms", interval.as_millis().to_string());
            if client == ClientKind::Librdkafka {
                p.set_default("enable.auto.offset.store", "false");
            }
        }
        _ => p.set_default("enable.auto.commit", "false"),
    }
    p.set_default("auto.offset.reset", "earliest");
}
