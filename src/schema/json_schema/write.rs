//! JSON text written straight from the compiled schema (the hot path), and a document
//! checked against it field by field.

use std::io::Write as _;

use serde_json::Value;

use super::{Format, JsonSchema, J};
use crate::random::Rng;
use crate::schema::values::{self, MAX_DEPTH};
use crate::schema::{shown, Misfit, Stamp};

impl JsonSchema {
    pub(crate) fn generate(&self, rng: &mut Rng, at: Stamp, out: &mut Vec<u8>) {
        gen(&self.root, rng, at, 0, out);
    }

    pub(crate) fn encode_json(&self, v: &Value, out: &mut Vec<u8>) -> Result<(), Misfit> {
        check(&self.root, v)?;
        serde_json::to_writer(&mut *out, v).map_err(|e| Misfit::new(e.to_string()))
    }
}

fn gen(j: &J, rng: &mut Rng, at: Stamp, depth: usize, out: &mut Vec<u8>) {
    match j {
        J::Null => out.extend_from_slice(b"null"),
        J::Bool => out.extend_from_slice(if rng.next_u64() & 1 == 1 {
            b"true"
        } else {
            b"false"
        }),
        J::Integer { lo, hi, seq } => {
            let v = if *seq && (*lo..=*hi).contains(&(at.seq as i64)) {
                at.seq as i64
            } else {
                values::between_i64(rng, *lo, *hi)
            };
            let _ = write!(out, "{v}");
        }
        J::Number {
            lo,
            hi,
            lo_open,
            hi_open,
        } => {
            let u = rng.next_f64();
            let raw = lo + (hi - lo) * (0.001 + 0.998 * u);
            let fits = |x: f64| {
                (if *lo_open { x > *lo } else { x >= *lo })
                    && (if *hi_open { x < *hi } else { x <= *hi })
            };
            let rounded = (raw * 100.0).round() / 100.0;
            let v = if fits(rounded) {
                rounded
            } else if fits(raw) {
                raw
            } else {
                (lo + hi) / 2.0
            };
            let _ = write!(out, "{v}");
        }
        J::String { lo, hi, format, .. } => {
            out.push(b'"');
            match format {
                Format::Uuid => values::uuid(rng, out),
                Format::DateTime => values::rfc3339(out, values::recent_ms(rng, at.unix_ms)),
                Format::Date => values::date(out, values::recent_day(rng, at.unix_ms)),
                Format::Email => {
                    let n = values::between(rng, 4, 12) as usize;
                    values::alnum(rng, out, n);
                    out.extend_from_slice(b"@example.com");
                }
                Format::None => {
                    let n = values::between(rng, *lo, *hi) as usize;
                    values::alnum(rng, out, n);
                }
            }
            out.push(b'"');
        }
        J::OneOf(vals) => {
            out.extend_from_slice(&vals[(rng.next_u64() % vals.len() as u64) as usize].1)
        }
        J::Array { items, lo, hi, .. } => {
            let n = if depth >= MAX_DEPTH {
                *lo
            } else {
                values::between(rng, *lo, *hi)
            };
            out.push(b'[');
            for i in 0..n {
                if i > 0 {
                    out.push(b',');
                }
                gen(items, rng, at, depth + 1, out);
            }
            out.push(b']');
        }
        J::Object { props, .. } => {
            out.push(b'{');
            let mut first = true;
            for p in props {
                if !p.required && (depth >= MAX_DEPTH || !values::present(rng)) {
                    continue;
                }
                if !first {
                    out.push(b',');
                }
                first = false;
                out.extend_from_slice(&p.key);
                gen(&p.schema, rng, at, depth + 1, out);
            }
            out.push(b'}');
        }
        J::Choice { branches, .. } => {
            // A nullable value is null part of the time, like an optional one.
            let null = branches.iter().position(|b| matches!(b, J::Null));
            let k = values::branch(rng, branches.len(), null);
            gen(&branches[k], rng, at, depth + 1, out);
        }
    }
}

