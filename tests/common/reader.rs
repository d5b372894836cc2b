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
pub struct Stamped {
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
pub struct Contents {
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
pub fn read_topic(bootstrap: &str, topic: &str, isolation: &str) -> Contents {
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
    pub fn measured(&self) -> impl Iterator<Item = &Stamped> {
        self.records
            .iter()
            .filter(|r| r.measured && !r.backlog && !r.aborted)
    }

    /// Distinct measured records (producer, sequence).
    pub fn distinct_measured(&self) -> u64 {
        self.measured()
            .map(|r| (r.producer, r.seq))
            .collect::<HashSet<_>>()
            .len() as u64
    }

    /// Measured records present more than once: each copy after the first.
    pub fn duplicates(&self) -> u64 {
        let all = self.measured().count() as u64;
        all - self.distinct_measured()
    }

    /// Measured records that come, in a partition's offset order, after a record of the same
    /// producer with a higher sequence (copies of a record already seen are duplicates, not
    /// reorderings).
    pub fn reordered(&self) -> u64 {
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
    pub fn aborted(&self) -> u64 {
        self.records.iter().filter(|r| r.aborted).count() as u64
    }

    /// Records in the topic, all partitions: high watermark less log start, markers included.
    pub fn offsets(&self) -> i64 {
        self.high.iter().zip(&self.low).map(|(h, l)| h - l).sum()
    }
}

/// Runs a Kafka tool class from the local broker's jars (`scripts/kafka-local tool`) and
/// returns its standard output; fails the test when it fails.
pub fn kafka_tool(class: &str, args: &[&str]) -> String {
    let out = Command::new(super::repo().join("scripts/kafka-local"))
        .arg("tool")
        .arg(class)
        .args(args)
        .output()
        .expect("kafka-local tool runs");
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
pub fn offset_shell(bootstrap: &str, topic: &str, time: i64) -> Vec<(i32, i64)> {
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
pub fn group_lag(bootstrap: &str, group: &str, topic: &str) -> Vec<(i32, Option<i64>)> {
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
    let mut v: Vec<(i32, Option<i64>)> = out
        .lines()
        .filter_map(|l| {
            // GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 6 || f[1] != topic {
                return None;
            }
            Some((f[2].parse().ok()?, f[5].parse().ok()))
        })
        .collect();
    v.sort();
    v
}
