//! The fault executor: fires a run's fault timeline on the measured phase's clock, records each
//! action as it happened, and undoes every fault on every exit path kafkabench can observe.
//!
//! Undoing, by exit path: the end of the measured phase, an interrupt and a lost cluster are
//! seen by each action's task, which undoes its fault at once (a paused broker would otherwise
//! hold the producers' final flush to its timeout); an error or a panic drops [`Running`],
//! which undoes synchronously; a second signal ends the process through
//! [`LiveFaults::undo_now`], synchronous too. Each undo is registered before its fault is
//! applied, so no path can miss one. Only SIGKILL of kafkabench escapes: `scripts/kafka-local
//! status` then shows the paused or stopped nodes, and `scripts/kafka-local up` repairs them.

mod capture;
mod error;
pub(crate) mod local;
mod undo;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

pub(crate) use error::{FaultError, Problems};
pub(crate) use local::{local_cluster, LocalCluster};
pub(crate) use undo::LiveFaults;
use undo::Undo;

use super::blocking::blocking;
use super::shared::Shared;
use crate::measure::FaultRecord;
use crate::model::{BrokerTarget, Fault, FaultAction};
use crate::plan::RunNo;
use crate::plan::{Plan, RunPlan};

mod command;
mod meta;

use meta::Meta;

/// How often a waiting action looks at the run's flags.
const POLL: Duration = Duration::from_millis(50);
/// How long the brokers a timeline restarted get to be listed by the cluster again, so the
/// next run starts on a whole cluster.
const REJOIN_BOUND: Duration = Duration::from_secs(45);

/// The faults of one run, ready to fire: the cluster found, the targets checked.
pub(crate) struct Timeline {
    faults: Vec<Fault>,
    ctx: Arc<Ctx>,
}

/// What every action of a run needs.
struct Ctx {
    cluster: Option<Arc<LocalCluster>>,
    /// None only in tests without a cluster.
    meta: Option<Meta>,
    topic: String,
    bootstrap: String,
    label: String,
    live: LiveFaults,
    /// The planned end of sending (a `duration` run), or the records to send (`messages`).
    ends_at: Option<Duration>,
    messages: Option<u64>,
}

/// Whether an action acts on a broker of a kafka-local cluster.
fn builtin(a: &FaultAction) -> Option<&BrokerTarget> {
    match a {
        FaultAction::Kill(t) | FaultAction::Pause(t) | FaultAction::Restart(t) => Some(t),
        FaultAction::Run(_) | FaultAction::StopConsumer(_) | FaultAction::DeleteRecords { .. } => {
            None
        }
    }
}

/// The runs' fault timelines.
fn timeline(rp: &RunPlan) -> &[Fault] {
    &rp.faults
}

/// What stands in the way of a plan's built-in fault actions, before anything runs: each run
/// that kills, pauses or restarts a broker needs a kafka-local cluster at its bootstrap
/// servers, with that broker among its nodes, running.
pub(crate) fn preflight(plan: &Plan) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: Vec<(String, Result<LocalCluster, FaultError>)> = Vec::new();
    for rp in &plan.runs {
        if !timeline(rp).iter().any(|f| builtin(&f.action).is_some()) {
            continue;
        }
        if !seen.iter().any(|(b, _)| *b == rp.bootstrap) {
            seen.push((rp.bootstrap.clone(), local_cluster(&rp.bootstrap)));
        }
        let cluster = &seen
            .iter()
            .find(|(b, _)| *b == rp.bootstrap)
            .expect("seen")
            .1;
        for p in targets_problems(timeline(rp), cluster) {
            let line = format!("run {} ({}): {p}", RunNo(rp.index), rp.label);
            if !problems.contains(&line) {
                problems.push(line);
            }
        }
    }
    problems
}

/// Why the built-in actions of `faults` cannot act on `cluster`.
fn targets_problems(
    faults: &[Fault],
    cluster: &Result<LocalCluster, FaultError>,
) -> Vec<FaultError> {
    let c = match cluster {
        Ok(c) => c,
        Err(e) => return vec![e.clone()],
    };
    let mut v = Vec::new();
    if let Some(n) = c.nodes.iter().find(|n| n.state != "running") {
        v.push(FaultError::NodeNotRunning {
            id: n.id,
            home: c.home.clone(),
            state: n.state.clone(),
        });
    }
    for f in faults {
        if let Some(BrokerTarget::Id(id)) = builtin(&f.action) {
            if let Err(e) = c.node(*id) {
                v.push(FaultError::Action {
                    text: f.text.clone(),
                    cause: Box::new(e),
                });
            }
        }
    }
    v
}

