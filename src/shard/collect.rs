//! The collector of a sharded run (`kafkabench collect`, docs/distributed.md): it creates
//! each run's topics, holds the two barriers, measures the disk once, gathers every shard's
//! result and deletes what it created. Merging and judging are the caller's.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::control::{self, Control, Message, Phase};
use super::error::ShardError;
use super::letdown::{Letdown, Missed};
use crate::measure::merge::merge;
use crate::measure::series::Planned;
use crate::measure::status::Cause;
use crate::measure::{RunResult, RunStatus};
use crate::plan::{Plan, RunNo, RunPlan, Selection};
use crate::run::admin::Admin;
use crate::run::shard::Pending;
use crate::run::topic::{self, Deleted, Disk, DELETE_BOUND};
use crate::run::{
    self, blocking, Execution, LiveTopic, Position, Round, Rounds, RunError, RunFailure, RunOptions,
};

mod shards;

use shards::Shards;

pub(crate) struct CollectOptions {
    pub shards: u32,
    /// The digest of the scenario as the collector checked it: a shard with another is refused.
    pub hash: String,
    /// When the collector stops waiting for any shard.
    pub deadline: Instant,
    pub keep_topics: bool,
    pub live_topic: LiveTopic,
    /// Where the collector says what it is waiting for (a line per step), if anywhere.
    pub say: Option<Arc<dyn Fn(String) + Send + Sync>>,
}

/// What the collector ends with: every round the shards ran, merged and judged as one
/// machine's would be (trials combined, capacity searches decided), and how many shards
/// reported the last round.
pub(crate) struct Collected {
    pub execution: Execution,
    pub reported: usize,
}

/// Runs the collector's side of a sharded run: the run stage plans the rounds (every run,
/// every trial, every probe of a capacity search) and this collector carries each out on the
/// shards, handing back their recordings merged.
pub(crate) async fn collect(
    plan: &Plan,
    o: &CollectOptions,
    interrupt: Arc<AtomicBool>,
) -> Collected {
    let fail = |error: RunError| {
        let interrupted = matches!(error, RunError::Interrupted);
        Collected {
            execution: Execution {
                failure: plan
                    .runs
                    .first()
                    .filter(|_| !interrupted)
                    .map(|rp| RunFailure {
                        index: rp.index,
                        label: rp.label.clone(),
                        error,
                    }),
                interrupted,
                ..Execution::default()
            },
            reported: 0,
        }
    };
    let Some(first) = plan.runs.first() else {
        return fail(RunError::Interrupted);
    };
    let (props, bootstrap) = (first.admin.clone(), first.bootstrap.clone());
    let admin = match blocking(move || Admin::connect(&props, &bootstrap)).await {
        Ok(Ok(a)) => Arc::new(a),
        Ok(Err(e)) => return fail(RunError::Unreachable(e)),
        Err(e) => return fail(e.into()),
    };
    let control = match Control::open(&admin, &first.admin, &plan.run_id).await {
        Ok(c) => c,
        Err(e) => return fail(e.into()),
    };
    let control_topic = control.topic().to_string();
    let mut c = Coordinator {
        control,
        shards: Shards::new(o.shards, o.hash.clone(), plan.scale),
        deadline: o.deadline,
        interrupt: interrupt.clone(),
        say: o.say.clone(),
        session: control::new_session(),
        round: 0,
        reported: 0,
        environments: BTreeMap::new(),
    };
    // A run id used before whose control topic was left behind (a collector that was
    // killed): its messages would be taken for this run's.
    let stop = interrupt.clone();
    let earlier =
        tokio::task::block_in_place(|| c.control.catch_up(&|| stop.load(Ordering::SeqCst)));
    match earlier {
        Ok(msgs) if msgs.iter().any(|m| m.collector().is_some()) => {
            let why = ShardError::AnotherCollector {
                topic: control_topic.clone(),
                run_id: plan.run_id.clone(),
            };
            let _ = c.control.send(&Message::Abort {
                collector: c.session,
                reason: why.to_string(),
            });
            return fail(why.into());
        }
        Ok(_) => {}
        Err(e) => return fail(e.into()),
    }
    let collector = Arc::new(Collector {
        admin: admin.clone(),
        keep_topics: o.keep_topics,
        live_topic: o.live_topic.clone(),
        state: tokio::sync::Mutex::new(c),
    });
    let opts = RunOptions {
        keep_topics: o.keep_topics,
        live_topic: o.live_topic.clone(),
        rounds: Some(collector.clone()),
        ..RunOptions::default()
    };
    let mut exec = run::execute(plan, &Selection::all(plan), &opts, interrupt).await;
    // Many machines measured it: each is its shard's. The cluster is one, asked once by the
    // collector (its brokers' configs with it), and kept as an unsharded run keeps it.
    exec.environment = exec
        .environment
        .take()
        .map(|e| crate::measure::Environment { host: None, ..e });
    let c = collector.state.lock().await;
    exec.shard_environments = c.environments.values().cloned().collect();
    let reported = c.reported;
    let ended = if exec.interrupted {
        Some("the collector was interrupted".to_string())
    } else if let Some(f) = &exec.failure {
        Some(f.error.to_string())
    } else if !c.shards.problems.is_empty() {
        let named: Vec<String> = c
            .shards
            .problems
            .keys()
            .map(|s| format!("shard {s}"))
            .collect();
        Some(format!("{} let the run down", named.join(", ")))
    } else {
        None
    };
    // Every shard still waiting stops now rather than at its own deadline.
    let last = match ended {
        Some(reason) => Message::Abort {
            collector: c.session,
            reason,
        },
        None => Message::Finished {
            collector: c.session,
        },
    };
    let _ = c.control.send(&last);
    drop(c);
    if !o.keep_topics {
        let deleted = topic::delete(&admin, std::slice::from_ref(&control_topic)).await;
        if !matches!(deleted, Deleted::All) {
            exec.notes.push(format!(
                "could not delete the control topic {control_topic}"
            ));
        }
    }
    Collected {
        execution: exec,
        reported,
    }
}

