//! Windows over due time: the records *due* inside a fault window or a marked phase (by their
//! intended send time), whenever their ack or read came. A record due during a 20 s pause is
//! acknowledged after it; what the pause did to it is its latency, counted here.
//!
//! A window's edges are placed to the due intervals' width (`measure::due`, 100 ms): the
//! records of every due interval the window overlaps. The one marked phase so far is a
//! backlog's drain (`drain.ack.*`): the clock's start → every partition read to its end, and
//! beside it the same seconds of the run it is compared with, the one that differs from it in
//! one variable only and drained nothing (the scenario's step without the backlog).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::FailureAt;
use crate::measure::due::{DueSeries, DUE_WIDTH_NS};
use crate::measure::{LatencySummary, RunResult};
use crate::model::{LatencyKind, Stat};

/// The due intervals `windows` (seconds from the measured start, `[from, to]`) overlap, as
/// index spans `[from, to)`, sorted and merged.
pub(crate) fn spans(windows: &[(f64, f64)]) -> Vec<(u32, u32)> {
    let w = DUE_WIDTH_NS as f64 / 1e9;
    let mut out: Vec<(u32, u32)> = windows
        .iter()
        .map(|&(a, b)| {
            let from = (a.max(0.0) / w).floor() as u32;
            // A window ending exactly on an edge does not take the interval after it.
            let to = ((b.max(0.0) / w - 1e-9).floor() as u32 + 1).max(from + 1);
            (from, to)
        })
        .collect();
    out.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(out.len());
    for (a, b) in out {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// The latency of one side's records due in `spans`; None without a due-time recording, or
/// when none was due there.
pub(crate) fn latency(
    due: Option<&DueSeries>,
    spans: &[(u32, u32)],
    e2e: bool,
) -> Option<LatencySummary> {
    let h = due?.sum(e2e, spans)?;
    Some(LatencySummary::from_histogram(&h))
}

/// Records due in `spans` that failed, by kind.
pub(crate) fn failed(failures: &[FailureAt], spans: &[(u32, u32)]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for f in failures {
        let i = (f.due_ns / DUE_WIDTH_NS).min(u64::from(u32::MAX)) as u32;
        if spans.iter().any(|(a, b)| (*a..*b).contains(&i)) {
            *out.entry(f.kind.clone()).or_default() += f.records;
        }
    }
    out
}

/// A phase of the measured run the scenario marks, and what the records due in it met.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PhaseFigures {
    /// The phase, seconds from the measured start.
    pub from_secs: f64,
    pub to_secs: f64,
    /// The live records due in it, to the due intervals' 100 ms: their ack and end-to-end
    /// latency, whenever their ack or read came. None when none was due (or none read).
    pub ack: Option<LatencySummary>,
    pub e2e: Option<LatencySummary>,
    /// Backlog records read over the run: the records the drain read (a cold backlog's, from
    /// remote storage).
    pub backlog_read: u64,
    /// The same seconds of the run this one is compared with, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beside: Option<Beside>,
}

/// Another run's records due in the same seconds as a phase of this one.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Beside {
    /// The run (index in the plan) and its label.
    pub run: usize,
    pub label: String,
    pub ack: Option<LatencySummary>,
    pub e2e: Option<LatencySummary>,
}

/// A run's drain: the clock's start → every partition read to its end, with a backlog; None
/// without one (or when it never drained).
pub(crate) fn drain(r: &RunResult) -> Option<PhaseFigures> {
    let to = r.recording.read.as_ref()?.drained_ns?.max(0) as f64 / 1e9;
    let spans = spans(&[(0.0, to)]);
    let due = r.recording.due.as_ref();
    Some(PhaseFigures {
        from_secs: 0.0,
        to_secs: to,
        ack: latency(due, &spans, false),
        e2e: latency(due, &spans, true),
        backlog_read: r
            .series
            .as_ref()
            .map_or(0, |s| s.points.iter().map(|p| p.backlog_read).sum()),
        beside: None,
    })
}

/// A drain metric of run `r` (`drain.ack.p99`), taken over the drain of `of` when `r` has no
/// drain of its own: `drain.ack.p99[step=live_only]` in an assertion about a run that drained
/// reads the live-only run's records due in the same seconds.
pub fn drain_metric(r: &RunResult, of: &RunResult, kind: LatencyKind, stat: Stat) -> Option<f64> {
    let own = r.drain.as_ref();
    let summary = match own {
        Some(d) => side(&d.ack, &d.e2e, kind)?.clone(),
        None => {
            let d = of.drain.as_ref()?;
            let spans = spans(&[(d.from_secs, d.to_secs)]);
            latency(r.recording.due.as_ref(), &spans, kind == LatencyKind::E2e)?
        }
    };
    summary.stat_secs(stat)
}

fn side<'a>(
    ack: &'a Option<LatencySummary>,
    e2e: &'a Option<LatencySummary>,
    kind: LatencyKind,
) -> Option<&'a LatencySummary> {
    match kind {
        LatencyKind::Ack => ack.as_ref(),
        LatencyKind::E2e => e2e.as_ref(),
        _ => None,
    }
}

/// Each drained run's `beside`: the run that differs from it in one variable only and drained
/// nothing (`step = live_only` beside `step = replay`), over the same seconds; none when no
/// run, or more than one, is such.
pub fn pair_drains(results: &mut [RunResult]) {
    let mut found: Vec<(usize, Beside)> = Vec::new();
    for (k, r) in results.iter().enumerate() {
        let Some(d) = &r.drain else { continue };
        let mut without = results
            .iter()
            .filter(|b| b.index != r.index && b.drain.is_none() && one_apart(r, b));
        let (Some(b), None) = (without.next(), without.next()) else {
            continue;
        };
        let spans = spans(&[(d.from_secs, d.to_secs)]);
        let due = b.recording.due.as_ref();
        found.push((
            k,
            Beside {
                run: b.index,
                label: b.label.clone(),
                ack: latency(due, &spans, false),
                e2e: latency(due, &spans, true),
            },
        ));
    }
    for (k, b) in found {
        if let Some(d) = &mut results[k].drain {
            d.beside = Some(b);
        }
    }
}

/// Whether two runs' coordinates differ in exactly one variable.
fn one_apart(a: &RunResult, b: &RunResult) -> bool {
    a.coords.len() == b.coords.len()
        && a.coords.keys().all(|k| b.coords.contains_key(k))
        && a.coords.iter().filter(|(k, v)| b.coords[*k] != **v).count() == 1
}

#[cfg(test)]
#[path = "windows_tests.rs"]
mod tests;
