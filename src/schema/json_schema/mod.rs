//! JSON Schema: a subset compiled into a tree the writer walks (`write.rs`). What is not
//! supported is refused by name, so no record is generated that the schema would reject.

mod write;

use serde_json::{Map, Value};

use super::values;

/// `$ref`s are expanded in place: this many nodes at most, so references to references
/// cannot blow a small file up into millions.
const MAX_NODES: usize = 100_000;
/// Sizes a schema may demand of each record: larger is a slipped digit, not a payload.
const MAX_LENGTH: u64 = 1 << 20;
const MAX_ITEMS: u64 = 10_000;
/// Schemas nested deeper than this (objects in arrays in objects..., `$ref`s included).
const MAX_DEPTH: usize = 100;

/// Keywords that only annotate, and ones handled elsewhere (`$defs` through `$ref`).
const IGNORED: &[&str] = &[
    "$schema",
    "$id",
    "id",
    "title",
    "description",
    "examples",
    "default",
    "$comment",
    "$defs",
    "definitions",
    "deprecated",
    "readOnly",
    "writeOnly",
    "additionalProperties",
];
const SUPPORTED: &[&str] = &[
    "type",
    "properties",
    "required",
    "enum",
    "const",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "items",
    "minItems",
    "maxItems",
    "oneOf",
    "anyOf",
    "format",
    "$ref",
];

pub(crate) struct JsonSchema {
    root: J,
}

enum J {
    Null,
    Bool,
    Integer {
        lo: i64,
        hi: i64,
        seq: bool,
    },
    Number {
        lo: f64,
        hi: f64,
        lo_open: bool,
        hi_open: bool,
    },
    String {
        min: u64,
        lo: u64,
        hi: u64,
        max: u64,
        format: Format,
    },
    /// `enum` and `const` (one value): each value and its JSON text.
    OneOf(Vec<(Value, Vec<u8>)>),
    Array {
        items: Box<J>,
        lo: u64,
        hi: u64,
        max: u64,
    },
    Object {
        props: Vec<Prop>,
        closed: bool,
    },
    /// `oneOf`, `anyOf` or a list of types; `exactly_one` for `oneOf`.
    Choice {
        branches: Vec<J>,
        exactly_one: bool,
    },
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    None,
    Uuid,
    DateTime,
    Date,
    Email,
}

struct Prop {
    name: String,
    /// `"name":` as JSON text, written as is.
    key: Vec<u8>,
    schema: J,
    required: bool,
}

impl JsonSchema {
    pub(crate) fn compile(text: &str) -> Result<JsonSchema, String> {
        let doc: Value = serde_json::from_str(text).map_err(|e| format!("it is not JSON: {e}"))?;
        let mut c = Compiler {
            doc: &doc,
            refs: Vec::new(),
            nodes: 0,
            depth: 0,
        };
        let root = c.schema(&doc, "", None).map_err(|(at, why)| {
            if at.is_empty() {
                why
            } else {
                format!("at {at}: {why}")
            }
        })?;
        Ok(JsonSchema { root })
    }
}

struct Compiler<'d> {
    doc: &'d Value,
    /// The `$ref`s being expanded, to refuse one that contains itself.
    refs: Vec<String>,
    nodes: usize,
    depth: usize,
}

/// Where in the schema (a JSON pointer) and why.
type Refusal = (String, String);

impl<'d> Compiler<'d> {
    /// Compiles the schema at `at`; `name` is the property it describes (for `seq`).
    fn schema(&mut self, s: &'d Value, at: &str, name: Option<&str>) -> Result<J, Refusal> {
        // Compiling and writing recurse once per level: a chain of `$ref`s thousands long
        // would overflow the stack.
        if self.depth >= MAX_DEPTH {
            return Err((
                at.into(),
                format!("the schema nests more than {MAX_DEPTH} levels deep (through `$ref`s)"),
            ));
        }
        self.depth += 1;
        let j = self.schema_here(s, at, name);
        self.depth -= 1;
        j
    }

