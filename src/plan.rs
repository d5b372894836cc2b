//! Stage 3, plan: a checked [`Scenario`] → a [`Plan`] of concrete runs, with the run-time choices
//! applied (scale, bootstrap override, unique topic names) and kafkabench's own client defaults
//! made explicit, so `kafkabench plan` shows exactly what `run` will do.

use std::time::Duration;

use serde::Serialize;

use crate::model::*;

mod clients;
mod defaults;
mod estimate;
pub(crate) mod limits;
mod resolve;

pub use clients::{ClientDefaults, Difference, Other};
pub use estimate::{estimate, Estimate, PhaseEstimate, PlanEstimate};
pub use resolve::{target, Instance, PlannedAssertion, Reference};

/// The version of the JSON/YAML plan's layout (docs/plan-format.md); raised when a field
/// changes meaning or goes away.
pub const PLAN_SCHEMA_VERSION: u32 = 1;

/// The run id `kafkabench plan` shows when none is given: the same on every invocation, so two
/// plans of one file diff clean. `run` draws a fresh id instead.
pub const RUN_ID_PLACEHOLDER: &str = "<run-id>";

/// The longest `--run-id`: it suffixes every topic name and consumer group, and a topic name
/// has at most [`TOPIC_NAME_MAX`] characters.
pub const RUN_ID_MAX: usize = 32;

/// Statistics every 500 ms: often enough that a short run still gets a sample, rare enough to
/// cost nothing measurable.
pub const STATS_INTERVAL_MS: u64 = 500;

#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Replaces the scenario's bootstrap servers.
    pub bootstrap: Option<String>,
    /// Multiplies message counts and durations (not rates or timers): `0.1` for CI.
    pub scale: f64,
    /// `--repeat N`: trials of every run, instead of the scenario's `repeat`.
    pub repeat: Option<u32>,
    /// Suffix that makes this invocation's topic names unique.
    pub run_id: String,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            bootstrap: None,
            scale: 1.0,
            repeat: None,
            run_id: new_run_id(),
        }
    }
}

/// A short id from the clock and the pid: unique enough that topic names never meet leftovers.
pub fn new_run_id() -> String {
    let digits = RUN_ID_DIGITS;
    format!(
        "{:0digits$x}",
        crate::random::fresh_u64() & ((1 << (4 * digits)) - 1)
    )
}

/// Why `id` cannot be a run id, or None: it goes into topic names, so it takes their
/// characters (ASCII letters, digits, `.`, `_`, `-`) and a length bound.
pub fn run_id_problem(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("a run id cannot be empty".into());
    }
    if let Some((i, c)) = id
        .chars()
        .enumerate()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Some(format!(
            "`{c}` (character {}) cannot be in a run id: it suffixes topic names, which take \
             only ASCII letters, digits, `.`, `_` and `-`",
            i + 1
        ));
    }
    let n = id.chars().count();
    (n > RUN_ID_MAX).then(|| {
        format!("a run id has at most {RUN_ID_MAX} characters (it suffixes every topic name); this one has {n}")
    })
}

/// Topics whose name with `-ID` appended would be longer than Kafka allows (the check stage
/// leaves room for the default id only): one message per topic, naming its length.
pub fn run_id_overflows(scenario: &Scenario, id: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &scenario.cells {
        let t = &c.spec.topic;
        let index = topic_index_len(c.spec.workload.topics);
        let len = t.name.chars().count() + 1 + id.chars().count() + index;
        if !t.existing && len > TOPIC_NAME_MAX {
            let m = format!(
                "with run id `{id}`, topic `{}` would have {len} characters, over Kafka's \
                 {TOPIC_NAME_MAX}; use a run id of at most {} characters",
                nth_topic(
                    &format!("{}-{id}", t.name),
                    c.spec.workload.topics - 1,
                    c.spec.workload.topics
                ),
                (TOPIC_NAME_MAX - 1).saturating_sub(t.name.chars().count() + index)
            );
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out
}

/// A run as people count it: the plan's index from 1. Runs are identified by their index
/// everywhere; this `Display` is the one place that adds 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunNo(pub usize);

impl RunNo {
    /// The number of the run at `index` (a reference too: thiserror's fields are).
    pub fn of(index: impl std::borrow::Borrow<usize>) -> RunNo {
        RunNo(*index.borrow())
    }
}

impl std::fmt::Display for RunNo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0 + 1)
    }
}

