//! Figures that describe a run's faults: unavailability, recovery, latency and failures within
//! the fault windows.
//!
//! The event thread keeps an [`AckTimeline`] per producer: one compare per delivery event, and
//! a gap pushed only when the acknowledgements stop for longer than [`GAP`]. The figures are
//! derived once, at the end, from those gaps, the actions as they happened and the time series.

mod churn;
mod windows;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{LatencySummary, ProducerRecording, RunResult, TimeSeries};
pub(crate) use windows::drain;
pub use windows::{drain_metric, pair_drains, Beside, PhaseFigures};

pub use churn::ChurnEvent;

/// A silence between two acknowledgements of one producer shorter than this is not a gap: the
/// resolution of `unavailable.time`. Records due further apart than this (a producer paced
/// under 10/s) make every pause between them a gap, which is what the figure then says.
pub(crate) const GAP_NS: u64 = 100_000_000;

/// `recovery.time`'s window, and what "back at the target rate" means: at least this share of
/// the records due in the window acknowledged in it.
const RECOVERY_WINDOW_SECS: f64 = 1.0;
const RECOVERED_SHARE: f64 = 0.9;

/// What a run's fault timeline did, and the figures within its windows; None on a run without
/// faults.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FaultFigures {
    /// Every action, with its time and outcome.
    pub actions: Vec<FaultRecord>,
    /// The fault windows, merged where they overlap: seconds from the start of the measured
    /// phase, `[from, to]`.
    #[serde(default)]
    pub windows: Vec<[f64; 2]>,
    /// The longest stretch with no successful acknowledgement from any producer, within the
    /// measured phase (100 ms resolution).
    pub unavailable_secs: Option<f64>,
    /// Fault end → the first 1 s window with acknowledgements back at the target rate (paced
    /// runs; the longest over the windows that end before the run does). None when not paced,
    /// or not back at the rate before the run ended.
    pub recovery_secs: Option<f64>,
    /// Latencies of the records *due* within the fault windows (by intended send time, to
    /// the due intervals' 100 ms: `windows`), whenever their ack or read came: what the
    /// faults did to the records they held up. None when none was due in them, and in files
    /// of an older kafkabench (which kept no latency by due time).
    pub ack: Option<LatencySummary>,
    pub e2e: Option<LatencySummary>,
    /// Records due within the fault windows that failed, by error kind.
    pub failed: u64,
    pub failed_by_kind: BTreeMap<String, u64>,
    /// Each consumer stopped and started again (`stop consumer N`): what the group's handover
    /// cost, event by event.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub churn: Vec<ChurnEvent>,
}

/// One action as it happened.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultRecord {
    /// The action as written.
    pub action: String,
    /// Planned and actual time from the start of the measured phase.
    pub at_secs: f64,
    pub fired_secs: Option<f64>,
    /// What it resolved to (`broker 2`), and its end, when it has one.
    pub target: Option<String>,
    pub ended_secs: Option<f64>,
    /// `ok`, or what went wrong (a command's exit status and output tail).
    pub outcome: String,
    /// The consumer a `stop consumer N` stopped (N, from 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<u32>,
}

/// One producer's acknowledgements over time, as the event thread saw them: when the first
/// and the last came, and every silence longer than [`GAP_NS`] between two of them. Times are
/// nanoseconds on the run's clock.
#[derive(Clone, Debug, Default)]
pub struct AckTimeline {
    /// Whether any acknowledgement came (`first_ns` is then set).
    pub started: bool,
    pub first_ns: u64,
    pub last_ns: u64,
    pub gaps: Vec<(u64, u64)>,
    /// Failure reports: (reported at, due at, error kind, records), one entry per kind per
    /// event. Failures are rare; the success path never touches this.
    pub failures: Vec<Failure>,
}

#[derive(Clone, Debug)]
pub struct Failure {
    pub reported_ns: u64,
    pub due_ns: u64,
    pub kind: String,
    pub records: u64,
}

impl AckTimeline {
    /// Acknowledgements arrived at `now_ns`: a compare, and a gap pushed only after a silence.
    #[inline]
    pub fn acked(&mut self, now_ns: u64) {
        if now_ns > self.last_ns + GAP_NS || !self.started {
            self.gap(now_ns);
        }
        self.last_ns = now_ns;
    }

    #[cold]
    fn gap(&mut self, now_ns: u64) {
        if self.started {
            self.gaps.push((self.last_ns, now_ns));
        } else {
            self.started = true;
            self.first_ns = now_ns;
        }
    }

