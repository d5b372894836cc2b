//! How a producer spreads its records over a run's topics (`topics = N`).
//!
//! Record i of the schedule goes to topic i mod N. Producer k of P sends the records
//! i ≡ k (mod P), so its own records move through the topics by P mod N each. With producers a
//! multiple of the topics (P = m·N) every producer stays on one topic, topic k mod N: that is
//! OpenMessaging Benchmark's `producersPerTopic: m`, where each producer object is bound to one
//! topic. With fewer producers than topics each producer writes its topics in turn, record by
//! record, as an OMB worker thread loops over its producers. Either way every topic gets an
//! equal share of the schedule, and nothing is looked up per record: the next topic is one
//! addition, and its handle was created once.

use crate::measure::TopicTally;

/// Where one producer's records go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// Every record to one topic (its index): a run over one topic, or a producer bound to one.
    Bound(usize),
    /// Record by record over the topics.
    RoundRobin(Spread),
}

/// The topic of a round-robin producer's next record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Spread {
    at: usize,
    step: usize,
    n: usize,
}

impl Layout {
    /// Producer `index` of `producers`, over `topics` topics.
    pub(super) fn of(index: u64, producers: u64, topics: usize) -> Layout {
        let n = topics.max(1) as u64;
        let (at, step) = ((index % n) as usize, (producers % n) as usize);
        if step == 0 {
            Layout::Bound(at)
        } else {
            Layout::RoundRobin(Spread {
                at,
                step,
                n: n as usize,
            })
        }
    }
}

impl Layout {
    /// The first topic and the step between a producer's records' topics (0: every record
    /// to the first), as a worker is told them (clients/PROTOCOL.md).
    pub(super) fn first_and_step(&self) -> (usize, usize) {
        match self {
            Layout::Bound(t) => (*t, 0),
            Layout::RoundRobin(s) => (s.at, s.step),
        }
    }
}

impl Spread {
    /// The topic of the next record, and moves on to the one after.
    #[inline]
    pub(super) fn next(&mut self) -> usize {
        let t = self.at;
        self.at += self.step;
        if self.at >= self.n {
            self.at -= self.n;
        }
        t
    }
}

/// A bound producer's per-topic figures: everything it counted, on its topic.
pub(super) fn bound_tally(topic: usize, topics: usize, all: TopicTally) -> Vec<TopicTally> {
    if topics < 2 {
        return Vec::new();
    }
    let mut v = vec![TopicTally::default(); topics];
    v[topic] = all;
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The topics of producer `k`'s first `count` records.
    fn topics_of(k: u64, producers: u64, topics: usize, count: usize) -> Vec<usize> {
        match Layout::of(k, producers, topics) {
            Layout::Bound(t) => vec![t; count],
            Layout::RoundRobin(mut s) => (0..count).map(|_| s.next()).collect(),
        }
    }

    #[test]
    fn one_producer_writes_record_seq_to_topic_seq_mod_n() {
        assert_eq!(topics_of(0, 1, 3, 7), [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn producers_a_multiple_of_the_topics_are_each_bound_to_one_as_in_omb() {
        // 6 producers over 3 topics: producersPerTopic 2.
        for k in 0..6 {
            assert_eq!(Layout::of(k, 6, 3), Layout::Bound((k % 3) as usize));
        }
        assert_eq!(Layout::of(0, 4, 1), Layout::Bound(0));
    }

    #[test]
    fn record_i_of_the_schedule_goes_to_topic_i_mod_n_whatever_the_producers() {
        // Producer k sends records k, k + P, k + 2P, … of the schedule.
        for (producers, topics) in [(2u64, 3usize), (3, 10), (4, 6), (7, 5)] {
            for k in 0..producers {
                let got = topics_of(k, producers, topics, 20);
                let want: Vec<usize> = (0..20u64)
                    .map(|j| ((k + j * producers) % topics as u64) as usize)
                    .collect();
                assert_eq!(
                    got, want,
                    "producer {k} of {producers} over {topics} topics"
                );
            }
        }
    }

    #[test]
    fn every_topic_gets_an_equal_share() {
        let (producers, topics) = (3u64, 10usize);
        let mut count = vec![0; topics];
        for k in 0..producers {
            for t in topics_of(k, producers, topics, 100) {
                count[t] += 1;
            }
        }
        assert!(count.iter().all(|c| *c == 30), "{count:?}");
    }

    #[test]
    fn a_bound_producer_counts_everything_on_its_topic() {
        let all = TopicTally {
            sent: 5,
            acked: 4,
            failed: 1,
        };
        assert_eq!(bound_tally(0, 1, all), []);
        let v = bound_tally(2, 3, all);
        assert_eq!(v[2], all);
        assert_eq!(v[0], TopicTally::default());
    }
}
