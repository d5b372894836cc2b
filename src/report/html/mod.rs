//! The HTML report (`--html FILE`): one self-contained page from a result file, with inline
//! SVG plots and inline CSS; no script, no network, no fonts to fetch. Every string from the
//! scenario or the file is escaped.

mod capacity;
mod heatmap;
mod history;
mod over_time;
mod plots;
mod svg;
mod trials;

use std::fmt::Write as _;

pub(crate) use self::history::page as history_page;
use self::plots::{Bars, ACK, E2E};
use self::svg::esc;
use crate::assert::Verdict;
use crate::format::{human_bytes, human_duration};
use crate::measure::RunResult;
use crate::model::Props;
use crate::plan::RunNo;
use crate::report::json::ResultFile;
use crate::report::table::ReadColumns;
use crate::report::verdict;

const STYLE: &str = r#"
:root { color-scheme: light; }
body { margin: 0; background: #f6f8fa; color: #1f2328;
  font: 15px/1.45 "DejaVu Sans", Helvetica, Arial, sans-serif; }
main { max-width: 1380px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 32px 0 12px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 18px 0 8px; }
.desc { color: #57606a; margin: 0 0 12px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0; }
dl.meta dt { color: #57606a; }
dl.meta dd { margin: 0; }
table { border-collapse: collapse; background: #fff; font-size: 14px; }
th, td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #eaeef2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: #116329; background: #dafbe1; font-weight: bold; }
.fail { color: #a40e26; background: #ffebe9; font-weight: bold; }
.outcome { display: inline-block; padding: 2px 10px; border-radius: 12px; }
section.run { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 4px 20px 16px; margin: 24px 0; }
section.run h2 { border: none; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 16px; }
.plots figure { margin: 0; }
.plots figcaption { color: #57606a; font-size: 13px; max-width: 680px; margin-top: 4px; }
.plots svg { border: 1px solid #d0d7de; border-radius: 6px; width: 100%; max-width: 680px; height: auto; }
.wide svg { border: 1px solid #d0d7de; border-radius: 6px; width: 100%; max-width: 1000px; height: auto; margin: 8px 0; }
pre { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: 12px; overflow-x: auto; font-size: 13px; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.configs { display: flex; flex-wrap: wrap; gap: 24px; }
.note { color: #57606a; }
"#;

/// The page as a string: built in memory, so a failed write leaves no half page behind it.
pub(crate) fn page(f: &ResultFile) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>kafkabench · {}</title><style>{STYLE}</style></head><body><main>",
        esc(&f.scenario)
    );
    header(&mut h, f);
    verdicts(&mut h, &f.verdicts());
    summary(&mut h, f);
    for r in &f.runs {
        run(&mut h, r, f.runs.len());
    }
    if let Some(text) = &f.scenario_text {
        let _ = write!(
            h,
            "<h2 id=\"scenario\">Scenario</h2><pre>{}</pre>",
            esc(text)
        );
    }
    h.push_str("</main></body></html>\n");
    h
}

fn header(h: &mut String, f: &ResultFile) {
    let _ = write!(h, "<h1>scenario {}</h1>", esc(&f.scenario));
    if let Some(d) = &f.description {
        let _ = write!(h, "<p class=\"desc\">{}</p>", esc(d));
    }
    let class = if f.exit_code == 0 { "pass" } else { "fail" };
    let mut meta: Vec<(&str, String)> = vec![(
        "outcome",
        format!(
            "<span class=\"outcome {class}\">{} (exit {})</span>",
            esc(&f.outcome),
            f.exit_code
        ),
    )];
    let mut add = |k: &'static str, v: Option<String>| {
        if let Some(v) = v {
            meta.push((k, esc(&v)));
        }
    };
    add(
        "runs",
        Some(format!("{} of {} planned", f.runs.len(), f.planned_runs)),
    );
    add("run id", Some(f.run_id.clone()));
    add("started", f.started_at.clone());
    add("kafkabench", Some(f.kafkabench_version.clone()));
    add("librdkafka", f.librdkafka_version.clone());
    add("scale", (f.scale != 1.0).then(|| f.scale.to_string()));
    add(
        "interval",
        f.interval_secs.map(|s| human_duration(s) + " per point"),
    );
    add("failure", f.failure.clone());
    add(
        "interrupted",
        f.interrupted
            .then(|| "yes: the figures cover what was measured before the signal".into()),
    );
    h.push_str("<dl class=\"meta\">");
    for (k, v) in meta {
        let _ = write!(h, "<dt>{k}</dt><dd>{v}</dd>");
    }
    h.push_str("</dl>");
    for n in &f.notes {
        let _ = write!(h, "<p class=\"note\">note: {}</p>", esc(n));
    }
}

fn verdicts(h: &mut String, v: &[Verdict]) {
    if v.is_empty() {
        return;
    }
    let passed = v.iter().filter(|x| x.pass).count();
    let _ = write!(
        h,
        "<h2 id=\"expect\">Expectations: {passed} of {} checks held</h2>\
         <table class=\"verdicts\"><tr><th>result</th><th>expect</th><th>run</th>\
         <th>measured</th><th>bound</th><th>margin</th></tr>",
        v.len()
    );
    for x in v {
        let (class, word) = if x.pass {
            ("pass", "PASS")
        } else {
            ("fail", "FAIL")
        };
        let _ = write!(
            h,
            "<tr><td class=\"{class}\">{word}</td><td><code>{}</code></td><td>{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(&x.assertion),
            esc(&verdict::runs(x)),
            esc(&verdict::measured(x)),
            esc(&verdict::bound(x)),
            esc(&verdict::margin(x))
        );
    }
    h.push_str("</table>");
}

fn ms(s: Option<f64>) -> String {
    match s {
        Some(x) if x > 0.0 => human_duration(x / 1e3),
        _ => "-".into(),
    }
}

/// The comparison table of every run, and the comparison plots when there are several runs.
fn summary(h: &mut String, f: &ResultFile) {
    // The terminal table's read-side columns, shown when it shows them.
    let read = ReadColumns::of(&f.runs);
    let mut head = vec![
        "run",
        "sent",
        "acked",
        "failed",
        "elapsed",
        "msg/s",
        "MB/s",
        "target/s",
        "ack p50",
        "ack p99",
        "ack p99.9",
        "e2e p50",
        "e2e p99",
        "lost",
    ];
    read.head(&mut head);
    head.extend(["disk", "ratio"]);
    h.push_str("<h2 id=\"runs\">Runs</h2><table class=\"summary\"><tr>");
    for c in head {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>");
    for r in &f.runs {
        let lost = match &r.delivery {
            Some(d) => d.lost.map_or("incomplete".into(), |n| n.to_string()),
            None => "-".into(),
        };
        let label = if r.status.is_complete() {
            esc(&r.label)
        } else {
            format!("{} (incomplete)", esc(&r.label))
        };
        let mut cells = vec![
            r.sent.to_string(),
            r.acked.to_string(),
            r.failed.to_string(),
            human_duration(r.elapsed_secs),
            format!("{:.0}", r.throughput_msgs),
            format!("{:.1}", r.throughput_bytes / 1e6),
            r.target_rate.map_or("-".into(), |t| format!("{t:.0}")),
            ms(Some(r.ack.p50_ms)),
            ms(Some(r.ack.p99_ms)),
            ms(Some(r.ack.p999_ms)),
            ms(r.e2e.as_ref().map(|e| e.p50_ms)),
            ms(r.e2e.as_ref().map(|e| e.p99_ms)),
            lost,
        ];
        read.row(r, &mut cells);
        cells.extend([
            r.disk_bytes.map_or("-".into(), |d| human_bytes(d as f64)),
            r.disk_ratio.map_or("-".into(), |x| format!("{x:.2}x")),
        ]);
        let _ = write!(h, "<tr><td><a href=\"#run-{}\">{label}</a></td>", r.index);
        for c in cells {
            let _ = write!(h, "<td class=\"num\">{}</td>", esc(&c));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    if let Some(l) = read.legend() {
        let _ = write!(h, "<p class=\"note\">{}</p>", esc(l));
    }
    if f.runs.len() < 2 {
        return;
    }
    let labels: Vec<String> = f.runs.iter().map(|r| r.label.clone()).collect();
    let per_run = |g: fn(&RunResult) -> Option<f64>| f.runs.iter().map(g).collect::<Vec<_>>();
    let throughput = plots::compare(
        "Throughput per run",
        "acknowledged records per second",
        &labels,
        &[Bars {
            name: "acked/s".into(),
            color: ACK,
            values: per_run(|r| Some(r.throughput_msgs)),
        }],
    );
    let mut p99 = vec![Bars {
        name: "ack p99".into(),
        color: ACK,
        values: per_run(|r| Some(r.ack.p99_ms).filter(|x| *x > 0.0)),
    }];
    if f.runs.iter().any(|r| r.e2e.is_some()) {
        p99.push(Bars {
            name: "e2e p99".into(),
            color: E2E,
            values: per_run(|r| r.e2e.as_ref().map(|e| e.p99_ms).filter(|x| *x > 0.0)),
        });
    }
    let latency = plots::compare("p99 latency per run", "latency (ms)", &labels, &p99);
    let _ = write!(
        h,
        "<h3>Compared</h3><div class=\"wide\">{throughput}</div><div class=\"wide\">{latency}</div>"
    );
}

/// One run: its figures, its plots, its effective configuration.
fn run(h: &mut String, r: &RunResult, total: usize) {
    let _ = write!(
        h,
        "<section class=\"run\" id=\"run-{}\"><h2>run {} of {total} · {}</h2>",
        r.index,
        RunNo(r.index),
        esc(&r.label)
    );
    let _ = write!(h, "<p>topic <code>{}</code>", esc(&r.topic));
    if let Some(e) = r.status.reason() {
        let _ = write!(h, " · <span class=\"fail\">{}</span>", esc(&e));
    }
    if !r.status.is_complete() {
        h.push_str(" · <span class=\"fail\">incomplete: cut short</span>");
    }
    h.push_str("</p>");
    // The terminal's notes on this run: the warm-up `auto` chose, a late steady state, how
    // an auto-repeat stopped.
    let notes: Vec<String> = crate::report::table::steady_notes(r)
        .into_iter()
        .chain(crate::report::trials::notes(r))
        .collect();
    for n in &notes {
        let _ = write!(h, "<p class=\"note\">{}</p>", esc(n));
    }
    if let Some(c) = &r.capacity {
        capacity::section(h, &r.label, c);
    }
    if let Some(t) = &r.trials {
        trials::section(h, t);
    }
    if let Some(s) = &r.share {
        // The same words as the terminal's lines under the table.
        let _ = write!(
            h,
            "<p>share group: {}<br>{}</p>",
            esc(&crate::report::share::settings(s)),
            esc(&crate::report::share::figures(s))
        );
    }
    if let Some(c) = &r.compaction {
        // The same words as the terminal's line under the table.
        let _ = write!(
            h,
            "<p>compaction: {}</p>",
            esc(&crate::report::compaction::line(c))
        );
    }
    h.push_str("<div class=\"plots\">");
    h.push_str(&plots::percentiles(r));
    if let Some(p) = plots::by_broker(r) {
        h.push_str(&p);
    }
    let end = (r.series.as_ref())
        .and_then(|s| s.points.last())
        .map(|p| p.t_secs + p.span_secs);
    if let Some(p) =
        (r.partition_counts.as_ref()).and_then(|c| heatmap::partitions_over_time(c, end))
    {
        h.push_str(&p);
    }
    match &r.series {
        Some(s) if !s.points.is_empty() => {
            h.push_str(&over_time::throughput_over_time(s, r.status.is_complete()));
            h.push_str(&over_time::latency_over_time(s));
        }
        _ => h.push_str(
            "<p class=\"note\">No time series in this result file, so no plots over time.</p>",
        ),
    }
    // The configuration fills the grid's last cell, beside the third plot.
    h.push_str("<div><h3>Effective configuration</h3><div class=\"configs\">");
    props(h, "producer", &r.producer_config);
    if let Some(c) = &r.consumer_config {
        props(h, "consumer", c);
    }
    h.push_str("</div></div></div></section>");
}

fn props(h: &mut String, title: &str, p: &Props) {
    let _ = write!(
        h,
        "<table class=\"config\"><tr><th colspan=\"2\">{title}</th></tr>"
    );
    // Masked again: a hand-edited or foreign result file must not show a secret either.
    for x in &p.masked().0 {
        let _ = write!(
            h,
            "<tr><td><code>{}</code></td><td><code>{}</code></td></tr>",
            esc(&x.key),
            esc(&x.value)
        );
    }
    if p.0.is_empty() {
        h.push_str("<tr><td colspan=\"2\">librdkafka defaults</td></tr>");
    }
    h.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{SeriesPoint, TimeSeries};

    fn file(runs: Vec<RunResult>) -> ResultFile {
        let mut text = Vec::new();
        let json = serde_json::json!({
            "schema_version": crate::report::json::SCHEMA_VERSION,
            "kafkabench_version": "0", "scenario": "s", "description": null, "run_id": "r",
            "scale": 1.0, "planned_runs": 3, "outcome": "interrupted", "exit_code": 130,
            "failure": null, "interrupted": true, "runs": [], "assertions": [], "notes": []
        });
        serde_json::to_writer(&mut text, &json).unwrap();
        let mut f = ResultFile::parse(std::str::from_utf8(&text).unwrap(), "r.json").unwrap();
        f.runs = runs;
        f
    }

    #[test]
    fn a_file_without_runs_is_still_a_page_that_says_how_it_ended() {
        let page = page(&file(vec![]));
        assert!(page.contains("interrupted (exit 130)"), "{page}");
        assert!(page.contains("0 of 3 planned"));
        assert!(page.ends_with("</html>\n"));
    }

    #[test]
    fn a_run_says_its_automatic_warm_up_and_a_late_steady_state_as_the_table_does() {
        let r = RunResult {
            warmup_auto: Some(crate::measure::AutoWarmup {
                secs: 3.01,
                max_secs: 30.0,
                settled: true,
            }),
            steady_after: Some(crate::measure::steady::SteadyAfter::Never {
                series: crate::measure::steady::SteadySeries::AckP99,
            }),
            elapsed_secs: 20.0,
            ..RunResult::default()
        };
        let page = page(&file(vec![r.clone()]));
        for n in crate::report::table::steady_notes(&r) {
            assert!(page.contains(&esc(&n)), "{n}");
        }
        assert!(page.contains("warm-up auto: 3.01s until the rate settled"));
        assert!(page.contains("not steady"));
    }

    #[test]
    fn a_run_that_recorded_nothing_gets_a_plot_that_says_so() {
        let page = page(&file(vec![RunResult {
            label: "empty".into(),
            ..RunResult::default()
        }]));
        assert!(page.contains("nothing was recorded"));
        assert!(page.contains("No time series"));
    }

    #[test]
    fn two_brokers_get_a_plot_of_their_own_and_one_broker_none() {
        let mut h =
            hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        h.record(4_000_000).unwrap();
        let broker = |id| crate::measure::PlaceFigures {
            id,
            records: 1,
            bytes: 100,
            ack: crate::measure::LatencySummary::from_histogram(&h),
        };
        let two = RunResult {
            brokers: vec![broker(1), broker(2)],
            ..RunResult::default()
        };
        let page_two = page(&file(vec![two]));
        assert!(page_two.contains("Ack latency by broker"));
        assert!(page_two.contains("broker 2 (1 records)"));
        let one = RunResult {
            brokers: vec![broker(1)],
            ..RunResult::default()
        };
        assert!(!page(&file(vec![one])).contains("Ack latency by broker"));
    }

    #[test]
    fn gaps_and_non_finite_figures_in_a_series_draw_no_broken_markup() {
        let point = |t: f64, p99: Option<f64>| SeriesPoint {
            t_secs: t,
            acked: 10,
            ack_p50_ms: p99,
            ack_p99_ms: p99,
            ..SeriesPoint::default()
        };
        let run = RunResult {
            label: "gappy".into(),
            series: Some(TimeSeries {
                interval_secs: 0.0,
                points: vec![
                    point(0.0, Some(f64::NAN)),
                    point(1.0, None),
                    point(2.0, Some(0.0)),
                    point(3.0, Some(f64::INFINITY)),
                    point(4.0, Some(3.0)),
                ],
            }),
            ..RunResult::default()
        };
        let page = page(&file(vec![run]));
        assert!(!page.contains("NaN") && !page.contains("inf"), "{page}");
    }

    #[test]
    fn the_runs_table_has_the_terminal_tables_read_side_columns_when_a_run_has_consumers() {
        let read = RunResult {
            label: "group".into(),
            consume: Some(crate::measure::ConsumeFigures {
                throughput_msgs: 1999.6,
                lag_max: Some(42),
                rebalances: 3,
                rebalance_secs: Some(0.25),
                stall_secs: Some(1.5),
                ..Default::default()
            }),
            ..RunResult::default()
        };
        let alone = RunResult {
            label: "alone".into(),
            ..RunResult::default()
        };
        let page = page(&file(vec![read, alone.clone()]));
        for column in ["read/s", "lag max", "rebal", "rebal max", "stalled"] {
            assert!(page.contains(&format!("<th>{column}</th>")), "{column}");
        }
        for cell in ["2000", "42", "3", "250ms", "1.5s"] {
            assert!(
                page.contains(&format!("<td class=\"num\">{cell}</td>")),
                "{cell}"
            );
        }
        assert!(!page.contains("<th>drain</th>"), "no run drained a backlog");
        let page = super::page(&file(vec![alone]));
        assert!(!page.contains("<th>read/s</th>"), "no run has consumers");
    }
}
