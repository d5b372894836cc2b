//! The control topic of a sharded run (docs/distributed.md): ready messages, agreed start
//! instants and results, carried by the one thing every shard can reach, the cluster under
//! test. One partition, so every participant reads the same messages in the same order.

use std::collections::VecDeque;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Message as _, Offset, TopicPartitionList};
use serde::{Deserialize, Serialize};

use super::error::ShardError;
use crate::measure::RunResult;
use crate::model::Props;
use crate::run::admin::{self, Admin};
pub(crate) use crate::run::{Phase, Round};

/// The protocol's version: a participant refuses messages of another. Version 2: the
/// collector names each round (a run, a trial, a probe) and every later message is the
/// round's, by its number.
pub(crate) const VERSION: u32 = 2;
/// A result travels in parts of at most this many bytes, well under a broker's default
/// message size limit (1 MiB), so no topic or broker setting has to change.
const PART_BYTES: usize = 256 * 1024;
/// How far ahead of the last ready message an agreed start lies: long enough for the
/// message to reach every shard, short enough not to be waited for.
pub(crate) const START_LEAD: Duration = Duration::from_millis(750);
const SEND_BOUND: Duration = Duration::from_secs(15);

/// The name of a run's control topic.
pub(crate) fn topic_name(run_id: &str) -> String {
    format!("kafkabench-control-{run_id}")
}

/// One message on the control topic.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Message {
    /// A shard started: which one, of how many, and the digest of what it runs.
    Hello {
        version: u32,
        /// This process's own random id: its messages are told from an earlier run's.
        session: u64,
        shard: u32,
        shards: u32,
        hash: String,
        /// `--scale`: the same file at another scale is another run.
        scale: f64,
        host: String,
    },
    /// Round `round` (from 1) is `of`, and the collector created its topics: every shard
    /// runs it.
    Topics {
        collector: u64,
        round: u32,
        of: Round,
    },
    /// Every round is over: the shards stop.
    Finished { collector: u64 },
    /// A shard's threads of round `round` are at the barrier.
    Ready {
        session: u64,
        shard: u32,
        round: u32,
        phase: Phase,
    },
    /// The collector's agreed start of a barrier: a wall-clock instant (ms since the epoch).
    Start {
        collector: u64,
        round: u32,
        phase: Phase,
        at_unix_ms: u64,
    },
    /// Part `part` of `parts` of a shard's result of round `round` (JSON of its
    /// `RunResult`).
    Result {
        session: u64,
        shard: u32,
        round: u32,
        part: u32,
        parts: u32,
        data: String,
    },
    /// A shard cannot go on; `round` is the round it was at, if any.
    Failed {
        session: u64,
        shard: u32,
        round: Option<u32>,
        reason: String,
    },
    /// The collector refuses a shard (another scenario, another shard count, a duplicate).
    Refused {
        collector: u64,
        shard: u32,
        reason: String,
    },
    /// The collector gives up: every shard stops.
    Abort { collector: u64, reason: String },
}

impl Message {
    /// The collector session that wrote it, for a collector's message.
    pub(crate) fn collector(&self) -> Option<u64> {
        match self {
            Message::Topics { collector, .. }
            | Message::Finished { collector }
            | Message::Start { collector, .. }
            | Message::Refused { collector, .. }
            | Message::Abort { collector, .. } => Some(*collector),
            _ => None,
        }
    }
}

/// A random id for one participant process.
pub(crate) fn new_session() -> u64 {
    crate::random::fresh_u64()
}

/// A participant's connection to the control topic.
pub(crate) struct Control {
    producer: BaseProducer,
    consumer: BaseConsumer,
    topic: String,
    /// Messages read and not yet taken.
    pending: VecDeque<Message>,
    /// Records on the topic that are not this protocol's (said once, then ignored).
    pub foreign: u64,
}

