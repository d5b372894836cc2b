//! Protobuf: a `.proto` compiled without protoc (`protox`), its message flattened into a
//! table the writer walks to emit wire format directly; JSON documents go through
//! `prost-reflect`'s dynamic messages (the protobuf JSON mapping), at check time only.

use std::path::Path;

use prost_reflect::{Cardinality, DynamicMessage, Kind, MessageDescriptor};

use crate::random::Rng;
use crate::schema::values::{self, MAX_DEPTH};
use crate::schema::wire::{patch_length, varint, zigzag};
use crate::schema::{Misfit, Stamp};

/// Messages whose fields are messages of other types, this many deep, are refused (the
/// flattening recurses once per type).
const MAX_TYPE_DEPTH: usize = 1000;

pub(crate) struct Proto {
    msgs: Vec<Msg>,
    /// The message records are of (for the JSON mapping).
    desc: MessageDescriptor,
    /// Its place in its file: the index of each enclosing message, outermost first
    /// (Confluent's message indexes).
    pub(crate) indexes: Vec<i32>,
    /// The local files it imports (directly or not), by import name, with their text.
    pub(crate) imports: Vec<(String, String)>,
}

struct Msg {
    /// Fields outside a (real) oneof.
    fields: Vec<Field>,
    /// Each oneof's members: one of them is set per record.
    oneofs: Vec<Vec<Field>>,
    known: Known,
}

/// Well-known types whose fields mean something: an instant near the record's time.
#[derive(Clone, Copy, PartialEq)]
enum Known {
    No,
    Timestamp,
}

struct Field {
    /// The key: number << 3 | wire type.
    key: u64,
    /// The key with wire type 2, for a packed repeated field.
    packed_key: u64,
    kind: P,
    card: Card,
    seq: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Card {
    /// Always written (proto3 implicit presence, proto2 required).
    Always,
    /// Written part of the time (proto3 `optional`, proto2 optional, a message field).
    Optional,
    Repeated,
    /// Repeated scalars in one length-delimited run.
    Packed,
}

#[derive(Clone)]
enum P {
    Double,
    Float,
    Int32,
    Int64,
    UInt32,
    UInt64,
    SInt32,
    SInt64,
    Fixed32,
    Fixed64,
    SFixed32,
    SFixed64,
    Bool,
    String,
    Bytes,
    Enum(Vec<i32>),
    Message(usize),
    /// A proto2 `group`: the message between a start-group and an end-group key.
    Group(usize),
}

impl P {
    fn wire_type(&self) -> u64 {
        match self {
            P::Double | P::Fixed64 | P::SFixed64 => 1,
            P::Float | P::Fixed32 | P::SFixed32 => 5,
            P::String | P::Bytes | P::Message(_) => 2,
            P::Group(_) => 3,
            _ => 0,
        }
    }
}

impl Proto {
    /// Compiles the file at `path` (its imports found beside it, or among the well-known
    /// types protox ships) and picks `message`.
    pub(crate) fn compile(path: &Path, message: &str) -> Result<Proto, String> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let file = path.file_name().unwrap_or_default();
        let local = super::proto_files::Local::new(dir);
        let files = local.files.clone();
        let mut compiler = protox::Compiler::with_file_resolver(local);
        compiler.include_imports(true);
        compiler
            .open_file(file)
            .map_err(|e| format!("it does not compile: {e}"))?;
        let pool = compiler.descriptor_pool();
        let own = Path::new(file).to_string_lossy().replace('\\', "/");
        let declared: Vec<String> = pool
            .files()
            .filter(|f| f.name() == own)
            .flat_map(|f| all_messages(f.messages().collect()))
            .map(|m| m.full_name().to_string())
            .collect();
        let desc = match pool.get_message_by_name(message) {
            Some(d) => d,
            None => {
                // The declared name closest to the one written (or the one it is the tail of).
                let near = declared
                    .iter()
                    .map(|d| {
                        let tail = d.rsplit('.').next() == Some(message);
                        (
                            if tail {
                                2.0
                            } else {
                                strsim::jaro_winkler(d, message)
                            },
                            d,
                        )
                    })
                    .filter(|(score, _)| *score > 0.85)
                    .max_by(|a, b| a.0.total_cmp(&b.0))
                    .map(|(_, d)| format!("did you mean {d}? "))
                    .unwrap_or_default();
                return Err(format!(
                    "it declares no message {message}; {near}its messages are {}",
                    if declared.is_empty() {
                        "none".into()
                    } else {
                        declared.join(", ")
                    }
                ));
            }
        };
        // A message of an imported file: the registry's message indexes count the messages
        // of the file registered, so the records' prefix would name another message.
        let home = desc.parent_file();
        if home.name() != own {
            return Err(format!(
                "it declares no message {message}; {message} is declared in {}, which {own} imports: name that file (relative to {own}'s folder), as a record's message indexes count the messages of the file named",
                home.name(),
            ));
        }
        let mut c = Flattener {
            msgs: Vec::new(),
            names: Vec::new(),
            depth: 0,
        };
        c.message(&desc)?;
        required_ends(&c.msgs, &c.names)?;
        let imports = std::mem::take(&mut *files.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(Proto {
            msgs: c.msgs,
            indexes: indexes(&desc),
            desc,
            imports: imports.into_iter().filter(|(n, _)| *n != own).collect(),
        })
    }

