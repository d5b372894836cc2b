//! Transactions: the workload's `transaction` and `aborts`, and what a transactional producer
//! asks of the producer's properties (idempotence, `acks = all`, its timeouts).

use std::time::Duration;

use super::axis::Picks;
use super::{Checker, Setting};
use crate::diagnostic::{Diagnostic, Kind};
use crate::format::human_duration;
use crate::model::{Props, Scalar, TxnSize, TxnSpec};
use crate::source::Span;

/// The most records one transaction may hold: far past any real transaction (the broker
/// keeps the whole transaction's state until it ends).
const MAX_TXN_RECORDS: u64 = 1_000_000_000;
/// librdkafka's default `transaction.timeout.ms`.
const DEFAULT_TXN_TIMEOUT_MS: u64 = 60_000;
/// kafkabench's `message.timeout.ms` where the scenario is silent (see plan).
const KB_MESSAGE_TIMEOUT_MS: u64 = 30_000;
/// The most requests an idempotent producer keeps in flight per broker (librdkafka's limit).
const IDEMPOTENT_MAX_IN_FLIGHT: u64 = 5;

/// The transaction keys of one cell's workload while it is checked.
#[derive(Default)]
pub(super) struct TxnDraft {
    size: Option<(TxnSize, Span)>,
    /// `transaction` was written, even if refused: "`aborts` needs `transaction`" would then
    /// be a false follow-up.
    written: bool,
    aborts: Option<(f64, Span)>,
}

impl TxnDraft {
    /// Where `transaction` was written, when it was.
    pub(super) fn span(&self) -> Option<Span> {
        self.size.as_ref().map(|(_, s)| *s)
    }

    /// The workload's transactions, with their abort fraction.
    pub(super) fn spec(&self) -> Option<TxnSpec> {
        let (size, _) = self.size.clone()?;
        Some(TxnSpec {
            size,
            abort: self.aborts.map_or(0.0, |(f, _)| f),
        })
    }
}

