//! Blocking client calls run off the orchestrator's thread. A leaf: every part of the run
//! stage uses it, and its error is tokio's own, so it depends on no other part.

/// Runs `f` on tokio's blocking pool; the error is the task's (it panicked, or the runtime is
/// shutting down).
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    tokio::task::spawn_blocking(f).await
}
