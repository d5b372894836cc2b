//! Stage 7, report. Every reporter writes to any `Write`, so tests can read what a user sees.

pub mod compare;
pub mod html;
pub mod json;
pub mod junit;
pub mod table;

use std::io::{self, Write};

use crate::assert::Verdict;

use crate::format::{human_bytes, human_duration, human_rate, plural};
use crate::model::{KeySpec, PayloadSpec, Props, RateSpec, Warmup, Workload};
use crate::plan::Plan;

/// Human-readable plan: one block per run with its effective settings.
pub fn plan_text(p: &Plan, out: &mut dyn Write) -> io::Result<()> {
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
    for r in &p.runs {
        writeln!(out)?;
        writeln!(out, "run {}/{}  {}", r.index + 1, p.runs.len(), r.label)?;
        writeln!(out, "  cluster   {}", r.bootstrap)?;
        let t = &r.topic;
        writeln!(
            out,
            "  topic     {}  partitions={} replication={}{}{}",
            t.name,
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
        writeln!(out, "  producer  {}", props_inline(&r.producer, ""))?;
        if let Some(c) = &r.consumer {
            writeln!(out, "  consumer  {}", props_inline(c, ""))?;
        }
        writeln!(out, "  workload  {}", workload_text(&r.workload))?;
    }
    if !p.assertions.is_empty() {
        writeln!(out)?;
        writeln!(out, "expect")?;
        for a in &p.assertions {
            writeln!(out, "  {}", a.text)?;
        }
    }
    Ok(())
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
    parts.push(match &w.payload {
        PayloadSpec::Random {
            size,
            compressibility,
        } if *compressibility > 0.0 => {
            format!(
                "random {} ({}% compressible)",
                human_bytes(*size as f64),
                compressibility * 100.0
            )
        }
        PayloadSpec::Random { size, .. } => format!("random {}", human_bytes(*size as f64)),
        PayloadSpec::Json { size, .. } => format!("unique JSON {}", human_bytes(*size as f64)),
        PayloadSpec::File { path, lines } => format!("{} lines of {}", lines.len(), path.display()),
        PayloadSpec::Constant { size, .. } => format!("constant {}", human_bytes(*size as f64)),
    });
    parts.push(match &w.key {
        KeySpec::None => "no key".into(),
        KeySpec::Sequence => "sequential keys".into(),
        KeySpec::Uniform(n) => format!("uniform keys over {n}"),
        KeySpec::Zipf { n, s } => format!("zipf({s}) keys over {n}"),
        KeySpec::Fixed(k) => format!("key \"{k}\""),
    });
    if let Some(wu) = &w.warmup {
        parts.push(match wu {
            Warmup::Messages(n) => format!("warm-up {n} messages"),
            Warmup::Duration(d) => format!("warm-up {}", human_duration(d.as_secs_f64())),
        });
    }
    parts.join(", ")
}

/// PASS/FAIL per assertion: one line when every run it covers passed, and each failing run
/// spelled out with its measured value and bound.
pub fn verdicts_text(v: &[Verdict], out: &mut dyn Write) -> io::Result<()> {
    if v.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let passed = v.iter().filter(|x| x.pass).count();
    writeln!(out, "expect: {passed} of {} checks held", v.len())?;
    let mut order: Vec<&str> = Vec::new();
    for x in v {
        if !order.contains(&x.assertion.as_str()) {
            order.push(&x.assertion);
        }
    }
    for text in order {
        let group: Vec<&Verdict> = v.iter().filter(|x| x.assertion == text).collect();
        let failed: Vec<&&Verdict> = group.iter().filter(|x| !x.pass).collect();
        if failed.is_empty() {
            let shown: Vec<&str> = group.iter().map(|x| x.measured.as_str()).collect();
            let measured = if shown.len() > 4 {
                format!("{} … {}", shown[..2].join(", "), shown[shown.len() - 1])
            } else {
                shown.join(", ")
            };
            let runs = if group.len() == 1 {
                format!("[{}]", group[0].runs.join(" vs "))
            } else {
                format!("{} runs", group.len())
            };
            writeln!(out, "  PASS  {text}  ({runs}; measured {measured})")?;
        } else {
            writeln!(
                out,
                "  FAIL  {text}  ({} of {} runs failed)",
                failed.len(),
                group.len()
            )?;
            for x in failed {
                writeln!(
                    out,
                    "        [{}] {}",
                    x.runs.join(" vs "),
                    x.detail.clone().unwrap_or_default()
                )?;
            }
        }
    }
    Ok(())
}
