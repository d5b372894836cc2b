//! A share group's lines under the table: its settings, what its members acknowledged, how
//! often records came back and why, and acquisition → acknowledgement latency.

use std::io::{self, Write};

use crate::format::human_duration;
use crate::measure::{RunResult, ShareFigures};

/// One line per run a share group read; nothing for the others.
pub(super) fn write(results: &[RunResult], out: &mut dyn Write) -> io::Result<()> {
    for r in results {
        if let Some(s) = &r.share {
            writeln!(out, "  share group of {}: {}", r.label, settings(s))?;
            writeln!(out, "    {}", figures(s))?;
        }
    }
    Ok(())
}

/// `8 members, ack explicit(release: 5%), processing 1ms, delivery limit 5`.
pub(crate) fn settings(s: &ShareFigures) -> String {
    let processing = if s.processing_ms > 0.0 {
        format!(", processing {}", human_duration(s.processing_ms / 1e3))
    } else {
        String::new()
    };
    format!(
        "{} member{}, ack {}{processing}, delivery limit {}",
        s.members,
        if s.members == 1 { "" } else { "s" },
        s.ack_mode,
        s.delivery_limit
    )
}

/// `accepted 9500, released 250, rejected 100, archived 50; redelivered 250 (lock time-outs
/// 0); ack p50 2ms p99 8ms; deliveries 1: 9300, 2: 200`.
pub(crate) fn figures(s: &ShareFigures) -> String {
    let mut line = format!(
        "accepted {}, released {}, rejected {}, archived {}; redelivered {} (lock time-outs {})",
        s.accepted, s.released, s.rejected, s.archived, s.redelivered, s.lock_timeouts
    );
    if s.refused > 0 {
        line.push_str(&format!(
            ", {} acknowledgements refused (the lock had expired)",
            s.refused
        ));
    }
    if s.unanswered > 0 {
        line.push_str(&format!(
            ", {} acknowledgements unanswered (their request failed; {} of their records never \
             came back: the broker had taken them)",
            s.unanswered, s.unanswered_taken
        ));
    }
    if s.ack.count > 0 {
        line.push_str(&format!(
            "; ack p50 {} p99 {} max {}",
            human_duration(s.ack.p50_ms / 1e3),
            human_duration(s.ack.p99_ms / 1e3),
            human_duration(s.ack.max_ms / 1e3)
        ));
    }
    let counts: Vec<String> = s
        .delivery_counts
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, n)| **n > 0)
        .map(|(d, n)| format!("{d}: {n}"))
        .collect();
    if !counts.is_empty() {
        line.push_str(&format!("; accepted at delivery {}", counts.join(", ")));
    }
    line
}
