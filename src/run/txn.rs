//! A transactional producer's schedule: when a transaction begins and ends, which ones abort,
//! and the client calls that carry it out.
//!
//! A transaction begins with its first record (none is left open and empty) and ends after
//! `transaction = N` records of this producer, or once `transaction = T` has passed since it
//! began. Which transactions abort is decided by their index alone (`aborts`), so the producer
//! knows at the first record, stamps the records it will abort, and the verifier knows
//! which sequence numbers never count.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;

use super::events::Events;
use super::pacer::Share;
use super::shared::Shared;
use crate::measure::{record, TxnRecording};
use crate::model::{TxnSize, TxnSpec};
use crate::native::producer::TxnError;

/// One transaction call blocks at most this long before it is resumed, so a stop (Ctrl-C, a
/// lost cluster) is seen between tries; librdkafka resumes a call that timed out.
const CALL_SLICE_MS: i32 = 500;
/// How long an interrupted run still waits for its last commit (a person is waiting).
const INTERRUPTED_WAIT: Duration = Duration::from_secs(5);
/// Abort fractions are kept in parts per million, so the schedule is integer arithmetic.
const PPM: u64 = 1_000_000;

/// Whether transaction `index` aborts: exactly floor(n · fraction) of the first n do, evenly
/// spread (with 10 %, transactions 9, 19, 29, …).
pub(super) fn aborts(index: u64, abort_ppm: u64) -> bool {
    (index + 1) * abort_ppm / PPM > index * abort_ppm / PPM
}

/// The open transaction.
struct Open {
    aborting: bool,
    first_seq: u64,
    /// The producer's acknowledged count when it began: its own acknowledged records are
    /// what an abort makes unreadable.
    acked_before: u64,
    records: u64,
    /// When a time-bounded transaction ends (ns since t0); u64::MAX for a counted one.
    due_ns: u64,
}

pub(super) struct Txn {
    size: TxnSize,
    abort_ppm: u64,
    /// The next transaction's index within the phase.
    index: u64,
    open: Option<Open>,
    /// Only the measured phase's transactions are recorded.
    measured: bool,
    pub rec: TxnRecording,
    /// How long a commit may take (the delivery timeout, as for the final drain).
    timeout: Duration,
    shared: Arc<Shared>,
    /// The run's consumers read committed records only: an aborted transaction's records
    /// leave their lag when it aborts.
    readers_skip_aborted: bool,
}

impl Txn {
    pub(super) fn new(
        spec: &TxnSpec,
        timeout: Duration,
        shared: Arc<Shared>,
        readers_skip_aborted: bool,
    ) -> Txn {
        Txn {
            readers_skip_aborted,
            size: spec.size.clone(),
            abort_ppm: (spec.abort.clamp(0.0, 1.0) * PPM as f64).round() as u64,
            index: 0,
            open: None,
            measured: false,
            rec: TxnRecording::default(),
            timeout,
            shared,
        }
    }

    /// A phase starts: the schedule counts its transactions from 0.
    pub(super) fn start_phase(&mut self, measured: bool) {
        self.index = 0;
        self.measured = measured;
    }

    /// When the open transaction's time is up, if it is bounded by time.
    #[inline]
    pub(super) fn due(&self) -> Option<u64> {
        self.open
            .as_ref()
            .map(|o| o.due_ns)
            .filter(|d| *d != u64::MAX)
    }

