//! Churn: a consumer group's members leaving and rejoining (`stop consumer N`), and what each
//! handover cost, event by event.
//!
//! Every partition-second in `rebalance.stall` belongs to exactly one row. A stall belongs to
//! the event whose handover started it: the last event at or before its start. What began
//! before the first event is the group's join (a row of its own when any of it reaches into
//! the measured phase: a cooperative join's second rebalance can stall partitions 3 s into
//! it). A member stopped at 0 s leaves before the clock starts, so that it reads no measured
//! record: its leave is timed when it really happened, before the clock, and the stalls it
//! started are its own, not the join's. Partition-seconds count from the clock's start, as
//! `rebalance.stall` does (`measure::stalls`); the longest stall counts whole.

use serde::{Deserialize, Serialize};

use super::FaultRecord;
use crate::measure::{stalls, SeriesPoint, TimeSeries};

/// A member leaving its group (`stop consumer N` fired) or rejoining it (its end), and what
/// followed until the next such event: the partitions' stalls that began in that stretch (a
/// stall is owed to the event whose handover started it) and how long the group's lag took to
/// come back to its level before the event. The group's join is a row too (`join`): the
/// stalls that began before the first event.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChurnEvent {
    /// `consumer 2 left`, `consumer 2 rejoined`, or the join's row.
    pub event: String,
    /// When it happened, seconds from the start of the measured phase: negative before the
    /// clock (a member stopped at 0 s leaves before it). The join's row: its first stall's
    /// start.
    pub at_secs: f64,
    /// The stalls that began from it until the next event and reached into the measured
    /// phase: how many, their partition-seconds within the phase (12 partitions unread for
    /// 1 s is 12 s), and the longest, whole.
    pub stalls: u64,
    pub stalled_secs: f64,
    pub longest_secs: f64,
    /// Records read again from it until the next event (a handover re-reads from the last
    /// commit), to 100 ms: the redeliveries' slots that begin in that span.
    #[serde(default)]
    pub redelivered: u64,
    /// The event → the end of the first interval of the time series whose lag was back at its
    /// level before the event, after rising above it (`lag_back`; the series' resolution); 0
    /// when it did not rise before the next event. None without a series with lag, without
    /// an interval before the event to take the level from (an event at the clock's start),
    /// or not back before the run ended.
    pub lag_back_secs: Option<f64>,
    /// The row of the group's join: the stalls that began before the first event.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub join: bool,
}

/// Events of one kind this close together are one: members stopped or started by one line
/// each at the same time (a scale-out from 2 to 6 is four starts at once).
const SAME_INSTANT_SECS: f64 = 0.1;

/// The consumers' leaves and rejoins, in time order, each with the stalls that began from it
/// until the next one and its lag's way back (`ChurnEvent`), after the join's row when the
/// join's stalls reach into the measured phase. `stalls` are the read side's, `(from, to)` in
/// ns from the measured start. Leaves (or rejoins) at the same instant are one event. No
/// member left or rejoined: no rows.
pub(crate) fn churn(
    actions: &[FaultRecord],
    stalls: &[(i64, i64)],
    redeliveries: &[(i64, u64)],
    series: Option<&TimeSeries>,
) -> Vec<ChurnEvent> {
    let events = events(actions);
    let Some(first) = events.first() else {
        return Vec::new();
    };
    let ns = |s: f64| (s * 1e9).round() as i64;
    let mut rows = Vec::with_capacity(events.len() + 1);
    let join = owed(stalls, redeliveries, i64::MIN, ns(first.0));
    if join.stalls > 0 || join.redelivered > 0 {
        let began: Vec<i64> = stalls
            .iter()
            .filter(|s| stalls::measured(s) && s.0 < ns(first.0))
            .map(|s| s.0)
            .collect();
        rows.push(ChurnEvent {
            event: if began.iter().all(|b| *b < 0) {
                "the group's join before the clock".into()
            } else {
                "the group's join and its rebalances before the first event".into()
            },
            at_secs: began.iter().min().map_or(first.0, |b| *b as f64 / 1e9),
            join: true,
            ..join
        });
    }
    for (i, (at, event)) in events.iter().enumerate() {
        let next = events.get(i + 1).map_or(f64::INFINITY, |e| e.0);
        let until = events.get(i + 1).map_or(i64::MAX, |e| ns(e.0));
        rows.push(ChurnEvent {
            event: event.clone(),
            at_secs: *at,
            lag_back_secs: series.and_then(|s| lag_back(s, *at, next)),
            ..owed(stalls, redeliveries, ns(*at), until)
        });
    }
    rows
}

