//! Where a child process's output goes: a file of its own, read back when it ends. The run
//! stage never touches the terminal's streams, a child's included, so the shell that runs the
//! child sends both of its streams there itself.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// The variable naming the file, for the shell line that redirects into it.
pub(super) const VAR: &str = "KB_FAULT_OUTPUT";

/// A shell prefix that sends the rest of the script's output (both streams) to the file.
pub(super) const REDIRECT: &str = "exec >\"$KB_FAULT_OUTPUT\" 2>&1";

/// A child's output file, removed when dropped.
pub(super) struct Capture {
    pub path: PathBuf,
}

impl Capture {
    pub(super) fn new() -> Capture {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Capture {
            path: std::env::temp_dir()
                .join(format!("kafkabench-fault-{}-{n}.out", std::process::id())),
        }
    }

    /// What the child wrote, as text.
    pub(super) fn text(&self) -> String {
        std::fs::read(&self.path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
