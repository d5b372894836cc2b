//! An independent reader: what a topic holds, read with rust-rdkafka's own consumer (not
//! kafkabench's), and kafkabench's record stamp decoded here by hand from its documented
//! layout (docs/result-format.md: 21 bytes under header `kb`). A delivery figure is then checked
//! against a count kafkabench did not make. Also the Kafka tools that count from the broker's
//! side (GetOffsetShell, kafka-consumer-groups), run from the local broker's own jars.

use std::collections::{HashMap, HashSet};
use std::process::Command;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

/// One record of the topic that carried a stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamped {
    /// When the record was due: ns since the run's clock origin (`stamp_origin_monotonic_ns`).
    pub intended_ns: u64,
    pub partition: i32,
    pub offset: i64,
    pub producer: u32,
    pub seq: u64,
    pub measured: bool,
    pub aborted: bool,
    pub backlog: bool,
}

/// Everything read from a topic, in offset order per partition.
#[derive(Debug, Default)]
pub(crate) struct Contents {
    pub records: Vec<Stamped>,
    /// Records without a stamp of kafkabench's.
    pub unstamped: u64,
    /// Per partition: the log start offset and the high watermark when reading began.
    pub low: Vec<i64>,
    pub high: Vec<i64>,
}

fn decode(partition: i32, offset: i64, v: &[u8]) -> Option<Stamped> {
    if v.len() != 21 {
        return None;
    }
    let u64_at = |i: usize| u64::from_le_bytes(v[i..i + 8].try_into().unwrap());
    Some(Stamped {
        intended_ns: u64_at(0),
        partition,
        offset,
        producer: u32::from_le_bytes(v[8..12].try_into().unwrap()),
        seq: u64_at(12),
        measured: v[20] & 1 != 0,
        aborted: v[20] & 2 != 0,
        backlog: v[20] & 4 != 0,
    })
}

/// Reads every partition of `topic` from its log start to its high watermark, with
/// `isolation` (`read_committed` or `read_uncommitted`). Fails past a minute.
pub(crate) fn read_topic(bootstrap: &str, topic: &str, isolation: &str) -> Contents {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "kafkabench-independent-reader")
        .set("enable.auto.commit", "false")
        .set("isolation.level", isolation)
        .set("auto.offset.reset", "earliest")
        .create()
        .expect("a consumer");
    let md = c
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .expect("metadata");
    let partitions = md.topics()[0].partitions().len() as i32;
    assert!(partitions > 0, "topic {topic} has no partitions");
    let mut out = Contents::default();
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        let (low, high) = c
            .fetch_watermarks(topic, p, Duration::from_secs(10))
            .expect("watermarks");
        out.low.push(low);
        out.high.push(high);
        tpl.add_partition_offset(topic, p, Offset::Offset(low))
            .unwrap();
    }
    c.assign(&tpl).expect("assign");
    let deadline = Instant::now() + Duration::from_secs(60);
    // A partition is read when the position has passed its high watermark (read_committed
    // skips aborted records and markers, so the position, not a count, says so).
    let done = |c: &BaseConsumer, out: &Contents| {
        let pos = c.position().expect("position");
        (0..partitions).all(|p| {
            let high = out.high[p as usize];
            high <= out.low[p as usize]
                || matches!(pos.find_partition(topic, p).map(|e| e.offset()),
                    Some(Offset::Offset(o)) if o >= high)
        })
    };
    while !done(&c, &out) {
        assert!(
            Instant::now() < deadline,
            "the independent reader did not reach the end of {topic} in 60 s"
        );
        let Some(m) = c.poll(Duration::from_millis(200)) else {
            continue;
        };
        let m = m.expect("a record");
        if m.offset() >= out.high[m.partition() as usize] {
            continue;
        }
        let stamp = m.headers().and_then(|h| {
            h.iter()
                .filter(|h| h.key == "kb")
                .last()
                .and_then(|h| h.value)
        });
        match stamp.and_then(|v| decode(m.partition(), m.offset(), v)) {
            Some(s) => out.records.push(s),
            None => out.unstamped += 1,
        }
    }
    out.records.sort_by_key(|r| (r.partition, r.offset));
    out
}

