//! The send schedule: when each record is due, one pure function of the rate.
//!
//! Record i is due at the instant the integral of the rate (a constant, or a shape's segments,
//! pauses being 0/s segments, ramps linear) reaches i; record 0 at the start. A shape sends floor(integral)
//! records: record i needs the whole unit [i, i + 1) of the integral. A pause sends nothing, so
//! a record whose instant falls on a pause is due when the pause ends. With several senders,
//! sender k of P takes the records i ≡ k (mod P): together they send exactly the one schedule,
//! and no two of them send in lockstep.

use crate::model::RateSpec;

/// Integral values this close below a whole number count as reaching it: rates like 0.1/s
/// are not exact in binary, and 0.1/s for 30 s must still be 3 records, not 2.
const ROUNDING_SLACK: f64 = 1e-9;

/// Which records of the schedule one sender takes: those with `i % of == index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Share {
    pub index: u64,
    pub of: u64,
}

impl Share {
    /// The whole schedule, for a single sender.
    #[cfg(test)]
    pub(crate) const WHOLE: Share = Share { index: 0, of: 1 };

    /// How many of the records 0..total this share takes.
    pub(crate) fn count_of(&self, total: u64) -> u64 {
        total / self.of + u64::from(self.index < total % self.of)
    }
}

/// When a record is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Unlimited rate: as soon as it can be sent.
    Now,
    /// At this many nanoseconds on the sender's clock.
    At(u64),
    /// The shape is over: no such record.
    Done,
}

/// A stretch of a shape with a positive rate, precomputed so that a record's time is one
/// multiply-add.
#[derive(Debug, Clone)]
struct Segment {
    /// The integral (in records) where the segment starts and ends.
    first: f64,
    end: f64,
    start_ns: f64,
    ns_per_record: f64,
    /// A ramp: its starting rate (records/s) and half its slope (records/s²), so that
    /// `records(t) = rate·t + half_slope·t²`; `None` for a constant rate.
    ramp: Option<(f64, f64)>,
}

#[derive(Debug, Clone)]
enum Kind {
    Unlimited,
    Fixed { ns_per_record: f64 },
    Shape { segments: Vec<Segment>, total: u64 },
}

/// The schedule of one rate: record index → time from the schedule's start.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    kind: Kind,
}

impl Schedule {
    pub(crate) fn new(rate: &RateSpec) -> Schedule {
        let kind = match rate {
            RateSpec::Unlimited => Kind::Unlimited,
            RateSpec::Fixed(per_sec) => Kind::Fixed {
                ns_per_record: 1e9 / per_sec,
            },
            RateSpec::Shape(shape) => {
                let (mut integral, mut start_ns) = (0.0, 0.0);
                let mut segments = Vec::new();
                for s in shape {
                    let secs = s.duration.as_secs_f64();
                    let to = s.ramp_to.unwrap_or(s.per_sec);
                    let records = (s.per_sec + to) / 2.0 * secs;
                    if records > 0.0 {
                        segments.push(Segment {
                            first: integral,
                            end: integral + records,
                            start_ns,
                            ns_per_record: 1e9 / s.per_sec,
                            ramp: (to != s.per_sec)
                                .then(|| (s.per_sec, (to - s.per_sec) / (2.0 * secs))),
                        });
                    }
                    integral += records;
                    start_ns += secs * 1e9;
                }
                Kind::Shape {
                    segments,
                    total: (integral + ROUNDING_SLACK).floor() as u64,
                }
            }
        };
        Schedule { kind }
    }

    /// How many records the schedule has; None when it is unbounded (a constant or no rate).
    #[cfg(test)]
    pub(crate) fn total(&self) -> Option<u64> {
        match &self.kind {
            Kind::Shape { total, .. } => Some(*total),
            Kind::Unlimited | Kind::Fixed { .. } => None,
        }
    }

    /// When record `i` is due, in nanoseconds from the schedule's start.
    #[cfg(test)]
    pub(crate) fn slot(&self, i: u64) -> Slot {
        match &self.kind {
            Kind::Unlimited => Slot::Now,
            Kind::Fixed { ns_per_record } => Slot::At((i as f64 * ns_per_record) as u64),
            Kind::Shape { segments, total } => {
                if i >= *total {
                    return Slot::Done;
                }
                let at = segments.partition_point(|s| !in_or_before(i, s));
                segments
                    .get(at)
                    .map_or(Slot::Done, |s| Slot::At(time_in(s, i)))
            }
        }
    }
}

/// Record `i` falls in `s` or an earlier segment.
#[inline]
fn in_or_before(i: u64, s: &Segment) -> bool {
    (i as f64) < s.end - ROUNDING_SLACK
}

#[inline]
fn time_in(s: &Segment, i: u64) -> u64 {
    let k = (i as f64 - s.first).max(0.0);
    let secs = match s.ramp {
        None => return (s.start_ns + k * s.ns_per_record) as u64,
        Some(_) if k == 0.0 => 0.0,
        // The root of rate·t + half_slope·t² = k, in the form that stays exact for a ramp
        // from 0/s and for a ramp down (half_slope < 0); within the segment the square root's
        // argument is never below zero, but rounding may make it a hair negative.
        Some((rate, half_slope)) => {
            2.0 * k / (rate + (rate * rate + 4.0 * half_slope * k).max(0.0).sqrt())
        }
    };
    (s.start_ns + secs * 1e9) as u64
}

/// Walks one share of a schedule on the sender's clock: the hot path's view of `Schedule`.
/// Same answers as `Schedule::slot`, in O(1) per record (the segment only moves forward).
pub(crate) struct Pacer {
    schedule: Schedule,
    share: Share,
    origin_ns: u64,
    next_record: u64,
    segment: usize,
}

impl Pacer {
    /// The schedule starts at `origin_ns` on the sender's clock.
    pub(crate) fn new(rate: &RateSpec, share: Share, origin_ns: u64) -> Pacer {
        Pacer {
            schedule: Schedule::new(rate),
            share,
            origin_ns,
            next_record: share.index,
            segment: 0,
        }
    }

    /// The next record of this share.
    #[inline]
    pub(crate) fn next_slot(&mut self) -> Slot {
        let i = self.next_record;
        let offset = match &self.schedule.kind {
            Kind::Unlimited => return Slot::Now,
            Kind::Fixed { ns_per_record } => (i as f64 * ns_per_record) as u64,
            Kind::Shape { segments, total } => {
                if i >= *total {
                    return Slot::Done;
                }
                loop {
                    let Some(s) = segments.get(self.segment) else {
                        return Slot::Done;
                    };
                    if in_or_before(i, s) {
                        break time_in(s, i);
                    }
                    self.segment += 1;
                }
            }
        };
        self.next_record += self.share.of;
        Slot::At(self.origin_ns + offset)
    }
}

#[cfg(test)]
#[path = "pacer_tests.rs"]
mod tests;
