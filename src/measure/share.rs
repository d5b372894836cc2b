//! A share group's own figures (KIP-932): acknowledgements by type, redeliveries and their
//! cause, delivery counts, and acquisition → acknowledgement latency. Delivery itself (lost,
//! duplicated, end-to-end latency) is measured as for any reader, in `consume`.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::{new_histogram, ConsumerRecording, LatencySummary};
use crate::model::Ack;

/// What one member recorded.
#[derive(Clone, Debug)]
pub struct ShareRecording {
    /// Acknowledgements the broker took, by type.
    pub accepted: u64,
    pub released: u64,
    pub rejected: u64,
    /// Releases at the delivery count limit: the broker archives those records.
    pub archived: u64,
    /// Deliveries with a delivery count above 1.
    pub redelivered: u64,
    /// Redeliveries no member asked for (its acquisition lock expired, or its member left).
    pub lock_timeouts: u64,
    /// Acknowledgements the broker refused (the record was no longer this member's).
    pub refused: u64,
    /// Acknowledgements whose answer was lost with their request (it timed out, its
    /// connection broke): the broker may have taken them or not.
    pub unanswered: u64,
    /// Of those, the ones the broker had taken: their record never came back to the group.
    /// Known once every member's reads are in ([`settle_unanswered`]).
    pub unanswered_taken: u64,
    /// The verified records behind unanswered acknowledgements, until settled.
    pub in_doubt: Vec<InDoubt>,
    /// Accepted records by the delivery count they were accepted at (index 0 unused).
    pub deliveries: Vec<u64>,
    /// Acquisition → the broker's answer to the acknowledgement, ns.
    pub ack: Histogram<u64>,
}

/// A record of the run whose acknowledgement went unanswered: what was decided for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InDoubt {
    pub producer: u32,
    pub seq: u64,
    pub backlog: bool,
    pub ack: Ack,
    pub delivery: u16,
    /// A release at the delivery count limit: taken, the broker archives the record.
    pub archived: bool,
}

impl Default for ShareRecording {
    fn default() -> Self {
        ShareRecording {
            accepted: 0,
            released: 0,
            rejected: 0,
            archived: 0,
            redelivered: 0,
            lock_timeouts: 0,
            refused: 0,
            unanswered: 0,
            unanswered_taken: 0,
            in_doubt: Vec::new(),
            deliveries: Vec::new(),
            ack: new_histogram(),
        }
    }
}

impl ShareRecording {
    pub fn absorb(&mut self, o: &ShareRecording) {
        self.accepted += o.accepted;
        self.released += o.released;
        self.rejected += o.rejected;
        self.archived += o.archived;
        self.redelivered += o.redelivered;
        self.lock_timeouts += o.lock_timeouts;
        self.refused += o.refused;
        self.unanswered += o.unanswered;
        self.unanswered_taken += o.unanswered_taken;
        self.in_doubt.extend_from_slice(&o.in_doubt);
        if self.deliveries.len() < o.deliveries.len() {
            self.deliveries.resize(o.deliveries.len(), 0);
        }
        for (a, b) in self.deliveries.iter_mut().zip(&o.deliveries) {
            *a += b;
        }
        let _ = self.ack.add(&o.ack);
    }

    /// An accepted record, delivered `delivery` times.
    pub fn accepted_at(&mut self, delivery: u16) {
        let d = usize::from(delivery.max(1));
        if self.deliveries.len() <= d {
            self.deliveries.resize(d + 1, 0);
        }
        self.deliveries[d] += 1;
    }
}

/// Settles the unanswered acknowledgements of a run's group, once every member's reads are
/// merged into `c`. A record that came back was read again and accounted then. One that never
/// came back, though the run waited out its drain (longer than the acquisition lock), was
/// taken: the broker applied the acknowledgement and only its answer was lost. Counting it
/// lost would report a loss the cluster never had (a broker paused past the request timeout
/// does exactly this).
pub(super) fn settle_unanswered(c: &mut ConsumerRecording) {
    let Some(share) = c.share.as_mut() else {
        return;
    };
    for d in std::mem::take(&mut share.in_doubt) {
        let settled = match d.ack {
            Ack::Accept | Ack::Reject => true,
            Ack::Release => d.archived,
        };
        let id = d.producer as usize;
        if !settled || id >= c.seen.len() || c.seen[id].contains(d.seq) {
            continue;
        }
        c.seen[id].insert(d.seq);
        share.unanswered_taken += 1;
        match d.ack {
            Ack::Accept => {
                share.accepted += 1;
                share.accepted_at(d.delivery);
            }
            Ack::Reject => share.rejected += 1,
            Ack::Release => {
                share.released += 1;
                share.archived += 1;
            }
        }
        if d.backlog {
            c.backlog_read += 1;
        } else {
            c.consumed += 1;
        }
    }
}

/// A share group's figures, in the result file (`runs[].share`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ShareFigures {
    pub members: u32,
    /// The acknowledgement mode as written: `implicit`, `explicit(release: 5%, ...)`.
    pub ack_mode: String,
    pub processing_ms: f64,
    /// The group's delivery count limit.
    pub delivery_limit: u16,
    pub accepted: u64,
    pub released: u64,
    pub rejected: u64,
    pub archived: u64,
    pub redelivered: u64,
    pub lock_timeouts: u64,
    pub refused: u64,
    /// Acknowledgements whose answer was lost with their request, and of those the ones the
    /// broker had taken (their record never came back).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unanswered: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unanswered_taken: u64,
    /// Accepted records by the delivery count they were accepted at: `[0, n1, n2, ...]`.
    pub delivery_counts: Vec<u64>,
    /// Acquisition → acknowledgement answered.
    pub ack: LatencySummary,
}

impl ShareFigures {
    pub fn of(
        r: &ShareRecording,
        members: u32,
        ack_mode: String,
        processing_ms: f64,
        delivery_limit: u16,
    ) -> ShareFigures {
        let mut counts = r.deliveries.clone();
        while counts.len() > 2 && counts.last() == Some(&0) {
            counts.pop();
        }
        ShareFigures {
            members,
            ack_mode,
            processing_ms,
            delivery_limit,
            accepted: r.accepted,
            released: r.released,
            rejected: r.rejected,
            archived: r.archived,
            redelivered: r.redelivered,
            lock_timeouts: r.lock_timeouts,
            refused: r.refused,
            unanswered: r.unanswered,
            unanswered_taken: r.unanswered_taken,
            delivery_counts: counts,
            ack: LatencySummary::from_histogram(&r.ack),
        }
    }

    /// The highest delivery count of any accepted record (0 when none was).
    pub fn delivery_max(&self) -> u64 {
        self.delivery_counts
            .iter()
            .rposition(|n| *n > 0)
            .unwrap_or(0) as u64
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
