//! Live progress of `kafkabench run` on stderr, with an estimate of the time left: a bar per run
//! and an overall line on a terminal, a plain line every few seconds in a CI log.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::format::human_duration;
use crate::model::{RateSpec, Warmup};
use crate::plan::{Plan, RunPlan, Selection};
use crate::run::{Progress, ProgressPhase, ProgressSink};

/// How often a plain line is written when stderr is not a terminal.
const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// Setup between two runs (topic creation, connecting, leaders) before one has been seen.
const SETUP_GUESS_SECS: f64 = 2.0;

/// How long a run should take, warm-up included; None when it cannot be known beforehand (an
/// unlimited rate: it runs as fast as the cluster takes it).
fn planned_secs(run: &RunPlan) -> Option<f64> {
    run.estimate().total.map(|d| d.as_secs_f64())
}

/// What a run's bar counts: records when the workload is a count, time when it is a duration.
#[derive(Clone, Copy, Debug)]
enum Goal {
    Records { count: u64, rate: Option<f64> },
    Time(f64),
}

fn goal(run: &RunPlan) -> Option<Goal> {
    let w = &run.workload;
    if let Some(d) = w.duration.or(w.rate.total_duration()) {
        return Some(Goal::Time(d.as_secs_f64()));
    }
    let rate = match &w.rate {
        RateSpec::Fixed(r) => Some(*r),
        _ => None,
    };
    w.messages.map(|count| Goal::Records { count, rate })
}

fn warmup_secs(run: &RunPlan) -> f64 {
    match (&run.workload.warmup, &run.workload.rate) {
        (Some(Warmup::Duration(d)), _) => d.as_secs_f64(),
        (Some(Warmup::Auto { max }), _) => max.as_secs_f64(),
        (Some(Warmup::Messages(n)), RateSpec::Fixed(r)) if *r > 0.0 => *n as f64 / r,
        _ => 0.0,
    }
}

/// One planned run, as progress needs it.
struct Planned {
    goal: Option<Goal>,
    secs: Option<f64>,
    warmup: f64,
    messages: Option<u64>,
}

/// What has been seen so far.
#[derive(Default)]
struct State {
    /// The run (1-based) whose snapshots are arriving, and when its first one came.
    current: Option<(usize, Instant)>,
    bar: Option<ProgressBar>,
    /// When the last run finished, to measure the setup before the next.
    finished_at: Option<Instant>,
    /// Seconds of setup seen between runs (warm-up taken out).
    setups: Vec<f64>,
    /// Records per second of finished runs without a planned rate.
    unlimited_rates: Vec<f64>,
    last_plain: Option<Instant>,
}

/// Renders progress snapshots on stderr; `finish` clears what a terminal still shows.
pub(super) struct Live {
    planned: Vec<Planned>,
    /// The widest `run i/n label`, so the bars line up.
    prefix_width: usize,
    terminal: bool,
    multi: Option<MultiProgress>,
    overall: Option<ProgressBar>,
    state: Mutex<State>,
}

/// Progress on stderr: bars and an overall line on a terminal, else plain periodic lines.
pub(super) fn on_stderr(plan: &Plan, selection: &Selection, terminal: bool) -> Arc<Live> {
    // Indexed by the run's position among the selected runs, as progress numbers them.
    let planned = selection
        .runs(plan)
        .map(|r| Planned {
            goal: goal(r),
            secs: planned_secs(r),
            warmup: warmup_secs(r),
            messages: r.workload.messages,
        })
        .collect();
    let (multi, overall) = if terminal {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        let overall = multi.add(ProgressBar::new_spinner());
        overall.set_style(ProgressStyle::with_template("{msg}").expect("a valid template"));
        (Some(multi), Some(overall))
    } else {
        (None, None)
    };
    let n = selection.len();
    let prefix_width = selection
        .runs(plan)
        .enumerate()
        .map(|(k, r)| format!("run {}/{n} {}", k + 1, r.label).chars().count())
        .max()
        .unwrap_or(0);
    Arc::new(Live {
        planned,
        prefix_width,
        terminal,
        multi,
        overall,
        state: Mutex::new(State::default()),
    })
}

impl Live {
    pub(super) fn sink(self: &Arc<Self>) -> ProgressSink {
        let me = self.clone();
        Arc::new(move |p: &Progress| me.show(p))
    }

