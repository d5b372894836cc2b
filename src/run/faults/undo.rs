//! The faults in force and what undoes each: one registry the executor's tasks, its drop guard
//! and a process about to exit all take from, so each fault is undone exactly once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::error::FaultError;
use super::local::LocalCluster;
use crate::run::shared::Shared;

/// What undoes one fault.
pub(super) enum Undo {
    /// Continue a paused broker.
    Resume(Arc<LocalCluster>, i32),
    /// Start a killed or stopped broker.
    Start(Arc<LocalCluster>, i32),
    /// Let a stopped consumer rejoin its group.
    Consumer(Arc<Shared>, u32),
    /// End a `run` command still running: its whole process group.
    Command(i32),
}

impl Undo {
    /// Undoes the fault, on this thread; what was done, or why it could not be.
    pub(super) fn perform(self) -> Result<String, FaultError> {
        match self {
            Undo::Resume(c, id) => c.resume(id).map(|_| format!("continued broker {id}")),
            Undo::Start(c, id) => c.start(id).map(|_| format!("started broker {id}")),
            Undo::Consumer(s, i) => {
                s.consumer_stopped
                    .fetch_and(!(1u64 << i.min(63)), Ordering::AcqRel);
                Ok(format!("consumer {} may run again", i + 1))
            }
            Undo::Command(pgid) => {
                // SAFETY: a signal to the process group of a command this process started.
                unsafe { libc::killpg(pgid, libc::SIGTERM) };
                Ok(format!(
                    "ended the command still running (process group {pgid})"
                ))
            }
        }
    }
}

/// The faults in force now, shared with whoever ends the process early (the command's second
/// signal), as [`super::super::LiveTopic`] is for the topic.
#[derive(Clone, Default)]
pub(crate) struct LiveFaults {
    held: Arc<Mutex<Vec<(u64, Undo)>>>,
    next: Arc<AtomicU64>,
    /// Held while a fault is applied or undone: a process about to exit waits for it, so a
    /// fault being applied is undone after it, and an undo taken but not yet done (a restart
    /// being issued) is never lost.
    busy: Arc<Mutex<()>>,
}

impl LiveFaults {
    /// Registers what undoes a fault about to be applied; the key takes it back.
    pub(super) fn hold(&self, undo: Undo) -> u64 {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((key, undo));
        key
    }

    /// Takes back what undoes one fault; None when an exit path has undone it already.
    pub(super) fn take(&self, key: u64) -> Option<Undo> {
        let mut held = self.lock();
        let i = held.iter().position(|(k, _)| *k == key)?;
        Some(held.remove(i).1)
    }

    /// Registers what undoes a fault, then applies it, as one step an exit path waits for.
    pub(super) fn apply<T>(&self, undo: Undo, apply: impl FnOnce() -> T) -> (u64, T) {
        let _busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        let key = self.hold(undo);
        (key, apply())
    }

    /// Undoes one fault, unless an exit path has undone it already (None).
    pub(super) fn undo(&self, key: u64) -> Option<Result<String, FaultError>> {
        let _busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        let undo = self.take(key)?;
        Some(undo.perform())
    }

    /// Whether any fault is in force.
    #[cfg(test)]
    pub(crate) fn any(&self) -> bool {
        !self.lock().is_empty()
    }

    /// Undoes every fault in force, now, on this thread (for a process about to exit, or a run
    /// on its way out); one line per fault saying what was done.
    pub(crate) fn undo_now(&self) -> Vec<String> {
        let _busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        let all: Vec<Undo> = self.lock().drain(..).map(|(_, u)| u).collect();
        all.into_iter()
            .map(|u| {
                u.perform()
                    .unwrap_or_else(|e| format!("could not undo a fault: {e}"))
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Undo)>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}
