//! A payload or key shaped by a schema: `avro(...)`, `protobuf(...)`, `json_schema(...)`,
//! random records of it or a JSON-lines file encoded with it, and the registry it is
//! registered with.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Serialize, Serializer};

use crate::schema::{registry, Schema};

#[derive(Clone, Debug, Serialize)]
pub struct SchemaPayload {
    /// The call that named it: `avro`, `protobuf` or `json_schema`.
    pub format: &'static str,
    pub path: PathBuf,
    /// A `.proto`'s message (`shop.Order`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip)]
    pub schema: Arc<Schema>,
    /// `lines: "data.jsonl"`: each line encoded at check time, sent in turn; None: random
    /// records of the schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<PathBuf>,
    #[serde(skip)]
    pub encoded: Option<Arc<Vec<Vec<u8>>>>,
    /// `cluster { schema_registry = "..." }`: the schema is registered there before the run
    /// and every record carries the wire prefix with its id.
    #[serde(serialize_with = "masked", skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
    /// The wire prefix with the registered id, set by the run stage once registered (empty
    /// until then and without a registry); with `lines`, `encoded` then carries it already.
    #[serde(skip)]
    pub prefix: Vec<u8>,
    /// Bytes per record: a sample's average, or the encoded lines' (prefix not included).
    pub nominal: usize,
}

impl SchemaPayload {
    /// Nominal bytes per record as sent: with the wire prefix when a registry is named.
    pub fn nominal_size(&self) -> usize {
        let prefix = if self.registry.is_some() {
            self.schema.wire_prefix(0).len()
        } else {
            0
        };
        self.nominal + prefix
    }

    /// How `plan` shows it: `avro records of schemas/order.avsc (~120 B)`.
    pub fn describe(&self) -> String {
        let what = match &self.message {
            Some(m) => format!("{} {m}", self.format),
            None => self.format.to_string(),
        };
        let body = match (&self.lines, &self.encoded) {
            (Some(l), Some(e)) => format!(
                "{} lines of {} as {what} of {}",
                e.len(),
                l.display(),
                self.path.display()
            ),
            _ => format!("random {what} records of {}", self.path.display()),
        };
        let registered = match &self.registry {
            Some(r) => format!(", registered at {}", registry::masked(r)),
            None => String::new(),
        };
        format!("{body} (~{} B){registered}", self.nominal_size())
    }
}

fn masked<S: Serializer>(url: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match url {
        Some(u) => s.serialize_some(&registry::masked(u)),
        None => s.serialize_none(),
    }
}
