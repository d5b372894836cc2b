//! The plan's clients as a person reads them: each side's client and release before its
//! settings, the settings whose value differs between clients, and with `--defaults` every
//! client's defaults.

use std::io::{self, Write};

use crate::model::{ClientKind, ClientRelease, Side};
use crate::plan::{Difference, Plan, RunPlan};

/// Whether the text names the clients: a side of the plan runs on a client other than
/// librdkafka, or `--defaults` asks. A plan on librdkafka alone reads as it always has.
pub(super) fn shown(p: &Plan, defaults: bool) -> bool {
    let worker = |c: ClientKind| c != ClientKind::Librdkafka;
    defaults
        || p.runs.iter().any(|r| {
            worker(r.producer_client) || r.consumer_release().is_some_and(|c| worker(c.name))
        })
}

/// `  clients   producer librdkafka 2.12.1, java 4.4.0; consumer librdkafka 2.12.1`
pub(super) fn header(p: &Plan, out: &mut dyn Write) -> io::Result<()> {
    let mut sides = Vec::new();
    for side in [Side::Producer, Side::Consumer] {
        let mut used: Vec<ClientRelease> = Vec::new();
        for r in &p.runs {
            let release = match side {
                Side::Producer => Some(r.producer_release()),
                Side::Consumer => r.consumer_release(),
            };
            if let Some(c) = release.filter(|c| !used.contains(c)) {
                used.push(c);
            }
        }
        if !used.is_empty() {
            let names: Vec<String> = used.iter().map(ToString::to_string).collect();
            sides.push(format!("{} {}", side.name(), names.join(", ")));
        }
    }
    writeln!(out, "  clients   {}", sides.join("; "))
}

/// `java 4.4.0: `, before a side's settings.
pub(super) fn lead(c: &ClientRelease) -> String {
    format!("{c}: ")
}

/// The clients a side's differences are shown against: the others its side runs on in this
/// plan; every client for a side on one worker throughout (how it differs from librdkafka,
/// where most earlier results come from, is what its reader wants), and with `--defaults`;
/// none for a side on librdkafka throughout.
pub(super) fn against(p: &Plan, side: Side, defaults: bool) -> Vec<ClientKind> {
    let mut used = Vec::new();
    for r in &p.runs {
        let c = match side {
            Side::Producer => Some(r.producer_client),
            Side::Consumer => r.consumer_release().map(|c| c.name),
        };
        if let Some(c) = c.filter(|c| !used.contains(c)) {
            used.push(c);
        }
    }
    match used.as_slice() {
        _ if defaults => ClientKind::ALL.to_vec(),
        [ClientKind::Librdkafka] => Vec::new(),
        [_] => ClientKind::ALL.to_vec(),
        _ => used,
    }
}

/// A side's settings that another client it is compared with would have otherwise, one a
/// line: `≠ batch size: batch.size=16384 (default); librdkafka batch.size=1000000, …`.
pub(super) fn differences(
    ds: &[Difference],
    against: &[ClientKind],
    out: &mut dyn Write,
) -> io::Result<()> {
    for d in ds {
        let others: Vec<String> = (d.others.iter())
            .filter(|o| against.contains(&o.client))
            .map(|o| format!("{} {}", o.client, said(o.key, &o.value)))
            .collect();
        if others.is_empty() {
            continue;
        }
        let default = d.key.is_some() && !d.set;
        writeln!(
            out,
            "            ≠ {}: {}{}; {}",
            d.setting,
            said(d.key, &d.value),
            if default { " (default)" } else { "" },
            others.join(", ")
        )?;
    }
    Ok(())
}

fn said(key: Option<&str>, value: &str) -> String {
    match key {
        Some(k) => format!("{k}={value}"),
        None => value.to_string(),
    }
}

/// The run's producer and consumer lines' leads, when clients are shown.
pub(super) fn leads(r: &RunPlan, show: bool) -> (String, String) {
    if !show {
        return (String::new(), String::new());
    }
    (
        lead(&r.producer_release()),
        r.consumer_release().map(|c| lead(&c)).unwrap_or_default(),
    )
}

/// `--defaults`: every default of each client the plan runs on, a side at a time.
pub(super) fn defaults(p: &Plan, out: &mut dyn Write) -> io::Result<()> {
    for d in &p.client_defaults {
        writeln!(out)?;
        writeln!(
            out,
            "defaults of {} {}, {}",
            d.client,
            d.version,
            d.side.name()
        )?;
        for x in d.defaults.masked().iter() {
            writeln!(out, "  {}={}", x.key, x.value)?;
        }
    }
    Ok(())
}