    /// A record due at `due_ns` reported failed at `now_ns`.
    pub fn failed(&mut self, now_ns: u64, due_ns: u64, kind: &str) {
        match self.failures.last_mut() {
            Some(f) if f.reported_ns == now_ns && f.due_ns == due_ns && f.kind == kind => {
                f.records += 1
            }
            _ => self.failures.push(Failure {
                reported_ns: now_ns,
                due_ns,
                kind: kind.to_string(),
                records: 1,
            }),
        }
    }

    /// The stretches in which this producer got no acknowledgement, from `origin_ns` to its
    /// last send: before the first, the gaps, and after the last.
    fn silences(&self, origin_ns: u64, last_send_ns: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(self.gaps.len() + 2);
        if !self.started {
            if last_send_ns > origin_ns {
                out.push((origin_ns, last_send_ns));
            }
            return out;
        }
        if self.first_ns > origin_ns + GAP_NS {
            out.push((origin_ns, self.first_ns));
        }
        out.extend(self.gaps.iter().copied());
        if last_send_ns > self.last_ns + GAP_NS {
            out.push((self.last_ns, last_send_ns));
        }
        out
    }
}

/// What a run's fault timeline needs besides the time series and the read side's sums: the
/// actions as they happened, the stretches in which no producer got an acknowledgement, and
/// every failure report. Times are nanoseconds from the start of the measured phase. Shards of
/// one run absorb each other's exactly: a stretch without an ack anywhere is the intersection
/// of every side's stretches, as a single machine intersects its producers'.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultSums {
    pub actions: Vec<FaultRecord>,
    /// `[from, to]`, sorted and disjoint; None without producers.
    pub silences: Option<Vec<[u64; 2]>>,
    /// Failure reports, one per kind per delivery event (rare: the success path never writes
    /// one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailureAt>,
}

/// One failure report: when it was reported, when its record was due (0 for before the
/// measured phase), its kind and how many records.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FailureAt {
    pub reported_ns: u64,
    pub due_ns: u64,
    pub kind: String,
    pub records: u64,
}

impl FaultSums {
    /// The actions as they happened and the producers' acknowledgement timelines.
    pub(crate) fn of(actions: Vec<FaultRecord>, producers: &[ProducerRecording]) -> FaultSums {
        let Some(origin) = origin_ns(producers) else {
            return FaultSums {
                actions,
                silences: None,
                failures: Vec::new(),
            };
        };
        let rel = |ns: u64| ns.saturating_sub(origin);
        FaultSums {
            actions,
            silences: common_silences(producers, origin).map(|c| {
                c.iter()
                    .map(|&(a, b)| [rel(a), rel(b)])
                    .filter(|[a, b]| a < b)
                    .collect()
            }),
            failures: producers
                .iter()
                .flat_map(|p| &p.ack_timeline.failures)
                .map(|f| FailureAt {
                    reported_ns: rel(f.reported_ns),
                    due_ns: rel(f.due_ns),
                    kind: f.kind.clone(),
                    records: f.records,
                })
                .collect(),
        }
    }

    /// Another side of the same run (a shard): the actions are the first side's that has any
    /// (one participant executes the timeline), silences intersected, failures together.
    pub(crate) fn absorb(&mut self, other: &FaultSums) {
        if self.actions.is_empty() {
            self.actions = other.actions.clone();
        }
        self.silences = match (self.silences.take(), &other.silences) {
            (Some(a), Some(b)) => {
                let pairs = |v: &[[u64; 2]]| v.iter().map(|[a, b]| (*a, *b)).collect::<Vec<_>>();
                Some(
                    intersect(&pairs(&a), &pairs(b))
                        .into_iter()
                        .map(|(a, b)| [a, b])
                        .collect(),
                )
            }
            (a, b) => a.or_else(|| b.clone()),
        };
        self.failures.extend(other.failures.iter().cloned());
    }

