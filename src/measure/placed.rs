//! Figures by where a record landed: per broker that acknowledged it and per partition it was
//! written to (ack latency, records, bytes), from the same delivery reports as the run's own.
//!
//! "Per broker" is the broker whose produce response acknowledged the record
//! (`rd_kafka_message_broker_id`, read once per delivery-report event): a record retried after
//! its partition's leader moved counts for the new leader. Partitions are counted only for a
//! run that writes one topic (a run over several would mix its topics' partition numbers).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::flat_histogram::FlatHistogram;
use super::timeline::PartitionTimeline;
use super::{LatencySummary, RunResult, MAX_NS};
use crate::model::{LatencyKind, Metric};

/// Significant digits of a partition's whole-run histogram: about 37 KB each, so 1 000
/// partitions cost 37 MB per producer thread while recording.
pub(crate) const PARTITION_DIGITS: u8 = 2;
/// A broker's histogram keeps the run's own precision: brokers are few.
pub(crate) const BROKER_DIGITS: u8 = 3;
/// The broker slot of a record whose client does not say which broker acknowledged it (the
/// Java client): it counts for its partition only.
pub(crate) const NO_BROKER: usize = usize::MAX;

/// One broker's or partition's figures, as the result file keeps them: counts and the ack
/// latency with its histogram, so shards and files merge exactly.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PlaceFigures {
    /// The broker's node id, or the partition's number.
    pub id: i32,
    /// Acknowledged measured records and their key and value bytes.
    pub records: u64,
    pub bytes: u64,
    pub ack: LatencySummary,
}

/// One place's raw recording, merged across threads and shards.
#[derive(Clone, Debug)]
pub struct PlaceSums {
    pub id: i32,
    pub records: u64,
    pub bytes: u64,
    pub ack: Histogram<u64>,
}

/// A run's (or thread's, or shard's) figures by broker and by partition, each sorted by id.
#[derive(Clone, Debug, Default)]
pub struct Placed {
    pub brokers: Vec<PlaceSums>,
    pub partitions: Vec<PlaceSums>,
    /// Records acknowledged per partition per report interval (`measure::timeline`); None
    /// when partitions are not kept.
    pub over_time: Option<PartitionTimeline>,
}

fn histogram(digits: u8) -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, digits).expect("static histogram bounds are valid")
}

impl PlaceSums {
    fn figures(&self) -> PlaceFigures {
        PlaceFigures {
            id: self.id,
            records: self.records,
            bytes: self.bytes,
            ack: LatencySummary::from_histogram(&self.ack),
        }
    }

    /// Back from a file; None when its histogram is missing (it cannot merge exactly).
    fn of_figures(f: &PlaceFigures) -> Option<PlaceSums> {
        let ack = match f.ack.histogram() {
            Some(h) => h.clone(),
            None if f.records == 0 => histogram(BROKER_DIGITS),
            None => return None,
        };
        Some(PlaceSums {
            id: f.id,
            records: f.records,
            bytes: f.bytes,
            ack,
        })
    }
}

/// Adds `from` into `into` place by place (matched by id), keeping ids sorted.
fn absorb_places(into: &mut Vec<PlaceSums>, from: &[PlaceSums]) {
    for o in from {
        match into.binary_search_by_key(&o.id, |p| p.id) {
            Ok(i) => {
                let p = &mut into[i];
                p.records += o.records;
                p.bytes += o.bytes;
                // Histograms of one place have the same digits everywhere; a resize covers
                // the rest.
                let _ = p.ack.add(&o.ack);
            }
            Err(i) => into.insert(i, o.clone()),
        }
    }
}

impl Placed {
    pub fn absorb(&mut self, o: &Placed) {
        absorb_places(&mut self.brokers, &o.brokers);
        absorb_places(&mut self.partitions, &o.partitions);
        match (&mut self.over_time, &o.over_time) {
            (Some(a), Some(b)) => a.absorb(b),
            (None, Some(b)) => self.over_time = Some(b.clone()),
            _ => {}
        }
    }

    pub fn is_empty(&self) -> bool {
        self.brokers.is_empty() && self.partitions.is_empty()
    }

    /// The figures of every broker and partition.
    pub fn figures(&self) -> (Vec<PlaceFigures>, Vec<PlaceFigures>) {
        (
            self.brokers.iter().map(PlaceSums::figures).collect(),
            self.partitions.iter().map(PlaceSums::figures).collect(),
        )
    }