/// The collector as the run stage sees it: each round it is asked for, carried out on every
/// shard.
struct Collector {
    admin: Arc<Admin>,
    keep_topics: bool,
    live_topic: LiveTopic,
    /// One round at a time: the run stage asks for them in order.
    state: tokio::sync::Mutex<Coordinator>,
}

impl Rounds for Collector {
    fn run<'a>(
        &'a self,
        rp: &'a RunPlan,
        round: &'a Round,
        _at: Position,
        _interrupt: &'a Arc<AtomicBool>,
        notes: &'a mut Vec<String>,
    ) -> Pending<'a, Result<RunResult, RunError>> {
        Box::pin(self.round(rp, round, notes))
    }
}

impl Collector {
    /// One round on every shard: topics, the two barriers, results, disk, cleanup; the
    /// shards' results merged. Shards that let it down fail it, naming each, with the
    /// others' figures kept.
    async fn round(
        &self,
        rp: &RunPlan,
        round: &Round,
        notes: &mut Vec<String>,
    ) -> Result<RunResult, RunError> {
        let mut c = self.state.lock().await;
        c.round += 1;
        let number = c.round;
        c.shards.rounds.insert(number, rp.index);
        let disk = self
            .topics_and_barriers(rp, number, round, &mut c, notes)
            .await;
        let results: Vec<(u32, RunResult)> = (0..c.shards.n)
            .filter_map(|s| Some((s, c.shards.results.remove(&(s, number))?)))
            .collect();
        c.reported = results.len();
        for (s, r) in &results {
            if let Some(e) = &r.environment {
                c.environments.entry(*s).or_insert_with(|| e.clone());
            }
        }
        let problems: Vec<String> = c
            .shards
            .problems
            .iter()
            .map(|(s, why)| format!("shard {s} {why}"))
            .collect();
        drop(c);
        let disk = disk?;
        if results.is_empty() {
            return Err(RunError::PartialShards(problems));
        }
        let refs: Vec<&RunResult> = results.iter().map(|(_, r)| r).collect();
        let mut m =
            merge(&refs, &Planned::of(&rp.workload)).map_err(|error| RunError::Unmerged {
                file: format!("shard {}", results[error.shard].0),
                error,
            })?;
        // The merge names a shard by its place among the results; the table by its number.
        if let Some(g) = m.generator.as_mut() {
            g.shard = g.shard.map(|k| results[k].0 as usize);
        }
        m.set_disk(
            disk.as_ref().map(|(each, _)| each.as_slice()),
            disk.as_ref().map(|(_, total)| *total),
        );
        if disk.is_none() {
            notes.push(format!("run {}: on-disk size unavailable", RunNo(rp.index)));
        }
        if !problems.is_empty() && m.status.is_complete() {
            m.status = RunStatus::Failed {
                cause: Cause::said(RunError::PartialShards(problems).to_string()),
            };
        }
        Ok(m)
    }

