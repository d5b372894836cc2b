//! A history of result files (`kafkabench history`): the same runs measured again and again,
//! grouped into series and searched for the points where a figure changed
//! (`measure::changepoint`), with the `--fail-on` gate on the newest change.
//!
//! A series is one scenario's run (its label, from its coordinates) measured in one stable
//! setting: the brokers' count and release (what they announce in ApiVersions) and the client
//! machine's CPU model and cores. The cluster id, new for every fresh CI broker, and the load
//! are not part of it. A new kafkabench or librdkafka is marked on the series instead of
//! starting a new one: it may be the cause of a change point, and a reader wants to see that.

mod configs;
mod figure;
mod read;
pub(crate) mod text;

use std::collections::BTreeMap;

use serde::Serialize;

pub(crate) use read::{load, Loaded};

use crate::measure::changepoint::{Scale, Settings};
use crate::measure::{Environment, RunResult};
use crate::model::Metric;
use crate::report::compare::{metric_from_name, metric_name, shown_amount, Bound, SHOWN};

/// A change point at the newest results is gated when it is among the last this many.
pub(crate) const LAST: usize = 10;

/// What `history` is asked.
pub(crate) struct Options {
    pub alpha: f64,
    /// The smallest relative change reported (a fraction).
    pub min_effect: f64,
    /// The gate looks at change points among the last this many results of a series.
    pub last: usize,
    pub bounds: Vec<Bound>,
}

/// Everything `history` found, as the table, the page and `--json` show it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct History {
    /// Result files read.
    pub files: usize,
    /// The change-point search: the family-wise significance level over a series' figures
    /// (Holm), the fewest permutations a test that can reach its level draws, the fewest runs
    /// on a side of a change, and the smallest relative change reported.
    pub alpha: f64,
    pub permutations: usize,
    pub min_size: usize,
    pub min_effect: f64,
    pub last: usize,
    pub series: Vec<Series>,
    /// Bounds a change went past (the gate fails).
    pub breaches: Vec<Breach>,
    /// How many bound checks were made, and those that could not be.
    pub checks: usize,
    pub unchecked: Vec<String>,
    pub notes: Vec<String>,
}

/// One run of one scenario in one setting, over time.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Series {
    pub scenario: String,
    pub run: String,
    pub coords: BTreeMap<String, String>,
    pub setting: Setting,
    /// Its results, oldest first.
    pub results: Vec<Point>,
    /// Results not in the series: runs that did not complete.
    pub left_out: Vec<LeftOut>,
    /// Where kafkabench or librdkafka changed.
    pub versions: Vec<VersionChange>,
    pub figures: Vec<Figure>,
}

/// The part of where a result was measured that a series keeps constant.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) struct Setting {
    pub brokers: Option<usize>,
    /// The brokers' ApiVersions signature: their release.
    pub broker_api: Vec<String>,
    pub cpu: Option<String>,
    pub cores: Option<u32>,
    /// The run's clients when a side is not on librdkafka, with their releases (`producer
    /// java 4.4.0, consumer librdkafka`): a figure measured on one client is not one measured
    /// on another. librdkafka's release stays out, marked as kafkabench's is.
    pub clients: Option<String>,
}

impl Setting {
    fn of(e: Option<&Environment>) -> Setting {
        let cluster = e.and_then(|e| e.cluster.as_ref());
        let host = e.and_then(|e| e.host.as_ref());
        Setting {
            brokers: cluster.map(|c| c.brokers),
            broker_api: cluster.map(|c| c.api.clone()).unwrap_or_default(),
            cpu: host.and_then(|h| h.cpu.clone()),
            cores: host.map(|h| h.cores),
            clients: None,
        }
    }

    /// This setting for run `r`: keyed by its clients too.
    fn for_run(&self, r: &RunResult) -> Setting {
        use crate::model::{ClientKind, ClientRelease};
        let worker =
            |c: Option<&ClientRelease>| c.filter(|c| c.name != ClientKind::Librdkafka).is_some();
        let (p, c) = (r.producer_client.as_ref(), r.consumer_client.as_ref());
        let shown = |c: &ClientRelease| match c.name {
            ClientKind::Librdkafka => c.name.to_string(),
            _ => c.to_string(),
        };
        let clients = (worker(p) || worker(c)).then(|| {
            let mut s = format!("producer {}", p.map_or("librdkafka".into(), shown));
            if let Some(c) = c {
                s.push_str(&format!(", consumer {}", shown(c)));
            }
            s
        });
        Setting {
            clients,
            ..self.clone()
        }
    }

    /// `1 broker (Produce v13, …), client Intel Xeon, 2 cores`
    pub(crate) fn describe(&self) -> String {
        let mut parts: Vec<String> = self.clients.iter().cloned().collect();
        if let Some(b) = self.brokers {
            let api = if self.broker_api.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.broker_api.join("; "))
            };
            parts.push(format!("{b} broker{}{api}", crate::format::plural(b)));
        }
        match (&self.cpu, self.cores) {
            (Some(cpu), Some(c)) => parts.push(format!("client {cpu}, {c} cores")),
            (None, Some(c)) => parts.push(format!("client with {c} cores")),
            (Some(cpu), None) => parts.push(format!("client {cpu}")),
            (None, None) => {}
        }
        if parts.is_empty() {
            "environment not recorded".into()
        } else {
            parts.join(", ")
        }
    }
}

