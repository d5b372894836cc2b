//! The comparison table: one row per run, in the spirit of seed 000's table.

use std::io::{self, Write};

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

use crate::format::{human_bytes, human_duration};
use crate::measure::{RunResult, TopicFigures};
use crate::plan::Plan;
use crate::run::Execution;

use super::trials;

fn ms(x: f64) -> String {
    if x == 0.0 {
        "-".into()
    } else {
        human_duration(x / 1e3)
    }
}

pub fn write(p: &Plan, exec: &Execution, out: &mut dyn Write) -> io::Result<()> {
    write_results(&p.scenario, p.runs.len(), &exec.results, &exec.notes, out)
}

/// The table from what a result file keeps, so `report` renders what `run` printed.
pub fn write_results(
    scenario: &str,
    planned_runs: usize,
    results: &[RunResult],
    notes: &[String],
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(
        out,
        "scenario {} ({} of {} runs)",
        scenario,
        results.len(),
        planned_runs
    )?;
    let e2e = results.iter().any(|r| r.e2e.is_some());
    let paced = results.iter().any(|r| r.target_rate.is_some());
    let read = ReadColumns::of(results);
    // The value sizes sent, beside the bytes, when some run's sizes vary.
    let sizes = results.iter().any(|r| r.sizes.is_some());
    let mut b = Builder::default();
    let mut head = vec!["run", "sent", "failed", "elapsed", "msg/s", "MB/s"];
    if sizes {
        head.extend(["size p50", "size p99", "size max"]);
    }
    if paced {
        head.push("target/s");
    }
    head.extend(["ack p50", "ack p99", "ack p99.9"]);
    if e2e {
        head.extend(["e2e p50", "e2e p99", "lost"]);
    }
    read.head(&mut head);
    head.extend(["disk", "ratio", "batch", "rec/req"]);
    b.push_record(head);
    for r in results {
        let mut row = vec![
            if r.status.is_complete() {
                r.label.clone()
            } else {
                format!("{} (incomplete)", r.label)
            },
            r.sent.to_string(),
            r.failed.to_string(),
            human_duration(r.elapsed_secs),
            format!("{:.0}{}", r.throughput_msgs, trials::pm(r, "throughput")),
            format!("{:.1}", r.throughput_bytes / 1e6),
        ];
        if sizes {
            match &r.sizes {
                Some(z) => row.extend([z.p50, z.p99, z.max].map(|b| human_bytes(b as f64))),
                None => row.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        if paced {
            row.push(r.target_rate.map_or("-".into(), |t| format!("{t:.0}")));
        }
        row.extend([
            ms(r.ack.p50_ms) + &trials::pm(r, "ack.p50"),
            ms(r.ack.p99_ms) + &trials::pm(r, "ack.p99"),
            ms(r.ack.p999_ms) + &trials::pm(r, "ack.p999"),
        ]);
        if e2e {
            match (&r.e2e, &r.delivery) {
                (Some(l), Some(d)) => row.extend([
                    ms(l.p50_ms) + &trials::pm(r, "e2e.p50"),
                    ms(l.p99_ms) + &trials::pm(r, "e2e.p99"),
                    // Cut short: what was not read yet is not known to be lost.
                    d.lost.map_or("incomplete".into(), |n| n.to_string()),
                ]),
                _ => row.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        read.row(r, &mut row);
        row.extend([
            r.disk_bytes.map_or("-".into(), |d| human_bytes(d as f64)),
            r.disk_ratio.map_or("-".into(), |x| format!("{x:.2}x")),
            r.internals.batch_bytes_avg.map_or("-".into(), human_bytes),
            r.internals
                .records_per_request
                .map_or("-".into(), |x| format!("{x:.0}")),
        ]);
        b.push_record(row);
    }
    let mut t = b.build();
    t.with(Style::psql());
    t.modify(Columns::new(1..), Alignment::right());
    if let Some(h) = trials::header(results) {
        writeln!(out, "{h}")?;
    }
    writeln!(out, "{t}")?;
    if let Some(l) = read.legend() {
        writeln!(out, "  {l}")?;
    }
    for n in results.iter().flat_map(trials::notes) {
        writeln!(out, "  {n}")?;
    }
    for r in results.iter().filter(|r| r.topics.len() > 1) {
        write_topics(r, out)?;
    }
    for r in results {
        super::places::write(r, out)?;
    }
    for r in results.iter().filter(|r| r.failed > 0) {
        let kinds: Vec<String> = r
            .failed_by_kind
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        writeln!(
            out,
            "  {}: {} failed ({})",
            r.label,
            r.failed,
            kinds.join(", ")
        )?;
    }
    for r in results {
        if let Some(d) = r.delivery.as_ref().filter(|d| d.failed_but_delivered > 0) {
            writeln!(
                out,
                "  {}: {} of the failed records were delivered all the same (read back)",
                r.label, d.failed_but_delivered
            )?;
        }
        // Under a second is scheduling noise and the final ack's round trip.
        if let Some(slip) = r.schedule_slip_secs.filter(|s| *s >= 1.0) {
            writeln!(
                out,
                "  {}: finished {} past its planned duration: the cluster could not keep up, \
                 and the records queued by then were drained after it",
                r.label,
                human_duration(slip)
            )?;
        }
    }
    for r in results.iter().filter(|r| !r.unavailable.is_empty()) {
        writeln!(out, "  {}: {}", r.label, unavailable(r))?;
    }
    for r in results {
        if let Some(n) = drained_unsampled(r) {
            writeln!(out, "  {}: {n}", r.label)?;
        }
    }
    for r in results.iter().filter(|r| r.capacity.is_none()) {
        if let Some(b) = r.generator.and_then(|g| g.reader_behind()) {
            writeln!(
                out,
                "  {}: {}; its end-to-end latency and lag measure kafkabench, not the cluster",
                r.label,
                super::capacity::reader(&b)
            )?;
        }
    }
    for r in results {
        if let Some(c) = r
            .consume
            .as_ref()
            .filter(|c| c.redelivered > 0 || c.aborted_read > 0)
        {
            writeln!(
                out,
                "  {}: {} records read again after a rebalance (redelivered, not duplicates){}",
                r.label,
                c.redelivered,
                if c.aborted_read > 0 {
                    format!("; {} records of aborted transactions read", c.aborted_read)
                } else {
                    String::new()
                }
            )?;
        }
    }
    for r in results {
        for n in steady_notes(r) {
            writeln!(out, "  {}: {n}", r.label)?;
        }
    }
    super::faults::write(results, out)?;
    super::compaction::write(results, out)?;
    super::share::write(results, out)?;
    super::capacity::write(results, out)?;
    for n in notes {
        writeln!(out, "  note: {n}")?;
    }
    Ok(())
}

/// What `warmup = auto` chose and whether the run was steady, as the table's notes and the
/// HTML run section say it (a capacity search's probes say neither).
pub(crate) fn steady_notes(r: &RunResult) -> Vec<String> {
    if r.capacity.is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(a) = &r.warmup_auto {
        let how = if a.settled {
            "until the rate settled".to_string()
        } else {
            format!(
                "and reached its bound of {} before the rate settled",
                human_duration(a.max_secs)
            )
        };
        out.push(format!("warm-up auto: {} {how}", human_duration(a.secs)));
    }
    out.extend(unsteady(r));
    out
}

/// A run whose measured phase was not steady for a noteworthy part of it: what did not
/// settle, and when it did. Quiet for a steady run, and for one too short to tell.
pub(crate) fn unsteady(r: &RunResult) -> Option<String> {
    use crate::measure::steady::SteadyAfter;
    match r.steady_after.as_ref()? {
        SteadyAfter::Never { series } => Some(format!(
            "not steady: {} never settled in the measured phase, so its figures mix a \
             transient with the steady state",
            series.words()
        )),
        // Under a tenth of the phase (or a second) the figures are hardly moved by it.
        SteadyAfter::Steady { secs, series } if *secs >= (0.1 * r.elapsed_secs).max(1.0) => {
            Some(format!(
                "not steady until {} into the measured phase ({} settled last): the warm-up \
                 ended before it settled, and the figures include the transient",
                human_duration(*secs),
                series.words()
            ))
        }
        _ => None,
    }
}

/// How long no broker answered, and when (seconds of the measured phase). A period that
/// began in warm-up says so; only its measured part is in the total.
pub(crate) fn unavailable(r: &RunResult) -> String {
    let end = r.elapsed_secs;
    let total: f64 = r
        .unavailable
        .iter()
        .map(|o| o.measured(end).secs(end))
        .sum();
    let when: Vec<String> = r
        .unavailable
        .iter()
        .map(|o| {
            let from = if o.from_secs < 0.0 {
                format!(
                    "warm-up ({} before the start)",
                    human_duration(-o.from_secs)
                )
            } else {
                human_duration(o.from_secs)
            };
            match o.to_secs {
                Some(to) if to < 0.0 => {
                    format!("{from} to {} before the start", human_duration(-to))
                }
                Some(to) => format!("{from} to {}", human_duration(to)),
                None => format!("{from} to the end"),
            }
        })
        .collect();
    format!(
        "the cluster was unreachable for {} (no broker answered: {})",
        human_duration(total),
        when.join(", ")
    )
}

/// A backlog drained before the first interval of the series ended: `lag max` (read at the
/// intervals' ends) never saw it, and says 0 or little.
fn drained_unsampled(r: &RunResult) -> Option<String> {
    let drained = r.consume.as_ref()?.drain_secs?;
    let w = r.series.as_ref()?.interval_secs;
    (drained < w).then(|| {
        format!(
            "lag max is read at the time series' interval ends ({}), and the backlog drained in {}, before the first one: a shorter --interval sees it",
            human_duration(w),
            human_duration(drained)
        )
    })
}

/// The read side's columns, each shown when some run has it: consume rate and lag with
/// consumers, rebalances with a group (how many, the longest stall, and the partition-seconds
/// left unread: the figure that says which group disrupts its consumers least), drain time with a backlog, how cold a cold backlog
/// was, its first record and the fetches' mean round trip while it drained. The HTML runs
/// table shows the same columns.
pub(crate) struct ReadColumns {
    consume: bool,
    group: bool,
    drain: bool,
    cold: bool,
    /// A drain as a phase: the backlog records read, and the live ack p99 of the records due
    /// while it drained, beside (in its own row) the run it is compared with, over the same
    /// seconds: that row's cell, by run index.
    phase: bool,
    beside: std::collections::BTreeMap<usize, String>,
}

impl ReadColumns {
    pub(crate) fn of(results: &[RunResult]) -> ReadColumns {
        let any = |f: fn(&crate::measure::ConsumeFigures) -> bool| {
            results.iter().filter_map(|r| r.consume.as_ref()).any(f)
        };
        let p99 = |l: &Option<crate::measure::LatencySummary>| {
            l.as_ref().map_or("-".into(), |l| ms(l.p99_ms))
        };
        let beside = results
            .iter()
            .filter_map(|r| {
                let d = r.drain.as_ref()?;
                let b = d.beside.as_ref()?;
                let cell = format!(
                    "{} (in {}'s {} drain)",
                    p99(&b.ack),
                    r.label,
                    human_duration(d.to_secs - d.from_secs)
                );
                Some((b.run, cell))
            })
            .collect();
        ReadColumns {
            consume: any(|_| true),
            group: any(|c| c.rebalances > 0),
            drain: any(|c| c.drain_secs.is_some()),
            cold: any(|c| c.cold_share.is_some()),
            phase: results.iter().any(|r| r.drain.is_some()),
            beside,
        }
    }

    /// What the group columns count, said under the table that shows them: each has a
    /// definition a user would not guess (the broker logs more generations than `rebal`).
    pub(crate) fn legend(&self) -> Option<&'static str> {
        self.group.then_some(
            "rebal: rebalances that gave a member partitions, the group's join before the clock \
             included (classic: its generations; consumer protocol: the target assignments \
             members reconciled to, fewer than the group epochs the broker logs); rebal max: \
             the longest a partition went unread, of the stalls that reached into the measured \
             phase; stalled: their partition-seconds within it (12 partitions unread for 1s is \
             12s)",
        )
    }

    pub(crate) fn head(&self, head: &mut Vec<&str>) {
        if self.consume {
            head.extend(["read/s", "lag max"]);
        }
        if self.group {
            head.extend(["rebal", "rebal max", "stalled"]);
        }
        if self.drain {
            head.push("drain");
        }
        if self.cold {
            head.extend(["cold", "1st read", "fetch rtt"]);
        }
        if self.phase {
            head.extend(["backlog read", "drain ack p99"]);
        }
    }

    pub(crate) fn row(&self, r: &RunResult, row: &mut Vec<String>) {
        let c = r.consume.as_ref();
        let dash = || "-".to_string();
        if self.consume {
            row.push(c.map_or_else(dash, |c| format!("{:.0}", c.throughput_msgs)));
            row.push(
                c.and_then(|c| c.lag_max)
                    .map_or_else(dash, |l| l.to_string()),
            );
        }
        if self.group {
            row.push(c.map_or_else(dash, |c| c.rebalances.to_string()));
            row.push(
                c.and_then(|c| c.rebalance_secs)
                    .map_or_else(dash, human_duration),
            );
            // Partition-seconds: 12 partitions unread for 1 s is 12 s.
            row.push(
                c.and_then(|c| c.stall_secs)
                    .map_or_else(dash, human_duration),
            );
        }
        if self.drain {
            row.push(
                c.and_then(|c| c.drain_secs)
                    .map_or_else(dash, human_duration),
            );
        }
        if self.cold {
            row.push(
                c.and_then(|c| c.cold_share)
                    .map_or_else(dash, |s| format!("{:.0}%", s * 100.0)),
            );
            row.push(
                c.and_then(|c| c.first_record_secs)
                    .map_or_else(dash, human_duration),
            );
            row.push(
                c.and_then(|c| c.fetch_rtt_secs)
                    .map_or_else(dash, human_duration),
            );
        }
        if self.phase {
            let d = r.drain.as_ref();
            row.push(d.map_or_else(dash, |d| d.backlog_read.to_string()));
            row.push(match (d, self.beside.get(&r.index)) {
                (Some(d), _) => d.ack.as_ref().map_or_else(dash, |l| ms(l.p99_ms)),
                (None, Some(cell)) => cell.clone(),
                (None, None) => dash(),
            });
        }
    }
}

/// Runs over at most this many topics list every topic; more get min / median / max over
/// the topics, so the report stays readable at a hundred topics or ten thousand.
const TOPICS_LISTED: usize = 10;

/// A run's per-topic breakdown under the table (its row holds the totals).
fn write_topics(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let topics = &r.topics;
    let consumed = topics.iter().any(|t| t.consumed.is_some());
    let disk = topics.iter().any(|t| t.disk_bytes.is_some());
    let mut head = vec!["topic", "sent", "acked", "failed", "msg/s"];
    if consumed {
        head.push("consumed");
    }
    if disk {
        head.push("disk");
    }
    let mut b = Builder::default();
    b.push_record(head);
    let row = |name: String,
               sent: u64,
               acked: u64,
               failed: u64,
               rate: f64,
               c: Option<u64>,
               d: Option<u64>| {
        let mut row = vec![
            name,
            sent.to_string(),
            acked.to_string(),
            failed.to_string(),
            format!("{rate:.0}"),
        ];
        if consumed {
            row.push(c.map_or("-".into(), |n| n.to_string()));
        }
        if disk {
            row.push(d.map_or("-".into(), |x| human_bytes(x as f64)));
        }
        row
    };
    let title = if topics.len() <= TOPICS_LISTED {
        for t in topics {
            b.push_record(row(
                t.topic.clone(),
                t.sent,
                t.acked,
                t.failed,
                t.throughput_msgs,
                t.consumed,
                t.disk_bytes,
            ));
        }
        format!(
            "{}: {} topics (the row above is their total)",
            r.label,
            topics.len()
        )
    } else {
        for (name, q) in [("min", 0.0), ("median", 0.5), ("max", 1.0)] {
            let pick = |f: fn(&TopicFigures) -> u64| quantile(topics.iter().map(f).collect(), q);
            let rate = quantile_f(topics.iter().map(|t| t.throughput_msgs).collect(), q);
            b.push_record(row(
                name.to_string(),
                pick(|t| t.sent),
                pick(|t| t.acked),
                pick(|t| t.failed),
                rate,
                consumed.then(|| pick(|t| t.consumed.unwrap_or(0))),
                disk.then(|| pick(|t| t.disk_bytes.unwrap_or(0))),
            ));
        }
        format!(
            "{}: {} topics, {} … {} (per topic, each column over the topics; the row above is their total)",
            r.label,
            topics.len(),
            topics[0].topic,
            topics[topics.len() - 1].topic
        )
    };
    let mut t = b.build();
    t.with(Style::psql());
    t.modify(Columns::new(1..), Alignment::right());
    writeln!(out, "  {title}")?;
    for line in t.to_string().lines() {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}

/// The value at quantile `q` of `v` (nearest rank: always one of the topics' own values).
fn quantile(mut v: Vec<u64>, q: f64) -> u64 {
    v.sort_unstable();
    v.get(rank(v.len(), q)).copied().unwrap_or(0)
}

fn quantile_f(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(rank(v.len(), q)).copied().unwrap_or(0.0)
}

fn rank(len: usize, q: f64) -> usize {
    ((len.saturating_sub(1)) as f64 * q).round() as usize
}
