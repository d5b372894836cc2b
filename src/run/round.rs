//! A round: one run as it is carried out — a planned run itself, one of its trials, or a probe
//! (or canary) of its capacity search. Every participant derives the round's run plan from
//! these few fields the same way, so the collector of a sharded run names a round to its
//! shards with them and each shard runs exactly the plan the collector judges.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::{CapacitySearch, RateSpec, Warmup};
use crate::plan::{Plan, RunPlan};

/// Which run, which trial, which probe.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct Round {
    /// The run's index in the plan.
    pub run: usize,
    /// Trial t (from 1) of n, when the run is repeated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<(u32, u32)>,
    /// A probe or canary of the run's capacity search (of the trial, when repeated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeRound>,
}

/// A capacity search's probe (or canary): its topics' suffix, its rate and its length.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct ProbeRound {
    /// The probe's number, from 1 (for a canary, the probe it follows).
    pub number: u32,
    /// What its topics and default group add to the run's names (`-p3`, `-p3c1`).
    pub suffix: String,
    /// Records per second.
    pub rate: f64,
    /// Its measured phase in seconds, when not the search's `probe`: a long probe's (`hold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secs: Option<f64>,
    /// Its time series' interval in seconds, when not the run's `--interval`: a long probe's
    /// is finer, so that the steady-state detector has the intervals it needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_secs: Option<f64>,
}

impl Round {
    /// The planned run `run` itself.
    pub(crate) fn of(run: usize) -> Round {
        Round {
            run,
            trial: None,
            probe: None,
        }
    }

    /// This round's probe (or canary) `probe`.
    pub(crate) fn probe(&self, probe: ProbeRound) -> Round {
        Round {
            probe: Some(probe),
            ..self.clone()
        }
    }

    /// The run plan of this round; None for a round `p` cannot have (a collector's message
    /// is untrusted input: another plan's run, a trial past the count, a rate that is not
    /// one, a suffix that is not a topic name's).
    pub(crate) fn plan(&self, p: &Plan) -> Option<RunPlan> {
        let base = p.runs.iter().find(|r| r.index == self.run)?;
        let rp = match self.trial {
            None => base.clone(),
            Some((t, n)) if (1..=n).contains(&t) => super::trials::trial_plan(base, t, n),
            Some(_) => return None,
        };
        let Some(probe) = &self.probe else {
            return Some(rp);
        };
        let c = rp.capacity.as_ref()?;
        let suffix_ok = !probe.suffix.is_empty()
            && probe.suffix.len() <= 24
            && probe
                .suffix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        let seconds =
            |s: Option<f64>| s.map_or(true, |s| s.is_finite() && s > 0.0 && s <= 86_400.0);
        if !(probe.rate.is_finite()
            && probe.rate > 0.0
            && suffix_ok
            && seconds(probe.secs)
            && seconds(probe.interval_secs))
        {
            return None;
        }
        Some(probe.plan(&rp, c))
    }
}

impl ProbeRound {
    /// Probe `number` at `rate`, or with `canary` n the nth canary after it.
    pub(crate) fn new(number: u32, canary: Option<u32>, rate: f64) -> ProbeRound {
        let suffix = match canary {
            Some(n) => format!("-p{number}c{n}"),
            None => format!("-p{number}"),
        };
        ProbeRound {
            number,
            suffix,
            rate,
            secs: None,
            interval_secs: None,
        }
    }

    /// The same probe measured for `length` with series intervals of `interval` (a long
    /// probe).
    pub(crate) fn long(self, length: Duration, interval: Duration) -> ProbeRound {
        ProbeRound {
            secs: Some(length.as_secs_f64()),
            interval_secs: Some(interval.as_secs_f64()),
            ..self
        }
    }

    /// Its measured phase: its own, or the search's `probe`.
    pub(crate) fn length(&self, c: &CapacitySearch) -> Duration {
        self.secs.map_or(c.probe, Duration::from_secs_f64)
    }

    /// Its run: `rp` (the searched run, or its trial) as one probe of search `c`.
    pub(crate) fn plan(&self, rp: &RunPlan, c: &CapacitySearch) -> RunPlan {
        probe_plan(rp, c, self.rate, self.length(c), &self.suffix)
    }
}

