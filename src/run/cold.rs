//! A cold backlog (`backlog = cold(N)`) as a stage of one run: the wait for the offload on a
//! thread of its own, started beside the producers, and what it found, as the read side's
//! figures and notes. How the offload is observed is `offload`'s.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::shared::Shared;
use crate::model::Backlog;
use crate::plan::{RunNo, RunPlan};

/// A cold backlog's wait (`backlog = cold(N)`), on a thread of its own: once every producer
/// has written its share, until the brokers have moved the topics' closed segments to remote
/// storage (`offload::wait`) or its bound passes; then the producers go on to warm-up.
pub(super) fn spawn_wait(
    rp: &RunPlan,
    shared: &Arc<Shared>,
) -> Option<std::thread::JoinHandle<()>> {
    let Some(Backlog::Cold { within, .. }) = rp.workload.backlog else {
        return None;
    };
    let producers = u64::from(rp.workload.producers);
    let (bootstrap, topics, sh) = (rp.bootstrap.clone(), rp.topics.clone(), shared.clone());
    let security = super::logdirs::security(&rp.admin).map_err(|e| e.to_string());
    std::thread::Builder::new()
        .name("kb-cold-wait".into())
        .spawn(move || {
            while sh.backlog_writers_done() < producers {
                if sh.stopping() || sh.producers_done.load(Ordering::Acquire) {
                    return sh.cold_waited(Err("the run stopped first".into()));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let found = security.and_then(|s| {
                super::offload::wait(&bootstrap, &s, &topics, within, &|| sh.stopping())
                    .map_err(|e| e.to_string())
            });
            sh.cold_waited(found);
        })
        .ok()
}

/// What the cold backlog's wait found, for the read side's figures: the records only in
/// remote storage when the clock started, of those the topics held. A wait that could not ask
/// or ended at its bound says so in a note.
pub(super) fn found(rp: &RunPlan, shared: &Shared, notes: &mut Vec<String>) -> Option<(u64, u64)> {
    let Some(Backlog::Cold { within, .. }) = rp.workload.backlog else {
        return None;
    };
    let run = RunNo(rp.index);
    match shared.take_cold()? {
        Err(e) => {
            notes.push(format!(
                "run {run}: how much of the backlog was in remote storage is unknown: {e}"
            ));
            None
        }
        Ok(w) => {
            let share = w.cold.share() * 100.0;
            if w.cold.remote_only == 0 {
                notes.push(format!(
                    "run {run}: none of the backlog left local disk within {}: it was read from the brokers' disks, not remote storage (is remote storage on: remote.log.storage.system.enable on the brokers, remote.storage.enable on the topic, a short local.retention.ms?)",
                    crate::format::human_duration(within.as_secs_f64())
                ));
            } else if w.timed_out {
                notes.push(format!(
                    "run {run}: the backlog was still leaving local disk when the wait ended at {}: {share:.0}% of it was in remote storage only",
                    crate::format::human_duration(within.as_secs_f64())
                ));
            } else {
                notes.push(format!(
                    "run {run}: the backlog left local disk in {:.1} s: {share:.0}% of it was in remote storage only when the clock started",
                    w.took.as_secs_f64()
                ));
            }
            Some((w.cold.remote_only, w.cold.held))
        }
    }
}

/// Whether local disk still holds everything a tiered topic was written (`remote.storage
/// .enable`): asked once at the run's end, since only segments that have left it make its
/// size on disk wrong. A topic without a short `local.retention.ms` keeps every segment
/// locally, and its size is measured as any other's. Blocking.
pub(super) struct LocalDisk {
    bootstrap: String,
    topics: Vec<String>,
    security: Result<crate::wire::Security, String>,
    run: RunNo,
}

impl LocalDisk {
    pub(super) fn of(rp: &RunPlan) -> LocalDisk {
        LocalDisk {
            bootstrap: rp.bootstrap.clone(),
            topics: rp.topics.clone(),
            security: super::logdirs::security(&rp.admin).map_err(|e| e.to_string()),
            run: RunNo(rp.index),
        }
    }

    /// None when nothing has left local disk; otherwise the note that says why there is no
    /// on-disk size.
    pub(super) fn left(self) -> Option<String> {
        let run = self.run;
        let asked = self.security.and_then(|s| {
            super::offload::cold(&self.bootstrap, &s, &self.topics).map_err(|e| e.to_string())
        });
        match asked {
            Ok(c) if c.remote_only == 0 => None,
            Ok(c) => Some(format!(
                "run {run}: no on-disk size: {} of the topic's {} records ({:.0}%) were in remote storage only at the run's end (remote.storage.enable), so local disk does not hold all that was written",
                c.remote_only,
                c.held,
                c.share() * 100.0
            )),
            Err(e) => Some(format!(
                "run {run}: no on-disk size: whether the tiered topic's segments had left local disk is unknown: {e}"
            )),
        }
    }
}
