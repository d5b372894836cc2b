//! The plan as a person reads it: one block per run with its effective settings and estimate,
//! then the assertions and the runs each instance reads.

use std::io::{self, Write};

use crate::format::{compact_rate, human_bytes, human_duration, human_rate, plural};
use crate::model::capacity::{HOLD_MET, HOLD_PROBES, HOLD_RATES};
use crate::model::{
    CapacitySearch, Fault, FaultAction, KeySpec, PayloadSpec, Props, RateSpec, Side, Warmup,
    Workload,
};
use crate::plan::RunNo;
use crate::plan::{Estimate, PhaseEstimate, Plan, Reference};

/// Human-readable plan: one block per run with its effective settings.
pub fn plan_text(p: &Plan, out: &mut dyn Write) -> io::Result<()> {
    write(p, out, false)
}

/// The plan with every client's defaults (`plan --defaults`), and in every run the settings
/// that differ between clients.
pub fn plan_text_with_defaults(p: &Plan, out: &mut dyn Write) -> io::Result<()> {
    write(p, out, true)
}

fn write(p: &Plan, out: &mut dyn Write, defaults: bool) -> io::Result<()> {
    let clients = super::plan_clients::shown(p, defaults);
    let against = |side| super::plan_clients::against(p, side, defaults);
    let (producers, consumers) = (against(Side::Producer), against(Side::Consumer));
    let axes = if p.dims.is_empty() {
        String::new()
    } else {
        format!(
            " ({})",
            p.dims
                .iter()
                .map(|d| format!("{} × {}", d.name, d.values.len()))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    writeln!(
        out,
        "scenario {}: {} run{}{}",
        p.scenario,
        p.runs.len(),
        plural(p.runs.len()),
        axes
    )?;
    if let Some(d) = &p.description {
        writeln!(out, "  {d}")?;
    }
    if p.scale != 1.0 {
        writeln!(
            out,
            "  scaled by {} (message counts and durations)",
            p.scale
        )?;
    }
    writeln!(out, "  run id {}", p.run_id)?;
    if let Some(a) = p.repeat_auto {
        let s = crate::measure::sequential::schedule(a.max, crate::measure::trials::LEVEL);
        let looks: Vec<String> = s.looks.iter().map(u32::to_string).collect();
        writeln!(
            out,
            "  repeat = auto(±{}%, max {}): trials of every run, interleaved (the order rotated \
             each round), each on fresh topics, until every judged figure's median has a {}% \
             interval within ±{}% of it; looks after {} trials, each at {}% (Bonferroni over {} \
             looks); a run that has its answer stops while the others go on",
            a.within * 100.0,
            a.max,
            s.level * 100.0,
            a.within * 100.0,
            looks.join(", "),
            (s.look_level * 1000.0).round() / 10.0,
            s.looks.len()
        )?;
    } else if p.repeat > 1 {
        writeln!(
            out,
            "  {} trials of every run, interleaved (the order rotated each round), each on \
             fresh topics: figures are medians with {}% intervals, counts of records are sums",
            p.repeat,
            crate::measure::trials::LEVEL * 100.0
        )?;
    }
    writeln!(out, "  estimated sending time {}", total_text(p))?;
    if clients {
        super::plan_clients::header(p, out)?;
    }
    for n in &p.notes {
        writeln!(out, "  note      {}", n.message)?;
        if let Some(h) = &n.help {
            writeln!(out, "            {h}")?;
        }
    }
    for r in &p.runs {
        writeln!(out)?;
        writeln!(out, "run {}/{}  {}", RunNo(r.index), p.runs.len(), r.label)?;
        writeln!(out, "  cluster   {}", r.bootstrap)?;
        if p.repeat_auto.is_some() {
            let read = p.metrics_read(r.index);
            let (judged, left) = crate::measure::sequential::judged(&read, r.capacity.is_some());
            let names: Vec<&str> = judged.iter().map(|(n, _)| *n).collect();
            // Counts and the figures trials do not summarise have no median interval to judge.
            writeln!(
                out,
                "  judged    {}{}",
                names.join(", "),
                if left.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (and not {} other metric{} read: no interval over trials)",
                        left.len(),
                        crate::format::plural(left.len())
                    )
                }
            )?;
        }
        let t = &r.topic;
        writeln!(
            out,
            "  topic     {}  partitions={} replication={}{}{}",
            topic_names(&r.topics),
            t.partitions,
            t.replication,
            if t.existing {
                " (existing: not created, not deleted)"
            } else {
                ""
            },
            props_inline(&t.configs, " ")
        )?;
        if !t.ignored_configs.0.is_empty() {
            writeln!(
                out,
                "            ignored on an existing topic: {}",
                props_inline(&t.ignored_configs, "")
            )?;
        }
        let (lead, consumer_lead) = super::plan_clients::leads(r, clients);
        writeln!(out, "  producer  {lead}{}", props_inline(&r.producer, ""))?;
        if clients {
            super::plan_clients::differences(&r.producer_differences, &producers, out)?;
        }
        match (&r.share, &r.consumer) {
            (Some(s), _) => {
                writeln!(
                    out,
                    "  share     {} member(s), ack {}, processing {}",
                    r.workload.consumers.unwrap_or(1),
                    s.ack.text(),
                    if s.processing.is_zero() {
                        "none".to_string()
                    } else {
                        human_duration(s.processing.as_secs_f64())
                    }
                )?;
                writeln!(out, "            group {}", props_inline(&s.group, ""))?;
                writeln!(out, "            members {}", props_inline(&s.client, ""))?;
            }
            (None, Some(c)) => {
                writeln!(out, "  consumer  {consumer_lead}{}", props_inline(c, ""))?;
                if clients {
                    super::plan_clients::differences(&r.consumer_differences, &consumers, out)?;
                }
            }
            (None, None) => {}
        }
        match &r.capacity {
            None => {
                writeln!(out, "  workload  {}", workload_text(&r.workload))?;
                writeln!(out, "  estimate  {}", estimate_text(&r.estimate()))?;
            }
            Some(c) => search_text(&r.workload, c, out)?,
        }
        faults_text(&r.faults, out)?;
        for w in crate::plan::limits::before_the_run(r) {
            writeln!(out, "  warning   {w}")?;
        }
    }
    if !p.expect.is_empty() {
        writeln!(out)?;
        writeln!(out, "expect")?;
        for a in &p.expect {
            writeln!(out, "  {}", a.text)?;
            if a.instances.is_empty() {
                writeln!(out, "    no run: not evaluated")?;
            } else if a
                .instances
                .iter()
                .all(|i| i.refs.iter().all(|r| r.select.is_empty()))
            {
                // Each instance reads its own run only: the list of runs says it all.
                let runs: Vec<usize> = a.instances.iter().map(|i| i.from + 1).collect();
                writeln!(out, "    on run{} {}", plural(runs.len()), ranges(&runs))?;
            } else {
                for i in &a.instances {
                    writeln!(out, "    {}", instance_text(p, &i.refs))?;
                }
            }
        }
    }
    if defaults {
        super::plan_clients::defaults(p, out)?;
    }
    Ok(())
}

