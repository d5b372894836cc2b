//! How long a run takes to send, from its counts, rates, shape and warm-up: one function for
//! `kafkabench plan` and for a live progress ETA.
//!
//! The estimate is the schedule's own arithmetic (see `run::pacer`: record i is due when the
//! rate's integral reaches i), so it is exact for a paced run that keeps up and a lower bound for
//! one that falls behind or waits on `in_flight`. It covers sending only: connecting, creating
//! the topic and draining the last acknowledgements come on top. A phase bounded by nothing but
//! a record count at an unlimited rate has no estimate; its record count is given instead.

use std::time::Duration;

use serde::Serialize;

use crate::model::{RateSpec, Warmup, Workload};

/// One phase (warm-up or measured) of one run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PhaseEstimate {
    /// How long it sends; `None` when unknown (a count at an unlimited rate).
    #[serde(rename = "seconds", serialize_with = "secs_opt")]
    pub duration: Option<Duration>,
    /// How many records it sends, when the count or the rate says (a duration at an unlimited
    /// rate does not).
    pub records: Option<u64>,
}

/// A run's estimate: its warm-up (when it has one), its measured phase, and their sum.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    pub warmup: Option<PhaseEstimate>,
    pub measured: PhaseEstimate,
    /// Warm-up and measured phase together; `None` when either is unknown.
    #[serde(rename = "seconds", serialize_with = "secs_opt")]
    pub total: Option<Duration>,
}

/// The whole plan: the known runs' sum, and how many runs are unknown.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PlanEstimate {
    /// The sum over the runs whose duration is known.
    #[serde(rename = "seconds", serialize_with = "secs")]
    pub known: Duration,
    /// Runs without an estimate (not in `seconds`).
    pub unknown_runs: usize,
}

/// The estimate of one workload as planned (scale already applied).
pub fn estimate(w: &Workload) -> Estimate {
    let warmup = w.warmup.as_ref().map(|wu| match wu {
        Warmup::Messages(n) => phase(&w.rate, Some(*n), None),
        Warmup::Duration(d) => phase(&w.rate, None, Some(*d)),
        // The worst case: the bound.
        Warmup::Auto { max } => phase(&w.rate, None, Some(*max)),
    });
    let measured = phase(&w.rate, w.messages, w.duration);
    let total = match warmup {
        None => measured.duration,
        Some(wu) => wu.duration.zip(measured.duration).map(|(a, b)| a + b),
    };
    Estimate {
        warmup,
        measured,
        total,
    }
}

/// A capacity search's worst case (`CapacitySearch::worst_case`): every probe it may take,
/// each with its warm-up and set-up.
pub(super) fn search(c: &crate::model::CapacitySearch) -> Estimate {
    let worst = Some(c.worst_case());
    Estimate {
        warmup: None,
        measured: PhaseEstimate {
            duration: worst,
            records: None,
        },
        total: worst,
    }
}

/// A phase ends at its count, its duration or the end of the shape, whichever comes first;
/// the pacer starts each phase on a fresh schedule.
fn phase(rate: &RateSpec, count: Option<u64>, limit: Option<Duration>) -> PhaseEstimate {
    let (duration, records) = match rate {
        // With a count and a duration, the count may end it sooner: both are upper bounds.
        RateSpec::Unlimited => (limit, count),
        RateSpec::Fixed(per_sec) => {
            let by_count = count.map(|n| n as f64 / per_sec);
            let secs = min_opt(by_count, limit.map(|d| d.as_secs_f64()));
            let records = secs.map(|s| cap(count, (per_sec * s + 1e-9).floor() as u64));
            (secs.map(Duration::from_secs_f64), records)
        }
        RateSpec::Shape(_) => {
            // The count's instant on the rate's integral, the time limit, or the shape's end,
            // whichever comes first.
            let end = rate.total_duration().unwrap_or_default().as_secs_f64();
            let by_count = count.and_then(|n| rate.time_of(n as f64));
            let t = [Some(end), by_count, limit.map(|d| d.as_secs_f64())]
                .into_iter()
                .flatten()
                .fold(f64::INFINITY, f64::min);
            let integral = rate.records_by(t).unwrap_or(0.0);
            let records = cap(count, (integral + 1e-9).floor() as u64);
            (Some(Duration::from_secs_f64(t)), Some(records))
        }
    };
    PhaseEstimate { duration, records }
}