impl Control {
    /// Creates the control topic unless it exists (the first participant does), and reads it
    /// from its beginning.
    pub(crate) async fn open(
        admin: &Admin,
        props: &Props,
        run_id: &str,
    ) -> Result<Control, ShardError> {
        let topic = topic_name(run_id);
        admin
            .ensure_control_topic(&topic)
            .await
            .map_err(|e| ShardError::ControlTopic(e.to_string()))?;
        let base = admin::config(props);
        let mut p = base.clone();
        p.set("acks", "all").set("linger.ms", "0");
        let producer: BaseProducer = p.create().map_err(|source| ShardError::Client {
            client: "producer",
            source,
        })?;
        let mut c: ClientConfig = base;
        c.set("group.id", format!("kafkabench-control-{run_id}"))
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "false")
            .set("fetch.wait.max.ms", "50");
        let consumer: BaseConsumer = c.create().map_err(|source| ShardError::Client {
            client: "consumer",
            source,
        })?;
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&topic, 0, Offset::Beginning)
            .map_err(ShardError::Partition)?;
        consumer
            .assign(&tpl)
            .map_err(|source| ShardError::Unreadable {
                topic: topic.clone(),
                source,
            })?;
        Ok(Control {
            producer,
            consumer,
            topic,
            pending: VecDeque::new(),
            foreign: 0,
        })
    }

    pub(crate) fn topic(&self) -> &str {
        &self.topic
    }

    /// Sends a message and waits until the cluster has it.
    pub(crate) fn send(&self, m: &Message) -> Result<(), ShardError> {
        let text = serde_json::to_string(m).map_err(ShardError::Encode)?;
        let key = kind_of(m);
        let mut record = BaseRecord::<str, str>::to(&self.topic)
            .key(key)
            .payload(&text);
        let until = Instant::now() + SEND_BOUND;
        loop {
            match self.producer.send(record) {
                Ok(()) => break,
                Err((e, r)) if Instant::now() < until => {
                    let _ = e;
                    record = r;
                    self.producer.poll(Duration::from_millis(50));
                }
                Err((e, _)) => return Err(ShardError::Send(e)),
            }
        }
        self.producer
            .flush(SEND_BOUND)
            .map_err(ShardError::NotTaken)
    }

    /// Sends a shard's result of one run, in parts.
    pub(crate) fn send_result(
        &self,
        session: u64,
        shard: u32,
        round: u32,
        r: &RunResult,
    ) -> Result<(), ShardError> {
        let json = serde_json::to_string(r).map_err(ShardError::Encode)?;
        let parts = split(&json, PART_BYTES);
        let n = parts.len() as u32;
        for (k, data) in parts.into_iter().enumerate() {
            self.send(&Message::Result {
                session,
                shard,
                round,
                part: k as u32,
                parts: n,
                data: data.to_string(),
            })?;
        }
        Ok(())
    }

    /// The next message, waiting until `until` at most (None then), in short polls so that
    /// `stop` (an interrupt) is seen at once.
    pub(crate) fn next(
        &mut self,
        until: Instant,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Message>, ShardError> {
        loop {
            if let Some(m) = self.pending.pop_front() {
                return Ok(Some(m));
            }
            if stop() || Instant::now() >= until {
                return Ok(None);
            }
            let wait = until
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(100));
            self.fill(wait)?;
        }
    }

    /// Polls one record into `pending` (a foreign one is counted, not kept); its offset.
    fn fill(&mut self, wait: Duration) -> Result<Option<i64>, ShardError> {
        match self.consumer.poll(wait) {
            Some(Err(e)) if e.rdkafka_error_code().is_some_and(is_fatal) => {
                Err(ShardError::Reading(e))
            }
            None | Some(Err(_)) => Ok(None),
            Some(Ok(record)) => {
                let parsed = record
                    .payload()
                    .and_then(|p| serde_json::from_slice::<Message>(p).ok());
                match parsed {
                    Some(m) => self.pending.push_back(m),
                    None => self.foreign += 1,
                }
                Ok(Some(record.offset()))
            }
        }
    }

    /// Reads everything the topic holds when called (kept for `next`, in order) and returns
    /// a copy: what earlier participants already said.
    pub(crate) fn catch_up(&mut self, stop: &dyn Fn() -> bool) -> Result<Vec<Message>, ShardError> {
        let (_, high) = self
            .consumer
            .fetch_watermarks(&self.topic, 0, SEND_BOUND)
            .map_err(|source| ShardError::Unreadable {
                topic: self.topic.clone(),
                source,
            })?;
        let until = Instant::now() + SEND_BOUND;
        let mut last = -1;
        while last + 1 < high && Instant::now() < until && !stop() {
            if let Some(offset) = self.fill(Duration::from_millis(100))? {
                last = offset;
            }
        }
        Ok(self.pending.iter().cloned().collect())
    }

    /// Waits for the first message `want` accepts; a message `fatal` names ends the wait
    /// with its reason. Every other message is kept for later, in order.
    pub(crate) fn wait_for<T>(
        &mut self,
        until: Instant,
        stop: &dyn Fn() -> bool,
        mut want: impl FnMut(&Message) -> Option<T>,
        fatal: impl Fn(&Message) -> Option<ShardError>,
    ) -> Result<Option<T>, ShardError> {
        let mut kept = VecDeque::new();
        let found = loop {
            match self.next(until, stop) {
                Err(e) => break Err(e),
                Ok(None) => break Ok(None),
                Ok(Some(m)) => {
                    if let Some(reason) = fatal(&m) {
                        break Err(reason);
                    }
                    if let Some(t) = want(&m) {
                        break Ok(Some(t));
                    }
                    kept.push_back(m);
                }
            }
        };
        // What was not wanted now goes back in front, in its order.
        while let Some(m) = kept.pop_back() {
            self.pending.push_front(m);
        }
        found
    }
}

