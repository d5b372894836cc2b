//! Per-topic figures of a run over several topics (`topics = N`).

use serde::{Deserialize, Serialize};

use super::run_recording::TopicSums;
use super::{ConsumerRecording, ProducerRecording, RunResult};

/// One topic's share of a run; the run's own figures are the totals.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TopicFigures {
    pub topic: String,
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    /// Acked records per second, over the run's own measured time: the topics' figures add
    /// up to the run's.
    pub throughput_msgs: f64,
    /// Distinct measured records read back from this topic (with a consumer).
    pub consumed: Option<u64>,
    /// Bytes this topic grew on disk over the measured phase (one replica per partition).
    pub disk_bytes: Option<u64>,
}

/// What one producer sent to one topic of a run over several, counted by its own thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TopicTally {
    pub sent: u64,
    pub acked: u64,
    /// Failed when enqueued or reported failed.
    pub failed: u64,
}

impl RunResult {
    /// Each topic's figures, from the producers' tallies (`ProducerRecording::by_topic`), the
    /// consumer's per-topic count and each topic's disk growth, once the run's own figures
    /// are derived (they give the measured time). Nothing for a run over one topic: its
    /// figures are the run's.
    pub fn derive_topics(
        &mut self,
        names: &[String],
        producers: &[ProducerRecording],
        consumer: Option<&ConsumerRecording>,
        disk: Option<&[u64]>,
    ) {
        // Recorded for a run over several topics only: one topic's figures are the run's.
        let several = names.len() >= 2;
        self.recording.topics = names
            .iter()
            .filter(|_| several)
            .enumerate()
            .map(|(i, name)| {
                let mut t = TopicTally::default();
                for p in producers {
                    if let Some(x) = p.by_topic.get(i) {
                        t.sent += x.sent;
                        t.acked += x.acked;
                        t.failed += x.failed;
                    }
                }
                TopicSums {
                    topic: name.clone(),
                    sent: t.sent,
                    acked: t.acked,
                    failed: t.failed,
                    consumed: consumer.map(|c| c.consumed_by_topic.get(i).copied().unwrap_or(0)),
                    disk_bytes: disk.and_then(|d| d.get(i).copied()),
                }
            })
            .collect();
        self.derive_topic_figures();
    }
}

/// Bytes each topic grew on disk: `after - before` per topic, and their sum (the run's
/// `disk_bytes`).
impl RunResult {
    /// The run's growth on disk, and its ratio to the bytes sent (the compression figure).
    pub fn set_disk_total(&mut self, total: Option<u64>) {
        self.disk_bytes = total;
        self.disk_ratio = total
            .filter(|d| *d > 0)
            .map(|d| self.key_value_bytes as f64 / d as f64);
    }

    /// The topics' growth on disk as measured once for the whole run (a sharded run's
    /// collector): the total, its ratio to the bytes sent, and each topic's.
    pub fn set_disk(&mut self, each: Option<&[u64]>, total: Option<u64>) {
        self.set_disk_total(total);
        for (i, t) in self.recording.topics.iter_mut().enumerate() {
            t.disk_bytes = each.and_then(|e| e.get(i).copied());
        }
        self.derive_topic_figures();
    }
}

pub(crate) fn disk_growth(before: &[u64], after: &[u64]) -> (Vec<u64>, u64) {
    let each: Vec<u64> = before
        .iter()
        .zip(after)
        .map(|(b, a)| a.saturating_sub(*b))
        .collect();
    let total = each.iter().sum();
    (each, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn producer(by_topic: &[(u64, u64, u64)]) -> ProducerRecording {
        let mut p = ProducerRecording::empty();
        p.by_topic = by_topic
            .iter()
            .map(|&(sent, acked, failed)| TopicTally {
                sent,
                acked,
                failed,
            })
            .collect();
        p.raw.sent = p.by_topic.iter().map(|t| t.sent).sum();
        p.raw.acked = p.by_topic.iter().map(|t| t.acked).sum();
        p
    }

    #[test]
    fn each_topic_sums_its_producers_and_the_topics_add_up_to_the_run() {
        let names: Vec<String> = (0..3).map(|i| format!("t-{i}")).collect();
        let producers = [
            producer(&[(10, 10, 0), (10, 9, 1), (10, 10, 0)]),
            producer(&[(5, 5, 0), (5, 5, 0), (5, 4, 1)]),
        ];
        let mut consumer = ConsumerRecording::empty();
        consumer.consumed_by_topic = vec![15, 14, 14];
        let mut r = RunResult {
            acked: 43,
            elapsed_secs: 2.0,
            ..RunResult::default()
        };
        r.derive_topics(&names, &producers, Some(&consumer), Some(&[100, 200, 300]));
        let acked: Vec<u64> = r.topics.iter().map(|t| t.acked).collect();
        assert_eq!(acked, [15, 14, 14]);
        assert_eq!(r.topics.iter().map(|t| t.acked).sum::<u64>(), r.acked);
        assert_eq!(r.topics[1].failed, 1);
        assert_eq!(r.topics[2].throughput_msgs, 7.0);
        assert_eq!(r.topics[0].consumed, Some(15));
        assert_eq!(r.topics[2].disk_bytes, Some(300));
        assert_eq!(r.topics[1].topic, "t-1");
    }

    #[test]
    fn a_run_over_one_topic_has_no_per_topic_figures() {
        let mut r = RunResult::default();
        r.derive_topics(&["t".into()], &[producer(&[])], None, None);
        assert!(r.topics.is_empty());
    }

    #[test]
    fn disk_growth_is_per_topic_and_summed() {
        assert_eq!(disk_growth(&[10, 0, 5], &[30, 7, 5]), (vec![20, 7, 0], 27));
    }
}
