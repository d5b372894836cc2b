//! Avro binary written straight from the compiled nodes: a random record (the hot path: no
//! allocation once the buffer has grown), or a JSON document checked against the schema.

use serde_json::Value;

use super::{Avro, IntKind, LongKind, Node};
use crate::random::Rng;
use crate::schema::values::{self, MAX_DEPTH};
use crate::schema::wire::avro_long;
use crate::schema::{shown, Misfit, Stamp};

impl Avro {
    pub(crate) fn generate(&self, rng: &mut Rng, at: Stamp, out: &mut Vec<u8>) {
        self.gen(self.root, rng, at, 0, out);
    }

    fn gen(&self, n: usize, rng: &mut Rng, at: Stamp, depth: usize, out: &mut Vec<u8>) {
        let deep = depth >= MAX_DEPTH;
        match &self.nodes[n] {
            Node::Null | Node::Pending => {}
            Node::Boolean => out.push((rng.next_u64() & 1) as u8),
            Node::Int(k) => avro_long(out, int(*k, rng, at)),
            Node::Long(k) => avro_long(out, long(*k, rng, at)),
            Node::Float => out.extend_from_slice(&(values::decimal_f64(rng) as f32).to_le_bytes()),
            Node::Double => out.extend_from_slice(&values::decimal_f64(rng).to_le_bytes()),
            Node::Bytes | Node::String => {
                let len = values::string_len(rng);
                avro_long(out, len as i64);
                values::alnum(rng, out, len);
            }
            Node::Uuid => {
                out.push(72); // 36, zigzagged
                values::uuid(rng, out);
            }
            Node::Fixed(size) => {
                let start = out.len();
                out.resize(start + size, 0);
                crate::random::fill_with(rng, &mut out[start..]);
            }
            Node::Enum(symbols) => avro_long(out, (rng.next_u64() % symbols.len() as u64) as i64),
            Node::Array(items) | Node::Map(items) => {
                let count = if deep {
                    0
                } else {
                    values::between(rng, values::ITEMS.0, values::ITEMS.1)
                };
                if count > 0 {
                    avro_long(out, count as i64);
                    let map = matches!(self.nodes[n], Node::Map(_));
                    for _ in 0..count {
                        if map {
                            let len = values::string_len(rng);
                            avro_long(out, len as i64);
                            values::alnum(rng, out, len);
                        }
                        self.gen(*items, rng, at, depth + 1, out);
                    }
                }
                out.push(0);
            }
            Node::Union(branches) => {
                let k = if deep {
                    self.escape[n]
                } else {
                    let null = branches
                        .iter()
                        .position(|&b| matches!(self.nodes[b], Node::Null));
                    values::branch(rng, branches.len(), null)
                };
                avro_long(out, k as i64);
                self.gen(branches[k], rng, at, depth + 1, out);
            }
            Node::Record(r) => {
                for f in &r.fields {
                    if f.seq {
                        avro_long(out, at.seq as i64);
                    } else {
                        self.gen(f.node, rng, at, depth + 1, out);
                    }
                }
            }
            Node::Decimal {
                precision, fixed, ..
            } => {
                // At most 9 digits drawn (a price), fewer if the precision says so.
                let digits = (*precision).min(9) as u32;
                let unscaled = (rng.next_u64() % 10u64.pow(digits)) as i128;
                decimal_bytes(unscaled, *fixed, out);
            }
            Node::Duration => {
                for v in [
                    rng.next_u64() % 12,
                    rng.next_u64() % 31,
                    rng.next_u64() % 86_400_000,
                ] {
                    out.extend_from_slice(&(v as u32).to_le_bytes());
                }
            }
        }
    }

    pub(crate) fn encode_json(&self, v: &Value, out: &mut Vec<u8>) -> Result<(), Misfit> {
        self.enc(self.root, v, out)
    }

