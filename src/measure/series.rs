//! A run over time: figures per fixed interval of the measured phase, so a stall, a broker
//! restart or a rate shape shows when it happened. Each record counts in the interval in which
//! its acknowledgement (or consumption) arrived; `sent` in the interval it was sent.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::codec;
use super::due::DueLatency;
use super::intervals::{add_counts, new_interval_histogram, IntervalCounts, IntervalRecording};
use crate::model::RateSpec;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TimeSeries {
    /// Width of every interval, seconds.
    pub interval_secs: f64,
    pub points: Vec<SeriesPoint>,
}

/// One interval. Latencies are from that interval's own histogram (records acked in it).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SeriesPoint {
    /// Start of the interval, seconds since the measured phase began.
    pub t_secs: f64,
    /// How much of the interval the run covered: `interval_secs`, except for the last one,
    /// which ends with the run's last record (acknowledged or read).
    #[serde(default)]
    pub span_secs: f64,
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    /// Key and value bytes of the records acked in the interval.
    pub bytes: u64,
    /// The schedule's rate over the interval (records/s); None at unlimited rate.
    pub target_rate: Option<f64>,
    /// Measured records read back in the interval, when a consumer runs.
    pub consumed: Option<u64>,
    /// Records a consumer can still read and has not read at the interval's end, when a
    /// consumer runs: acknowledged (and backlog) records, less those read, less those no
    /// consumer will read (an aborted transaction's, for read_committed consumers, from its
    /// abort on; records deleted before they were read, from the deletion on).
    pub lag: Option<u64>,
    /// Acknowledged records that became unreadable in the interval (their transaction
    /// aborted, the consumers reading committed records only).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreadable: u64,
    /// Records of aborted transactions read in the interval (read_uncommitted).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub aborted_read: u64,
    /// Backlog records (written before the clock) read in the interval: with `consumed`, what
    /// a merge needs to sum the shards' lag exactly.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub backlog_read: u64,
    pub ack_p50_ms: Option<f64>,
    pub ack_p99_ms: Option<f64>,
    pub ack_max_ms: Option<f64>,
    pub e2e_p50_ms: Option<f64>,
    pub e2e_p99_ms: Option<f64>,
    pub e2e_max_ms: Option<f64>,
    /// The interval's ack latency histogram (HdrHistogram V2 deflate, base64, nanoseconds,
    /// 2 significant digits), so intervals of several files merge exactly; None when nothing
    /// was acked in it.
    #[serde(default)]
    pub ack_histogram: Option<String>,
    /// The interval's end-to-end latency histogram, encoded the same way; None without a
    /// consumer or when nothing was read in it.
    #[serde(default)]
    pub e2e_histogram: Option<String>,
}

/// What the schedule asked for over the measured phase: the rate, bounded by the duration and
/// the record count.
pub struct Planned<'a> {
    pub rate: &'a RateSpec,
    pub duration: Option<Duration>,
    pub messages: Option<u64>,
    /// Backlog records written before the clock started: lag from the first interval on.
    pub backlog: u64,
}

impl Planned<'_> {
    /// The measured phase of a workload as planned.
    pub fn of(w: &crate::model::Workload) -> Planned<'_> {
        Planned {
            rate: &w.rate,
            duration: w.duration,
            messages: w.messages,
            backlog: w.backlog.as_ref().and_then(|b| b.records()).unwrap_or(0),
        }
    }

    /// Records due in the first `secs` seconds; None at unlimited rate.
    pub fn due_by(&self, secs: f64) -> Option<f64> {
        let t = self
            .duration
            .map_or(secs, |d| secs.min(d.as_secs_f64()))
            .max(0.0);
        let records = self.rate.records_by(t)?;
        Some(self.messages.map_or(records, |m| records.min(m as f64)))
    }

    /// The schedule's average rate over `[from, to)` seconds.
    pub fn rate_over(&self, from: f64, to: f64) -> Option<f64> {
        Some((self.due_by(to)? - self.due_by(from)?) / (to - from).max(1e-9))
    }
}

/// The measured phase's interval buckets, merged from threads or shards: what the series is
/// derived from. Interval i of every part is one interval (the parts share t = 0).
#[derive(Clone, Debug, Default)]
pub struct Intervals {
    pub width_ns: u64,
    /// Where interval 0 begins on the run's clock (0 when read back from a file).
    pub origin_ns: u64,
    pub counts: Vec<IntervalCounts>,
    /// Ack and end-to-end latency histograms (2 digits) by interval index; None when nothing
    /// was recorded in the interval.
    pub ack: Vec<Option<Histogram<u64>>>,
    pub e2e: Vec<Option<Histogram<u64>>>,
    /// The last time anything was recorded, from the origin.
    pub end_ns: u64,
    /// A consumer read: the series has its columns.
    pub consumer: bool,
    /// Records written (and acked) before the clock: lag from the first interval on.
    pub backlog: u64,
    /// Latencies by due interval (`measure::due`), when the run kept them.
    pub due: Option<DueLatency>,
}