    /// After the last run (or an interruption): the overall line goes, the run bars stay.
    pub(super) fn finish(&self) {
        if let Some(o) = &self.overall {
            o.finish_and_clear();
        }
    }

    fn show(&self, p: &Progress) {
        // The bar starts with the measured phase, which its estimates are of.
        if p.phase == ProgressPhase::Warmup {
            return;
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let first = st.current.map(|(r, _)| r) != Some(p.run);
        if first {
            if let Some(done) = st.finished_at.take() {
                let warmup = self.planned.get(p.run - 1).map_or(0.0, |r| r.warmup);
                let gap = now.duration_since(done).as_secs_f64() - warmup;
                st.setups.push(gap.max(0.0));
            }
            st.current = Some((p.run, now));
            if let Some(multi) = &self.multi {
                let bar = multi.insert_from_back(1, ProgressBar::new(1000));
                bar.set_style(
                    ProgressStyle::with_template("{prefix} [{bar:30.cyan/blue}] {msg}")
                        .expect("a valid template")
                        .progress_chars("=> "),
                );
                let prefix = format!("run {}/{} {}", p.run, p.runs, p.label);
                bar.set_prefix(format!("{prefix:<0$}", self.prefix_width));
                st.bar = Some(bar);
            }
        }
        let planned = self.planned.get(p.run - 1);
        let goal = planned.and_then(|r| r.goal);
        let secs = p.elapsed.as_secs_f64();
        let rate = p.acked as f64 / secs.max(1e-3);
        if p.phase == ProgressPhase::Finished {
            st.finished_at = Some(now);
            if matches!(goal, Some(Goal::Records { rate: None, .. }) | None) && p.acked > 0 {
                st.unlimited_rates.push(rate);
            }
        }
        let left = self.time_left(&st, p, goal);
        let overall = match (p.phase, left) {
            (ProgressPhase::Finished, _) if p.run == p.runs => None,
            (_, Some((t, exact))) => Some(format!(
                "run {} of {}, {} {} left",
                p.run,
                p.runs,
                if exact { "about" } else { "at least" },
                human_left(t)
            )),
            (_, None) => Some(format!("run {} of {}, time left unknown", p.run, p.runs)),
        };
        let done = counts(p, goal, rate);
        if self.terminal {
            self.draw(&st, p, goal, &done, overall);
        } else {
            let due = st
                .last_plain
                .map_or(true, |t| now.duration_since(t) >= PLAIN_EVERY);
            if first || due || p.phase == ProgressPhase::Finished {
                st.last_plain = Some(now);
                plain(p, &done, overall.as_deref());
            }
        }
        if p.phase == ProgressPhase::Finished {
            st.bar = None;
        }
    }

    /// Seconds left in all, and whether every run could be estimated (else it is a floor).
    fn time_left(&self, st: &State, p: &Progress, goal: Option<Goal>) -> Option<(f64, bool)> {
        let secs = p.elapsed.as_secs_f64();
        let observed = (p.acked > 0).then(|| p.acked as f64 / secs.max(1e-3));
        let mut exact = true;
        let this = match (p.phase, goal) {
            (ProgressPhase::Producing, Some(Goal::Time(d))) => (d - secs).max(0.0),
            (ProgressPhase::Producing, Some(Goal::Records { count, rate })) => {
                match rate.or(observed) {
                    Some(r) if r > 0.0 => count.saturating_sub(p.acked) as f64 / r,
                    _ => {
                        exact = false;
                        0.0
                    }
                }
            }
            _ => 0.0,
        };
        let setup = if st.setups.is_empty() {
            SETUP_GUESS_SECS
        } else {
            st.setups.iter().sum::<f64>() / st.setups.len() as f64
        };
        // An unlimited run is estimated from the rate the unlimited runs so far achieved.
        let seen_rate = st.unlimited_rates.last().copied().or(matches!(
            goal,
            Some(Goal::Records { rate: None, .. })
        )
        .then_some(observed)
        .flatten());
        let mut later = 0.0;
        for r in self.planned.iter().skip(p.run) {
            let est = r
                .secs
                .or_else(|| Some(r.messages? as f64 / seen_rate.filter(|x| *x > 0.0)?));
            match est {
                Some(s) => later += s + setup,
                None => exact = false,
            }
        }
        let total = this + later;
        (exact || total > 0.0).then_some((total, exact))
    }

    fn draw(
        &self,
        st: &State,
        p: &Progress,
        goal: Option<Goal>,
        done: &str,
        overall: Option<String>,
    ) {
        if let Some(bar) = &st.bar {
            let frac = match goal {
                Some(Goal::Time(d)) => p.elapsed.as_secs_f64() / d.max(1e-3),
                Some(Goal::Records { count, .. }) => p.acked as f64 / count.max(1) as f64,
                None => 0.0,
            };
            let frac = if p.phase == ProgressPhase::Finished {
                1.0
            } else {
                frac
            };
            bar.set_position((frac.clamp(0.0, 1.0) * 1000.0) as u64);
            let msg = match p.phase {
                ProgressPhase::Producing | ProgressPhase::Warmup => done.to_string(),
                ProgressPhase::Draining => format!("{done}, draining"),
                ProgressPhase::Finished => format!("done: {done}"),
            };
            if p.phase == ProgressPhase::Finished {
                bar.finish_with_message(msg);
            } else {
                bar.set_message(msg);
            }
        }
        if let Some(o) = &self.overall {
            match overall {
                Some(m) => o.set_message(m),
                None => o.finish_and_clear(),
            }
        }
    }
}

/// `4100 of 10000 records, 2000 msg/s, 2.1s` or `12s of 30s, 24000 records, 2000 msg/s`.
fn counts(p: &Progress, goal: Option<Goal>, rate: f64) -> String {
    let secs = p.elapsed.as_secs_f64();
    let failed = if p.failed > 0 {
        format!(", {} failed", p.failed)
    } else {
        String::new()
    };
    let rate = format!("{rate:.0} msg/s");
    match goal {
        Some(Goal::Records { count, .. }) => format!(
            "{} of {count} records{failed}, {rate}, {}",
            p.acked,
            whole_secs(secs)
        ),
        Some(Goal::Time(d)) => format!(
            "{} of {}, {} records{failed}, {rate}",
            whole_secs(secs.min(d)),
            whole_secs(d),
            p.acked
        ),
        None => format!("{} records{failed}, {rate}, {}", p.acked, whole_secs(secs)),
    }
}

/// `12s`, `0s`: a counter that ticks by whole seconds; long ones as `human_duration` says them.
fn whole_secs(secs: f64) -> String {
    if secs < 120.0 {
        format!("{}s", secs.floor())
    } else {
        human_duration(secs)
    }
}

/// `2 min 10 s`, `45 s`: whole units, because an estimate is not more precise than that.
fn human_left(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} min", (s + 30) / 60),
    }
}

