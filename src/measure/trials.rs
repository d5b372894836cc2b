//! A repeated run (`repeat = N`): its trials, each a whole run of its own on fresh topics, and
//! what the run's figures are made of them. Counts add up over the trials (a loss in any trial
//! is a loss); every other figure is the median over the trials, with an interval
//! (`measure::stats`). The run's own fields are those of its median trial by throughput: a real
//! run, consistent in itself, for readers of the result file that know nothing of trials.

use serde::{Deserialize, Serialize};

use super::{new_histogram, LatencySummary, RunResult, RunStatus};
use crate::model::{LatencyKind, Metric, Stat};

/// The level of the intervals the table and the result file show.
pub const LEVEL: f64 = 0.95;

/// Every trial of a repeated run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Trials {
    /// Each trial's whole result, in the order they ran.
    pub results: Vec<RunResult>,
    /// The trial whose fields the run shows (the median by throughput), from 0.
    pub shown: usize,
    /// The trials' acknowledgement latencies, their histograms added together.
    pub ack: LatencySummary,
    /// The same for end-to-end latency, with a consumer.
    #[serde(default)]
    pub e2e: Option<LatencySummary>,
    /// The headline figures over the trials: median, interval, spread, outliers.
    #[serde(default)]
    pub figures: Vec<TrialFigure>,
    /// `repeat = auto`: the looks, what the last reached and why the trials stopped. Its
    /// figures' intervals are then at the look's level (`AutoOutcome::look_level`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<super::sequential::AutoOutcome>,
}

/// One figure over the trials.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialFigure {
    /// Its name in the scenario language (`throughput`, `ack.p99`).
    pub metric: String,
    /// Each trial's value, in the order the trials ran (base units).
    pub values: Vec<f64>,
    pub median: f64,
    /// The interval of the median (order statistics), and what it covers.
    pub lo: f64,
    pub hi: f64,
    pub coverage: f64,
    /// Robust coefficient of variation (1.4826 · MAD / median).
    pub spread: Option<f64>,
    /// Trials far outside the others (indices into `values`).
    pub outliers: Vec<usize>,
}

/// The headline figures summarised over trials, with their names.
pub const HEADLINE: &[(&str, Metric)] = &[
    ("throughput", Metric::Throughput),
    ("throughput.bytes", Metric::ThroughputBytes),
    (
        "ack.p50",
        Metric::Latency(LatencyKind::Ack, Stat::Percentile(50.0)),
    ),
    (
        "ack.p99",
        Metric::Latency(LatencyKind::Ack, Stat::Percentile(99.0)),
    ),
    (
        "ack.p999",
        Metric::Latency(LatencyKind::Ack, Stat::Percentile(99.9)),
    ),
    (
        "e2e.p50",
        Metric::Latency(LatencyKind::E2e, Stat::Percentile(50.0)),
    ),
    (
        "e2e.p99",
        Metric::Latency(LatencyKind::E2e, Stat::Percentile(99.0)),
    ),
    ("consume.throughput", Metric::ConsumeThroughput),
    ("lag.max", Metric::LagMax),
    ("disk.ratio", Metric::DiskRatio),
    ("capacity", Metric::Capacity),
];

/// One run made of its trials (at least one), its intervals at [`LEVEL`].
pub fn combine(results: Vec<RunResult>) -> RunResult {
    combine_at(results, LEVEL)
}