impl Contents {
    /// The records written in the measured phase (not warm-up, not backlog).
    pub(crate) fn measured(&self) -> impl Iterator<Item = &Stamped> {
        self.records
            .iter()
            .filter(|r| r.measured && !r.backlog && !r.aborted)
    }

    /// Distinct measured records (producer, sequence).
    pub(crate) fn distinct_measured(&self) -> u64 {
        self.measured()
            .map(|r| (r.producer, r.seq))
            .collect::<HashSet<_>>()
            .len() as u64
    }

    /// Measured records present more than once: each copy after the first.
    pub(crate) fn duplicates(&self) -> u64 {
        let all = self.measured().count() as u64;
        all - self.distinct_measured()
    }

    /// Measured records that come, in a partition's offset order, after a record of the same
    /// producer with a higher sequence (copies of a record already seen are duplicates, not
    /// reorderings).
    pub(crate) fn reordered(&self) -> u64 {
        let mut highest: HashMap<(u32, i32), u64> = HashMap::new();
        let mut seen = HashSet::new();
        let mut n = 0;
        for r in self.measured() {
            if !seen.insert((r.producer, r.seq)) {
                continue;
            }
            let h = highest.entry((r.producer, r.partition)).or_insert(r.seq);
            if r.seq < *h {
                n += 1;
            } else {
                *h = r.seq;
            }
        }
        n
    }

    /// Records whose stamp says their transaction was aborted.
    pub(crate) fn aborted(&self) -> u64 {
        self.records.iter().filter(|r| r.aborted).count() as u64
    }

    /// Records in the topic, all partitions: high watermark less log start, markers included.
    pub(crate) fn offsets(&self) -> i64 {
        self.high.iter().zip(&self.low).map(|(h, l)| h - l).sum()
    }
}

/// Runs a Kafka tool class from the local broker's jars (`scripts/kafka-local tool`) and
/// returns its standard output; fails the test when it fails.
/// A tool that moved between releases is tried under its other name when the first is not
/// in the jars (`ConfigCommand` left `kafka.admin` for `org.apache.kafka.tools` in 4.2).
pub(crate) fn kafka_tool(class: &str, args: &[&str]) -> String {
    let run = |class: &str| {
        Command::new(super::repo().join("scripts/kafka-local"))
            .arg("tool")
            .arg(class)
            .args(args)
            .output()
            .expect("kafka-local tool runs")
    };
    let mut out = run(class);
    let moved = match class {
        "org.apache.kafka.tools.ConfigCommand" => Some("kafka.admin.ConfigCommand"),
        "kafka.admin.ConfigCommand" => Some("org.apache.kafka.tools.ConfigCommand"),
        _ => None,
    };
    if let Some(other) = moved {
        if !out.status.success() && super::text(&out.stderr).contains("ClassNotFoundException") {
            out = run(other);
        }
    }
    assert!(
        out.status.success(),
        "{class} {args:?} failed:\n{}{}",
        super::text(&out.stdout),
        super::text(&out.stderr)
    );
    super::text(&out.stdout)
}

/// Kafka's GetOffsetShell: `partition -> offset` of `topic` at `time` (-1 latest, -2
/// earliest).
pub(crate) fn offset_shell(bootstrap: &str, topic: &str, time: i64) -> Vec<(i32, i64)> {
    let t = time.to_string();
    let out = kafka_tool(
        "org.apache.kafka.tools.GetOffsetShell",
        &[
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--time",
            &t,
        ],
    );
    let mut v: Vec<(i32, i64)> = out
        .lines()
        .filter_map(|l| {
            // topic:partition:offset
            let mut f = l.rsplitn(3, ':');
            let off = f.next()?.trim().parse().ok()?;
            let part = f.next()?.trim().parse().ok()?;
            Some((part, off))
        })
        .collect();
    v.sort();
    v
}

