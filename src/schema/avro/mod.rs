//! Avro: an `.avsc` parsed by the `apache-avro` crate, then compiled into a flat tree of nodes
//! the writers walk (`write.rs`) without building an `apache_avro::types::Value` per record.

mod write;

use std::collections::HashMap;

use apache_avro::schema::{Schema as Avsc, UnionSchema};

/// A `fixed` larger than this is refused: a random megabyte per field is a slipped digit, and
/// a hostile schema must not make each record gigabytes long.
const MAX_FIXED: usize = 1 << 20;
/// Decimals are generated and encoded through i128: 38 digits.
const MAX_PRECISION: usize = 38;
/// Records whose every value nests deeper than this are refused.
const MAX_RANK: u32 = 200;

/// The compiled schema: nodes in an arena, named types shared by index (so a recursive
/// record points back at itself), `root` the top.
pub(crate) struct Avro {
    nodes: Vec<Node>,
    root: usize,
    /// For each node, the branch of a union (or nothing) that ends soonest: what a record
    /// nested past the depth limit takes, so recursion ends.
    escape: Vec<usize>,
}

/// One Avro type, with its logical type folded in.
enum Node {
    Null,
    Boolean,
    Int(IntKind),
    Long(LongKind),
    Float,
    Double,
    Bytes,
    String,
    Uuid,
    Fixed(usize),
    Enum(Vec<String>),
    Array(usize),
    Map(usize),
    Union(Vec<usize>),
    Record(Record),
    Decimal {
        precision: usize,
        scale: usize,
        /// The fixed size, or None for bytes.
        fixed: Option<usize>,
    },
    /// Avro's `duration`: a fixed(12) of three little-endian u32 (months, days, millis).
    Duration,
    /// A named type still being compiled (only while compiling).
    Pending,
}

#[derive(Clone, Copy, PartialEq)]
enum IntKind {
    Plain,
    Date,
    TimeMillis,
}

#[derive(Clone, Copy, PartialEq)]
enum LongKind {
    Plain,
    TimeMicros,
    /// An instant, in this many units per millisecond (1 millis, 1000 micros, 10^6 nanos).
    Instant(i64),
}

struct Record {
    name: String,
    fields: Vec<Field>,
}

struct Field {
    name: String,
    node: usize,
    default: Option<serde_json::Value>,
    /// An integer field named `seq` carries the record's sequence number.
    seq: bool,
}

impl Avro {
    /// Parses and compiles an `.avsc` text. Err: why, in words.
    pub(crate) fn compile(text: &str) -> Result<Avro, String> {
        // apache-avro reads a uuid over a fixed(16) as a plain uuid, which would lose how it
        // is encoded: refused rather than written as a string the reader does not expect.
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("it is not JSON: {e}"))?;
        if uuid_on_fixed(&json) {
            return Err("a uuid over a fixed(16) is not supported; use {\"type\": \"string\", \"logicalType\": \"uuid\"}".into());
        }
        let avsc = Avsc::parse(&json).map_err(|e| format!("it is not an Avro schema: {e}"))?;
        let mut durations = Vec::new();
        named_durations(&json, None, &mut durations);
        let mut c = Compiler {
            nodes: Vec::new(),
            names: HashMap::new(),
            durations,
        };
        let root = c.node(&avsc, None)?;
        let nodes = c.nodes;
        let escape = escapes(&nodes, root)?;
        Ok(Avro {
            nodes,
            root,
            escape,
        })
    }
}

struct Compiler {
    nodes: Vec<Node>,
    names: HashMap<String, usize>,
    /// The full names of the fixed types that are durations.
    durations: Vec<String>,
}