/// One result of a series.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Point {
    pub file: String,
    pub run_id: String,
    pub started_at: String,
    pub kafkabench: String,
    pub librdkafka: Option<String>,
    /// Trials the run was repeated for (1 when it was not).
    pub trials: usize,
    /// The brokers' configs it recorded: a change is marked as a version change is.
    #[serde(skip)]
    pub broker_configs: Option<crate::measure::broker_config::BrokerConfigs>,
}

/// A result left out of its series, and why.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct LeftOut {
    pub file: String,
    pub reason: String,
}

/// kafkabench or librdkafka changed at a result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct VersionChange {
    /// The first result with the new version (into `results`).
    pub index: usize,
    pub what: &'static str,
    pub from: String,
    pub to: String,
}

/// One figure of a series over time.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Figure {
    /// Its name in the scenario language (`ack.p99`).
    pub name: String,
    #[serde(skip)]
    pub metric: Metric,
    /// `higher`, `lower` or `neither` is better.
    pub better: &'static str,
    /// The results that measured it (into `results`), and each one's values in base units:
    /// every trial's, or the one value of a run that was not repeated. A paced run's
    /// throughput is a share of its plan (see `against_plan`).
    pub results: Vec<usize>,
    pub values: Vec<Vec<f64>>,
    /// A paced run's throughput: each result's planned rate, by which its values were divided.
    pub against_plan: Option<Vec<f64>>,
    /// The scale searched (`log` for latencies), and how a segment is summarised on it.
    pub scale: Scale,
    pub summary: &'static str,
    /// The stretches between change points, each with its summary.
    pub segments: Vec<SegmentSummary>,
    pub change_points: Vec<Change>,
    /// Significant changes smaller than the minimum effect, not reported.
    pub held_back: Vec<Change>,
}

impl Figure {
    /// Its name in the table: a paced run's throughput says it is a share of the plan.
    pub(crate) fn shown_name(&self) -> String {
        match self.against_plan {
            Some(_) => format!("{} ÷ plan", self.name),
            None => self.name.clone(),
        }
    }

    /// A value of this figure as people read it.
    pub(crate) fn shown(&self, v: f64) -> String {
        match self.against_plan {
            Some(_) => format!("{:.1}%", v * 100.0),
            None => shown_amount(self.metric, v),
        }
    }
}

/// Results [from, to) between two change points (or an end), and their summary: the median,
/// or on a log scale the geometric mean, of their values.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SegmentSummary {
    pub from: usize,
    pub to: usize,
    pub summary: f64,
}

/// A change point of a figure.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Change {
    /// The first result after the change (into the series' `results`).
    pub index: usize,
    pub started_at: String,
    pub run_id: String,
    /// The summary (median, or geometric mean on a log scale) of the values since the
    /// previous change point and until the next.
    pub before: f64,
    pub after: f64,
    /// after / before − 1, in percent; None from a summary of 0.
    pub change_pct: Option<f64>,
    /// The permutation p-value, the decision's; when no permutation reached the change, the
    /// p-value extrapolated beyond them (`p_tail`), which ranks strong changes.
    pub p_value: f64,
    pub p_tail: Option<f64>,
    /// The level it was held to (Holm's across the series' figures), and the permutations
    /// drawn.
    pub level: f64,
    pub permutations: usize,
    /// `better`, `worse`, or `changed` (a figure with no better direction).
    pub verdict: &'static str,
    /// The versions that changed at this result or the one before or after it.
    pub versions: Vec<String>,
}

/// A change past a `--fail-on` bound.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Breach {
    pub scenario: String,
    pub run: String,
    pub figure: String,
    pub index: usize,
    pub started_at: String,
    pub before: f64,
    pub after: f64,
    /// As the bound measures it: percent, or base units.
    pub change: f64,
    pub bound: String,
    #[serde(skip)]
    pub metric: Metric,
    #[serde(skip)]
    pub percent: bool,
}

/// The version of the `--json` document (docs/result-format.md describes it).
pub(crate) const HISTORY_VERSION: u32 = 2;

impl History {
    /// The history as data (`--json`): the same as the table and the page.
    pub(crate) fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        #[derive(Serialize)]
        struct Document<'a> {
            history_version: u32,
            #[serde(flatten)]
            history: &'a History,
            /// `ok`, or `gate_failed` when a bound was exceeded.
            outcome: &'static str,
        }
        let doc = Document {
            history_version: HISTORY_VERSION,
            history: self,
            outcome: if self.breaches.is_empty() {
                "ok"
            } else {
                "gate_failed"
            },
        };
        serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::other)?;
        writeln!(out)
    }
}

