//! What a sharded run asks of a scenario (`run --shard`, `collect`), the digest every
//! participant compares, and how long anyone waits for the others.

use std::collections::HashSet;
use std::time::Duration;

use crate::model::PayloadSpec;
use crate::plan::Plan;
use crate::run::Shard;
use crate::source::Sources;

/// Why this plan cannot run as `shards` shards: said before anything connects (exit 2).
pub fn problems(p: &Plan, shards: u32) -> Vec<String> {
    let probe = Shard {
        index: 0,
        count: shards,
    };
    let mut out = Vec::new();
    for rp in &p.runs {
        let run = format!("run {} ({})", rp.index + 1, rp.label);
        if !rp.faults.is_empty() {
            out.push(format!(
                "{run} has a faults timeline: faults cannot be staged from a sharded run yet \
                 (each shard would act on the brokers); run it on one machine"
            ));
        }
        if rp.workload.consumers.is_some() {
            out.push(format!(
                "{run} reads with a consumer group (`consumers = N`): a group assigns \
                 partitions across shards, so end-to-end latency would subtract two hosts' \
                 clocks; shard the `consumer {{ }}` verification consumer instead, or run the \
                 group on one machine"
            ));
        }
        if !rp.topic.existing {
            if let Some(why) = probe.problem(rp.topic.partitions) {
                out.push(format!("{run}: {why}"));
            }
        }
    }
    out
}

/// The digest of everything the scenario reads: its text, its includes (as `merge` digests
/// them) and its payload data files. Shards of one run must all have the same.
pub fn digest(sources: &Sources, p: &Plan) -> String {
    let texts: Vec<String> = sources.ids().map(|id| sources.shown_text(id)).collect();
    let mut seen = HashSet::new();
    let data = p.runs.iter().filter_map(|rp| match &rp.workload.payload {
        PayloadSpec::File { lines, .. } if seen.insert(std::sync::Arc::as_ptr(lines)) => {
            Some(lines.iter().map(Vec::as_slice))
        }
        _ => None,
    });
    super::merge::digest(texts.iter().map(String::as_bytes).chain(data.flatten()))
}

/// How long the plan runs, as far as it is known, plus a margin per run for connecting,
/// topics and draining; a run of unknown length (a count at an unlimited rate) gets ten
/// minutes.
pub fn planned(p: &Plan) -> Duration {
    let e = p.estimate;
    e.known
        + Duration::from_secs(600) * e.unknown_runs as u32
        + Duration::from_secs(15) * p.runs.len() as u32
}
