//! Payload and key calls shaped by a schema: `avro("order.avsc")`,
//! `protobuf("order.proto", message: "shop.Order")`, `json_schema("order.schema.json")`, each
//! with `lines: "orders.jsonl"` to send a file's JSON documents encoded with the schema.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::axis::Picks;
use super::Checker;
use super::Setting;
use crate::diagnostic::{Diagnostic, Kind};
use crate::model::{KeySpec, PayloadSpec, Scalar, SchemaPayload, Workload};
use crate::schema::{Format, Schema};
use crate::source::{Span, Spanned};
use crate::syntax::{Arg, Value};

/// The calls, by name.
pub(super) const CALLS: [&str; 3] = ["avro", "protobuf", "json_schema"];

/// A schema file, loaded once per check (by path and message) however many cells use it.
pub(super) type Loaded = Result<Arc<Schema>, String>;

/// Names the registry on the workload's schema payload and key, which are then registered
/// before the run and framed with its id. A workload without one ignores it, so a cluster
/// file shared by several scenarios may name it.
pub(super) fn use_registry(w: &mut Workload, url: &str) {
    if let PayloadSpec::Schema(s) = &mut w.payload {
        s.registry = Some(url.to_string());
    }
    if let KeySpec::Schema(s) = &mut w.key {
        s.registry = Some(url.to_string());
    }
}