/// `kafka-consumer-groups --describe --group G`: per partition of `topic`, the lag the tool
/// shows (None where it shows `-`).
pub(crate) fn group_lag(bootstrap: &str, group: &str, topic: &str) -> Vec<(i32, Option<i64>)> {
    let out = kafka_tool(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        &[
            "--bootstrap-server",
            bootstrap,
            "--describe",
            "--group",
            group,
        ],
    );
    group_rows(&out, topic)
        .into_iter()
        .map(|r| (r.partition, r.lag))
        .collect()
}

/// One partition's line of `kafka-consumer-groups --describe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GroupRow {
    pub partition: i32,
    /// The group's committed offset (None: `-`, nothing committed).
    pub current: Option<i64>,
    pub log_end: Option<i64>,
    pub lag: Option<i64>,
}

/// The rows of `topic` in the output of `kafka-consumer-groups --describe` (the tool run by
/// the test, or by a scenario's `run` action into a file), by partition.
pub(crate) fn group_rows(describe: &str, topic: &str) -> Vec<GroupRow> {
    let mut v: Vec<GroupRow> = describe
        .lines()
        .filter_map(|l| {
            // GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 6 || f[1] != topic {
                return None;
            }
            Some(GroupRow {
                partition: f[2].parse().ok()?,
                current: f[3].parse().ok(),
                log_end: f[4].parse().ok(),
                lag: f[5].parse().ok(),
            })
        })
        .collect();
    v.sort_by_key(|r| r.partition);
    v
}

/// Deletes a topic a test kept (`--keep-topics`) for reading it independently.
pub(crate) fn delete_topic(bootstrap: &str, topic: &str) {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("an admin client");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let _ = rt.block_on(admin.delete_topics(&[topic], &opts));
}

/// Transaction markers of a topic, told apart with Kafka's own filter: the offsets an
/// uncommitted read skips are control records (one per transaction and partition it wrote
/// to); one that follows records a read_committed read also returned ends a committed
/// transaction, one that follows records it filtered out ends an aborted one. Per partition:
/// with one partition, these are the transactions.
pub(crate) fn markers(uncommitted: &Contents, committed: &Contents) -> (u64, u64) {
    let visible: HashSet<(i32, i64)> = committed
        .records
        .iter()
        .map(|r| (r.partition, r.offset))
        .collect();
    let read: HashSet<(i32, i64)> = uncommitted
        .records
        .iter()
        .map(|r| (r.partition, r.offset))
        .collect();
    let (mut commits, mut aborts) = (0, 0);
    for (p, (&low, &high)) in uncommitted.low.iter().zip(&uncommitted.high).enumerate() {
        let p = p as i32;
        // Whether the records since the last marker were visible to read_committed.
        let mut last: Option<bool> = None;
        for o in low..high {
            if read.contains(&(p, o)) {
                last = Some(visible.contains(&(p, o)));
            } else {
                match last.take() {
                    Some(true) => commits += 1,
                    Some(false) => aborts += 1,
                    None => {}
                }
            }
        }
    }
    (commits, aborts)
}

/// One generation of a consumer group, as its coordinator logged it: "Stabilized group G
/// generation N with M members".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Generation {
    pub generation: i32,
    pub members: u32,
    /// Its members got their assignment: the coordinator logged the leader's ("Assignment
    /// received from leader L for group G for generation N"). A member that joins while the
    /// group completes a generation sends the members' SyncGroup an error instead (members
    /// that join one after another at the start do that), but only once it is added: a new
    /// member's first JoinGroup is only given a member id, so a "joins group G in
    /// CompletingRebalance state" line alone says nothing.
    pub completed: bool,
    /// Milliseconds from the leader's assignment to the next rebalance ("Preparing to
    /// rebalance group G … with old generation N"), when one followed. The coordinator logs
    /// the assignment when it receives it, and gives it to the members only once it has
    /// stored it (a write to `__consumer_offsets`); a member that joins before then ends the
    /// generation with nothing given to anyone (Kafka 4's GroupMetadataManager, "Another
    /// member may have joined the group while we were awaiting this callback"). Seen: the
    /// second member joined 3 ms after generation 1's assignment.
    pub superseded_ms: Option<u64>,
}

