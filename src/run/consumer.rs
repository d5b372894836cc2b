//! The consumer: reads the run's topic back, measures end-to-end latency from each record's
//! intended send time, and verifies delivery (lost, duplicated, reordered).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use super::shared::Shared;
use super::stamp;
use crate::measure::{record, ConsumerRecording, IntervalRecorder};

pub struct ConsumerJob {
    pub config: ClientConfig,
    /// Every topic of the run, read together.
    pub topics: Vec<String>,
    pub partitions: i32,
    pub shared: Arc<Shared>,
    pub barrier: Arc<Barrier>,
    /// After the producers finish, how long to keep reading for stragglers.
    pub drain: Duration,
    /// Width of the time series' intervals.
    pub interval: Duration,
}

/// What the consumer measured, and the first error it met (reported as a note).
pub struct ConsumerOutcome {
    pub recording: ConsumerRecording,
    pub error: Option<String>,
}

pub fn run(job: ConsumerJob) -> ConsumerOutcome {
    let mut out = ConsumerOutcome {
        recording: ConsumerRecording::empty(),
        error: None,
    };
    let consumer: BaseConsumer = match job.config.create() {
        Ok(c) => c,
        Err(e) => {
            job.barrier.wait();
            job.barrier.wait();
            out.error = Some(format!("cannot create consumer: {e}"));
            return out;
        }
    };
    let mut tpl = TopicPartitionList::new();
    for topic in &job.topics {
        for p in 0..job.partitions {
            let _ = tpl.add_partition_offset(topic, p, Offset::Beginning);
        }
    }
    // A run over several topics counts what it reads per topic, found by name.
    let topic_index: HashMap<&str, usize> = job
        .topics
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let many = job.topics.len() > 1;
    if many {
        out.recording.consumed_by_topic = vec![0; job.topics.len()];
    }
    if let Err(e) = consumer.assign(&tpl) {
        job.barrier.wait();
        job.barrier.wait();
        out.error = Some(format!("cannot assign partitions: {e}"));
        return out;
    }
    // Let the fetchers start before the measured phase, so e2e does not include connecting.
    let ready_by = Instant::now() + Duration::from_secs(2);
    while Instant::now() < ready_by {
        if consumer.poll(Duration::from_millis(50)).is_some() {
            break;
        }
        if consumer
            .position()
            .is_ok_and(|p| p.elements().iter().all(|e| e.offset() != Offset::Invalid))
        {
            break;
        }
    }
    let mut intervals = IntervalRecorder::new(job.interval.as_nanos() as u64);
    job.barrier.wait();
    job.barrier.wait();
    intervals.start(job.shared.measure_origin());

    let t0 = job.shared.t0;
    let mut last_seq: HashMap<(u32, usize, i32), u64> = HashMap::new();
    let mut drain_deadline: Option<Instant> = None;
    loop {
        if job.shared.interrupted() || job.shared.lost() {
            break;
        }
        if job.shared.producers_done.load(Ordering::Acquire) {
            let expected = job.shared.expected.load(Ordering::Acquire);
            if out.recording.consumed >= expected {
                break;
            }
            let d = *drain_deadline.get_or_insert_with(|| Instant::now() + job.drain);
            if Instant::now() >= d {
                break;
            }
        }
        let Some(res) = consumer.poll(Duration::from_millis(50)) else {
            continue;
        };
        let m = match res {
            Ok(m) => m,
            Err(e) => {
                out.error.get_or_insert_with(|| format!("consumer: {e}"));
                continue;
            }
        };
        let now = t0.elapsed().as_nanos() as u64;
        let Some(stamp) = m
            .headers()
            .and_then(|hs| hs.iter().find(|h| h.key == stamp::HEADER))
            .and_then(|h| h.value)
            .and_then(stamp::decode)
        else {
            continue; // not ours
        };
        job.shared.consumed_any.fetch_add(1, Ordering::Release);
        if !stamp.measured {
            continue; // a warm-up record
        }
        let rec = &mut out.recording;
        if rec
            .seen
            .entry(stamp.producer)
            .or_default()
            .insert(stamp.seq)
        {
            rec.duplicated += 1;
            continue;
        }
        rec.consumed += 1;
        let topic = if many {
            topic_index.get(m.topic()).copied().unwrap_or(0)
        } else {
            0
        };
        if many {
            rec.consumed_by_topic[topic] += 1;
        }
        let e2e = now.saturating_sub(stamp.intended_ns);
        record(&mut rec.e2e, e2e);
        intervals.consumed(now, e2e);
        let last = last_seq
            .entry((stamp.producer, topic, m.partition()))
            .or_insert(stamp.seq);
        if stamp.seq < *last {
            rec.reordered += 1;
        } else {
            *last = stamp.seq;
        }
    }
    out.recording.intervals = intervals.finish();
    out
}
