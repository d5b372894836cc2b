//! A producer's recording, handed over once its phases are done: its histograms, counters
//! and the failure that ended it, if one did. Every client's producer ends here: librdkafka's
//! send loop and a worker's driver (`run::worker`) fill the same `Recorder`.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::sender::{Sender, Sent};
use crate::measure::compaction::KeyTable;
use crate::measure::txn::TxnRecording;
use crate::measure::{
    new_histogram, Intervals, ProducerRecording, ProducerStats, Recording, SendSpan, TopicTally,
};
use crate::run::producer::ProducerOutcome;
use crate::run::recorder::Recorder;
use crate::run::spread::{self, Layout};

/// The producer's recording, handed over once its phases are done.
pub(super) fn finish(mut s: Sender, start_ns: u64, sent: Sent, flushed: bool) -> ProducerOutcome {
    let error = (!flushed).then(|| {
        format!(
            "{} records still undelivered after {}s",
            s.ev.producer.outq_len(),
            s.job.flush_timeout.as_secs()
        )
    });
    // A failed transaction call is the cause; undelivered records are its consequence.
    let error = s.txn_error.take().or(error);
    let parts = Parts {
        start_ns,
        sent: sent.count,
        first_ns: sent.first_ns,
        last_ns: sent.last_ns,
        enqueue_failed: s.enqueue_failed,
        enqueue_failed_by_kind: std::mem::take(&mut s.enqueue_failed_by_kind),
        queue_full: s.queue_full,
        send_delay: std::mem::replace(&mut s.send_delay, new_histogram()),
        bound_topic: match s.layout {
            Layout::Bound(t) => Some(t),
            Layout::RoundRobin(_) => None,
        },
        topics: s.job.topics.len(),
        stats: s.ev.rec.stats_sums(),
        txn: s.txn.take().map(|t| t.rec),
    };
    let (recording, keys) = recording(&mut s.ev.rec, parts);
    ProducerOutcome {
        recording,
        error,
        keys,
    }
}

/// What a producer's sending counted beside its recorder.
pub(in crate::run) struct Parts {
    pub start_ns: u64,
    /// Records the client took in the measured phase, and its first and last send (ns on
    /// the run's clock; 0 when none).
    pub sent: u64,
    pub first_ns: u64,
    pub last_ns: u64,
    /// Measured records the client refused when they were sent, by kind.
    pub enqueue_failed: u64,
    pub enqueue_failed_by_kind: BTreeMap<String, u64>,
    pub queue_full: u64,
    pub send_delay: Histogram<u64>,
    /// Every record went to this topic (None: the recorder tallied each record's).
    pub bound_topic: Option<usize>,
    pub topics: usize,
    pub stats: ProducerStats,
    pub txn: Option<TxnRecording>,
}

/// The recording of a producer whose recorder is `r`.
pub(in crate::run) fn recording(
    r: &mut Recorder,
    p: Parts,
) -> (ProducerRecording, Option<KeyTable>) {
    let mut failed_by_kind = std::mem::take(&mut r.failed_by_kind);
    for (k, v) in &p.enqueue_failed_by_kind {
        *failed_by_kind.entry(format!("enqueue: {k}")).or_default() += v;
    }
    let ack = r.ack.take();
    let intervals = Intervals::of_thread(&r.intervals.finish(), false);
    let by_topic = match p.bound_topic {
        Some(t) => spread::bound_tally(
            t,
            p.topics,
            TopicTally {
                sent: p.sent,
                acked: r.acked,
                failed: r.failed + p.enqueue_failed,
            },
        ),
        None => std::mem::take(&mut r.by_topic),
    };
    let raw = Recording {
        sent: p.sent,
        acked: r.acked,
        failed: r.failed + p.enqueue_failed,
        failed_by_kind,
        queue_full: p.queue_full,
        key_value_bytes: r.key_value_bytes,
        // Unlimited: sent when due, so service time is the ack latency itself.
        service: if r.paced {
            std::mem::replace(&mut r.service, new_histogram())
        } else {
            ack.clone()
        },
        ack,
        send_delay: p.send_delay,
        e2e: None,
        sizes: r.sizes.take(),
        span: SendSpan {
            start_ns: Some(p.start_ns),
            // The run's clock is read after its origin, so 0 means nothing was sent.
            first_send_ns: (p.first_ns > 0).then_some(p.first_ns),
            last_send_ns: p.last_ns,
            last_ack_ns: r.last_ack_ns,
        },
        stats: p.stats,
        client: None,
        intervals,
        placed: r.placed.as_mut().map(|p| p.finish()),
    };
    let recording = ProducerRecording {
        raw,
        failed_seqs: std::mem::take(&mut r.failed_seqs),
        txn: p.txn,
        by_topic,
        ack_timeline: std::mem::take(&mut r.ack_timeline),
        busy: None,
    };
    (recording, r.keys.take())
}
