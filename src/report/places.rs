//! A run's figures by broker and by partition under the table: a broker table when more than
//! one broker acknowledged, and the slowest partitions only when they stand out.

use std::io::{self, Write};

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

use crate::format::{human_bytes, human_duration};
use crate::measure::{PlaceFigures, RunResult};

/// A partition is named when its ack p99 is at least this many times the median partition's.
const STANDS_OUT: f64 = 2.0;
/// At most this many partitions are named.
const SLOWEST_SHOWN: usize = 3;

fn ms(x: f64) -> String {
    human_duration(x / 1e3)
}

/// The broker table and the slowest partitions of `r`, when there is something to say.
pub(crate) fn write(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    if r.brokers.len() >= 2 {
        let mut b = Builder::default();
        b.push_record([
            "broker", "records", "bytes", "ack p50", "ack p99", "ack max",
        ]);
        for x in &r.brokers {
            b.push_record([
                x.id.to_string(),
                x.records.to_string(),
                human_bytes(x.bytes as f64),
                ms(x.ack.p50_ms),
                ms(x.ack.p99_ms),
                ms(x.ack.max_ms),
            ]);
        }
        let mut t = b.build();
        t.with(Style::psql());
        t.modify(Columns::new(1..), Alignment::right());
        writeln!(
            out,
            "  {}: by the broker that acknowledged ({} brokers)",
            r.label,
            r.brokers.len()
        )?;
        for line in t.to_string().lines() {
            writeln!(out, "  {line}")?;
        }
    }
    if let Some(line) = slowest_partitions(&r.partitions) {
        writeln!(out, "  {}: {line}", r.label)?;
    }
    Ok(())
}

/// "slowest partitions: 7 (ack p99 41ms), …; the median partition's 8.0ms", when the slowest
/// partition's p99 is at least `STANDS_OUT` times the median partition's.
pub(crate) fn slowest_partitions(parts: &[PlaceFigures]) -> Option<String> {
    let mut with: Vec<&PlaceFigures> = parts.iter().filter(|p| p.records > 0).collect();
    if with.len() < 2 {
        return None;
    }
    with.sort_by(|a, b| b.ack.p99_ms.total_cmp(&a.ack.p99_ms));
    let median = with[with.len() / 2].ack.p99_ms;
    let slow: Vec<String> = with
        .iter()
        .take(SLOWEST_SHOWN)
        .filter(|p| p.ack.p99_ms >= STANDS_OUT * median && median > 0.0)
        .map(|p| format!("{} (ack p99 {})", p.id, ms(p.ack.p99_ms)))
        .collect();
    (!slow.is_empty()).then(|| {
        format!(
            "slowest partition{}: {}; the median partition's ack p99 is {}",
            if slow.len() == 1 { "" } else { "s" },
            slow.join(", "),
            ms(median)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::LatencySummary;

    fn part(id: i32, p99_ms: f64) -> PlaceFigures {
        let mut ack = LatencySummary::default();
        ack.p99_ms = p99_ms;
        PlaceFigures {
            id,
            records: 10,
            bytes: 1000,
            ack,
        }
    }

    #[test]
    fn only_partitions_that_stand_out_are_named() {
        let even: Vec<_> = (0..6).map(|i| part(i, 5.0 + i as f64 * 0.1)).collect();
        assert_eq!(slowest_partitions(&even), None);
        let mut hot = even.clone();
        hot[3] = part(3, 40.0);
        let line = slowest_partitions(&hot).unwrap();
        assert!(
            line.starts_with("slowest partition: 3 (ack p99 40"),
            "{line}"
        );
    }

    #[test]
    fn one_broker_writes_no_table() {
        let r = RunResult {
            brokers: vec![part(1, 3.0)],
            ..RunResult::default()
        };
        let mut out = Vec::new();
        write(&r, &mut out).unwrap();
        assert!(out.is_empty());
    }
}