impl Checker<'_> {
    /// `cluster { schema_registry = "http://..." }`: kafkabench's own setting, never handed
    /// to librdkafka.
    pub(super) fn schema_registry(&mut self, e: &Setting, ctx: &Picks) -> Option<String> {
        match self.scalar(&e.value, ctx)? {
            Scalar::Str(s) => match crate::schema::registry::url_problem(&s) {
                None => Some(s),
                Some(why) => {
                    let help = "e.g. \"http://127.0.0.1:8081\" (Confluent) or \"http://127.0.0.1:8080/apis/ccompat/v7\" (Apicurio)";
                    // With credentials in it, the line is not shown: it holds the password.
                    let d = if s.contains('@') {
                        Diagnostic::unplaced(
                            Kind::Value,
                            format!("cluster {{ schema_registry }}: {why}"),
                        )
                    } else {
                        Diagnostic::new(Kind::Value, e.value.span, why).label("not a registry URL")
                    };
                    self.err(d.help(help));
                    None
                }
            },
            other => {
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        e.value.span,
                        format!("schema_registry is a URL string, not {}", other.kind_name()),
                    )
                    .label("expected \"http://host:port\"")
                    .help("e.g. `schema_registry = \"http://127.0.0.1:8081\"` or `schema_registry = env(\"REGISTRY_URL\")`"),
                );
                None
            }
        }
    }

    /// A registry named the way the Java serializers or other tools name it: what
    /// kafkabench calls it (librdkafka would only call it an unknown property).
    pub(super) fn misnamed_registry(&mut self, e: &Setting) {
        self.err(
            Diagnostic::new(
                Kind::UnknownKey,
                e.key.span,
                format!("`{}` is not a client property", e.key.node),
            )
            .label("a schema registry setting")
            .help("did you mean `schema_registry`? kafkabench registers the schemas itself: `schema_registry = \"http://127.0.0.1:8081\"`"),
        );
    }

    /// The schema payload a call names; None if reported.
    pub(super) fn schema_payload(
        &mut self,
        name: &Spanned<String>,
        args: &[Arg],
        call: Span,
        ctx: &Picks,
    ) -> Option<SchemaPayload> {
        let format = match name.node.as_str() {
            "avro" => Format::Avro,
            "protobuf" => Format::Protobuf,
            _ => Format::JsonSchema,
        };
        let allowed: &[&str] = match format {
            Format::Protobuf => &["path", "message", "lines"],
            _ => &["path", "lines"],
        };
        let example = match format {
            Format::Avro => "avro(\"schemas/order.avsc\")",
            Format::Protobuf => "protobuf(\"schemas/order.proto\", message: \"shop.Order\")",
            Format::JsonSchema => "json_schema(\"schemas/order.schema.json\")",
        };
        let a = self.call_args(name, args, allowed);
        let mut path = None;
        let mut message = None;
        let mut lines = None;
        let mut ok = true;
        for (k, val) in a {
            match self.scalar(val, ctx) {
                Some(Scalar::Str(s)) | Some(Scalar::Word(s)) if k == "message" => {
                    message = Some((s, val.span))
                }
                Some(Scalar::Str(s)) if k == "path" => {
                    path = Some((self.relative(&s, val), val.span))
                }
                Some(Scalar::Str(s)) => lines = Some((self.relative(&s, val), val.span)),
                Some(other) => {
                    ok = false;
                    let what = if k == "message" {
                        "a message name"
                    } else {
                        "a path string"
                    };
                    self.err(
                        Diagnostic::new(
                            Kind::Type,
                            val.span,
                            format!("`{k}` is {what}, not {}", other.kind_name()),
                        )
                        .label("here")
                        .help(format!("e.g. `{example}`")),
                    );
                }
                None => ok = false,
            }
        }
        let Some((path, path_span)) = path else {
            if ok {
                self.err(
                    Diagnostic::new(
                        Kind::Missing,
                        call,
                        format!("{}() needs the schema file", name.node),
                    )
                    .label("here")
                    .help(format!("e.g. `{example}`")),
                );
            }
            return None;
        };
        if format == Format::Protobuf && message.is_none() {
            self.err(
                Diagnostic::new(
                    Kind::Missing,
                    call,
                    "protobuf() needs the message records are of",
                )
                .label("which message of the file?")
                .help(format!("e.g. `{example}`")),
            );
            return None;
        }
        if !ok {
            return None;
        }
        let msg = message.as_ref().map(|(m, _)| m.clone());
        let loaded = self
            .schemas
            .entry((path.clone(), msg.clone()))
            .or_insert_with(|| Schema::load(format, &path, msg.as_deref()).map(Arc::new))
            .clone();
        let schema = match loaded {
            Ok(s) => s,
            Err(why) => {
                // A message the file does not declare is the message's mistake, not the file's.
                let (span, label, help) =
                    match (&message, why.strip_prefix("it declares no message ")) {
                        (Some((_, span)), Some(rest)) => (
                            *span,
                            "not a message of the file",
                            rest.split_once("; ").map_or(rest, |(_, h)| h).to_string(),
                        ),
                        _ => (
                            path_span,
                            "this schema",
                            self.folder_help(&path, &why, path_span),
                        ),
                    };
                // The message's alternatives go in the help, not twice.
                let why = match why.split_once("; ") {
                    Some((head, _)) if why.starts_with("it declares no message") => {
                        head.to_string()
                    }
                    _ => why,
                };
                self.err(
                    Diagnostic::new(
                        Kind::PayloadFile,
                        span,
                        format!("cannot use {} schema {}: {why}", name.node, path.display()),
                    )
                    .label(label)
                    .help(help),
                );
                return None;
            }
        };
        let (encoded, nominal) = match &lines {
            Some((file, span)) => {
                let enc = self.encode_lines(&schema, file, *span, &path)?;
                let avg = enc.iter().map(Vec::len).sum::<usize>() / enc.len().max(1);
                (Some(Arc::new(enc)), avg)
            }
            None => (None, schema.nominal_size()),
        };
        Some(SchemaPayload {
            format: format.call(),
            path,
            message: msg,
            schema,
            lines: lines.map(|(p, _)| p),
            encoded,
            registry: None,
            prefix: Vec::new(),
            nominal,
        })
    }

    /// A path as written, relative to the scenario file that names it (`..` folded away, so
    /// messages show `tests/fixtures/schema/order.avsc`, not `.../invalid/../schema/...`).
    fn relative(&self, p: &str, val: &Value) -> PathBuf {
        let joined = self.scenario_path(p, val);
        let mut out = PathBuf::new();
        for c in joined.components() {
            match c {
                std::path::Component::ParentDir
                    if matches!(
                        out.components().next_back(),
                        Some(std::path::Component::Normal(_))
                    ) =>
                {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                c => out.push(c),
            }
        }
        out
    }

    /// The help for a file that cannot be read: where relative paths start.
    fn folder_help(&self, path: &Path, why: &str, scenario: Span) -> String {
        if path.is_file() {
            return match why {
                w if w.contains("not supported") => "kafkabench generates records only of schemas it can honour; simplify the schema or send a file of records with `file(...)`".into(),
                _ => "fix the schema file; `check` reads it as the registry would".into(),
            };
        }
        self.relative_paths_help(scenario)
    }

    /// Each non-empty line of a JSON-lines file encoded with the schema; the first line that
    /// is not JSON or does not fit is reported with its number and field.
    fn encode_lines(
        &mut self,
        schema: &Schema,
        file: &Path,
        span: Span,
        schema_path: &Path,
    ) -> Option<Vec<Vec<u8>>> {
        let fail = |c: &mut Self, msg: String, help: String| {
            c.err(
                Diagnostic::new(Kind::PayloadFile, span, msg)
                    .label("these lines")
                    .help(help),
            );
            None
        };
        let data = match super::records::read(file) {
            Ok(d) => d,
            Err(why) => {
                let help = self.folder_help(file, &why, span);
                return fail(
                    self,
                    format!("cannot use lines file {}: {why}", file.display()),
                    help,
                );
            }
        };
        let mut out = Vec::new();
        let mut bad = 0usize;
        let mut first: Option<(usize, String)> = None;
        for (i, line) in data.split(|b| *b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let problem = match serde_json::from_slice::<serde_json::Value>(line) {
                Err(e) => Some(format!("it is not JSON ({e})")),
                Ok(v) => {
                    let mut enc = Vec::new();
                    match schema.encode_json(&v, &mut enc) {
                        Ok(()) => {
                            out.push(enc);
                            None
                        }
                        Err(m) => Some(m.to_string()),
                    }
                }
            };
            if let Some(p) = problem {
                bad += 1;
                first.get_or_insert((i + 1, p));
            }
        }
        if let Some((n, why)) = first {
            let more = match bad {
                1 => String::new(),
                b => format!(" ({} more lines do not fit either)", b - 1),
            };
            return fail(
                self,
                format!(
                    "line {n} of {} does not fit {}: {why}{more}",
                    file.display(),
                    schema_path.display()
                ),
                "each line is one JSON document of the schema's record: fix the line, or the schema".into(),
            );
        }
        if out.is_empty() {
            return fail(
                self,
                format!(
                    "cannot use lines file {}: it has no non-empty lines",
                    file.display()
                ),
                "write one JSON document per line".into(),
            );
        }
        Some(out)
    }
}