    pub(crate) fn generate(&self, rng: &mut Rng, at: Stamp, out: &mut Vec<u8>) {
        self.gen_msg(0, rng, at, 0, out);
    }

    fn gen_msg(&self, m: usize, rng: &mut Rng, at: Stamp, depth: usize, out: &mut Vec<u8>) {
        let msg = &self.msgs[m];
        if msg.known == Known::Timestamp {
            let ms = values::recent_ms(rng, at.unix_ms);
            varint(out, 1 << 3);
            varint(out, ms.div_euclid(1000) as u64);
            varint(out, 2 << 3);
            varint(out, (ms.rem_euclid(1000) * 1_000_000) as u64);
            return;
        }
        // Past twice the depth limit nothing more is written: a proto2 `required` message
        // field that contains itself would otherwise never end.
        if depth > 2 * MAX_DEPTH {
            return;
        }
        let deep = depth >= MAX_DEPTH;
        for f in &msg.fields {
            self.gen_field(f, rng, at, depth, deep, out);
        }
        if !deep {
            for members in &msg.oneofs {
                let f = &members[(rng.next_u64() % members.len() as u64) as usize];
                self.gen_value(f, f.key, rng, at, depth, out);
            }
        }
    }

    fn gen_field(
        &self,
        f: &Field,
        rng: &mut Rng,
        at: Stamp,
        depth: usize,
        deep: bool,
        out: &mut Vec<u8>,
    ) {
        match f.card {
            Card::Always => self.gen_value(f, f.key, rng, at, depth, out),
            Card::Optional => {
                if !deep && values::present(rng) {
                    self.gen_value(f, f.key, rng, at, depth, out)
                }
            }
            Card::Repeated => {
                let n = if deep {
                    0
                } else {
                    values::between(rng, values::ITEMS.0, values::ITEMS.1)
                };
                for _ in 0..n {
                    self.gen_value(f, f.key, rng, at, depth, out);
                }
            }
            Card::Packed => {
                let n = if deep {
                    0
                } else {
                    values::between(rng, values::ITEMS.0, values::ITEMS.1)
                };
                if n > 0 {
                    varint(out, f.packed_key);
                    let start = out.len();
                    out.push(0);
                    for _ in 0..n {
                        self.scalar(f, rng, at, out);
                    }
                    patch_length(out, start);
                }
            }
        }
    }

    /// One value with its key.
    fn gen_value(
        &self,
        f: &Field,
        key: u64,
        rng: &mut Rng,
        at: Stamp,
        depth: usize,
        out: &mut Vec<u8>,
    ) {
        varint(out, key);
        match &f.kind {
            P::Message(m) => {
                let start = out.len();
                out.push(0);
                self.gen_msg(*m, rng, at, depth + 1, out);
                patch_length(out, start);
            }
            P::Group(m) => {
                self.gen_msg(*m, rng, at, depth + 1, out);
                // The end-group key: the field's number with wire type 4.
                varint(out, key + 1);
            }
            _ => self.scalar(f, rng, at, out),
        }
    }

