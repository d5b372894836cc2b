//! The compaction check's line under the table (`compaction = verify`): what the topic kept
//! of the keys the run wrote.

use std::io::{self, Write};

use crate::format::{human_bytes, human_duration};
use crate::measure::compaction::CompactionFigures;
use crate::measure::RunResult;

/// One line per run that checked its compacted topic; nothing for the others.
pub(super) fn write(results: &[RunResult], out: &mut dyn Write) -> io::Result<()> {
    for r in results {
        if let Some(c) = &r.compaction {
            writeln!(out, "  compaction of {}: {}", r.label, line(c))?;
        }
    }
    Ok(())
}

/// `2000 keys written (1904 live), 1904 with a value; lost 0 (missing 0), resurrected 0,
/// tombstones left 0; on disk 5.5MiB → 240.6KiB by compaction (23.3x smaller; the table's
/// ratio is compression), cleaned in 11.2s`.
pub(crate) fn line(c: &CompactionFigures) -> String {
    let mut s = format!(
        "{} keys written ({} live), {} with a value; lost {} (missing {}), resurrected {}, tombstones left {}",
        c.keys, c.live, c.surviving, c.lost, c.missing, c.resurrected, c.tombstones_left
    );
    if c.foreign > 0 {
        s += &format!("; {} records of keys kafkabench did not write", c.foreign);
    }
    if let (Some(b), Some(a)) = (c.bytes_before, c.bytes_after) {
        s += &format!(
            "; on disk {} → {}",
            human_bytes(b as f64),
            human_bytes(a as f64)
        );
        // Not the table's `ratio` (bytes written over bytes on disk, before the check).
        if let Some(r) = c.ratio() {
            s += &format!(" by compaction ({r:.1}x smaller; the table's ratio is compression)");
        }
    }
    if c.split_keys > 0 {
        s += &format!("; {} keys in more than one partition", c.split_keys);
    }
    match c.cleaner_secs {
        Some(t) => s += &format!(", cleaned in {}", human_duration(t)),
        // The check stopped at once: no cleaner merges two partitions.
        None if c.split_keys > 0 => s += ", the cleaner not waited for",
        None => s += ", not cleaned by the check's end",
    }
    if !c.finished {
        s += " (not finished: see the note)";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_every_figure_and_an_unfinished_check() {
        let c = CompactionFigures {
            keys: 2000,
            live: 1904,
            surviving: 1904,
            foreign: 100,
            bytes_before: Some(5_728_494),
            bytes_after: Some(246_339),
            cleaner_secs: Some(11.2),
            ..CompactionFigures::default()
        };
        let l = line(&c);
        assert!(l.starts_with("2000 keys written (1904 live), 1904 with a value; lost 0 (missing 0), resurrected 0, tombstones left 0; 100 records of keys kafkabench did not write; on disk "), "{l}");
        assert!(
            l.contains(
                " by compaction (23.3x smaller; the table's ratio is compression), cleaned in "
            ),
            "{l}"
        );
        assert!(l.ends_with("(not finished: see the note)"), "{l}");
        // Keys in two partitions: the check did not wait for the cleaner, and says so.
        let split = CompactionFigures {
            split_keys: 64,
            cleaner_secs: None,
            ..c
        };
        let l = line(&split);
        assert!(
            l.ends_with("; 64 keys in more than one partition, the cleaner not waited for (not finished: see the note)"),
            "{l}"
        );
    }
}
