//! The live metrics of `--metrics`, written in the OpenMetrics text format (what Prometheus,
//! the OpenTelemetry collector and VictoriaMetrics scrape), or in Prometheus' older text format
//! 0.0.4 for a client that does not ask for OpenMetrics (curl, promtool, older agents).
//!
//! Latency is exposed as *classic* histograms (fixed `le` buckets): they are plain text every
//! Prometheus since 2.0 reads, while native histograms need the protobuf exposition and, on
//! the Prometheus Debian ships, a feature flag. The percentiles of the report still come from
//! the HdrHistograms; the buckets are for watching.
//!
//! Why not a metrics library: `prometheus-client` 0.26 (the Prometheus project's Rust client)
//! writes both formats, units, and classic histograms from counted buckets (through a custom
//! `Collector`), but has no stateset (its `MetricType` leaves StateSet "not yet supported"),
//! so the phase would lose its OpenMetrics type; and the adaptor from these series to its
//! collector would be about as long as this writer. The text stays written here, checked by
//! `promtool` and a real Prometheus (tests/metrics.rs).

use std::io::{self, Write};

mod live;
pub(crate) use live::{collected, FileLabels, LiveRun};

use crate::run::live::{Buckets, BOUNDS_NS};

/// Where one run (one trial, one probe) stands, as the scrape shows it.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunSeries {
    /// Label name and value, in order: scenario, run, run_id, shard, trial, probe.
    pub labels: Vec<(&'static str, String)>,
    /// `warmup`, `measured`, `drain` or `done`.
    pub phase: &'static str,
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    /// Measured records read and verified; None without a consumer.
    pub consumed: Option<u64>,
    pub target_rate: Option<f64>,
    pub achieved_rate: f64,
    pub elapsed_secs: f64,
    /// A capacity search's probe number, when this run is one.
    pub probe: Option<u32>,
    pub ack: Option<Buckets>,
    pub e2e: Option<Buckets>,
}

/// The process's own cost, read when scraped.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ProcessStats {
    pub cpu_secs: f64,
    pub rss_bytes: u64,
    pub start_time_secs: f64,
}

/// Everything one scrape answers.
#[derive(Clone, Debug, Default)]
pub(crate) struct Exposition {
    pub runs: Vec<RunSeries>,
    pub process: Option<ProcessStats>,
    /// 1 once the invocation has finished (the endpoint lingers for the last scrape).
    pub finished: bool,
}

/// The two text formats a scrape can be answered in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    OpenMetrics,
    /// Prometheus text format 0.0.4: no `# UNIT`, no stateset (a gauge per state instead), a
    /// counter's TYPE names its `_total` sample, no `# EOF`.
    Text,
}