/// One run made of its trials, its figures' intervals at `level` (an auto-repeated run's are
/// at its looks' level, wider than [`LEVEL`]'s, so that they cover at [`LEVEL`] over the looks).
pub fn combine_at(mut results: Vec<RunResult>, level: f64) -> RunResult {
    if results.len() == 1 {
        return results.pop().expect("one trial");
    }
    let mut by_throughput: Vec<usize> = (0..results.len()).collect();
    by_throughput.sort_by(|a, b| {
        results[*a]
            .throughput_msgs
            .total_cmp(&results[*b].throughput_msgs)
    });
    let shown = by_throughput[(by_throughput.len() - 1) / 2];
    let mut run = results[shown].clone();
    // The run is as complete as its least complete trial.
    if let Some(worse) = results.iter().find(|r| !r.status.is_complete()) {
        run.status = worse.status.clone();
    } else {
        run.status = RunStatus::Complete;
    }
    aggregate(&mut run, &results);
    let mut ack = new_histogram();
    let mut e2e = None;
    for r in &results {
        if let Some(h) = r.ack.histogram() {
            let _ = ack.add(h);
        }
        if let Some(h) = r.e2e.as_ref().and_then(|e| e.histogram()) {
            let _ = e2e.get_or_insert_with(new_histogram).add(h);
        }
    }
    let mut trials = Trials {
        results,
        shown,
        ack: LatencySummary::from_histogram(&ack),
        e2e: e2e.as_ref().map(LatencySummary::from_histogram),
        figures: Vec::new(),
        auto: None,
    };
    trials.figures = HEADLINE
        .iter()
        .filter_map(|(name, m)| figure(name, &trials.values(*m), level))
        .collect();
    run.trials = Some(Box::new(trials));
    run
}

/// A repeated run made again from its trials (read back from a file and derived again), at
/// the level it was made at, keeping what an automatic repetition reached.
pub fn recombine(t: Trials) -> RunResult {
    let level = t.auto.as_ref().map_or(LEVEL, |a| a.look_level);
    let auto = t.auto;
    let mut r = combine_at(t.results, level);
    if let Some(made) = r.trials.as_mut() {
        made.auto = auto;
    }
    r
}

/// The run's own fields made of its trials, as `metric` reads them: counts summed, rates,
/// times and ratios the median over the trials, each latency percentile the median of the
/// trials' (its histogram the trials' added together). What is not here (internals, the time
/// series, the read side's details) is the shown trial's.
fn aggregate(run: &mut RunResult, trials: &[RunResult]) {
    let sum = |f: &dyn Fn(&RunResult) -> u64| trials.iter().map(f).sum::<u64>();
    let med = |f: &dyn Fn(&RunResult) -> Option<f64>| {
        super::stats::median(&trials.iter().filter_map(f).collect::<Vec<_>>())
    };
    run.sent = sum(&|r| r.sent);
    run.acked = sum(&|r| r.acked);
    run.failed = sum(&|r| r.failed);
    run.queue_full = sum(&|r| r.queue_full);
    run.key_value_bytes = sum(&|r| r.key_value_bytes);
    run.failed_by_kind.clear();
    for r in trials {
        for (k, n) in &r.failed_by_kind {
            *run.failed_by_kind.entry(k.clone()).or_default() += n;
        }
    }
    run.elapsed_secs = med(&|r| Some(r.elapsed_secs)).unwrap_or(run.elapsed_secs);
    run.throughput_msgs = med(&|r| Some(r.throughput_msgs)).unwrap_or_default();
    run.throughput_bytes = med(&|r| Some(r.throughput_bytes)).unwrap_or_default();
    run.achieved_rate = med(&|r| Some(r.achieved_rate)).unwrap_or_default();
    run.schedule_slip_secs = med(&|r| r.schedule_slip_secs);
    run.disk_bytes = med(&|r| r.disk_bytes.map(|b| b as f64)).map(|b| b as u64);
    run.disk_ratio = med(&|r| r.disk_ratio);
    run.ack = latency(trials.iter().map(|r| Some(&r.ack)));
    run.service = latency(trials.iter().map(|r| Some(&r.service)));
    run.send_delay = latency(trials.iter().map(|r| Some(&r.send_delay)));
    if run.e2e.is_some() {
        run.e2e = Some(latency(trials.iter().map(|r| r.e2e.as_ref())));
    }
    if let Some(d) = &mut run.delivery {
        let ds: Vec<_> = trials.iter().filter_map(|r| r.delivery.as_ref()).collect();
        d.consumed = ds.iter().map(|x| x.consumed).sum();
        // Unknown in one trial is unknown for the run.
        d.lost = ds.iter().map(|x| x.lost).sum();
        d.incomplete = ds.iter().any(|x| x.incomplete);
        d.failed_but_delivered = ds.iter().map(|x| x.failed_but_delivered).sum();
        d.duplicated = ds.iter().map(|x| x.duplicated).sum();
        d.reordered = ds.iter().map(|x| x.reordered).sum();
    }
    if let Some(c) = &mut run.consume {
        let cs: Vec<_> = trials.iter().filter_map(|r| r.consume.as_ref()).collect();
        c.records = cs.iter().map(|x| x.records).sum();
        c.bytes = cs.iter().map(|x| x.bytes).sum();
        c.redelivered = cs.iter().map(|x| x.redelivered).sum();
        c.aborted_read = cs.iter().map(|x| x.aborted_read).sum();
        // A run's rebalances describe the run, as its longest stall does: medians, not sums
        // (three trials of 5 rebalances are 5, not 15).
        c.rebalances = med(&|r| r.consume.as_ref().map(|x| x.rebalances as f64))
            .map_or(c.rebalances, |n| n.round() as u64);
        c.rebalance_secs = med(&|r| r.consume.as_ref().and_then(|x| x.rebalance_secs));
        c.stall_secs = med(&|r| r.consume.as_ref().and_then(|x| x.stall_secs));
        c.throughput_msgs =
            med(&|r| r.consume.as_ref().map(|x| x.throughput_msgs)).unwrap_or(c.throughput_msgs);
        c.throughput_bytes =
            med(&|r| r.consume.as_ref().map(|x| x.throughput_bytes)).unwrap_or(c.throughput_bytes);
        c.lag_max = med(&|r| r.consume.as_ref().and_then(|x| x.lag_max).map(|l| l as f64))
            .map(|l| l as u64);
    }
}

