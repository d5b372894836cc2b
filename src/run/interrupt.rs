//! Interruption: the flag a signal sets, and waits that give way to it.
//!
//! The run stage does not listen for signals itself (the command decides what a signal means
//! and what a second one does); it reads the flag, and every wait on the cluster races it.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often an interruptible wait looks at the flag: prompt for a person, free for the run.
const POLL: Duration = Duration::from_millis(50);

/// The topic a run has created (or may have: its creation was asked for) and not yet deleted,
/// so whoever ends the process early can say what it leaves behind.
#[derive(Clone, Default)]
pub struct LiveTopic(Arc<Mutex<Option<String>>>);

impl LiveTopic {
    pub fn set(&self, topic: Option<String>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = topic;
    }

    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Returns once `flag` is set.
pub async fn interrupted(flag: &AtomicBool) {
    while !flag.load(Ordering::SeqCst) {
        tokio::time::sleep(POLL).await;
    }
}

/// `fut`'s output, or None when `flag` is set first (`fut` is then dropped; a blocking call
/// behind it finishes on its own thread, and its result is not waited for).
pub async fn unless_interrupted<F: Future>(flag: &Arc<AtomicBool>, fut: F) -> Option<F::Output> {
    tokio::select! {
        out = fut => Some(out),
        () = interrupted(flag) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wait_gives_way_to_the_flag() {
        let flag = Arc::new(AtomicBool::new(false));
        let setter = flag.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            setter.store(true, Ordering::SeqCst);
        });
        let started = std::time::Instant::now();
        let out = unless_interrupted(&flag, tokio::time::sleep(Duration::from_secs(30))).await;
        assert!(out.is_none());
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn a_wait_that_ends_first_gives_its_output() {
        let flag = Arc::new(AtomicBool::new(false));
        assert_eq!(unless_interrupted(&flag, async { 7 }).await, Some(7));
    }
}