/// Groups the results into series and finds each figure's change points; then the gate.
pub(crate) fn analyse(loaded: &[Loaded], o: &Options, notes: Vec<String>) -> History {
    let settings = Settings {
        alpha: o.alpha,
        min_effect: o.min_effect,
        ..Settings::default()
    };
    let mut series: Vec<Series> = Vec::new();
    // Each series' results, parallel to its `results`.
    let mut runs: Vec<Vec<&RunResult>> = Vec::new();
    for l in loaded {
        let file_setting = Setting::of(l.file.environment.as_ref());
        for r in &l.file.runs {
            let setting = file_setting.for_run(r);
            let at = series.iter().position(|s| {
                s.scenario == l.file.scenario && s.run == r.label && s.setting == setting
            });
            let at = at.unwrap_or_else(|| {
                series.push(Series {
                    scenario: l.file.scenario.clone(),
                    run: r.label.clone(),
                    coords: r.coords.clone(),
                    setting: setting.clone(),
                    results: Vec::new(),
                    left_out: Vec::new(),
                    versions: Vec::new(),
                    figures: Vec::new(),
                });
                runs.push(Vec::new());
                series.len() - 1
            });
            let s = &mut series[at];
            if !r.status.is_complete() {
                let why = r
                    .status
                    .reason()
                    .unwrap_or_else(|| "it did not complete".into());
                s.left_out.push(LeftOut {
                    file: l.path.clone(),
                    reason: format!("run `{}` did not complete: {why}", r.label),
                });
                continue;
            }
            s.results.push(Point {
                file: l.path.clone(),
                run_id: l.file.run_id.clone(),
                started_at: l.started_at.clone(),
                kafkabench: l.file.kafkabench_version.clone(),
                librdkafka: l.file.librdkafka_version.clone(),
                trials: r.trials.as_ref().map_or(1, |t| t.results.len().max(1)),
                broker_configs: configs::of(&l.file),
            });
            runs[at].push(r);
        }
    }
    let names = figure_names(&o.bounds);
    for (s, rs) in series.iter_mut().zip(&runs) {
        s.versions = configs::with_changes(versions(&s.results), &s.results);
        s.figures = figure::figures(s, rs, &names, &settings);
    }
    let mut h = History {
        files: loaded.len(),
        alpha: settings.alpha,
        permutations: settings.permutations,
        min_size: settings.min_size,
        min_effect: settings.min_effect,
        last: o.last,
        series,
        breaches: Vec::new(),
        checks: 0,
        unchecked: Vec::new(),
        notes,
    };
    gate(&mut h, &o.bounds);
    h
}

/// The figures every comparison shows, then any a bound names that is not among them.
fn figure_names(bounds: &[Bound]) -> Vec<(String, Metric)> {
    let mut names: Vec<(String, Metric)> = (SHOWN.iter())
        .filter_map(|n| Some((n.to_string(), metric_from_name(n)?)))
        .collect();
    for b in bounds {
        if !names.iter().any(|(_, m)| *m == b.metric) {
            names.push((metric_name(b.metric), b.metric));
        }
    }
    names
}

/// Where kafkabench or librdkafka differs from the result before.
fn versions(results: &[Point]) -> Vec<VersionChange> {
    let mut out = Vec::new();
    for (i, w) in results.windows(2).enumerate() {
        let unknown = || "unknown".to_string();
        let pairs = [
            (
                "kafkabench",
                w[0].kafkabench.clone(),
                w[1].kafkabench.clone(),
            ),
            (
                "librdkafka",
                w[0].librdkafka.clone().unwrap_or_else(unknown),
                w[1].librdkafka.clone().unwrap_or_else(unknown),
            ),
        ];
        for (what, from, to) in pairs {
            if from != to {
                out.push(VersionChange {
                    index: i + 1,
                    what,
                    from,
                    to,
                });
            }
        }
    }
    out
}

/// The gate: for each bound, the newest change point of its figure in every series; a change
/// among the last `h.last` results that goes past the bound fails.
fn gate(h: &mut History, bounds: &[Bound]) {
    for b in bounds {
        for s in &h.series {
            let Some(f) = s.figures.iter().find(|f| f.metric == b.metric) else {
                h.unchecked.push(format!(
                    "`{}` not checked for run `{}` of {}: {} is not measured there",
                    b.text,
                    s.run,
                    s.scenario,
                    metric_name(b.metric)
                ));
                continue;
            };
            h.checks += 1;
            let Some(c) = f.change_points.last() else {
                continue;
            };
            if c.index + h.last < s.results.len() {
                continue;
            }
            // A share of the plan changes by the same per cent as the throughput; a bound in
            // records per second is checked against the plan's rates.
            let (before, after) = figure::in_units(f, c);
            let (change, past) = if b.percent {
                b.check(c.before, c.after)
            } else {
                b.check(before, after)
            };
            if past {
                h.breaches.push(Breach {
                    scenario: s.scenario.clone(),
                    run: s.run.clone(),
                    figure: f.shown_name(),
                    index: c.index,
                    started_at: c.started_at.clone(),
                    before,
                    after,
                    change,
                    bound: b.text.clone(),
                    metric: b.metric,
                    percent: b.percent,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod figure_tests;
