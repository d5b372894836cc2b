//! The brokers' configs, the quotas and a run's topic's configs that differ between the two
//! files (`measure::broker_config`), named before the table: a figure that moved with them
//! may have moved because of them.

use super::ResultFile;
use crate::measure::broker_config::{BrokerConfigs, Difference};
use crate::measure::RunResult;

/// `the brokers' configs differ, …: num.io.threads: default → 16 (dynamic, this broker)`;
/// None when they do not, or either file did not record them.
pub(super) fn brokers(baseline: &ResultFile, current: &ResultFile) -> Option<String> {
    let of = |f: &ResultFile| -> Option<BrokerConfigs> {
        f.environment.as_ref()?.cluster.as_ref()?.configs.clone()
    };
    let d = of(current)?.differences(&of(baseline)?);
    (!d.is_empty()).then(|| {
        format!(
            "the brokers' configs differ, so a change may be theirs: {}",
            words(&d)
        )
    })
}

/// `run `x`: its topic's configs differ: retention.ms: …`; None when they do not, or either
/// run did not record them.
pub(super) fn topic(b: &RunResult, cur: &RunResult) -> Option<String> {
    let of = |r: &RunResult| r.topic_config.as_ref()?.effective.clone();
    let d = of(cur)?.differences(&of(b)?);
    (!d.is_empty()).then(|| {
        format!(
            "run `{}`: its topic's configs differ: {}",
            cur.label,
            words(&d)
        )
    })
}

fn words(d: &[Difference]) -> String {
    d.iter()
        .map(Difference::words)
        .collect::<Vec<_>>()
        .join("; ")
}
