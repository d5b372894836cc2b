//! The plots over time: throughput and latency per interval of the series, and what each does
//! with the last interval, which ends with the run's last record and so covers only part of
//! its width. Counts become rates over the time an interval covered (`span_secs`), never over
//! its width; a last interval too short to make a rate is left out, and so is one that only
//! drained the run after its schedule ended (nothing was due in it), and the caption says so.

use super::plots::{Chart, Line, ACK, E2E, TARGET};
use super::svg::{esc, Kind};
use crate::format::human_duration;
use crate::measure::{SeriesPoint, TimeSeries};

/// A last interval that covered less than this share of its width is left out: its records
/// were acknowledged in a batch or two, so a rate over its span jumps with them, and its
/// percentiles are of a handful of records.
const SHORTEST_SHARE: f64 = 0.1;

/// The intervals the plots draw, each with the time it covered (seconds).
struct Covered<'a> {
    width: f64,
    points: Vec<(&'a SeriesPoint, f64)>,
    /// The last interval when it was not drawn, with its span and why.
    left_out: Option<(&'a SeriesPoint, f64, LeftOut)>,
}

/// Why the last interval was not drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LeftOut {
    /// It covered under [`SHORTEST_SHARE`] of its width.
    Short,
    /// Nothing was due in it: it holds only the acknowledgements of records due before the
    /// schedule ended, however long they took, which as a rate over its span is a burst of the
    /// run's lateness, not its throughput.
    Drain,
}

