//! Payload and key calls: `random(size:, compressibility:)`, `json(size:, event:)` (a size
//! or a distribution of sizes, `size.rs`),
//! `constant(...)`, `file("path", delimiter:, format:)`; keys `none`, `sequence`, `uniform(N)`, `zipf(N, s)`, fixed.
//! The calls shaped by a schema (`avro(...)` and the like, for payloads and keys) are in `schema.rs`.

use std::sync::Arc;

use super::axis::Picks;
use super::records::{self, Records};
use super::Checker;
use crate::diagnostic::{suggest, Diagnostic, Kind};
use crate::model::{KeySpec, PayloadSize, PayloadSpec, Scalar, LARGEST_PAYLOAD};
use crate::source::{Span, Spanned};
use crate::syntax::{Arg, Value, ValueKind};

/// The most distinct keys `uniform`/`zipf` draw from; keys are sampled without a table, so the
/// bound only catches a slipped digit.
const MAX_KEYS: u64 = 10_000_000;

/// `constant(size: N)` sends the same pseudo-random bytes every record; a fixed seed makes them
/// the same bytes in every run, so compression ratios compare across runs.
const CONSTANT_SEED: u64 = 0x5eed;

/// `zipf(N)` without an exponent: skewed enough that a few keys are hot, not so skewed that
/// one key takes nearly everything.
const DEFAULT_ZIPF_EXPONENT: f64 = 1.1;

