//! What a capacity search found: every probe with its full result and verdict, the capacity
//! (the rate at which the SLO holds with the stated reliability, with its band), how long a
//! rate holds (`hold`), and what limited it. The search's steps are `capacity/search.rs` (a
//! state machine the run stage drives and the tests simulate), what they say
//! `capacity/answer.rs`, its long phase `capacity/hold.rs`; a probe's verdict is
//! `capacity/judge.rs`; the band's coverage with the search in the loop
//! `capacity/coverage.rs`.

mod answer;
pub mod coverage;
mod hold;
mod judge;
pub mod logistic;
mod search;

use serde::{Deserialize, Serialize};

pub use answer::{Answer, NARROWED};
pub use hold::{Held, Hold};
pub use judge::{judge, unsteady, GENERATOR_BUSY};

pub use search::{BandRule, Canary, Search, Step, Verdict, CANARIES_AFTER_FAILURE, LOOK_ABOVE};

use super::RunResult;
use crate::model::Unit;

/// Everything a search did and found; a search cell's `RunResult::capacity`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CapacityFigures {
    /// The rate (records per second) at which the SLO holds with `reliability` (the highest
    /// rate probed when every probe passed); None when none passed or no rate is stable.
    pub capacity: Option<f64>,
    /// What stopped the capacity from being higher.
    pub limit: Limit,
    /// The highest pass and the lowest failure above it when the search ended.
    pub bracket: Option<Bracket>,
    /// The SLO's conditions, as written.
    pub slo: Vec<String>,
    /// The SLO's conditions that hold one metric to a constant (`e2e.p99 < 20ms`): what a
    /// plot can draw as a line.
    #[serde(default)]
    pub slo_lines: Vec<SloLine>,
    pub tolerance: f64,
    pub precision: f64,
    pub trials: u32,
    /// Rates that passed although a lower rate had failed (a pass above a fail).
    pub non_monotone: Vec<NonMonotone>,
    /// Rates whose trials disagreed: some passed, some failed.
    pub noisy: Vec<f64>,
    /// Every probe, in the order it ran.
    pub probes: Vec<Probe>,
    /// Wall time the search took, probes and their set-up together.
    pub elapsed_secs: f64,
    /// The share of probes the SLO holds in at the capacity (0.8); 0 in files from before
    /// searches had one (their capacity passed all its trials).
    #[serde(default)]
    pub reliability: f64,
    /// The capacity's 95 % confidence band (profile likelihood of the fitted pass probability).
    #[serde(default)]
    pub band: Option<Band>,
    /// Set when no rate was shown to reach the reliability: the capacity is then None.
    #[serde(default)]
    pub unstable: Option<Unstable>,
    /// Set when the probes ran out with a band wider than a doubling: the capacity is then
    /// None, and `band` holds that band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_narrowed: Option<NotNarrowed>,
    /// The search's probe budget.
    #[serde(default)]
    pub max_probes: u32,
    /// The canaries run after failed probes until the cluster recovered, in order; not probes
    /// (`capacity/search.rs`, *Recovery*).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub canaries: Vec<CanaryRun>,
    /// Each short probe's measured phase, seconds: what the capacity is a burst of. 0 in files
    /// from before it was kept.
    #[serde(default)]
    pub probe_secs: f64,
    /// What the passing probes at the capacity acknowledged per second, scaled to the
    /// capacity: below it when they passed while carrying less than their target (within
    /// `tolerance`). None without a capacity, and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried: Option<f64>,
    /// Not narrowed because the probes could not rule out a curve too shallow for its band to
    /// be claimed (`logistic::MIN_SLOPE`): by how much they did rule it out (a deviance, below
    /// `logistic::STEEP_CUTOFF`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shallow: Option<f64>,
    /// The long phase (`hold`), when the search asked for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<HoldFigures>,
}

/// The long phase: how long probes went, what they found, and every long probe.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HoldFigures {
    /// Each long probe's measured phase, seconds.
    pub secs: f64,
    pub answer: Held,
    /// Every long probe, in the order it ran (numbered on from the short probes).
    pub probes: Vec<Probe>,
}

/// A canary: a probe at a rate known to pass, run after a failed probe only to learn whether
/// the cluster has recovered; its outcome is not one of the search's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CanaryRun {
    /// The number of the failed probe it followed.
    pub after: u32,
    /// Records per second.
    pub target: f64,
    pub pass: bool,
    /// Why it failed (empty when it passed).
    pub misses: Vec<Miss>,
    /// Its wall time, set-up and drain included.
    pub secs: f64,
}

/// A capacity's confidence band, records per second.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Band {
    pub low: f64,
    pub high: f64,
}

/// No stable capacity: the SLO was met in `passes` of `probes` probes between `low` and
/// `high` records per second, and no rate was shown to reach the reliability.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Unstable {
    pub passes: u32,
    pub probes: u32,
    pub low: f64,
    pub high: f64,
}

