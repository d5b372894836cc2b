//! Unavailability: the periods in which no broker answered. A run lives through them (they are
//! measured like a fault's window); only one longer than `cluster { lost_after }` ends it.

use serde::{Deserialize, Serialize};

/// A period in which no broker answered, in seconds from the start of the measured phase
/// (negative: it began in warm-up). It starts when a client found every broker down
/// (librdkafka's all-brokers-down: a request timed out or every connection failed) and ends
/// when a broker answered kafkabench's own probe again.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outage {
    pub from_secs: f64,
    /// None: no broker answered before the run ended (or was ended by it).
    pub to_secs: Option<f64>,
}

impl Outage {
    /// How long it lasted, up to `end_secs` for one still open at the end.
    pub fn secs(&self, end_secs: f64) -> f64 {
        (self.to_secs.unwrap_or(end_secs) - self.from_secs).max(0.0)
    }

    /// Its part within the measured phase, which ends at `end_secs`.
    pub fn measured(&self, end_secs: f64) -> Outage {
        Outage {
            from_secs: self.from_secs.max(0.0),
            to_secs: Some(self.to_secs.unwrap_or(end_secs).min(end_secs)),
        }
    }
}

/// The cluster lost: no broker answered for `for_secs`, past the scenario's bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lost {
    pub for_secs: f64,
    pub bound_secs: f64,
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no broker answered for {}, past `cluster {{ lost_after = {} }}`",
            crate::format::human_duration(self.for_secs),
            crate::format::human_duration(self.bound_secs)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_outage_lasts_to_the_end() {
        let o = Outage {
            from_secs: 2.0,
            to_secs: None,
        };
        assert_eq!(o.secs(5.5), 3.5);
        let closed = Outage {
            from_secs: -1.0,
            to_secs: Some(2.0),
        };
        assert_eq!(closed.secs(9.0), 3.0);
        assert_eq!(
            closed.measured(9.0).secs(9.0),
            2.0,
            "warm-up's second is not measured"
        );
        assert_eq!(o.measured(5.5).secs(5.5), 3.5);
    }

    #[test]
    fn the_loss_says_how_long_and_the_bound() {
        let l = Lost {
            for_secs: 61.2,
            bound_secs: 60.0,
        };
        assert_eq!(
            l.to_string(),
            "no broker answered for 61.2s, past `cluster { lost_after = 60s }`"
        );
    }
}
