//! Comparing two result files run by run (`kafkabench compare`): the change of each figure from
//! the baseline, which way is better, and the `--fail-on` bounds a CI gate holds it to.

mod bound;
mod configs;
mod noise;
mod text;

pub(crate) use bound::{
    better, metric_from_name, metric_name, parse_bounds, shown_amount, Better, Bound,
};
pub(crate) use noise::ALPHA;
pub(crate) use text::{write, Sides};

use super::json::ResultFile;
use crate::measure::capacity::Limit;
use crate::measure::{LatencySummary, RunResult};
use crate::model::{LatencyKind, Metric, Stat};

/// The figures every comparison shows, in the language's names, when either side has them
/// (and every series of `history`).
pub(crate) const SHOWN: &[&str] = &[
    // A search cell's result; skipped, as every figure is, in runs that have none.
    "capacity",
    "throughput",
    "ack.p50",
    "ack.p99",
    "ack.p999",
    "e2e.p50",
    "e2e.p99",
    "e2e.p999",
    "disk.ratio",
    "failed",
    "lost",
];

/// Changes smaller than this (percent) are shown but called neither better nor worse.
const NOISE_PCT: f64 = 0.05;

/// One figure of one run on both sides.
#[derive(Clone, Debug)]
pub(crate) struct Figure {
    pub name: String,
    pub metric: Metric,
    pub baseline: Option<f64>,
    pub current: Option<f64>,
    /// The first bound this figure went past.
    pub breached: Option<Breach>,
    /// With trials on both sides: the change judged against their noise.
    pub noise: Option<crate::measure::stats::Change>,
}

/// A run found on both sides.
#[derive(Clone, Debug)]
pub(crate) struct RunDelta {
    pub label: String,
    /// False when either side's run was cut short.
    pub complete: bool,
    pub figures: Vec<Figure>,
}

/// A figure that moved past a bound.
#[derive(Clone, Debug)]
pub(crate) struct Breach {
    pub label: String,
    pub name: String,
    pub baseline: f64,
    pub current: f64,
    /// As the bound measures it: percent, or base units.
    pub change: f64,
    pub bound: Bound,
}

/// Everything `compare` found, ready to write.
#[derive(Clone, Debug, Default)]
pub(crate) struct Comparison {
    pub runs: Vec<RunDelta>,
    pub only_baseline: Vec<String>,
    pub only_current: Vec<String>,
    pub breaches: Vec<Breach>,
    /// Bound checks that could not be made: a figure missing on one side.
    pub unchecked: Vec<String>,
    /// How many bound checks were made.
    pub checks: usize,
    /// Said before the table (different scenarios, for instance).
    pub notes: Vec<String>,
    /// Bounds a figure went past within the noise (not significant): not failed.
    pub within_noise: Vec<String>,
    /// The significance level a change must reach to fail a bound (with trials).
    pub alpha: f64,
}

impl Comparison {
    /// Whether a bound was exceeded: the gate fails (exit 1).
    pub(crate) fn regressed(&self) -> bool {
        !self.breaches.is_empty()
    }
}

/// Matches runs by label (in order, when a label repeats) and measures every change, at the
/// default significance level.
#[cfg(test)]
pub(crate) fn compare(baseline: &ResultFile, current: &ResultFile, bounds: &[Bound]) -> Comparison {
    compare_at(baseline, current, bounds, noise::ALPHA)
}