/// The record key of a message: its kind, for a person reading the topic.
fn kind_of(m: &Message) -> &'static str {
    match m {
        Message::Hello { .. } => "hello",
        Message::Topics { .. } => "topics",
        Message::Finished { .. } => "finished",
        Message::Ready { .. } => "ready",
        Message::Start { .. } => "start",
        Message::Result { .. } => "result",
        Message::Failed { .. } => "failed",
        Message::Refused { .. } => "refused",
        Message::Abort { .. } => "abort",
    }
}

/// Errors after which reading the control topic cannot go on.
fn is_fatal(code: rdkafka::types::RDKafkaErrorCode) -> bool {
    use rdkafka::types::RDKafkaErrorCode as C;
    matches!(
        code,
        C::UnknownTopicOrPartition | C::TopicAuthorizationFailed | C::Fatal
    )
}

/// `text` in pieces of at most `max` bytes, cut between characters.
fn split(text: &str, max: usize) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = text;
    while rest.len() > max {
        let mut cut = max;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (head, tail) = rest.split_at(cut);
        parts.push(head);
        rest = tail;
    }
    parts.push(rest);
    parts
}

/// Now as milliseconds since the epoch.
pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Sleeps until the wall-clock instant `at_unix_ms`, in short steps so `stop` is seen; true
/// when it was reached.
pub(crate) fn sleep_until(at_unix_ms: u64, stop: &dyn Fn() -> bool) -> bool {
    loop {
        if stop() {
            return false;
        }
        let now = unix_ms();
        if now >= at_unix_ms {
            return true;
        }
        std::thread::sleep(Duration::from_millis((at_unix_ms - now).min(50)));
    }
}

/// A shard's result of one run put back together from its parts (any order); None until
/// every part is there.
#[derive(Default)]
pub(crate) struct Parts {
    parts: Vec<Option<String>>,
}

impl Parts {
    /// Adds a part; the whole result once complete, or why the parts do not fit.
    pub(crate) fn add(
        &mut self,
        part: u32,
        parts: u32,
        data: String,
    ) -> Option<Result<RunResult, ShardError>> {
        if parts == 0 || part >= parts || parts > 100_000 {
            return Some(Err(ShardError::NotAPart { part, parts }));
        }
        if self.parts.len() != parts as usize {
            self.parts = vec![None; parts as usize];
        }
        self.parts[part as usize] = Some(data);
        if self.parts.iter().any(Option::is_none) {
            return None;
        }
        let json: String = self.parts.iter().flatten().map(String::as_str).collect();
        Some(serde_json::from_str(&json).map_err(ShardError::ResultUnreadable))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::ProbeRound;

    #[test]
    fn a_result_split_into_parts_reads_back_whole_in_any_order() {
        let r = RunResult {
            label: "é".repeat(300_000),
            sent: 7,
            ..RunResult::default()
        };
        let json = serde_json::to_string(&r).unwrap();
        let parts = split(&json, PART_BYTES);
        assert!(parts.len() > 2);
        assert!(parts.iter().all(|p| p.len() <= PART_BYTES));
        let n = parts.len() as u32;
        let mut whole = Parts::default();
        let mut got = None;
        for k in (0..parts.len()).rev() {
            got = whole.add(k as u32, n, parts[k].to_string());
        }
        let back = got.unwrap().unwrap();
        assert_eq!((back.sent, back.label.len()), (7, r.label.len()));
    }

    #[test]
    fn a_part_that_does_not_fit_is_refused_not_trusted() {
        let mut whole = Parts::default();
        assert!(matches!(whole.add(3, 2, String::new()), Some(Err(_))));
        assert!(matches!(whole.add(0, 0, String::new()), Some(Err(_))));
        assert!(matches!(whole.add(0, 1, "{not json".into()), Some(Err(_))));
    }

    #[test]
    fn messages_read_as_they_are_written() {
        let m = Message::Start {
            collector: 9,
            round: 2,
            phase: Phase::Measure,
            at_unix_ms: 1_700_000_000_000,
        };
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(
            text,
            r#"{"kind":"start","collector":9,"round":2,"phase":"measure","at_unix_ms":1700000000000}"#
        );
        assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), m);
        let probe = Message::Topics {
            collector: 9,
            round: 5,
            of: Round {
                trial: Some((2, 6)),
                ..Round::of(1)
            }
            .probe(ProbeRound::new(3, None, 1500.0)),
        };
        let text = serde_json::to_string(&probe).unwrap();
        assert_eq!(
            text,
            r#"{"kind":"topics","collector":9,"round":5,"of":{"run":1,"trial":[2,6],"probe":{"number":3,"suffix":"-p3","rate":1500.0}}}"#
        );
        assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), probe);
    }
}
