//! The consumer: reads the run's topic back, measures end-to-end latency from each record's
//! intended send time, and verifies delivery (lost, duplicated, reordered).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use super::producer::{E2E_HEADER, E2E_HEADER_LEN};
use super::Shared;
use crate::measure::{new_histogram, record};

pub struct ConsumerJob {
    pub config: ClientConfig,
    pub topic: String,
    pub partitions: i32,
    pub shared: Arc<Shared>,
    pub barrier: Arc<Barrier>,
    /// After the producers finish, how long to keep reading for stragglers.
    pub drain: Duration,
}

pub struct ConsumerOutcome {
    pub e2e: Histogram<u64>,
    pub consumed: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub error: Option<String>,
}

/// Which sequence numbers of one producer were seen: a growable bitset, 1 bit per record.
#[derive(Default)]
struct Seen(Vec<u64>);

impl Seen {
    /// True when `seq` was already seen.
    fn insert(&mut self, seq: u64) -> bool {
        let (w, b) = ((seq / 64) as usize, seq % 64);
        if w >= self.0.len() {
            self.0.resize(w + 1, 0);
        }
        let was = self.0[w] & (1 << b) != 0;
        self.0[w] |= 1 << b;
        was
    }
}

pub fn run(job: ConsumerJob) -> ConsumerOutcome {
    let mut out = ConsumerOutcome {
        e2e: new_histogram(),
        consumed: 0,
        duplicated: 0,
        reordered: 0,
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
    for p in 0..job.partitions {
        let _ = tpl.add_partition_offset(&job.topic, p, Offset::Beginning);
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
    job.barrier.wait();
    job.barrier.wait();

    let t0 = job.shared.t0;
    let mut seen: HashMap<u32, Seen> = HashMap::new();
    let mut last_seq: HashMap<(u32, i32), u64> = HashMap::new();
    let mut drain_deadline: Option<Instant> = None;
    loop {
        if job.shared.interrupted() || job.shared.lost() {
            break;
        }
        if job.shared.producers_done.load(Ordering::Acquire) {
            let expected = job.shared.expected.load(Ordering::Acquire);
            if out.consumed >= expected {
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
        let Some(h) = m
            .headers()
            .and_then(|hs| hs.iter().find(|h| h.key == E2E_HEADER))
            .and_then(|h| h.value)
        else {
            continue;
        };
        if h.len() == E2E_HEADER_LEN {
            job.shared.consumed_any.fetch_add(1, Ordering::Release);
        }
        if h.len() != E2E_HEADER_LEN || h[20] == 0 {
            continue; // not ours, or a warm-up record
        }
        let intended = u64::from_le_bytes(h[..8].try_into().unwrap_or_default());
        let producer = u32::from_le_bytes(h[8..12].try_into().unwrap_or_default());
        let seq = u64::from_le_bytes(h[12..20].try_into().unwrap_or_default());
        if seen.entry(producer).or_default().insert(seq) {
            out.duplicated += 1;
            continue;
        }
        out.consumed += 1;
        record(&mut out.e2e, now.saturating_sub(intended));
        let last = last_seq.entry((producer, m.partition())).or_insert(seq);
        if seq < *last {
            out.reordered += 1;
        } else {
            *last = seq;
        }
    }
    out
}
