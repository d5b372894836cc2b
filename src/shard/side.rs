//! A shard's side of a sharded run: it says hello, waits for the collector's topics and
//! start instants, and hands its results over the control topic (docs/distributed.md).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::control::{self, Control, Message, Phase};
use super::error::ShardError;
use super::policy;
use crate::measure::RunResult;
use crate::plan::Plan;
use crate::run::admin::Admin;
use crate::run::shard::Pending;
use crate::run::{blocking, Coordination, Next, RunError, Shard};
use crate::source::Sources;

/// What a shard needs to take part: who it is, what it runs, and its control connection
/// (shared by its clones: each blocking call on it takes one along).
#[derive(Clone)]
pub(crate) struct ShardRun {
    pub shard: Shard,
    /// The digest of the scenario and every file it reads; the collector refuses another.
    pub hash: String,
    /// How long this shard waits for the collector from its start, and again from each
    /// round the collector names (a repeated run or a search has more rounds than this
    /// shard's plan can tell: the collector's `--repeat` and the search decide).
    wait: Duration,
    /// No wait on the collector lasts past this instant.
    deadline: Arc<Mutex<Instant>>,
    /// This process's random id: its own ready messages are told from an earlier run's.
    session: u64,
    control: Arc<Mutex<Option<Control>>>,
    /// The round the collector named last (0 before the first).
    round: Arc<AtomicU32>,
}

/// What `run --shard` was given, besides the scenario.
pub(crate) struct ShardArgs<'a> {
    /// `I/N` as written after `--shard`.
    pub shard: &'a str,
    /// `JOB_COMPLETION_INDEX`, when set (a Kubernetes Indexed Job's pod).
    pub job_index: Option<&'a str>,
    pub run_id: bool,
    /// How many scenario files the command line names.
    pub files: usize,
    /// Whether `--only` selects runs.
    pub only: bool,
}

impl ShardRun {
    /// A shard's part in a sharded run, from `--shard` and the one scenario it runs (its
    /// sources, and its plan); or every reason it cannot take part.
    pub(crate) fn prepare(
        a: &ShardArgs,
        scenario: Option<(&Sources, &Plan)>,
    ) -> Result<ShardRun, Vec<String>> {
        let shard = policy::parse(a.shard, a.job_index)
            .map_err(|e| vec![format!("--shard {}: {e}", a.shard)])?;
        let mut errors = policy::arguments(a.run_id, a.files, a.only);
        let Some((sources, p)) = scenario else {
            return Err(errors);
        };
        errors.extend(policy::problems(p, shard.count));
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(ShardRun::new(
            shard,
            super::digest(sources, p),
            policy::shard_wait(p),
        ))
    }

    pub(crate) fn new(shard: Shard, hash: String, wait: Duration) -> ShardRun {
        ShardRun {
            shard,
            hash,
            wait,
            deadline: Arc::new(Mutex::new(Instant::now() + wait)),
            session: control::new_session(),
            control: Arc::new(Mutex::new(None)),
            round: Arc::new(AtomicU32::new(0)),
        }
    }

    fn deadline(&self) -> Instant {
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut Control) -> Result<T, ShardError>,
    ) -> Result<T, ShardError> {
        let mut guard = self.control.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_mut() {
            Some(c) => f(c),
            None => Err(ShardError::NotOpen),
        }
    }

    /// What ends any wait of this shard: the collector's abort or its refusal of this shard.
    fn fatal(&self) -> impl Fn(&Message) -> Option<ShardError> + '_ {
        move |m| match m {
            Message::Abort { reason, .. } => Some(ShardError::Aborted(reason.clone())),
            Message::Refused { shard, reason, .. } if *shard == self.shard.index => {
                Some(ShardError::Refused(reason.clone()))
            }
            _ => None,
        }
    }
}

/// The run stage meets the other shards through these.
impl Coordination for ShardRun {
    fn shard(&self) -> Shard {
        self.shard
    }

    fn join<'a>(
        &'a self,
        plan: &'a Plan,
        interrupt: &'a Arc<AtomicBool>,
    ) -> Pending<'a, Result<(), RunError>> {
        Box::pin(join(plan, self, interrupt))
    }

    fn next_round<'a>(
        &'a self,
        interrupt: &'a Arc<AtomicBool>,
    ) -> Pending<'a, Result<Next, RunError>> {
        Box::pin(next_round(self, interrupt))
    }

    fn fits(&self, partitions: i32) -> Result<(), RunError> {
        match policy::fits(self.shard.count, partitions) {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    fn barrier(&self, phase: Phase, stop: &dyn Fn() -> bool) -> Result<(), RunError> {
        Ok(barrier(self, phase, stop)?)
    }

    fn report<'a>(&'a self, r: &'a RunResult) -> Pending<'a, Result<(), RunError>> {
        Box::pin(report(self, r))
    }

    fn failed(&self, reason: String) -> Pending<'_, ()> {
        Box::pin(failed(self, reason))
    }
}