impl Format {
    /// OpenMetrics only for a client whose Accept header names it, as Prometheus' own client
    /// libraries decide: a parser of the older format stops at OpenMetrics' `stateset`.
    pub(crate) fn negotiate(accept: Option<&str>) -> Format {
        match accept {
            Some(a)
                if a.to_ascii_lowercase()
                    .contains("application/openmetrics-text") =>
            {
                Format::OpenMetrics
            }
            _ => Format::Text,
        }
    }

    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// A family's name, its help, and how a run's value is read (None: no sample for that run).
type Family<T> = (&'static str, &'static str, fn(&RunSeries) -> Option<T>);

const PHASES: [&str; 4] = ["warmup", "measured", "drain", "done"];

/// Writes one scrape's answer (in OpenMetrics ending with `# EOF`).
pub(crate) fn write(e: &Exposition, format: Format, out: &mut dyn Write) -> io::Result<()> {
    let om = format == Format::OpenMetrics;
    let counters: [Family<u64>; 4] = [
        (
            "kafkabench_records_sent",
            "Measured records handed to the producer client.",
            |r| Some(r.sent),
        ),
        (
            "kafkabench_records_acked",
            "Measured records the cluster acknowledged.",
            |r| Some(r.acked),
        ),
        (
            "kafkabench_records_failed",
            "Measured records reported failed.",
            |r| Some(r.failed),
        ),
        (
            "kafkabench_records_consumed",
            "Measured records the consumers read and verified.",
            |r| r.consumed,
        ),
    ];
    for (name, help, get) in counters {
        family(out, format, name, "counter", help, None)?;
        for r in &e.runs {
            if let Some(v) = get(r) {
                sample(
                    out,
                    &format!("{name}_total"),
                    &r.labels,
                    None,
                    &v.to_string(),
                )?;
            }
        }
    }
    let gauges: [Family<f64>; 6] = [
        (
            "kafkabench_in_flight_records",
            "Measured records sent and not yet acknowledged or failed.",
            |r| Some(r.sent.saturating_sub(r.acked + r.failed) as f64),
        ),
        (
            "kafkabench_consumer_lag_records",
            "Measured records acknowledged and not yet read.",
            |r| r.consumed.map(|c| r.acked.saturating_sub(c) as f64),
        ),
        (
            "kafkabench_target_rate",
            "The rate the schedule asks for now, records per second (absent: unlimited).",
            |r| r.target_rate,
        ),
        (
            "kafkabench_achieved_rate",
            "Records acknowledged per second over the last second (the whole run once done).",
            |r| Some(r.achieved_rate),
        ),
        (
            "kafkabench_elapsed_seconds",
            "Time in the current phase's clock: since connecting in warm-up, since the measured phase began after it.",
            |r| Some(r.elapsed_secs),
        ),
        (
            "kafkabench_capacity_probe",
            "The capacity search's probe number this run is.",
            |r| r.probe.map(f64::from),
        ),
    ];
    for (name, help, get) in gauges {
        family(out, format, name, "gauge", help, None)?;
        for r in &e.runs {
            if let Some(v) = get(r) {
                sample(out, name, &r.labels, None, &number(v))?;
            }
        }
    }
    family(
        out,
        format,
        "kafkabench_phase",
        if om { "stateset" } else { "gauge" },
        "Where the run stands: warmup, measured, drain or done.",
        None,
    )?;
    for r in &e.runs {
        for p in PHASES {
            let v = if r.phase == p { "1" } else { "0" };
            sample(
                out,
                "kafkabench_phase",
                &r.labels,
                Some(("kafkabench_phase", p)),
                v,
            )?;
        }
    }
    histogram(
        out,
        format,
        e,
        "kafkabench_ack_latency_seconds",
        "Ack latency from each record's intended send time.",
        |r| r.ack.as_ref(),
    )?;
    histogram(
        out,
        format,
        e,
        "kafkabench_e2e_latency_seconds",
        "End-to-end latency, intended send time to read.",
        |r| r.e2e.as_ref(),
    )?;
    family(
        out,
        format,
        "kafkabench_finished",
        "gauge",
        "Whether the invocation is over (then 1), so that these are its totals.",
        None,
    )?;
    sample(
        out,
        "kafkabench_finished",
        &[],
        None,
        if e.finished { "1" } else { "0" },
    )?;
    if let Some(p) = e.process {
        family(
            out,
            format,
            "process_cpu_seconds",
            "counter",
            "CPU time of the kafkabench process, user and system.",
            Some("seconds"),
        )?;
        sample(
            out,
            "process_cpu_seconds_total",
            &[],
            None,
            &number(p.cpu_secs),
        )?;
        family(
            out,
            format,
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory of the kafkabench process.",
            Some("bytes"),
        )?;
        sample(
            out,
            "process_resident_memory_bytes",
            &[],
            None,
            &p.rss_bytes.to_string(),
        )?;
        family(
            out,
            format,
            "process_start_time_seconds",
            "gauge",
            "When the process started, seconds since the Unix epoch.",
            Some("seconds"),
        )?;
        sample(
            out,
            "process_start_time_seconds",
            &[],
            None,
            &number(p.start_time_secs),
        )?;
    }
    if om {
        writeln!(out, "# EOF")?;
    }
    Ok(())
}

fn family(
    out: &mut dyn Write,
    format: Format,
    name: &str,
    kind: &str,
    help: &str,
    unit: Option<&str>,
) -> io::Result<()> {
    // OpenMetrics names a counter's family without `_total`; the older format names the sample.
    let name = match (format, kind) {
        (Format::Text, "counter") => format!("{name}_total"),
        _ => name.to_string(),
    };
    writeln!(out, "# TYPE {name} {kind}")?;
    if let (Format::OpenMetrics, Some(u)) = (format, unit) {
        writeln!(out, "# UNIT {name} {u}")?;
    }
    writeln!(out, "# HELP {name} {}", escape(help, false))
}

fn histogram(
    out: &mut dyn Write,
    format: Format,
    e: &Exposition,
    name: &str,
    help: &str,
    get: fn(&RunSeries) -> Option<&Buckets>,
) -> io::Result<()> {
    family(out, format, name, "histogram", help, Some("seconds"))?;
    for r in &e.runs {
        let Some(b) = get(r) else { continue };
        let mut cumulative = 0;
        for (i, c) in b.counts.iter().enumerate() {
            cumulative += c;
            let le = match BOUNDS_NS.get(i) {
                Some(&ns) => number(ns as f64 / 1e9),
                None => "+Inf".to_string(),
            };
            sample(
                out,
                &format!("{name}_bucket"),
                &r.labels,
                Some(("le", &le)),
                &cumulative.to_string(),
            )?;
        }
        sample(
            out,
            &format!("{name}_count"),
            &r.labels,
            None,
            &cumulative.to_string(),
        )?;
        sample(
            out,
            &format!("{name}_sum"),
            &r.labels,
            None,
            &number(b.sum_ns as f64 / 1e9),
        )?;
    }
    Ok(())
}

fn sample(
    out: &mut dyn Write,
    name: &str,
    labels: &[(&'static str, String)],
    extra: Option<(&str, &str)>,
    value: &str,
) -> io::Result<()> {
    write!(out, "{name}")?;
    let all = labels
        .iter()
        .map(|(k, v)| (*k, v.as_str()))
        .chain(extra)
        .collect::<Vec<_>>();
    if !all.is_empty() {
        write!(out, "{{")?;
        for (i, (k, v)) in all.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(out, "{sep}{k}=\"{}\"", escape(v, true))?;
        }
        write!(out, "}}")?;
    }
    writeln!(out, " {value}")
}

/// A number as OpenMetrics reads it: integers without a fraction, others in full precision.
fn number(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.is_nan() {
        "NaN".into()
    } else {
        format!("{v}")
    }
}

/// Label values escape `\`, `"` and newlines; HELP text escapes `\` and newlines.
fn escape(s: &str, quote: bool) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '"' if quote => o.push_str("\\\""),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series() -> RunSeries {
        RunSeries {
            labels: vec![
                ("scenario", "promo".into()),
                ("run", "codec=\"zstd\"\nx\\y".into()),
            ],
            phase: "measured",
            sent: 120,
            acked: 100,
            failed: 2,
            consumed: Some(90),
            target_rate: Some(1000.0),
            achieved_rate: 998.5,
            elapsed_secs: 1.5,
            probe: None,
            ack: Some(Buckets {
                counts: {
                    let mut c = vec![0; BOUNDS_NS.len() + 1];
                    c[3] = 60;
                    c[5] = 40;
                    c
                },
                sum_ns: 150_000_000,
            }),
            e2e: None,
        }
    }

    #[test]
    fn a_scrape_has_counters_gauges_a_stateset_cumulative_buckets_and_ends_with_eof() {
        let e = Exposition {
            runs: vec![series()],
            process: Some(ProcessStats {
                cpu_secs: 1.25,
                rss_bytes: 4096,
                start_time_secs: 1.7e9,
            }),
            finished: false,
        };
        let mut out = Vec::new();
        write(&e, Format::OpenMetrics, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let l = r#"{scenario="promo",run="codec=\"zstd\"\nx\\y""#;
        for want in [
            format!("kafkabench_records_acked_total{l}}} 100"),
            format!("kafkabench_records_consumed_total{l}}} 90"),
            format!("kafkabench_in_flight_records{l}}} 18"),
            format!("kafkabench_consumer_lag_records{l}}} 10"),
            format!("kafkabench_achieved_rate{l}}} 998.5"),
            format!("kafkabench_phase{l},kafkabench_phase=\"measured\"}} 1"),
            format!("kafkabench_phase{l},kafkabench_phase=\"drain\"}} 0"),
            format!("kafkabench_ack_latency_seconds_bucket{l},le=\"0.0005\"}} 0"),
            format!("kafkabench_ack_latency_seconds_bucket{l},le=\"0.001\"}} 60"),
            format!("kafkabench_ack_latency_seconds_bucket{l},le=\"0.005\"}} 100"),
            format!("kafkabench_ack_latency_seconds_bucket{l},le=\"+Inf\"}} 100"),
            format!("kafkabench_ack_latency_seconds_count{l}}} 100"),
            format!("kafkabench_ack_latency_seconds_sum{l}}} 0.15"),
            "# TYPE kafkabench_records_acked counter".to_string(),
            "# UNIT kafkabench_ack_latency_seconds seconds".to_string(),
            "process_cpu_seconds_total 1.25".to_string(),
            "process_resident_memory_bytes 4096".to_string(),
            "kafkabench_finished 0".to_string(),
        ] {
            assert!(
                text.lines().any(|x| x == want),
                "missing {want:?} in\n{text}"
            );
        }
        assert!(text.ends_with("# EOF\n"));
        assert!(
            !text.contains("kafkabench_e2e_latency_seconds_count"),
            "no consumer: no e2e series"
        );
        assert!(!text.contains("kafkabench_capacity_probe{"));
    }

    #[test]
    fn a_client_that_does_not_ask_for_openmetrics_gets_the_older_text_format() {
        assert_eq!(Format::negotiate(None), Format::Text);
        assert_eq!(Format::negotiate(Some("*/*")), Format::Text);
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
        let e = Exposition {
            runs: vec![series()],
            process: Some(ProcessStats::default()),
            finished: true,
        };
        let mut out = Vec::new();
        write(&e, Format::Text, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let l = r#"{scenario="promo",run="codec=\"zstd\"\nx\\y""#;
        for want in [
            "# TYPE kafkabench_records_acked_total counter".to_string(),
            "# TYPE kafkabench_phase gauge".to_string(),
            format!("kafkabench_phase{l},kafkabench_phase=\"measured\"}} 1"),
            "# TYPE process_cpu_seconds_total counter".to_string(),
            "kafkabench_finished 1".to_string(),
        ] {
            assert!(
                text.lines().any(|x| x == want),
                "missing {want:?} in\n{text}"
            );
        }
        for absent in ["# UNIT", "# EOF", "stateset"] {
            assert!(!text.contains(absent), "{absent} in\n{text}");
        }
    }
}
