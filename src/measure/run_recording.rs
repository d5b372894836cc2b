//! A run's recording, every side of it, as the result file stores it (`recording`): what the
//! figures are derived from. Threads, shards and files read back all combine recordings, never
//! figures; the figures are derived from one in one place per side, and a reader of a file
//! derives them again (`RunResult::rederive`) instead of trusting the derived fields beside it.

use serde::{Deserialize, Serialize};

use super::due::DueSeries;
use super::fault::FaultSums;
use super::{
    merge::Problem, LatencySummary, RawSums, ReadSums, RunResult, TopicFigures, TxnFigures,
};

/// Every side's raw recording of one run (or trial, or probe).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunRecording {
    /// The producers' counters, span and statistics (their histograms are the run's latency
    /// summaries', their intervals the time series'); None in files of an older kafkabench.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer: Option<RawSums>,
    /// The read side's sums; None without a consumer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadSums>,
    /// Transactions: counts and the commit histogram are sums already, so they are their own
    /// recording. None without transactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txn: Option<TxnFigures>,
    /// The fault timeline: actions, silences, failure reports. None without faults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<FaultSums>,
    /// Per topic of a run over several (empty for one topic).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<TopicSums>,
    /// Ack and end-to-end latency by when each record was due (`measure::due`): what fault
    /// windows and a drain are measured on. None when the run did not keep them (no fault,
    /// no backlog in its scenario) and in files of an older kafkabench.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<DueSeries>,
}

/// One topic's counts in a run over several.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TopicSums {
    pub topic: String,
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    /// Distinct measured records read back from it (with a consumer).
    pub consumed: Option<u64>,
    /// Its growth on disk over the measured phase, measured once for the whole run.
    pub disk_bytes: Option<u64>,
}

impl TopicSums {
    /// Another side's counts of the same topic: summed; the disk is the largest growth any
    /// side measured (they share the topic, so summing would count it once per side).
    fn absorb(&mut self, o: &TopicSums) {
        self.sent += o.sent;
        self.acked += o.acked;
        self.failed += o.failed;
        self.consumed = match (self.consumed, o.consumed) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        self.disk_bytes = self.disk_bytes.max(o.disk_bytes);
    }

    /// Its figures over the run's measured time: the topics' throughputs add up to the run's.
    pub fn figures(&self, elapsed_secs: f64) -> TopicFigures {
        TopicFigures {
            topic: self.topic.clone(),
            sent: self.sent,
            acked: self.acked,
            failed: self.failed,
            throughput_msgs: if elapsed_secs > 0.0 {
                self.acked as f64 / elapsed_secs
            } else {
                0.0
            },
            consumed: self.consumed,
            disk_bytes: self.disk_bytes,
        }
    }

    /// The counts of a file that kept only figures.
    fn of_figures(t: &TopicFigures) -> TopicSums {
        TopicSums {
            topic: t.topic.clone(),
            sent: t.sent,
            acked: t.acked,
            failed: t.failed,
            consumed: t.consumed,
            disk_bytes: t.disk_bytes,
        }
    }
}

impl RunRecording {
    /// The sides other than the producer's (merged through `Recording`) and the read side's
    /// (merged with the series): transactions, faults and topics of another shard of the same
    /// run. Topics in the order first met.
    pub(crate) fn absorb_other_sides(&mut self, o: &RunRecording) -> Result<(), Problem> {
        match (&mut self.txn, &o.txn) {
            (Some(t), Some(u)) => t.absorb(u)?,
            (None, Some(u)) => self.txn = Some(u.clone()),
            _ => {}
        }
        match (&mut self.faults, &o.faults) {
            (Some(f), Some(g)) => f.absorb(g),
            (None, Some(g)) => self.faults = Some(g.clone()),
            _ => {}
        }
        for t in &o.topics {
            match self.topics.iter_mut().find(|m| m.topic == t.topic) {
                Some(m) => m.absorb(t),
                None => self.topics.push(t.clone()),
            }
        }
        Ok(())
    }
}

