//! Merging the shards' time series: interval i of every shard is one interval, since each
//! shard's t = 0 is its own measured start and the start barrier makes those one instant.
//! Counts are summed, interval histograms added (exact), percentiles read off the sums.

use hdrhistogram::Histogram;

use super::{add, MergeError, Problem};
use crate::measure::codec;
use crate::measure::intervals::new_interval_histogram;
use crate::measure::series::{latency as interval_latency, Planned, SeriesPoint, TimeSeries};
use crate::measure::RunResult;

/// The merged series; None when no shard kept one. A shard that sent nothing and kept no
/// series (it failed before measuring) adds nothing and is passed over.
pub(super) fn merge(
    shards: &[&RunResult],
    schedule: &Planned,
) -> Result<Option<TimeSeries>, MergeError> {
    let kept: Vec<&TimeSeries> = shards.iter().filter_map(|s| s.series.as_ref()).collect();
    let Some(first) = kept.first() else {
        return Ok(None);
    };
    if let Some(k) = shards.iter().position(|s| s.series.is_none() && s.sent > 0) {
        return Err(Problem::NoSeries {
            sent: shards[k].sent,
        }
        .at(k));
    }
    let w = first.interval_secs;
    for (k, s) in shards.iter().enumerate() {
        let Some(series) = &s.series else { continue };
        if (series.interval_secs - w).abs() > 1e-9 {
            return Err(Problem::IntervalMismatch {
                expected: w,
                found: series.interval_secs,
            }
            .at(k));
        }
    }
    let n = kept.iter().map(|s| s.points.len()).max().unwrap_or(0);
    let consumer = kept
        .iter()
        .any(|s| s.points.iter().any(|p| p.consumed.is_some()));
    let (mut acked_total, mut consumed_total) = (0u64, 0u64);
    let mut points = Vec::with_capacity(n);
    for i in 0..n {
        let t = i as f64 * w;
        let at: Vec<(usize, &SeriesPoint)> = shards
            .iter()
            .enumerate()
            .filter_map(|(k, s)| Some((k, s.series.as_ref()?.points.get(i)?)))
            .collect();
        let mut p = SeriesPoint {
            t_secs: t,
            // Only the last interval is cut short: before it, some shard was still running.
            span_secs: if i + 1 == n {
                at.iter().map(|(_, p)| p.span_secs).fold(0.0, f64::max)
            } else {
                w
            },
            target_rate: schedule.rate_over(t, t + w),
            ..SeriesPoint::default()
        };
        let (mut ack, mut e2e) = (None, None);
        for (k, q) in &at {
            p.sent += q.sent;
            p.acked += q.acked;
            p.failed += q.failed;
            p.bytes += q.bytes;
            if let Some(c) = q.consumed {
                *p.consumed.get_or_insert(0) += c;
            }
            add_encoded(&mut ack, q.ack_histogram.as_deref(), q.acked, "ack")
                .map_err(|e| e.at(*k))?;
            let read = q.consumed.unwrap_or(0);
            add_encoded(&mut e2e, q.e2e_histogram.as_deref(), read, "e2e").map_err(|e| e.at(*k))?;
        }
        acked_total += p.acked;
        (p.ack_p50_ms, p.ack_p99_ms, p.ack_max_ms, p.ack_histogram) =
            interval_latency(ack.as_ref());
        if consumer {
            let consumed = *p.consumed.get_or_insert(0);
            consumed_total += consumed;
            p.lag = Some(acked_total.saturating_sub(consumed_total));
            (p.e2e_p50_ms, p.e2e_p99_ms, p.e2e_max_ms, p.e2e_histogram) =
                interval_latency(e2e.as_ref());
        }
        points.push(p);
    }
    Ok(Some(TimeSeries {
        interval_secs: w,
        points,
    }))
}

/// Adds one shard's interval histogram into `into`. An interval that counted `records` with a
/// latency and kept no histogram (a file of an older kafkabench) cannot be merged exactly.
fn add_encoded(
    into: &mut Option<Histogram<u64>>,
    encoded: Option<&str>,
    records: u64,
    family: &str,
) -> Result<(), Problem> {
    let Some(text) = encoded else {
        if records == 0 {
            return Ok(());
        }
        return Err(Problem::NoHistogram {
            family: format!("interval {family}"),
            count: records,
        });
    };
    let h = codec::decode(text).map_err(|reason| Problem::BadHistogram {
        family: format!("interval {family}"),
        reason,
    })?;
    add(into.get_or_insert_with(new_interval_histogram), &h, family)
}