/// How long storing a generation's assignment may take on a busy machine: a generation
/// superseded sooner may or may not have reached its members.
pub(crate) const STORE_MS: u64 = 1000;

impl Generation {
    /// Its members surely got their assignment: completed, and not superseded while the
    /// coordinator may still have been storing it.
    pub(crate) fn surely_given(&self) -> bool {
        self.completed && !matches!(self.superseded_ms, Some(ms) if ms <= STORE_MS)
    }
}

/// The generations whose members surely got an assignment, and those that may have: the
/// bounds an outside count puts on the rebalances a group's members saw.
pub(crate) fn given_bounds(gens: &[Generation]) -> (u64, u64) {
    let count = |f: fn(&Generation) -> bool| gens.iter().filter(|g| f(g)).count() as u64;
    (count(Generation::surely_given), count(|g| g.completed))
}

/// A broker log line's time in milliseconds of the day (`[YYYY-MM-DD HH:MM:SS,mmm]`).
pub(crate) fn log_ms(l: &str) -> Option<u64> {
    let (hms, milli) = l.get(12..24)?.split_once(',')?;
    let mut f = hms.split(':').map(|x| x.parse::<u64>().ok());
    let (h, m, s) = (f.next()??, f.next()??, f.next()??);
    Some(((h * 60 + m) * 60 + s) * 1000 + milli.parse::<u64>().ok()?)
}

/// The log files of the local broker (kafka-local's `node*.log`) when `bootstrap` is the
/// kafka-local cluster found through KAFKA_LOCAL_HOME or the repository's .cache/kafka-local
/// (its `bootstrap` file names the address); None for any other broker.
pub(crate) fn local_broker_logs(bootstrap: &str) -> Option<Vec<std::path::PathBuf>> {
    let home = std::env::var_os("KAFKA_LOCAL_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| super::repo().join(".cache/kafka-local"));
    let theirs = std::fs::read_to_string(home.join("bootstrap")).ok()?;
    let norm = |a: &str| a.trim().replace("localhost", "127.0.0.1");
    let ours: HashSet<String> = bootstrap.split(',').map(norm).collect();
    if !theirs.split(',').any(|a| ours.contains(&norm(a))) {
        return None;
    }
    let mut logs: Vec<_> = std::fs::read_dir(&home)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                // node1.log, not node1.format.log
                n.starts_with("node") && n.ends_with(".log") && n.matches('.').count() == 1
            })
        })
        .collect();
    logs.sort();
    (!logs.is_empty()).then_some(logs)
}

/// The generations of `group`, in order, from the broker's log text (Kafka 4's group
/// coordinator wording), up to the group's end: one that stabilizes once its members have
/// begun to leave for good (the last leaves, with no join after them) has no member left to
/// read in it.
pub(crate) fn group_generations(log: &str, group: &str) -> Vec<Generation> {
    let stable = format!("Stabilized group {group} generation ");
    let joins = format!(" joins group {group} in ");
    let assigned = format!(" for group {group} for generation ");
    let left = format!("[Group {group}] Member ");
    let prepare = format!("Preparing to rebalance group {group} ");
    let lines: Vec<&str> = log.lines().collect();
    let last_join = lines.iter().rposition(|l| l.contains(&joins));
    let end = lines
        .iter()
        .enumerate()
        .position(|(i, l)| {
            l.contains(&left) && l.contains(" has left group") && !last_join.is_some_and(|j| i <= j)
        })
        .unwrap_or(lines.len());
    let mut v: Vec<Generation> = Vec::new();
    // When each generation's assignment was received.
    let mut received: Vec<(i32, Option<u64>)> = Vec::new();
    for l in &lines[..end] {
        if let Some(i) = l.find(&prepare) {
            let old = l[i..]
                .split(" with old generation ")
                .nth(1)
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|n| n.parse::<i32>().ok());
            if let Some((_, Some(at))) = received.iter().find(|(g, _)| Some(*g) == old) {
                let gap = log_ms(l).map(|t| t.saturating_sub(*at));
                v.iter_mut()
                    .filter(|g| Some(g.generation) == old && g.superseded_ms.is_none())
                    .for_each(|g| g.superseded_ms = gap);
            }
        } else if let Some(i) = l.find(&stable) {
            let mut f = l[i + stable.len()..].split_whitespace();
            let (Some(n), Some("with"), Some(m)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            if let (Ok(generation), Ok(members)) = (n.parse(), m.parse()) {
                v.push(Generation {
                    generation,
                    members,
                    completed: false,
                    superseded_ms: None,
                });
            }
        } else if let Some(i) = l
            .find(&assigned)
            .filter(|_| l.contains("Assignment received from leader"))
        {
            let n = l[i + assigned.len()..].split(|c: char| !c.is_ascii_digit());
            if let Some(Ok(n)) = n.map(str::parse::<i32>).next() {
                v.iter_mut()
                    .filter(|g| g.generation == n)
                    .for_each(|g| g.completed = true);
                received.push((n, log_ms(l)));
            }
        }
    }
    v
}

