//! A run's figures by broker and by partition under the table: a broker table when more than
//! one broker acknowledged, and the slowest partitions only when they stand out.

use std::io::{self, Write};

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

use crate::format::{human_bytes, human_duration};
use crate::measure::{PlaceFigures, ReadPlaceFigures, RunResult};

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
    if let Some(line) = slowest_read_partitions(&r.read_partitions) {
        writeln!(out, "  {}: read: {line}", r.label)?;
    }
    Ok(())
}

/// "slowest partitions: 7 (ack p99 41ms), …; the median partition's 8.0ms", when the slowest
/// partition's p99 is at least `STANDS_OUT` times the median partition's.
pub(crate) fn slowest_partitions(parts: &[PlaceFigures]) -> Option<String> {
    let p99s: Vec<(i32, f64)> = parts
        .iter()
        .filter(|p| p.records > 0)
        .map(|p| (p.id, p.ack.p99_ms))
        .collect();
    slowest(p99s, "ack").map(|(line, _)| line)
}

/// The same on the read side, by end-to-end latency: "slowest partitions read: 3 (e2e p99
/// 90ms); the median partition's e2e p99 is 9ms".
pub(crate) fn slowest_read_partitions(parts: &[ReadPlaceFigures]) -> Option<String> {
    let p99s: Vec<(i32, f64)> = parts
        .iter()
        .filter(|p| p.consumed > 0)
        .map(|p| (p.id, p.e2e.p99_ms))
        .collect();
    let (line, named) = slowest(p99s, "e2e")?;
    // The lag of the partitions named, when measured: a slow partition that also fell behind.
    let lags: Vec<String> = named
        .iter()
        .filter_map(|id| parts.iter().find(|p| p.id == *id))
        .filter_map(|p| Some(format!("{} lag max {}", p.id, p.lag_max?)))
        .collect();
    Some(if lags.is_empty() {
        line
    } else {
        format!("{line} ({})", lags.join(", "))
    })
}

/// The line naming the partitions (id, p99 in ms) that stand out, and their ids.
fn slowest(mut with: Vec<(i32, f64)>, family: &str) -> Option<(String, Vec<i32>)> {
    if with.len() < 2 {
        return None;
    }
    with.sort_by(|a, b| b.1.total_cmp(&a.1));
    let median = with[with.len() / 2].1;
    let slow: Vec<(i32, f64)> = with
        .into_iter()
        .take(SLOWEST_SHOWN)
        .filter(|p| p.1 >= STANDS_OUT * median && median > 0.0)
        .collect();
    let named: Vec<String> = slow
        .iter()
        .map(|p| format!("{} ({family} p99 {})", p.0, ms(p.1)))
        .collect();
    (!slow.is_empty()).then(|| {
        let line = format!(
            "slowest partition{}: {}; the median partition's {family} p99 is {}",
            if slow.len() == 1 { "" } else { "s" },
            named.join(", "),
            ms(median)
        );
        (line, slow.iter().map(|p| p.0).collect())
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
    fn a_partition_read_slowly_is_named_with_its_lag() {
        let read = |id: i32, p99_ms: f64, lag: u64| {
            let mut e2e = LatencySummary::default();
            e2e.p99_ms = p99_ms;
            ReadPlaceFigures {
                id,
                records: 10,
                consumed: 10,
                e2e,
                lag_max: Some(lag),
            }
        };
        let mut parts: Vec<_> = (0..6).map(|i| read(i, 5.0, 3)).collect();
        assert_eq!(slowest_read_partitions(&parts), None);
        parts[4] = read(4, 90.0, 700);
        let line = slowest_read_partitions(&parts).unwrap();
        assert!(
            line.starts_with("slowest partition: 4 (e2e p99 90"),
            "{line}"
        );
        assert!(line.ends_with("(4 lag max 700)"), "{line}");
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