    /// A result file's figures read back as a recording; None when one of them kept no
    /// histogram.
    pub fn of_figures(brokers: &[PlaceFigures], partitions: &[PlaceFigures]) -> Option<Placed> {
        let all = |v: &[PlaceFigures]| {
            v.iter()
                .map(PlaceSums::of_figures)
                .collect::<Option<Vec<PlaceSums>>>()
        };
        Some(Placed {
            brokers: all(brokers)?,
            partitions: all(partitions)?,
            over_time: None,
        })
    }
}

impl RunResult {
    /// The brokers that acknowledged records, by node id (over a repeated run's trials, any
    /// trial's).
    pub fn broker_ids(&self) -> Vec<i32> {
        let mut ids: Vec<i32> = match &self.trials {
            Some(t) if !t.results.is_empty() => t
                .results
                .iter()
                .flat_map(|r| r.brokers.iter().map(|b| b.id))
                .collect(),
            _ => self.brokers.iter().map(|b| b.id).collect(),
        };
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// `m of broker id`, in base units: an ack latency statistic as that broker's
    /// acknowledgements measured it; None when the broker acknowledged nothing (or `m` is not
    /// kept per broker). Over a repeated run's trials, the median of the trials'.
    pub fn broker_metric(&self, m: Metric, broker: i32) -> Option<f64> {
        let own = |r: &RunResult| {
            let Metric::Latency(LatencyKind::Ack, stat) = m else {
                return None;
            };
            let b = r.brokers.iter().find(|b| b.id == broker)?;
            b.ack.stat_secs(stat)
        };
        match &self.trials {
            Some(t) if !t.results.is_empty() => {
                let v: Vec<f64> = t.results.iter().filter_map(own).collect();
                super::stats::median(&v)
            }
            _ => own(self),
        }
    }
}

/// A producer thread's recorder by place: slots allocated before the hot path, so a record
/// costs an index and two flat-histogram adds.
pub(crate) struct PlaceRecorder {
    /// By partition number; empty when partitions are not kept.
    partitions: Vec<Slot>,
    /// By broker, in the order first met (a handful); a new broker allocates its slot once.
    brokers: Vec<(i32, Slot)>,
    /// By partition and report interval; None when partitions are not kept.
    over_time: Option<PartitionTimeline>,
    /// Records acknowledged by no known broker ([`NO_BROKER`]).
    unplaced: u64,
}

struct Slot {
    records: u64,
    bytes: u64,
    ack: FlatHistogram,
}

impl Slot {
    fn new(digits: u8) -> Slot {
        Slot {
            records: 0,
            bytes: 0,
            ack: FlatHistogram::new(digits),
        }
    }

    #[inline]
    fn record(&mut self, latency_ns: u64, bytes: u64) {
        self.records += 1;
        self.bytes += bytes;
        self.ack.record(latency_ns);
    }

    fn sums(&mut self, id: i32) -> PlaceSums {
        PlaceSums {
            id,
            records: self.records,
            bytes: self.bytes,
            ack: self.ack.take(),
        }
    }
}

impl PlaceRecorder {
    /// Slots for `partitions` partitions (0: brokers only) and a few brokers.
    pub(crate) fn new(partitions: usize) -> PlaceRecorder {
        PlaceRecorder {
            partitions: (0..partitions)
                .map(|_| Slot::new(PARTITION_DIGITS))
                .collect(),
            brokers: Vec::with_capacity(16),
            over_time: (partitions > 0).then(|| PartitionTimeline::new(partitions)),
            unplaced: 0,
        }
    }

    /// A producer's recorder for a run over `topics` topics of `partitions` partitions each:
    /// partitions are kept for a run over one topic (several would mix their numbers).
    pub(crate) fn of_run(topics: usize, partitions: i32) -> PlaceRecorder {
        PlaceRecorder::new(if topics == 1 {
            partitions.max(0) as usize
        } else {
            0
        })
    }

    /// The slot of broker `id`, made when first met (once per broker per thread).
    #[inline]
    pub(crate) fn broker(&mut self, id: i32) -> usize {
        match self.brokers.iter().position(|(b, _)| *b == id) {
            Some(i) => i,
            None => {
                self.brokers.push((id, Slot::new(BROKER_DIGITS)));
                self.brokers.len() - 1
            }
        }
    }