/// Which runs of a plan an invocation executes (`--only`): a mask over the plan, so every run
/// keeps its index in reports, verdicts and failures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection(Vec<bool>);

impl Selection {
    /// Every run of `p`.
    pub fn all(p: &Plan) -> Selection {
        Selection(vec![true; p.runs.len()])
    }

    /// The runs of `p` for which `keep(index)` holds.
    pub fn of(p: &Plan, keep: impl Fn(usize) -> bool) -> Selection {
        Selection((0..p.runs.len()).map(keep).collect())
    }

    pub fn contains(&self, index: usize) -> bool {
        self.0.get(index).copied().unwrap_or(false)
    }

    /// How many runs are selected.
    pub fn len(&self) -> usize {
        self.0.iter().filter(|x| **x).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The selected runs of `p`, in plan order.
    pub fn runs<'a>(&'a self, p: &'a Plan) -> impl Iterator<Item = &'a RunPlan> + 'a {
        p.runs.iter().filter(|r| self.contains(r.index))
    }

    /// The mask, one entry per planned run.
    pub fn mask(&self) -> &[bool] {
        &self.0
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub schema_version: u32,
    pub scenario: String,
    pub description: Option<String>,
    pub dims: Vec<Dimension>,
    pub run_id: String,
    pub scale: f64,
    /// Trials of every run (`repeat`, or `--repeat`): 1 runs each once. With `repeat_auto`,
    /// the most trials of a run.
    pub repeat: u32,
    /// `repeat = auto(±5%, max 20)`: trials until the judged figures are known well enough
    /// (`--repeat N` replaces it with N trials).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_auto: Option<crate::model::AutoRepeat>,
    pub runs: Vec<RunPlan>,
    /// Every run's estimate added up.
    pub estimate: PlanEstimate,
    #[serde(skip)]
    pub assertions: Vec<Assertion>,
    /// The assertions with the runs each instance reads, in the order of `assertions`.
    #[serde(rename = "assertions")]
    pub expect: Vec<PlannedAssertion>,
    /// What `check` noted about the scenario (keys placed differently by the clients it
    /// compares, …).
    pub notes: Vec<PlanNote>,
    /// Every default of each client a side of the plan runs on, once per client, release
    /// and side.
    pub client_defaults: Vec<ClientDefaults>,
}

/// A note of the check stage, as the plan carries it.
#[derive(Clone, Debug, Serialize)]
pub struct PlanNote {
    pub code: &'static str,
    pub message: String,
    pub help: Option<String>,
}

impl PlanNote {
    fn of(d: &crate::diagnostic::Diagnostic) -> PlanNote {
        PlanNote {
            code: d.kind.code(),
            message: d.message.clone(),
            help: d.help.clone(),
        }
    }
}

/// The seed of a run whose scenario gives none: derived from the run id, itself drawn from
/// the clock unless `--run-id` names it, so every shard of a sharded run (which share the run
/// id) draws the same records. None for the placeholder of `kafkabench plan`, which names no
/// run.
pub fn seed_of(run_id: &str) -> Option<u64> {
    if run_id == RUN_ID_PLACEHOLDER {
        return None;
    }
    // FNV-1a: stable across releases and platforms, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in run_id.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    Some(h & SEED_MAX)
}

/// One entry per client, release and side the plan's runs use, in run order.
fn client_defaults(runs: &[RunPlan]) -> Vec<ClientDefaults> {
    let mut used: Vec<(ClientKind, String, Side)> = Vec::new();
    for r in runs {
        let mut sides = vec![(
            r.producer_client,
            r.producer_version.clone(),
            Side::Producer,
        )];
        if let Some(c) = r.consumer_release() {
            sides.push((c.name, c.version, Side::Consumer));
        }
        for s in sides {
            if !used.contains(&s) {
                used.push(s);
            }
        }
    }
    used.into_iter()
        .map(|(c, v, side)| clients::defaults(c, &v, side))
        .collect()
}

#[derive(Clone, Debug, Serialize)]
pub struct RunPlan {
    pub index: usize,
    pub label: String,
    #[serde(skip)]
    pub cell: Cell,
    pub bootstrap: String,
    /// The topic block; with `topics = N`, its name is the first topic's.
    pub topic: TopicSpec,
    /// Every topic of the run, in order: the topic's own name, or `topics = N` of them
    /// (`name-RUNID-0` …, see [`nth_topic`]).
    pub topics: Vec<String>,
    /// Effective producer configuration: cluster-wide, then the scenario's, then kafkabench's
    /// defaults where the scenario is silent.
    pub producer: Props,
    pub consumer: Option<Props>,
    /// A share group reads the run (`share { }`), with kafkabench's defaults filled in: its
    /// own `group.id`, and `share.auto.offset.reset=earliest` (Kafka's default, `latest`,
    /// would skip what was written before the members joined).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<ShareSpec>,
    pub admin: Props,
    pub workload: Workload,
    /// The fault timeline, scaled with the workload (so it keeps its place in the run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Fault>,
    /// How long it sends (see [`RunPlan::estimate`]), kept in the serialized plan; for a
    /// capacity search, its worst case.
    pub estimate: Estimate,
    /// A capacity search (`capacity { }`), scaled: the run is its probes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacitySearch>,
    /// The client library each side runs on, and its release (`java(version: "3.9.1")`, or
    /// the one kafkabench pins).
    pub producer_client: ClientKind,
    pub consumer_client: ClientKind,
    pub producer_version: String,
    pub consumer_version: String,
    /// The producer's settings whose value on its client differs from what another client
    /// would use with the same scenario (`client = java` against librdkafka, …).
    pub producer_differences: Vec<Difference>,
    /// The same for the consumer (empty without one, and for a share group).
    pub consumer_differences: Vec<Difference>,
}

impl RunPlan {
    /// The producer's client and release.
    pub fn producer_release(&self) -> ClientRelease {
        ClientRelease {
            name: self.producer_client,
            version: self.producer_version.clone(),
        }
    }

