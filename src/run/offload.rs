//! A cold backlog (`backlog = cold(N)`): how much of the topics' records have left the
//! brokers' local disks for remote storage (KIP-405), and the wait for them to. The earliest
//! offset (ListOffsets −2) is where the log starts, remote storage included; the earliest
//! *local* offset (−4, ListOffsets v8+, which librdkafka does not send) is where the copy on
//! local disk starts. The records between the two are read from remote storage only.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::{ApiKey, BrokerId, ListOffsetsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use crate::wire::admin::{bootstrap_conn, bootstrap_list, metadata};
use crate::wire::conn::{Conn, Limits};
use crate::wire::{Security, WireError};

const EARLIEST: i64 = -2;
const EARLIEST_LOCAL: i64 = -4;
const LATEST: i64 = -1;
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the offsets are asked while waiting.
const POLL: Duration = Duration::from_millis(500);
/// The cold share counts as settled once it has not grown for this long: the broker offloads
/// and deletes in rounds (remote.log.manager.task.interval.ms, log.retention.check.interval.ms),
/// and the open segment leaves only once the broker rolls it.
const SETTLED: Duration = Duration::from_secs(5);

/// Records of some topics, summed over their partitions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cold {
    /// Records only in remote storage (earliest local − earliest).
    pub remote_only: u64,
    /// Records the topics hold (latest − earliest).
    pub held: u64,
}

impl Cold {
    /// The share of the records held that are only in remote storage, 0 to 1.
    pub(crate) fn share(&self) -> f64 {
        if self.held == 0 {
            0.0
        } else {
            self.remote_only as f64 / self.held as f64
        }
    }
}

/// What the wait ended with.
pub(crate) struct Waited {
    pub cold: Cold,
    /// The bound passed before the share settled.
    pub timed_out: bool,
    pub took: Duration,
}

/// How much of `topics` is in remote storage only, asking each partition's leader.
pub(crate) fn cold(
    bootstrap: &str,
    security: &Security,
    topics: &[String],
) -> Result<Cold, WireError> {
    let limits = Limits::new(IO_TIMEOUT);
    let mut conn = bootstrap_conn(&bootstrap_list(bootstrap), security, limits, "kafkabench")?;
    let meta = metadata(&mut conn, topics)?;
    // Partitions by leader.
    let mut by_leader: HashMap<i32, Vec<(String, i32)>> = HashMap::new();
    for t in topics {
        let Some(m) = meta.topics.get(t) else {
            return Err(WireError::Config(format!(
                "topic {t} is not in the metadata"
            )));
        };
        for (p, &leader) in m.leaders.iter().enumerate() {
            by_leader
                .entry(leader)
                .or_default()
                .push((t.clone(), p as i32));
        }
    }
    let mut cold = Cold::default();
    for (leader, parts) in by_leader {
        let Some(addr) = meta.brokers.get(&leader) else {
            return Err(WireError::Config(format!(
                "no leader for {} partition(s) of {}",
                parts.len(),
                parts[0].0
            )));
        };
        let mut c = Conn::connect(addr, security, limits, "kafkabench")?;
        let earliest = offsets(&mut c, &parts, EARLIEST)?;
        let local = offsets(&mut c, &parts, EARLIEST_LOCAL)?;
        let latest = offsets(&mut c, &parts, LATEST)?;
        for tp in &parts {
            let (e, l, end) = (earliest[tp], local[tp], latest[tp]);
            cold.remote_only += (l - e).max(0) as u64;
            cold.held += (end - e).max(0) as u64;
        }
    }
    Ok(cold)
}

/// The offset of each of `parts` at `timestamp` (−1 latest, −2 earliest, −4 earliest local).
fn offsets(
    conn: &mut Conn,
    parts: &[(String, i32)],
    timestamp: i64,
) -> Result<HashMap<(String, i32), i64>, WireError> {
    // −4 is v8's (KIP-405); older brokers have no remote storage to ask about.
    let v = conn.version_within::<ListOffsetsRequest>(8, 10)?;
    let mut topics: Vec<ListOffsetsTopic> = Vec::new();
    for (t, p) in parts {
        let part = ListOffsetsPartition::default()
            .with_partition_index(*p)
            .with_current_leader_epoch(-1)
            .with_timestamp(timestamp);
        match topics.iter_mut().find(|x| x.name.0.as_str() == t) {
            Some(x) => x.partitions.push(part),
            None => topics.push(
                ListOffsetsTopic::default()
                    .with_name(TopicName(StrBytes::from_string(t.clone())))
                    .with_partitions(vec![part]),
            ),
        }
    }
    let req = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_timeout_ms(IO_TIMEOUT.as_millis() as i32)
        .with_topics(topics);
    let resp = conn.request_v(v, &req)?;
    let mut out = HashMap::new();
    for t in resp.topics {
        for p in t.partitions {
            let tp = (t.name.0.as_str().to_string(), p.partition_index);
            if p.error_code != 0 {
                let key = ApiKey::ListOffsets as i16;
                return Err(conn.kafka_err(key, p.error_code, None, &format!("{}-{}", tp.0, tp.1)));
            }
            out.insert(tp, p.offset);
        }
    }
    for tp in parts {
        if !out.contains_key(tp) {
            return Err(WireError::Config(format!(
                "ListOffsets left out {}-{}",
                tp.0, tp.1
            )));
        }
    }
    Ok(out)
}

/// Waits until the share of `topics` in remote storage only is above zero and has not grown
/// for a while (or `within` passes, or `stop` says so), asking every half second. A failed
/// request is asked again until the bound, and the last error returned when none answered;
/// a broker too old to be asked ends the wait at once.
pub(crate) fn wait(
    bootstrap: &str,
    security: &Security,
    topics: &[String],
    within: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<Waited, WireError> {
    let started = Instant::now();
    let mut last: Option<Cold> = None;
    let mut grew_at = started;
    let mut error = None;
    loop {
        match cold(bootstrap, security, topics) {
            Ok(c) => {
                if last.map_or(true, |l| c.remote_only > l.remote_only) {
                    grew_at = Instant::now();
                }
                last = Some(c);
                if c.remote_only > 0 && grew_at.elapsed() >= SETTLED {
                    break;
                }
            }
            // A broker without ListOffsets v8 has no remote storage to wait for.
            Err(e @ WireError::Unsupported { .. }) => return Err(e),
            Err(e) => error = Some(e),
        }
        if started.elapsed() >= within || stop() {
            break;
        }
        std::thread::sleep(POLL);
    }
    let timed_out = started.elapsed() >= within;
    match (last, error) {
        (Some(cold), _) => Ok(Waited {
            cold,
            timed_out,
            took: started.elapsed(),
        }),
        (None, Some(e)) => Err(e),
        (None, None) => Ok(Waited {
            cold: Cold::default(),
            timed_out,
            took: started.elapsed(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cold_share_is_the_remote_only_records_of_those_held() {
        let c = Cold {
            remote_only: 90,
            held: 120,
        };
        assert!((c.share() - 0.75).abs() < 1e-12);
        assert_eq!(Cold::default().share(), 0.0);
    }
}
