//! One consumer's membership: its assignment, how long the partitions it takes over went
//! unread (a rebalance's stall), the commit policy it follows, and its librdkafka statistics
//! (fetch requests and bytes).
//!
//! A rebalance is timed per partition, not per member, so that it means the same under every
//! protocol: an eager (classic) rebalance stops every partition, an incremental one
//! (cooperative, or KIP-848's `group.protocol = consumer`) only those that move, while the
//! member keeps reading the rest. A partition stalls from when its member gives it up (a
//! revoke, or the member leaving) until its next member reads a record of it, or finds it at
//! its end (then nothing waited: the stall ends at the assignment).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::statistics::Statistics;
use rdkafka::{Offset, TopicPartitionList};

use crate::measure::consume::FetchTrips;
use crate::model::CommitPolicy;

/// Not read by anyone, and no member to take it over: the stall starts with the next member
/// to join (the group's first join, or a member rejoining an empty group). A member stopped
/// while alone is out of the group, not rebalancing.
const ORPHAN: u64 = u64::MAX;

/// What the members of one group share about its partitions: since when each has gone unread.
pub(crate) struct Handovers {
    /// Per run partition: 0 while a member reads it; the instant (ns on the run's clock) its
    /// member gave it up; or `ORPHAN`.
    released: Vec<AtomicU64>,
    /// Members in the group (subscribed).
    members: AtomicU32,
}

impl Handovers {
    pub(crate) fn new(partitions: usize) -> Handovers {
        Handovers {
            released: (0..partitions).map(|_| AtomicU64::new(ORPHAN)).collect(),
            members: AtomicU32::new(0),
        }
    }

