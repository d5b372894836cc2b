//! A rate: unlimited, constant, or a shape of segments (constant or ramping), and its
//! integral, the one piece of arithmetic the schedule, the estimates and the time series share.

use std::time::Duration;

use serde::Serialize;

use super::seconds::duration_secs;

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RateSpec {
    Unlimited,
    /// Messages per second, open loop.
    Fixed(f64),
    /// Segments run one after another; the workload ends with the last one.
    Shape(Vec<RateSegment>),
}

impl RateSpec {
    /// How long a shape lasts (the sum of its segments); `None` for a rate that sets no length.
    pub fn total_duration(&self) -> Option<Duration> {
        match self {
            RateSpec::Shape(segs) => Some(segs.iter().map(|s| s.duration).sum()),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct RateSegment {
    /// The rate, or where a ramp starts; a ramp goes linearly to `ramp_to` over `duration`.
    pub per_sec: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp_to: Option<f64>,
    #[serde(with = "duration_secs")]
    pub duration: Duration,
}

impl RateSegment {
    /// The rate where the segment ends (a constant segment's own rate).
    pub fn end_rate(&self) -> f64 {
        self.ramp_to.unwrap_or(self.per_sec)
    }

    /// Records/s gained per second: 0 for a constant segment.
    fn slope(&self) -> f64 {
        let len = self.duration.as_secs_f64();
        if len > 0.0 {
            (self.end_rate() - self.per_sec) / len
        } else {
            0.0
        }
    }

    /// Records the segment schedules in its first `t` seconds (`t` clamped to its length).
    pub fn records_by(&self, t: f64) -> f64 {
        let t = t.clamp(0.0, self.duration.as_secs_f64());
        self.per_sec * t + self.slope() * t * t / 2.0
    }

    /// Seconds into the segment at which it has scheduled `n` records; None when it ends first.
    pub fn time_of(&self, n: f64) -> Option<f64> {
        if n <= 0.0 {
            return Some(0.0);
        }
        let (a, k) = (self.per_sec, self.slope());
        // a·t + k·t²/2 = n, written so that k → 0 does not cancel: t = 2n / (a + √(a² + 2kn)).
        let disc = a * a + 2.0 * k * n;
        if disc < 0.0 {
            return None;
        }
        let den = a + disc.sqrt();
        let t = if den > 0.0 {
            2.0 * n / den
        } else {
            return None;
        };
        (t <= self.duration.as_secs_f64() + 1e-9).then_some(t)
    }
}

impl RateSpec {
    /// Records scheduled in the first `t` seconds: the integral of the rate. None at an
    /// unlimited rate.
    pub fn records_by(&self, t: f64) -> Option<f64> {
        let t = t.max(0.0);
        match self {
            RateSpec::Unlimited => None,
            RateSpec::Fixed(per_sec) => Some(per_sec * t),
            RateSpec::Shape(segs) => {
                let (mut start, mut sum) = (0.0, 0.0);
                for s in segs {
                    if t <= start {
                        break;
                    }
                    sum += s.records_by(t - start);
                    start += s.duration.as_secs_f64();
                }
                Some(sum)
            }
        }
    }

    /// Seconds until the integral reaches `n` records; None at an unlimited rate, or when a
    /// shape ends before it does.
    pub fn time_of(&self, n: f64) -> Option<f64> {
        match self {
            RateSpec::Unlimited => None,
            RateSpec::Fixed(per_sec) => (*per_sec > 0.0).then(|| n.max(0.0) / per_sec),
            RateSpec::Shape(segs) => {
                let (mut start, mut before) = (0.0, 0.0);
                for s in segs {
                    if let Some(t) = s.time_of(n - before) {
                        return Some(start + t);
                    }
                    before += s.records_by(f64::INFINITY);
                    start += s.duration.as_secs_f64();
                }
                None
            }
        }
    }

    /// The rate asked for `t` seconds in (records/s): a shape's segment's at that instant, 0
    /// after a shape ends; None at an unlimited rate.
    pub fn rate_at(&self, t: f64) -> Option<f64> {
        match self {
            RateSpec::Unlimited => None,
            RateSpec::Fixed(per_sec) => Some(*per_sec),
            RateSpec::Shape(segs) => {
                let mut start = 0.0;
                for s in segs {
                    let len = s.duration.as_secs_f64();
                    if t < start + len {
                        return Some(s.per_sec + s.slope() * (t - start).max(0.0));
                    }
                    start += len;
                }
                Some(0.0)
            }
        }
    }

    /// The rate asked for on average: a constant's own, a shape's over its whole length.
    pub fn average(&self) -> Option<f64> {
        match self {
            RateSpec::Unlimited => None,
            RateSpec::Fixed(per_sec) => Some(*per_sec),
            RateSpec::Shape(_) => {
                let secs = self.total_duration()?.as_secs_f64();
                Some(self.records_by(secs)? / secs.max(1e-9))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(per_sec: f64, ramp_to: Option<f64>, secs: u64) -> RateSegment {
        RateSegment {
            per_sec,
            ramp_to,
            duration: Duration::from_secs(secs),
        }
    }

    #[test]
    fn the_rate_at_an_instant_follows_the_shapes_segment_and_ramp() {
        let r = RateSpec::Shape(vec![seg(1000.0, Some(3000.0), 10), seg(500.0, None, 5)]);
        assert_eq!(r.rate_at(0.0), Some(1000.0));
        assert_eq!(r.rate_at(5.0), Some(2000.0));
        assert_eq!(r.rate_at(12.0), Some(500.0));
        assert_eq!(r.rate_at(15.0), Some(0.0), "after the shape");
        assert_eq!(RateSpec::Unlimited.rate_at(1.0), None);
    }

    #[test]
    fn a_ramps_integral_is_its_trapezoid() {
        let r = RateSpec::Shape(vec![seg(1000.0, Some(20000.0), 30)]);
        assert_eq!(r.records_by(30.0), Some(315_000.0));
        assert_eq!(
            r.records_by(99.0),
            Some(315_000.0),
            "nothing after the shape"
        );
        assert_eq!(r.average(), Some(10_500.0));
    }

    #[test]
    fn time_of_inverts_records_by_across_segments_pauses_and_ramps() {
        let r = RateSpec::Shape(vec![
            seg(100.0, None, 10),
            seg(0.0, None, 5),
            seg(50.0, Some(500.0), 20),
            seg(800.0, Some(10.0), 4),
        ]);
        for t in [0.5, 3.0, 10.0, 16.0, 22.5, 34.9, 36.0, 38.5] {
            let n = r.records_by(t).unwrap();
            let back = r.time_of(n).unwrap();
            assert!(
                (r.records_by(back).unwrap() - n).abs() < 1e-6,
                "t={t} n={n} back={back}"
            );
        }
        assert_eq!(r.time_of(1e9), None, "the shape ends first");
        assert_eq!(RateSpec::Fixed(200.0).time_of(1000.0), Some(5.0));
        assert_eq!(RateSpec::Unlimited.time_of(1.0), None);
    }
}