impl Compiler {
    fn push(&mut self, n: Node) -> usize {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    /// Compiles `s`; `field` is the record field it is the type of (for `seq`).
    fn node(&mut self, s: &Avsc, namespace: Option<&str>) -> Result<usize, String> {
        let node = match s {
            Avsc::Null => Node::Null,
            Avsc::Boolean => Node::Boolean,
            Avsc::Int => Node::Int(IntKind::Plain),
            Avsc::Date => Node::Int(IntKind::Date),
            Avsc::TimeMillis => Node::Int(IntKind::TimeMillis),
            Avsc::Long => Node::Long(LongKind::Plain),
            Avsc::TimeMicros => Node::Long(LongKind::TimeMicros),
            Avsc::TimestampMillis | Avsc::LocalTimestampMillis => {
                Node::Long(LongKind::Instant(1))
            }
            Avsc::TimestampMicros | Avsc::LocalTimestampMicros => {
                Node::Long(LongKind::Instant(1000))
            }
            Avsc::TimestampNanos | Avsc::LocalTimestampNanos => {
                Node::Long(LongKind::Instant(1_000_000))
            }
            Avsc::Float => Node::Float,
            Avsc::Double => Node::Double,
            Avsc::Bytes => Node::Bytes,
            Avsc::String => Node::String,
            Avsc::Uuid => Node::Uuid,
            Avsc::Duration => Node::Duration,
            Avsc::BigDecimal => {
                return Err("the big-decimal logical type is not supported; use decimal with a precision and scale".into())
            }
            Avsc::Decimal(d) => {
                if d.precision > MAX_PRECISION || d.precision == 0 || d.scale > d.precision {
                    return Err(format!(
                        "a decimal's precision is 1 to {MAX_PRECISION} here, its scale at most the precision (got precision {}, scale {})",
                        d.precision, d.scale
                    ));
                }
                let (fixed, name) = match d.inner.as_ref() {
                    Avsc::Fixed(f) => (Some(fixed_size(f.size, &f.name.name)?), Some(&f.name)),
                    _ => (None, None),
                };
                let i = self.push(Node::Decimal {
                    precision: d.precision,
                    scale: d.scale,
                    fixed,
                });
                // A decimal over a named fixed: later fields may use it by name.
                if let Some(name) = name {
                    self.names.insert(name.fullname(None), i);
                }
                return Ok(i);
            }
            Avsc::Fixed(f) => {
                let size = fixed_size(f.size, &f.name.name)?;
                let i = self.push(Node::Fixed(size));
                self.names.insert(f.name.fullname(None), i);
                return Ok(i);
            }
            Avsc::Enum(e) => {
                if e.symbols.is_empty() {
                    return Err(format!("enum {} has no symbols", e.name.name));
                }
                let i = self.push(Node::Enum(e.symbols.clone()));
                self.names.insert(e.name.fullname(None), i);
                return Ok(i);
            }
            Avsc::Array(a) => {
                let items = self.node(&a.items, namespace)?;
                Node::Array(items)
            }
            Avsc::Map(m) => {
                let values = self.node(&m.types, namespace)?;
                Node::Map(values)
            }
            Avsc::Union(u) => return self.union(u, namespace),
            Avsc::Record(r) => {
                // Named before its fields are compiled, so a field may refer back to it.
                let i = self.push(Node::Pending);
                let full = r.name.fullname(None);
                self.names.insert(full.clone(), i);
                let mut fields = Vec::with_capacity(r.fields.len());
                for f in &r.fields {
                    let node = self.node(&f.schema, r.name.namespace.as_deref())?;
                    let integer = matches!(
                        self.nodes[node],
                        Node::Int(IntKind::Plain) | Node::Long(LongKind::Plain)
                    );
                    fields.push(Field {
                        name: f.name.clone(),
                        node,
                        default: f.default.clone(),
                        seq: integer && f.name == "seq",
                    });
                }
                self.nodes[i] = Node::Record(Record {
                    name: r.name.name.clone(),
                    fields,
                });
                return Ok(i);
            }
            Avsc::Ref { name } => {
                let full = name.fullname(namespace.map(str::to_string));
                if let Some(&i) = self
                    .names
                    .get(&full)
                    .or_else(|| self.names.get(&name.fullname(None)))
                {
                    return Ok(i);
                }
                // apache-avro keeps no name for a fixed that is a duration: any use of one by
                // name is a duration again.
                if self.durations.contains(&full) || self.durations.contains(&name.fullname(None))
                {
                    return Ok(self.push(Node::Duration));
                }
                return Err(format!("the type {full} is used but never defined"));
            }
        };
        Ok(self.push(node))
    }

    fn union(&mut self, u: &UnionSchema, namespace: Option<&str>) -> Result<usize, String> {
        let mut branches = Vec::with_capacity(u.variants().len());
        for v in u.variants() {
            branches.push(self.node(v, namespace)?);
        }
        if branches.is_empty() {
            return Err("a union has no types".into());
        }
        Ok(self.push(Node::Union(branches)))
    }
}

fn fixed_size(size: usize, name: &str) -> Result<usize, String> {
    if size > MAX_FIXED {
        return Err(format!(
            "fixed {name} is {size} bytes; at most {MAX_FIXED} are generated per field"
        ));
    }
    Ok(size)
}

/// The full names of the `fixed` types with the `duration` logical type, each under the
/// namespace it is defined in (its own, or the enclosing named type's).
fn named_durations(v: &serde_json::Value, ns: Option<&str>, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            let text = |k: &str| m.get(k).and_then(serde_json::Value::as_str);
            let named = matches!(text("type"), Some("record" | "error" | "enum" | "fixed"));
            let full = text("name").filter(|_| named).map(|n| {
                match (n.contains('.'), text("namespace").or(ns)) {
                    (false, Some(ns)) if !ns.is_empty() => format!("{ns}.{n}"),
                    _ => n.to_string(),
                }
            });
            if text("type") == Some("fixed") && text("logicalType") == Some("duration") {
                out.extend(full.clone());
            }
            let inner = full
                .as_deref()
                .and_then(|f| f.rsplit_once('.'))
                .map(|(ns, _)| ns);
            let inner = if named { inner } else { ns };
            for (k, x) in m {
                if k != "default" {
                    named_durations(x, inner, out);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| named_durations(x, ns, out)),
        _ => {}
    }
}

/// Whether the schema has a `fixed` with the `uuid` logical type anywhere.
fn uuid_on_fixed(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(m) => {
            (m.get("type").and_then(|t| t.as_str()) == Some("fixed")
                && m.get("logicalType").and_then(|t| t.as_str()) == Some("uuid"))
                || m.values().any(uuid_on_fixed)
        }
        serde_json::Value::Array(a) => a.iter().any(uuid_on_fixed),
        _ => false,
    }
}