/// The leaves and rejoins, grouped where they came at the same instant, in time order.
fn events(actions: &[FaultRecord]) -> Vec<(f64, String)> {
    // (when, what, which consumer)
    let mut single: Vec<(f64, &str, u32)> = Vec::new();
    for a in actions {
        let (Some(n), Some(fired)) = (a.consumer, a.fired_secs) else {
            continue;
        };
        single.push((fired, "left", n));
        if let Some(ended) = a.ended_secs {
            single.push((ended, "rejoined", n));
        }
    }
    single.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
    let mut grouped: Vec<(f64, &str, Vec<u32>)> = Vec::new();
    for (at, what, n) in single {
        match grouped.last_mut() {
            Some(g) if g.1 == what && at - g.0 < SAME_INSTANT_SECS => g.2.push(n),
            _ => grouped.push((at, what, vec![n])),
        }
    }
    grouped
        .into_iter()
        .map(|(at, what, mut ns)| {
            ns.sort_unstable();
            (at, format!("{} {what}", members(&ns)))
        })
        .collect()
}

/// The stalls that began in `[from, until)` and reached into the measured phase, and the
/// redeliveries of that span (ns from the measured start).
fn owed(stalls: &[(i64, i64)], redeliveries: &[(i64, u64)], from: i64, until: i64) -> ChurnEvent {
    let mine: Vec<&(i64, i64)> = stalls
        .iter()
        .filter(|s| stalls::measured(s) && s.0 >= from && s.0 < until)
        .collect();
    ChurnEvent {
        stalls: mine.len() as u64,
        stalled_secs: mine.iter().map(|s| stalls::within(s)).sum::<i64>() as f64 / 1e9,
        longest_secs: mine.iter().map(|s| stalls::length(s)).max().unwrap_or(0) as f64 / 1e9,
        redelivered: redeliveries
            .iter()
            .filter(|(slot, _)| *slot >= from && *slot < until)
            .map(|(_, n)| n)
            .sum(),
        ..ChurnEvent::default()
    }
}

/// `consumer 2`, `consumers 2 and 3`, `consumers 2, 3, 4 and 5`.
fn members(ns: &[u32]) -> String {
    match ns {
        [n] => format!("consumer {n}"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(u32::to_string).collect();
            format!("consumers {} and {last}", init.join(", "))
        }
        [] => "no consumer".into(),
    }
}

/// From `at` to the end of the first series interval whose lag is back at its level before
/// `at` after it rose above it. The level is the median lag at the ends of the (up to) five
/// intervals that ended at or before `at` (a median leaves out a spike of the event before);
/// lag at an interval's end moves with the records in flight, so within twice the level plus
/// 1 % of an interval's records it is at its level. 0 when the lag did not rise above it
/// before `until` (the next event). None when no interval ended before `at`, or the lag was
/// not back before the run ended.
fn lag_back(series: &TimeSeries, at: f64, until: f64) -> Option<f64> {
    let end = |p: &SeriesPoint| p.t_secs + p.span_secs;
    let before: Vec<u64> = series
        .points
        .iter()
        .filter(|p| end(p) <= at + 1e-9)
        .filter_map(|p| p.lag)
        .collect();
    let median = |mut v: Vec<u64>| {
        v.sort_unstable();
        v.get(v.len() / 2).copied()
    };
    let from = before.len().saturating_sub(LAG_LEVEL_INTERVALS);
    let level = median(before[from..].to_vec())?;
    // Lag at an interval's end moves by the records in flight: within twice the level plus
    // 1 % of an interval's records, it has not left its level.
    let acked: Vec<u64> = series
        .points
        .iter()
        .filter(|p| end(p) <= at + 1e-9)
        .map(|p| p.acked)
        .collect();
    let band = 2 * level
        + median(acked[acked.len().saturating_sub(LAG_LEVEL_INTERVALS)..].to_vec()).unwrap_or(0)
            / 100;
    let mut after = series
        .points
        .iter()
        .filter(|p| end(p) > at + 1e-9)
        .filter_map(|p| Some((end(p), p.lag?)));
    // The handover may start a heartbeat or two after the event: the lag is looked at until
    // the next event. Never above the level by then: 0.
    if !after.any(|(t, lag)| lag > band && t <= until + 1e-9) {
        return Some(0.0);
    }
    after.find(|(_, lag)| *lag <= band).map(|(t, _)| t - at)
}

/// How many interval ends before a churn event make its lag's level (`lag_back`).
const LAG_LEVEL_INTERVALS: usize = 5;

#[cfg(test)]
#[path = "churn_tests.rs"]
mod tests;