fn min_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn cap(count: Option<u64>, n: u64) -> u64 {
    count.map_or(n, |c| c.min(n))
}

/// The sum over runs: known durations added, unknown ones counted.
/// Every run's estimate added up, each `repeat` times (its trials).
pub(super) fn total(runs: impl IntoIterator<Item = Estimate>, repeat: u32) -> PlanEstimate {
    let mut t = PlanEstimate {
        known: Duration::ZERO,
        unknown_runs: 0,
    };
    for e in runs {
        match e.total {
            Some(d) => t.known += d * repeat,
            None => t.unknown_runs += 1,
        }
    }
    t
}

fn secs_opt<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RateSegment;

    fn secs(e: PhaseEstimate) -> Option<f64> {
        e.duration.map(|d| (d.as_secs_f64() * 1e6).round() / 1e6)
    }

    #[test]
    fn a_count_at_a_fixed_rate_takes_count_over_rate() {
        let e = phase(&RateSpec::Fixed(1000.0), Some(30_000), None);
        assert_eq!((secs(e), e.records), (Some(30.0), Some(30_000)));
    }

    #[test]
    fn a_duration_shorter_than_the_count_ends_the_phase_first() {
        let e = phase(
            &RateSpec::Fixed(100.0),
            Some(10_000),
            Some(Duration::from_secs(5)),
        );
        assert_eq!((secs(e), e.records), (Some(5.0), Some(500)));
    }

    #[test]
    fn a_count_at_an_unlimited_rate_is_unknown_with_its_records() {
        let e = phase(&RateSpec::Unlimited, Some(100_000), None);
        assert_eq!((e.duration, e.records), (None, Some(100_000)));
        let d = phase(&RateSpec::Unlimited, None, Some(Duration::from_secs(9)));
        assert_eq!((secs(d), d.records), (Some(9.0), None));
    }

    #[test]
    fn a_shape_lasts_its_segments_and_sends_its_integral() {
        let shape = RateSpec::Shape(vec![
            RateSegment {
                ramp_to: None,
                per_sec: 100.0,
                duration: Duration::from_secs(10),
            },
            RateSegment {
                ramp_to: None,
                per_sec: 0.0,
                duration: Duration::from_secs(5),
            },
            RateSegment {
                ramp_to: None,
                per_sec: 50.5,
                duration: Duration::from_secs(2),
            },
        ]);
        let e = phase(&shape, None, None);
        assert_eq!((secs(e), e.records), (Some(17.0), Some(1101)));
        let by_count = phase(&shape, Some(500), None);
        assert_eq!((secs(by_count), by_count.records), (Some(5.0), Some(500)));
        let after_pause = phase(&shape, Some(1050), None);
        assert_eq!(secs(after_pause), Some(15.990099)); // 10s, the pause, 50 records at 50.5/s
    }

    #[test]
    fn a_run_adds_its_warm_up_and_is_unknown_when_either_is() {
        let mut w = Workload {
            messages: Some(2000),
            duration: None,
            warmup: Some(Warmup::Duration(Duration::from_secs(3))),
            rate: RateSpec::Fixed(1000.0),
            in_flight: None,
            in_flight_until_consumed: false,
            producers: 1,
            payload: crate::model::PayloadSpec::Random {
                size: crate::model::PayloadSize::Fixed(10),
                compressibility: 0.0,
            },
            key: crate::model::KeySpec::None,
            headers: vec![],
            consumers: None,
            commit: Default::default(),
            backlog: None,
            transaction: None,
            topics: 1,
            tombstones: 0.0,
            compaction: None,
            seed: None,
        };
        assert_eq!(estimate(&w).total, Some(Duration::from_secs(5)));
        w.rate = RateSpec::Unlimited;
        let e = estimate(&w);
        assert_eq!(e.total, None);
        assert_eq!(e.measured.records, Some(2000));
        let runs = [
            e,
            estimate(&Workload {
                rate: RateSpec::Fixed(100.0),
                ..w.clone()
            }),
        ];
        let t = total(runs, 1);
        assert_eq!((t.known, t.unknown_runs), (Duration::from_secs(23), 1));
        // Three trials of each run take three times as long.
        let t = total(runs, 3);
        assert_eq!((t.known, t.unknown_runs), (Duration::from_secs(69), 1));
    }
}