    /// Before record `seq` is sent at `now`: ends the transaction whose time is up, begins one
    /// when none is open. Returns whether the record's transaction will abort.
    #[inline]
    pub(super) fn before(&mut self, ev: &mut Events, now: u64, seq: u64) -> Result<bool, String> {
        if self.open.as_ref().is_some_and(|o| now >= o.due_ns) {
            self.end(ev, seq)?;
        }
        if let Some(o) = &self.open {
            return Ok(o.aborting);
        }
        ev.producer
            .begin_transaction()
            .map_err(|e| format!("begin_transaction failed: {}", explain(&e)))?;
        let aborting = aborts(self.index, self.abort_ppm);
        let due_ns = match self.size {
            TxnSize::Duration(d) => now.saturating_add(d.as_nanos() as u64),
            TxnSize::Messages(_) => u64::MAX,
        };
        self.index += 1;
        self.open = Some(Open {
            aborting,
            first_seq: seq,
            acked_before: ev.rec.acked,
            records: 0,
            due_ns,
        });
        Ok(aborting)
    }

    /// After a record was handed to the client (`next_seq` is the one after it): ends a
    /// counted transaction once it holds its records.
    #[inline]
    pub(super) fn after(&mut self, ev: &mut Events, next_seq: u64) -> Result<(), String> {
        let Some(o) = &mut self.open else {
            return Ok(());
        };
        o.records += 1;
        match self.size {
            TxnSize::Messages(n) if o.records >= n => self.end(ev, next_seq),
            _ => Ok(()),
        }
    }

    /// Ends the open transaction as the schedule says, if one is open: the end of a phase,
    /// or a time-bounded transaction whose time came while the sender waited.
    /// Its records are delivered first (their acks recorded as usual): librdkafka would flush
    /// them inside the call without serving their delivery reports, which only this thread
    /// does. Commit latency runs from here to the commit's return, as an application waits.
    pub(super) fn end(&mut self, ev: &mut Events, next_seq: u64) -> Result<(), String> {
        let Some(o) = self.open.take() else {
            return Ok(());
        };
        let shared = self.shared.clone();
        if shared.lost() {
            // Nothing will be committed on a cluster that is gone; the run reports the loss.
            return Ok(());
        }
        let started = ev.now_ns();
        if !ev.drain(self.timeout) && !shared.lost() {
            return Err(format!(
                "a transaction's records were still undelivered after {}s",
                self.timeout.as_secs()
            ));
        }
        let seqs = o.first_seq..next_seq;
        let records = next_seq - o.first_seq;
        let result = if o.aborting {
            call(&shared, self.timeout, |ms| {
                ev.producer.abort_transaction(ms)
            })
        } else {
            call(&shared, self.timeout, |ms| {
                ev.producer.commit_transaction(ms)
            })
        };
        match result {
            Ok(()) if self.measured && o.aborting => {
                if self.readers_skip_aborted {
                    let n = ev.rec.acked.saturating_sub(o.acked_before);
                    let now = ev.now_ns();
                    ev.rec.intervals.unreadable(now, n);
                }
                self.rec.aborted += 1;
                self.rec.aborted_records += records;
                self.rec.aborted_seqs.push(seqs);
            }
            Ok(()) if self.measured => {
                record(&mut self.rec.commit, ev.now_ns().saturating_sub(started));
                self.rec.committed += 1;
                self.rec.committed_records += records;
            }
            Ok(()) => {}
            Err(e) => {
                let what = if o.aborting { "abort" } else { "commit" };
                let mut msg = format!("{what}_transaction failed: {}", explain(&e));
                if e.requires_abort && !e.fatal {
                    // The records were written but will never be committed: like a scheduled
                    // abort, they are not expected by the consumer.
                    let aborted = call(&shared, self.timeout, |ms| {
                        ev.producer.abort_transaction(ms)
                    });
                    msg.push_str(match aborted {
                        Ok(()) => "; the transaction was aborted",
                        Err(_) => "; aborting it failed too",
                    });
                    if self.measured {
                        if self.readers_skip_aborted && aborted.is_ok() {
                            let n = ev.rec.acked.saturating_sub(o.acked_before);
                            let now = ev.now_ns();
                            ev.rec.intervals.unreadable(now, n);
                        }
                        self.rec.aborted += 1;
                        self.rec.aborted_records += records;
                        self.rec.aborted_seqs.push(seqs);
                    }
                }
                return Err(msg);
            }
        }
        Ok(())
    }
}

