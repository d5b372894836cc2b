//! Transactions' figures.

use serde::{Deserialize, Serialize};

use super::LatencySummary;

/// Figures of a transactional run; None on a run without transactions.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TxnFigures {
    pub committed: u64,
    pub aborted: u64,
    /// Records in committed and in aborted transactions.
    pub committed_records: u64,
    pub aborted_records: u64,
    /// commit_transaction() latency.
    pub commit: LatencySummary,
}