impl Checker<'_> {
    /// A call's arguments by name, positional ones named by their place in `allowed`.
    pub(super) fn call_args<'v>(
        &mut self,
        name: &Spanned<String>,
        args: &'v [Arg],
        allowed: &[&str],
    ) -> Vec<(String, &'v Value)> {
        let mut out = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let n = match &a.name {
                Some(n) if allowed.contains(&n.node.as_str()) => n.node.clone(),
                Some(n) => {
                    self.err(
                        Diagnostic::new(
                            Kind::UnknownKey,
                            n.span,
                            format!("`{}` takes no argument `{}`", name.node, n.node),
                        )
                        .label("unknown argument")
                        .help(suggest(&n.node, allowed, "arguments are")),
                    );
                    continue;
                }
                None => match allowed.get(i) {
                    Some(n) => n.to_string(),
                    None => {
                        self.err(
                            Diagnostic::new(
                                Kind::Value,
                                a.value.span,
                                format!("too many arguments to `{}`", name.node),
                            )
                            .label("extra"),
                        );
                        continue;
                    }
                },
            };
            out.push((n, &a.value));
        }
        out
    }

    /// The payload a `payload = ...` value names, with a file payload's lines loaded.
    pub(super) fn payload(&mut self, v: &Value, ctx: &Picks) -> Option<PayloadSpec> {
        let rv = self.resolve(v, ctx)?;
        let ValueKind::Call { name, args } = &rv.kind else {
            self.err(
                Diagnostic::new(Kind::Type, rv.span, "a payload is `random(size: ...)`, `json(size: ...)`, `file(\"path\")` or `constant(size: ...)`")
                    .label("not a payload")
                    .help("e.g. `payload = json(size: 1KiB)`"),
            );
            return None;
        };
        let kinds = [
            "random",
            "json",
            "file",
            "constant",
            "avro",
            "protobuf",
            "json_schema",
        ];
        match name.node.as_str() {
            n if super::schema::CALLS.contains(&n) => self
                .schema_payload(name, args, rv.span, ctx)
                .map(PayloadSpec::Schema),
            "random" => {
                let a = self.call_args(name, args, &["size", "compressibility"]);
                let mut size = None;
                let mut comp = 0.0;
                for (k, val) in a {
                    match k.as_str() {
                        "size" => size = self.payload_size_arg(val, ctx),
                        _ => match self.scalar(val, ctx) {
                            Some(Scalar::Ratio(r)) if (0.0..=1.0).contains(&r) => comp = r,
                            _ => self.err(
                                Diagnostic::new(
                                    Kind::Value,
                                    val.span,
                                    "compressibility is a percentage from 0% to 100%",
                                )
                                .label("expected e.g. `50%`"),
                            ),
                        },
                    }
                }
                let size = self.payload_size(size, rv.span, size_written(args))?;
                Some(PayloadSpec::Random {
                    size,
                    compressibility: comp,
                })
            }
            "json" => {
                let a = self.call_args(name, args, &["size", "event"]);
                let mut size = None;
                let mut size_span = rv.span;
                let mut event = "order.created".to_string();
                for (k, val) in a {
                    match k.as_str() {
                        "size" => {
                            size_span = self.resolve(val, ctx).map_or(val.span, |x| x.span);
                            size = self.payload_size_arg(val, ctx);
                        }
                        _ => match self.scalar(val, ctx) {
                            Some(Scalar::Str(s)) | Some(Scalar::Word(s)) => event = s,
                            _ => self.err(
                                Diagnostic::new(Kind::Type, val.span, "event is a string")
                                    .label("expected \"...\""),
                            ),
                        },
                    }
                }
                let size = self.payload_size(size, rv.span, size_written(args))?;
                if !self.json_fits(&size, &event, size_span) {
                    return None;
                }
                Some(PayloadSpec::Json { size, event })
            }
            "constant" => {
                let a = self.call_args(name, args, &["size"]);
                let (_, val) = a.into_iter().next().or_else(|| {
                    self.err(
                        Diagnostic::new(
                            Kind::Missing,
                            rv.span,
                            "constant() needs a size or a string",
                        )
                        .label("here")
                        .help("e.g. `constant(size: 100B)`"),
                    );
                    None
                })?;
                let drawn = matches!(
                    self.resolve(val, ctx).map(|x| &x.kind),
                    Some(ValueKind::Call { name, .. }) if name.node != "env"
                );
                if drawn {
                    // Sizes drawn per record: each record is the start of one buffer of the
                    // largest size, so constant records still differ only in length.
                    let size = self.payload_size_arg(val, ctx)?;
                    let mut bytes = vec![0u8; size.largest()];
                    crate::random::fill_random(&mut bytes, CONSTANT_SEED);
                    return Some(PayloadSpec::Constant {
                        bytes: Arc::new(bytes),
                        size,
                    });
                }
                match self.scalar(val, ctx)? {
                    Scalar::Size(b) => {
                        let size =
                            self.payload_size(Some(PayloadSize::Fixed(b as usize)), rv.span, true)?;
                        let mut bytes = vec![0u8; size.largest()];
                        crate::random::fill_random(&mut bytes, CONSTANT_SEED);
                        Some(PayloadSpec::Constant {
                            bytes: Arc::new(bytes),
                            size,
                        })
                    }
                    Scalar::Str(s) => Some(PayloadSpec::Constant {
                        size: PayloadSize::Fixed(s.len()),
                        bytes: Arc::new(s.into_bytes()),
                    }),
                    other => {
                        self.err(
                            Diagnostic::new(
                                Kind::Type,
                                val.span,
                                format!(
                                    "constant() takes a size or a string, not {}",
                                    other.kind_name()
                                ),
                            )
                            .label("here"),
                        );
                        None
                    }
                }
            }
            "file" => {
                let a = self.call_args(name, args, &["path", "delimiter", "format"]);
                let records = self.file_records(&a, ctx)?;
                let Some((_, val)) = a.into_iter().find(|(k, _)| k == "path") else {
                    self.err(
                        Diagnostic::new(Kind::Missing, rv.span, "file() needs a path")
                            .label("here")
                            .help("e.g. `file(\"data/orders.jsonl\")`"),
                    );
                    return None;
                };
                let Some(Scalar::Str(p)) = self.scalar(val, ctx) else {
                    self.err(
                        Diagnostic::new(Kind::Type, val.span, "file() takes a path string")
                            .label("expected \"path\""),
                    );
                    return None;
                };
                let path = self.scenario_path(&p, val);
                let loaded = self
                    .files
                    .entry((path.clone(), records.clone()))
                    .or_insert_with(|| records::load(&path, &records))
                    .clone();
                match loaded {
                    Ok(lines) => Some(PayloadSpec::File { path, lines }),
                    Err(unusable) => {
                        let help = if unusable.in_content {
                            records.fix()
                        } else {
                            self.relative_paths_help(val.span)
                        };
                        self.err(
                            Diagnostic::new(
                                Kind::PayloadFile,
                                val.span,
                                format!(
                                    "cannot use payload file {}: {}",
                                    path.display(),
                                    unusable.why
                                ),
                            )
                            .label("this file")
                            .help(help),
                        );
                        None
                    }
                }
            }
            other => {
                self.err(
                    Diagnostic::new(
                        Kind::UnknownKey,
                        name.span,
                        format!("unknown payload `{other}`"),
                    )
                    .label("not a payload kind")
                    .help(suggest(other, &kinds, "payloads are")),
                );
                None
            }
        }
    }

    /// How `file()` cuts its file into records: `delimiter: "..."` (any string, escapes
    /// decoded; newline by default) or `format: lines | length_prefixed`.
    fn file_records(&mut self, args: &[(String, &Value)], ctx: &Picks) -> Option<Records> {
        let mut delimiter: Option<(Vec<u8>, Span)> = None;
        let mut prefixed: Option<Span> = None;
        let mut ok = true;
        for (k, val) in args {
            let value = match self.scalar(val, ctx) {
                // `format: "length_prefixed"` means the word.
                Some(Scalar::Str(f)) if k == "format" => Some(Scalar::Word(f)),
                other => other,
            };
            match (k.as_str(), value) {
                ("delimiter", Some(Scalar::Str(d))) if !d.is_empty() => {
                    delimiter = Some((d.into_bytes(), val.span))
                }
                ("delimiter", Some(_)) => {
                    ok = false;
                    self.err(
                        Diagnostic::new(Kind::Value, val.span, "a delimiter is a string of at least one character")
                            .label("not a delimiter")
                            .help("e.g. `delimiter: \"\\n\"`, `delimiter: \"|\"` or `delimiter: \"\\x1e\"`"),
                    );
                }
                ("format", Some(Scalar::Word(f))) if f == "lines" => {}
                ("format", Some(Scalar::Word(f))) if f == "length_prefixed" => {
                    prefixed = Some(val.span)
                }
                ("format", Some(other)) => {
                    ok = false;
                    let written = match &other {
                        Scalar::Word(w) | Scalar::Str(w) => w.clone(),
                        _ => String::new(),
                    };
                    self.err(
                        Diagnostic::new(
                            Kind::Value,
                            val.span,
                            "a payload file's format is `lines` or `length_prefixed`",
                        )
                        .label("unknown format")
                        .help(suggest(
                            &written,
                            &["lines", "length_prefixed"],
                            "formats are",
                        )),
                    );
                }
                ("delimiter" | "format", None) => ok = false,
                _ => {}
            }
        }
        match (delimiter, prefixed) {
            (Some((_, span)), Some(_)) => {
                self.err(
                    Diagnostic::new(Kind::Value, span, "a length-prefixed file has no delimiter")
                        .label("not used with `format: length_prefixed`")
                        .help("remove `delimiter: ...`: each record is a 4-byte big-endian length, then that many bytes"),
                );
                None
            }
            _ if !ok => None,
            (Some((d, _)), None) => Some(Records::Delimited(d)),
            (None, Some(_)) => Some(Records::LengthPrefixed),
            (None, None) => Some(Records::lines()),
        }
    }

    /// A payload size in range; `written` says whether a (wrong) size was already reported.
    fn payload_size(
        &mut self,
        size: Option<PayloadSize>,
        span: Span,
        written: bool,
    ) -> Option<PayloadSize> {
        match size {
            None if written => None,
            Some(PayloadSize::Fixed(b)) if (1..=LARGEST_PAYLOAD).contains(&b) => {
                Some(PayloadSize::Fixed(b))
            }
            Some(PayloadSize::Drawn(d)) => Some(PayloadSize::Drawn(d)),
            Some(PayloadSize::Fixed(b)) => {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        span,
                        format!("a payload of {b} bytes is out of range"),
                    )
                    .label("here")
                    .help("payload sizes go from 1B to 64MiB"),
                );
                None
            }
            None => {
                self.err(
                    Diagnostic::new(Kind::Missing, span, "this payload needs a size")
                        .label("here")
                        .help("e.g. `size: 1KiB`"),
                );
                None
            }
        }
    }

    /// The key pattern a `key = ...` value names.
    pub(super) fn key(&mut self, v: &Value, ctx: &Picks) -> Option<KeySpec> {
        let rv = self.resolve(v, ctx)?;
        let kinds = [
            "none",
            "sequence",
            "uniform",
            "zipf",
            "fixed",
            "avro",
            "protobuf",
            "json_schema",
        ];
        match &rv.kind {
            ValueKind::Word(w) if w == "none" => Some(KeySpec::None),
            ValueKind::Word(w) if w == "sequence" => Some(KeySpec::Sequence),
            ValueKind::Str(s) => Some(KeySpec::Fixed(s.clone())),
            ValueKind::Call { name, args } if name.node == "fixed" => match args
                .first()
                .map(|a| self.scalar(&a.value, ctx))
            {
                Some(Some(Scalar::Str(s))) | Some(Some(Scalar::Word(s))) => Some(KeySpec::Fixed(s)),
                _ => {
                    self.err(
                        Diagnostic::new(Kind::Value, rv.span, "fixed() takes the key as a string")
                            .label("here")
                            .help("e.g. `fixed(\"store-42\")`"),
                    );
                    None
                }
            },
            ValueKind::Call { name, args }
                if super::schema::CALLS.contains(&name.node.as_str()) =>
            {
                self.schema_payload(name, args, rv.span, ctx)
                    .map(KeySpec::Schema)
            }
            ValueKind::Call { name, args } if name.node == "uniform" || name.node == "zipf" => {
                let allowed: &[&str] = if name.node == "zipf" {
                    &["keys", "exponent"]
                } else {
                    &["keys"]
                };
                let a = self.call_args(name, args, allowed);
                let mut n = None;
                let mut keys_written = false;
                let mut s = DEFAULT_ZIPF_EXPONENT;
                for (k, val) in a {
                    if k == "keys" {
                        keys_written = true;
                        n = self.count(val, ctx, "the number of keys", 1..=MAX_KEYS);
                    } else {
                        match self.scalar(val, ctx) {
                            Some(Scalar::Number(x)) if x > 0.0 && x < 10.0 => s = x,
                            _ => self.err(
                                Diagnostic::new(
                                    Kind::Value,
                                    val.span,
                                    "a zipf exponent is a number above 0, typically 0.8 to 1.5",
                                )
                                .label("here"),
                            ),
                        }
                    }
                }
                let n = match n {
                    Some(n) => n,
                    // A wrong count is already reported.
                    None if keys_written => return None,
                    None => {
                        self.err(
                            Diagnostic::new(
                                Kind::Value,
                                rv.span,
                                format!(
                                    "{}() needs the number of keys, 1 to 10 million",
                                    name.node
                                ),
                            )
                            .label("here")
                            .help(format!("e.g. `{}(1000)`", name.node)),
                        );
                        return None;
                    }
                };
                Some(if name.node == "zipf" {
                    KeySpec::Zipf { n, s }
                } else {
                    KeySpec::Uniform(n)
                })
            }
            ValueKind::Word(w)
            | ValueKind::Call {
                name: Spanned { node: w, .. },
                ..
            } => {
                self.err(
                    Diagnostic::new(
                        Kind::UnknownKey,
                        rv.span,
                        format!("unknown key pattern `{w}`"),
                    )
                    .label("not a key pattern")
                    .help(suggest(w, &kinds, "key patterns are")),
                );
                None
            }
            _ => {
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        rv.span,
                        "a key is none, sequence, uniform(N), zipf(N, s) or a fixed string",
                    )
                    .label("not a key pattern"),
                );
                None
            }
        }
    }
}

/// Whether the call's `size` was written (named, or as the first positional argument), so a
/// missing size is reported only when it really is missing.
fn size_written(args: &[Arg]) -> bool {
    args.iter()
        .enumerate()
        .any(|(i, a)| a.name.as_ref().map_or(i == 0, |n| n.node == "size"))
}