/// Calls a transaction call in slices of [`CALL_SLICE_MS`], resuming it after each timeout,
/// until it succeeds, fails for real, the cluster is lost, or `timeout` (5 s once
/// interrupted) passes.
pub(super) fn call(
    shared: &Shared,
    timeout: Duration,
    op: impl Fn(i32) -> Result<(), TxnError>,
) -> Result<(), TxnError> {
    let mut deadline = Instant::now() + timeout;
    loop {
        match op(CALL_SLICE_MS) {
            Err(e) if e.retriable && !e.fatal && !e.requires_abort => {
                if shared.interrupted() {
                    deadline = deadline.min(Instant::now() + INTERRUPTED_WAIT);
                }
                if shared.lost() || Instant::now() >= deadline {
                    return Err(e);
                }
            }
            other => return other,
        }
    }
}

/// The producer's configuration with its transactional.id: the user's (with `-k` appended
/// when several producers would share it, as two instances of one id fence each other), or
/// kafkabench's own `kb-<topic>-<k>`, unique per run (the topic name carries the run id) and
/// producer.
pub(super) fn with_transactional_id(
    config: &ClientConfig,
    topic: &str,
    share: Share,
) -> ClientConfig {
    let mut c = config.clone();
    let id = match config.get("transactional.id") {
        Some(user) if share.of == 1 => user.to_string(),
        Some(user) => format!("{user}-{}", share.index),
        None => format!("kb-{topic}-{}", share.index),
    };
    c.set("transactional.id", id);
    c
}

/// A transaction error in words, with what it usually means.
pub(super) fn explain(e: &TxnError) -> String {
    use rdkafka::types::RDKafkaErrorCode as C;
    let hint = match e.code {
        C::InvalidProducerEpoch | C::ProducerFenced => {
            " (fenced: another producer with the same transactional.id started)"
        }
        C::TransactionCoordinatorFenced => " (the transaction coordinator moved)",
        C::TransactionalIdAuthorizationFailed => {
            " (the principal may not use this transactional.id: an ACL on TransactionalId)"
        }
        C::CoordinatorNotAvailable => {
            " (no transaction coordinator: the cluster may have fewer brokers than \
             transaction.state.log.replication.factor)"
        }
        C::InvalidTransactionTimeout => {
            " (transaction.timeout.ms is above the broker's transaction.max.timeout.ms, 15 minutes \
             by default)"
        }
        C::OperationTimedOut | C::RequestTimedOut => " (timed out)",
        _ => "",
    };
    let kind = if e.fatal {
        "fatal: "
    } else if e.requires_abort {
        "abortable: "
    } else {
        ""
    };
    format!("{kind}{e}{hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(fraction: f64, n: u64) -> Vec<u64> {
        let ppm = (fraction * PPM as f64).round() as u64;
        (0..n).filter(|i| aborts(*i, ppm)).collect()
    }

    #[test]
    fn ten_percent_aborts_every_tenth_transaction() {
        assert_eq!(schedule(0.10, 40), vec![9, 19, 29, 39]);
    }

    #[test]
    fn the_first_n_transactions_abort_floor_of_n_times_the_fraction() {
        for (fraction, percent) in [
            (0.0, 0),
            (0.01, 1),
            (0.1, 10),
            (0.25, 25),
            (0.5, 50),
            (1.0, 100),
        ] {
            for n in [1, 7, 10, 99, 1000] {
                let want = (n * percent / 100) as usize;
                assert_eq!(schedule(fraction, n).len(), want, "{fraction} of {n}");
            }
        }
    }

    #[test]
    fn no_aborts_means_every_transaction_commits_and_all_means_none() {
        assert!(schedule(0.0, 1000).is_empty());
        assert_eq!(schedule(1.0, 5), vec![0, 1, 2, 3, 4]);
    }
}
