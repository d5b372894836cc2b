//! Payloads shaped like production topics: a schema (Avro, Protobuf, JSON Schema) compiled
//! once, then random records of it written straight into a buffer, JSON documents encoded
//! with it, and the Confluent wire prefix. A foundation: imports only `random` from the crate.

mod avro;
mod json_schema;
mod proto;
mod proto_files;
pub mod registry;
mod values;
mod wire;

use std::fmt;
use std::path::Path;

use crate::random::Rng;

/// Schema files are read whole: at most this big (a real schema is a few KiB).
const MAX_SCHEMA_FILE: u64 = 4 << 20;

/// The kind of schema, as the registry names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Avro,
    Protobuf,
    JsonSchema,
}

impl Format {
    /// The registry's `schemaType`.
    pub fn registry_type(self) -> &'static str {
        match self {
            Format::Avro => "AVRO",
            Format::Protobuf => "PROTOBUF",
            Format::JsonSchema => "JSON",
        }
    }

    /// The call that names it in a scenario.
    pub fn call(self) -> &'static str {
        match self {
            Format::Avro => "avro",
            Format::Protobuf => "protobuf",
            Format::JsonSchema => "json_schema",
        }
    }
}

/// A compiled schema: immutable, shared by every producer thread through an `Arc`.
pub struct Schema {
    format: Format,
    /// What the registry is given: the file's text.
    text: String,
    body: Body,
}

enum Body {
    Avro(avro::Avro),
    Proto(Box<proto::Proto>),
    Json(json_schema::JsonSchema),
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Schema({:?}, {} bytes of text)",
            self.format,
            self.text.len()
        )
    }
}

/// What a generated record may depend on besides the generator: its sequence number and its
/// send time (instants are drawn shortly before it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp {
    pub seq: u64,
    pub unix_ms: u64,
}

/// Why a JSON document does not fit a schema: where (`.items[2].sku`, empty at the top) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misfit {
    pub path: String,
    pub why: String,
}

impl Misfit {
    pub(crate) fn new(why: impl Into<String>) -> Misfit {
        Misfit {
            path: String::new(),
            why: why.into(),
        }
    }

    /// The same misfit, one level further out.
    pub(crate) fn inside(mut self, step: &str) -> Misfit {
        self.path.insert_str(0, step);
        self
    }
}

impl fmt::Display for Misfit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.path.strip_prefix('.') {
            _ if self.path.is_empty() => write!(f, "{}", self.why),
            Some(p) => write!(f, "field {p}: {}", self.why),
            None => write!(f, "{}: {}", self.path, self.why),
        }
    }
}

impl Schema {
    /// Reads and compiles a schema file; `message` names the record's message in a `.proto`
    /// (required there, refused elsewhere by the caller). Err: why, in words, without the path.
    pub fn load(format: Format, path: &Path, message: Option<&str>) -> Result<Schema, String> {
        let text = read(path)?;
        let body = match format {
            Format::Avro => Body::Avro(avro::Avro::compile(&text)?),
            Format::JsonSchema => Body::Json(json_schema::JsonSchema::compile(&text)?),
            Format::Protobuf => {
                let message = message.ok_or("a .proto needs the message records are of")?;
                Body::Proto(Box::new(proto::Proto::compile(path, message)?))
            }
        };
        // The registry stores JSON schemas as given; compact them so the text registered
        // does not depend on the file's layout.
        let text = match format {
            Format::Avro | Format::JsonSchema => serde_json::from_str::<serde_json::Value>(&text)
                .map(|v| v.to_string())
                .unwrap_or(text),
            Format::Protobuf => text,
        };
        let schema = Schema { format, text, body };
        schema.sample()?;
        Ok(schema)
    }