    /// A scalar's value without its key.
    #[inline]
    fn scalar(&self, f: &Field, rng: &mut Rng, at: Stamp, out: &mut Vec<u8>) {
        let int = if f.seq {
            at.seq as i64
        } else {
            values::small_int(rng)
        };
        match &f.kind {
            P::Double => out.extend_from_slice(&values::decimal_f64(rng).to_le_bytes()),
            P::Float => out.extend_from_slice(&(values::decimal_f64(rng) as f32).to_le_bytes()),
            P::Int32 | P::UInt32 | P::Bool | P::Int64 | P::UInt64 => {
                let v = match f.kind {
                    P::Bool => (rng.next_u64() & 1) as i64,
                    P::Int64 | P::UInt64 if !f.seq => values::long(rng),
                    _ => int,
                };
                varint(out, v as u64)
            }
            P::SInt32 => varint(out, zigzag(int)),
            // Every 64-bit integer is a long (0 to 999,999,999), as int64 and uint64 are.
            P::SInt64 => varint(out, zigzag(if f.seq { int } else { values::long(rng) })),
            P::Fixed32 | P::SFixed32 => out.extend_from_slice(&(int as u32).to_le_bytes()),
            P::Fixed64 | P::SFixed64 => {
                let v = if f.seq { int } else { values::long(rng) };
                out.extend_from_slice(&(v as u64).to_le_bytes())
            }
            P::String | P::Bytes => {
                let len = values::string_len(rng);
                varint(out, len as u64);
                values::alnum(rng, out, len);
            }
            P::Enum(numbers) => {
                let v = numbers[(rng.next_u64() % numbers.len() as u64) as usize];
                // Negative enum numbers are sign-extended to ten bytes, as int32 is.
                varint(out, v as i64 as u64)
            }
            P::Message(_) | P::Group(_) => {}
        }
    }

