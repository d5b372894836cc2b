//! The collector of a sharded run (`kafkabench collect`, docs/distributed.md): it creates
//! each run's topics, holds the two barriers, measures the disk once, gathers every shard's
//! result and deletes what it created. Merging and judging are the caller's.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::control::{self, Control, Message, Phase};
use super::error::ShardError;
use super::execution::{execution, Gathered, Part};
use super::letdown::{Letdown, Missed};
use crate::measure::RunResult;
use crate::plan::RunNo;
use crate::plan::{Plan, RunPlan};
use crate::run::admin::Admin;
use crate::run::topic::{self, Deleted, Disk, DELETE_BOUND};
use crate::run::{blocking, Execution, LiveTopic, RunError};

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

/// One planned run as collected: each reporting shard's result, and the disk measured once.
pub(crate) struct CollectedRun {
    pub index: usize,
    pub results: BTreeMap<u32, RunResult>,
    pub disk: Option<(Vec<u64>, u64)>,
}

/// Everything collected, and every shard that let the run down (with why).
#[derive(Default)]
pub(crate) struct Collected {
    pub runs: Vec<CollectedRun>,
    pub problems: BTreeMap<u32, Letdown>,
    pub notes: Vec<String>,
    pub interrupted: bool,
    /// The collector itself could not go on (the cluster, the control topic).
    pub error: Option<RunError>,
}

impl Collected {
    /// How many shards' results went into the last run collected.
    pub(crate) fn reported(&self) -> usize {
        self.runs.last().map_or(0, |r| r.results.len())
    }

    /// The merged execution: each collected run merged from the shards that reported it,
    /// with the collector's own disk measurement; every shard that let the run down makes it
    /// a failed run (exit 3) naming the shard.
    pub(crate) fn execution(self, p: &Plan) -> Execution {
        // The shards let down the last run collected; the collector's own error stopped it at
        // the run after that.
        let last = self.runs.last().map_or(0, |r| r.index);
        let error = self.error.map(|e| (self.runs.len(), e));
        let mut parts: BTreeMap<u32, Part> = BTreeMap::new();
        let part = |s: u32| Part {
            name: format!("shard {s}"),
            results: BTreeMap::new(),
            problem: None,
        };
        for (s, why) in self.problems {
            parts.entry(s).or_insert_with(|| part(s)).problem =
                Some((last, format!("shard {s} {why}")));
        }
        let mut disk = BTreeMap::new();
        for run in self.runs {
            for (s, r) in run.results {
                parts
                    .entry(s)
                    .or_insert_with(|| part(s))
                    .results
                    .insert(run.index, r);
            }
            disk.insert(run.index, run.disk);
        }
        let parts: Vec<Part> = parts.into_values().collect();
        execution(
            p,
            &parts,
            Gathered::Live { disk, error },
            self.notes,
            self.interrupted,
        )
        .expect("live results are merged, never refused")
    }
}

/// Runs the collector's side of every planned run.
pub(crate) async fn collect(
    plan: &Plan,
    o: &CollectOptions,
    interrupt: Arc<AtomicBool>,
) -> Collected {
    let mut out = Collected::default();
    let Some(first) = plan.runs.first() else {
        return out;
    };
    let (props, bootstrap) = (first.admin.clone(), first.bootstrap.clone());
    let admin = match blocking(move || Admin::connect(&props, &bootstrap)).await {
        Ok(Ok(a)) => Arc::new(a),
        Ok(Err(e)) => {
            out.error = Some(RunError::Unreachable(e));
            return out;
        }
        Err(e) => {
            out.error = Some(e.into());
            return out;
        }
    };
    let control = match Control::open(&admin, &first.admin, &plan.run_id).await {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e.into());
            return out;
        }
    };
    let control_topic = control.topic().to_string();
    let mut c = Coordinator {
        control,
        shards: Shards::new(o.shards, o.hash.clone(), plan.scale),
        deadline: o.deadline,
        interrupt: interrupt.clone(),
        say: o.say.clone(),
        session: control::new_session(),
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
            out.error = Some(why.into());
            return out;
        }
        Ok(_) => {}
        Err(e) => {
            out.error = Some(e.into());
            return out;
        }
    }
    for rp in &plan.runs {
        match collect_run(rp, o, &admin, &mut c, &mut out).await {
            Ok(run) => out.runs.push(run),
            Err(e) => {
                if matches!(e, RunError::Interrupted) {
                    out.interrupted = true;
                } else {
                    out.error = Some(e);
                }
                break;
            }
        }
        if !c.shards.problems.is_empty() {
            break;
        }
    }
    out.problems = std::mem::take(&mut c.shards.problems);
    if out.interrupted || out.error.is_some() || !out.problems.is_empty() {
        // Every shard still waiting stops now rather than at its own deadline.
        let reason = if out.interrupted {
            "the collector was interrupted".to_string()
        } else if let Some(e) = &out.error {
            e.to_string()
        } else {
            let named: Vec<String> = out.problems.keys().map(|s| format!("shard {s}")).collect();
            format!("{} let the run down", named.join(", "))
        };
        let control = &c.control;
        let _ = control.send(&Message::Abort {
            collector: c.session,
            reason,
        });
    }
    drop(c);
    if !o.keep_topics {
        let deleted = topic::delete(&admin, std::slice::from_ref(&control_topic)).await;
        if !matches!(deleted, Deleted::All) {
            out.notes.push(format!(
                "could not delete the control topic {control_topic}"
            ));
        }
    }
    out
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

    /// The barrier before `phase` of run `run`: every active shard ready, then one start.
    async fn barrier(&mut self, run: usize, phase: Phase) -> Result<bool, RunError> {
        let measure = phase == Phase::Measure;
        let met = self
            .until(move |s| s.active().all(|i| s.ready.contains(&(i, run, measure))))
            .await?;
        if !met {
            let why = match phase {
                Phase::Warmup => Missed::Ready(run),
                Phase::Measure => Missed::Warmup(run),
            };
            self.missing(|s, i| !s.ready.contains(&(i, run, measure)), why);
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
            run,
            phase,
            at_unix_ms: at,
        })?;
        Ok(true)
    }
}

