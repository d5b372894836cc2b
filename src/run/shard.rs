//! A shard's share of a run (`run --shard I/N`, docs/distributed.md): which records of the
//! one schedule it sends, and which partitions it owns.
//!
//! Producer k of a shard's P producers takes the records i ≡ I·P + k (mod P·N) of the
//! single-machine schedule, so the shards' records together are exactly that schedule and a
//! count splits with its remainder spread over the first shares. Shard I owns the partitions
//! p ≡ I (mod N): its producers write only there and its consumer reads only there, so every
//! end-to-end latency is measured on one host's clock.

use super::pacer::Share;

/// Shard `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// `I/N` as written after `--shard`; an empty `I` (`/N`) is the index Kubernetes gives an
    /// Indexed Job's pod in `JOB_COMPLETION_INDEX` (`job_index`).
    pub fn parse(text: &str, job_index: Option<&str>) -> Result<Shard, String> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| "write I/N (e.g. 0/3: shard 0 of 3)".to_string())?;
        let count: u32 = n
            .trim()
            .parse()
            .ok()
            .filter(|n| (1..=1024).contains(n))
            .ok_or_else(|| format!("the shard count `{n}` must be from 1 to 1024"))?;
        let i = i.trim();
        let i = if i.is_empty() {
            job_index.ok_or_else(|| {
                "no shard index before `/` and JOB_COMPLETION_INDEX is not set".to_string()
            })?
        } else {
            i
        };
        let index: u32 = i
            .trim()
            .parse()
            .ok()
            .filter(|i| *i < count)
            .ok_or_else(|| {
                format!(
                    "the shard index `{i}` of {count} shards must be from 0 to {}",
                    count - 1
                )
            })?;
        Ok(Shard { index, count })
    }

    /// The share of the schedule of this shard's producer `k` of `producers`.
    pub fn share(&self, k: u32, producers: u32) -> Share {
        let p = u64::from(producers.max(1));
        Share {
            index: u64::from(self.index) * p + u64::from(k),
            of: p * u64::from(self.count),
        }
    }

    /// Whether partition `p` (of every topic of the run) is this shard's.
    pub fn owns(&self, p: i32) -> bool {
        p >= 0 && (p as u32) % self.count == self.index
    }

    /// This shard's partitions of a topic of `partitions`.
    pub fn owned(&self, partitions: i32) -> Vec<i32> {
        (0..partitions).filter(|p| self.owns(*p)).collect()
    }

    /// Why a topic of `partitions` cannot be split over the shards, if it cannot.
    pub fn problem(&self, partitions: i32) -> Option<String> {
        (partitions < self.count as i32).then(|| {
            format!(
                "the topic has {partitions} partition{} for {} shards: every shard writes and \
                 reads partitions of its own, so a sharded run needs at least as many \
                 partitions as shards",
                if partitions == 1 { "" } else { "s" },
                self.count
            )
        })
    }
}

/// The partition of a shard's next record: keyed records by a hash of the key over the
/// shard's partitions (one key, one partition, within the shard), unkeyed ones in turn.
#[derive(Debug, Clone)]
pub struct Partitioner {
    owned: Vec<i32>,
    next: usize,
}

impl Partitioner {
    pub fn new(owned: Vec<i32>) -> Partitioner {
        Partitioner { owned, next: 0 }
    }

    #[inline]
    pub fn pick(&mut self, key: Option<&[u8]>) -> i32 {
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
    fn a_shard_is_written_i_over_n_or_takes_its_index_from_the_job() {
        assert_eq!(Shard::parse("2/3", None), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(
            Shard::parse("/4", Some("1")),
            Ok(Shard { index: 1, count: 4 })
        );
        assert!(Shard::parse("3/3", None).unwrap_err().contains("0 to 2"));
        assert!(Shard::parse("/3", None)
            .unwrap_err()
            .contains("JOB_COMPLETION_INDEX"));
        assert!(Shard::parse("1", None).is_err());
        assert!(Shard::parse("0/0", None).is_err());
    }

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
        assert!(Shard { index: 0, count: 4 }.problem(3).is_some());
        assert!(Shard { index: 0, count: 3 }.problem(3).is_none());
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