impl<'a> Covered<'a> {
    fn of(series: &'a TimeSeries) -> Covered<'a> {
        let width = series.interval_secs.max(1e-9);
        // A file written before spans were recorded has none: every interval counts whole.
        let spanned = series.points.iter().any(|p| p.span_secs > 0.0);
        let mut points: Vec<(&SeriesPoint, f64)> = series
            .points
            .iter()
            .map(|p| {
                (
                    p,
                    if spanned {
                        p.span_secs.clamp(0.0, width)
                    } else {
                        width
                    },
                )
            })
            .collect();
        // A lone interval is the whole run: its span makes its rate, unless it has none.
        let short = |span: f64, n: usize| span <= 0.0 || (n > 1 && span < SHORTEST_SHARE * width);
        let drain = |p: &SeriesPoint, n: usize| n > 1 && p.target_rate == Some(0.0);
        let why = match points.last() {
            Some(&(p, _)) if drain(p, points.len()) => Some(LeftOut::Drain),
            Some(&(_, span)) if short(span, points.len()) => Some(LeftOut::Short),
            _ => None,
        };
        let left_out = why.and_then(|why| points.pop().map(|(p, span)| (p, span, why)));
        Covered {
            width,
            points,
            left_out,
        }
    }

    /// Where an interval is drawn: the middle of the time it covered.
    fn x(p: &SeriesPoint, span: f64) -> f64 {
        p.t_secs + span / 2.0
    }

    /// The sentence naming the interval left out, if one was; `short`: why a short one is.
    fn left_out_sentence(&self, short: &str) -> String {
        let (what, why) = match self.left_out {
            Some((p, span, LeftOut::Short)) => (
                format!(
                    "The last interval covered only {} of its {} ({})",
                    human_duration(span),
                    human_duration(self.width),
                    counted(p)
                ),
                short,
            ),
            Some((p, span, LeftOut::Drain)) => (
                format!(
                    "The last interval only drained the run after its schedule ended ({} in {})",
                    counted(p),
                    human_duration(span)
                ),
                "as nothing was due in it",
            ),
            None => return String::new(),
        };
        format!(" {what}: left out, {why}. Its records count in the run's totals and percentiles.")
    }
}

/// `6 acked, 6 read`: what an interval holds.
fn counted(p: &SeriesPoint) -> String {
    match p.consumed {
        Some(c) => format!("{} acked, {c} read", p.acked),
        None => format!("{} acked", p.acked),
    }
}

/// A plot with its caption under it.
fn figure(svg: String, caption: &str) -> String {
    format!(
        "<figure>{svg}<figcaption>{}</figcaption></figure>",
        esc(caption)
    )
}

/// The lines of the throughput plot: acked/s, consumed/s and the target rate, each interval's
/// count over the time it covered. `complete`: the run finished its schedule.
fn throughput_lines(c: &Covered, complete: bool) -> Vec<Line> {
    let rate = |n: u64, span: f64| n as f64 / span;
    let mut lines = vec![Line {
        name: "acked/s".into(),
        color: ACK,
        dash: false,
        points: c
            .points
            .iter()
            .map(|&(p, span)| (Covered::x(p, span), Some(rate(p.acked, span))))
            .collect(),
    }];
    if c.points.iter().any(|(p, _)| p.consumed.is_some()) {
        lines.push(Line {
            name: "consumed/s".into(),
            color: E2E,
            dash: false,
            points: c
                .points
                .iter()
                .map(|&(p, span)| (Covered::x(p, span), p.consumed.map(|n| rate(n, span))))
                .collect(),
        });
    }
    if c.points.iter().any(|(p, _)| p.target_rate.is_some()) {
        // A staircase over what each interval covered. `target_rate` is over the whole
        // width. A run that finished its schedule had every record due in its last interval
        // due before its last record: those, over the span, compare with the counts over it.
        // A run cut short stopped before its schedule did: the interval's rate is the best
        // known.
        let scale = |span: f64| if complete { c.width / span } else { 1.0 };
        let points = c
            .points
            .iter()
            .flat_map(|&(p, span)| {
                let due = p.target_rate.map(|r| r * scale(span));
                [(p.t_secs, due), (p.t_secs + span, due)]
            })
            .collect();
        lines.push(Line {
            name: "target rate".into(),
            color: TARGET,
            dash: true,
            points,
        });
    }
    lines
}

/// Acknowledged (and read) records per second over the measured phase, with the target rate;
/// `complete`: the run finished its schedule.
pub(super) fn throughput_over_time(series: &TimeSeries, complete: bool) -> String {
    let c = Covered::of(series);
    let svg = Chart {
        title: "Throughput over time".into(),
        x_label: "time since the measured phase began (s)".into(),
        y_label: "records per second".into(),
        x: Kind::Linear,
        y: Kind::Linear,
        lines: throughput_lines(&c, complete),
    }
    .render();
    let mut caption = format!(
        "Each point is an interval's records over the time it covered: {} per interval, the \
         last one ending with the run's last record.",
        human_duration(c.width)
    );
    if let Some(&(_, span)) = c.points.last().filter(|(_, s)| *s < c.width) {
        caption += &format!(" The last point covers {}.", human_duration(span));
    }
    if series.points.iter().any(|p| p.target_rate.is_some()) {
        caption += if complete {
            " The target rate is what the schedule had due in each interval, over the same time."
        } else {
            " The target rate is the schedule's over each whole interval: the run was cut short."
        };
    }
    caption +=
        &c.left_out_sentence("as a rate over so short a span jumps with each batch acknowledged");
    figure(svg, &caption)
}

/// Per-interval p50 and p99 of ack (and e2e) latency.
pub(super) fn latency_over_time(series: &TimeSeries) -> String {
    let c = Covered::of(series);
    type Field = fn(&SeriesPoint) -> Option<f64>;
    let families: [(&str, &'static str, bool, Field); 4] = [
        ("ack p50", ACK, true, |p| p.ack_p50_ms),
        ("ack p99", ACK, false, |p| p.ack_p99_ms),
        ("e2e p50", E2E, true, |p| p.e2e_p50_ms),
        ("e2e p99", E2E, false, |p| p.e2e_p99_ms),
    ];
    let lines = families
        .iter()
        .filter(|(_, _, _, f)| c.points.iter().any(|(p, _)| f(p).is_some()))
        .map(|(name, color, dash, f)| Line {
            name: (*name).into(),
            color,
            dash: *dash,
            points: c
                .points
                .iter()
                .map(|&(p, span)| (Covered::x(p, span), f(p)))
                .collect(),
        })
        .collect();
    let svg = Chart {
        title: "Latency over time (per interval)".into(),
        x_label: "time since the measured phase began (s)".into(),
        y_label: "latency (ms, log scale)".into(),
        x: Kind::Linear,
        y: Kind::Log,
        lines,
    }
    .render();
    let caption = "Percentiles of the records acknowledged (ack) or read (e2e) in each interval, \
                   drawn at the middle of the time it covered; a percentile is not scaled."
        .to_string()
        + &c.left_out_sentence("as its percentiles are of the run's last few records alone");
    figure(svg, &caption)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run at 2000/s for `secs` whole seconds in 1 s intervals, and its drain tail: `tail`
    /// records acked within `tail_span` seconds after the schedule ended.
    fn steady(secs: u32, tail: u64, tail_span: f64) -> TimeSeries {
        let point = |t: f64, span: f64, acked: u64, target: f64| SeriesPoint {
            t_secs: t,
            span_secs: span,
            acked,
            consumed: Some(acked),
            target_rate: Some(target),
            ack_p99_ms: Some(10.0),
            ..SeriesPoint::default()
        };
        let mut points: Vec<SeriesPoint> = (0..secs)
            .map(|i| point(f64::from(i), 1.0, 2000, 2000.0))
            .collect();
        points.push(point(f64::from(secs), tail_span, tail, 0.0));
        TimeSeries {
            interval_secs: 1.0,
            points,
        }
    }

    fn last(line: &Line) -> (f64, f64) {
        let &(x, y) = line.points.last().expect("a point");
        (x, y.expect("a value"))
    }

    #[test]
    fn a_drain_tail_of_a_few_milliseconds_is_left_out_not_drawn_as_a_drop() {
        let s = steady(5, 6, 0.003);
        let c = Covered::of(&s);
        assert_eq!(c.points.len(), 5);
        let lines = throughput_lines(&c, true);
        for line in &lines {
            let (x, y) = last(line);
            assert!(x <= 5.0, "{}: drawn past the run, at {x}", line.name);
            assert_eq!(y, 2000.0, "{}", line.name);
        }
        let caption = throughput_over_time(&s, true);
        assert!(
            caption.contains(
                "The last interval only drained the run after its schedule ended (6 acked, 6 \
                 read in 3ms): left out"
            ),
            "{caption}"
        );
        assert!(latency_over_time(&s).contains("left out"));
        // With no schedule (unpaced), a last interval is left out when it is that short.
        let mut unpaced = steady(5, 6, 0.003);
        unpaced.points.iter_mut().for_each(|p| p.target_rate = None);
        let caption = throughput_over_time(&unpaced, true);
        assert!(
            caption.contains("The last interval covered only 3ms of its 1s (6 acked, 6 read)"),
            "{caption}"
        );
    }

    #[test]
    fn a_drain_after_the_schedule_is_left_out_however_long_it_took() {
        // A busy machine acknowledged 2 555 records due before the end in 0.2 s after it: as a
        // rate, 12 775/s on a run at 2000/s.
        let s = steady(5, 2555, 0.2);
        let c = Covered::of(&s);
        assert_eq!(c.points.len(), 5);
        assert_eq!(last(&throughput_lines(&c, true)[0]).1, 2000.0);
        let html = throughput_over_time(&s, true);
        assert!(
            html.contains("The last interval only drained the run after its schedule ended (2555 acked, 2555 read in 200ms): left out"),
            "{html}"
        );
        // A run cut short had records due in its last interval: drawn over its span.
        let mut cut = steady(5, 400, 0.2);
        cut.points[5].target_rate = Some(2000.0);
        assert_eq!(Covered::of(&cut).points.len(), 6);
    }

    #[test]
    fn a_partial_last_interval_is_a_rate_over_its_span() {
        // 2.5 s at 2000/s: the last interval holds half a second's records.
        let mut s = steady(2, 1000, 0.5);
        s.points[2].target_rate = Some(1000.0);
        let c = Covered::of(&s);
        assert!(c.left_out.is_none());
        for line in throughput_lines(&c, true) {
            let (x, y) = last(&line);
            assert!((y - 2000.0).abs() < 1e-9, "{}: {y}", line.name);
            // Points at the middle of [2 s, 2.5 s); the target's staircase ends with it.
            let end = if line.dash { 2.5 } else { 2.25 };
            assert!((x - end).abs() < 1e-9, "{}: {x}", line.name);
        }
        let html = throughput_over_time(&s, true);
        assert!(html.contains("The last point covers 500ms."), "{html}");
        assert!(!html.contains("left out"));
    }

    #[test]
    fn a_run_cut_short_keeps_its_last_intervals_target_rate() {
        // Interrupted 2.5 s into a longer schedule: due at 2000/s until the end of the interval.
        let mut s = steady(2, 1000, 0.5);
        s.points[2].target_rate = Some(2000.0);
        let c = Covered::of(&s);
        let target = throughput_lines(&c, false).pop().unwrap();
        assert_eq!(target.name, "target rate");
        assert_eq!(last(&target).1, 2000.0);
    }

    #[test]
    fn a_file_without_spans_counts_every_interval_whole() {
        let mut s = steady(3, 2000, 0.0);
        for p in &mut s.points {
            p.span_secs = 0.0;
            p.target_rate = None;
        }
        let c = Covered::of(&s);
        assert_eq!(c.points.len(), 4);
        assert!(c.points.iter().all(|(_, span)| *span == 1.0));
    }

    #[test]
    fn a_lone_short_interval_is_the_whole_run_and_stays() {
        let s = TimeSeries {
            interval_secs: 1.0,
            points: vec![SeriesPoint {
                span_secs: 0.005,
                acked: 20,
                ..SeriesPoint::default()
            }],
        };
        let c = Covered::of(&s);
        assert_eq!(last(&throughput_lines(&c, true)[0]).1, 4000.0);
    }
}
