//! Merging shards exactly: the `RunResult`s of one planned run measured by several machines
//! become the one `RunResult` a single machine would have measured.
//!
//! Each shard's result is read back into its raw [`Recording`] and the recordings merge as the
//! threads' do (`Recording::absorb`), the figures derived once from the merged one: counters
//! and librdkafka's statistics summed, latency histograms added (every percentile read off the
//! sum, never an average of percentiles), averages ratios of the sums. Each shard's clock
//! starts at its own measured start; the start barrier makes those one instant, so the shards'
//! t = 0 are taken as the same instant everywhere below: the send spans overlay, and the time
//! series align by interval index.

mod series;

use hdrhistogram::Histogram;

use super::recording::{ProducerStats, RawSums, Recording, SendSpan};
use super::series::{Intervals, Planned};
use super::timeline::PartitionTimeline;
use super::ReadPlaces;
use super::{
    new_histogram, ConsumeFigures, Delivery, Internals, LatencySummary, ReadSums, RunResult,
    RunStatus,
};

/// Why the shards' results of one run cannot be merged; `shard` indexes the slice given to
/// [`merge`], so the caller can name the file or pod.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{problem}")]
pub struct MergeError {
    pub shard: usize,
    pub problem: Problem,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    #[error("nothing to merge")]
    Nothing,
    #[error(
        "it holds run {found_index} `{found}` where the first holds run {index} `{label}`: \
         not the same planned run"
    )]
    NotTheSameRun {
        index: usize,
        label: String,
        found_index: usize,
        found: String,
    },
    #[error(
        "its {family} latency has {count} records and no histogram, so it cannot be merged \
         exactly (re-run with this kafkabench and --json: result files keep the histograms)"
    )]
    NoHistogram { family: String, count: u64 },
    #[error(
        "its value sizes count {count} records and keep no histogram, so they cannot be merged \
         exactly"
    )]
    NoSizeHistogram { count: u64 },
    #[error("its {family} histogram cannot be read: {reason}")]
    BadHistogram { family: String, reason: String },
    #[error(
        "its time series has {found}s intervals where the first has {expected}s: run every \
         shard with the same --interval"
    )]
    IntervalMismatch { expected: f64, found: f64 },
    #[error(
        "it sent {sent} records and kept no time series, so the merged series would not add up"
    )]
    NoSeries { sent: u64 },
    #[error(
        "its fault figures come without their recording (`recording.faults`: an older \
         kafkabench's file), so the merged unavailability could not be exact"
    )]
    NoFaultRecording,
}

impl Problem {
    fn at(self, shard: usize) -> MergeError {
        MergeError {
            shard,
            problem: self,
        }
    }
}

