//! The workload: how many messages or how long, warm-up, rate (fixed or a shape), closed-loop
//! `in_flight`, producers, and the payload and key it sends.

use std::time::Duration;

use super::axes::Picks;
use super::{units, Checker, Setting};
use crate::diagnostic::{suggest, Diagnostic, Kind};
use crate::model::{KeySpec, PayloadSpec, RateSegment, RateSpec, Scalar, Warmup, Workload};
use crate::source::Span;
use crate::syntax::{Value, ValueKind};

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
];

/// The payload size when the workload names no payload: random bytes, small enough that a
/// scenario about rates or latency is not a scenario about bandwidth.
const DEFAULT_PAYLOAD_SIZE: usize = 100;

/// A workload while its keys are being checked, before the defaults are filled in.
pub(super) struct WorkloadDraft {
    messages: Option<(u64, Span)>,
    duration: Option<Duration>,
    warmup: Option<Warmup>,
    rate: Option<RateSpec>,
    in_flight: Option<u32>,
    /// `messages` or `duration` was written, even if its value was wrong.
    stop_given: bool,
    /// `in_flight_until`: whether it is `consumed`, and where it was written.
    until: Option<(bool, Span)>,
    producers: u32,
    payload: Option<PayloadSpec>,
    key: Option<KeySpec>,
    pub headers: Vec<(String, String)>,
}

impl Default for WorkloadDraft {
    fn default() -> Self {
        WorkloadDraft {
            messages: None,
            duration: None,
            warmup: None,
            rate: None,
            in_flight: None,
            stop_given: false,
            until: None,
            producers: 1,
            payload: None,
            key: None,
            headers: vec![],
        }
    }
}

impl Checker<'_> {
    /// One `workload` setting into the draft.
    pub(super) fn workload_key(&mut self, w: &mut WorkloadDraft, e: &Setting, ctx: &Picks) {
        let key = e.key.node.as_str();
        match key {
            "messages" => {
                w.stop_given = true;
                w.messages = self.count(&e.value, ctx, "messages").map(|n| (n, e.value.span))
            }
            "duration" => {
                w.stop_given = true;
                w.duration = self.duration(&e.value, ctx, "duration")
            }
            "warmup" => {
                w.warmup = match self.scalar(&e.value, ctx) {
                    Some(Scalar::Duration(d)) => Some(Warmup::Duration(d)),
                    Some(Scalar::Number(n)) if n.fract() == 0.0 && n >= 0.0 => Some(Warmup::Messages(n as u64)),
                    Some(other) => {
                        self.err(
                            Diagnostic::new(Kind::Type, e.value.span, format!("warmup is a duration or a message count, not {}", other.kind_name()))
                                .label("expected e.g. `5s` or `10_000`"),
                        );
                        None
                    }
                    None => None,
                }
            }
            "rate" => w.rate = self.rate(&e.value, ctx),
            "in_flight" => {
                w.in_flight = self.count(&e.value, ctx, "in_flight").and_then(|n| self.positive(n, e.value.span, "in_flight", 1_000_000)).map(|n| n as u32)
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
                if let Some(n) = self.count(&e.value, ctx, "producers").and_then(|n| self.positive(n, e.value.span, "producers", 64)) {
                    w.producers = n as u32;
                }
            }
            "payload" => w.payload = self.payload(&e.value, ctx),
            "key" => w.key = self.key(&e.value, ctx),
            _ => self.err(
                Diagnostic::new(Kind::UnknownKey, e.key.span, format!("unknown workload setting `{key}`"))
                    .label("not a workload setting")
                    .help(suggest(key, WORKLOAD_KEYS, "workload settings are")),
            ),
        }
    }

    fn rate(&mut self, v: &Value, ctx: &Picks) -> Option<RateSpec> {
        let rv = self.resolve(v, ctx)?;
        match &rv.kind {
            ValueKind::Word(w) if w == "unlimited" => Some(RateSpec::Unlimited),
            ValueKind::Shape(segs) => {
                let mut out = Vec::new();
                for s in segs {
                    let r = units::rate(&s.rate).map_err(|d| self.err(d)).ok();
                    let d = units::quantity(&s.duration).map_err(|d| self.err(d)).ok();
                    match (r, d) {
                        (Some(Scalar::Rate(per_sec)), Some(Scalar::Duration(duration))) => {
                            out.push(RateSegment { per_sec, duration })
                        }
                        (Some(Scalar::Rate(_)), Some(other)) => self.err(
                            Diagnostic::new(
                                Kind::Type,
                                s.duration_span,
                                format!("a segment lasts a duration, not {}", other.kind_name()),
                            )
                            .label("expected e.g. `1m`"),
                        ),
                        (Some(other), _) => self.err(
                            Diagnostic::new(
                                Kind::Type,
                                s.rate_span,
                                format!(
                                    "a segment's rate is messages per period, not {}",
                                    other.kind_name()
                                ),
                            )
                            .label("expected e.g. `200/s`"),
                        ),
                        _ => {}
                    }
                }
                (out.len() == segs.len()).then_some(RateSpec::Shape(out))
            }
            _ => match self.scalar(rv, ctx)? {
                Scalar::Rate(r) if r > 0.0 => Some(RateSpec::Fixed(r)),
                other => {
                    self.err(
                        Diagnostic::new(Kind::Type, rv.span, format!("a rate is `unlimited`, a positive rate or a shape, not {}", other.kind_name()))
                            .label("not a rate")
                            .help("e.g. `rate = 5000/s`, `rate = 8000/min`, `rate = 8000/min for 1m, then 200/s for 1m`"),
                    );
                    None
                }
            },
        }
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
        let rate = w.rate.unwrap_or(RateSpec::Unlimited);
        if !w.stop_given && rate.total_duration().is_none() {
            self.err(
                Diagnostic::new(Kind::Missing, span, "the workload says neither how many messages nor how long")
                    .label("in this scenario")
                    .help("add `messages = 100_000` or `duration = 1m` to `workload { }`, or give `rate` a shape with durations"),
            );
            return None;
        }
        if let (Some((n, s)), true) = (w.messages, w.producers > 1) {
            if n < w.producers as u64 {
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
            payload: w.payload.unwrap_or(PayloadSpec::Random {
                size: DEFAULT_PAYLOAD_SIZE,
                compressibility: 0.0,
            }),
            key: w.key.unwrap_or(KeySpec::None),
            headers: w.headers,
        })
    }
}