impl Intervals {
    /// One thread's recording, its histograms decoded; None when it recorded no intervals
    /// (it never reached the measured phase). A consumer's latencies are end-to-end.
    pub fn of_thread(r: &IntervalRecording, consumer: bool) -> Option<Intervals> {
        if r.width_ns == 0 {
            return None;
        }
        let mut hists = Vec::new();
        r.add_histograms_into(&mut hists);
        let (ack, e2e) = if consumer {
            (Vec::new(), hists)
        } else {
            (hists, Vec::new())
        };
        Some(Intervals {
            width_ns: r.width_ns,
            origin_ns: r.origin_ns,
            counts: r.counts.clone(),
            ack,
            e2e,
            end_ns: r.last_ns.saturating_sub(r.origin_ns),
            consumer,
            backlog: 0,
            due: r.due.as_deref().map(|c| DueLatency::of_thread(c, consumer)),
        })
    }

    /// Adds `o` into these: counts summed, histograms added (exact), the end the later one.
    pub fn absorb(&mut self, o: &Intervals) {
        add_counts(&mut self.counts, &o.counts);
        add_all(&mut self.ack, &o.ack);
        add_all(&mut self.e2e, &o.e2e);
        self.end_ns = self.end_ns.max(o.end_ns);
        self.consumer |= o.consumer;
        self.backlog += o.backlog;
        match (&mut self.due, &o.due) {
            (Some(mine), Some(theirs)) => mine.absorb(theirs),
            (None, Some(theirs)) => self.due = Some(theirs.clone()),
            _ => {}
        }
    }

