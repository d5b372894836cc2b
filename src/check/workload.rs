//! The workload: how many messages or how long, warm-up, rate (fixed or a shape), closed-loop
//! `in_flight`, producers, and the payload and key it sends.

use std::time::Duration;

use super::axis::Picks;
use super::{Checker, Setting};
use crate::diagnostic::{suggest, Diagnostic, Kind};
use crate::model::{
    Backlog, CommitPolicy, KeySpec, PayloadSpec, RateSpec, Scalar, Warmup, Workload,
};
use crate::source::Span;

const WORKLOAD_KEYS: &[&str] = &[
    "messages",
    "duration",
    "warmup",
    "rate",
    "in_flight",
    "in_flight_until",
    "producers",
    "payload",
    "key",
    "consumers",
    "commit",
    "backlog",
    "transaction",
    "aborts",
    "topics",
    "ack",
    "processing",
    "tombstones",
    "compaction",
    "seed",
];

/// The most consumers of one group: each is a client on its own thread, and a bit of
/// `consumer_stopped`.
const MAX_CONSUMERS: u64 = 64;

/// The payload size when the workload names no payload: random bytes, small enough that a
/// scenario about rates or latency is not a scenario about bandwidth.
const DEFAULT_PAYLOAD_SIZE: usize = 100;

/// The longest a run may last (its `duration`, a shape's total, a warm-up): a soak test is
/// still a run of days, so a longer one is a slipped unit (`1e23h`).
const MAX_RUN: Duration = Duration::from_secs(7 * 24 * 3600);

/// The most messages a run may send: days at millions per second, so more is a slipped digit.
const MAX_MESSAGES: u64 = 1_000_000_000_000_000;

/// A workload while its keys are being checked, before the defaults are filled in.
pub(super) struct WorkloadDraft {
    pub(super) messages: Option<(u64, Span)>,
    duration: Option<Duration>,
    warmup: Option<Warmup>,
    /// Where `warmup = auto` was written: a rate shape refuses it.
    warmup_auto: Option<Span>,
    rate: Option<RateSpec>,
    in_flight: Option<u32>,
    /// `messages` or `duration` was written, or a `rate` that was refused (it may have been a
    /// shape, which sets the length): either way "says neither" would be a false follow-up.
    pub(super) stop_given: bool,
    /// A byte rate and where it was written: refused once the payload size is known, with the
    /// message rate it amounts to.
    byte_rates: Vec<(f64, Span)>,
    /// `in_flight_until`: whether it is `consumed`, and where it was written.
    until: Option<(bool, Span)>,
    producers: u32,
    payload: Option<PayloadSpec>,
    pub(super) key: Option<KeySpec>,
    pub headers: Vec<(String, String)>,
    /// `consumers`, `commit` and `backlog`, each with where it was written.
    pub(super) consumers: Option<(u32, Span)>,
    pub(super) commit: Option<(CommitPolicy, Span)>,
    pub(super) backlog: Option<(Backlog, Span)>,
    /// `transaction` and `aborts` (check/transaction.rs).
    pub(super) txn: super::transaction::TxnDraft,
    /// `topics = N` and where it was written (`topics.rs`).
    pub topics: Option<(u32, Span)>,
    /// `tombstones` and `compaction` (check/compaction.rs).
    pub(super) compaction: super::compaction::CompactionDraft,
}

impl Default for WorkloadDraft {
    fn default() -> Self {
        WorkloadDraft {
            messages: None,
            duration: None,
            warmup: None,
            warmup_auto: None,
            rate: None,
            in_flight: None,
            stop_given: false,
            byte_rates: vec![],
            until: None,
            producers: 1,
            payload: None,
            key: None,
            headers: vec![],
            consumers: None,
            commit: None,
            backlog: None,
            txn: Default::default(),
            topics: None,
            compaction: Default::default(),
        }
    }
}

