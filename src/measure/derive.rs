//! What a run's threads recorded (each producer's recording, the sequence numbers read back)
//! and the one step from those recordings to a run's figures (`RunResult::derive_figures`).

use super::*;

/// What one producer thread recorded over the measured phase. Times are nanoseconds since the
/// run's clock origin.
pub struct ProducerRecording {
    /// What the run's producer figures are derived from, merged with the other threads'.
    pub raw: Recording,
    /// Sequence numbers of the records reported failed, when stamped for a consumer.
    pub failed_seqs: Vec<u64>,
    /// Transactions: commit latency, counts, the aborted sequences (None without).
    pub txn: Option<TxnRecording>,
    /// Per topic of a run over several, in the run's order (empty for one topic).
    pub by_topic: Vec<TopicTally>,
    /// When acknowledgements came and stopped, and failures by time (for the fault figures).
    pub ack_timeline: AckTimeline,
    /// The share of the measured phase the thread was on a CPU (None: not measured).
    pub busy: Option<f64>,
}

impl ProducerRecording {
    /// A producer that recorded nothing (it could not start).
    pub fn empty() -> ProducerRecording {
        ProducerRecording {
            raw: Recording::empty(),
            failed_seqs: Vec::new(),
            txn: None,
            by_topic: Vec::new(),
            ack_timeline: AckTimeline::default(),
            busy: None,
        }
    }

    /// Records a consumer is to read: every one reported (acked, or failed yet perhaps
    /// written), less those of aborted transactions, which a read_committed consumer never sees.
    pub fn expected_reads(&self) -> u64 {
        let aborted = self.txn.as_ref().map_or(0, |t| t.aborted_records);
        (self.raw.acked + self.failed_seqs.len() as u64).saturating_sub(aborted)
    }
}

/// Which sequence numbers of one producer were read back: a growable bitset, one bit per
/// record.
#[derive(Default, Clone, Debug)]
pub struct SeqSet(Vec<u64>);

impl SeqSet {
    /// Adds `seq`; true when it was there already.
    pub fn insert(&mut self, seq: u64) -> bool {
        let (w, b) = ((seq / 64) as usize, seq % 64);
        if w >= self.0.len() {
            self.0.resize(w + 1, 0);
        }
        let was = self.0[w] & (1 << b) != 0;
        self.0[w] |= 1 << b;
        was
    }

    pub fn contains(&self, seq: u64) -> bool {
        self.0
            .get((seq / 64) as usize)
            .is_some_and(|w| w & (1 << (seq % 64)) != 0)
    }

    /// Adds every sequence of `other`; returns how many were here already (read by both).
    pub fn absorb(&mut self, other: &SeqSet) -> u64 {
        if other.0.len() > self.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        let mut both = 0u64;
        for (w, o) in self.0.iter_mut().zip(&other.0) {
            both += u64::from((*w & o).count_ones());
            *w |= o;
        }
        both
    }
}

/// Everything one run's threads recorded, and what the figures are measured against.
pub struct Recordings<'a> {
    pub producers: &'a [ProducerRecording],
    pub consumer: Option<&'a ConsumerRecording>,
    pub rate: &'a RateSpec,
    /// Bytes the topic grew on disk over the measured phase, when it could be measured.
    pub disk_bytes: Option<u64>,
    /// The planned duration of the measured phase, when it has one.
    pub duration: Option<Duration>,
    /// The planned record count of the measured phase, when it has one.
    pub messages: Option<u64>,
    /// The run was cut short (interrupted, cluster lost): delivery cannot be judged.
    pub cut_short: bool,
    /// Backlog records written (and acked) before the clock started, to be read back.
    pub backlog: u64,
    /// The read side's run-level facts, when consumers ran.
    pub read_side: Option<&'a consume::ReadSide>,
    /// How many shards split the schedule (1 unsharded): the target is this run's share.
    pub shares: u32,
}

