//! What the collector knows of the shards, from the control topic: who said hello with which
//! digest, who is ready, whose result is whole, and who let the run down. Every message is
//! taken as untrusted input: one that does not fit is refused or counted against its shard,
//! never believed.

use std::collections::{BTreeMap, BTreeSet};

use crate::measure::RunResult;
use crate::shard::control::{self, Message, Parts, Phase};
use crate::shard::letdown::{Letdown, Refusal};

/// What the collector knows of the shards, from the control topic.
pub(super) struct Shards {
    pub(super) n: u32,
    pub(super) hash: String,
    pub(super) scale: f64,
    /// Per shard that said hello: its host and session.
    pub(super) hello: BTreeMap<u32, (String, u64)>,
    /// (shard, round, at the measured phase's barrier).
    pub(super) ready: BTreeSet<(u32, u32, bool)>,
    pub(super) parts: BTreeMap<(u32, u32), Parts>,
    pub(super) results: BTreeMap<(u32, u32), RunResult>,
    /// Each round the collector named, with its run's index (a letdown names the run).
    pub(super) rounds: BTreeMap<u32, usize>,
    pub(super) problems: BTreeMap<u32, Letdown>,
    /// Refusals to send (a shard of another scenario).
    pub(super) refuse: Vec<(u32, Refusal)>,
}

impl Shards {
    /// Nothing heard yet from any of `n` shards of the scenario with digest `hash`.
    pub(super) fn new(n: u32, hash: String, scale: f64) -> Shards {
        Shards {
            n,
            hash,
            scale,
            hello: BTreeMap::new(),
            ready: BTreeSet::new(),
            parts: BTreeMap::new(),
            results: BTreeMap::new(),
            rounds: BTreeMap::new(),
            problems: BTreeMap::new(),
            refuse: Vec::new(),
        }
    }