    /// One acknowledged measured record, on broker slot `broker` (from [`Self::broker`], or
    /// [`NO_BROKER`]), in report interval `interval`.
    #[inline]
    pub(crate) fn acked(
        &mut self,
        partition: i32,
        broker: usize,
        latency_ns: u64,
        bytes: u64,
        interval: usize,
    ) {
        if let Some(s) = self.partitions.get_mut(partition as usize) {
            s.record(latency_ns, bytes);
            if let Some(t) = &mut self.over_time {
                t.add(partition as usize, interval);
            }
        }
        match self.brokers.get_mut(broker) {
            Some((_, s)) => s.record(latency_ns, bytes),
            None => self.unplaced += 1,
        }
    }

    /// What was recorded: brokers that acknowledged something and every partition slot. No
    /// brokers when any record's broker was not known: the brokers' figures would be short.
    pub(crate) fn finish(&mut self) -> Placed {
        let whole = self.unplaced == 0;
        let mut brokers: Vec<PlaceSums> = self
            .brokers
            .iter_mut()
            .filter(|(_, s)| whole && s.records > 0)
            .map(|(id, s)| s.sums(*id))
            .collect();
        brokers.sort_by_key(|b| b.id);
        let partitions = self
            .partitions
            .iter_mut()
            .enumerate()
            .map(|(p, s)| s.sums(p as i32))
            .collect();
        Placed {
            brokers,
            partitions,
            over_time: self.over_time.take(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(records: &[(i32, i32, u64)]) -> Placed {
        let mut r = PlaceRecorder::new(3);
        for &(partition, broker, latency) in records {
            let b = r.broker(broker);
            r.acked(partition, b, latency, 100, 0);
        }
        r.finish()
    }

    #[test]
    fn threads_merge_by_broker_and_partition_exactly() {
        let mut all = thread(&[(0, 1, 1_000_000), (1, 2, 5_000_000), (0, 1, 2_000_000)]);
        all.absorb(&thread(&[(2, 3, 9_000_000), (1, 2, 1_000_000)]));
        let ids: Vec<i32> = all.brokers.iter().map(|b| b.id).collect();
        assert_eq!(ids, [1, 2, 3]);
        let recs: Vec<u64> = all.brokers.iter().map(|b| b.records).collect();
        assert_eq!(recs, [2, 2, 1]);
        let parts: Vec<u64> = all.partitions.iter().map(|p| p.records).collect();
        assert_eq!(parts, [2, 2, 1]);
        assert_eq!(all.partitions[1].bytes, 200);
        let max = all.brokers[1].ack.max() as f64;
        assert!((max / 5e6 - 1.0).abs() < 1e-3, "{max}");
        assert_eq!(all.brokers[1].ack.len(), 2);
        // Every record is on one broker and one partition.
        let total: u64 = all.brokers.iter().map(|b| b.ack.len()).sum();
        assert_eq!(total, 5);
    }

    #[test]
    fn figures_read_back_merge_as_the_recording_did() {
        let placed = thread(&[(0, 1, 1_000_000), (2, 2, 3_000_000)]);
        let (b, p) = placed.figures();
        let json = serde_json::to_string(&(b, p)).unwrap();
        let (b, p): (Vec<PlaceFigures>, Vec<PlaceFigures>) = serde_json::from_str(&json).unwrap();
        let back = Placed::of_figures(&b, &p).expect("histograms kept");
        assert_eq!(back.brokers.len(), 2);
        assert_eq!(back.brokers[1].ack, placed.brokers[1].ack);
        assert_eq!(back.partitions[2].records, 1);
    }

    #[test]
    fn a_record_of_no_known_broker_counts_for_its_partition_only() {
        let mut r = PlaceRecorder::of_run(1, 3);
        r.acked(1, NO_BROKER, 2_000_000, 100, 0);
        let p = r.finish();
        assert!(p.brokers.is_empty());
        let recs: Vec<u64> = p.partitions.iter().map(|s| s.records).collect();
        assert_eq!(recs, [0, 1, 0]);
        assert!(PlaceRecorder::of_run(2, 3).finish().partitions.is_empty());
        // One record of a known broker among unknown ones: no broker's figures, not short ones.
        let mut r = PlaceRecorder::of_run(1, 3);
        let b = r.broker(2);
        r.acked(0, b, 1_000, 100, 0);
        r.acked(1, NO_BROKER, 1_000, 100, 0);
        let p = r.finish();
        assert!(p.brokers.is_empty());
        assert_eq!(p.partitions.iter().map(|s| s.records).sum::<u64>(), 2);
    }

    #[test]
    fn a_partition_out_of_range_counts_for_its_broker_only() {
        let p = thread(&[(7, 1, 1_000)]);
        assert_eq!(p.brokers[0].records, 1);
        assert!(p.partitions.iter().all(|s| s.records == 0));
    }
}
