//! A capacity search (`capacity { }`): the highest fixed rate a run sustains within its SLO,
//! found by probing. What the scenario asked for; `measure::capacity` holds the search itself
//! and what it found.

use std::time::Duration;

use serde::Serialize;

use super::seconds::{duration_opt, duration_secs};
use super::Assertion;
use crate::source::Span;

/// The defaults of a `capacity { }` block's settings (REFERENCE.md names them).
pub const DEFAULT_FROM: f64 = 1_000.0;
pub const DEFAULT_TO: f64 = 10_000_000.0;
pub const DEFAULT_PRECISION: f64 = 0.05;
pub const DEFAULT_PROBE: Duration = Duration::from_secs(10);
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(2);
pub const DEFAULT_TOLERANCE: f64 = 0.05;
/// The capacity is the rate at which the SLO holds in this share of probes.
pub const DEFAULT_RELIABILITY: f64 = 0.8;
/// The most probes a search takes unless `probes` says otherwise.
pub const DEFAULT_PROBES: u32 = 24;
/// The bracket grows by this factor per probe until a probe fails.
pub const GROWTH: f64 = 2.0;
/// What a probe costs beyond its warm-up and measured phase, for the worst-case estimate:
/// creating and deleting its topic, the consumers' join, the drain (measured on the local
/// broker: 1–2 s).
pub const PROBE_OVERHEAD: Duration = Duration::from_secs(2);

/// `capacity { }`, checked: every bound typed, the SLO's conditions those of this cell.
#[derive(Clone, Debug, Serialize)]
pub struct CapacitySearch {
    /// The first probe's rate (records per second), and the lowest capacity it reports.
    pub from: f64,
    /// The highest rate probed.
    pub to: f64,
    /// The search stops when the highest pass and the lowest fail above it are this close
    /// (a fraction of the pass: 0.02 is 2 %).
    pub precision: f64,
    /// Each probe's measured phase.
    #[serde(with = "duration_secs")]
    pub probe: Duration,
    /// Each probe's warm-up: sent at the probe's rate, not measured.
    #[serde(with = "duration_secs")]
    pub warmup: Duration,
    /// How many probes in a row each rate the search picks gets.
    pub trials: u32,
    /// The share of probes the SLO must hold in at the capacity (0.8: 80 %).
    pub reliability: f64,
    /// The most probes the search takes (its probe budget).
    pub probes: u32,
    /// The search stops when this much time has gone (then its answer is a lower bound).
    #[serde(with = "duration_opt")]
    pub budget: Option<Duration>,
    /// A probe sustains its target when it acknowledges at least (1 − tolerance) of it, sends
    /// no later than tolerance × its length behind schedule, and its lag grows by less than
    /// tolerance × the target per second.
    pub tolerance: f64,
    /// The conditions every probe of this cell must meet (`when` already applied).
    #[serde(serialize_with = "texts")]
    pub slo: Vec<Assertion>,
    #[serde(skip)]
    pub span: Span,
}

fn texts<S: serde::Serializer>(slo: &[Assertion], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(slo.iter().map(|a| a.text.as_str()))
}

impl CapacitySearch {
    /// The most probes the search can take: its probe budget (`probes`). The bound
    /// REFERENCE.md states.
    pub fn max_probes(&self) -> u32 {
        self.probes
    }

    /// The worst case: every probe taken, each with its warm-up and overhead; the budget
    /// when it is shorter.
    pub fn worst_case(&self) -> Duration {
        let each = self.probe + self.warmup + PROBE_OVERHEAD;
        let all = each * self.max_probes();
        match self.budget {
            Some(b) if b < all => b + each,
            _ => all,
        }
    }

    /// `--scale`: probes and budget shrink with the run's length, rates stay.
    pub fn scaled(&self, f: f64) -> CapacitySearch {
        let d = |d: Duration| Duration::from_secs_f64((d.as_secs_f64() * f).max(0.001));
        CapacitySearch {
            probe: d(self.probe),
            warmup: if self.warmup.is_zero() {
                self.warmup
            } else {
                d(self.warmup)
            },
            budget: self.budget.map(d),
            ..self.clone()
        }
    }
}
