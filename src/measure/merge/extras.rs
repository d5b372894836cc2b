//! Merging the figures of transactions, faults and topics. Their latencies
//! merge exactly like the run's; the rest is merged as each field's meaning allows, and where
//! a single machine's figure cannot be recovered from the shards' the comment says what the
//! merged one is instead.

use std::collections::BTreeMap;

use super::{add_counts, latency, MergeError};
use crate::measure::{FaultFigures, RunResult, TopicFigures, TxnFigures};

/// Transactions summed (each shard's producers have their own transactional ids), commit
/// latency merged exactly.
pub(super) fn txn(shards: &[&RunResult]) -> Result<Option<TxnFigures>, MergeError> {
    let all: Vec<&TxnFigures> = shards.iter().filter_map(|s| s.txn.as_ref()).collect();
    if all.is_empty() {
        return Ok(None);
    }
    Ok(Some(TxnFigures {
        committed: all.iter().map(|t| t.committed).sum(),
        aborted: all.iter().map(|t| t.aborted).sum(),
        committed_records: all.iter().map(|t| t.committed_records).sum(),
        aborted_records: all.iter().map(|t| t.aborted_records).sum(),
        commit: latency(shards, "transaction commit", |s| {
            Some(&s.txn.as_ref()?.commit)
        })?
        .unwrap_or_default(),
    }))
}

/// One fault timeline hits every shard at once. Its actions are the first shard's that
/// recorded any (one participant executes them). Unavailability is the shortest any shard saw:
/// a stretch without an ack anywhere lies within every shard's stretch without one, so this is
/// an upper bound of the single machine's. Recovery is the last shard's (the whole rate is
/// back when every share is). Latencies within the windows merge exactly.
pub(super) fn faults(shards: &[&RunResult]) -> Result<Option<FaultFigures>, MergeError> {
    let all: Vec<&FaultFigures> = shards.iter().filter_map(|s| s.faults.as_ref()).collect();
    if all.is_empty() {
        return Ok(None);
    }
    let mut failed_by_kind = BTreeMap::new();
    for f in &all {
        add_counts(&mut failed_by_kind, &f.failed_by_kind);
    }
    Ok(Some(FaultFigures {
        actions: all
            .iter()
            .find(|f| !f.actions.is_empty())
            .map_or_else(Vec::new, |f| f.actions.clone()),
        unavailable_secs: all
            .iter()
            .filter_map(|f| f.unavailable_secs)
            .reduce(f64::min),
        recovery_secs: all.iter().filter_map(|f| f.recovery_secs).reduce(f64::max),
        ack: latency(shards, "fault ack", |s| s.faults.as_ref()?.ack.as_ref())?,
        e2e: latency(shards, "fault e2e", |s| s.faults.as_ref()?.e2e.as_ref())?,
        failed: all.iter().map(|f| f.failed).sum(),
        failed_by_kind,
        // Every shard ran the same timeline.
        windows: all[0].windows.clone(),
        // A sharded run has no group (its shards are assigned their partitions by hand).
        churn: Vec::new(),
    }))
}

/// Per topic, in the order first met: counts summed, rates added (the shards write at the
/// same time), disk growth the largest any shard measured (they share the topic).
pub(super) fn topics(shards: &[&RunResult]) -> Vec<TopicFigures> {
    let mut merged: Vec<TopicFigures> = Vec::new();
    for t in shards.iter().flat_map(|s| &s.topics) {
        let Some(m) = merged.iter_mut().find(|m| m.topic == t.topic) else {
            merged.push(t.clone());
            continue;
        };
        m.sent += t.sent;
        m.acked += t.acked;
        m.failed += t.failed;
        m.throughput_msgs += t.throughput_msgs;
        m.consumed = match (m.consumed, t.consumed) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        m.disk_bytes = m.disk_bytes.max(t.disk_bytes);
    }
    merged
}
