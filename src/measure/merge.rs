//! Merging shards exactly: the `RunResult`s of one planned run measured by several machines
//! become the one `RunResult` a single machine would have measured.
//!
//! Counters are summed; latency families are HdrHistogram `add`s of the shards' histograms,
//! with every percentile read off the sum (never an average of percentiles, which means
//! nothing). Each shard's clock starts at its own measured start; the start barrier makes those
//! one instant, so the shards' t = 0 are taken as the same instant everywhere below: the span
//! from the earliest start to the latest end is the longest shard's elapsed time, and the time
//! series align by interval index.

mod extras;
mod series;

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::series::Planned;
use super::{new_histogram, Delivery, Internals, LatencySummary, RunResult, RunStatus};

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
pub fn merge(shards: &[&RunResult], schedule: &Planned) -> Result<RunResult, MergeError> {
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
        topic_config: first.topic_config.clone(),
        status: RunStatus::merged(shards.iter().map(|s| &s.status)),
        ..RunResult::default()
    };
    for s in shards {
        m.sent += s.sent;
        m.acked += s.acked;
        m.failed += s.failed;
        m.queue_full += s.queue_full;
        m.key_value_bytes += s.key_value_bytes;
        add_counts(&mut m.failed_by_kind, &s.failed_by_kind);
    }
    m.ack = latency(shards, "ack", |s| Some(&s.ack))?.unwrap_or_default();
    m.service = latency(shards, "service", |s| Some(&s.service))?.unwrap_or_default();
    m.send_delay = latency(shards, "send delay", |s| Some(&s.send_delay))?.unwrap_or_default();
    m.e2e = latency(shards, "e2e", |s| s.e2e.as_ref())?;
    // The barrier makes every shard's measured start one instant: the merged run spans from
    // it to the last shard's end.
    m.elapsed_secs = shards.iter().map(|s| s.elapsed_secs).fold(0.0, f64::max);
    if m.elapsed_secs > 0.0 {
        m.throughput_msgs = m.acked as f64 / m.elapsed_secs;
        m.throughput_bytes = m.key_value_bytes as f64 / m.elapsed_secs;
    }
    m.achieved_rate = achieved_rate(shards, m.sent);
    m.target_rate = schedule.rate.average();
    m.schedule_slip_secs = schedule
        .duration
        .map(|d| (m.elapsed_secs - d.as_secs_f64()).max(0.0));
    // RFC 3339 UTC text of one format orders as the instants do.
    m.started_at = shards.iter().filter_map(|s| s.started_at.clone()).min();
    m.delivery = delivery(shards);
    // Every shard measured the growth of the whole topic (they share it) over its own window;
    // the largest is the one that saw every shard's records. Summing would count it N times.
    m.set_disk_total(shards.iter().filter_map(|s| s.disk_bytes).max());
    m.internals = internals(shards);
    m.series = series::merge(shards, schedule)?;
    m.consume = extras::consume(shards)?;
    m.txn = extras::txn(shards)?;
    m.faults = extras::faults(shards)?;
    m.topics = extras::topics(shards);
    Ok(m)
}

pub(super) fn add_counts(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (kind, n) in from {
        *into.entry(kind.clone()).or_default() += n;
    }
}

/// One latency family of every shard, added into one histogram and summarised again. None
/// when no shard has the family (e.g. no consumer); a shard that recorded values but kept no
/// histogram is refused: its percentiles cannot be merged.
pub(super) fn latency(
    shards: &[&RunResult],
    family: &str,
    get: impl Fn(&RunResult) -> Option<&LatencySummary>,
) -> Result<Option<LatencySummary>, MergeError> {
    let mut sum: Option<Histogram<u64>> = None;
    for (k, s) in shards.iter().enumerate() {
        let Some(summary) = get(s) else { continue };
        let total = sum.get_or_insert_with(new_histogram);
        match summary.histogram() {
            Some(h) => add(total, h, family).map_err(|p| p.at(k))?,
            None if summary.count == 0 => {}
            None => {
                return Err(Problem::NoHistogram {
                    family: family.to_string(),
                    count: summary.count,
                }
                .at(k))
            }
        }
    }
    Ok(sum.map(|h| LatencySummary::from_histogram(&h)))
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

/// The send rate over the union of the shards' sending spans. A shard's span is recovered
/// from its own figure, (sent - 1) / rate; the spans start at the one barrier instant, so the
/// union is the longest of them (short by at most the few schedule gaps between the shards'
/// first records, well under 1 % of any run long enough to measure a rate).
fn achieved_rate(shards: &[&RunResult], sent: u64) -> f64 {
    let span = shards
        .iter()
        .filter(|s| s.sent > 1 && s.achieved_rate > 0.0)
        .map(|s| (s.sent - 1) as f64 / s.achieved_rate)
        .fold(0.0, f64::max);
    if sent > 1 && span > 0.0 {
        (sent - 1) as f64 / span
    } else {
        0.0
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

/// Producer internals: each average weighted by the records behind it (a shard that sent
/// twice as much weighs twice as much), requests summed.
fn internals(shards: &[&RunResult]) -> Internals {
    let avg = |f: fn(&Internals) -> Option<f64>| {
        let values: Vec<(f64, f64)> = shards
            .iter()
            .filter_map(|s| f(&s.internals).map(|x| (x, s.acked as f64)))
            .collect();
        weighted_mean(&values)
    };
    Internals {
        batch_bytes_avg: avg(|i| i.batch_bytes_avg),
        batch_records_avg: avg(|i| i.batch_records_avg),
        records_per_request: avg(|i| i.records_per_request),
        wire_ratio: avg(|i| i.wire_ratio),
        produce_requests: shards.iter().map(|s| s.internals.produce_requests).sum(),
    }
}

/// The mean of `(value, weight)`s; the plain mean when every weight is 0; None for none.
pub(super) fn weighted_mean(values: &[(f64, f64)]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let weight: f64 = values.iter().map(|(_, w)| w).sum();
    Some(if weight > 0.0 {
        values.iter().map(|(x, w)| x * w).sum::<f64>() / weight
    } else {
        values.iter().map(|(x, _)| x).sum::<f64>() / values.len() as f64
    })
}

#[cfg(test)]
mod tests;