/// The one result of a planned run from its shards' results. `schedule` is the run's whole
/// schedule (every shard's share together), from the plan: the target rates come from it.
pub(crate) fn merge(shards: &[&RunResult], schedule: &Planned) -> Result<RunResult, MergeError> {
    let first = *shards.first().ok_or(Problem::Nothing.at(0))?;
    for (k, s) in shards.iter().enumerate() {
        if s.index != first.index || s.label != first.label {
            return Err(Problem::NotTheSameRun {
                index: first.index,
                label: first.label.clone(),
                found_index: s.index,
                found: s.label.clone(),
            }
            .at(k));
        }
    }
    let mut m = RunResult {
        index: first.index,
        label: first.label.clone(),
        coords: first.coords.clone(),
        topic: first.topic.clone(),
        // The effective settings are the scenario's, the same on every shard.
        producer_config: first.producer_config.clone(),
        consumer_config: first.consumer_config.clone(),
        producer_client: first.producer_client.clone(),
        consumer_client: first.consumer_client.clone(),
        seed: first.seed,
        topic_config: first.topic_config.clone(),
        status: RunStatus::merged(shards.iter().map(|s| &s.status)),
        ..RunResult::default()
    };
    let intervals = series::intervals(shards)?;
    let mut all = Recording::empty();
    for (k, (s, i)) in shards.iter().zip(intervals).enumerate() {
        all.absorb(&recording(s, i).map_err(|p| p.at(k))?);
    }
    // A shard that acknowledged records without keeping them by broker (the Java client, an
    // older kafkabench), or by partition, would leave the merged figures short: none are
    // shown rather than part. Each is judged alone: the Java client keeps partitions only.
    if let Some(p) = all.placed.as_mut() {
        let lacks = |none: fn(&RunResult) -> bool| shards.iter().any(|s| s.acked > 0 && none(s));
        if lacks(|s| s.brokers.is_empty()) {
            p.brokers.clear();
        }
        if lacks(|s| s.partitions.is_empty()) {
            p.partitions.clear();
        }
    }
    // The whole schedule, not a shard's share: the target is the run's.
    all.derive(&mut m, schedule, 1);
    // RFC 3339 UTC text of one format orders as the instants do.
    m.started_at = shards.iter().filter_map(|s| s.started_at.clone()).min();
    m.delivery = delivery(shards);
    // Every shard measured the growth of the whole topic (they share it) over its own window;
    // the largest is the one that saw every shard's records. Summing would count it N times.
    m.set_disk_total(shards.iter().filter_map(|s| s.disk_bytes).max());
    m.recording.read = read_side(shards);
    // A shard that had no CPU to spare limits the merged run as it would one machine's.
    m.generator = crate::measure::GeneratorLoad::busiest(
        shards
            .iter()
            .enumerate()
            .filter_map(|(k, s)| Some((k, s.generator?))),
    );
    for (k, s) in shards.iter().enumerate() {
        if s.faults.is_some() && s.recording.faults.is_none() {
            return Err(Problem::NoFaultRecording.at(k));
        }
        m.recording
            .absorb_other_sides(&s.recording)
            .map_err(|p| p.at(k))?;
    }
    m.derive_sides();
    by_partition(&mut m, shards, schedule.backlog);
    Ok(m)
}

/// The shards' figures by partition and counts over time, merged: kept only when every shard
/// that acknowledged (or read) kept them, since part of them would not add up.
fn by_partition(m: &mut RunResult, shards: &[&RunResult], backlog: u64) {
    let mut acked: Option<PartitionTimeline> = None;
    let mut read: Option<ReadPlaces> = None;
    let (mut acked_whole, mut read_whole) = (true, true);
    for s in shards {
        match s.partition_counts.as_ref().map(|c| c.timelines()) {
            Some((a, r)) => {
                acked
                    .get_or_insert_with(PartitionTimeline::default)
                    .absorb(&a);
                let from_file = ReadPlaces::of_figures(&s.read_partitions);
                match (from_file, r) {
                    (Some(mut f), Some(r)) if !f.is_empty() => {
                        f.over_time = Some(r);
                        read.get_or_insert_with(ReadPlaces::default).absorb(&f);
                    }
                    _ => read_whole &= s.consume.is_none(),
                }
            }
            None => {
                acked_whole &= s.acked == 0;
                read_whole &= s.consume.is_none();
            }
        }
    }
    let width = m.series.as_ref().map_or(0.0, |s| s.interval_secs);
    let lag = super::consume::lag_measured(m, backlog);
    m.set_by_partition(
        acked.as_ref().filter(|_| acked_whole),
        read.as_ref().filter(|_| read_whole),
        width,
        lag && acked_whole,
    );
}

/// `summary`'s histogram added into `total` (started when None): refused when it has
/// records and no histogram.
pub(crate) fn add_summary(
    total: &mut Option<Histogram<u64>>,
    summary: &LatencySummary,
    family: &str,
) -> Result<(), Problem> {
    let sum = total.get_or_insert_with(new_histogram);
    match summary.histogram() {
        Some(h) => add(sum, h, family),
        None if summary.count == 0 => Ok(()),
        None => Err(Problem::NoHistogram {
            family: family.to_string(),
            count: summary.count,
        }),
    }
}