/// Lost and failed-but-delivered, record by record: a failed record that was read back is
/// not an acked one, so it must not make up for an acked record that never was. With every
/// record either acked or failed (a run that finished), the acked records read back are the
/// distinct records read back less the failed ones among them.
/// Producer `i` of `producers` wrote its stamps with id `i`.
/// Records of aborted transactions are never expected, so never lost: a read_committed
/// consumer must not see them (reading one is `aborted.read`, counted by the consumer), and
/// one it read anyway does not make up for a committed record it missed.
pub fn account(producers: &[ProducerRecording], consumer: &ConsumerRecording) -> (u64, u64) {
    let (mut failed_but_delivered, mut aborted_acked, mut aborted_seen) = (0u64, 0u64, 0u64);
    for (id, p) in producers.iter().enumerate() {
        let seen = consumer.seen.get(id);
        let aborted = |s: u64| p.txn.as_ref().is_some_and(|t| t.is_aborted(s));
        if let Some(seen) = seen {
            failed_but_delivered += p
                .failed_seqs
                .iter()
                .filter(|s| seen.contains(**s) && !aborted(**s))
                .count() as u64;
        }
        if let Some(t) = &p.txn {
            let aborted_failed = p.failed_seqs.iter().filter(|s| aborted(**s)).count() as u64;
            aborted_acked += t.aborted_records.saturating_sub(aborted_failed);
            aborted_seen += seen.map_or(0, |seen| t.aborted_seen(seen));
        }
    }
    let acked = producers
        .iter()
        .map(|p| p.raw.acked)
        .sum::<u64>()
        .saturating_sub(aborted_acked);
    let acked_read = consumer
        .consumed
        .saturating_sub(failed_but_delivered + aborted_seen);
    (acked.saturating_sub(acked_read), failed_but_delivered)
}

impl RunResult {
    /// The run's figures from its threads' recordings, merged once.
    pub fn derive_figures(&mut self, rec: &Recordings) {
        let mut all = Recording::merge(rec.producers.iter().map(|p| &p.raw));
        if let Some(c) = rec.consumer {
            all.e2e = Some(c.e2e.clone());
            if let Some(i) = Intervals::of_thread(&c.intervals, true) {
                match &mut all.intervals {
                    Some(mine) => mine.absorb(&i),
                    None => all.intervals = Some(i),
                }
            }
            if let Some(i) = &mut all.intervals {
                i.consumer = true;
            }
        }
        if let Some(i) = &mut all.intervals {
            i.backlog = rec.backlog;
        }
        let planned = series::Planned {
            rate: rec.rate,
            duration: rec.duration,
            messages: rec.messages,
            backlog: rec.backlog,
        };
        all.derive(self, &planned, rec.shares);
        self.recording.txn = txn::merge(rec.producers.iter().filter_map(|p| p.txn.as_ref()));
        let width = all
            .intervals
            .as_ref()
            .map_or(0.0, |i| i.width_ns as f64 / 1e9);
        let lag = consume::lag_measured(self, rec.backlog);
        self.set_by_partition(
            all.placed.as_ref().and_then(|p| p.over_time.as_ref()),
            rec.consumer.map(|c| &c.partitions),
            width,
            lag,
        );
        if let Some(c) = rec.consumer {
            let (lost, failed_but_delivered) = account(rec.producers, c);
            let lost = lost + rec.backlog.saturating_sub(c.backlog_read);
            self.delivery = Some(Delivery {
                consumed: c.consumed,
                lost: (!rec.cut_short).then_some(lost),
                incomplete: rec.cut_short,
                failed_but_delivered,
                duplicated: c.duplicated,
                reordered: c.reordered,
            });
        }
        if let (Some(c), Some(side)) = (rec.consumer, rec.read_side) {
            self.recording.read = Some(consume::ReadSums::of(c, side));
            if let (Some(r), Some(s)) = (&c.share, &side.share) {
                self.share = Some(ShareFigures::of(
                    r,
                    side.consumers,
                    s.ack_mode.clone(),
                    s.processing_ms,
                    s.delivery_limit,
                ));
            }
        }
        self.set_disk_total(rec.disk_bytes);
        self.derive_sides();
    }
}