impl WorkloadDraft {
    /// `in_flight_until`: whether it is `consumed`, and where it was written.
    pub(super) fn until(&self) -> Option<(bool, Span)> {
        self.until
    }
}

impl Checker<'_> {
    /// One `workload` setting into the draft.
    pub(super) fn workload_key(&mut self, w: &mut WorkloadDraft, e: &Setting, ctx: &Picks) {
        let key = e.key.node.as_str();
        match key {
            "messages" => {
                w.stop_given = true;
                // 0 is a pure drain, allowed only with a backlog (`read_side` says so).
                let zero = matches!(self.scalar(&e.value, ctx), Some(Scalar::Number(n)) if n == 0.0);
                w.messages = if zero {
                    Some(0)
                } else {
                    self.count(&e.value, ctx, "messages", 1..=MAX_MESSAGES)
                }
                .map(|n| (n, e.value.span))
            }
            "duration" => {
                w.stop_given = true;
                w.duration = self
                    .duration(&e.value, ctx, "duration")
                    .and_then(|d| self.run_length(d, e.value.span, "duration"))
            }
            "warmup" if is_auto(&e.value) => {
                w.warmup = self.warmup_auto(&e.value, ctx);
                w.warmup_auto = Some(e.value.span);
            }
            "warmup" => {
                w.warmup = match self.scalar(&e.value, ctx) {
                    Some(Scalar::Duration(d)) => self.run_length_or_zero(d, e.value.span, "warmup").map(Warmup::Duration),
                    Some(Scalar::Number(n)) if n.fract() == 0.0 && n >= 0.0 && n <= MAX_MESSAGES as f64 => Some(Warmup::Messages(n as u64)),
                    Some(Scalar::Number(n)) => {
                        self.err(
                            Diagnostic::new(Kind::Value, e.value.span, format!("a warm-up is a duration or a whole number of messages from 0 to {MAX_MESSAGES}, not {n}"))
                                .label("expected e.g. `5s` or `10_000`"),
                        );
                        None
                    }
                    Some(other) => {
                        // `"30s"`: quoted as YAML and JSON write it.
                        let quoted = match &other {
                            Scalar::Str(t) if t.starts_with(|c: char| c.is_ascii_digit()) => {
                                Some(format!("write `{t}` without quotes"))
                            }
                            _ => None,
                        };
                        self.err(
                            Diagnostic::new(Kind::Type, e.value.span, format!("warmup is a duration or a message count, not {}", other.kind_name()))
                                .label("expected e.g. `5s` or `10_000`")
                                .help_opt(quoted),
                        );
                        None
                    }
                    None => None,
                }
            }
            "rate" => {
                w.rate = self.rate(&e.value, ctx, &mut w.byte_rates);
                // A refused rate may have been a shape, which would have set the length.
                w.stop_given |= w.rate.is_none();
            }
            "in_flight" => {
                w.in_flight = self.count(&e.value, ctx, "in_flight", 1..=1_000_000).map(|n| n as u32)
            }
            "in_flight_until" => match self.scalar(&e.value, ctx) {
                Some(Scalar::Word(x)) if x == "acked" || x == "consumed" => w.until = Some((x == "consumed", e.value.span)),
                _ => self.err(
                    Diagnostic::new(Kind::Value, e.value.span, "in_flight_until is `acked` or `consumed`")
                        .label("expected acked or consumed")
                        .help("`consumed` waits for the consumer to read each record before the next is sent"),
                ),
            },
            "producers" => {
                if let Some(n) = self.count(&e.value, ctx, "producers", 1..=64) {
                    w.producers = n as u32;
                }
            }
            "consumers" => {
                w.consumers = self
                    .count(&e.value, ctx, "consumers", 1..=MAX_CONSUMERS)
                    .map(|n| (n as u32, e.value.span))
            }
            "commit" => w.commit = self.commit(&e.value, ctx).map(|c| (c, e.value.span)),
            "backlog" => w.backlog = self.backlog(&e.value, ctx).map(|b| (b, e.value.span)),
            "payload" => w.payload = self.payload(&e.value, ctx),
            "key" => w.key = self.key(&e.value, ctx),
            "transaction" => self.transaction_key(&mut w.txn, e, ctx),
            "aborts" => self.aborts_key(&mut w.txn, e, ctx),
            "topics" => w.topics = self.topics_key(e, ctx),
            "tombstones" => self.tombstones_key(&mut w.compaction, e, ctx),
            "compaction" => self.compaction_key(&mut w.compaction, e, ctx),
            _ => self.err(
                Diagnostic::new(Kind::UnknownKey, e.key.span, format!("unknown workload setting `{key}`"))
                    .label("not a workload setting")
                    .help(
                        super::props::home_of(key, self.sources.text(e.value.span).trim())
                            .unwrap_or_else(|| suggest(key, WORKLOAD_KEYS, "workload settings are")),
                    ),
            ),
        }
    }

    /// A duration that bounds a run: above zero, at most [`MAX_RUN`].
    pub(super) fn run_length(&mut self, d: Duration, span: Span, what: &str) -> Option<Duration> {
        if d.is_zero() {
            self.err(
                Diagnostic::new(Kind::Value, span, format!("{what} must be longer than 0s"))
                    .label("nothing would run"),
            );
            return None;
        }
        self.run_length_or_zero(d, span, what)
    }

    fn run_length_or_zero(&mut self, d: Duration, span: Span, what: &str) -> Option<Duration> {
        if d > MAX_RUN {
            self.err(
                Diagnostic::new(Kind::Value, span, format!("{what} must be at most 7 days"))
                    .label("too long")
                    .help("a longer run is almost surely a slipped unit; a soak test of weeks is several runs"),
            );
            return None;
        }
        Some(d)
    }

    /// The transaction keys against the producer's properties and the closed loop.
    pub(super) fn workload_transaction(
        &mut self,
        w: &WorkloadDraft,
        producer: &crate::model::Props,
    ) {
        let until_consumed = w.until.filter(|(c, _)| *c).map(|(_, s)| s);
        self.finish_transaction(&w.txn, producer, w.in_flight, until_consumed);
    }

    /// The workload of one cell: the draft checked as a whole, defaults filled in.
    pub(super) fn finish_workload(
        &mut self,
        w: WorkloadDraft,
        consumer_on: bool,
        span: Span,
    ) -> Option<Workload> {
        if let (Some((true, span)), false) = (w.until, consumer_on) {
            self.err(
                Diagnostic::new(
                    Kind::Missing,
                    span,
                    "`in_flight_until = consumed` needs a consumer",
                )
                .label("no consumer in this run")
                .help("add `consumer { }`"),
            );
        }
        if let (Some((_, span)), None) = (w.until, w.in_flight) {
            self.err(
                Diagnostic::new(Kind::Missing, span, "`in_flight_until` needs `in_flight`")
                    .label("here")
                    .help("e.g. `in_flight = 1`"),
            );
        }
        self.read_side(&w, consumer_on);
        let payload = w.payload.unwrap_or(PayloadSpec::Random {
            size: crate::model::PayloadSize::Fixed(DEFAULT_PAYLOAD_SIZE),
            compressibility: 0.0,
        });
        self.byte_rates(&w.byte_rates, &payload);
        let rate = w.rate.unwrap_or(RateSpec::Unlimited);
        if let (Some(s), RateSpec::Shape(_)) = (w.warmup_auto, &rate) {
            // The warm-up looks at the rate slice by slice; a shape's rate changes on purpose.
            self.err(
                Diagnostic::new(Kind::Value, s, "`warmup = auto` needs a constant rate, not a rate shape")
                    .label("a shape changes its rate on purpose")
                    .help("give the warm-up a duration (`warmup = 10s`), or start the shape with a constant segment"),
            );
        }
        if !w.stop_given && rate.total_duration().is_none() {
            let help = if w.backlog.is_some() {
                "add `messages = 0` to `workload { }` to only drain the backlog, or `messages = 100_000` or `duration = 1m` to keep producing while it drains"
            } else {
                "add `messages = 100_000` or `duration = 1m` to `workload { }`, or give `rate` a shape with durations"
            };
            self.err(
                Diagnostic::new(
                    Kind::Missing,
                    span,
                    "the workload says neither how many messages nor how long",
                )
                .label("in this scenario")
                .help(help),
            );
            return None;
        }
        if let (Some((n, s)), true) = (w.messages, w.producers > 1) {
            if n > 0 && n < w.producers as u64 {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        s,
                        format!("{n} messages cannot be shared by {} producers", w.producers),
                    )
                    .label("too few"),
                );
            }
        }
        Some(Workload {
            messages: w.messages.map(|(n, _)| n),
            duration: w.duration,
            warmup: w.warmup,
            rate,
            in_flight: w.in_flight,
            in_flight_until_consumed: w.until.is_some_and(|(c, _)| c),
            producers: w.producers,
            payload,
            key: w.key.unwrap_or(KeySpec::None),
            headers: w.headers,
            consumers: w.consumers.map(|(n, _)| n),
            commit: w.commit.map(|(c, _)| c).unwrap_or_default(),
            backlog: w.backlog.map(|(b, _)| b),
            transaction: w.txn.spec(),
            topics: w.topics.map_or(1, |(n, _)| n),
            tombstones: w.compaction.tombstones(),
            compaction: w.compaction.check(),
            seed: None,
        })
    }
}