/// The longest rebalance of `group` the coordinator logged, in seconds: "Preparing to
/// rebalance group G" to the next "Stabilized group G generation N", by the log's timestamps
/// (`[2026-12-01 18:31:29,166]`, millisecond resolution).
pub(crate) fn longest_group_rebalance(log: &str, group: &str) -> Option<f64> {
    let prepare = format!("Preparing to rebalance group {group} ");
    let stable = format!("Stabilized group {group} generation ");
    let mut from = None;
    let mut longest: Option<u64> = None;
    for l in log.lines() {
        if l.contains(&prepare) && from.is_none() {
            from = log_ms(l);
        } else if l.contains(&stable) {
            if let (Some(a), Some(b)) = (from.take(), log_ms(l)) {
                longest = Some(longest.unwrap_or(0).max(b.saturating_sub(a)));
            }
        }
    }
    longest.map(|ms| ms as f64 / 1e3)
}

/// The remote storage directory of the local broker when `bootstrap` is a kafka-local cluster
/// started with `--tiered` (its `tiered` file names the directory); None for any other broker.
pub(crate) fn local_broker_remote_dir(bootstrap: &str) -> Option<std::path::PathBuf> {
    let logs = local_broker_logs(bootstrap)?;
    let home = logs.first()?.parent()?.to_path_buf();
    let dir = std::fs::read_to_string(home.join("tiered")).ok()?;
    Some(std::path::PathBuf::from(dir.trim()))
}

/// Calls `f` with every record's value (empty for a tombstone) in `topic`, every partition from
/// its log start to its high watermark, read_uncommitted. Returns how many it read. Fails
/// past two minutes.
pub(crate) fn each_value(bootstrap: &str, topic: &str, mut f: impl FnMut(&[u8])) -> u64 {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "kafkabench-independent-reader")
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .expect("a consumer");
    let md = c
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .expect("metadata");
    let partitions = md.topics()[0].partitions().len() as i32;
    let mut left: HashMap<i32, i64> = HashMap::new();
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        let (low, high) = c
            .fetch_watermarks(topic, p, Duration::from_secs(10))
            .expect("watermarks");
        if high > low {
            left.insert(p, high);
        }
        tpl.add_partition_offset(topic, p, Offset::Offset(low))
            .unwrap();
    }
    c.assign(&tpl).expect("assign");
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut read = 0;
    while !left.is_empty() {
        assert!(
            Instant::now() < deadline,
            "the independent reader did not reach the end of {topic} in 120 s"
        );
        let Some(m) = c.poll(Duration::from_millis(200)) else {
            continue;
        };
        let m = m.expect("a record");
        let Some(&high) = left.get(&m.partition()) else {
            continue;
        };
        if m.offset() < high {
            f(m.payload().unwrap_or_default());
            read += 1;
        }
        if m.offset() + 1 >= high {
            left.remove(&m.partition());
        }
    }
    read
}