/// `compare` at significance level `alpha` (`--alpha`).
pub(crate) fn compare_at(
    baseline: &ResultFile,
    current: &ResultFile,
    bounds: &[Bound],
    alpha: f64,
) -> Comparison {
    let mut c = Comparison {
        alpha,
        ..Comparison::default()
    };
    if baseline.scenario != current.scenario {
        c.notes.push(format!(
            "the files come from different scenarios ({} and {}); runs are matched by label",
            baseline.scenario, current.scenario
        ));
    }
    if let (Some(b), Some(cur)) = (&baseline.environment, &current.environment) {
        let d = cur.differences(b);
        if !d.is_empty() {
            c.notes.push(format!(
                "measured in different environments, so a change may be theirs: {}",
                d.join("; ")
            ));
        }
    }
    c.notes.extend(configs::brokers(baseline, current));
    let mut taken = vec![false; current.runs.len()];
    let mut single: Vec<String> = Vec::new();
    // Runs matched across different clients, by the pair of clients.
    let mut across: Vec<(String, String, Vec<String>)> = Vec::new();
    for b in &baseline.runs {
        let found = current
            .runs
            .iter()
            .enumerate()
            .find(|(i, r)| !taken[*i] && r.label == b.label);
        let Some((i, cur)) = found else {
            c.only_baseline.push(b.label.clone());
            continue;
        };
        taken[i] = true;
        c.notes.extend(configs::topic(b, cur));
        let (bc, cc) = (clients(baseline, b), clients(current, cur));
        // The read side counts when both files have one.
        let differ =
            bc.0[0] != cc.0[0] || (bc.0.get(1)).zip(cc.0.get(1)).is_some_and(|(x, y)| x != y);
        if differ {
            match across.iter_mut().find(|(x, y, _)| *x == bc.1 && *y == cc.1) {
                Some(a) => a.2.push(b.label.clone()),
                None => across.push((bc.1, cc.1, vec![b.label.clone()])),
            }
        }
        for (side, r) in [("baseline", b), ("current", cur)] {
            if let Some(n) = no_capacity(r) {
                c.notes
                    .push(format!("run `{}` in the {side} file: {n}", r.label));
            }
        }
        if noise::count(b) < 2 || noise::count(cur) < 2 {
            single.push(b.label.clone());
        }
        let d = run_delta(b, cur, bounds, &mut c);
        c.runs.push(d);
    }
    for (b, cur, labels) in across {
        c.notes.push(format!(
            "{} measured on different clients ({b} in the baseline, {cur} now), so a change \
             may be the client's",
            if labels.len() == c.runs.len() && labels.len() > 1 {
                "every run was".to_string()
            } else {
                let l: Vec<String> = labels.iter().map(|l| format!("`{l}`")).collect();
                format!(
                    "run{} {} {}",
                    crate::format::plural(l.len()),
                    l.join(", "),
                    if l.len() == 1 { "was" } else { "were" }
                )
            }
        ));
    }
    if !bounds.is_empty() && !single.is_empty() {
        c.notes.push(format!(
            "one trial on a side of {}: a change cannot be told from noise there, so a bound \
             fails on any move past it; repeat the runs on both sides (`--repeat 6`) to fail \
             only on significant changes",
            if single.len() == c.runs.len() {
                "every run".to_string()
            } else {
                single
                    .iter()
                    .map(|l| format!("`{l}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    c.only_current = current
        .runs
        .iter()
        .zip(&taken)
        .filter(|(_, t)| !**t)
        .map(|(r, _)| r.label.clone())
        .collect();
    c
}

/// A run's clients: what a comparison keys on (a client, and a worker's release: a
/// librdkafka release differs with kafkabench's, which the environment note names), and the
/// words (`producer java 4.4.0, consumer librdkafka 2.12.1`). Files of an older kafkabench ran
/// on librdkafka.
fn clients(f: &ResultFile, r: &RunResult) -> (Vec<String>, String) {
    use crate::model::{ClientKind, ClientRelease};
    let librdkafka = || ClientRelease {
        name: ClientKind::Librdkafka,
        version: (f.librdkafka_version.clone()).unwrap_or_else(|| "(version unknown)".into()),
    };
    let producer = r.producer_client.clone().unwrap_or_else(librdkafka);
    let consumer =
        (r.consumer_client.clone()).or_else(|| r.consumer_config.as_ref().map(|_| librdkafka()));
    let key = |c: &ClientRelease| match c.name {
        ClientKind::Librdkafka => c.name.to_string(),
        _ => c.to_string(),
    };
    let mut keys = vec![key(&producer)];
    let mut words = format!("producer {producer}");
    if let Some(c) = &consumer {
        keys.push(key(c));
        words.push_str(&format!(", consumer {c}"));
    }
    (keys, words)
}

fn run_delta(b: &RunResult, cur: &RunResult, bounds: &[Bound], c: &mut Comparison) -> RunDelta {
    // The default figures, then any a bound names that is not among them.
    let mut metrics: Vec<(String, Metric)> = SHOWN
        .iter()
        .filter_map(|n| Some((n.to_string(), bound::metric_from_name(n)?)))
        .collect();
    for bd in bounds {
        if !metrics.iter().any(|(_, m)| *m == bd.metric) {
            metrics.push((metric_name(bd.metric), bd.metric));
        }
    }
    let mut figures = Vec::new();
    for (name, m) in metrics {
        let hist = both_histograms(b, cur, m);
        let (bv, cv) = (value(b, m, hist), value(cur, m, hist));
        let bounded: Vec<&Bound> = bounds.iter().filter(|bd| bd.metric == m).collect();
        if bv.is_none() && cv.is_none() && bounded.is_empty() && m != Metric::Failed {
            continue;
        }
        let noise = noise::change(b, cur, m, c.alpha);
        let mut breached = None;
        for bd in bounded {
            let (Some(bv), Some(cv)) = (bv, cv) else {
                c.unchecked.push(format!(
                    "`{}` not checked for run `{}`: {}",
                    bd.text,
                    b.label,
                    missing(b, cur, m, (bv, cv), &name)
                ));
                continue;
            };
            c.checks += 1;
            let (change, past) = bd.check(bv, cv);
            if let (true, Some(n)) = (past, &noise) {
                let few =
                    crate::measure::stats::smallest_p_value(n.n_baseline, n.n_current) > c.alpha;
                if few {
                    // No outcome of so few trials is significant: the plain gate applies.
                    c.unchecked.push(format!(
                        "run `{}`: {} and {} trials cannot show a change at {} (4 a side \
                         can), so `{}` is held as without trials",
                        b.label, n.n_baseline, n.n_current, c.alpha, bd.text
                    ));
                } else if !n.significant {
                    c.within_noise.push(format!(
                        "run `{}`: {name} moved {} past `{}`, but within the noise of {} and \
                         {} trials (p = {:.2} > {}): not failed",
                        b.label,
                        noise::change_text(n).unwrap_or_default(),
                        bd.text,
                        n.n_baseline,
                        n.n_current,
                        n.p_value.unwrap_or(1.0),
                        c.alpha
                    ));
                    continue;
                }
            }
            if past && breached.is_none() {
                let br = Breach {
                    label: b.label.clone(),
                    name: name.clone(),
                    baseline: bv,
                    current: cv,
                    change,
                    bound: bd.clone(),
                };
                c.breaches.push(br.clone());
                breached = Some(br);
            }
        }
        figures.push(Figure {
            name,
            metric: m,
            baseline: bv,
            current: cv,
            breached,
            noise,
        });
    }
    RunDelta {
        label: b.label.clone(),
        complete: b.status.is_complete() && cur.status.is_complete(),
        figures,
    }
}

/// Why a figure is missing on a side, for a bound that could not be checked.
fn missing(
    b: &RunResult,
    cur: &RunResult,
    m: Metric,
    v: (Option<f64>, Option<f64>),
    name: &str,
) -> String {
    let no_hist = |r: &RunResult| match m {
        Metric::Latency(kind, _) => {
            summary(r, kind).is_some_and(|s| s.count > 0 && s.histogram().is_none())
        }
        _ => false,
    };
    if no_hist(b) || no_hist(cur) {
        let side = if no_hist(b) {
            "the baseline"
        } else {
            "the current file"
        };
        return format!("{name} needs the histograms of both files, and {side} has none");
    }
    let side = match v {
        (None, None) => "either file",
        (None, _) => "the baseline",
        _ => "the current file",
    };
    format!("{name} is not measured in {side}")
}

fn summary(r: &RunResult, kind: LatencyKind) -> Option<&LatencySummary> {
    match kind {
        LatencyKind::Ack => Some(&r.ack),
        LatencyKind::Service => Some(&r.service),
        LatencyKind::SendDelay => Some(&r.send_delay),
        LatencyKind::E2e => r.e2e.as_ref(),
        LatencyKind::TxnCommit => r.txn.as_ref().map(|t| &t.commit),
        LatencyKind::ShareAck => r.share.as_ref().map(|s| &s.ack),
    }
}

/// Percentiles come from the histograms when both sides kept theirs, so both are read alike.
fn both_histograms(b: &RunResult, cur: &RunResult, m: Metric) -> bool {
    let Metric::Latency(kind, _) = m else {
        return false;
    };
    let has = |r: &RunResult| summary(r, kind).is_some_and(|s| s.histogram().is_some());
    has(b) && has(cur)
}

/// A search's capacity; 0 when every probe failed (the capacity is below the first rate
/// tried), so a gate sees that fall rather than skip it as unmeasured. None for a fixed run,
/// and for a search stopped before any rate passed.
fn capacity(r: &RunResult) -> Option<f64> {
    let c = r.capacity.as_deref()?;
    c.capacity
        .or_else(|| (!c.probes.is_empty() && c.limit != Limit::Stopped).then_some(0.0))
}

/// Why a search's capacity is compared as 0, when it is.
fn no_capacity(r: &RunResult) -> Option<String> {
    let c = r.capacity.as_deref().filter(|c| c.capacity.is_none())?;
    capacity(r)?;
    let what = if c.unstable.is_some() {
        "no rate was stable"
    } else if c.not_narrowed.is_some() {
        "the capacity was not narrowed"
    } else {
        "no rate passed"
    };
    Some(format!(
        "{what} (capacity {}), so its capacity is compared as 0",
        super::capacity::headline(c)
    ))
}

/// A figure in base units; latencies from the histogram, or else the file's own percentiles.
fn value(r: &RunResult, m: Metric, hist: bool) -> Option<f64> {
    if m == Metric::Capacity {
        return capacity(r);
    }
    let Metric::Latency(kind, stat) = m else {
        return r.metric(m);
    };
    if hist {
        return r.metric(m);
    }
    let s = summary(r, kind).filter(|s| s.count > 0)?;
    let ms = match stat {
        Stat::Percentile(50.0) => s.p50_ms,
        Stat::Percentile(90.0) => s.p90_ms,
        Stat::Percentile(99.0) => s.p99_ms,
        Stat::Percentile(99.9) => s.p999_ms,
        Stat::Percentile(_) => return None,
        Stat::Min => s.min_ms,
        Stat::Max => s.max_ms,
        Stat::Mean => s.mean_ms,
    };
    Some(ms / 1e3)
}

#[cfg(test)]
mod tests;