/// One line for a CI log: `progress: run 2 of 9 (linger=5ms) producing: 4100 of 10000 records, …`
fn plain(p: &Progress, done: &str, overall: Option<&str>) {
    let what = match p.phase {
        ProgressPhase::Warmup => "warming up",
        ProgressPhase::Producing => "producing",
        ProgressPhase::Draining => "draining",
        ProgressPhase::Finished => "done",
    };
    let left = overall
        .and_then(|o| o.split_once(", "))
        .map_or(String::new(), |(_, l)| format!("; {l}"));
    let _ = writeln!(
        std::io::stderr().lock(),
        "progress: run {} of {} ({}) {what}: {done}{left}",
        p.run,
        p.runs,
        p.label
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(fixture: &str) -> Plan {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
        let (_, scenario) = crate::cli::load(&path);
        crate::plan::plan(&scenario.expect("a valid fixture"), &Default::default())
    }

    #[test]
    fn a_paced_run_is_planned_from_its_count_or_duration_and_an_unlimited_one_is_unknown() {
        let p = plan_of("tests/fixtures/run/progress_two_steps.kbs");
        let secs: Vec<_> = p.runs.iter().map(planned_secs).collect();
        assert_eq!(
            secs,
            [Some(6.0), Some(3.0)],
            "3000 records at 500/s, then at 1000/s"
        );
        let p = plan_of("tests/fixtures/run/compare_linger_0.kbs");
        assert_eq!(planned_secs(&p.runs[0]), Some(3.0));
        let p = plan_of("tests/fixtures/run/bound_ok.kbs");
        assert_eq!(planned_secs(&p.runs[0]), None);
    }

    #[test]
    fn time_left_is_said_in_whole_units() {
        assert_eq!(human_left(4.4), "4 s");
        assert_eq!(human_left(130.0), "2 min 10 s");
        assert_eq!(human_left(1830.0), "31 min");
    }
}