/// A capacity search: its workload (each probe's, at the search's rate), its bounds, its SLO
/// and its worst case.
fn search_text(w: &Workload, c: &CapacitySearch, out: &mut dyn Write) -> io::Result<()> {
    let mut probe = w.clone();
    probe.rate = RateSpec::Unlimited;
    let text = workload_text(&probe);
    // Each probe's rate is the search's: the workload line shows the rest.
    let rest = text
        .split(", ")
        .filter(|p| *p != "unlimited rate")
        .collect::<Vec<_>>()
        .join(", ");
    writeln!(out, "  workload  {rest}")?;
    writeln!(
        out,
        "  capacity  from {} to {}, SLO met in {}% of probes, to within {}%: probes of {} after \
         a {} warm-up, {} trial{} per rate, tolerance {}%{}",
        compact_rate(c.from),
        compact_rate(c.to),
        pct(c.reliability),
        pct(c.precision),
        human_duration(c.probe.as_secs_f64()),
        human_duration(c.warmup.as_secs_f64()),
        c.trials,
        plural(c.trials as usize),
        pct(c.tolerance),
        c.hold.map_or_else(String::new, |h| format!(
            "; then the rate that holds {}: long probes stepping down from the answer until {} of {} meet the SLO",
            human_duration(h.as_secs_f64()),
            HOLD_MET,
            HOLD_PROBES
        ))
    )?;
    if c.slo.is_empty() {
        writeln!(
            out,
            "  slo       none: sustaining the rate is the only test"
        )?;
    }
    for (i, a) in c.slo.iter().enumerate() {
        writeln!(out, "  {:<8}  {}", if i == 0 { "slo" } else { "" }, a.text)?;
    }
    let n = c.max_probes();
    let budget = match c.budget {
        Some(b) if b < c.worst_case() => {
            format!(", cut by the budget of {}", human_duration(b.as_secs_f64()))
        }
        Some(b) => format!(" (budget {})", human_duration(b.as_secs_f64())),
        None => String::new(),
    };
    let long = c.hold.map_or_else(String::new, |h| {
        let most = HOLD_PROBES * HOLD_RATES;
        format!(
            ", then at most {most} long probes of {}",
            human_duration(h.as_secs_f64())
        )
    });
    writeln!(
        out,
        "  estimate  at most {n} probe{} and {n} canar{}{long}: about {} at worst, {} typically{budget}",
        plural(n as usize),
        if n == 1 { "y" } else { "ies" },
        human_duration(c.worst_case().as_secs_f64()),
        human_duration(c.typical().as_secs_f64()),
    )
}

