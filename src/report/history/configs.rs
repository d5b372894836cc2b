//! A broker config change on a series, marked as a version change is: not a new series (the
//! same cluster, retuned), but a likely cause of a change point next to it.

use super::{Point, VersionChange};
use crate::measure::broker_config::BrokerConfigs;
use crate::report::json::ResultFile;

/// The brokers' configs a result file recorded, if it did.
pub(super) fn of(file: &ResultFile) -> Option<BrokerConfigs> {
    file.environment.as_ref()?.cluster.as_ref()?.configs.clone()
}

/// `versions` with every broker config and quota change between two results of the series
/// added, in the order of the results (`what`: `broker config`; `from` and `to`: `name =
/// value`). A result that recorded no configs changes nothing.
pub(super) fn with_changes(
    mut versions: Vec<VersionChange>,
    results: &[Point],
) -> Vec<VersionChange> {
    let mut last: Option<&BrokerConfigs> = None;
    for (i, p) in results.iter().enumerate() {
        let Some(cur) = p.broker_configs.as_ref() else {
            continue;
        };
        if let Some(base) = last {
            for d in cur.differences(base) {
                versions.push(VersionChange {
                    index: i,
                    what: "broker config",
                    from: format!("{} = {}", d.name, d.from),
                    to: format!("{} = {}", d.name, d.to),
                });
            }
        }
        last = Some(cur);
    }
    versions.sort_by_key(|v| v.index);
    versions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::broker_config::{BrokerConfig, Config, Described, Source};

    fn point(io_threads: Option<&str>) -> Point {
        let configs = io_threads.map(|v| BrokerConfigs {
            brokers: vec![BrokerConfig {
                id: 1,
                described: Described::kept([Config::new(
                    "num.io.threads".into(),
                    Some(v.into()),
                    Source::DynamicBroker,
                    false,
                )]),
            }],
            ..BrokerConfigs::default()
        });
        Point {
            file: "f.json".into(),
            run_id: "abc123".into(),
            started_at: "2026-12-01T00:00:00Z".into(),
            kafkabench: "0.1.0".into(),
            librdkafka: Some("2.12.1".into()),
            trials: 1,
            broker_configs: configs,
        }
    }

    #[test]
    fn a_changed_broker_config_is_marked_where_it_changed_and_a_file_without_configs_is_not() {
        let results = [
            point(Some("8")),
            point(None),
            point(Some("16")),
            point(Some("16")),
        ];
        let marked = with_changes(Vec::new(), &results);
        assert_eq!(
            marked,
            vec![VersionChange {
                index: 2,
                what: "broker config",
                from: "num.io.threads = 8".into(),
                to: "num.io.threads = 16".into(),
            }]
        );
    }
}
