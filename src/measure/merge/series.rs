//! The shards' time series read back into interval buckets, to merge as the threads' do:
//! interval i of every shard is one interval, since each shard's t = 0 is its own measured
//! start and the start barrier makes those one instant.

use hdrhistogram::Histogram;

use super::{add, MergeError, Problem};
use crate::measure::codec;
use crate::measure::intervals::{new_interval_histogram, IntervalCounts};
use crate::measure::series::{Intervals, TimeSeries};
use crate::measure::RunResult;

/// Each shard's series as interval buckets, in the shards' order; None for a shard that kept
/// none. A shard that sent nothing and kept no series (it failed before measuring) adds
/// nothing and is passed over; one that sent records and kept none is refused, as are
/// intervals of different widths.
pub(super) fn intervals(shards: &[&RunResult]) -> Result<Vec<Option<Intervals>>, MergeError> {
    let Some(first) = shards.iter().find_map(|s| s.series.as_ref()) else {
        return Ok(vec![None; shards.len()]);
    };
    if let Some(k) = shards.iter().position(|s| s.series.is_none() && s.sent > 0) {
        return Err(Problem::NoSeries {
            sent: shards[k].sent,
        }
        .at(k));
    }
    let w = first.interval_secs;
    // Latency by due time merges only when every shard that measured kept it: part of them
    // would be a window's figure over some shards' records.
    let by_due = shards
        .iter()
        .filter(|s| s.series.is_some())
        .all(|s| s.recording.due.is_some());
    let mut all = Vec::with_capacity(shards.len());
    for (k, s) in shards.iter().enumerate() {
        let Some(series) = &s.series else {
            all.push(None);
            continue;
        };
        if (series.interval_secs - w).abs() > 1e-9 {
            return Err(Problem::IntervalMismatch {
                expected: w,
                found: series.interval_secs,
            }
            .at(k));
        }
        let mut i = read_back(series).map_err(|p| p.at(k))?;
        if let Some(due) = s.recording.due.as_ref().filter(|_| by_due) {
            i.due = Some(due.read_back().map_err(|reason| {
                Problem::BadHistogram {
                    family: "due-time".into(),
                    reason,
                }
                .at(k)
            })?);
        }
        all.push(Some(i));
    }
    Ok(all)
}

/// One shard's series as the buckets it was derived from. A file of an older kafkabench kept
/// no backlog reads, so its merged lag counts measured records only.
fn read_back(series: &TimeSeries) -> Result<Intervals, Problem> {
    let w = series.interval_secs;
    let mut i = Intervals {
        width_ns: (w * 1e9).round() as u64,
        consumer: series.points.iter().any(|p| p.consumed.is_some()),
        // Aligned by index, as the merge aligns them: the last interval starts at (n - 1)·w.
        end_ns: series.points.last().map_or(0, |p| {
            let t = (series.points.len() - 1) as f64 * w;
            ((t + p.span_secs) * 1e9).round() as u64
        }),
        ..Intervals::default()
    };
    for p in &series.points {
        i.counts.push(IntervalCounts {
            sent: p.sent,
            acked: p.acked,
            failed: p.failed,
            bytes: p.bytes,
            consumed: p.consumed.unwrap_or(0),
            backlog_read: p.backlog_read,
            unreadable: p.unreadable,
            aborted_read: p.aborted_read,
        });
        i.ack
            .push(decode(p.ack_histogram.as_deref(), p.acked, "ack")?);
        let read = p.consumed.unwrap_or(0);
        i.e2e.push(decode(p.e2e_histogram.as_deref(), read, "e2e")?);
    }
    Ok(i)
}

/// One interval's histogram. An interval that counted `records` with a latency and kept no
/// histogram (a file of an older kafkabench) cannot be merged exactly.
fn decode(
    encoded: Option<&str>,
    records: u64,
    family: &str,
) -> Result<Option<Histogram<u64>>, Problem> {
    let Some(text) = encoded else {
        if records == 0 {
            return Ok(None);
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
    let mut into = new_interval_histogram();
    add(&mut into, &h, family)?;
    Ok(Some(into))
}