/// A capacity not narrowed: the fit's estimate, inside the band that is too wide to claim it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct NotNarrowed {
    pub estimate: f64,
}

/// A search's settings for the tests: `from`, `to`, `precision` and `trials`, the rest default.
#[cfg(test)]
pub fn search_settings(
    from: f64,
    to: f64,
    precision: f64,
    trials: u32,
) -> crate::model::CapacitySearch {
    crate::model::CapacitySearch {
        from,
        to,
        precision,
        trials,
        ..Default::default()
    }
}

/// `metric op constant`, from the SLO.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SloLine {
    /// The condition as written.
    pub condition: String,
    /// The metric in the scenario language (`e2e.p99`, `ack.p999`, `lag.max`).
    pub metric: String,
    /// `<`, `<=`, `>`, `>=`, `==` or `!=`.
    pub op: String,
    /// The constant, in the metric's base unit (seconds, records, per second).
    pub bound: f64,
}

/// The two rates the search narrowed the capacity to.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bracket {
    pub pass: f64,
    pub fail: f64,
}

/// A rate that passed all its trials above one that failed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct NonMonotone {
    pub failed: f64,
    pub passed: f64,
}

/// What kept the capacity where it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The lowest failing rate sustained its target but broke a condition of the SLO.
    Slo,
    /// The cluster did not keep up (acknowledged too little, lag grew, records failed) while
    /// the load generator had CPU to spare.
    Cluster,
    /// kafkabench itself: the schedule slipped while a sending thread or the whole process was
    /// on a CPU nearly all the time, or while records waited to be sent and the cluster
    /// answered promptly. The cluster may take more than this.
    Generator,
    /// kafkabench's own reader: the lowest failing rate missed on what the reader measures
    /// (end-to-end latency, lag) while the reader fell behind (`GeneratorLoad::reader_behind`).
    /// The cluster may take more than this.
    Reader,
    /// The search's upper bound (`to`) passed: the capacity is at least that.
    UpperBound,
    /// The budget ran out before the search converged: the capacity is at least the answer.
    Budget,
    /// The search was interrupted or a probe could not run.
    #[default]
    Stopped,
}

impl Limit {
    /// The word the table and the HTML report show.
    pub fn word(self) -> &'static str {
        match self {
            Limit::Slo => "slo",
            Limit::Cluster => "cluster",
            Limit::Generator => "load generator",
            Limit::Reader => "load generator (reader)",
            Limit::UpperBound => "upper bound",
            Limit::Budget => "budget",
            Limit::Stopped => "stopped",
        }
    }
}

/// One probe: a fixed-rate phase at `target`, on a fresh topic.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Probe {
    /// Its place in the search, from 1.
    pub number: u32,
    /// The rate it was to send, records per second.
    pub target: f64,
    /// Its trial at this rate, from 1.
    pub trial: u32,
    /// The rate the cluster acknowledged (`throughput`).
    pub achieved: f64,
    pub pass: bool,
    /// Why it failed (empty when it passed), each with its figures.
    pub misses: Vec<Miss>,
    /// Everything the probe measured: histograms, series, internals.
    pub result: Box<RunResult>,
    /// Its wall time, set-up and drain included; 0 in older files.
    #[serde(default)]
    pub secs: f64,
}

/// One reason a probe failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Miss {
    /// It acknowledged fewer records per second than (1 − tolerance) × target.
    Rate { achieved: f64, least: f64 },
    /// Sending fell this far behind the schedule (seconds), more than allowed.
    Slip { behind_secs: f64, allowed_secs: f64 },
    /// Records failed or were lost.
    Failed { records: u64 },
    /// The consumers' lag grew by this many records per second over the probe (a least-squares
    /// trend of the lag series), more than allowed.
    Lag { growth: f64, allowed: f64 },
    /// A condition of the SLO did not hold; `measured` in base units (None: not measured).
    Slo {
        condition: String,
        measured: Option<f64>,
        /// None when a side of the bound was not measured either.
        bound: Option<f64>,
        /// What `measured` measures, for showing it (None in older files: a plain number).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<Unit>,
        /// Whether the condition reads a figure kafkabench's reader measures (end-to-end
        /// latency, lag, what was consumed).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        read_side: bool,
    },
    /// The probe was cut short (an interrupt, a lost cluster) or could not run.
    Incomplete { reason: String },
    /// A long probe's series still trended at its end (the steady-state detector found it
    /// never steady): the rate does not hold, whatever the figures over the whole probe.
    Unsteady { series: super::steady::SteadySeries },
}

impl Miss {
    /// Whether the miss is the cluster not keeping up (rather than an SLO condition).
    pub fn is_sustain(&self) -> bool {
        !matches!(self, Miss::Slo { .. } | Miss::Unsteady { .. })
    }