    /// The local files a `.proto` imports (directly or not), by import name, with their
    /// text: registered as its references. Empty for other formats.
    pub fn imports(&self) -> &[(String, String)] {
        match &self.body {
            Body::Proto(p) => &p.imports,
            _ => &[],
        }
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// The schema's text as the registry receives it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Appends one valid random record for sequence number `seq`, its instants near now.
    pub fn generate(&self, rng: &mut Rng, seq: u64, out: &mut Vec<u8>) {
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.generate_at(rng, seq, unix_ms, out)
    }

    /// Appends one valid random record, its instants shortly before `unix_ms` (the record's
    /// send time, which the send loop already has). The hot path: no allocation once `out`
    /// has grown.
    #[inline]
    pub fn generate_at(&self, rng: &mut Rng, seq: u64, unix_ms: u64, out: &mut Vec<u8>) {
        let at = Stamp { seq, unix_ms };
        match &self.body {
            Body::Avro(a) => a.generate(rng, at, out),
            Body::Proto(p) => p.generate(rng, at, out),
            Body::Json(j) => j.generate(rng, at, out),
        }
    }

    /// Appends one JSON document encoded with the schema (Avro binary, protobuf wire
    /// format, or the JSON itself once it is checked).
    pub fn encode_json(&self, v: &serde_json::Value, out: &mut Vec<u8>) -> Result<(), Misfit> {
        match &self.body {
            Body::Avro(a) => a.encode_json(v, out),
            Body::Proto(p) => p.encode_json(v, out),
            Body::Json(j) => j.encode_json(v, out),
        }
    }

    /// The Confluent wire format's prefix for schema `id`: magic byte 0, the id big-endian,
    /// and for protobuf the message's indexes in its file (a single 0 for the first message).
    pub fn wire_prefix(&self, id: u32) -> Vec<u8> {
        let mut out = vec![0u8];
        out.extend_from_slice(&id.to_be_bytes());
        if let Body::Proto(p) = &self.body {
            if p.indexes == [0] {
                out.push(0);
            } else {
                wire::varint(&mut out, wire::zigzag(p.indexes.len() as i64));
                for &i in &p.indexes {
                    wire::varint(&mut out, wire::zigzag(i64::from(i)));
                }
            }
        }
        out
    }

    /// The average size of a sample of generated records (fixed seed), for `plan`.
    pub fn nominal_size(&self) -> usize {
        self.sample().unwrap_or(0)
    }

    /// Generates a fixed sample: its average size, or an error for a schema whose records
    /// come out absurdly large (nesting that multiplies).
    fn sample(&self) -> Result<usize, String> {
        const SAMPLE: usize = 64;
        const MAX_RECORD: usize = 16 << 20;
        let mut rng = Rng::new(0x005c_4e4a);
        let mut out = Vec::new();
        let mut total = 0;
        for seq in 0..SAMPLE as u64 {
            out.clear();
            self.generate_at(&mut rng, seq, 1_700_000_000_000, &mut out);
            if out.len() > MAX_RECORD {
                return Err(format!(
                    "its records come out {} MiB large; nesting multiplies too much",
                    out.len() >> 20
                ));
            }
            total += out.len();
        }
        Ok(total / SAMPLE)
    }
}

/// The files a `.proto` text imports, as written (`import "a.proto";`, `import public ...`).
pub(crate) fn imported(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in text.split(';') {
        let words = stmt.trim_start();
        let Some(rest) = words
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("//"))
            .and_then(|l| l.strip_prefix("import"))
        else {
            continue;
        };
        let rest = rest.trim_start();
        let rest = ["public", "weak"]
            .iter()
            .find_map(|w| rest.strip_prefix(w))
            .unwrap_or(rest)
            .trim();
        if let Some(name) = rest
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .or_else(|| rest.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')))
        {
            out.push(name.to_string());
        }
    }
    out
}

/// A JSON value shown in a message, cut short.
pub(crate) fn shown(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

fn read(path: &Path) -> Result<String, String> {
    use std::io::Read as _;
    let reason = |e: std::io::Error| e.to_string().to_lowercase();
    let meta = std::fs::metadata(path).map_err(reason)?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SCHEMA_FILE + 1).read_to_string(&mut text))
        .map_err(reason)?;
    if text.len() as u64 > MAX_SCHEMA_FILE {
        return Err(format!(
            "it is larger than {} MiB, too large for a schema",
            MAX_SCHEMA_FILE >> 20
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests;
