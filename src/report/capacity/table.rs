//! A capacity search in the terminal: a line per search after the run table, then each
//! search's probes (short, then long) with why each failed, and its caveats.

use std::io::{self, Write};

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style, Width};

use super::{answer, bracket, headline, latency, notes, reasons};
use crate::format::compact_rate as rate;
use crate::format::{human_duration, plural};
use crate::measure::capacity::{CapacityFigures, Probe};
use crate::measure::RunResult;

/// The probe table's columns: the trial when a rate was tried more than once, e2e when a
/// probe had a consumer. The HTML probe table shows the same.
pub(crate) struct ProbeColumns {
    trial: bool,
    e2e: bool,
}

impl ProbeColumns {
    pub(crate) fn of(c: &CapacityFigures) -> ProbeColumns {
        let long = c.hold.as_ref().map_or(&[][..], |h| &h.probes[..]);
        let all = || c.probes.iter().chain(long);
        ProbeColumns {
            trial: c.trials > 1 || all().any(|p| p.trial > 1),
            e2e: all().any(|p| p.result.e2e.is_some()),
        }
    }

    pub(crate) fn head(&self) -> Vec<&'static str> {
        let mut head = vec!["#", "target"];
        if self.trial {
            head.push("trial");
        }
        head.extend(["achieved", "ack p50", "ack p99", "ack p99.9"]);
        if self.e2e {
            head.extend(["e2e p50", "e2e p99", "e2e p99.9"]);
        }
        head.push("result");
        head
    }

    pub(crate) fn row(&self, p: &Probe) -> Vec<String> {
        let r = &p.result;
        let mut row = vec![p.number.to_string(), rate(p.target)];
        if self.trial {
            row.push(p.trial.to_string());
        }
        row.extend([
            rate(p.achieved),
            latency(r.ack.p50_ms),
            latency(r.ack.p99_ms),
            latency(r.ack.p999_ms),
        ]);
        if self.e2e {
            match &r.e2e {
                Some(e) => row.extend([latency(e.p50_ms), latency(e.p99_ms), latency(e.p999_ms)]),
                None => row.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        row.push(if p.pass { "pass" } else { "FAIL" }.into());
        row
    }
}

/// The latency at the capacity, from the run's own figures (those of the last probe there);
/// `-` without a capacity, where they would be a failed probe's.
fn at_capacity(c: &CapacityFigures, ms: Option<f64>) -> String {
    match (c.capacity, ms) {
        (Some(_), Some(ms)) => latency(ms),
        _ => "-".into(),
    }
}

/// The search cells after the table: one line each, then every probe of each with why it
/// failed, then the search's caveats. Nothing when no run searched.
pub(crate) fn write(results: &[RunResult], out: &mut dyn Write) -> io::Result<()> {
    let cells: Vec<(&RunResult, &CapacityFigures)> = results
        .iter()
        .filter_map(|r| Some((r, r.capacity.as_deref()?)))
        .collect();
    if cells.is_empty() {
        return Ok(());
    }
    let e2e = cells.iter().any(|(r, _)| r.e2e.is_some());
    let mut head = vec!["search", "capacity", "limited by", "ack p99"];
    if e2e {
        head.push("e2e p99");
    }
    head.extend(["bracket", "probes"]);
    let mut b = Builder::default();
    b.push_record(head);
    for (r, c) in &cells {
        let mut row = vec![
            r.label.clone(),
            answer(c),
            c.limit.word().into(),
            at_capacity(c, Some(r.ack.p99_ms)),
        ];
        if e2e {
            row.push(at_capacity(c, r.e2e.as_ref().map(|e| e.p99_ms)));
        }
        row.extend([
            bracket(c),
            format!("{} in {}", c.probes.len(), human_duration(c.elapsed_secs)),
        ]);
        b.push_record(row);
    }
    let mut t = b.build();
    t.with(Style::psql());
    t.modify(Columns::new(3..), Alignment::right());
    // "none: every probe failed at …" on two lines keeps the table within 100 columns.
    t.modify(Columns::one(1), Width::wrap(18).keep_words(true));
    writeln!(out)?;
    writeln!(out, "{t}")?;
    for (r, c) in &cells {
        write_probes(r, c, out)?;
    }
    Ok(())
}

/// One search cell's probes, indented under its title and headline, each failure's reasons
/// below them; then its long probes alike.
fn write_probes(r: &RunResult, c: &CapacityFigures, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out)?;
    let long = c.hold.as_ref().map_or(0, |h| h.probes.len());
    let long_words = match long {
        0 => String::new(),
        n => format!(" and {n} long"),
    };
    writeln!(
        out,
        "  {}: {} probe{}{long_words} in {}, limited by {}",
        r.label,
        c.probes.len(),
        plural(c.probes.len()),
        human_duration(c.elapsed_secs),
        c.limit.word()
    )?;
    writeln!(out, "  capacity: {}", headline(c))?;
    if !c.slo.is_empty() {
        writeln!(out, "  slo: {}", c.slo.join(", "))?;
    }
    let cols = ProbeColumns::of(c);
    probe_table(&cols, &c.probes, out)?;
    if let Some(h) = c.hold.as_ref().filter(|h| !h.probes.is_empty()) {
        writeln!(out, "  long probes, {} each:", human_duration(h.secs))?;
        probe_table(&cols, &h.probes, out)?;
    }
    for n in notes(c) {
        writeln!(out, "  note: {n}")?;
    }
    Ok(())
}

/// Probes as a table, then a reason a line under it, aligned under the first: a probe can
/// fail five ways at once.
fn probe_table(cols: &ProbeColumns, probes: &[Probe], out: &mut dyn Write) -> io::Result<()> {
    if probes.is_empty() {
        return Ok(());
    }
    let mut b = Builder::default();
    b.push_record(cols.head());
    for p in probes {
        b.push_record(cols.row(p));
    }
    let mut t = b.build();
    t.with(Style::psql());
    t.modify(Columns::new(0..), Alignment::right());
    for line in t.to_string().lines() {
        writeln!(out, "  {line}")?;
    }
    for p in probes {
        let tag = format!("#{}: ", p.number);
        for (i, why) in reasons(p).iter().enumerate() {
            let lead = if i == 0 {
                tag.clone()
            } else {
                " ".repeat(tag.len())
            };
            writeln!(out, "    {lead}{why}")?;
        }
    }
    Ok(())
}