/// One planned run: topics, the two barriers, results, disk, cleanup.
async fn collect_run(
    rp: &RunPlan,
    o: &CollectOptions,
    admin: &Arc<Admin>,
    c: &mut Coordinator,
    out: &mut Collected,
) -> Result<CollectedRun, RunError> {
    // The topics it created, deleted at the end: all of them, unless the cluster said which
    // it refused.
    let (partitions, created) = if rp.topic.existing {
        (
            topic::existing(admin, &rp.topic.name, &c.interrupt).await,
            Vec::new(),
        )
    } else {
        match topic::create(admin, rp, &o.live_topic, &c.interrupt).await {
            Ok(()) => (Ok(rp.topic.partitions), rp.topics.clone()),
            Err((e, delete)) => (Err(e), delete),
        }
    };
    let result = match partitions {
        Ok(partitions) => run_barriers(rp, partitions, admin, c).await,
        Err(e) => Err(e),
    };
    if !rp.topic.existing {
        if o.keep_topics {
            out.notes.push(format!(
                "run {}: topics kept (--keep-topics)",
                RunNo(rp.index)
            ));
        } else if !created.is_empty() {
            match topic::delete(admin, &created).await {
                Deleted::All => {}
                Deleted::Left(left) => out.notes.push(format!(
                    "run {}: could not delete {} of its topics ({})",
                    RunNo(rp.index),
                    left.len(),
                    left.iter()
                        .map(|(n, why)| format!("{n}: {why}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                Deleted::NoAnswer => out.notes.push(format!(
                    "run {}: could not delete its topics: no answer within {}s",
                    RunNo(rp.index),
                    DELETE_BOUND.as_secs()
                )),
            }
        }
        o.live_topic.set(None);
    }
    let disk = result?;
    let results = (0..o.shards)
        .filter_map(|s| Some((s, c.shards.results.remove(&(s, rp.index))?)))
        .collect();
    Ok(CollectedRun {
        index: rp.index,
        results,
        disk,
    })
}

/// From the topics' creation to the last result: the disk growth over the measured phase,
/// when it could be measured.
async fn run_barriers(
    rp: &RunPlan,
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
        run: rp.index,
    })?;
    if !c.barrier(rp.index, Phase::Warmup).await? {
        return Ok(None);
    }
    // The measured phase's barrier comes when every shard has warmed up: the disk's baseline
    // is taken then, once.
    let measure = rp.index;
    let met = c
        .until(move |s| s.active().all(|i| s.ready.contains(&(i, measure, true))))
        .await?;
    let disk = Disk::new(rp, &brokers, partitions);
    let d = disk.clone();
    let before = if met {
        blocking(move || d.bytes()).await?
    } else {
        Err(String::new())
    };
    if !c.barrier(rp.index, Phase::Measure).await? {
        return Ok(None);
    }
    let run = rp.index;
    c.say(format!(
        "run {}: waiting for the shards' results",
        RunNo(run)
    ));
    let all = c
        .until(move |s| s.active().all(|i| s.results.contains_key(&(i, run))))
        .await?;
    if !all {
        c.missing(
            |s, i| !s.results.contains_key(&(i, run)),
            Missed::Result(run),
        );
    }
    let after = blocking(move || disk.bytes()).await?;
    Ok(topic::growth(before, after).ok())
}
