//! A producer's recording, handed over once its phases are done: its histograms, counters
//! and the failure that ended it, if one did.

use super::{Sender, Sent};
use crate::measure::{
    new_histogram, Intervals, ProducerRecording, Recording, SendSpan, TopicTally,
};
use crate::run::producer::ProducerOutcome;
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
    let stats = s.ev.rec.stats_sums();
    let r = &mut s.ev.rec;
    let mut failed_by_kind = std::mem::take(&mut r.failed_by_kind);
    for (k, v) in &s.enqueue_failed_by_kind {
        *failed_by_kind.entry(format!("enqueue: {k}")).or_default() += v;
    }
    let ack = r.ack.take();
    let intervals = Intervals::of_thread(&r.intervals.finish(), false);
    let by_topic = match s.layout {
        Layout::Bound(t) => spread::bound_tally(
            t,
            s.job.topics.len(),
            TopicTally {
                sent: sent.count,
                acked: r.acked,
                failed: r.failed + s.enqueue_failed,
            },
        ),
        Layout::RoundRobin(_) => std::mem::take(&mut r.by_topic),
    };
    let raw = Recording {
        sent: sent.count,
        acked: r.acked,
        failed: r.failed + s.enqueue_failed,
        failed_by_kind,
        queue_full: s.queue_full,
        key_value_bytes: r.key_value_bytes,
        // Unlimited: sent when due, so service time is the ack latency itself.
        service: if r.paced {
            std::mem::replace(&mut r.service, new_histogram())
        } else {
            ack.clone()
        },
        ack,
        send_delay: std::mem::replace(&mut s.send_delay, new_histogram()),
        e2e: None,
        sizes: r.sizes.take(),
        span: SendSpan {
            start_ns: Some(start_ns),
            // The run's clock is read after its origin, so 0 means nothing was sent.
            first_send_ns: (sent.first_ns > 0).then_some(sent.first_ns),
            last_send_ns: sent.last_ns,
            last_ack_ns: r.last_ack_ns,
        },
        stats,
        intervals,
    };
    let recording = ProducerRecording {
        raw,
        failed_seqs: std::mem::take(&mut r.failed_seqs),
        txn: s.txn.take().map(|t| t.rec),
        by_topic,
        ack_timeline: std::mem::take(&mut r.ack_timeline),
        busy: None,
    };
    let keys = r.keys.take();
    ProducerOutcome {
        recording,
        error,
        keys,
    }
}
