//! A shard's side of a sharded run: it says hello, waits for the collector's topics and
//! start instants, and hands its results over the control topic (docs/distributed.md).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::control::{self, Control, Message, Phase};
use super::error::ShardError;
use super::policy;
use crate::measure::RunResult;
use crate::plan::Plan;
use crate::run::admin::Admin;
use crate::run::shard::Pending;
use crate::run::{blocking, Coordination, RunError, Shard};
use crate::source::Sources;

/// What a shard needs to take part: who it is, what it runs, and its control connection
/// (shared by its clones: each blocking call on it takes one along).
#[derive(Clone)]
pub(crate) struct ShardRun {
    pub shard: Shard,
    /// The digest of the scenario and every file it reads; the collector refuses another.
    pub hash: String,
    /// No wait on the collector lasts past this instant.
    pub deadline: Instant,
    /// This process's random id: its own ready messages are told from an earlier run's.
    session: u64,
    control: Arc<Mutex<Option<Control>>>,
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
            Instant::now() + policy::shard_wait(p),
        ))
    }

    pub(crate) fn new(shard: Shard, hash: String, deadline: Instant) -> ShardRun {
        ShardRun {
            shard,
            hash,
            deadline,
            session: control::new_session(),
            control: Arc::new(Mutex::new(None)),
        }
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

    fn topics_ready<'a>(
        &'a self,
        run: usize,
        interrupt: &'a Arc<AtomicBool>,
    ) -> Pending<'a, Result<(), RunError>> {
        Box::pin(topics_ready(self, run, interrupt))
    }

    fn fits(&self, partitions: i32) -> Result<(), RunError> {
        match policy::fits(self.shard.count, partitions) {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    fn barrier(&self, run: usize, phase: Phase, stop: &dyn Fn() -> bool) -> Result<(), RunError> {
        Ok(barrier(self, run, phase, stop)?)
    }

    fn report<'a>(&'a self, r: &'a RunResult) -> Pending<'a, Result<(), RunError>> {
        Box::pin(report(self, r))
    }

    fn failed(&self, run: Option<usize>, reason: String) -> Pending<'_, ()> {
        Box::pin(failed(self, run, reason))
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

/// Waits until the collector says run `run`'s topics exist.
async fn topics_ready(
    s: &ShardRun,
    run: usize,
    interrupt: &Arc<AtomicBool>,
) -> Result<(), RunError> {
    let (s2, stop) = (s.clone(), interrupt.clone());
    let found = blocking(move || {
        let until = s2.deadline;
        let halt = || stop.load(Ordering::SeqCst);
        s2.with(|c| {
            c.wait_for(
                until,
                &halt,
                |m| matches!(m, Message::Topics { run: r, .. } if *r == run).then_some(()),
                s2.fatal(),
            )
        })
    })
    .await??;
    if interrupt.load(Ordering::SeqCst) {
        return Err(RunError::Interrupted);
    }
    Ok(found.ok_or(ShardError::NoTopics { run })?)
}

/// The barrier before a phase, on the orchestrator's blocking thread: says this shard is
/// ready, waits for the agreed start and sleeps until it. Err: why the shard cannot go on.
fn barrier(
    s: &ShardRun,
    run: usize,
    phase: Phase,
    stop: &dyn Fn() -> bool,
) -> Result<(), ShardError> {
    let ready = Message::Ready {
        session: s.session,
        shard: s.shard.index,
        run,
        phase,
    };
    s.with(|c| {
        c.send(&ready)?;
        // The start that answers this ready comes after it on the topic: a start read before
        // it is an earlier run's (a run id used again), never this one's.
        let mut sent = false;
        let at = c.wait_for(
            s.deadline,
            stop,
            |m| match m {
                m if *m == ready => {
                    sent = true;
                    None
                }
                Message::Start {
                    run: r,
                    phase: p,
                    at_unix_ms,
                    ..
                } if sent && *r == run && *p == phase => Some(*at_unix_ms),
                _ => None,
            },
            s.fatal(),
        )?;
        let Some(at) = at else {
            return Err(if stop() {
                ShardError::InterruptedAtBarrier
            } else {
                ShardError::NoStart { run, phase }
            });
        };
        if control::sleep_until(at, stop) {
            Ok(())
        } else {
            Err(ShardError::InterruptedAtBarrier)
        }
    })
}

/// Hands this shard's result of a run to the collector.
async fn report(s: &ShardRun, r: &RunResult) -> Result<(), RunError> {
    let (s2, r2) = (s.clone(), r.clone());
    Ok(
        blocking(move || s2.with(|c| c.send_result(s2.session, s2.shard.index, r2.index, &r2)))
            .await??,
    )
}

/// Tells the collector this shard cannot go on (best effort: the collector's deadline
/// covers a shard that cannot even say so).
async fn failed(s: &ShardRun, run: Option<usize>, reason: String) {
    let s2 = s.clone();
    let _ = blocking(move || {
        s2.with(|c| {
            c.send(&Message::Failed {
                session: s2.session,
                shard: s2.shard.index,
                run,
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