/// A latency over trials: each statistic the median of the trials', the histogram (for
/// re-analysis) the trials' added together.
fn latency<'a>(parts: impl Iterator<Item = Option<&'a LatencySummary>>) -> LatencySummary {
    let parts: Vec<&LatencySummary> = parts.flatten().filter(|s| s.count > 0).collect();
    let mut h = new_histogram();
    for p in &parts {
        if let Some(x) = p.histogram() {
            let _ = h.add(x);
        }
    }
    let mut s = LatencySummary::from_histogram(&h);
    let med = |f: fn(&LatencySummary) -> f64| {
        super::stats::median(&parts.iter().map(|p| f(p)).collect::<Vec<_>>())
    };
    if let Some(m) = med(|p| p.p50_ms) {
        s.p50_ms = m;
        s.p90_ms = med(|p| p.p90_ms).unwrap_or(s.p90_ms);
        s.p99_ms = med(|p| p.p99_ms).unwrap_or(s.p99_ms);
        s.p999_ms = med(|p| p.p999_ms).unwrap_or(s.p999_ms);
        s.mean_ms = med(|p| p.mean_ms).unwrap_or(s.mean_ms);
    }
    s
}

/// The summary of one figure's values; None without any.
fn figure(name: &str, values: &[f64], level: f64) -> Option<TrialFigure> {
    let e = super::stats::median_interval(values, level)?;
    Some(TrialFigure {
        metric: name.to_string(),
        values: values.to_vec(),
        median: e.median,
        lo: e.lo,
        hi: e.hi,
        coverage: e.coverage,
        spread: super::stats::spread(values),
        outliers: super::stats::outliers(values),
    })
}

impl Trials {
    /// Each trial's own value of `m`, where it was measured.
    pub fn values(&self, m: Metric) -> Vec<f64> {
        self.results
            .iter()
            .filter_map(|r| r.own_metric(m))
            .collect()
    }

    /// `m` over the trials: the sum of a count, the median of anything else.
    pub fn metric(&self, m: Metric) -> Option<f64> {
        let v = self.values(m);
        if v.is_empty() {
            None
        } else if m.summed() {
            Some(v.iter().sum())
        } else {
            super::stats::median(&v)
        }
    }
}
