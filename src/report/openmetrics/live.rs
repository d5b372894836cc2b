//! The series a scrape shows of each run, made from what the run stage hands over: its
//! progress snapshots while it goes on (`run::Progress`, the live latency buckets), its merged
//! `measure::RunResult` once `collect` has it. Every figure the endpoint serves is read or
//! derived here, so `cli/metrics` only keeps the latest series and answers requests.

use std::time::{Duration, Instant, SystemTime};

use super::{ProcessStats, RunSeries};
use crate::measure::RunResult;
use crate::run::{Progress, ProgressPhase};

/// The window the achieved rate is taken over while a run goes on.
const RATE_WINDOW: Duration = Duration::from_secs(1);

/// What the labels of one file's runs are made of.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileLabels {
    pub scenario: String,
    pub run_id: String,
    /// `I/N` on a shard, `all` for what `collect` merged.
    pub shard: Option<String>,
    /// The plan's label of each run, by index.
    pub runs: Vec<String>,
}

impl FileLabels {
    /// scenario, run, run_id, shard (when sharded), trial and probe (when the run is one).
    fn of(
        &self,
        index: usize,
        trial: Option<(u32, u32)>,
        probe: Option<u32>,
    ) -> Vec<(&'static str, String)> {
        let mut l = vec![
            ("scenario", self.scenario.clone()),
            ("run", self.runs.get(index).cloned().unwrap_or_default()),
            ("run_id", self.run_id.clone()),
        ];
        if let Some(s) = &self.shard {
            l.push(("shard", s.clone()));
        }
        if let Some((t, n)) = trial {
            l.push(("trial", format!("{t}/{n}")));
        }
        if let Some(k) = probe {
            l.push(("probe", k.to_string()));
        }
        l
    }
}

/// One run (one trial, one probe) as its snapshots have shown it so far.
#[derive(Debug)]
pub(crate) struct LiveRun {
    series: RunSeries,
    /// Recent (when, acked) pairs, for the achieved rate.
    window: Vec<(Instant, u64)>,
}

impl LiveRun {
    /// The series of the run a snapshot is about, before its first update.
    pub(crate) fn new(file: &FileLabels, p: &Progress) -> LiveRun {
        let probe = p.at.probe.map(|(k, _)| k);
        LiveRun {
            series: RunSeries {
                labels: file.of(p.index, p.at.trial, probe),
                probe,
                ..RunSeries::default()
            },
            window: Vec::new(),
        }
    }

    /// A newer snapshot of the run, taken at `now`.
    pub(crate) fn update(&mut self, p: &Progress, now: Instant) {
        let s = &mut self.series;
        s.phase = phase(p.phase);
        // `sent` moves in batches; a record reported is one that was sent.
        s.sent = p.sent.max(p.acked + p.failed);
        s.acked = p.acked;
        s.failed = p.failed;
        s.elapsed_secs = p.elapsed.as_secs_f64();
        s.target_rate = p.target_rate;
        if let Some(l) = p.live {
            s.ack = Some(l.ack());
            if !l.e2e.is_empty() {
                let e2e = l.e2e();
                s.consumed = Some(e2e.count());
                s.e2e = Some(e2e);
            }
        }
        s.achieved_rate = match p.phase {
            ProgressPhase::Finished | ProgressPhase::Draining => {
                p.acked as f64 / p.elapsed.as_secs_f64().max(1e-3)
            }
            ProgressPhase::Warmup => 0.0,
            ProgressPhase::Producing => windowed_rate(&mut self.window, now, p.acked),
        };
    }

    pub(crate) fn series(&self) -> &RunSeries {
        &self.series
    }
}

/// The phase's name in the `kafkabench_phase` stateset.
fn phase(p: ProgressPhase) -> &'static str {
    match p {
        ProgressPhase::Warmup => "warmup",
        ProgressPhase::Producing => "measured",
        ProgressPhase::Draining => "drain",
        ProgressPhase::Finished => "done",
    }
}

/// Records acknowledged per second over the last `RATE_WINDOW` of snapshots (`acked` at `now`
/// added to them).
fn windowed_rate(window: &mut Vec<(Instant, u64)>, now: Instant, acked: u64) -> f64 {
    window.push((now, acked));
    let keep = window
        .iter()
        .rposition(|(t, _)| now.duration_since(*t) >= RATE_WINDOW)
        .unwrap_or(0);
    window.drain(..keep);
    let (t0, a0) = window[0];
    let dt = now.duration_since(t0).as_secs_f64();
    if dt > 0.0 {
        acked.saturating_sub(a0) as f64 / dt
    } else {
        0.0
    }
}

/// A run `collect` merged from its shards: its figures as the measure stage derived them.
pub(crate) fn collected(file: &FileLabels, r: &RunResult) -> RunSeries {
    RunSeries {
        labels: file.of(r.index, None, None),
        phase: "done",
        sent: r.sent,
        acked: r.acked,
        failed: r.failed,
        consumed: r.delivery.as_ref().map(|d| d.consumed),
        achieved_rate: r.throughput_msgs,
        elapsed_secs: r.elapsed_secs,
        ..RunSeries::default()
    }
}

impl ProcessStats {
    /// The process's CPU time and resident memory, read from the kernel now.
    pub(crate) fn now(started: SystemTime) -> ProcessStats {
        ProcessStats {
            cpu_secs: crate::run::cpu::process().as_secs_f64(),
            rss_bytes: rss_bytes(),
            start_time_secs: started
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
        }
    }
}

/// Resident pages × page size, from /proc (0 where there is none).
fn rss_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page.max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_achieved_rate_is_the_acks_of_the_last_second_of_snapshots() {
        let t = Instant::now();
        let mut w = Vec::new();
        assert_eq!(windowed_rate(&mut w, t, 0), 0.0);
        let at = |ms| t + Duration::from_millis(ms);
        assert_eq!(windowed_rate(&mut w, at(500), 500), 1000.0);
        assert_eq!(windowed_rate(&mut w, at(1000), 1000), 1000.0);
        // The window slides: the pair at 0 ms is dropped once one a second old remains.
        assert_eq!(windowed_rate(&mut w, at(1500), 3000), 2500.0);
        assert_eq!(w.len(), 3, "{w:?}");
    }
}