    fn enc(&self, n: usize, v: &Value, out: &mut Vec<u8>) -> Result<(), Misfit> {
        match (&self.nodes[n], v) {
            (Node::Null | Node::Pending, Value::Null) => {}
            (Node::Boolean, Value::Bool(b)) => out.push(u8::from(*b)),
            (Node::Int(_), _) => {
                let x = integer(v, i32::MIN as i64, i32::MAX as i64, "an int")?;
                avro_long(out, x);
            }
            (Node::Long(_), _) => avro_long(out, integer(v, i64::MIN, i64::MAX, "a long")?),
            (Node::Float, Value::Number(x)) => {
                out.extend_from_slice(&(x.as_f64().unwrap_or(0.0) as f32).to_le_bytes())
            }
            (Node::Double, Value::Number(x)) => {
                out.extend_from_slice(&x.as_f64().unwrap_or(0.0).to_le_bytes())
            }
            (Node::String, Value::String(s)) => {
                avro_long(out, s.len() as i64);
                out.extend_from_slice(s.as_bytes());
            }
            (Node::Uuid, Value::String(s)) => {
                if uuid::Uuid::parse_str(s).is_err() {
                    return Err(Misfit::new(format!("{s:?} is not a uuid")));
                }
                avro_long(out, s.len() as i64);
                out.extend_from_slice(s.as_bytes());
            }
            (Node::Bytes, Value::String(s)) => {
                let b = latin1(s)?;
                avro_long(out, b.len() as i64);
                out.extend_from_slice(&b);
            }
            (Node::Fixed(size), Value::String(s)) => {
                let b = latin1(s)?;
                if b.len() != *size {
                    return Err(Misfit::new(format!(
                        "a fixed of {size} bytes, found {} characters",
                        b.len()
                    )));
                }
                out.extend_from_slice(&b);
            }
            (Node::Enum(symbols), Value::String(s)) => match symbols.iter().position(|x| x == s) {
                Some(i) => avro_long(out, i as i64),
                None => {
                    return Err(Misfit::new(format!(
                        "{s:?} is not a symbol of the enum ({})",
                        symbols.join(", ")
                    )))
                }
            },
            (Node::Array(items), Value::Array(a)) => {
                if !a.is_empty() {
                    avro_long(out, a.len() as i64);
                    for (i, x) in a.iter().enumerate() {
                        self.enc(*items, x, out)
                            .map_err(|e| e.inside(&format!("[{i}]")))?;
                    }
                }
                out.push(0);
            }
            (Node::Map(values), Value::Object(m)) => {
                if !m.is_empty() {
                    avro_long(out, m.len() as i64);
                    for (k, x) in m {
                        avro_long(out, k.len() as i64);
                        out.extend_from_slice(k.as_bytes());
                        self.enc(*values, x, out)
                            .map_err(|e| e.inside(&format!("[{k:?}]")))?;
                    }
                }
                out.push(0);
            }
            (Node::Union(branches), _) => {
                // The first branch the value fits, as Avro's own JSON reading of a plain
                // (untagged) value does.
                let mark = out.len();
                let mut last = None;
                for (k, &b) in branches.iter().enumerate() {
                    avro_long(out, k as i64);
                    match self.enc(b, v, out) {
                        Ok(()) => return Ok(()),
                        Err(e) => {
                            out.truncate(mark);
                            last = Some(e);
                        }
                    }
                }
                return Err(match (branches.len(), last) {
                    (1, Some(e)) => e,
                    _ => Misfit::new(format!(
                        "{} fits none of the union's types ({})",
                        shown(v),
                        branches
                            .iter()
                            .map(|&b| self.type_name(b))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                });
            }
            (Node::Record(r), Value::Object(m)) => {
                if let Some(k) = m.keys().find(|k| !r.fields.iter().any(|f| &f.name == *k)) {
                    return Err(Misfit::new(format!("record {} has no field {k:?}", r.name)));
                }
                for f in &r.fields {
                    let x = match (m.get(&f.name), &f.default) {
                        (Some(x), _) => x,
                        (None, Some(d)) => d,
                        (None, None) => {
                            return Err(Misfit::new("missing, and it has no default")
                                .inside(&format!(".{}", f.name)))
                        }
                    };
                    self.enc(f.node, x, out)
                        .map_err(|e| e.inside(&format!(".{}", f.name)))?;
                }
            }
            (
                Node::Decimal {
                    precision,
                    scale,
                    fixed,
                },
                _,
            ) => {
                let unscaled = decimal_of(v, *precision, *scale)?;
                decimal_bytes(unscaled, *fixed, out);
            }
            (Node::Duration, Value::Array(a)) if a.len() == 3 => {
                for x in a {
                    let x = integer(x, 0, u32::MAX as i64, "a u32")?;
                    out.extend_from_slice(&(x as u32).to_le_bytes());
                }
            }
            (_, _) => {
                return Err(Misfit::new(format!(
                    "expected {}, found {}",
                    self.type_name(n),
                    shown(v)
                )))
            }
        }
        Ok(())
    }

    fn type_name(&self, n: usize) -> String {
        match &self.nodes[n] {
            Node::Null | Node::Pending => "null".into(),
            Node::Boolean => "a boolean".into(),
            Node::Int(_) => "an int".into(),
            Node::Long(_) => "a long".into(),
            Node::Float => "a float".into(),
            Node::Double => "a double".into(),
            Node::Bytes => "bytes (a string)".into(),
            Node::String => "a string".into(),
            Node::Uuid => "a uuid string".into(),
            Node::Fixed(n) => format!("a fixed of {n} bytes"),
            Node::Enum(_) => "an enum symbol".into(),
            Node::Array(_) => "an array".into(),
            Node::Map(_) => "a map (an object)".into(),
            Node::Union(_) => "a union".into(),
            Node::Record(r) => format!("record {} (an object)", r.name),
            Node::Decimal { .. } => "a decimal (a number or a string)".into(),
            Node::Duration => "a duration ([months, days, millis])".into(),
        }
    }
}

fn int(k: IntKind, rng: &mut Rng, at: Stamp) -> i64 {
    match k {
        IntKind::Plain => values::small_int(rng),
        IntKind::Date => values::recent_day(rng, at.unix_ms),
        IntKind::TimeMillis => (rng.next_u64() % 86_400_000) as i64,
    }
}

fn long(k: LongKind, rng: &mut Rng, at: Stamp) -> i64 {
    match k {
        LongKind::Plain => values::long(rng),
        LongKind::TimeMicros => (rng.next_u64() % 86_400_000_000) as i64,
        LongKind::Instant(per_ms) => {
            values::recent_ms(rng, at.unix_ms) * per_ms + (rng.next_u64() % per_ms as u64) as i64
        }
    }
}

/// The unscaled value as two's-complement big-endian: the fewest bytes for `bytes`, sign
/// extended to the size for a `fixed`.
fn decimal_bytes(unscaled: i128, fixed: Option<usize>, out: &mut Vec<u8>) {
    let b = unscaled.to_be_bytes();
    let sign = if unscaled < 0 { 0xff } else { 0 };
    // Leading bytes that only repeat the sign (keeping the one that carries it).
    let mut skip = 0;
    while skip < 15 && b[skip] == sign && (b[skip + 1] & 0x80) == (sign & 0x80) {
        skip += 1;
    }
    let body = &b[skip..];
    match fixed {
        Some(size) => {
            let pad = size.saturating_sub(body.len());
            out.resize(out.len() + pad, sign);
            out.extend_from_slice(&body[body.len().saturating_sub(size)..]);
        }
        None => {
            avro_long(out, body.len() as i64);
            out.extend_from_slice(body);
        }
    }
}

/// A JSON number or numeric string as a decimal's unscaled value, its digits checked
/// against the precision and scale.
fn decimal_of(v: &Value, precision: usize, scale: usize) -> Result<i128, Misfit> {
    let text = match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => {
            return Err(Misfit::new(format!(
                "expected a decimal, found {}",
                shown(v)
            )))
        }
    };
    let bad = || {
        Misfit::new(format!(
            "{text:?} is not a decimal of precision {precision}, scale {scale}"
        ))
    };
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.as_str()),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && frac.is_empty()
        || !whole
            .bytes()
            .chain(frac.bytes())
            .all(|c| c.is_ascii_digit())
    {
        return Err(bad());
    }
    let frac = frac.trim_end_matches('0');
    if frac.len() > scale {
        return Err(bad());
    }
    let all = format!("{whole}{frac}{}", "0".repeat(scale - frac.len()));
    let all = all.trim_start_matches('0');
    if all.len() > precision {
        return Err(bad());
    }
    let x: i128 = if all.is_empty() {
        0
    } else {
        all.parse().map_err(|_| bad())?
    };
    Ok(if neg { -x } else { x })
}

/// An integer within bounds, from a JSON number without a fraction.
fn integer(v: &Value, lo: i64, hi: i64, what: &str) -> Result<i64, Misfit> {
    match v.as_i64() {
        Some(x) if (lo..=hi).contains(&x) => Ok(x),
        _ => Err(Misfit::new(format!("expected {what}, found {}", shown(v)))),
    }
}

/// Avro's JSON form of bytes: a string whose characters are U+0000 to U+00FF, one per byte.
fn latin1(s: &str) -> Result<Vec<u8>, Misfit> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| {
            Misfit::new("bytes are a string of characters U+0000 to U+00FF, one per byte")
        })
}
