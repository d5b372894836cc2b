//! Stage 3, plan: a checked [`Scenario`] → a [`Plan`] of concrete runs, with the run-time choices
//! applied (scale, bootstrap override, unique topic names) and kafkabench's own client defaults
//! made explicit, so `kafkabench plan` shows exactly what `run` will do.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use serde::Serialize;

use crate::model::*;

/// Statistics every 500 ms: often enough that a short run still gets a sample, rare enough to
/// cost nothing measurable.
pub const STATS_INTERVAL_MS: u64 = 500;

#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Replaces the scenario's bootstrap servers.
    pub bootstrap: Option<String>,
    /// Multiplies message counts and durations (not rates or timers): `0.1` for CI.
    pub scale: f64,
    /// Suffix that makes this invocation's topic names unique.
    pub run_id: String,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            bootstrap: None,
            scale: 1.0,
            run_id: new_run_id(),
        }
    }
}

/// A short id from the clock and the pid: unique enough that topic names never meet leftovers.
pub fn new_run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    // std's hasher mixes the bits (and is keyed afresh per process), so six hex digits of it
    // differ even for invocations a nanosecond apart.
    let mut h = RandomState::new().build_hasher();
    h.write_u128(nanos);
    h.write_u32(std::process::id());
    let digits = RUN_ID_DIGITS;
    format!("{:0digits$x}", h.finish() & ((1 << (4 * digits)) - 1))
}

#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub scenario: String,
    pub description: Option<String>,
    pub dims: Vec<Dimension>,
    pub run_id: String,
    pub scale: f64,
    pub runs: Vec<RunPlan>,
    #[serde(skip)]
    pub assertions: Vec<Assertion>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunPlan {
    pub index: usize,
    pub label: String,
    #[serde(skip)]
    pub cell: Cell,
    pub bootstrap: String,
    pub topic: TopicSpec,
    /// Effective producer configuration: cluster-wide, then the scenario's, then kafkabench's
    /// defaults where the scenario is silent.
    pub producer: Props,
    pub consumer: Option<Props>,
    pub admin: Props,
    pub workload: Workload,
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
            producer.set_default("client.id", "kafkabench");
            producer.set_default("statistics.interval.ms", STATS_INTERVAL_MS.to_string());
            // Bounded delivery: a broker lost mid-run ends the run in 30 s, not librdkafka's 300 s.
            if producer.get("delivery.timeout.ms").is_none() {
                producer.set_default("message.timeout.ms", "30000");
            }
            let consumer = spec.consumer.as_ref().map(|c| {
                let mut p = base(c);
                p.set_default("group.id", format!("kafkabench-{}-{}", opts.run_id, i + 1));
                p.set_default("client.id", "kafkabench-consumer");
                p.set_default("enable.auto.commit", "false");
                p.set_default("auto.offset.reset", "earliest");
                p
            });
            let mut topic = spec.topic.clone();
            if topic.existing {
                topic.ignored_configs = std::mem::take(&mut topic.configs);
            } else {
                topic.name = format!("{}-{}", topic.name, opts.run_id);
            }
            RunPlan {
                index: i,
                label: cell.label(),
                cell: cell.clone(),
                bootstrap: bootstrap.clone(),
                topic,
                producer,
                consumer,
                admin: base(&Props::default()),
                workload: scale(&spec.workload, opts.scale),
            }
        })
        .collect();
    Plan {
        scenario: scenario.name.clone(),
        description: scenario.description.clone(),
        dims: scenario.dims.clone(),
        run_id: opts.run_id.clone(),
        scale: opts.scale,
        runs,
        assertions: scenario.assertions.clone(),
    }
}

fn scale(w: &Workload, f: f64) -> Workload {
    if f == 1.0 {
        return w.clone();
    }
    let d = |d: Duration| Duration::from_secs_f64((d.as_secs_f64() * f).max(0.001));
    let n = |n: u64| ((n as f64 * f).ceil() as u64).max(1);
    let mut w = w.clone();
    w.messages = w.messages.map(|m| n(m).max(w.producers as u64));
    w.duration = w.duration.map(d);
    w.warmup = w.warmup.map(|x| match x {
        Warmup::Messages(m) => Warmup::Messages(n(m)),
        Warmup::Duration(x) => Warmup::Duration(d(x)),
    });
    if let RateSpec::Shape(segs) = &mut w.rate {
        for s in segs {
            s.duration = d(s.duration);
        }
    }
    w
}
