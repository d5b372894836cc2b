//! A consumer's fetchers as it sees them: whether they run before the clock, waking them at
//! the clock's start, and a partition's end known without waiting for an empty fetch. Each
//! works around a wait of librdkafka's that was measured (bench/README.md, "The read side").

use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};

use super::{Layout, Reader};
use crate::run::admin::AdminError;

/// How long the request that wakes the fetchers at the clock's start may take.
const WAKE_BOUND: Duration = Duration::from_millis(500);

impl Reader<'_> {
    /// Learns the partitions' leaders before assigning them: a partition assigned with no
    /// known leader waits 500 ms before librdkafka asks for its offset (its backoff for
    /// "no current leader"), and the verification consumer was ready 1.0–1.5 s after it was
    /// created (bench/README.md). Several topics: one request for all (librdkafka keeps what
    /// it learns). In short tries, so an interrupt is not held up; a failure is left to the
    /// assignment to report.
    pub(super) fn learn_leaders(&mut self) {
        let by = Instant::now() + Duration::from_secs(10);
        let topics = &self.job.layout.topics;
        let ask_for = topics
            .first()
            .filter(|_| topics.len() < 2)
            .map(String::as_str);
        while !self.job.shared.stopping() && Instant::now() < by {
            let Ok(md) = self
                .consumer
                .fetch_metadata(ask_for, Duration::from_millis(500))
            else {
                continue;
            };
            for t in md.topics() {
                for p in t.partitions() {
                    if let Some((_, part)) = self.job.layout.index(t.name().as_bytes(), p.id()) {
                        self.leader[part] = p.leader();
                    }
                }
            }
            break;
        }
    }

    /// Every partition of this consumer's fetches for real: it has been read (or found at its
    /// end), or a partition with the same leader has. One broker's fetcher serves all of its
    /// partitions, and its first fetch may carry only the first partition whose offset was
    /// known; an empty one is held for `fetch.wait.max.ms` (500 ms), so waiting for each
    /// partition's own end cost a second, not half of one (bench/README.md).
    pub(super) fn own_reached(&self) -> bool {
        let fetching = |leader: i32| {
            leader >= 0
                && (0..self.mine.len())
                    .any(|q| self.mine[q] && self.reached[q] && self.leader[q] == leader)
        };
        (0..self.mine.len()).all(|p| !self.mine[p] || self.reached[p] || fetching(self.leader[p]))
    }

    /// librdkafka does not wake a broker's thread when partitions are resumed: an idle one
    /// notices at its next timeout, up to a second later (0.1–0.6 s measured before a drain's
    /// first record, bench/README.md). A request to the partitions' leaders wakes them, and
    /// their fetchers start at once; a ListOffsets for the latest offsets is a cheap one (its
    /// answer is not used; one round trip, while the first fetch is under way).
    pub(super) fn wake_fetchers(&mut self) {
        let mut tpl = TopicPartitionList::new();
        for (t, p) in &self.m.assigned {
            let _ = tpl.add_partition_offset(t, *p, Offset::End);
        }
        if tpl.count() > 0 {
            let _ = self.consumer.offsets_for_times(tpl, WAKE_BOUND);
        }
    }

    /// With nothing left to read, the partitions whose every record up to the high watermark
    /// of their last fetch response is read are at their end. librdkafka says so only with
    /// an empty fetch response, which the broker holds for `fetch.wait.max.ms` (500 ms) once
    /// no partition has data: a drain's last partition reported its end 0.5 s after its last
    /// record was read (bench/README.md). The watermark is librdkafka's cached one: no request.
    pub(super) fn ends_by_watermark(&mut self) {
        let layout = &self.job.layout;
        for part in 0..self.mine.len() {
            if !self.mine[part] || self.job.reads.ended(part) {
                continue;
            }
            let p = part % layout.partitions.max(1) as usize;
            let topic = &layout.topics[part / layout.partitions.max(1) as usize];
            let Some(high) = self.native.cached_end(topic, p as i32) else {
                continue;
            };
            if self.job.reads.next(part) >= high {
                self.partition_end(part);
            }
        }
    }
}

/// The first offset of each run partition not yet written: an existing topic's ends, read
/// before the run writes anything (records below are the topic's own, counted unverified).
pub(in crate::run) fn ends(config: &ClientConfig, layout: &Layout) -> Result<Vec<i64>, AdminError> {
    let c: BaseConsumer = config.create().map_err(AdminError::EndsConsumer)?;
    let mut out = Vec::with_capacity(layout.len());
    for t in &layout.topics {
        for p in 0..layout.partitions {
            let (_, high) =
                c.fetch_watermarks(t, p, Duration::from_secs(10))
                    .map_err(|source| AdminError::End {
                        topic: t.clone(),
                        partition: p,
                        source,
                    })?;
            out.push(high.max(0));
        }
    }
    Ok(out)
}
