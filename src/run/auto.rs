//! `repeat = auto(±5%, max 20)` while the trials run: after each trial of a run, at the looks
//! of `measure::sequential`, whether the run has its answer; then its trials combined with
//! intervals at the looks' level and what it reached.

use crate::measure::sequential;
use crate::measure::RunResult;
use crate::model::Metric;
use crate::plan::{Plan, RunPlan};

/// `repeat = auto`: each run's judged figures, its looks, and why it stopped.
pub(super) struct Auto {
    rule: crate::model::AutoRepeat,
    schedule: sequential::Schedule,
    /// Per run (by position in the selection): the figures judged.
    judged: Vec<Vec<(&'static str, Metric)>>,
    /// The widest extent at the run's last look.
    widest: Vec<Option<f64>>,
    pub(super) stopped: Vec<Option<sequential::Stop>>,
}

impl Auto {
    pub(super) fn new(rule: crate::model::AutoRepeat, plan: &Plan, runs: &[&RunPlan]) -> Auto {
        let judged = runs
            .iter()
            .map(|rp| sequential::judged(&plan.metrics_read(rp.index), rp.capacity.is_some()).0)
            .collect();
        Auto::judging(rule, judged)
    }

    fn judging(rule: crate::model::AutoRepeat, judged: Vec<Vec<(&'static str, Metric)>>) -> Auto {
        let runs = judged.len();
        Auto {
            rule,
            schedule: sequential::schedule(rule.max, crate::measure::trials::LEVEL),
            judged,
            widest: vec![None; runs],
            stopped: vec![None; runs],
        }
    }

    /// After a trial of run `k`: at a look, whether it has its answer.
    pub(super) fn look(&mut self, k: usize, done: &[RunResult]) {
        let mut values: Vec<Vec<f64>> = self.judged[k]
            .iter()
            .map(|(_, m)| done.iter().filter_map(|r| r.own_metric(*m)).collect())
            .filter(|v: &Vec<f64>| !v.is_empty())
            .collect();
        if values.is_empty() {
            // None of the judged figures was measured in this run: its throughput is judged.
            values.push(done.iter().map(|r| r.throughput_msgs).collect());
        }
        let n = done.len() as u32;
        if let Some(l) = self
            .schedule
            .look(n, self.rule.within, values.iter().map(Vec::as_slice))
        {
            self.widest[k] = l.widest;
            self.stopped[k] = l.stop;
        }
    }

    /// Run `k` made of its trials, its intervals at the looks' level, with what it reached.
    pub(super) fn combine(&self, k: usize, done: Vec<RunResult>) -> RunResult {
        let mut r = crate::measure::trials::combine_at(done, self.schedule.look_level);
        if let Some(t) = r.trials.as_mut() {
            t.auto = Some(sequential::AutoOutcome {
                within: self.rule.within,
                max: self.rule.max,
                level: self.schedule.level,
                look_level: self.schedule.look_level,
                looks: self.schedule.looks.clone(),
                figures: self.judged[k].iter().map(|(n, _)| n.to_string()).collect(),
                reached: self.widest[k],
                stop: self.stopped[k].unwrap_or(sequential::Stop::Cut),
            });
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::sequential::Stop;
    use crate::model::AutoRepeat;

    fn trial(throughput: f64) -> RunResult {
        RunResult {
            throughput_msgs: throughput,
            ..RunResult::default()
        }
    }

    /// Two runs in rounds: the quiet one has its answer at the first look and leaves; the noisy
    /// one goes on to `max`. Each result says how many trials ran and why they stopped.
    #[test]
    fn a_quiet_run_stops_at_the_first_look_and_a_noisy_one_goes_on_to_max() {
        let judged = vec![vec![("throughput", Metric::Throughput)]; 2];
        let mut auto = Auto::judging(AutoRepeat::DEFAULT, judged);
        let mut done: [Vec<RunResult>; 2] = [Vec::new(), Vec::new()];
        for t in 0..AutoRepeat::DEFAULT.max {
            for (k, d) in done.iter_mut().enumerate() {
                if auto.stopped[k].is_some() {
                    continue;
                }
                // ±0.5 % against ±30 %, alternating about 1000.
                let wobble = if t % 2 == 0 { 1.0 } else { -1.0 } * f64::from(t % 5);
                let x = 1000.0 + wobble * if k == 0 { 1.0 } else { 60.0 };
                d.push(trial(x));
                auto.look(k, d);
            }
        }
        assert_eq!(done[0].len(), 8);
        assert_eq!(done[1].len(), 20);
        assert_eq!(auto.stopped, [Some(Stop::Reached), Some(Stop::Max)]);
        let [quiet, noisy] = done;
        let quiet = auto.combine(0, quiet);
        let a = quiet.trials.as_ref().unwrap().auto.as_ref().unwrap();
        assert_eq!(
            (a.stop, a.looks.as_slice()),
            (Stop::Reached, &[8, 10, 12, 16, 20][..])
        );
        assert!(a.reached.unwrap() <= 0.05);
        assert_eq!(a.figures, ["throughput"]);
        let noisy = auto.combine(1, noisy);
        let t = noisy.trials.as_ref().unwrap();
        let a = t.auto.as_ref().unwrap();
        assert_eq!(a.stop, Stop::Max);
        assert!(a.reached.unwrap() > 0.05);
        // The interval shown is the look's (99 %), not the plain 95 % one.
        let f = t.figures.iter().find(|f| f.metric == "throughput").unwrap();
        assert!(f.coverage >= a.look_level, "{}", f.coverage);
    }

    /// A run where none of the judged figures was measured is judged by its throughput; one
    /// cut short before any stop says so.
    #[test]
    fn an_unmeasured_figure_falls_back_to_throughput_and_a_cut_run_says_so() {
        let judged = vec![vec![(
            "e2e.p99",
            Metric::Latency(
                crate::model::LatencyKind::E2e,
                crate::model::Stat::Percentile(99.0),
            ),
        )]];
        let mut auto = Auto::judging(AutoRepeat::DEFAULT, judged.clone());
        let done: Vec<RunResult> = (0..8).map(|_| trial(500.0)).collect();
        auto.look(0, &done);
        assert_eq!(auto.stopped[0], Some(Stop::Reached));
        let mut auto = Auto::judging(AutoRepeat::DEFAULT, judged);
        let cut = auto.combine(0, done[..3].to_vec());
        let a = cut.trials.as_ref().unwrap().auto.as_ref().unwrap();
        assert_eq!((a.stop, a.reached), (Stop::Cut, None));
        auto.look(0, &done[..3]);
        assert_eq!(auto.stopped[0], None);
    }
}