/// Opens the control topic (creating it when this shard is the first) and says hello.
async fn join(plan: &Plan, s: &ShardRun, interrupt: &Arc<AtomicBool>) -> Result<(), RunError> {
    let Some(first) = plan.runs.first() else {
        return Ok(());
    };
    let (props, bootstrap) = (first.admin.clone(), first.bootstrap.clone());
    let admin = blocking(move || Admin::connect(&props, &bootstrap))
        .await?
        .map_err(RunError::Unreachable)?;
    let control = tokio::select! {
        c = Control::open(&admin, &first.admin, &plan.run_id) => c?,
        _ = until_set(interrupt) => return Err(RunError::Interrupted),
    };
    *s.control.lock().unwrap_or_else(|e| e.into_inner()) = Some(control);
    let hello = Message::Hello {
        version: control::VERSION,
        session: s.session,
        shard: s.shard.index,
        shards: s.shard.count,
        hash: s.hash.clone(),
        scale: plan.scale,
        host: hostname(),
    };
    let s2 = s.clone();
    Ok(blocking(move || s2.with(|c| c.send(&hello))).await??)
}

/// Waits for the collector's next round (the one after the last it named), or its word that
/// the run is over. An abort between rounds ends this shard's part, which is whole: the
/// collector reports why the run stopped.
async fn next_round(s: &ShardRun, interrupt: &Arc<AtomicBool>) -> Result<Next, RunError> {
    let after = s.round.load(Ordering::SeqCst);
    let (s2, stop) = (s.clone(), interrupt.clone());
    let found = blocking(move || {
        let until = s2.deadline();
        let halt = || stop.load(Ordering::SeqCst);
        s2.with(|c| {
            c.wait_for(
                until,
                &halt,
                |m| match m {
                    Message::Topics { round, of, .. } if *round == after + 1 => {
                        Some(Next::Round(*round, of.clone()))
                    }
                    Message::Finished { .. } => Some(Next::Finished),
                    Message::Abort { reason, .. } if after > 0 => {
                        Some(Next::Stopped(reason.clone()))
                    }
                    _ => None,
                },
                |m| match m {
                    Message::Abort { .. } if after > 0 => None,
                    m => s2.fatal()(m),
                },
            )
        })
    })
    .await??;
    if interrupt.load(Ordering::SeqCst) {
        return Err(RunError::Interrupted);
    }
    let next = found.ok_or(ShardError::NoRound { round: after + 1 })?;
    if let Next::Round(round, _) = &next {
        s.round.store(*round, Ordering::SeqCst);
        *s.deadline.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now() + s.wait;
    }
    Ok(next)
}

/// The barrier before a phase, on the orchestrator's blocking thread: says this shard is
/// ready, waits for the agreed start and sleeps until it. Err: why the shard cannot go on.
fn barrier(s: &ShardRun, phase: Phase, stop: &dyn Fn() -> bool) -> Result<(), ShardError> {
    let round = s.round.load(Ordering::SeqCst);
    let ready = Message::Ready {
        session: s.session,
        shard: s.shard.index,
        round,
        phase,
    };
    s.with(|c| {
        c.send(&ready)?;
        // The start that answers this ready comes after it on the topic: a start read before
        // it is an earlier run's (a run id used again), never this one's.
        let mut sent = false;
        let at = c.wait_for(
            s.deadline(),
            stop,
            |m| match m {
                m if *m == ready => {
                    sent = true;
                    None
                }
                Message::Start {
                    round: r,
                    phase: p,
                    at_unix_ms,
                    ..
                } if sent && *r == round && *p == phase => Some(*at_unix_ms),
                _ => None,
            },
            s.fatal(),
        )?;
        let Some(at) = at else {
            return Err(if stop() {
                ShardError::InterruptedAtBarrier
            } else {
                ShardError::NoStart { round, phase }
            });
        };
        if control::sleep_until(at, stop) {
            Ok(())
        } else {
            Err(ShardError::InterruptedAtBarrier)
        }
    })
}

/// Hands this shard's result of the current round to the collector.
async fn report(s: &ShardRun, r: &RunResult) -> Result<(), RunError> {
    let (s2, r2) = (s.clone(), r.clone());
    let round = s.round.load(Ordering::SeqCst);
    Ok(
        blocking(move || s2.with(|c| c.send_result(s2.session, s2.shard.index, round, &r2)))
            .await??,
    )
}

/// Tells the collector this shard cannot go on (best effort: the collector's deadline
/// covers a shard that cannot even say so).
async fn failed(s: &ShardRun, reason: String) {
    let s2 = s.clone();
    let round = Some(s.round.load(Ordering::SeqCst)).filter(|r| *r > 0);
    let _ = blocking(move || {
        s2.with(|c| {
            c.send(&Message::Failed {
                session: s2.session,
                shard: s2.shard.index,
                round,
                reason,
            })
        })
    })
    .await;
}

async fn until_set(flag: &AtomicBool) {
    while !flag.load(Ordering::SeqCst) {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// This machine's name, for the collector's messages about a shard.
fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}