    pub(crate) fn encode_json(
        &self,
        v: &serde_json::Value,
        out: &mut Vec<u8>,
    ) -> Result<(), Misfit> {
        let msg = DynamicMessage::deserialize(self.desc.clone(), v)
            .map_err(|e| Misfit::new(e.to_string()))?;
        prost::Message::encode(&msg, out).map_err(|e| Misfit::new(e.to_string()))
    }
}

struct Flattener {
    msgs: Vec<Msg>,
    names: Vec<String>,
    /// How many messages deep the flattening is (each new type a step).
    depth: usize,
}

impl Flattener {
    /// The index of `d`'s table, flattened once (a message that contains itself points
    /// back at its own table).
    fn message(&mut self, d: &MessageDescriptor) -> Result<usize, String> {
        if let Some(i) = self.names.iter().position(|n| n == d.full_name()) {
            return Ok(i);
        }
        if self.depth >= MAX_TYPE_DEPTH {
            return Err(format!(
                "its messages contain one another more than {MAX_TYPE_DEPTH} types deep (at {})",
                d.full_name()
            ));
        }
        self.depth += 1;
        let i = self.msgs.len();
        self.names.push(d.full_name().to_string());
        let known = if d.full_name() == "google.protobuf.Timestamp" {
            Known::Timestamp
        } else {
            Known::No
        };
        self.msgs.push(Msg {
            fields: Vec::new(),
            oneofs: Vec::new(),
            known,
        });
        let mut fields = Vec::new();
        let mut oneofs: Vec<(String, Vec<Field>)> = Vec::new();
        for f in d.fields() {
            let kind = match f.kind() {
                Kind::Double => P::Double,
                Kind::Float => P::Float,
                Kind::Int32 => P::Int32,
                Kind::Int64 => P::Int64,
                Kind::Uint32 => P::UInt32,
                Kind::Uint64 => P::UInt64,
                Kind::Sint32 => P::SInt32,
                Kind::Sint64 => P::SInt64,
                Kind::Fixed32 => P::Fixed32,
                Kind::Fixed64 => P::Fixed64,
                Kind::Sfixed32 => P::SFixed32,
                Kind::Sfixed64 => P::SFixed64,
                Kind::Bool => P::Bool,
                Kind::String => P::String,
                Kind::Bytes => P::Bytes,
                Kind::Enum(e) => P::Enum(e.values().map(|v| v.number()).collect()),
                Kind::Message(m) if f.is_group() => P::Group(self.message(&m)?),
                Kind::Message(m) => P::Message(self.message(&m)?),
            };
            let integer = matches!(
                kind,
                P::Int32 | P::Int64 | P::UInt32 | P::UInt64 | P::SInt32 | P::SInt64
            );
            let packed = f.is_packed();
            let card = if f.is_list() || f.is_map() {
                if packed {
                    Card::Packed
                } else {
                    Card::Repeated
                }
            } else if f.cardinality() == Cardinality::Required {
                Card::Always
            } else if f.supports_presence() {
                Card::Optional
            } else {
                Card::Always
            };
            let field = Field {
                key: (u64::from(f.number()) << 3) | kind.wire_type(),
                packed_key: (u64::from(f.number()) << 3) | 2,
                kind,
                card,
                seq: integer && f.name() == "seq" && card == Card::Always,
            };
            match f.containing_oneof().filter(|o| !o.is_synthetic()) {
                Some(o) => match oneofs.iter_mut().find(|(n, _)| n == o.name()) {
                    Some((_, members)) => members.push(field),
                    None => oneofs.push((o.name().to_string(), vec![field])),
                },
                None => fields.push(field),
            }
        }
        self.msgs[i].fields = fields;
        self.msgs[i].oneofs = oneofs.into_iter().map(|(_, m)| m).collect();
        self.depth -= 1;
        Ok(i)
    }
}

/// A proto2 message whose required message fields always lead back to it has no record
/// that ends, and one whose required fields nest deeper than the writer goes loses them.
fn required_ends(msgs: &[Msg], names: &[String]) -> Result<(), String> {
    // The longest chain of required message fields from each message (None: a cycle).
    fn depth(m: usize, msgs: &[Msg], state: &mut [u8], memo: &mut [usize]) -> Option<usize> {
        match state[m] {
            1 => return None,
            2 => return Some(memo[m]),
            _ => {}
        }
        state[m] = 1;
        let mut d = 0;
        for f in msgs[m].fields.iter().filter(|f| f.card == Card::Always) {
            if let P::Message(x) | P::Group(x) = f.kind {
                d = d.max(1 + depth(x, msgs, state, memo)?);
            }
        }
        state[m] = 2;
        memo[m] = d;
        Some(d)
    }
    let mut state = vec![0u8; msgs.len()];
    let mut memo = vec![0usize; msgs.len()];
    for (m, name) in names.iter().enumerate() {
        match depth(m, msgs, &mut state, &mut memo) {
            None => return Err(format!(
                "message {name} always contains itself through required fields, so no record of it ends; make one of them optional"
            )),
            Some(d) if d > 2 * MAX_DEPTH => return Err(format!(
                "message {name}'s required message fields nest {d} levels deep; at most {} are written",
                2 * MAX_DEPTH
            )),
            Some(_) => {}
        }
    }
    Ok(())
}

/// Every message of a file, nested ones too.
fn all_messages(top: Vec<MessageDescriptor>) -> Vec<MessageDescriptor> {
    let mut out = Vec::new();
    for m in top {
        let nested: Vec<MessageDescriptor> =
            m.child_messages().filter(|c| !c.is_map_entry()).collect();
        out.push(m);
        out.extend(all_messages(nested));
    }
    out
}

/// The message's place in its file, outermost index first.
fn indexes(d: &MessageDescriptor) -> Vec<i32> {
    let mut path = Vec::new();
    let mut cur = d.clone();
    loop {
        match cur.parent_message() {
            Some(p) => {
                // Map entries are synthetic: the registry's serializers count only the
                // messages written in the file.
                let i = p
                    .child_messages()
                    .filter(|c| !c.is_map_entry())
                    .position(|c| c.full_name() == cur.full_name());
                path.push(i.unwrap_or(0) as i32);
                cur = p;
            }
            None => {
                let i = cur
                    .parent_file()
                    .messages()
                    .position(|c| c.full_name() == cur.full_name());
                path.push(i.unwrap_or(0) as i32);
                break;
            }
        }
    }
    path.reverse();
    path
}