    /// The figures, derived here only (a run and a merge alike): the windows from the actions,
    /// unavailability from the silences, recovery from the time series, the latencies of the
    /// records due within the windows from the due-time recording, failures due within them
    /// from the reports, churn from the read side's sums.
    pub(crate) fn figures(&self, result: &RunResult) -> FaultFigures {
        let end = measured_end(result);
        let windows = windows(&self.actions, end);
        let due_spans = windows::spans(&windows);
        let due = result.recording.due.as_ref();
        let series = result.series.as_ref();
        let read = result.recording.read.as_ref();
        FaultFigures {
            unavailable_secs: self
                .silences
                .as_ref()
                .map(|s| s.iter().map(|[a, b]| b - a).max().unwrap_or(0) as f64 / 1e9),
            recovery_secs: series.and_then(|s| recovery(s, &windows, end)),
            ack: windows::latency(due, &due_spans, false),
            e2e: windows::latency(due, &due_spans, true),
            failed_by_kind: windows::failed(&self.failures, &due_spans),
            failed: 0,
            windows: windows.iter().map(|(a, b)| [*a, *b]).collect(),
            churn: churn::churn(
                &self.actions,
                read.map_or(&[][..], |r| &r.stalls[..]),
                read.map_or(&[][..], |r| &r.redeliveries[..]),
                series,
            ),
            actions: self.actions.clone(),
        }
        .with_failed_total()
    }
}

impl FaultFigures {
    fn with_failed_total(mut self) -> FaultFigures {
        self.failed = self.failed_by_kind.values().sum();
        self
    }
}

/// Where the measured phase began on the run's clock: the series' origin every thread shares.
fn origin_ns(producers: &[ProducerRecording]) -> Option<u64> {
    producers
        .iter()
        .find_map(|p| p.raw.intervals.as_ref())
        .map(|i| i.origin_ns)
        .or_else(|| producers.iter().filter_map(|p| p.raw.span.start_ns).min())
}

/// Seconds from the start of the measured phase to its end: the series' last instant, else
/// the elapsed time.
fn measured_end(result: &RunResult) -> f64 {
    result
        .series
        .as_ref()
        .and_then(|s| s.points.last().map(|p| p.t_secs + p.span_secs))
        .unwrap_or(result.elapsed_secs)
        .max(result.elapsed_secs)
}

/// The actions that fired, each as `[fired, ended]` (to the end of the measured phase when it
/// never ended), sorted and merged where they overlap.
pub(crate) fn windows(actions: &[FaultRecord], end: f64) -> Vec<(f64, f64)> {
    let mut w: Vec<(f64, f64)> = actions
        .iter()
        .filter_map(|a| {
            let from = a.fired_secs?;
            Some((from, a.ended_secs.unwrap_or(end).max(from)))
        })
        .collect();
    w.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::with_capacity(w.len());
    for (a, b) in w {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// The stretches in which no producer got an acknowledgement: the producers' silences
/// intersected (on the run's clock). None without producers.
fn common_silences(producers: &[ProducerRecording], origin: u64) -> Option<Vec<(u64, u64)>> {
    let mut common: Option<Vec<(u64, u64)>> = None;
    for p in producers {
        let s = p.ack_timeline.silences(origin, p.raw.span.last_send_ns);
        common = Some(match common {
            None => s,
            Some(c) => intersect(&c, &s),
        });
    }
    common
}

/// The intersection of two sorted lists of disjoint stretches.
pub(crate) fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let from = a[i].0.max(b[j].0);
        let to = a[i].1.min(b[j].1);
        if from < to {
            out.push((from, to));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// For each window that ends before the run does: from its end to the start of the first 1 s
/// span (whole series intervals, starting at or after the end) in which at least 90 % of the
/// records due were acknowledged; the longest of them. None when not paced or never back.
fn recovery(series: &TimeSeries, windows: &[(f64, f64)], end: f64) -> Option<f64> {
    let w = series.interval_secs;
    if w <= 0.0 || series.points.iter().all(|p| p.target_rate.is_none()) {
        return None;
    }
    let span = (RECOVERY_WINDOW_SECS / w).ceil().max(1.0) as usize;
    let mut longest: Option<f64> = None;
    for &(_, fault_end) in windows.iter().filter(|(_, b)| *b < end) {
        let first = series
            .points
            .iter()
            .position(|p| p.t_secs + 1e-9 >= fault_end)?;
        let back = (first..series.points.len().saturating_sub(span - 1)).find(|&i| {
            let pts = &series.points[i..i + span];
            let due: f64 = pts
                .iter()
                .map(|p| p.target_rate.unwrap_or(0.0) * p.span_secs)
                .sum();
            let acked: u64 = pts.iter().map(|p| p.acked).sum();
            due > 0.0 && acked as f64 >= RECOVERED_SHARE * due
        })?;
        let r = (series.points[back].t_secs - fault_end).max(0.0);
        longest = Some(longest.map_or(r, |l: f64| l.max(r)));
    }
    longest
}

#[cfg(test)]
#[path = "fault_tests.rs"]
mod tests;