/// The run of one probe: the search's rate, the probe's length and the search's warm-up;
/// fresh topics (and a fresh default group), so no probe reads another's records; no faults.
fn probe_plan(
    rp: &RunPlan,
    c: &CapacitySearch,
    rate: f64,
    length: Duration,
    suffix: &str,
) -> RunPlan {
    let mut p = rp.clone();
    super::trials::fresh(&mut p, suffix);
    let w = &mut p.workload;
    w.rate = RateSpec::Fixed(rate);
    w.messages = None;
    w.duration = Some(length);
    w.warmup = (!c.warmup.is_zero()).then_some(Warmup::Duration(c.warmup));
    p.faults.clear();
    p.estimate = crate::plan::estimate(&p.workload);
    p.capacity = None;
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(file: &str) -> Plan {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let mut sources = crate::source::Sources::default();
        let scenario = crate::check::load(&path, &mut sources).expect("a valid fixture");
        crate::plan::plan(&scenario, &Default::default())
    }

    #[test]
    fn a_round_names_the_same_topics_for_every_participant_and_refuses_what_the_plan_lacks() {
        let p = plan_of("tests/fixtures/run/progress_two_steps.kbs");
        let plain = Round::of(1).plan(&p).expect("run 2 is planned");
        assert_eq!(plain.topics, p.runs[1].topics);
        let trial = Round {
            trial: Some((2, 3)),
            ..Round::of(1)
        };
        let t = trial.plan(&p).expect("trial 2 of 3");
        assert_eq!(t.topics[0], format!("{}-t2", p.runs[1].topics[0]));
        assert_eq!(trial.plan(&p).unwrap().topics, t.topics);
        for bad in [
            Round::of(7),
            Round {
                trial: Some((4, 3)),
                ..Round::of(0)
            },
            Round {
                trial: Some((0, 3)),
                ..Round::of(0)
            },
            // A probe of a run that is no capacity search.
            Round::of(0).probe(ProbeRound::new(1, None, 1000.0)),
        ] {
            assert!(bad.plan(&p).is_none(), "{bad:?}");
        }
        let text = serde_json::to_string(&trial).unwrap();
        assert_eq!(serde_json::from_str::<Round>(&text).unwrap(), trial);
    }

    #[test]
    fn a_probe_round_is_the_searchs_fixed_rate_run_and_refuses_a_rate_or_suffix_it_cannot_be() {
        let p = plan_of("tests/fixtures/results/capacity.kbs");
        let search = p.runs.iter().find(|r| r.capacity.is_some()).unwrap();
        let round = Round::of(search.index).probe(ProbeRound::new(3, None, 2500.0));
        let probe = round.plan(&p).expect("a probe of the search");
        assert!(probe.capacity.is_none());
        assert_eq!(probe.topics[0], format!("{}-p3", search.topics[0]));
        assert!(matches!(probe.workload.rate, crate::model::RateSpec::Fixed(r) if r == 2500.0));
        for (suffix, rate) in [
            ("-p3", f64::NAN),
            ("-p3", 0.0),
            ("-p3", -5.0),
            ("", 100.0),
            ("/../x", 100.0),
            ("-p3 x", 100.0),
        ] {
            let r = Round::of(search.index).probe(ProbeRound {
                suffix: suffix.into(),
                rate,
                ..ProbeRound::new(3, None, 1.0)
            });
            assert!(r.plan(&p).is_none(), "{suffix:?} at {rate}");
        }
        // A long probe: its own length, checked like the rest.
        let long = ProbeRound::new(4, None, 2500.0)
            .long(Duration::from_secs(60), Duration::from_millis(500));
        let plan = Round::of(search.index)
            .probe(long.clone())
            .plan(&p)
            .unwrap();
        assert_eq!(plan.workload.duration, Some(Duration::from_secs(60)));
        for secs in [f64::NAN, 0.0, -1.0, 1e9] {
            let bad = ProbeRound {
                secs: Some(secs),
                ..long.clone()
            };
            assert!(
                Round::of(search.index).probe(bad).plan(&p).is_none(),
                "{secs}"
            );
        }
    }
}