/// Each node's rank: how many nesting steps its shortest finite value takes (None: it has
/// none, a record that always contains itself), and for a union the branch with the lowest
/// rank. Following the lowest-rank branch strictly lowers the rank, so a record nested past
/// the depth limit ends.
fn escapes(nodes: &[Node], root: usize) -> Result<Vec<usize>, String> {
    let mut rank: Vec<Option<u32>> = vec![None; nodes.len()];
    let mut escape = vec![0usize; nodes.len()];
    // Each pass settles at least one more node, or nothing changes any more.
    for _ in 0..=nodes.len() {
        let mut changed = false;
        for (i, n) in nodes.iter().enumerate() {
            if rank[i].is_some() {
                continue;
            }
            let r = match n {
                Node::Union(b) => b
                    .iter()
                    .enumerate()
                    .filter_map(|(k, &x)| rank[x].map(|r| (r, k)))
                    .min()
                    .map(|(r, k)| {
                        escape[i] = k;
                        r + 1
                    }),
                Node::Record(r) => r
                    .fields
                    .iter()
                    .map(|f| rank[f.node])
                    .try_fold(0u32, |m, r| r.map(|r| m.max(r)))
                    .map(|m| m + 1),
                // Empty arrays and maps end at once.
                _ => Some(0),
            };
            if r.is_some() {
                rank[i] = r;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // The writer recurses once per level, and past the depth limit follows the escapes:
    // a record whose shortest value nests thousands of levels deep would overflow the stack.
    if let Some(i) = (0..nodes.len()).find(|&i| rank[i].is_some_and(|r| r > MAX_RANK)) {
        if reachable(nodes, root, i) {
            let name = match &nodes[i] {
                Node::Record(r) => format!("record {}", r.name),
                _ => "a union".into(),
            };
            return Err(format!(
                "{name} nests more than {MAX_RANK} levels deep in its every record"
            ));
        }
    }
    if let Some(i) = (0..nodes.len()).find(|&i| rank[i].is_none() && reachable(nodes, root, i)) {
        let name = match &nodes[i] {
            Node::Record(r) => r.name.clone(),
            _ => "a union".into(),
        };
        return Err(format!(
            "record {name} always contains itself, so no record of it ends; make the recursive field optional (a union with null) or an array"
        ));
    }
    Ok(escape)
}

/// Whether `target` is reachable from `from`.
fn reachable(nodes: &[Node], from: usize, target: usize) -> bool {
    let mut seen = vec![false; nodes.len()];
    let mut stack = vec![from];
    while let Some(i) = stack.pop() {
        if i == target {
            return true;
        }
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        match &nodes[i] {
            Node::Array(x) | Node::Map(x) => stack.push(*x),
            Node::Union(b) => stack.extend(b),
            Node::Record(r) => stack.extend(r.fields.iter().map(|f| f.node)),
            _ => {}
        }
    }
    false
}