    /// The round's topics (created, or found), the round named to the shards, both barriers
    /// and every result; then its topics deleted. The disk growth over the measured phase,
    /// when it could be measured.
    async fn topics_and_barriers(
        &self,
        rp: &RunPlan,
        number: u32,
        round: &Round,
        c: &mut Coordinator,
        notes: &mut Vec<String>,
    ) -> Result<Option<(Vec<u64>, u64)>, RunError> {
        let admin = &self.admin;
        // The topics it created, deleted at the end: all of them, unless the cluster said
        // which it refused.
        let (partitions, created) = if rp.topic.existing {
            (
                topic::existing(admin, &rp.topic.name, &c.interrupt).await,
                Vec::new(),
            )
        } else {
            match topic::create(admin, rp, &self.live_topic, &c.interrupt).await {
                Ok(()) => (Ok(rp.topic.partitions), rp.topics.clone()),
                Err((e, delete)) => (Err(e), delete),
            }
        };
        let result = match partitions {
            Ok(partitions) => run_barriers(rp, number, round, partitions, admin, c).await,
            Err(e) => Err(e),
        };
        if !rp.topic.existing {
            if self.keep_topics {
                notes.push(format!(
                    "run {}: topics kept (--keep-topics)",
                    RunNo(rp.index)
                ));
            } else if !created.is_empty() {
                match topic::delete(admin, &created).await {
                    Deleted::All => {}
                    Deleted::Left(left) => notes.push(format!(
                        "run {}: could not delete {} of its topics ({})",
                        RunNo(rp.index),
                        left.len(),
                        left.iter()
                            .map(|(n, why)| format!("{n}: {why}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                    Deleted::NoAnswer => notes.push(format!(
                        "run {}: could not delete its topics: no answer within {}s",
                        RunNo(rp.index),
                        DELETE_BOUND.as_secs()
                    )),
                }
            }
            self.live_topic.set(None);
        }
        result
    }
}

/// The collector's control connection and what it knows.
struct Coordinator {
    control: Control,
    shards: Shards,
    deadline: Instant,
    interrupt: Arc<AtomicBool>,
    say: Option<Arc<dyn Fn(String) + Send + Sync>>,
    /// This collector's random id, on every message it writes.
    session: u64,
    /// The last round named (from 1).
    round: u32,
    /// How many shards' results went into the last round.
    reported: usize,
    /// Each shard's machine, as its first result said.
    environments: BTreeMap<u32, crate::measure::Environment>,
}

impl Coordinator {
    /// Reads the control topic until `done` holds for the shards (true), or the deadline
    /// (false). Refusals are sent as they are decided.
    async fn until(&mut self, done: impl Fn(&Shards) -> bool) -> Result<bool, RunError> {
        loop {
            for (shard, reason) in std::mem::take(&mut self.shards.refuse) {
                let _ = self.control.send(&Message::Refused {
                    collector: self.session,
                    shard,
                    reason: reason.to_string(),
                });
            }
            if done(&self.shards) {
                return Ok(true);
            }
            if self.interrupt.load(Ordering::SeqCst) {
                return Err(RunError::Interrupted);
            }
            if Instant::now() >= self.deadline {
                return Ok(false);
            }
            // Short reads on this thread: the runtime has nothing else to do meanwhile.
            let until = (Instant::now() + Duration::from_millis(200)).min(self.deadline);
            let stop = self.interrupt.clone();
            let m = tokio::task::block_in_place(|| {
                self.control.next(until, &|| stop.load(Ordering::SeqCst))
            })?;
            if let Some(m) = m {
                self.shards.take(m);
            }
        }
    }

    fn say(&self, line: String) {
        if let Some(say) = &self.say {
            say(line);
        }
    }

    /// Marks every active shard `missing` accepts as having let the run down: it missed `why`.
    fn missing(&mut self, missing: impl Fn(&Shards, u32) -> bool, why: Missed) {
        let late: Vec<u32> = self
            .shards
            .active()
            .filter(|s| missing(&self.shards, *s))
            .collect();
        for s in late {
            let host = self.shards.hello.get(&s).map(|(h, _)| h.clone());
            self.shards
                .problems
                .insert(s, Letdown::Missed { missed: why, host });
        }
    }

    /// The barrier before `phase` of round `round` (of run `run`): every active shard ready,
    /// then one start.
    async fn barrier(&mut self, run: usize, round: u32, phase: Phase) -> Result<bool, RunError> {
        let measure = phase == Phase::Measure;
        let met = self
            .until(move |s| s.active().all(|i| s.ready.contains(&(i, round, measure))))
            .await?;
        if !met {
            let why = match phase {
                Phase::Warmup => Missed::Ready(run),
                Phase::Measure => Missed::Warmup(run),
            };
            self.missing(|s, i| !s.ready.contains(&(i, round, measure)), why);
            return Ok(false);
        }
        if self.shards.active().next().is_none() {
            return Ok(false);
        }
        let at = control::unix_ms() + control::START_LEAD.as_millis() as u64;
        let n = self.shards.active().count();
        self.say(match phase {
            Phase::Warmup => format!("run {}: {n} shards ready; starting", RunNo(run)),
            Phase::Measure => format!(
                "run {}: {n} shards warmed up; the measured phase starts",
                RunNo(run)
            ),
        });
        self.control.send(&Message::Start {
            collector: self.session,
            round,
            phase,
            at_unix_ms: at,
        })?;
        Ok(true)
    }
}

/// From the topics' creation to the last result: the disk growth over the measured phase,
/// when it could be measured.
async fn run_barriers(
    rp: &RunPlan,
    round: u32,
    of: &Round,
    partitions: i32,
    admin: &Arc<Admin>,
    c: &mut Coordinator,
) -> Result<Option<(Vec<u64>, u64)>, RunError> {
    topic::leaders(admin, rp, partitions, &c.interrupt).await?;
    let brokers = {
        let a = admin.clone();
        blocking(move || a.brokers())
            .await?
            .map_err(RunError::Unreachable)?
    };
    c.control.send(&Message::Topics {
        collector: c.session,
        round,
        of: of.clone(),
    })?;
    if !c.barrier(rp.index, round, Phase::Warmup).await? {
        return Ok(None);
    }
    // The measured phase's barrier comes when every shard has warmed up: the disk's baseline
    // is taken then, once.
    let met = c
        .until(move |s| s.active().all(|i| s.ready.contains(&(i, round, true))))
        .await?;
    let disk = Disk::new(rp, &brokers, partitions);
    let d = disk.clone();
    let before = if met {
        blocking(move || d.bytes()).await?
    } else {
        Err(String::new())
    };
    if !c.barrier(rp.index, round, Phase::Measure).await? {
        return Ok(None);
    }
    c.say(format!(
        "run {}: waiting for the shards' results",
        RunNo(rp.index)
    ));
    let all = c
        .until(move |s| s.active().all(|i| s.results.contains_key(&(i, round))))
        .await?;
    if !all {
        let run = rp.index;
        c.missing(
            |s, i| !s.results.contains_key(&(i, round)),
            Missed::Result(run),
        );
    }
    let after = blocking(move || disk.bytes()).await?;
    Ok(topic::growth(before, after).ok())
}