/// `0.02` → `2`.
fn pct(f: f64) -> String {
    format!("{}", (f * 100.0 * 1e6).round() / 1e6)
}

/// The timeline, one action a line, times from the start of the measured phase: `faults    at
/// 15s kill broker 2 for 10s (until 25s)`.
fn faults_text(faults: &[Fault], out: &mut dyn Write) -> io::Result<()> {
    for (i, f) in faults.iter().enumerate() {
        let lead = if i == 0 { "faults" } else { "" };
        let until = match f.until() {
            Some(u) => format!(" (until {})", human_duration(u.as_secs_f64())),
            None if matches!(
                f.action,
                FaultAction::Kill(_) | FaultAction::Pause(_) | FaultAction::StopConsumer(_)
            ) =>
            {
                " (until the run ends)".to_string()
            }
            None => String::new(),
        };
        writeln!(out, "  {lead:<8}  {}{until}", f.describe())?;
    }
    Ok(())
}

/// `run 3 (codec=zstd) vs [codec=none] → run 1 (codec=none)`: each reference once, in the
/// order written.
fn instance_text(p: &Plan, refs: &[Reference]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for r in refs {
        let run = &p.runs[r.run];
        let target = format!("run {} ({})", RunNo(r.run), run.label);
        let part = if r.select.is_empty() {
            target
        } else {
            format!("[{}] → {target}", r.select.join(", "))
        };
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    parts.join(" vs ")
}

/// `1-3, 5, 7-9`: run numbers, ascending, runs of consecutive ones folded.
fn ranges(runs: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let mut j = i;
        while j + 1 < runs.len() && runs[j + 1] == runs[j] + 1 {
            j += 1;
        }
        out.push(if j > i + 1 {
            format!("{}-{}", runs[i], runs[j])
        } else if j == i + 1 {
            format!("{}, {}", runs[i], runs[j])
        } else {
            runs[i].to_string()
        });
        i = j + 1;
    }
    out.join(", ")
}

/// `about 12s`, or why there is no figure. Sending time only: connecting, topic creation and
/// the drain come on top.
fn estimate_text(e: &Estimate) -> String {
    let phase = |x: &PhaseEstimate| match (x.duration, x.records) {
        (Some(d), Some(n)) => format!("{} ({n} records)", human_duration(d.as_secs_f64())),
        (Some(d), None) => human_duration(d.as_secs_f64()),
        (None, Some(n)) => format!("unknown ({n} records at an unlimited rate)"),
        (None, None) => "unknown".to_string(),
    };
    let measured = phase(&e.measured);
    match (&e.warmup, e.total) {
        (None, Some(_)) => format!("about {measured}"),
        (None, None) => measured,
        (Some(w), Some(t)) => format!(
            "about {}: warm-up {}, then {measured}",
            human_duration(t.as_secs_f64()),
            phase(w)
        ),
        (Some(w), None) => format!("warm-up {}, then {measured}", phase(w)),
    }
}

fn total_text(p: &Plan) -> String {
    let e = &p.estimate;
    let known = format!("about {}", human_duration(e.known.as_secs_f64()));
    match e.unknown_runs {
        0 => known,
        n if n == p.runs.len() => {
            "unknown (every run sends a record count at an unlimited rate)".to_string()
        }
        n => format!(
            "{known} plus {n} run{} of unknown duration (a record count at an unlimited rate)",
            plural(n)
        ),
    }
}

fn props_inline(p: &Props, lead: &str) -> String {
    let items: Vec<String> = p
        .masked()
        .iter()
        .filter(|x| x.key != "bootstrap.servers")
        .map(|x| format!("{}={}", x.key, x.value))
        .collect();
    if items.is_empty() {
        String::new()
    } else {
        format!("{lead}{}", items.join(" "))
    }
}