    /// Whether the miss says the rate was not carried: acknowledged too little, or sending
    /// fell behind its schedule. Either way the backlog grows with every second; a probe that
    /// misses so is an overload, not a sporadic failure.
    pub fn is_overload(&self) -> bool {
        matches!(self, Miss::Rate { .. } | Miss::Slip { .. })
    }
}

/// How busy kafkabench itself was during a run's measured phase (`RunResult::generator`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneratorLoad {
    /// The busiest producer thread's CPU time over its wall time (1.0: never idle).
    pub sender_busy: f64,
    /// The same for the busiest reading (consumer) thread; 0 without consumers.
    #[serde(default)]
    pub reader_busy: f64,
    /// The whole process's CPU time over wall time, in cores.
    pub process_cores: f64,
    /// The cores this process may use.
    pub cores: u32,
    /// The longest records waited in kafkabench's own reader (librdkafka's fetch queue),
    /// seconds; 0 without consumers (`measure::ReaderQueue`).
    #[serde(default)]
    pub reader_wait_secs: f64,
    /// Statistics samples that found the reader's fetch queue at a threshold, which stops
    /// librdkafka's fetchers: the records then wait on the broker for kafkabench.
    #[serde(default)]
    pub reader_queue_full: u64,
    /// A merged run's (shards): the shard whose machine was the busiest, whose sender and
    /// process figures these are (0-based, in the collector's shard order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<usize>,
}

/// A wait in kafkabench's own reader at least this long (seconds) means it, not the cluster,
/// set the read side's figures. A prompt reader takes a record within microseconds of its
/// fetch; a descheduled thread on a busy machine, tens of milliseconds.
pub const READER_WAIT: f64 = 0.25;

/// Why kafkabench's own reader fell behind: what the read side measured (end-to-end latency,
/// lag) is then the load generator's, not the cluster's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReaderBehind {
    /// The reading thread had no CPU to spare (its busy share).
    Thread { busy: f64 },
    /// Its fetch queue reached a threshold in this many statistics samples: librdkafka stopped
    /// fetching for the reader. `waited_secs` is the longest wait in the queue.
    QueueFull { samples: u64, waited_secs: f64 },
    /// Records waited this long in its queue before the reader took them.
    Queue { waited_secs: f64 },
}

impl GeneratorLoad {
    /// Whether kafkabench's busiest reading thread had no CPU to spare.
    pub fn reader_saturated(&self) -> bool {
        self.reader_busy >= GENERATOR_BUSY
    }

    /// Whether kafkabench's reader fell behind, and why (the most telling cause first).
    pub fn reader_behind(&self) -> Option<ReaderBehind> {
        if self.reader_saturated() {
            Some(ReaderBehind::Thread {
                busy: self.reader_busy,
            })
        } else if self.reader_queue_full > 0 {
            Some(ReaderBehind::QueueFull {
                samples: self.reader_queue_full,
                waited_secs: self.reader_wait_secs,
            })
        } else if self.reader_wait_secs >= READER_WAIT {
            Some(ReaderBehind::Queue {
                waited_secs: self.reader_wait_secs,
            })
        } else {
            None
        }
    }

    /// The shards' loads as one run's: a load machine with no CPU to spare limits the whole
    /// run, so the sender and process figures are the busiest shard's (named), and the reader
    /// fell behind if any shard's did (the longest wait, every full-queue sample). None when
    /// no shard measured its load.
    pub fn busiest(shards: impl IntoIterator<Item = (usize, GeneratorLoad)>) -> Option<Self> {
        let all: Vec<(usize, GeneratorLoad)> = shards.into_iter().collect();
        let load = |g: &GeneratorLoad| {
            let process = if g.cores > 0 {
                g.process_cores / f64::from(g.cores)
            } else {
                0.0
            };
            g.sender_busy.max(process)
        };
        let (k, top) = all
            .iter()
            .max_by(|a, b| load(&a.1).total_cmp(&load(&b.1)))?;
        Some(GeneratorLoad {
            reader_busy: all.iter().map(|(_, g)| g.reader_busy).fold(0.0, f64::max),
            reader_wait_secs: all
                .iter()
                .map(|(_, g)| g.reader_wait_secs)
                .fold(0.0, f64::max),
            reader_queue_full: all.iter().map(|(_, g)| g.reader_queue_full).sum(),
            shard: (all.len() > 1).then_some(*k),
            ..*top
        })
    }

    /// Whether kafkabench had no CPU to spare: a sending thread, or the process as a whole.
    pub fn saturated(&self) -> bool {
        self.sender_busy >= GENERATOR_BUSY
            || (self.cores > 0 && self.process_cores >= GENERATOR_BUSY * f64::from(self.cores))
    }
}