    /// The consumer's client and release; None without a consumer (a share group is read by
    /// kafkabench's own).
    pub fn consumer_release(&self) -> Option<ClientRelease> {
        (self.consumer.is_some() && self.share.is_none()).then(|| ClientRelease {
            name: self.consumer_client,
            version: self.consumer_version.clone(),
        })
    }
}

impl RunPlan {
    /// How long this run sends, warm-up included, and how many records: exact for a paced run
    /// that keeps up, `None` durations for a count at an unlimited rate. For `plan` and for a
    /// progress ETA.
    pub fn estimate(&self) -> Estimate {
        self.estimate
    }
}

impl Plan {
    /// The metrics the assertions read from run `index` (what `repeat = auto` judges of it).
    pub fn metrics_read(&self, index: usize) -> Vec<crate::model::Metric> {
        resolve::metrics_read(&self.assertions, &self.expect, index)
    }

    /// Indices of the runs an assertion instance reads, for every instance of every
    /// assertion.
    pub fn instances(&self) -> impl Iterator<Item = (&PlannedAssertion, &Instance)> {
        self.expect
            .iter()
            .flat_map(|a| a.instances.iter().map(move |i| (a, i)))
    }
}

pub fn plan(scenario: &Scenario, opts: &PlanOptions) -> Plan {
    let runs = scenario
        .cells
        .iter()
        .enumerate()
        .map(|(i, cell)| {
            let spec = &cell.spec;
            let bootstrap = opts
                .bootstrap
                .clone()
                .unwrap_or_else(|| spec.bootstrap.clone());
            let base = |extra: &Props| {
                let mut p = Props::default();
                p.set("bootstrap.servers", bootstrap.clone());
                for x in spec.client.iter().chain(extra.iter()) {
                    p.set(&x.key, x.value.clone());
                }
                p
            };
            let mut producer = base(&spec.producer);
            defaults::producer(&mut producer, spec.producer_client);
            let consumer = spec.consumer.as_ref().map(|c| {
                let mut p = base(c);
                if spec.share.is_none() {
                    // (A share group reads: no consumer, only the connection.)
                    let group = format!("kafkabench-{}-{}", opts.run_id, i + 1);
                    defaults::consumer(&mut p, spec.consumer_client, spec, group);
                }
                p
            });
            let share = spec.share.as_ref().map(|s| {
                let mut s = s.clone();
                s.client.set_default(
                    "group.id",
                    format!("kafkabench-share-{}-{}", opts.run_id, i + 1),
                );
                s.group.set_default("share.auto.offset.reset", "earliest");
                s
            });
            let mut topic = spec.topic.clone();
            if topic.existing {
                topic.ignored_configs = std::mem::take(&mut topic.configs);
            } else {
                topic.name = format!("{}-{}", topic.name, opts.run_id);
            }
            let topics = topic_names(&topic.name, spec.workload.topics);
            topic.name = topics[0].clone();
            let mut workload = scale(&spec.workload, opts.scale);
            workload.seed = workload.seed.or_else(|| seed_of(&opts.run_id));
            let capacity = spec.capacity.as_ref().map(|c| c.scaled(opts.scale));
            RunPlan {
                index: i,
                estimate: match &capacity {
                    Some(c) => estimate::search(c),
                    None => estimate(&workload),
                },
                capacity,
                label: cell.label(),
                cell: cell.clone(),
                bootstrap: bootstrap.clone(),
                topic,
                topics,
                share,
                admin: base(&Props::default()),
                workload,
                faults: scale_faults(&spec.faults, opts.scale),
                producer_differences: clients::differences(
                    Side::Producer,
                    spec.producer_client,
                    &producer,
                ),
                consumer_differences: (consumer.as_ref())
                    .filter(|_| spec.share.is_none())
                    .map(|c| clients::differences(Side::Consumer, spec.consumer_client, c))
                    .unwrap_or_default(),
                producer,
                consumer,
                producer_client: spec.producer_client,
                consumer_client: spec.consumer_client,
                producer_version: spec.producer_version.clone(),
                consumer_version: spec.consumer_version.clone(),
            }
        })
        .collect::<Vec<RunPlan>>();
    let expect = scenario
        .assertions
        .iter()
        .map(|a| PlannedAssertion {
            text: a.text.clone(),
            instances: resolve::instances(&runs, a),
        })
        .collect();
    let repeat = opts.repeat.unwrap_or(scenario.repeat).max(1);
    let repeat_auto = scenario.repeat_auto.filter(|_| opts.repeat.is_none());
    Plan {
        client_defaults: client_defaults(&runs),
        notes: scenario.notes.iter().map(PlanNote::of).collect(),
        schema_version: PLAN_SCHEMA_VERSION,
        estimate: estimate::total(runs.iter().map(RunPlan::estimate), repeat),
        repeat,
        repeat_auto,
        expect,
        scenario: scenario.name.clone(),
        description: scenario.description.clone(),
        dims: scenario.dims.clone(),
        run_id: opts.run_id.clone(),
        scale: opts.scale,
        runs,
        assertions: scenario.assertions.clone(),
    }
}

/// The names of a run's `n` topics, the run suffix already in `base`.
fn topic_names(base: &str, n: u32) -> Vec<String> {
    (0..n.max(1)).map(|i| nth_topic(base, i, n)).collect()
}

/// `--scale` moves and stretches every action with the run's length.
fn scale_faults(faults: &[Fault], f: f64) -> Vec<Fault> {
    let d = |d: Duration| Duration::from_secs_f64(d.as_secs_f64() * f);
    faults
        .iter()
        .map(|x| {
            let lasts = x.lasts.map(|l| d(l).max(Duration::from_millis(1)));
            Fault::new(d(x.at), x.action.clone(), lasts, x.span)
        })
        .collect()
}

fn scale(w: &Workload, f: f64) -> Workload {
    if f == 1.0 {
        return w.clone();
    }
    let d = |d: Duration| Duration::from_secs_f64((d.as_secs_f64() * f).max(0.001));
    let n = |n: u64| ((n as f64 * f).ceil() as u64).max(1);
    let mut w = w.clone();
    // `messages = 0` (a pure drain) stays 0.
    w.messages = w.messages.map(|m| {
        if m == 0 {
            0
        } else {
            n(m).max(w.producers as u64)
        }
    });
    if let Some(Backlog::Records(b) | Backlog::Cold { records: b, .. }) = &mut w.backlog {
        *b = n(*b).max(w.producers as u64);
    }
    w.duration = w.duration.map(d);
    w.warmup = w.warmup.map(|x| match x {
        Warmup::Messages(m) => Warmup::Messages(n(m)),
        Warmup::Duration(x) => Warmup::Duration(d(x)),
        // The bound shrinks with the run, never below the looks it needs.
        Warmup::Auto { max } => Warmup::Auto {
            max: d(max).max(Warmup::AUTO_SLICE * Warmup::AUTO_LOOKS as u32),
        },
    });
    if let RateSpec::Shape(segs) = &mut w.rate {
        for s in segs {
            s.duration = d(s.duration);
        }
    }
    w
}