/// `warmup = auto` or `warmup = auto(…)`.
pub(super) fn is_auto(v: &crate::syntax::Value) -> bool {
    use crate::syntax::ValueKind;
    match &v.kind {
        ValueKind::Word(w) => w == "auto",
        ValueKind::Call { name, .. } => name.node == "auto",
        _ => false,
    }
}

impl Checker<'_> {
    /// `warmup = auto` or `auto(max: 30s)` (`auto(30s)`, `auto(max 30s)`): until the rate has
    /// settled, at most `max`.
    fn warmup_auto(&mut self, v: &crate::syntax::Value, ctx: &Picks) -> Option<Warmup> {
        use crate::syntax::ValueKind;
        let ValueKind::Call { args, .. } = &v.kind else {
            return Some(Warmup::Auto {
                max: Warmup::AUTO_MAX,
            });
        };
        // Every argument is checked, so a file's mistakes are reported at once.
        let (mut max, mut ok) = (Warmup::AUTO_MAX, true);
        for (i, a) in args.iter().enumerate() {
            match &a.name {
                Some(n) if n.node == "max" => {}
                None if i == 0 => {}
                Some(n) => {
                    self.unknown_auto_argument(
                        n,
                        &["max"],
                        "`auto` takes the longest warm-up: `warmup = auto(max: 30s)`",
                    );
                    ok = false;
                    continue;
                }
                None => {
                    self.err(
                        Diagnostic::new(
                            Kind::Value,
                            a.value.span,
                            "`auto` takes one argument, the longest warm-up",
                        )
                        .label("one too many")
                        .help("e.g. `warmup = auto(max: 30s)`"),
                    );
                    ok = false;
                    continue;
                }
            }
            let Some(d) = self.duration(&a.value, ctx, "the longest warm-up") else {
                ok = false;
                continue;
            };
            let least = Warmup::AUTO_SLICE * Warmup::AUTO_LOOKS as u32;
            if d < least || d > MAX_RUN {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        a.value.span,
                        format!(
                            "the longest automatic warm-up is from {}s to 7 days",
                            least.as_secs()
                        ),
                    )
                    .label("out of range")
                    .help(format!(
                        "it looks at the rate every second and needs {} looks in a row to agree",
                        Warmup::AUTO_LOOKS
                    )),
                );
                ok = false;
                continue;
            }
            max = d;
        }
        if !ok {
            return None;
        }
        Some(Warmup::Auto { max })
    }
}
