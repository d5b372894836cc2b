//! One consumer's membership: its assignment, how long each rebalance took, the commit policy
//! it follows, and its librdkafka statistics (fetch requests and bytes).

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::statistics::Statistics;
use rdkafka::{Offset, TopicPartitionList};

use crate::model::CommitPolicy;

/// A rebalance in progress: when the consumer started (re)joining, and when its partitions
/// were assigned.
#[derive(Clone, Copy)]
struct Pending {
    join_ns: u64,
    assigned_ns: Option<u64>,
}

pub(super) struct Membership {
    /// The consumer's partitions, as the run numbers them, with their names.
    pub assigned: Vec<(String, i32)>,
    /// An assignment arrived (possibly empty: more members than partitions).
    pub has_assignment: bool,
    pending: Option<Pending>,
    /// Each finished rebalance's time, ns.
    pub times: Vec<u64>,
    /// The group generation of each assignment, in order: the run's rebalances are the
    /// distinct generations its members were assigned in.
    pub generations: Vec<i32>,
    commit: CommitPolicy,
    /// Per run partition, the next offset to store for auto commit (-1: nothing new).
    to_store: Vec<i64>,
    since_commit: u64,
    /// Fetch requests and bytes fetched: the baseline at the clock's start and the latest.
    pub fetch_base: Option<(u64, u64)>,
    pub fetch_last: Option<(u64, u64)>,
}

impl Membership {
    pub(super) fn new(commit: CommitPolicy, partitions: usize) -> Membership {
        Membership {
            assigned: Vec::new(),
            has_assignment: false,
            pending: None,
            times: Vec::new(),
            generations: Vec::new(),
            commit,
            to_store: vec![-1; partitions],
            since_commit: 0,
            fetch_base: None,
            fetch_last: None,
        }
    }

    /// The consumer started joining (subscribe), or gives up its partitions (revoke): a new
    /// rebalance starts now. One still waiting for its first record ends at its assignment
    /// (nothing came to read before the next), so each assignment is one rebalance. One not
    /// yet assigned starts again: a member that left the group (its revoke) and joins again
    /// later was out of the group in between, not rebalancing.
    pub(super) fn joining(&mut self, now: u64) {
        if let Some(at) = self.pending.and_then(|p| p.assigned_ns) {
            self.end(at);
        }
        self.pending = Some(Pending {
            join_ns: now,
            assigned_ns: None,
        });
    }

    /// Partitions assigned at `now`, in group generation `generation` (None: unknown).
    /// With nothing to read (no partitions, or reading paused until the clock starts) the
    /// rebalance ends here.
    pub(super) fn assigned_at(&mut self, now: u64, nothing_to_read: bool, generation: Option<i32>) {
        // Several assignments in one generation (the cooperative protocol's) are one rebalance.
        if let Some(g) = generation.filter(|g| self.generations.last() != Some(g)) {
            self.generations.push(g);
        }
        let p = self.pending.get_or_insert(Pending {
            join_ns: now,
            assigned_ns: None,
        });
        p.assigned_ns = Some(now);
        if nothing_to_read {
            self.end(now);
        }
    }

    /// A record read at `now`: the end of a rebalance awaiting one.
    #[inline]
    pub(super) fn record_read(&mut self, now: u64) {
        if self.pending.is_some_and(|p| p.assigned_ns.is_some()) {
            self.end(now);
        }
    }

    /// A partition read to its end before any record after the assignment: the rebalance
    /// ends at the assignment (there was nothing to read).
    pub(super) fn nothing_there(&mut self) {
        if let Some(at) = self.pending.and_then(|p| p.assigned_ns) {
            self.end(at);
        }
    }

    fn end(&mut self, at: u64) {
        if let Some(p) = self.pending.take() {
            self.times.push(at.saturating_sub(p.join_ns));
        }
    }

    /// A record of run partition `part` processed: its offset is stored for auto commit, or
    /// the consumer commits every N records.
    #[inline]
    pub(super) fn processed<C: rdkafka::consumer::ConsumerContext>(
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
    pub(super) fn store<C: rdkafka::consumer::ConsumerContext>(
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
    pub(super) fn stats(&mut self, json: &str, measuring: bool) {
        let Ok(s) = serde_json::from_str::<Statistics>(json) else {
            return;
        };
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

    /// Fetch requests and bytes over the measured phase.
    pub(super) fn fetched(&self) -> Option<(u64, u64)> {
        let (b, l) = (self.fetch_base?, self.fetch_last?);
        Some((l.0.saturating_sub(b.0), l.1.saturating_sub(b.1)))
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
    fn a_member_out_of_the_group_is_timed_from_its_rejoin_not_from_its_leave() {
        let mut m = Membership::new(CommitPolicy::Off, 1);
        m.joining(0);
        m.assigned_at(S, false, Some(1));
        m.record_read(S + S / 10);
        // Stopped at 2 s (its revoke), back at 5 s, assigned at 6 s, reading at 6.1 s.
        m.joining(2 * S);
        m.joining(5 * S);
        m.assigned_at(6 * S, false, Some(3));
        m.record_read(6 * S + S / 10);
        assert_eq!(m.times, [S + S / 10, S + S / 10]);
        assert_eq!(m.generations, [1, 3]);
    }

    #[test]
    fn an_assignment_with_nothing_read_before_the_next_rebalance_is_one_rebalance() {
        let mut m = Membership::new(CommitPolicy::Off, 1);
        m.joining(0);
        m.assigned_at(S, false, Some(1));
        m.joining(2 * S);
        m.assigned_at(3 * S, false, Some(2));
        m.record_read(4 * S);
        assert_eq!(m.times, [S, 2 * S]);
        assert_eq!(m.generations, [1, 2]);
    }
}