impl RunResult {
    /// The sides' figures derived from the recording, the one place a run, a merge and a
    /// file read back derive them: the read side (with the lag from the series), transactions,
    /// faults (after the read side: churn needs its stalls) and topics. A side with no
    /// recording keeps the figures it has (none, but in a file that kept only figures).
    pub(crate) fn derive_sides(&mut self) {
        let rec = &self.recording;
        if let Some(r) = &rec.read {
            self.consume = Some(r.figures(self.series.as_ref()));
        }
        if let Some(t) = &rec.txn {
            self.txn = Some(t.summarised());
        }
        if let Some(f) = &rec.faults {
            self.faults = Some(f.figures(self));
        }
        // `beside` needs the other runs: `pair_drains`, once they are all derived.
        self.drain = super::fault::drain(self);
        self.derive_topic_figures();
    }

    /// The topics' figures from their counts (none recorded: as they are).
    pub(crate) fn derive_topic_figures(&mut self) {
        if !self.recording.topics.is_empty() {
            let elapsed = self.elapsed_secs;
            self.topics = self
                .recording
                .topics
                .iter()
                .map(|t| t.figures(elapsed))
                .collect();
        }
    }

    /// Every measured figure derived again from the recording, ignoring the derived fields a
    /// file holds beside it (a reader's first step). What the plan decided stays as written:
    /// the target rate, the schedule's slip, the series and where it became steady. A
    /// repeated run's trials and a search's probes are derived alike; a repeated run's own
    /// figures, made of its trials, are made again from them.
    pub fn rederive(&mut self) {
        if let Some(t) = self.trials.take() {
            let mut t = *t;
            for r in &mut t.results {
                r.rederive();
            }
            let mut made = super::trials::recombine(t);
            // The run's own name and place, not its shown trial's.
            made.index = self.index;
            made.label = std::mem::take(&mut self.label);
            made.coords = std::mem::take(&mut self.coords);
            made.topic = std::mem::take(&mut self.topic);
            *self = made;
            return;
        }
        if let Some(sums) = self.recording.producer.clone() {
            sums.apply(self);
            for s in [&mut self.ack, &mut self.service, &mut self.send_delay] {
                s.resummarise();
            }
            if let Some(e) = &mut self.e2e {
                e.resummarise();
            }
            if let Some(s) = &mut self.sizes {
                s.resummarise();
            }
            for p in self.brokers.iter_mut().chain(self.partitions.iter_mut()) {
                p.ack.resummarise();
            }
            for p in &mut self.read_partitions {
                p.e2e.resummarise();
            }
        }
        self.derive_sides();
        if let Some(c) = &mut self.capacity {
            for p in &mut c.probes {
                p.result.rederive();
            }
        }
    }

    /// A file of an older kafkabench (schema version 2): the recording it kept (`raw`,
    /// `raw_read`), and what it did not keep rebuilt from its figures. Its figures stay as
    /// written.
    pub(crate) fn upgrade_v2(&mut self) {
        if let Some(t) = &mut self.trials {
            for r in &mut t.results {
                r.upgrade_v2();
            }
            // A repeated run's recording is its shown trial's (its figures are the trials').
            if let Some(shown) = t.results.get(t.shown) {
                self.recording = shown.recording.clone();
                self.legacy_raw = None;
                self.legacy_raw_read = None;
            }
        }
        if self.recording.producer.is_none() {
            self.recording.producer = Some(match self.legacy_raw.take() {
                Some(kept) => RawSums {
                    span: kept.span,
                    stats: kept.stats,
                    ..super::merge::counts_of(self)
                },
                None => super::merge::older_sums(self),
            });
        }
        if self.recording.read.is_none() {
            self.recording.read = match (self.legacy_raw_read.take(), &self.consume) {
                (Some(r), _) => Some(r),
                (None, Some(c)) => Some(super::merge::older_read_sums(c)),
                (None, None) => None,
            };
        }
        if self.recording.txn.is_none() {
            self.recording.txn = self.txn.clone();
        }
        if self.recording.topics.is_empty() {
            self.recording.topics = self.topics.iter().map(TopicSums::of_figures).collect();
        }
        // A version 2 file kept no silences or failure reports: its fault figures stay as
        // written, and a merge refuses them (`Problem::NoFaultRecording`).
        if let Some(c) = &mut self.capacity {
            for p in &mut c.probes {
                p.result.upgrade_v2();
            }
        }
    }
}

impl LatencySummary {
    /// The percentiles read off its histogram again (a file's are ignored); as it was when
    /// the file kept no histogram.
    fn resummarise(&mut self) {
        if let Some(h) = self.histogram() {
            *self = LatencySummary::from_histogram(&h.clone());
        }
    }
}