impl Checker<'_> {
    /// `transaction = 1000` (records of one producer) or `transaction = 100ms`.
    pub(super) fn transaction_key(&mut self, t: &mut TxnDraft, e: &Setting, ctx: &Picks) {
        t.written = true;
        let span = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
        let size = match self.scalar(&e.value, ctx) {
            None => None,
            Some(Scalar::Number(n))
                if n.fract() == 0.0 && n >= 1.0 && n <= MAX_TXN_RECORDS as f64 =>
            {
                Some(TxnSize::Messages(n as u64))
            }
            Some(Scalar::Number(n)) => {
                self.err(
                    Diagnostic::new(Kind::Value, span, format!("a transaction holds a whole number of records from 1 to {MAX_TXN_RECORDS}, not {n}"))
                        .label("records per transaction")
                        .help("e.g. `transaction = 1000` commits every 1000 records of each producer"),
                );
                None
            }
            Some(Scalar::Duration(d)) if d.is_zero() => {
                self.err(
                    Diagnostic::new(Kind::Value, span, "a transaction lasts longer than 0s")
                        .label("an empty transaction")
                        .help("e.g. `transaction = 100ms` commits every 100 ms"),
                );
                None
            }
            Some(Scalar::Duration(d)) => Some(TxnSize::Duration(d)),
            Some(other) => {
                self.err(
                    Diagnostic::new(Kind::Type, span, format!("a transaction is a number of records or a duration, not {}", other.kind_name()))
                        .label("expected e.g. `1000` or `100ms`")
                        .help("`transaction = 1000` commits every 1000 records of each producer; `transaction = 100ms` every 100 ms"),
                );
                None
            }
        };
        t.size = size.map(|s| (s, span));
    }

    /// `aborts = 10%`: the fraction of transactions aborted.
    pub(super) fn aborts_key(&mut self, t: &mut TxnDraft, e: &Setting, ctx: &Picks) {
        let span = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
        t.aborts = match self.scalar(&e.value, ctx) {
            None => None,
            Some(Scalar::Ratio(f)) if (0.0..=1.0).contains(&f) => Some((f, span)),
            Some(Scalar::Ratio(f)) => {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        span,
                        format!(
                            "at most every transaction aborts: {}% is more than 100%",
                            percent(f)
                        ),
                    )
                    .label("above 100%")
                    .help("e.g. `aborts = 10%` aborts every tenth transaction"),
                );
                None
            }
            Some(Scalar::Number(n)) => {
                let fix = if (0.0..=1.0).contains(&n) {
                    n
                } else {
                    n / 100.0
                };
                self.err(
                    Diagnostic::new(Kind::Unit, span, "the abort fraction is a percentage")
                        .label("a bare number")
                        .help(format!("write `aborts = {}%`", percent(fix))),
                );
                None
            }
            Some(other) => {
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        span,
                        format!(
                            "the abort fraction is a percentage, not {}",
                            other.kind_name()
                        ),
                    )
                    .label("expected e.g. `10%`")
                    .help("`aborts = 10%` aborts every tenth transaction"),
                );
                None
            }
        };
    }

    /// The transaction keys checked together and against the rest of the cell: `aborts` needs
    /// `transaction`; a transactional producer's properties (an explicit `transactional.id`
    /// included) must allow transactions; closed loops must not wait for records a
    /// read_committed consumer cannot see yet.
    pub(super) fn finish_transaction(
        &mut self,
        t: &TxnDraft,
        producer: &Props,
        in_flight: Option<u32>,
        until_consumed: Option<Span>,
    ) {
        if let (Some((_, span)), false) = (t.aborts, t.written) {
            self.err(
                Diagnostic::new(Kind::Missing, span, "`aborts` needs `transaction`")
                    .label("no transactions to abort")
                    .help("add `transaction = 1000` (records per transaction) or `transaction = 100ms` to `workload { }`"),
            );
        }
        let transactional_id = producer.iter().find(|p| p.key == "transactional.id");
        if let (Some(p), false) = (transactional_id, t.written) {
            if let Some(span) = p.span {
                self.err(
                    Diagnostic::new(Kind::Missing, span, "`transactional.id` needs `transaction` in the workload")
                        .label("a transactional producer")
                        .help("add `transaction = 1000` (records per transaction) or `transaction = 100ms` to `workload { }`; kafkabench then begins and commits the transactions"),
                );
            }
        }
        let Some((size, size_span)) = &t.size else {
            return;
        };
        self.transactional_producer(producer, size, *size_span);
        if until_consumed.is_some() {
            self.closed_loop(t, size, *size_span, in_flight);
        }
    }

    /// `in_flight_until = consumed` waits for the consumer, which sees a record only once its
    /// transaction commits. Each refusal is at the setting that makes the loop wait forever,
    /// so a step that changes it is reported where it changes it.
    fn closed_loop(
        &mut self,
        t: &TxnDraft,
        size: &TxnSize,
        size_span: Span,
        in_flight: Option<u32>,
    ) {
        if let Some((f, span)) = t.aborts.filter(|(f, _)| *f > 0.0) {
            self.err(
                Diagnostic::new(Kind::Value, span, format!("`aborts = {}%` cannot go with `in_flight_until = consumed`", percent(f)))
                    .label("a read_committed consumer never reads an aborted record: the loop would wait forever")
                    .help("remove `aborts`, or write `in_flight_until = acked`"),
            );
            return;
        }
        let limit = in_flight.map_or(1, u64::from);
        let refusal = match size {
            TxnSize::Messages(n) if *n <= limit => return,
            TxnSize::Messages(n) => format!("a transaction of {n} records cannot end while `in_flight_until = consumed` lets only {limit} out"),
            TxnSize::Duration(d) => format!("a {} transaction cannot end while `in_flight_until = consumed` waits for its records", human_duration(d.as_secs_f64())),
        };
        self.err(
            Diagnostic::new(Kind::Value, size_span, refusal)
                .label("a read_committed consumer sees its records only once it commits")
                .help(format!("write `transaction = {limit}` (at most `in_flight`), or `in_flight_until = acked`")),
        );
    }

    /// A transactional producer is idempotent, with `acks = all`; librdkafka refuses the rest
    /// when the producer is created, so the scenario says it where the property is written.
    fn transactional_producer(&mut self, producer: &Props, size: &TxnSize, size_span: Span) {
        let find = |keys: &[&str]| {
            producer
                .0
                .iter()
                .rev()
                .find(|p| keys.contains(&p.key.as_str()))
        };
        let written = |keys: &[&str]| find(keys).and_then(|p| Some((p, p.span?)));
        let int = |keys: &[&str]| {
            written(keys).and_then(|(p, s)| Some((p.value.parse::<i64>().ok()?, s)))
        };
        if let Some((p, span)) = written(&["enable.idempotence"]) {
            if matches!(p.value.to_ascii_lowercase().as_str(), "false" | "f" | "0") {
                self.err(Diagnostic::new(Kind::Value, span, "a transactional producer is idempotent: `enable.idempotence = false` cannot go with `transaction`")
                    .label("idempotence turned off")
                    .help("remove `enable.idempotence = false` (transactions turn it on)"));
            }
        }
        if let Some((p, span)) = written(&["acks", "request.required.acks"]) {
            if !matches!(p.value.as_str(), "all" | "-1") {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        span,
                        format!(
                            "a transactional producer needs `acks = all`, not `{}`",
                            p.value
                        ),
                    )
                    .label("fewer acknowledgements than transactions need")
                    .help(format!(
                        "write `{} = all`, or remove it (all is the default)",
                        p.key
                    )),
                );
            }
        }
        let in_flight = ["max.in.flight", "max.in.flight.requests.per.connection"];
        if let Some((n, span)) =
            int(&in_flight).filter(|(n, _)| *n > IDEMPOTENT_MAX_IN_FLIGHT as i64)
        {
            self.err(Diagnostic::new(Kind::Value, span, format!("a transactional producer keeps at most {IDEMPOTENT_MAX_IN_FLIGHT} requests in flight, not {n}"))
                .label("too many for an idempotent producer")
                .help(format!("write `max.in.flight.requests.per.connection = {IDEMPOTENT_MAX_IN_FLIGHT}`, or remove it")));
        }
        if let Some((0, span)) = int(&["retries", "message.send.max.retries"]) {
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    "a transactional producer retries: `retries = 0` cannot go with `transaction`",
                )
                .label("no retries")
                .help("remove `retries = 0`"),
            );
        }
        let txn_timeout = int(&["transaction.timeout.ms"]);
        let txn_timeout_ms = txn_timeout.map_or(DEFAULT_TXN_TIMEOUT_MS, |(n, _)| n.max(0) as u64);
        let message_timeout = int(&["message.timeout.ms", "delivery.timeout.ms"]);
        let message_timeout_ms =
            message_timeout.map_or(KB_MESSAGE_TIMEOUT_MS, |(n, _)| n.max(0) as u64);
        let (msg_t, txn_t) = (ms(message_timeout_ms), ms(txn_timeout_ms));
        if message_timeout_ms > txn_timeout_ms {
            // At whichever of the two the scenario wrote (the delivery timeout if both).
            let (span, fix) = match (message_timeout, txn_timeout) {
                (Some((_, s)), _) => (s, format!("write `message.timeout.ms = {txn_t}` or less, or raise `transaction.timeout.ms`")),
                (None, Some((_, s))) => (s, format!("raise `transaction.timeout.ms` to {msg_t} or more (kafkabench's default `message.timeout.ms`), or set `message.timeout.ms = {txn_t}`")),
                (None, None) => unreachable!("the two defaults fit"),
            };
            self.err(Diagnostic::new(Kind::Value, span, format!("a record's delivery timeout ({msg_t}) outlasts the transaction timeout ({txn_t})"))
                .label("librdkafka refuses this for a transactional producer")
                .help(fix));
        }
        if let TxnSize::Duration(d) = size {
            if *d >= Duration::from_millis(txn_timeout_ms) {
                let secs = d.as_secs_f64();
                self.err(Diagnostic::new(Kind::Value, size_span, format!("a {} transaction outlasts `transaction.timeout.ms` ({txn_t}): the broker would abort it", human_duration(secs)))
                    .label("longer than the transaction timeout")
                    .help(format!("shorten the transaction, or raise `producer {{ transaction.timeout.ms = {} }}`", human_duration(secs * 2.0))));
            }
        }
    }
}

/// A fraction as a percentage without float noise (`0.1` → `10`).
fn percent(f: f64) -> String {
    let p = (f * 100.0 * 1e6).round() / 1e6;
    format!("{p}")
}

/// Milliseconds as the language writes a duration (`60s`, `1.5s`, `500ms`).
fn ms(n: u64) -> String {
    human_duration(n as f64 / 1e3)
}