/// Finds the run's cluster and checks the timeline's targets; None for a run without faults.
/// Called before the clock starts: a timeline that cannot run fails the run before it measures.
pub(crate) async fn prepare(rp: &RunPlan, live: &LiveFaults) -> Result<Option<Timeline>, Problems> {
    let faults = timeline(rp).to_vec();
    if faults.is_empty() {
        return Ok(None);
    }
    let needs_cluster = faults.iter().any(|f| builtin(&f.action).is_some());
    let bootstrap = rp.bootstrap.clone();
    let admin = rp.admin.clone();
    let (cluster, meta) = blocking(move || {
        let cluster = local_cluster(&bootstrap);
        let meta = Meta::connect(&admin, &bootstrap);
        (cluster, meta)
    })
    .await
    .map_err(|e| Problems(vec![task(e)]))?;
    let cluster = if needs_cluster {
        let problems = targets_problems(&faults, &cluster);
        if !problems.is_empty() {
            return Err(Problems(problems));
        }
        Some(Arc::new(cluster.map_err(Problems::from)?))
    } else {
        // `run` works anywhere; on a kafka-local cluster its commands also get its home.
        cluster.ok().map(Arc::new)
    };
    Ok(Some(Timeline {
        faults,
        ctx: Arc::new(Ctx {
            cluster,
            meta: Some(meta.map_err(Problems::from)?),
            topic: rp.topic.name.clone(),
            bootstrap: rp.bootstrap.clone(),
            label: rp.label.clone(),
            live: live.clone(),
            ends_at: rp.workload.duration,
            messages: rp.workload.messages,
        }),
    }))
}

/// A timeline firing. [`Running::finish`] ends it; dropped unfinished (an error, a panic), it
/// undoes every fault in force before it goes.
pub(crate) struct Running {
    tasks: Vec<JoinHandle<FaultRecord>>,
    end: watch::Sender<bool>,
    ctx: Arc<Ctx>,
    shared: Arc<Shared>,
    finished: bool,
}

impl Timeline {
    /// The consumers stopped from the first instant (`at 0s stop consumer N`), as a mask of
    /// `Shared::consumer_stopped`: set before the clock starts, so such a consumer reads no
    /// record of the measured phase before it leaves its group (the task that fires at 0s would
    /// race the first records).
    pub(crate) fn consumers_stopped_at_start(&self) -> u64 {
        self.faults
            .iter()
            .filter(|f| f.at.is_zero())
            .filter_map(|f| match f.action {
                FaultAction::StopConsumer(i) => Some(1u64 << i.min(63)),
                _ => None,
            })
            .fold(0, |m, b| m | b)
    }

    /// Fires each action at its time from the measured phase's start (`shared`'s origin).
    pub(crate) fn start(self, shared: Arc<Shared>) -> Running {
        let origin = shared.t0 + Duration::from_nanos(shared.measure_origin());
        let (end, rx) = watch::channel(false);
        let tasks = self
            .faults
            .into_iter()
            .map(|f| {
                let clock = Clock {
                    origin,
                    shared: shared.clone(),
                    end: rx.clone(),
                    ctx: self.ctx.clone(),
                };
                tokio::spawn(fire(f, clock))
            })
            .collect();
        Running {
            tasks,
            end,
            ctx: self.ctx,
            shared,
            finished: false,
        }
    }
}

impl Running {
    /// Ends the timeline (every fault still in force is undone), waits until the brokers it
    /// restarted are back in the cluster, and hands back what each action did, in timeline
    /// order, and what is left to tell the user (an undo that failed).
    pub(crate) async fn finish(mut self) -> (Vec<FaultRecord>, Vec<String>) {
        let _ = self.end.send(true);
        let mut records = Vec::new();
        for t in std::mem::take(&mut self.tasks) {
            records.push(t.await.unwrap_or_else(|e| FaultRecord {
                outcome: format!("failed: the action's task ended early ({e})"),
                ..FaultRecord::default()
            }));
        }
        let mut notes = Vec::new();
        // Nothing should be left (each task undoes its own), but nothing may be.
        for line in self.ctx.live.undo_now() {
            notes.push(format!("fault left in force, undone at the end: {line}"));
        }
        if let Some(c) = &self.ctx.cluster {
            if !self.shared.interrupted() {
                if let Err(e) = self.rejoined(c.clone()).await {
                    notes.push(e.to_string());
                }
            }
        }
        for r in &records {
            if r.outcome.contains("not undone") {
                notes.push(format!(
                    "`{}`: {}; `scripts/kafka-local up` repairs the cluster",
                    r.action, r.outcome
                ));
            }
        }
        self.finished = true;
        (records, notes)
    }

