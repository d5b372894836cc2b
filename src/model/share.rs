//! A share group (KIP-932, "queues for Kafka") reading the run: `share { }` in a scenario.
//! Records are acquired one by one and each acknowledged (accepted, released or rejected), so
//! what a member decides per record is part of the scenario, and of what is verified.

use std::time::Duration;

use serde::Serialize;

use super::seconds::duration_secs;
use super::Props;

/// Kafka's default `group.share.delivery.count.limit`: a record delivered this many times and
/// released (or timed out) once more is archived.
pub const DELIVERY_LIMIT_DEFAULT: u16 = 5;
/// Kafka's bounds for `share.delivery.count.limit`.
pub const DELIVERY_LIMIT_MIN: u16 = 2;
pub const DELIVERY_LIMIT_MAX: u16 = 10;

#[derive(Clone, Debug, Serialize)]
pub struct ShareSpec {
    /// The group's configs (`share.record.lock.duration.ms`, `share.delivery.count.limit`,
    /// `share.isolation.level`, `share.auto.offset.reset`), set on the group before any member
    /// joins.
    pub group: Props,
    /// The members' own settings (`max.poll.records`, `fetch.max.wait.ms`, `fetch.min.bytes`,
    /// `fetch.max.bytes`, `group.id`).
    pub client: Props,
    pub ack: AckMode,
    /// Simulated work per record, before it is acknowledged.
    #[serde(with = "duration_secs")]
    pub processing: Duration,
}

impl ShareSpec {
    /// The delivery count limit the group will have (the scenario's, else Kafka's default).
    pub fn delivery_limit(&self) -> u16 {
        self.group
            .get("share.delivery.count.limit")
            .and_then(|v| v.parse().ok())
            .unwrap_or(DELIVERY_LIMIT_DEFAULT)
    }
}

/// How members acknowledge what they acquire.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AckMode {
    /// Every record is accepted with the member's next fetch (the Java client's implicit mode).
    Implicit,
    /// Each record is accepted, released or rejected as its class says (see [`AckMode::class`]):
    /// `reject` of the records are rejected (never delivered again), `release` are released on
    /// every delivery (poison: archived once the delivery count limit is reached), `retry` are
    /// released on their first delivery and accepted on the next.
    Explicit {
        release: f64,
        reject: f64,
        retry: f64,
    },
}

/// What a member does with one delivery of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ack {
    Accept,
    Release,
    Reject,
}

/// The fate a record's sequence gives it under an explicit mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckClass {
    Accept,
    Reject,
    /// Released on every delivery.
    Poison,
    /// Released once, then accepted.
    Retry,
}

impl AckMode {
    /// The class of record `seq` of producer `producer`: decided by the record alone, so every
    /// member (and a test) agrees on it, and the classes are spread evenly over the sequence
    /// (a low-discrepancy sequence: any run of n records holds about n × fraction of each).
    pub fn class(&self, producer: u32, seq: u64) -> AckClass {
        let AckMode::Explicit {
            release,
            reject,
            retry,
        } = *self
        else {
            return AckClass::Accept;
        };
        // Golden-ratio (Weyl) sequence, offset per producer so producers do not move in step.
        let phase = (producer as f64) * 0.381_966_011_250_105;
        let x = ((seq as f64) * 0.618_033_988_749_895 + phase).fract();
        if x < reject {
            AckClass::Reject
        } else if x < reject + release {
            AckClass::Poison
        } else if x < reject + release + retry {
            AckClass::Retry
        } else {
            AckClass::Accept
        }
    }

    /// What a member does with delivery `delivery` (1 for the first) of the record.
    pub fn decide(&self, producer: u32, seq: u64, delivery: u16) -> Ack {
        match self.class(producer, seq) {
            AckClass::Accept => Ack::Accept,
            AckClass::Reject => Ack::Reject,
            AckClass::Poison => Ack::Release,
            AckClass::Retry if delivery <= 1 => Ack::Release,
            AckClass::Retry => Ack::Accept,
        }
    }

    /// As written in a scenario.
    pub fn text(&self) -> String {
        match self {
            AckMode::Implicit => "implicit".into(),
            AckMode::Explicit {
                release,
                reject,
                retry,
            } => {
                let mut parts = Vec::new();
                for (name, f) in [("release", release), ("reject", reject), ("retry", retry)] {
                    if *f > 0.0 {
                        parts.push(format!("{name}: {}%", trim(f * 100.0)));
                    }
                }
                format!("explicit({})", parts.join(", "))
            }
        }
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_come_in_their_fractions_and_spread_evenly() {
        let mode = AckMode::Explicit {
            release: 0.05,
            reject: 0.02,
            retry: 0.10,
        };
        for producer in 0..3 {
            let mut counts = [0u64; 4];
            for seq in 0..100_000 {
                counts[mode.class(producer, seq) as usize] += 1;
            }
            // Accept, Reject, Poison, Retry: within 0.1 % of the fraction over 100k records.
            assert!((counts[1] as f64 - 2_000.0).abs() < 100.0, "{counts:?}");
            assert!((counts[2] as f64 - 5_000.0).abs() < 100.0, "{counts:?}");
            assert!((counts[3] as f64 - 10_000.0).abs() < 100.0, "{counts:?}");
            // Any 1000 in a row hold about their share too (no clumps).
            let rejects = (5_000..6_000)
                .filter(|s| mode.class(producer, *s) == AckClass::Reject)
                .count();
            assert!((15..=25).contains(&rejects), "{rejects}");
        }
    }

    #[test]
    fn a_retry_is_released_once_and_poison_every_time() {
        let mode = AckMode::Explicit {
            release: 0.3,
            reject: 0.3,
            retry: 0.3,
        };
        let find = |c| (0..100).find(|s| mode.class(0, *s) == c).unwrap();
        let (retry, poison, reject) = (
            find(AckClass::Retry),
            find(AckClass::Poison),
            find(AckClass::Reject),
        );
        assert_eq!(mode.decide(0, retry, 1), Ack::Release);
        assert_eq!(mode.decide(0, retry, 2), Ack::Accept);
        assert_eq!(mode.decide(0, poison, 4), Ack::Release);
        assert_eq!(mode.decide(0, reject, 1), Ack::Reject);
        assert_eq!(AckMode::Implicit.decide(0, reject, 1), Ack::Accept);
        assert_eq!(
            mode.text(),
            "explicit(release: 30%, reject: 30%, retry: 30%)"
        );
    }
}
