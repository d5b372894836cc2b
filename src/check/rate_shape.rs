//! The rate as written: `unlimited`, a message rate, or a shape's segments (ramps, steps,
//! sine), each checked where it is written; byte rates refused once the payload size is known.

use std::time::Duration;

use super::axis::Picks;
use super::{units, Checker};
use crate::diagnostic::{Diagnostic, Kind};
use crate::model::{PayloadSpec, RateSegment, RateSpec, Scalar};
use crate::source::Span;
use crate::syntax::{self, Value, ValueKind};

impl Checker<'_> {
    /// `unlimited`, a message rate above zero, or a shape. Byte rates are collected into
    /// `byte_rates`, to be refused once the payload size is known.
    pub(super) fn rate(
        &mut self,
        v: &Value,
        ctx: &Picks,
        byte_rates: &mut Vec<(f64, Span)>,
    ) -> Option<RateSpec> {
        let rv = self.resolve(v, ctx)?;
        match &rv.kind {
            ValueKind::Word(w) if w == "unlimited" => Some(RateSpec::Unlimited),
            ValueKind::Shape(segs) => {
                let out: Vec<RateSegment> = segs
                    .iter()
                    .filter_map(|s| self.segment(s, byte_rates))
                    .collect();
                if out.len() != segs.len() {
                    return None;
                }
                // From the first segment to the last: the shape's own span may run on over
                // the whitespace after it.
                let span = match (segs.first(), segs.last()) {
                    (Some(first), Some(last)) => first.rate_span.to(last.duration_span),
                    _ => rv.span,
                };
                if out
                    .iter()
                    .all(|s| s.per_sec == 0.0 && s.ramp_to.unwrap_or(0.0) == 0.0)
                {
                    self.err(
                        Diagnostic::new(Kind::Value, span, "this rate shape sends nothing")
                            .label("every segment is 0/s")
                            .help("`0/s` pauses between segments that send, e.g. `100/s for 10s, then 0/s for 5s, then 100/s for 10s`"),
                    );
                    return None;
                }
                let total: Duration = out.iter().map(|s| s.duration).sum();
                self.run_length(total, span, "a rate shape")?;
                Some(RateSpec::Shape(out))
            }
            _ => match self.scalar(rv, ctx)? {
                Scalar::Rate(r) if r > 0.0 => Some(RateSpec::Fixed(r)),
                Scalar::Rate(_) => {
                    self.err(
                        Diagnostic::new(Kind::Value, rv.span, "a rate must be above 0/s")
                            .label("no record would be sent")
                            .help("leave `rate` out (or write `rate = unlimited`) to send as fast as possible; `0/s` pauses only inside a shape"),
                    );
                    None
                }
                Scalar::ByteRate(b) => {
                    byte_rates.push((b, rv.span));
                    None
                }
                Scalar::Number(n) if n > 0.0 => {
                    self.err(
                        Diagnostic::new(
                            Kind::Type,
                            rv.span,
                            "a rate is messages per period, not a number",
                        )
                        .label("no period")
                        .help(format!(
                            "write `{}/s` (per second; `/min` and `/h` work too)",
                            self.sources.text(rv.span).trim()
                        )),
                    );
                    None
                }
                other => {
                    self.err(
                        Diagnostic::new(Kind::Type, rv.span, format!("a rate is `unlimited`, messages per period or a shape, not {}", other.kind_name()))
                            .label("expected a rate")
                            .help("e.g. `rate = 5000/s`, `rate = 8000/min`, `rate = 8000/min for 1m, then 200/s for 1m`"),
                    );
                    None
                }
            },
        }
    }

    /// One segment of a shape: its rate (a ramp's two rates) and how long it lasts, each
    /// part's mistake reported on its own.
    fn segment(
        &mut self,
        s: &syntax::Segment,
        byte_rates: &mut Vec<(f64, Span)>,
    ) -> Option<RateSegment> {
        let from = self.segment_rate(&s.rate, s.rate_span, byte_rates);
        let to = s
            .ramp_to
            .as_ref()
            .map(|(r, span)| self.segment_rate(r, *span, byte_rates));
        let what = if s.ramp_to.is_some() {
            "ramp"
        } else {
            "segment"
        };
        let duration = match units::quantity(&s.duration, s.duration_span) {
            Err(d) => {
                self.err(d);
                None
            }
            Ok(Scalar::Duration(d)) if d.is_zero() => {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        s.duration_span,
                        format!("a {what} lasts longer than 0s"),
                    )
                    .label(format!("an empty {what}"))
                    .help(format!("give it a length, or remove the {what}")),
                );
                None
            }
            Ok(Scalar::Duration(d)) => Some(d),
            Ok(other) => {
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        s.duration_span,
                        format!("a {what} lasts a duration, not {}", other.kind_name()),
                    )
                    .label("expected e.g. `1m`"),
                );
                None
            }
        };
        Some(RateSegment {
            per_sec: from?,
            ramp_to: match to {
                Some(to) => Some(to?),
                None => None,
            },
            duration: duration?,
        })
    }

    /// A segment's rate, or either end of a ramp: messages per period, `0/s` or more. A byte
    /// rate is kept for the refusal that names the message rate it amounts to.
    fn segment_rate(
        &mut self,
        r: &syntax::RateLit,
        span: Span,
        byte_rates: &mut Vec<(f64, Span)>,
    ) -> Option<f64> {
        match units::rate(r, span) {
            Err(d) => {
                self.err(d);
                None
            }
            Ok(Scalar::Rate(per_sec)) if per_sec < 0.0 => {
                self.err(
                    Diagnostic::new(Kind::Value, span, "a segment's rate is at least 0/s")
                        .label("negative")
                        .help("`0/s` pauses; write a positive rate to send"),
                );
                None
            }
            Ok(Scalar::Rate(per_sec)) => Some(per_sec),
            Ok(Scalar::ByteRate(b)) => {
                byte_rates.push((b, span));
                None
            }
            Ok(other) => {
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        span,
                        format!(
                            "a segment's rate is messages per period, not {}",
                            other.kind_name()
                        ),
                    )
                    .label("expected e.g. `200/s`"),
                );
                None
            }
        }
    }

    /// Byte rates are refused: kafkabench paces records. The help gives the message rate the
    /// byte rate amounts to for this cell's payload (on average, for a file's lines).
    pub(super) fn byte_rates(&mut self, rates: &[(f64, Span)], payload: &PayloadSpec) {
        let size = payload.nominal_size().max(1);
        let about = match payload {
            PayloadSpec::File { .. } => "on average ",
            _ if payload.size().is_some_and(|s| s.dist().is_some()) => "on average ",
            _ => "",
        };
        for (bytes_per_sec, span) in rates {
            let records = (bytes_per_sec / size as f64).round().max(1.0);
            self.err(
                Diagnostic::new(Kind::Value, *span, "a byte rate cannot pace the producer")
                    .label("bytes per period")
                    .help(format!(
                        "kafkabench paces records: with payloads of {about}{size} bytes, write `rate = {records}/s` (per segment in a shape)"
                    )),
            );
        }
    }
}