    pub(super) fn active(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.n).filter(|s| !self.problems.contains_key(s))
    }

    /// A message from shard `shard` of this run (not of an earlier one with the same id).
    fn is(&self, shard: u32, session: u64) -> bool {
        self.hello.get(&shard).is_some_and(|(_, s)| *s == session)
    }

    pub(super) fn take(&mut self, m: Message) {
        match m {
            Message::Hello {
                version,
                session,
                shard,
                shards,
                hash,
                scale,
                host,
            } => {
                let why = if version != control::VERSION {
                    Some(Refusal::Version {
                        theirs: version,
                        ours: control::VERSION,
                    })
                } else if shard >= self.n || shards != self.n {
                    Some(Refusal::Count {
                        shard,
                        shards,
                        expected: self.n,
                    })
                } else if hash != self.hash {
                    Some(Refusal::Scenario {
                        theirs: hash,
                        ours: self.hash.clone(),
                    })
                } else if scale != self.scale {
                    Some(Refusal::Scale {
                        theirs: scale,
                        ours: self.scale,
                    })
                } else if let Some((first, _)) =
                    self.hello.get(&shard).filter(|(_, s)| *s != session)
                {
                    Some(Refusal::Twice {
                        shard,
                        first: first.clone(),
                        second: host.clone(),
                    })
                } else {
                    None
                };
                match why {
                    Some(why) if shard < self.n => {
                        self.refuse.push((shard, why.clone()));
                        self.problems.entry(shard).or_insert(Letdown::Refused(why));
                    }
                    Some(why) => self.refuse.push((shard, why)),
                    None => {
                        self.hello.insert(shard, (host, session));
                    }
                }
            }
            Message::Ready {
                session,
                shard,
                round,
                phase,
            } if self.is(shard, session) && self.rounds.contains_key(&round) => {
                self.ready.insert((shard, round, phase == Phase::Measure));
            }
            // Parts of a round never named are not kept: a shard cannot make the collector
            // hold what it likes.
            Message::Result {
                session,
                shard,
                round,
                part,
                parts,
                data,
            } if self.is(shard, session) && self.rounds.contains_key(&round) => {
                let run = self.rounds[&round];
                let whole = self.parts.entry((shard, round)).or_default();
                match whole.add(part, parts, data) {
                    None => {}
                    Some(Ok(r)) => {
                        self.parts.remove(&(shard, round));
                        self.results.insert((shard, round), r);
                    }
                    Some(Err(error)) => {
                        self.problems
                            .entry(shard)
                            .or_insert(Letdown::Result { run, error });
                    }
                }
            }
            Message::Failed {
                session,
                shard,
                round,
                reason,
            } if self.is(shard, session) => {
                let run = round.and_then(|r| self.rounds.get(&r).copied());
                self.problems
                    .entry(shard)
                    .or_insert(Letdown::Failed { run, reason });
            }
            // The collector's own messages, and what a refused shard still says.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shards(n: u32) -> Shards {
        Shards::new(n, "h".into(), 1.0)
    }

    fn hello(shard: u32, shards: u32, hash: &str, session: u64) -> Message {
        Message::Hello {
            version: control::VERSION,
            session,
            shard,
            shards,
            hash: hash.into(),
            scale: 1.0,
            host: format!("host-{session}"),
        }
    }

    #[test]
    fn a_shard_of_another_scenario_count_or_version_is_refused_and_named() {
        let mut s = shards(3);
        s.take(hello(0, 3, "other", 1));
        s.take(hello(1, 4, "h", 2));
        s.take(Message::Hello {
            version: control::VERSION + 1,
            session: 3,
            shard: 2,
            shards: 3,
            hash: "h".into(),
            scale: 1.0,
            host: "x".into(),
        });
        assert_eq!(s.refuse.len(), 3);
        assert!(s.problems[&0].to_string().contains("another scenario"));
        assert!(s.problems[&1].to_string().contains("waits for 3 shards"));
        assert!(s.problems[&2].to_string().contains("protocol"));
        assert_eq!(s.active().count(), 0);
    }

    #[test]
    fn a_shard_at_another_scale_is_refused() {
        let mut s = shards(1);
        s.take(Message::Hello {
            version: control::VERSION,
            session: 1,
            shard: 0,
            shards: 1,
            hash: "h".into(),
            scale: 0.1,
            host: "x".into(),
        });
        assert!(
            s.problems[&0].to_string().contains("--scale 0.1"),
            "{:?}",
            s.problems
        );
    }

    #[test]
    fn a_shard_index_out_of_range_is_refused_without_touching_the_others() {
        let mut s = shards(2);
        s.take(hello(7, 2, "h", 1));
        assert_eq!(s.refuse.len(), 1);
        assert!(s.problems.is_empty());
        assert_eq!(s.active().count(), 2);
    }

    #[test]
    fn messages_of_a_session_that_did_not_say_hello_are_ignored() {
        let mut s = shards(1);
        s.take(hello(0, 1, "h", 1));
        s.rounds.insert(1, 0);
        for session in [1, 99] {
            s.take(Message::Ready {
                session,
                shard: 0,
                round: 1,
                phase: Phase::Warmup,
            });
            s.take(Message::Failed {
                session: 99,
                shard: 0,
                round: None,
                reason: "an earlier run's".into(),
            });
        }
        assert_eq!(s.ready.len(), 1);
        assert!(s.problems.is_empty(), "{:?}", s.problems);
    }

    #[test]
    fn the_same_shard_started_twice_is_refused() {
        let mut s = shards(2);
        s.take(hello(1, 2, "h", 1));
        s.take(hello(1, 2, "h", 2));
        assert!(s.problems[&1].to_string().contains("started twice"));
    }

    #[test]
    fn a_result_that_cannot_be_read_counts_against_its_shard() {
        let mut s = shards(1);
        s.take(hello(0, 1, "h", 1));
        s.rounds.insert(1, 0);
        // A round the collector never named is not even kept.
        s.take(Message::Result {
            session: 1,
            shard: 0,
            round: 2,
            part: 0,
            parts: 3,
            data: "{".into(),
        });
        assert!(s.parts.is_empty());
        s.take(Message::Result {
            session: 1,
            shard: 0,
            round: 1,
            part: 0,
            parts: 1,
            data: "{\"sent\": \"many\"}".into(),
        });
        assert!(
            s.problems[&0].to_string().contains("cannot be read"),
            "{:?}",
            s.problems
        );
        assert!(s.results.is_empty());
    }
}