/// `h` added into `total`, value by value: exact for histograms of one configuration (every
/// kafkabench histogram), and bounded by `total`'s range otherwise.
pub(super) fn add(
    total: &mut Histogram<u64>,
    h: &Histogram<u64>,
    family: &str,
) -> Result<(), Problem> {
    total.add(h).map_err(|e| Problem::BadHistogram {
        family: family.to_string(),
        reason: format!("{e:?}"),
    })
}

/// A shard's result read back into the recording it was derived from: its histograms decoded
/// (refused when it has records and no histogram: percentiles cannot be merged), its sums.
fn recording(s: &RunResult, intervals: Option<Intervals>) -> Result<Recording, Problem> {
    let hist = |family: &str, summary: &LatencySummary| match summary.histogram() {
        Some(h) => {
            let mut total = new_histogram();
            add(&mut total, h, family)?;
            Ok(total)
        }
        None if summary.count == 0 => Ok(new_histogram()),
        None => Err(Problem::NoHistogram {
            family: family.to_string(),
            count: summary.count,
        }),
    };
    let raw = s
        .recording
        .producer
        .clone()
        .unwrap_or_else(|| older_sums(s));
    Ok(Recording {
        sent: raw.sent,
        acked: raw.acked,
        failed: raw.failed,
        failed_by_kind: raw.failed_by_kind,
        queue_full: raw.queue_full,
        key_value_bytes: raw.key_value_bytes,
        ack: hist("ack", &s.ack)?,
        service: hist("service", &s.service)?,
        send_delay: hist("send delay", &s.send_delay)?,
        e2e: s.e2e.as_ref().map(|e| hist("e2e", e)).transpose()?,
        sizes: match &s.sizes {
            Some(z) => Some(sizes(z)?),
            None => None,
        },
        span: raw.span,
        stats: raw.stats,
        client: raw.client,
        intervals,
        placed: match super::Placed::of_figures(&s.brokers, &s.partitions) {
            Some(p) if p.is_empty() => None,
            Some(p) => Some(p),
            None => {
                return Err(Problem::NoHistogram {
                    family: "per-broker ack".into(),
                    count: s.acked,
                })
            }
        },
    })
}

/// A shard's value sizes read back into their histogram (refused without one, as a latency).
fn sizes(s: &super::SizeSummary) -> Result<Histogram<u64>, Problem> {
    let mut total = new_histogram();
    match s.histogram() {
        Some(h) => add(&mut total, h, "value size")?,
        None if s.count == 0 => {}
        None => return Err(Problem::NoSizeHistogram { count: s.count }),
    }
    Ok(total)
}

/// The sums of a file of an older kafkabench, which kept figures only. The send span starts at
/// the barrier and lasts (sent - 1) / achieved rate; the batches behind the averages are
/// estimated from the acked records (acked / records per batch), so a shard weighs by its
/// batches as a single machine's average does.
pub(super) fn older_sums(s: &RunResult) -> RawSums {
    let ns = |secs: f64| (secs * 1e9).round() as u64;
    let span = SendSpan {
        start_ns: Some(0),
        first_send_ns: (s.sent > 0).then_some(0),
        last_send_ns: if s.sent > 1 && s.achieved_rate > 0.0 {
            ns((s.sent - 1) as f64 / s.achieved_rate)
        } else {
            0
        },
        last_ack_ns: ns(s.elapsed_secs),
    };
    let Internals {
        batch_bytes_avg,
        batch_records_avg,
        records_per_request,
        wire_ratio,
        produce_requests,
        ..
    } = s.internals;
    let batches = batch_records_avg
        .filter(|a| *a > 0.0)
        .map_or(0.0, |a| s.acked as f64 / a);
    let n = |x: f64| x.round().max(0.0) as u64;
    let batch_bytes = batch_bytes_avg.map_or(0.0, |b| b * batches);
    let stats = ProducerStats {
        batch_bytes: n(batch_bytes),
        batch_bytes_batches: batch_bytes_avg.map_or(0, |_| n(batches)),
        batch_records: batch_records_avg.map_or(0, |_| s.acked),
        batch_records_batches: n(batches),
        records: records_per_request.map_or(0, |r| n(r * produce_requests as f64)),
        record_bytes: wire_ratio.map_or(0, |w| n(w * batch_bytes)),
        produce_requests,
    };
    RawSums {
        span,
        stats,
        ..counts_of(s)
    }
}

