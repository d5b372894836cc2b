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

/// The topics a run has created (or may have: their creation was asked for) and not yet
/// deleted, so whoever ends the process early can say what it leaves behind.
#[derive(Clone, Default)]
pub(crate) struct LiveTopic(Arc<Mutex<Vec<String>>>);

impl LiveTopic {
    pub(crate) fn set(&self, topic: Option<String>) {
        self.set_all(topic.into_iter().collect());
    }

    /// The first live topic.
    #[cfg(test)]
    pub(crate) fn get(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .first()
            .cloned()
    }

    /// Every topic of a many-topic run at once.
    pub(crate) fn set_all(&self, topics: Vec<String>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = topics;
    }

    /// `topic t is left behind`, `3 topics are left behind: a, b, c`, `100 topics are left
    /// behind: a … z` (a run's topics differ only by their index), or that nothing is.
    pub(crate) fn left_behind(&self) -> String {
        let topics = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match topics.as_slice() {
            [] => "nothing is left behind".into(),
            [one] => format!("topic {one} is left behind"),
            all => format!("{} topics are left behind: {}", all.len(), name_list(all)),
        }
    }
}

/// `a, b, c` for a few names, `a … z` for more: a run's topics differ only by their index.
pub(super) fn name_list(names: &[String]) -> String {
    match names {
        [first, .., last] if names.len() > 3 => format!("{first} … {last}"),
        _ => names.join(", "),
    }
}

/// Returns once `flag` is set.
pub(super) async fn interrupted(flag: &AtomicBool) {
    while !flag.load(Ordering::SeqCst) {
        tokio::time::sleep(POLL).await;
    }
}

/// `fut`'s output, or None when `flag` is set first (`fut` is then dropped; a blocking call
/// behind it finishes on its own thread, and its result is not waited for).
pub(crate) async fn unless_interrupted<F: Future>(
    flag: &Arc<AtomicBool>,
    fut: F,
) -> Option<F::Output> {
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
        // Given way to the flag, not waited out: well short of the 30 s, even on a busy machine.
        assert!(started.elapsed() < Duration::from_secs(15));
    }

    #[test]
    fn what_is_left_behind_names_one_topic_a_few_or_the_first_and_last() {
        let live = LiveTopic::default();
        assert_eq!(live.left_behind(), "nothing is left behind");
        live.set(Some("t-1a2b3c".into()));
        assert_eq!(live.left_behind(), "topic t-1a2b3c is left behind");
        live.set_all((0..3).map(|i| format!("t-{i}")).collect());
        assert_eq!(
            live.left_behind(),
            "3 topics are left behind: t-0, t-1, t-2"
        );
        live.set_all((0..10).map(|i| format!("t-{i}")).collect());
        assert_eq!(live.left_behind(), "10 topics are left behind: t-0 … t-9");
        live.set(None);
        assert_eq!(live.get(), None);
    }

    #[tokio::test]
    async fn a_wait_that_ends_first_gives_its_output() {
        let flag = Arc::new(AtomicBool::new(false));
        assert_eq!(unless_interrupted(&flag, async { 7 }).await, Some(7));
    }
}
