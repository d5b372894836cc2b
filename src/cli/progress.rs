//! The live progress line of `kafkabench run`, redrawn in place on stderr.

use std::io::Write;
use std::sync::Arc;

use crate::run::{Progress, ProgressPhase, ProgressSink};

/// Clears the terminal line the cursor is on.
const CLEAR_LINE: &str = "\r\x1b[2K";

/// A progress sink that redraws one stderr line per snapshot and clears it when a run ends.
pub fn on_stderr() -> ProgressSink {
    Arc::new(|p: &Progress| {
        let mut err = std::io::stderr().lock();
        let phase = match p.phase {
            ProgressPhase::Producing => "producing",
            ProgressPhase::Draining => "draining",
            ProgressPhase::Finished => {
                let _ = write!(err, "{CLEAR_LINE}");
                return;
            }
        };
        let secs = p.elapsed.as_secs_f64();
        let _ = write!(
            err,
            "{CLEAR_LINE}[{}/{}] {}  {phase}  sent {}  acked {}  {:.0} msg/s  {secs:.1}s",
            p.run,
            p.runs,
            p.label,
            p.sent,
            p.acked,
            p.acked as f64 / secs.max(1e-3)
        );
        let _ = err.flush();
    })
}