/// Whether `v` fits `j`; the first misfit found, with its place.
fn check(j: &J, v: &Value) -> Result<(), Misfit> {
    let wrong = |what: &str| Err(Misfit::new(format!("expected {what}, found {}", shown(v))));
    match (j, v) {
        (J::Null, Value::Null) | (J::Bool, Value::Bool(_)) => Ok(()),
        (J::Integer { lo, hi, .. }, _) => match v.as_i64() {
            Some(x) if (*lo..=*hi).contains(&x) => Ok(()),
            Some(x) => Err(Misfit::new(format!("{x} is outside {lo} to {hi}"))),
            None => wrong("an integer"),
        },
        (
            J::Number {
                lo,
                hi,
                lo_open,
                hi_open,
            },
            Value::Number(n),
        ) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            let ok = (if *lo_open { x > *lo } else { x >= *lo })
                && (if *hi_open { x < *hi } else { x <= *hi });
            if ok {
                Ok(())
            } else {
                Err(Misfit::new(format!("{x} is outside {lo} to {hi}")))
            }
        }
        (
            J::String {
                min, max, format, ..
            },
            Value::String(s),
        ) => {
            let n = s.chars().count() as u64;
            if n < *min {
                return Err(Misfit::new(format!(
                    "{n} characters, below minLength {min}"
                )));
            }
            if n > *max {
                return Err(Misfit::new(format!(
                    "{n} characters, above maxLength {max}"
                )));
            }
            let ok = match format {
                Format::None => true,
                Format::Uuid => uuid::Uuid::parse_str(s).is_ok() && s.len() == 36,
                Format::DateTime => date_time_like(s),
                Format::Date => s.len() == 10 && date_time_like(&format!("{s}T00:00:00Z")),
                Format::Email => s
                    .split_once('@')
                    .is_some_and(|(a, b)| !a.is_empty() && b.contains('.')),
            };
            if ok {
                Ok(())
            } else {
                Err(Misfit::new(format!(
                    "{} does not match the string's format",
                    shown(v)
                )))
            }
        }
        (J::OneOf(vals), _) => {
            if vals.iter().any(|(x, _)| x == v) {
                Ok(())
            } else {
                Err(Misfit::new(format!(
                    "{} is not one of {}",
                    shown(v),
                    vals.iter()
                        .map(|(x, _)| shown(x))
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        }
        (J::Array { items, lo, max, .. }, Value::Array(a)) => {
            let n = a.len() as u64;
            if n < *lo {
                return Err(Misfit::new(format!("{n} items, below minItems {lo}")));
            }
            if n > *max {
                return Err(Misfit::new(format!("{n} items, above maxItems {max}")));
            }
            for (i, x) in a.iter().enumerate() {
                check(items, x).map_err(|e| e.inside(&format!("[{i}]")))?;
            }
            Ok(())
        }
        (J::Object { props, closed }, Value::Object(m)) => {
            for p in props {
                match m.get(&p.name) {
                    Some(x) => {
                        check(&p.schema, x).map_err(|e| e.inside(&format!(".{}", p.name)))?
                    }
                    None if p.required => {
                        return Err(Misfit::new("missing, and it is required")
                            .inside(&format!(".{}", p.name)))
                    }
                    None => {}
                }
            }
            match m.keys().find(|k| !props.iter().any(|p| &p.name == *k)) {
                Some(k) if *closed => Err(Misfit::new(format!(
                    "no property {k:?} is allowed (additionalProperties is false)"
                ))),
                _ => Ok(()),
            }
        }
        (
            J::Choice {
                branches,
                exactly_one,
            },
            _,
        ) => {
            let fits: Vec<Result<(), Misfit>> = branches.iter().map(|b| check(b, v)).collect();
            let n = fits.iter().filter(|r| r.is_ok()).count();
            match (n, exactly_one) {
                (1, _) | (2.., false) => Ok(()),
                (2.., true) => Err(Misfit::new(format!(
                    "{} fits {n} branches of a oneOf, not exactly one",
                    shown(v)
                ))),
                (0, _) if branches.len() == 1 => fits.into_iter().next().unwrap_or(Ok(())),
                (0, _) => Err(Misfit::new(format!(
                    "{} fits none of the schema's alternatives",
                    shown(v)
                ))),
            }
        }
        (J::Null, _) => wrong("null"),
        (J::Bool, _) => wrong("a boolean"),
        (J::Number { .. }, _) => wrong("a number"),
        (J::String { .. }, _) => wrong("a string"),
        (J::Array { .. }, _) => wrong("an array"),
        (J::Object { .. }, _) => wrong("an object"),
    }
}

/// `YYYY-MM-DDTHH:MM:SS` then an optional fraction and a zone: the shape RFC 3339 gives.
fn date_time_like(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let head = digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && (at(10, b'T') || at(10, b't'))
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19);
    if !head {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(f) = rest.strip_prefix('.') {
        let n = f.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &f[n..];
    }
    rest == "Z"
        || rest == "z"
        || (rest.len() == 6 && (rest.starts_with('+') || rest.starts_with('-')))
}
