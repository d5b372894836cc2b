//! What a sharded run asks of a scenario and of the command line (`run --shard`, `collect`),
//! and how long anyone waits for the others. Said before anything connects (exit 2).

use std::time::Duration;

use super::error::ShardError;
use crate::plan::Plan;
use crate::plan::RunNo;
use crate::run::Shard;

/// `I/N` as written after `--shard`; an empty `I` (`/N`) is the index Kubernetes gives an
/// Indexed Job's pod in `JOB_COMPLETION_INDEX` (`job_index`).
pub(crate) fn parse(text: &str, job_index: Option<&str>) -> Result<Shard, ShardError> {
    let (i, n) = text.split_once('/').ok_or(ShardError::NotIOverN)?;
    let count: u32 = n
        .trim()
        .parse()
        .ok()
        .filter(|n| (1..=1024).contains(n))
        .ok_or_else(|| ShardError::Count(n.to_string()))?;
    let i = i.trim();
    let i = if i.is_empty() {
        job_index.ok_or(ShardError::NoIndex)?
    } else {
        i
    };
    let index: u32 = i
        .trim()
        .parse()
        .ok()
        .filter(|i| *i < count)
        .ok_or_else(|| ShardError::Index {
            index: i.to_string(),
            count,
        })?;
    Ok(Shard { index, count })
}

/// Why a topic of `partitions` cannot be split over `shards`, if it cannot.
pub(crate) fn fits(shards: u32, partitions: i32) -> Option<ShardError> {
    (partitions < shards as i32).then_some(ShardError::TooFewPartitions { partitions, shards })
}

/// Why this plan cannot run as `shards` shards: said before anything connects (exit 2).
pub(crate) fn problems(p: &Plan, shards: u32) -> Vec<String> {
    let mut out = Vec::new();
    for rp in &p.runs {
        let run = format!("run {} ({})", RunNo(rp.index), rp.label);
        if !rp.faults.is_empty() {
            out.push(format!(
                "{run} has a faults timeline: faults cannot be staged from a sharded run yet \
                 (each shard would act on the brokers); run it on one machine"
            ));
        }
        if rp.share.is_some() {
            out.push(format!(
                "{run} is read by a share group: its members would span the shards, and the \
                 group's verification needs every acknowledgement in one process; run it on one \
                 machine"
            ));
        } else if rp.workload.consumers.is_some() {
            out.push(format!(
                "{run} reads with a consumer group (`consumers = N`): a group assigns \
                 partitions across shards, so end-to-end latency would subtract two hosts' \
                 clocks; shard the `consumer {{ }}` verification consumer instead, or run the \
                 group on one machine"
            ));
        }
        if matches!(
            rp.workload.backlog,
            Some(crate::model::Backlog::Cold { .. })
        ) {
            out.push(format!(
                "{run} has a cold backlog (`cold(...)`): each shard would wait on its own for                  the brokers to offload the topic, which the shards' agreed start does not                  allow for; run it on one machine"
            ));
        }
        if !rp.topic.existing {
            if let Some(why) = fits(shards, rp.topic.partitions) {
                out.push(format!("{run}: {why}"));
            }
        }
    }
    out
}

/// What `run --shard` asks of the rest of its command line: a run id, one scenario file, every
/// run of it. Each reason it cannot take part.
pub(crate) fn arguments(run_id: bool, files: usize, only: bool) -> Vec<String> {
    let mut errors = Vec::new();
    if !run_id {
        errors.push(
            "--shard needs --run-id: every shard and the collector name the run's topics and \
             control topic with one id"
                .to_string(),
        );
    }
    if files != 1 {
        errors.push(format!("--shard runs one scenario file, not {files}"));
    }
    if only {
        errors.push(
            "--shard runs every run of the scenario (the collector waits for each): drop --only"
                .into(),
        );
    }
    errors
}

/// How long the plan runs, as far as it is known, plus a margin per round (each run, trial
/// and capacity probe, canary and long probe: topics, two agreed starts, a result) for
/// connecting, topics and draining; a run of unknown length (a count at an unlimited rate)
/// gets ten minutes.
pub(crate) fn planned(p: &Plan) -> Duration {
    let e = p.estimate;
    let rounds: u32 = p
        .runs
        .iter()
        .map(|rp| rp.capacity.as_ref().map_or(1, |c| c.max_rounds()))
        .sum::<u32>()
        * p.repeat.max(1);
    e.known + Duration::from_secs(600) * e.unknown_runs as u32 + Duration::from_secs(15) * rounds
}

/// How long the collector waits for the shards unless told (`--deadline`): the planned
/// duration plus a minute.
pub(crate) fn collector_wait(p: &Plan) -> Duration {
    planned(p) + Duration::from_secs(60)
}

/// How long a shard waits for the collector: a little longer than the collector's own
/// default deadline, so that it, not a shard, gives up.
pub(crate) fn shard_wait(p: &Plan) -> Duration {
    planned(p) + Duration::from_secs(120)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_written_i_over_n_or_takes_its_index_from_the_job() {
        assert_eq!(parse("2/3", None).ok(), Some(Shard { index: 2, count: 3 }));
        assert_eq!(
            parse("/4", Some("1")).ok(),
            Some(Shard { index: 1, count: 4 })
        );
        assert!(parse("3/3", None)
            .unwrap_err()
            .to_string()
            .contains("0 to 2"));
        assert!(parse("/3", None)
            .unwrap_err()
            .to_string()
            .contains("JOB_COMPLETION_INDEX"));
        assert!(parse("1", None).is_err());
        assert!(parse("0/0", None).is_err());
    }

    #[test]
    fn a_cold_backlog_runs_on_one_machine() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cold_reads.kbs");
        let mut sources = crate::source::Sources::default();
        let scenario = crate::check::load(&path, &mut sources).expect("a valid scenario");
        let p = crate::plan::plan(&scenario, &Default::default());
        let problems = problems(&p, 2);
        let cold: Vec<&String> = problems
            .iter()
            .filter(|m| m.contains("cold backlog"))
            .collect();
        assert_eq!(cold.len(), 1, "{problems:?}");
        assert!(cold[0].contains("(replay)"), "{cold:?}");
    }

    #[test]
    fn a_topic_needs_a_partition_per_shard() {
        assert!(fits(4, 3).is_some());
        assert!(fits(3, 3).is_none());
        assert!(fits(3, 1)
            .unwrap()
            .to_string()
            .starts_with("the topic has 1 partition for 3 shards"));
    }
}