    /// The series: percentiles read off the summed histograms, lag from the summed counts,
    /// the target from the schedule.
    pub fn derive(&self, planned: &Planned) -> TimeSeries {
        let n = self.counts.len().max(self.ack.len()).max(self.e2e.len());
        let end_secs = self.end_ns as f64 / 1e9;
        let w = self.width_ns as f64 / 1e9;
        let (mut acked_total, mut consumed_total) = (self.backlog, 0u64);
        let mut points = Vec::with_capacity(n);
        for i in 0..n {
            let t = i as f64 * w;
            let c = self.counts.get(i).copied().unwrap_or_default();
            let mut p = SeriesPoint {
                t_secs: t,
                span_secs: if i + 1 == n {
                    (end_secs - t).clamp(0.0, w)
                } else {
                    w
                },
                target_rate: planned.rate_over(t, t + w),
                sent: c.sent,
                acked: c.acked,
                failed: c.failed,
                bytes: c.bytes,
                ..SeriesPoint::default()
            };
            acked_total += p.acked;
            p.unreadable = c.unreadable;
            p.aborted_read = c.aborted_read;
            let h = self.ack.get(i).and_then(Option::as_ref);
            (p.ack_p50_ms, p.ack_p99_ms, p.ack_max_ms, p.ack_histogram) = latency(h);
            if self.consumer {
                consumed_total += c.consumed + c.backlog_read + c.aborted_read + c.unreadable;
                p.consumed = Some(c.consumed);
                p.backlog_read = c.backlog_read;
                p.lag = Some(acked_total.saturating_sub(consumed_total));
                let h = self.e2e.get(i).and_then(Option::as_ref);
                (p.e2e_p50_ms, p.e2e_p99_ms, p.e2e_max_ms, p.e2e_histogram) = latency(h);
            }
            points.push(p);
        }
        TimeSeries {
            interval_secs: w,
            points,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `from[i]` added into `into[i]`, growing it.
fn add_all(into: &mut Vec<Option<Histogram<u64>>>, from: &[Option<Histogram<u64>>]) {
    if from.len() > into.len() {
        into.resize_with(from.len(), || None);
    }
    for (i, h) in from.iter().enumerate() {
        if let Some(h) = h {
            let _ = into[i].get_or_insert_with(new_interval_histogram).add(h);
        }
    }
}

pub(crate) type IntervalLatency = (Option<f64>, Option<f64>, Option<f64>, Option<String>);

/// p50, p99 and max in milliseconds, and the histogram encoded; all None when empty. The
/// merge of shards' series writes its points with it too.
pub(crate) fn latency(h: Option<&Histogram<u64>>) -> IntervalLatency {
    match h.filter(|h| !h.is_empty()) {
        None => (None, None, None, None),
        Some(h) => {
            let ms = |ns: u64| ns as f64 / 1e6;
            (
                Some(ms(h.value_at_quantile(0.5))),
                Some(ms(h.value_at_quantile(0.99))),
                Some(ms(h.max())),
                Some(codec::encode(h)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::intervals::IntervalRecorder;
    use crate::model::RateSegment;

    const MS: u64 = 1_000_000;

    /// The threads' interval recordings merged and derived, as `RunResult::derive_figures` does.
    fn merge(
        producers: &[&IntervalRecording],
        consumer: Option<&IntervalRecording>,
        planned: &Planned,
    ) -> Option<TimeSeries> {
        let mut all: Option<Intervals> = None;
        let parts = producers.iter().map(|p| (*p, false));
        for (r, is_consumer) in parts.chain(consumer.map(|c| (c, true))) {
            let Some(i) = Intervals::of_thread(r, is_consumer) else {
                continue;
            };
            match &mut all {
                Some(a) => a.absorb(&i),
                None => all = Some(i),
            }
        }
        let mut all = all?;
        all.consumer |= consumer.is_some();
        all.backlog = planned.backlog;
        Some(all.derive(planned))
    }

    fn planned(rate: &RateSpec) -> Planned<'_> {
        Planned {
            rate,
            duration: None,
            messages: None,
            backlog: 0,
        }
    }

    #[test]
    fn a_fixed_rate_is_the_target_until_the_schedule_ends() {
        let rate = RateSpec::Fixed(100.0);
        let p = Planned {
            duration: Some(Duration::from_millis(2_500)),
            ..planned(&rate)
        };
        assert_eq!(p.rate_over(0.0, 1.0), Some(100.0));
        assert_eq!(
            p.rate_over(2.0, 3.0),
            Some(50.0),
            "half the interval is planned"
        );
        assert_eq!(p.rate_over(3.0, 4.0), Some(0.0));
        let by_count = Planned {
            messages: Some(150),
            ..planned(&rate)
        };
        assert_eq!(by_count.rate_over(1.0, 2.0), Some(50.0));
    }

    #[test]
    fn a_shape_is_the_target_interval_by_interval() {
        let seg = |per_sec: f64, ms: u64| RateSegment {
            per_sec,
            ramp_to: None,
            duration: Duration::from_millis(ms),
        };
        let rate = RateSpec::Shape(vec![seg(100.0, 1_000), seg(0.0, 500), seg(300.0, 1_000)]);
        let p = planned(&rate);
        assert_eq!(p.rate_over(0.0, 1.0), Some(100.0));
        assert_eq!(p.rate_over(1.0, 2.0), Some(150.0), "a pause, then 300/s");
        assert_eq!(p.rate_over(3.0, 4.0), Some(0.0));
        assert_eq!(planned(&RateSpec::Unlimited).rate_over(0.0, 1.0), None);
    }

    #[test]
    fn the_merged_series_sums_the_threads_and_shows_a_stall() {
        let mut a = IntervalRecorder::new(100 * MS);
        let mut b = IntervalRecorder::new(100 * MS);
        let mut c = IntervalRecorder::new(100 * MS);
        for r in [&mut a, &mut b, &mut c] {
            r.start(0);
        }
        a.sent(0);
        a.acked(50 * MS, 2 * MS, 100);
        b.sent(10 * MS);
        b.acked(350 * MS, 300 * MS, 100);
        c.consumed(60 * MS, 10 * MS);
        c.consumed(360 * MS, 310 * MS);
        let (a, b, c) = (a.finish(), b.finish(), c.finish());
        let s = merge(&[&a, &b], Some(&c), &planned(&RateSpec::Unlimited)).unwrap();
        let acked: Vec<u64> = s.points.iter().map(|p| p.acked).collect();
        assert_eq!(acked, [1, 0, 0, 1], "the stall shows as empty intervals");
        assert_eq!(s.points[0].sent, 2);
        assert_eq!(s.points[0].bytes, 100);
        assert_eq!(s.points[1].lag, Some(0));
        assert_eq!(s.points[1].ack_p99_ms, None);
        assert!(
            (s.points[3].span_secs - 0.06).abs() < 1e-9,
            "ends at the last read"
        );
        let p99 = s.points[3].e2e_p99_ms.unwrap();
        assert!((p99 - 310.0).abs() / 310.0 < 0.01, "{p99}");
        let h = codec::decode(s.points[0].ack_histogram.as_deref().unwrap()).unwrap();
        assert_eq!(h.len(), 1);
    }

    #[test]
    fn lag_is_what_was_acked_and_not_yet_read() {
        let (mut p, mut c) = (IntervalRecorder::new(MS), IntervalRecorder::new(MS));
        p.start(0);
        c.start(0);
        for _ in 0..5 {
            p.acked(0, 1, 1);
        }
        c.consumed(0, 1);
        c.consumed(MS, 1);
        let (p, c) = (p.finish(), c.finish());
        let s = merge(&[&p], Some(&c), &planned(&RateSpec::Unlimited)).unwrap();
        let lag: Vec<Option<u64>> = s.points.iter().map(|p| p.lag).collect();
        assert_eq!(lag, [Some(4), Some(3)]);
    }
}