    /// Waits until the cluster lists as many brokers as the kafka-local cluster has nodes.
    async fn rejoined(&self, c: Arc<LocalCluster>) -> Result<(), FaultError> {
        let want = c.nodes.len();
        let deadline = Instant::now() + REJOIN_BOUND;
        loop {
            let ctx = self.ctx.clone();
            let seen = blocking(move || ctx.meta.as_ref().map_or(Ok(want), Meta::broker_count))
                .await
                .map_err(task)??;
            if seen >= want || self.shared.interrupted() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(FaultError::NotRejoined {
                    seen,
                    want,
                    after: REJOIN_BOUND,
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        for t in &self.tasks {
            t.abort();
        }
        // Synchronous on purpose: this runs on an error's or a panic's way out.
        self.ctx.live.undo_now();
    }
}

/// An action's view of time: the measured phase's origin, and whether the phase is over.
struct Clock {
    origin: Instant,
    shared: Arc<Shared>,
    end: watch::Receiver<bool>,
    ctx: Arc<Ctx>,
}

impl Clock {
    fn secs(&self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }

    /// The measured phase is over: ended by the orchestrator, its planned length or count
    /// reached, an interrupt, or the cluster lost.
    fn over(&self) -> bool {
        *self.end.borrow()
            || self.shared.stopping()
            || self.ctx.ends_at.is_some_and(|d| self.origin.elapsed() >= d)
            || self
                .ctx
                .messages
                .is_some_and(|m| self.shared.sent.load(Ordering::Relaxed) >= m)
    }

    /// Waits until `offset` from the origin (true), or until the phase is over (false);
    /// `None` waits for the end of the phase.
    async fn until(&self, offset: Option<Duration>) -> bool {
        loop {
            if self.over() {
                return false;
            }
            let left = offset.map(|o| (self.origin + o).saturating_duration_since(Instant::now()));
            if left == Some(Duration::ZERO) {
                return true;
            }
            tokio::time::sleep(left.map_or(POLL, |l| l.min(POLL))).await;
        }
    }
}

/// One action: waits for its time, applies it, waits for its end, undoes it.
async fn fire(f: Fault, clock: Clock) -> FaultRecord {
    let mut rec = FaultRecord {
        action: f.text.clone(),
        at_secs: f.at.as_secs_f64(),
        ..FaultRecord::default()
    };
    if !clock.until(Some(f.at)).await {
        rec.outcome = format!(
            "not fired: the measured phase ended at {:.1}s",
            clock.secs()
        );
        return rec;
    }
    let ctx = clock.ctx.clone();
    match &f.action {
        FaultAction::Run(cmd) => {
            command::run(cmd, &f, &clock, &mut rec).await;
            return rec;
        }
        FaultAction::StopConsumer(i) => {
            rec.target = Some(format!("consumer {}", i + 1));
            rec.consumer = Some(i + 1);
            let bit = 1u64 << (*i).min(63);
            // Stopped from the first instant: it left before the clock, and its leave's
            // stalls began then (measure::fault::churn).
            let before = (f.at.is_zero())
                .then(|| clock.shared.stopped_before_clock(bit))
                .flatten();
            rec.fired_secs = Some(before.unwrap_or_else(|| clock.secs()));
            let hold = ctx.live.hold(Undo::Consumer(clock.shared.clone(), *i));
            clock
                .shared
                .consumer_stopped
                .fetch_or(bit, Ordering::AcqRel);
            let natural = clock.until(until(&f)).await;
            rec.ended_secs = Some(clock.secs());
            let undone = ctx.live.undo(hold);
            rec.outcome = ended(natural, undone, "started again");
            return rec;
        }
        FaultAction::DeleteRecords { partition, before } => {
            rec.target = Some(format!("partition {partition}"));
            rec.fired_secs = Some(clock.secs());
            rec.outcome = match &ctx.meta {
                Some(m) => match m.delete_records(&ctx.topic, *partition, *before).await {
                    Ok(low) => format!("ok; the partition starts at offset {low} now"),
                    Err(e) => format!("failed: {e}"),
                },
                None => "failed: no metadata client".to_string(),
            };
            rec.ended_secs = rec.fired_secs;
            return rec;
        }
        FaultAction::Kill(_) | FaultAction::Pause(_) | FaultAction::Restart(_) => {}
    }
    let target = builtin(&f.action).expect("a broker action");
    let cluster = ctx.cluster.clone().expect("prepare found the cluster");
    let id = match resolve(target, &ctx).await {
        Ok(id) => id,
        Err(e) => {
            rec.outcome = format!("not fired: {e}");
            return rec;
        }
    };
    rec.target = Some(format!("broker {id}"));
    let (undo, apply, back): (Undo, NodeAction, _) = match f.action {
        FaultAction::Kill(_) => (
            Undo::Start(cluster.clone(), id),
            LocalCluster::kill,
            "restarted",
        ),
        FaultAction::Pause(_) => (
            Undo::Resume(cluster.clone(), id),
            LocalCluster::pause,
            "continued",
        ),
        _ => (
            Undo::Start(cluster.clone(), id),
            LocalCluster::stop,
            "started",
        ),
    };
    // Registered first, and applied as one step an exit path waits for: whatever ends the
    // process from here on undoes it, after it is applied (a restart's stop, say).
    rec.fired_secs = Some(clock.secs());
    let (live, c) = (ctx.live.clone(), cluster.clone());
    let (hold, applied) = match blocking(move || live.apply(undo, || apply(&c, id))).await {
        Ok(done) => done,
        Err(e) => {
            rec.outcome = format!("failed: {e}");
            return rec;
        }
    };
    if let Err(e) = applied {
        let live = ctx.live.clone();
        let _ = blocking(move || live.undo(hold)).await;
        rec.ended_secs = Some(clock.secs());
        rec.outcome = format!("failed: {e}");
        return rec;
    }
    // A restart is over once the broker is back; the others last their `for`, or to the end.
    let natural = match f.action {
        FaultAction::Restart(_) => true,
        _ => clock.until(until(&f)).await,
    };
    // A kill or a pause ends when its undo is issued; a restart when the broker is back.
    let is_restart = matches!(f.action, FaultAction::Restart(_));
    if !is_restart {
        rec.ended_secs = Some(clock.secs());
    }
    let undoing = Instant::now();
    let live = ctx.live.clone();
    let undone = blocking(move || live.undo(hold))
        .await
        .unwrap_or_else(|e| Some(Err(task(e))));
    if is_restart {
        rec.ended_secs = Some(clock.secs());
    }
    let took = undoing.elapsed().as_secs_f64();
    rec.outcome = ended(natural, undone, back);
    if matches!(f.action, FaultAction::Kill(_)) && rec.outcome.starts_with("ok") {
        rec.outcome.push_str(&format!(
            "; accepting connections {took:.1}s after its restart"
        ));
    }
    rec
}

/// One of kafka-local's node commands.
type NodeAction = fn(&LocalCluster, i32) -> Result<String, FaultError>;

/// A blocking task's failure, as the fault it was for reports it.
fn task(e: tokio::task::JoinError) -> FaultError {
    FaultError::Task(Arc::new(e))
}

/// An outcome line for a fault that ended: on its own time or with the measured phase, undone
/// by its task or by someone else's (an exit path).
fn ended(natural: bool, undone: Option<Result<String, FaultError>>, back: &str) -> String {
    match (natural, undone) {
        (_, Some(Err(e))) => format!("not undone: {e}"),
        (true, _) => "ok".to_string(),
        (false, _) => format!("ok; {back} when the measured phase ended"),
    }
}

/// When a fault is over, if it ends before the measured phase does.
fn until(f: &Fault) -> Option<Duration> {
    f.lasts.map(|d| f.at + d)
}

/// The broker an action hits, resolved now.
async fn resolve(t: &BrokerTarget, ctx: &Arc<Ctx>) -> Result<i32, FaultError> {
    match t {
        BrokerTarget::Id(id) => Ok(*id),
        BrokerTarget::Leader(p) => {
            let (ctx, p) = (ctx.clone(), *p);
            blocking(move || match &ctx.meta {
                Some(m) => m.leader(&ctx.topic, p),
                None => Err(FaultError::NoMetadataClient),
            })
            .await
            .map_err(task)?
        }
    }
}

#[cfg(test)]
mod tests;
