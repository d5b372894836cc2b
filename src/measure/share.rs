//! A share group's own figures (KIP-932): acknowledgements by type, redeliveries and their
//! cause, delivery counts, and acquisition → acknowledgement latency. Delivery itself (lost,
//! duplicated, end-to-end latency) is measured as for any reader, in `consume`.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::{new_histogram, LatencySummary};

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
    /// Accepted records by the delivery count they were accepted at (index 0 unused).
    pub deliveries: Vec<u64>,
    /// Acquisition → the broker's answer to the acknowledgement, ns.
    pub ack: Histogram<u64>,
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
