//! A shard's side of a sharded run: it says hello, waits for the collector's topics and
//! start instants, and hands its results over the control topic (docs/distributed.md).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::admin::Admin;
use super::control::{self, Control, Message, Phase};
use super::error::RunError;
use super::lifecycle::blocking;
use super::shard::Shard;
use crate::measure::RunResult;
use crate::plan::Plan;

/// What a shard needs to take part: who it is, what it runs, and its control connection.
pub struct ShardRun {
    pub shard: Shard,
    /// The digest of the scenario and every file it reads; the collector refuses another.
    pub hash: String,
    /// No wait on the collector lasts past this instant.
    pub deadline: Instant,
    /// This process's random id: its own ready messages are told from an earlier run's.
    session: u64,
    control: Mutex<Option<Control>>,
}

impl ShardRun {
    pub fn new(shard: Shard, hash: String, deadline: Instant) -> ShardRun {
        ShardRun {
            shard,
            hash,
            deadline,
            session: control::new_session(),
            control: Mutex::new(None),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Control) -> Result<T, String>) -> Result<T, String> {
        let mut guard = self.control.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_mut() {
            Some(c) => f(c),
            None => Err("the control topic is not open".into()),
        }
    }

    /// What ends any wait of this shard: the collector's abort or its refusal of this shard.
    fn fatal(&self) -> impl Fn(&Message) -> Option<String> + '_ {
        move |m| match m {
            Message::Abort { reason, .. } => {
                Some(format!("the collector stopped the run: {reason}"))
            }
            Message::Refused { shard, reason, .. } if *shard == self.shard.index => {
                Some(format!("the collector refused this shard: {reason}"))
            }
            _ => None,
        }
    }
}

/// Opens the control topic (creating it when this shard is the first) and says hello.
pub async fn join(
    plan: &Plan,
    s: &Arc<ShardRun>,
    interrupt: &Arc<AtomicBool>,
) -> Result<(), RunError> {
    let Some(first) = plan.runs.first() else {
        return Ok(());
    };
    let (props, bootstrap) = (first.admin.clone(), first.bootstrap.clone());
    let admin = blocking(move || Admin::connect(&props, &bootstrap))
        .await?
        .map_err(RunError::Unreachable)?;
    let control = tokio::select! {
        c = Control::open(&admin, &first.admin, &plan.run_id) => c.map_err(RunError::Coordination)?,
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
    blocking(move || s2.with(|c| c.send(&hello)))
        .await?
        .map_err(RunError::Coordination)
}

/// Waits until the collector says run `run`'s topics exist.
pub async fn topics_ready(
    s: &Arc<ShardRun>,
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
    .await?
    .map_err(RunError::Coordination)?;
    if interrupt.load(Ordering::SeqCst) {
        return Err(RunError::Interrupted);
    }
    found.ok_or_else(|| {
        RunError::Coordination(format!(
            "the collector did not create run {}'s topics in time (is `kafkabench collect` \
             running with this --run-id?)",
            run + 1
        ))
    })
}

/// The barrier before a phase, on the orchestrator's blocking thread: says this shard is
/// ready, waits for the agreed start and sleeps until it. Err: why the shard cannot go on.
pub fn barrier(
    s: &ShardRun,
    run: usize,
    phase: Phase,
    stop: &dyn Fn() -> bool,
) -> Result<(), String> {
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
                "interrupted at the barrier".into()
            } else {
                format!(
                    "no start from the collector before the deadline (run {}, {})",
                    run + 1,
                    match phase {
                        Phase::Warmup => "before warm-up",
                        Phase::Measure => "before the measured phase",
                    }
                )
            });
        };
        if control::sleep_until(at, stop) {
            Ok(())
        } else {
            Err("interrupted at the barrier".into())
        }
    })
}

/// Hands this shard's result of a run to the collector.
pub async fn report(s: &Arc<ShardRun>, r: &RunResult) -> Result<(), RunError> {
    let (s2, r2) = (s.clone(), r.clone());
    blocking(move || s2.with(|c| c.send_result(s2.session, s2.shard.index, r2.index, &r2)))
        .await?
        .map_err(RunError::Coordination)
}

/// Tells the collector this shard cannot go on (best effort: the collector's deadline
/// covers a shard that cannot even say so).
pub async fn failed(s: &Arc<ShardRun>, run: Option<usize>, reason: String) {
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
pub fn hostname() -> String {
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
