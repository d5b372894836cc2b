//! A shard's share of a run (`run --shard I/N`, docs/distributed.md): which records of the
//! one schedule it sends, and which partitions it owns.
//!
//! Producer k of a shard's P producers takes the records i ≡ I·P + k (mod P·N) of the
//! single-machine schedule, so the shards' records together are exactly that schedule and a
//! count splits with its remainder spread over the first shares. Shard I owns the partitions
//! p ≡ I (mod N): its producers write only there and its consumer reads only there, so every
//! end-to-end latency is measured on one host's clock.
//!
//! The rest of a sharded run (the control topic, the barriers' protocol, the collector) is the
//! `shard` stage's, above this one: the run stage meets the other shards only through
//! [`Coordination`], which that stage implements.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::error::RunError;
use super::pacer::Share;
use super::progress::Position;
use super::round::Round;
use crate::measure::RunResult;
use crate::plan::{Plan, RunPlan};

/// Shard `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// The share of the schedule of this shard's producer `k` of `producers`.
    pub(crate) fn share(&self, k: u32, producers: u32) -> Share {
        let p = u64::from(producers.max(1));
        Share {
            index: u64::from(self.index) * p + u64::from(k),
            of: p * u64::from(self.count),
        }
    }

    /// Whether partition `p` (of every topic of the run) is this shard's.
    pub(crate) fn owns(&self, p: i32) -> bool {
        p >= 0 && (p as u32) % self.count == self.index
    }

    /// This shard's partitions of a topic of `partitions`.
    pub(crate) fn owned(&self, partitions: i32) -> Vec<i32> {
        (0..partitions).filter(|p| self.owns(*p)).collect()
    }
}

/// Which barrier of a run: before warm-up, or before the measured phase.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Warmup,
    Measure,
}

/// A future a [`Coordination`] hands back (boxed: the trait is used as `dyn`).
pub(crate) type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a shard's run asks of the sharded run it is part of, at the points where it meets
/// the other shards. The `shard` stage implements it; the run stage only calls it. The
/// collector names each round (a run, a trial, a probe) once its topics exist; the barriers,
/// the result and a failure are the current round's.
pub(crate) trait Coordination: Send + Sync {
    /// Which shard this process is.
    fn shard(&self) -> Shard;
    /// Before the first round: joins the sharded run (says hello to the collector).
    fn join<'a>(
        &'a self,
        plan: &'a Plan,
        interrupt: &'a Arc<AtomicBool>,
    ) -> Pending<'a, Result<(), RunError>>;
    /// Waits for the collector's next round, whose topics then exist, or its word that the
    /// run is over.
    fn next_round<'a>(
        &'a self,
        interrupt: &'a Arc<AtomicBool>,
    ) -> Pending<'a, Result<Next, RunError>>;
    /// Whether a topic of `partitions` can be split over the shards.
    fn fits(&self, partitions: i32) -> Result<(), RunError>;
    /// The current round's barrier before `phase`, on a blocking thread: returns at the
    /// agreed start. Err: why the shard cannot go on.
    fn barrier(&self, phase: Phase, stop: &dyn Fn() -> bool) -> Result<(), RunError>;
    /// Hands this shard's result of the current round over.
    fn report<'a>(&'a self, r: &'a RunResult) -> Pending<'a, Result<(), RunError>>;
    /// Says this shard cannot go on (best effort).
    fn failed(&self, reason: String) -> Pending<'_, ()>;
}

/// What the collector says comes after a shard's last round.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Next {
    /// Round `number` (from 1) is this.
    Round(u32, Round),
    /// Every round is over.
    Finished,
    /// The collector stopped the run between rounds, for this reason (another shard let it
    /// down, an interrupt): this shard's rounds so far are whole.
    Stopped(String),
}

/// Who carries out each round when this process does not: the collector of a sharded run,
/// which has every shard run it and hands back their recordings merged. Trials and a
/// capacity search sit above it unchanged, so a sharded run repeats and searches exactly as
/// one machine does.
pub(crate) trait Rounds: Send + Sync {
    /// Runs `rp`, which is `round` of the plan; `at` is where it stands for progress.
    fn run<'a>(
        &'a self,
        rp: &'a RunPlan,
        round: &'a Round,
        at: Position,
        interrupt: &'a Arc<AtomicBool>,
        notes: &'a mut Vec<String>,
    ) -> Pending<'a, Result<RunResult, RunError>>;
}

