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
/// broker: 1–2 s on a quiet machine, up to 5 s for a probe over the edge on a busy one).
pub const PROBE_OVERHEAD: Duration = Duration::from_secs(5);
/// The same, as a search typically pays it (docs/results.md, "hold").
pub const PROBE_OVERHEAD_TYPICAL: Duration = Duration::from_secs(3);
/// The long phase (`hold`): at most this many long probes at one rate …
pub const HOLD_PROBES: u32 = 4;
/// … of which this many must meet the SLO for the rate to hold (3 of 4: the confirmation
/// stops at 3 passes, or at 2 failures, when the rate does not hold).
pub const HOLD_MET: u32 = 3;
/// A rate that does not hold is followed by one this much lower (10 %: twice the default
/// precision) …
pub const HOLD_STEP: f64 = 0.9;
/// … for at most this many rates (down to 0.9⁵ = 0.59 of the burst answer).
pub const HOLD_RATES: u32 = 6;
/// A `hold` shorter than this is refused: the steady-state detector judges a long probe over
/// 120 intervals (`hold / 120` each, `run/capacity.rs`), and shorter intervals than 100 ms
/// hold too few records at low rates for a p99.
pub const MIN_HOLD: Duration = Duration::from_secs(12);

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
    /// A rate that holds this long is asked for too: after the short probes, a phase of long
    /// probes of this length steps down from their answer until one holds (`HOLD_*`).
    #[serde(with = "duration_opt")]
    pub hold: Option<Duration>,
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

/// A block that sets nothing: every setting at its default, no SLO, one trial per rate.
impl Default for CapacitySearch {
    fn default() -> CapacitySearch {
        CapacitySearch {
            from: DEFAULT_FROM,
            to: DEFAULT_TO,
            precision: DEFAULT_PRECISION,
            probe: DEFAULT_PROBE,
            warmup: DEFAULT_WARMUP,
            trials: 1,
            reliability: DEFAULT_RELIABILITY,
            probes: DEFAULT_PROBES,
            budget: None,
            hold: None,
            tolerance: DEFAULT_TOLERANCE,
            slo: Vec::new(),
            span: Span::default(),
        }
    }
}

impl CapacitySearch {
    /// The most probes the search can take: its probe budget (`probes`). The bound
    /// REFERENCE.md states.
    pub fn max_probes(&self) -> u32 {
        self.probes
    }

    /// The most rounds the search runs: every probe, as many canaries (their bound), and the
    /// long phase's probes. What a sharded run's deadlines count.
    pub fn max_rounds(&self) -> u32 {
        2 * self.max_probes() + self.hold.map_or(0, |_| HOLD_PROBES * HOLD_RATES)
    }

    /// The worst case: every probe and every canary taken, each with its warm-up and overhead,
    /// and the whole long phase; with a budget, the budget and the longest round it may start
    /// before it ends, when that is shorter.
    pub fn worst_case(&self) -> Duration {
        let each = self.probe + self.warmup + PROBE_OVERHEAD;
        let long = self.hold.map(|h| h + self.warmup + PROBE_OVERHEAD);
        let all = each * 2 * self.max_probes()
            + long.map_or(Duration::ZERO, |l| l * HOLD_PROBES * HOLD_RATES);
        match self.budget {
            Some(b) if b < all => b + long.unwrap_or(each).max(each),
            _ => all,
        }
    }

    /// What a search typically takes: every probe (searches here spend their budget), a
    /// quarter as many canaries, and a long phase that confirms the second rate it tries
    /// (two failures, then three passes); never above the worst case.
    pub fn typical(&self) -> Duration {
        let each = self.probe + self.warmup + PROBE_OVERHEAD_TYPICAL;
        let rounds = self.max_probes() + self.max_probes().div_ceil(4);
        let long = self.hold.map_or(Duration::ZERO, |h| {
            (h + self.warmup + PROBE_OVERHEAD_TYPICAL) * (HOLD_PROBES - HOLD_MET + 1 + HOLD_MET)
        });
        (each * rounds + long).min(self.worst_case())
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
            hold: self.hold.map(d),
            ..self.clone()
        }
    }
}