    fn schema_here(&mut self, s: &'d Value, at: &str, name: Option<&str>) -> Result<J, Refusal> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err((
                at.into(),
                format!("the schema expands to more than {MAX_NODES} nodes"),
            ));
        }
        let refuse = |why: String| Err((at.to_string(), why));
        let m = match s {
            Value::Object(m) => m,
            Value::Bool(_) => {
                return refuse("a schema of `true` or `false` says nothing a record could be generated from; give it a type".into())
            }
            _ => return refuse("a schema is an object".into()),
        };
        if let Some(k) = m
            .keys()
            .find(|k| !SUPPORTED.contains(&k.as_str()) && !IGNORED.contains(&k.as_str()))
        {
            return refuse(format!(
                "the keyword `{k}` is not supported (records generated without it could break it); supported are {}",
                SUPPORTED.join(", ")
            ));
        }
        if let Some(r) = m.get("$ref") {
            // Beside `$ref` (2019-09 and later) other keywords apply too; the reference alone
            // is followed, so a constraint beside it would be broken.
            if let Some(k) = m
                .keys()
                .find(|k| *k != "$ref" && SUPPORTED.contains(&k.as_str()))
            {
                return refuse(format!(
                    "`{k}` beside `$ref` is not supported (only the reference is followed); move it into the schema referred to"
                ));
            }
            return self.reference(r, at, name);
        }
        if let Some(v) = m.get("const") {
            return Ok(J::OneOf(vec![(v.clone(), text(v))]));
        }
        if let Some(v) = m.get("enum") {
            return match v {
                Value::Array(a) if !a.is_empty() => {
                    Ok(J::OneOf(a.iter().map(|v| (v.clone(), text(v))).collect()))
                }
                _ => refuse("`enum` is a non-empty array of values".into()),
            };
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(v) = m.get(key) {
                let Value::Array(a) = v else {
                    return refuse(format!("`{key}` is an array of schemas"));
                };
                if a.is_empty() {
                    return refuse(format!("`{key}` is empty"));
                }
                let branches = a
                    .iter()
                    .enumerate()
                    .map(|(i, b)| self.schema(b, &format!("{at}/{key}/{i}"), name))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(J::Choice {
                    branches,
                    exactly_one: key == "oneOf",
                });
            }
        }
        let types: Vec<&str> = match m.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(a)) if !a.is_empty() && a.iter().all(Value::is_string) => {
                a.iter().filter_map(Value::as_str).collect()
            }
            Some(_) => return refuse("`type` is a type name or a list of them".into()),
            None if m.contains_key("properties") => vec!["object"],
            None if m.contains_key("items") => vec!["array"],
            None => {
                return refuse("the schema has no `type`, so nothing says what to generate".into())
            }
        };
        let mut branches = Vec::with_capacity(types.len());
        for t in types {
            branches.push(self.typed(t, m, at, name)?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(J::Null)
        } else {
            J::Choice {
                branches,
                exactly_one: false,
            }
        })
    }

    fn typed(
        &mut self,
        t: &str,
        m: &'d Map<String, Value>,
        at: &str,
        name: Option<&str>,
    ) -> Result<J, Refusal> {
        let refuse = |why: String| Err((at.to_string(), why));
        let num = |k: &str| m.get(k).and_then(Value::as_f64);
        let count = |k: &str, max: u64| -> Result<Option<u64>, Refusal> {
            match m.get(k) {
                None => Ok(None),
                Some(v) => match v.as_u64() {
                    Some(n) if n <= max => Ok(Some(n)),
                    Some(n) => Err((
                        at.to_string(),
                        format!("`{k}` is {n}; at most {max} is generated"),
                    )),
                    None => Err((at.to_string(), format!("`{k}` is a whole number"))),
                },
            }
        };
        if let Some(Value::Bool(_)) = m.get("exclusiveMinimum").or(m.get("exclusiveMaximum")) {
            return refuse("boolean `exclusiveMinimum`/`exclusiveMaximum` (draft 4) is not supported; write the bound as a number (draft 6 and later)".into());
        }
        Ok(match t {
            "null" => J::Null,
            "boolean" => J::Bool,
            "integer" => {
                let lo = num("minimum").map(|x| x.ceil()).into_iter().chain(num("exclusiveMinimum").map(|x| x.floor() + 1.0)).fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))));
                let hi = num("maximum").map(|x| x.floor()).into_iter().chain(num("exclusiveMaximum").map(|x| x.ceil() - 1.0)).fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.min(x))));
                let (lo, hi) = match (lo, hi) {
                    (None, None) => (0.0, 9_999.0),
                    (Some(lo), None) => (lo, lo + 9_999.0),
                    (None, Some(hi)) => (hi - 9_999.0, hi),
                    (Some(lo), Some(hi)) => (lo, hi),
                };
                if lo > hi || lo < i64::MIN as f64 || hi > i64::MAX as f64 {
                    return refuse(format!("no integer lies between the bounds ({lo} to {hi})"));
                }
                J::Integer { lo: lo as i64, hi: hi as i64, seq: name == Some("seq") }
            }
            "number" => {
                let (lo_open, hi_open) = (m.contains_key("exclusiveMinimum"), m.contains_key("exclusiveMaximum"));
                let lo = num("minimum").or(num("exclusiveMinimum"));
                let hi = num("maximum").or(num("exclusiveMaximum"));
                let (lo, hi) = match (lo, hi) {
                    (None, None) => (0.0, 1_000.0),
                    (Some(lo), None) => (lo, lo + 1_000.0),
                    (None, Some(hi)) => (hi - 1_000.0, hi),
                    (Some(lo), Some(hi)) => (lo, hi),
                };
                if lo > hi || (lo == hi && (lo_open || hi_open)) || !lo.is_finite() || !hi.is_finite() {
                    return refuse(format!("no number lies between the bounds ({lo} to {hi})"));
                }
                J::Number { lo, hi, lo_open, hi_open }
            }
            "string" => {
                let format = match m.get("format").map(|f| f.as_str().unwrap_or("")) {
                    None => Format::None,
                    Some("uuid") => Format::Uuid,
                    Some("date-time") => Format::DateTime,
                    Some("date") => Format::Date,
                    Some("email") => Format::Email,
                    Some(f) => return refuse(format!("the format `{f}` is not supported; supported are uuid, date-time, date and email")),
                };
                let min = count("minLength", MAX_LENGTH)?;
                let max = count("maxLength", u64::MAX)?;
                let lo = min.unwrap_or(values::STRING_LEN.0.min(max.unwrap_or(u64::MAX)));
                let max = max.unwrap_or(u64::MAX);
                // Generated strings stay short even when the schema allows long ones.
                let hi = max.min(lo.max(values::STRING_LEN.1));
                if lo > max {
                    return refuse(format!("minLength {lo} is above maxLength {max}"));
                }
                let fixed = match format {
                    Format::Uuid => Some(36),
                    Format::DateTime => Some(24),
                    Format::Date => Some(10),
                    _ => None,
                };
                if let Some(n) = fixed.filter(|n| *n < lo || *n > max) {
                    return refuse(format!("the format's strings are {n} characters, outside minLength/maxLength"));
                }
                if format == Format::Email && (max < 11 || lo > hi.max(lo)) {
                    return refuse("an email address here is 11 to 32 characters; the length bounds leave no room".into());
                }
                J::String { min: min.unwrap_or(0), lo, hi, max, format }
            }
            "array" => {
                let items = match m.get("items") {
                    Some(s) => self.schema(s, &format!("{at}/items"), None)?,
                    None => return refuse("an array needs `items`, the schema of its items".into()),
                };
                let lo = count("minItems", MAX_ITEMS)?.unwrap_or(0);
                let max = count("maxItems", u64::MAX)?.unwrap_or(u64::MAX);
                if lo > max {
                    return refuse(format!("minItems {lo} is above maxItems {max}"));
                }
                J::Array { items: Box::new(items), lo, hi: max.min(lo.max(values::ITEMS.1)), max }
            }
            "object" => {
                let required: Vec<&str> = match m.get("required") {
                    None => Vec::new(),
                    Some(Value::Array(a)) if a.iter().all(Value::is_string) => a.iter().filter_map(Value::as_str).collect(),
                    Some(_) => return refuse("`required` is an array of property names".into()),
                };
                let props_map = match m.get("properties") {
                    None => None,
                    Some(Value::Object(p)) => Some(p),
                    Some(_) => return refuse("`properties` is an object of schemas".into()),
                };
                if let Some(r) = required.iter().find(|r| !props_map.is_some_and(|p| p.contains_key(**r))) {
                    return refuse(format!("`required` names {r:?}, which `properties` does not describe"));
                }
                let closed = match m.get("additionalProperties") {
                    None | Some(Value::Bool(true)) => false,
                    Some(Value::Bool(false)) => true,
                    Some(_) => return refuse("`additionalProperties` with a schema is not supported; use true or false".into()),
                };
                let mut props = Vec::with_capacity(props_map.map_or(0, Map::len));
                for (k, s) in props_map.into_iter().flatten() {
                    let schema = self.schema(s, &format!("{at}/properties/{k}"), Some(k))?;
                    let mut key = Vec::new();
                    values::json_str(&mut key, k.as_bytes());
                    key.push(b':');
                    props.push(Prop { name: k.clone(), key, schema, required: required.contains(&k.as_str()) });
                }
                J::Object { props, closed }
            }
            other => return refuse(format!("unknown type `{other}`; types are null, boolean, integer, number, string, array and object")),
        })
    }

    fn reference(&mut self, r: &'d Value, at: &str, name: Option<&str>) -> Result<J, Refusal> {
        let Some(r) = r.as_str() else {
            return Err((at.into(), "`$ref` is a string".into()));
        };
        let target = r
            .strip_prefix('#')
            .filter(|p| p.is_empty() || p.starts_with('/'))
            .and_then(|p| self.doc.pointer(p))
            .ok_or_else(|| (at.to_string(), format!("`$ref` {r:?} does not point into this file (only local references such as \"#/$defs/item\" are followed)")))?;
        if self.refs.iter().any(|x| x == r) {
            return Err((
                at.into(),
                format!("`$ref` {r:?} contains itself; recursive schemas are not supported"),
            ));
        }
        self.refs.push(r.to_string());
        let j = self.schema(target, r.trim_start_matches('#'), name);
        self.refs.pop();
        j
    }
}

fn text(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}