    /// A member joins at `now`: partitions nobody could take over stall from here.
    fn join(&self, now: u64) {
        self.members.fetch_add(1, Ordering::AcqRel);
        for r in &self.released {
            let _ = r.compare_exchange(ORPHAN, now.max(1), Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// A member leaves (before it gives its partitions up).
    fn leave(&self) {
        let _ = self
            .members
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// A member gave `part` up at `now`; with nobody left in the group, it waits for a join.
    fn release(&self, part: usize, now: u64) {
        if let Some(r) = self.released.get(part) {
            let alone = self.members.load(Ordering::Acquire) == 0;
            r.store(if alone { ORPHAN } else { now.max(1) }, Ordering::Release);
        }
    }

    /// A member reads `part` again: since when it had gone unread (None: it had not, or
    /// another member already ended its stall).
    fn resume(&self, part: usize) -> Option<u64> {
        let r = self.released.get(part)?;
        match r.swap(0, Ordering::AcqRel) {
            0 | ORPHAN => None,
            t => Some(t),
        }
    }
}

pub(in crate::run) struct Membership {
    /// The consumer's partitions, as the run numbers them, with their names.
    pub assigned: Vec<(String, i32)>,
    /// An assignment arrived (possibly empty: more members than partitions).
    pub has_assignment: bool,
    /// Per run partition: when it was assigned to this member, while its stall is open (0:
    /// not this member's, or read since).
    waiting: Vec<u64>,
    /// Each stall this member ended: (from, to), ns on the run's clock.
    pub stalls: Vec<(u64, u64)>,
    /// The assignment epoch of each assignment that gave this member partitions, in order:
    /// the group generation under the classic protocol, the member epoch (the target
    /// assignment's epoch it reconciled to) under the consumer protocol. The run's
    /// rebalances are the distinct epochs over its members.
    pub generations: Vec<i32>,
    /// The classic protocol: every assignment that gives partitions is a generation of its
    /// own (`epochs`).
    classic: bool,
    commit: CommitPolicy,
    /// Per run partition, the next offset to store for auto commit (-1: nothing new).
    to_store: Vec<i64>,
    since_commit: u64,
    /// Fetch requests and bytes fetched: the baseline at the clock's start and the latest.
    pub fetch_base: Option<(u64, u64)>,
    pub fetch_last: Option<(u64, u64)>,
}

impl Membership {
    pub(in crate::run) fn new(
        commit: CommitPolicy,
        partitions: usize,
        classic: bool,
    ) -> Membership {
        Membership {
            assigned: Vec::new(),
            has_assignment: false,
            waiting: vec![0; partitions],
            stalls: Vec::new(),
            generations: Vec::new(),
            classic,
            commit,
            to_store: vec![-1; partitions],
            since_commit: 0,
            fetch_base: None,
            fetch_last: None,
        }
    }

    /// The consumer subscribes (joins or rejoins the group) at `now`.
    pub(in crate::run) fn joining(&mut self, h: &Handovers, now: u64) {
        h.join(now);
    }

    /// The consumer leaves the group (unsubscribes); its revoke follows.
    pub(in crate::run) fn leaving(&mut self, h: &Handovers) {
        h.leave();
    }

    /// Run partitions given up at `now` (a revoke): they stall until another member reads them.
    pub(in crate::run) fn revoked(&mut self, h: &Handovers, parts: &[usize], now: u64) {
        for &p in parts {
            if let Some(w) = self.waiting.get_mut(p) {
                *w = 0;
            }
            h.release(p, now);
        }
    }

    /// Run partitions assigned at `now`, in assignment epoch `generation` (None: unknown).
    /// With reading paused until the clock starts there is nothing to wait for: their stalls
    /// end here.
    pub(in crate::run) fn assigned_at(
        &mut self,
        h: &Handovers,
        parts: &[usize],
        now: u64,
        paused: bool,
        generation: Option<i32>,
    ) {
        // An empty assignment gives nothing (the consumer protocol acknowledges a revoke with
        // one); several in one epoch under the consumer protocol are one rebalance. Under the
        // classic one each is a generation of its own, even when read as the last one's.
        if let Some(g) = generation
            .filter(|g| !parts.is_empty() && (self.classic || self.generations.last() != Some(g)))
        {
            self.generations.push(g);
        }
        for &p in parts {
            if let Some(w) = self.waiting.get_mut(p) {
                *w = now.max(1);
            }
            if paused {
                self.ended(h, p, now);
            }
        }
    }

    /// A record of run partition `part` read at `now`: the end of its stall, if it was waiting.
    #[inline]
    pub(in crate::run) fn record_read(&mut self, h: &Handovers, part: usize, now: u64) {
        if self.waiting.get(part).is_some_and(|w| *w > 0) {
            self.ended(h, part, now);
        }
    }

    /// Run partition `part` found at its end before any record after its assignment: nothing
    /// waited to be read, so its stall ends at the assignment.
    pub(in crate::run) fn nothing_there(&mut self, h: &Handovers, part: usize) {
        if let Some(&at) = self.waiting.get(part).filter(|w| **w > 0) {
            self.ended(h, part, at);
        }
    }

    fn ended(&mut self, h: &Handovers, part: usize, at: u64) {
        self.waiting[part] = 0;
        if let Some(from) = h.resume(part) {
            self.stalls.push((from, at.max(from)));
        }
    }

    /// A record of run partition `part` processed: its offset is stored for auto commit, or
    /// the consumer commits every N records.
    #[inline]
    pub(in crate::run) fn processed<C: rdkafka::consumer::ConsumerContext>(
        &mut self,
        c: &BaseConsumer<C>,
        layout: &Layout,
        part: usize,
        offset: i64,
    ) {
        match self.commit {
            CommitPolicy::Auto { .. } => {
                self.to_store[part] = offset + 1;
                self.since_commit += 1;
                // Stored in batches: one call per thousand records, not one per record.
                if self.since_commit >= 1000 {
                    self.store(c, layout);
                }
            }
            CommitPolicy::Every { records, sync } => {
                self.since_commit += 1;
                if self.since_commit >= records {
                    self.since_commit = 0;
                    let _ = c.commit_consumer_state(mode(sync));
                }
            }
            CommitPolicy::Off => {}
        }
    }

    /// Hands the stored offsets to librdkafka (auto commit sends them on its interval, and
    /// when partitions are revoked), or commits now under `every(N)`: before giving up
    /// partitions, what was processed is committed, as an application does.
    pub(in crate::run) fn store<C: rdkafka::consumer::ConsumerContext>(
        &mut self,
        c: &BaseConsumer<C>,
        layout: &Layout,
    ) {
        self.since_commit = 0;
        match self.commit {
            CommitPolicy::Auto { .. } => {
                let mut tpl = TopicPartitionList::new();
                for (name, p) in &self.assigned {
                    let Some((_, part)) = layout.index(name.as_bytes(), *p) else {
                        continue;
                    };
                    if let Some(next) = self.to_store.get_mut(part) {
                        if *next >= 0 {
                            let _ = tpl.add_partition_offset(name, *p, Offset::Offset(*next));
                            *next = -1;
                        }
                    }
                }
                if tpl.count() > 0 {
                    let _ = c.store_offsets(&tpl);
                }
            }
            CommitPolicy::Every { sync, .. } => {
                let _ = c.commit_consumer_state(mode(sync));
            }
            CommitPolicy::Off => {}
        }
    }

    /// Fetch requests and bytes from one statistics document: the first after the clock's
    /// start is the baseline.
    pub(in crate::run) fn stats(&mut self, s: &Statistics, measuring: bool) {
        let requests: i64 = s.brokers.values().filter_map(|b| b.req.get("Fetch")).sum();
        let bytes: u64 = s
            .topics
            .values()
            .flat_map(|t| t.partitions.values())
            .filter(|p| p.partition >= 0)
            .map(|p| p.rxbytes)
            .sum();
        let now = (requests.max(0) as u64, bytes);
        if !measuring || self.fetch_base.is_none() {
            self.fetch_base = Some(now);
        }
        self.fetch_last = Some(now);
    }

    /// The assignment epochs this member was given partitions in, in order. The epoch is
    /// read when the consumer takes the assignment from its queue, which a busy thread does
    /// late: by then librdkafka may have joined the next generation, and the number read is
    /// that one's. It is never lower than the assignment's own. Under the classic protocol
    /// each assignment is one generation, so a number seen again names an earlier generation:
    /// the sequence is made strictly increasing, from its last (the member's latest) back.
    pub(in crate::run) fn epochs(&mut self) -> Vec<i32> {
        let mut g = std::mem::take(&mut self.generations);
        if self.classic {
            for i in (0..g.len().saturating_sub(1)).rev() {
                g[i] = g[i].min(g[i + 1] - 1);
            }
        }
        g
    }

    /// Fetch requests and bytes over the measured phase.
    pub(in crate::run) fn fetched(&self) -> Option<(u64, u64)> {
        let (b, l) = (self.fetch_base?, self.fetch_last?);
        Some((l.0.saturating_sub(b.0), l.1.saturating_sub(b.1)))
    }
}

/// One statistics window's round trips to the partition leaders (`FetchTrips`): the brokers
/// librdkafka learned from metadata. The bootstrap servers' handles ask for metadata only, and
/// the group coordinator's requests go to a logical broker of their own.
pub(in crate::run) fn fetch_trips(into: &mut FetchTrips, s: &Statistics) {
    for b in s.brokers.values().filter(|b| b.source == "learned") {
        if let Some(w) = &b.rtt {
            into.window(w.sum, w.cnt, w.max);
        }
    }
}

fn mode(sync: bool) -> CommitMode {
    if sync {
        CommitMode::Sync
    } else {
        CommitMode::Async
    }
}

/// The run's topics and partitions per topic: how the run numbers its partitions.
pub(crate) struct Layout {
    pub topics: Vec<String>,
    pub partitions: i32,
}

impl Layout {
    /// Partitions of the run, all topics together.
    pub(crate) fn len(&self) -> usize {
        self.topics.len() * self.partitions.max(0) as usize
    }

    /// The run's number for a partition, topic index × partitions + partition, with the
    /// topic's index; None for a topic or partition that is not the run's.
    pub(crate) fn index(&self, topic: &[u8], partition: i32) -> Option<(usize, usize)> {
        let t = self.topics.iter().position(|n| n.as_bytes() == topic)?;
        (0..self.partitions)
            .contains(&partition)
            .then(|| (t, t * self.partitions as usize + partition as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_partition_stalls_from_its_release_to_its_next_members_first_record() {
        let h = Handovers::new(2);
        let (mut a, mut b) = (
            Membership::new(CommitPolicy::Off, 2, false),
            Membership::new(CommitPolicy::Off, 2, false),
        );
        a.joining(&h, S);
        b.joining(&h, S + S / 2);
        a.assigned_at(&h, &[0], 2 * S, false, Some(1));
        b.assigned_at(&h, &[1], 2 * S, false, Some(1));
        a.record_read(&h, 0, 3 * S);
        b.nothing_there(&h, 1);
        // The join: from the first subscribe; an empty partition ends at its assignment.
        assert_eq!(a.stalls, [(S, 3 * S)]);
        assert_eq!(b.stalls, [(S, 2 * S)]);
        // b leaves at 5 s; a takes partition 1 over at 7 s and reads it at 8 s. Partition 0,
        // kept by a (an incremental rebalance), never stalled.
        b.leaving(&h);
        b.revoked(&h, &[1], 5 * S);
        a.assigned_at(&h, &[1], 7 * S, false, Some(2));
        a.record_read(&h, 0, 7 * S);
        a.record_read(&h, 1, 8 * S);
        a.record_read(&h, 1, 9 * S);
        assert_eq!(a.stalls, [(S, 3 * S), (5 * S, 8 * S)]);
        assert_eq!(a.generations, [1, 2]);
    }

    #[test]
    fn a_member_alone_out_of_the_group_is_not_a_stall_its_rejoin_is() {
        let h = Handovers::new(1);
        let mut m = Membership::new(CommitPolicy::Off, 1, false);
        m.joining(&h, S / 10);
        m.assigned_at(&h, &[0], S, false, Some(1));
        m.record_read(&h, 0, S + S / 5);
        // Stopped at 2 s (its revoke), back at 5 s, assigned at 6 s, reading at 6.1 s.
        m.leaving(&h);
        m.revoked(&h, &[0], 2 * S);
        m.joining(&h, 5 * S);
        m.assigned_at(&h, &[0], 6 * S, false, Some(3));
        m.record_read(&h, 0, 6 * S + S / 10);
        let times: Vec<u64> = m.stalls.iter().map(|(a, b)| b - a).collect();
        assert_eq!(times, [S + S / 10, S + S / 10]);
        assert_eq!(m.generations, [1, 3]);
    }

    #[test]
    fn an_empty_assignment_is_no_rebalance_and_a_paused_partition_ends_at_its_assignment() {
        let h = Handovers::new(1);
        let mut m = Membership::new(CommitPolicy::Off, 1, false);
        m.joining(&h, S / 2);
        m.assigned_at(&h, &[], S, false, Some(4));
        m.assigned_at(&h, &[0], 2 * S, true, Some(5));
        m.record_read(&h, 0, 3 * S);
        assert_eq!(m.generations, [5]);
        assert_eq!(m.stalls, [(S / 2, 2 * S)]);
    }

    #[test]
    fn a_classic_generation_read_late_as_the_next_ones_is_still_counted() {
        // Generations 1 to 4 of one member; its thread took the first two assignments late,
        // both reading 2 (librdkafka had joined generation 2 by then), and the third reading 4.
        let h = Handovers::new(1);
        let mut classic = Membership::new(CommitPolicy::Off, 1, true);
        for g in [2, 2, 4, 4] {
            classic.assigned_at(&h, &[0], S, false, Some(g));
        }
        assert_eq!(classic.epochs(), [1, 2, 3, 4]);
        // Under the consumer protocol one epoch may come in several assignments (partitions
        // handed over as others release them): one rebalance.
        let mut consumer = Membership::new(CommitPolicy::Off, 1, false);
        for g in [2, 2, 4, 4] {
            consumer.assigned_at(&h, &[0], S, false, Some(g));
        }
        assert_eq!(consumer.epochs(), [2, 4]);
    }
}