/// The counters of a file that kept them only as the run's fields (schema version 2).
pub(super) fn counts_of(s: &RunResult) -> RawSums {
    RawSums {
        sent: s.sent,
        acked: s.acked,
        failed: s.failed,
        failed_by_kind: s.failed_by_kind.clone(),
        queue_full: s.queue_full,
        key_value_bytes: s.key_value_bytes,
        ..RawSums::default()
    }
}

/// The shards' read sides as one, from their sums, so the figures are derived as one
/// machine's are (the lag from the merged series); None when no shard read.
fn read_side(shards: &[&RunResult]) -> Option<ReadSums> {
    let mut all: Option<ReadSums> = None;
    for s in shards {
        let Some(c) = &s.consume else { continue };
        let sums = s
            .recording
            .read
            .clone()
            .unwrap_or_else(|| older_read_sums(c));
        match &mut all {
            Some(all) => all.absorb(&sums),
            None => all = Some(sums),
        }
    }
    all
}

/// The read sums of a file of an older kafkabench, which kept figures only: reading spans
/// (records / rate) from the measured start, the bytes fetched are requests × their average.
/// Its stalls are not in the file (a sharded run has no group, so it had none).
pub(super) fn older_read_sums(c: &ConsumeFigures) -> ReadSums {
    let ns = |secs: f64| (secs * 1e9).round() as i64;
    let reading = (c.records > 0 && c.throughput_msgs > 0.0)
        .then(|| ns(c.records as f64 / c.throughput_msgs));
    ReadSums {
        consumers: c.consumers,
        commit: c.commit.clone(),
        records: c.records,
        bytes: c.bytes,
        redelivered: c.redelivered,
        aborted_read: c.aborted_read,
        fetch_requests: c.fetch_requests,
        fetch_bytes: c
            .fetch_bytes_avg
            .map(|avg| (avg * c.fetch_requests.unwrap_or(0) as f64).round() as u64),
        first_read_ns: reading.map(|_| 0),
        last_read_ns: reading,
        stalls: Vec::new(),
        redeliveries: Vec::new(),
        rebalances: c.rebalances,
        drained_ns: c.drain_secs.map(ns),
        // Older files had no cold backlog, nor fetch round trips.
        cold_records: None,
        cold_held: None,
        fetch_trips: None,
    }
}

/// Delivery summed: each shard's consumer verified its own producers' records. A shard
/// without delivery figures (it failed before its consumer ran) makes the sum incomplete, so
/// nothing is called lost.
fn delivery(shards: &[&RunResult]) -> Option<Delivery> {
    let present: Vec<&Delivery> = shards.iter().filter_map(|s| s.delivery.as_ref()).collect();
    if present.is_empty() {
        return None;
    }
    let incomplete = present.len() < shards.len() || present.iter().any(|d| d.incomplete);
    let lost = if incomplete {
        None
    } else {
        present.iter().map(|d| d.lost).sum::<Option<u64>>()
    };
    Some(Delivery {
        consumed: present.iter().map(|d| d.consumed).sum(),
        lost,
        incomplete,
        failed_but_delivered: present.iter().map(|d| d.failed_but_delivered).sum(),
        duplicated: present.iter().map(|d| d.duplicated).sum(),
        reordered: present.iter().map(|d| d.reordered).sum(),
    })
}

#[cfg(test)]
mod tests;