pub fn workload_text(w: &Workload) -> String {
    let mut parts = Vec::new();
    if let Some(m) = w.messages {
        parts.push(format!("{m} messages"));
    }
    if let Some(d) = w.duration {
        parts.push(format!("for {}", human_duration(d.as_secs_f64())));
    }
    parts.push(match &w.rate {
        RateSpec::Unlimited => "unlimited rate".to_string(),
        RateSpec::Fixed(r) => format!("at {}", human_rate(*r)),
        RateSpec::Shape(segs) => segs
            .iter()
            .map(|s| match s.ramp_to {
                Some(to) => format!(
                    "ramp {} to {} over {}",
                    human_rate(s.per_sec),
                    human_rate(to),
                    human_duration(s.duration.as_secs_f64())
                ),
                None => format!(
                    "{} for {}",
                    human_rate(s.per_sec),
                    human_duration(s.duration.as_secs_f64())
                ),
            })
            .collect::<Vec<_>>()
            .join(", then "),
    });
    match &w.backlog {
        Some(crate::model::Backlog::Records(n)) => {
            parts.push(format!("a backlog of {n} records first"));
        }
        Some(crate::model::Backlog::Cold { records, within }) => parts.push(format!(
            "a cold backlog of {records} records first, read once in remote storage (waiting up to {})",
            human_duration(within.as_secs_f64())
        )),
        Some(crate::model::Backlog::Existing) => {
            parts.push("the topic's records as the backlog".to_string());
        }
        None => {}
    }
    if let Some(n) = w.in_flight {
        let until = if w.in_flight_until_consumed {
            " until consumed"
        } else {
            ""
        };
        parts.push(format!("at most {n} in flight{until}"));
    }
    if w.producers > 1 {
        parts.push(format!("{} producers", w.producers));
    }
    if w.topics > 1 {
        parts.push(format!("over {} topics", w.topics));
    }
    parts.push(match &w.payload {
        PayloadSpec::Random {
            size,
            compressibility,
        } if *compressibility > 0.0 => {
            format!(
                "random {} ({}% compressible)",
                size_text(size),
                compressibility * 100.0
            )
        }
        PayloadSpec::Random { size, .. } => format!("random {}", size_text(size)),
        PayloadSpec::Json { size, .. } => format!("unique JSON {}", size_text(size)),
        PayloadSpec::File { path, lines } => format!("{} lines of {}", lines.len(), path.display()),
        PayloadSpec::Constant { size, .. } => format!("constant {}", size_text(size)),
        PayloadSpec::Schema(s) => s.describe(),
    });
    parts.push(match &w.key {
        KeySpec::None => "no key".into(),
        KeySpec::Sequence => "sequential keys".into(),
        KeySpec::Uniform(n) => format!("uniform keys over {n}"),
        KeySpec::Zipf { n, s } => format!("zipf({s}) keys over {n}"),
        KeySpec::Fixed(k) => format!("key \"{k}\""),
        KeySpec::Schema(s) => format!("keys: {}", s.describe()),
    });
    if w.tombstones > 0.0 {
        parts.push(format!(
            "{}% tombstones",
            (w.tombstones * 100.0 * 1e6).round() / 1e6
        ));
    }
    if let Some(c) = &w.compaction {
        parts.push(format!(
            "compaction verified after the run (within {})",
            human_duration(c.within.as_secs_f64())
        ));
    }
    if let Some(t) = &w.transaction {
        let size = match t.size {
            crate::model::TxnSize::Messages(n) => format!("transactions of {n} records"),
            crate::model::TxnSize::Duration(d) => {
                format!("transactions of {}", human_duration(d.as_secs_f64()))
            }
        };
        parts.push(if t.abort > 0.0 {
            format!("{size}, {}% aborted", t.abort * 100.0)
        } else {
            size
        });
    }
    if let Some(wu) = &w.warmup {
        parts.push(match wu {
            Warmup::Messages(n) => format!("warm-up {n} messages"),
            Warmup::Duration(d) => format!("warm-up {}", human_duration(d.as_secs_f64())),
            Warmup::Auto { max } => format!(
                "warm-up until the rate settles, at most {}",
                human_duration(max.as_secs_f64())
            ),
        });
    }
    if let Some(seed) = w.seed {
        parts.push(format!("seed {seed}"));
    }
    parts.join(", ")
}

/// A payload's size: one, or its distribution with the mean, median, 99th percentile and
/// largest size of what it draws (`lognormal(median 1KiB, sigma 0.8, max 64MiB): mean
/// 1.3KiB, p50 1KiB, p99 6.4KiB, up to 1.2MiB`).
fn size_text(size: &crate::model::PayloadSize) -> String {
    match size.dist() {
        None => human_bytes(size.mean()),
        Some(d) => format!(
            "sizes {}: mean {}, p50 {}, p99 {}, up to {}",
            d.shape.describe(),
            human_bytes(d.mean),
            human_bytes(d.table.quantile(0.5) as f64),
            human_bytes(d.table.quantile(0.99) as f64),
            human_bytes(d.largest as f64)
        ),
    }
}

/// The run's topic, or its topics: all of a few, the first and last of more (they differ
/// only by their index), and how many.
fn topic_names(names: &[String]) -> String {
    match names {
        [one] => one.clone(),
        [first, .., last] if names.len() > 3 => {
            format!("{first} … {last} ({} topics)", names.len())
        }
        all => format!("{} ({} topics)", all.join(", "), all.len()),
    }
}