/// The partition of a shard's next record: keyed records by a hash of the key over the
/// shard's partitions (one key, one partition, within the shard), unkeyed ones in turn.
#[derive(Debug, Clone)]
pub(crate) struct Partitioner {
    owned: Vec<i32>,
    next: usize,
}

impl Partitioner {
    pub(crate) fn new(owned: Vec<i32>) -> Partitioner {
        Partitioner { owned, next: 0 }
    }

    #[inline]
    pub(crate) fn pick(&mut self, key: Option<&[u8]>) -> i32 {
        let n = self.owned.len();
        let at = match key {
            Some(k) => (fnv1a(k) % n as u64) as usize,
            None => {
                let at = self.next;
                self.next = if at + 1 == n { 0 } else { at + 1 };
                at
            }
        };
        self.owned[at]
    }
}

#[inline]
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RateSegment, RateSpec};
    use crate::run::pacer::{Pacer, Slot};
    use std::time::Duration;

    #[test]
    fn every_partition_belongs_to_exactly_one_shard() {
        for n in 1..6u32 {
            for p in 0..20 {
                let owners = (0..n)
                    .filter(|i| {
                        Shard {
                            index: *i,
                            count: n,
                        }
                        .owns(p)
                    })
                    .count();
                assert_eq!(owners, 1, "partition {p} of {n} shards");
            }
        }
    }

    #[test]
    fn a_key_always_goes_to_one_partition_of_the_shards_own() {
        let mut p = Partitioner::new(vec![1, 4, 7]);
        let first = p.pick(Some(b"customer-42"));
        for _ in 0..10 {
            assert_eq!(p.pick(Some(b"customer-42")), first);
        }
        let unkeyed: Vec<i32> = (0..6).map(|_| p.pick(None)).collect();
        assert_eq!(unkeyed, vec![1, 4, 7, 1, 4, 7]);
    }

    /// Every intended send time of every shard's producers, as (record index, ns).
    fn shards_times(rate: &RateSpec, shards: u32, producers: u32, total: u64) -> Vec<(u64, u64)> {
        let mut all = Vec::new();
        for i in 0..shards {
            let shard = Shard {
                index: i,
                count: shards,
            };
            for k in 0..producers {
                let share = shard.share(k, producers);
                let mut pacer = Pacer::new(rate, share, 0);
                let mut index = share.index;
                for _ in 0..share.count_of(total) {
                    match pacer.next_slot() {
                        Slot::At(t) => all.push((index, t)),
                        Slot::Now => all.push((index, 0)),
                        Slot::Done => break,
                    }
                    index += share.of;
                }
            }
        }
        all.sort_unstable();
        all
    }

    fn single_machine(rate: &RateSpec, total: u64) -> Vec<(u64, u64)> {
        let mut pacer = Pacer::new(rate, Share::WHOLE, 0);
        (0..total)
            .map_while(|i| match pacer.next_slot() {
                Slot::At(t) => Some((i, t)),
                Slot::Now => Some((i, 0)),
                Slot::Done => None,
            })
            .collect()
    }

    fn segment(per_sec: f64, ramp_to: Option<f64>, secs: f64) -> RateSegment {
        RateSegment {
            per_sec,
            ramp_to,
            duration: Duration::from_secs_f64(secs),
        }
    }

    /// A small deterministic generator, so the property runs the same cases everywhere.
    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *state >> 33
    }

    #[test]
    fn the_shards_intended_send_times_partition_the_single_machine_schedule() {
        let mut seed = 7u64;
        for case in 0..60 {
            let shards = 1 + (lcg(&mut seed) % 8) as u32;
            let producers = 1 + (lcg(&mut seed) % 4) as u32;
            let total = lcg(&mut seed) % 3_000;
            let rate = match case % 4 {
                0 => RateSpec::Unlimited,
                1 => RateSpec::Fixed(1.0 + (lcg(&mut seed) % 50_000) as f64),
                2 => RateSpec::Shape(vec![
                    segment(100.0, Some(20_000.0), 0.05),
                    segment(0.0, None, 0.02),
                    segment(5_000.0, None, 0.2),
                ]),
                _ => RateSpec::Shape(vec![
                    segment(1_000.0 + (lcg(&mut seed) % 9_000) as f64, None, 0.1),
                    segment(10_000.0, Some(1.0), 0.1),
                ]),
            };
            let whole = single_machine(&rate, total);
            let split = shards_times(&rate, shards, producers, total);
            assert_eq!(
                split, whole,
                "case {case}: {shards} shards × {producers} producers, {total} records, {rate:?}"
            );
        }
    }
}
