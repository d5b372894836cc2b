//! Value resolution: `{var}` to the value it stands for in a cell, `env()`, `{var}` templates in
//! strings, and the typed getters (count, duration, size) that report a wrong kind of value.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::axis::Picks;
use super::{units, Checker};
use crate::diagnostic::{suggest, Diagnostic, Kind};
use crate::model::Scalar;
use crate::source::Span;
use crate::syntax::{Arg, Value, ValueKind};

impl Checker<'_> {
    /// Follows `{var}` to the value it stands for in this cell.
    pub(super) fn resolve<'v>(&mut self, v: &'v Value, ctx: &'v Picks) -> Option<&'v Value> {
        match &v.kind {
            ValueKind::Var(name) => match ctx.lookup(&name.node) {
                Some(av) => Some(&av.ast),
                None if self.valueless.contains(&name.node) => None,
                None => {
                    let mut names = ctx.names();
                    names.extend(self.valueless.iter().map(String::as_str));
                    self.err(
                        Diagnostic::new(
                            Kind::Variable,
                            name.span,
                            format!("unknown variable `{}`", name.node),
                        )
                        .label("not a matrix variable or `step`")
                        .help(suggest(&name.node, &names, "variables are")),
                    );
                    None
                }
            },
            _ => Some(v),
        }
    }

    /// A path as written in the scenario (`file("…")`, `sizes("…")`, a schema), relative to
    /// the folder of the file that names it, so that a scenario runs from any directory.
    pub(super) fn scenario_path(&self, p: &str, at: &Value) -> PathBuf {
        if Path::new(p).is_absolute() {
            PathBuf::from(p)
        } else {
            self.sources.get(at.span.file).dir().join(p)
        }
    }

    /// The help for a scenario path that cannot be read: where relative paths start.
    pub(super) fn relative_paths_help(&self, at: Span) -> String {
        format!(
            "paths are relative to the scenario's folder ({})",
            crate::diagnostic::shown_folder(self.sources.get(at.file).dir())
        )
    }

    /// A scalar with no variables involved (matrix values, selector values).
    pub(super) fn scalar_plain(&mut self, v: &Value) -> Option<Scalar> {
        self.scalar(v, &Picks::none())
    }

    pub(super) fn scalar(&mut self, v: &Value, ctx: &Picks) -> Option<Scalar> {
        let v = self.resolve(v, ctx)?;
        match &v.kind {
            ValueKind::Quantity(q) => units::quantity(q, v.span).map_err(|d| self.err(d)).ok(),
            ValueKind::Rate(r) => units::rate(r, v.span).map_err(|d| self.err(d)).ok(),
            ValueKind::Word(w) => Some(Scalar::Word(w.clone())),
            ValueKind::Str(s) => self.template(s, v.span, ctx).map(Scalar::Str),
            ValueKind::Call { name, args } if name.node == "env" => {
                self.env_call(args, v.span, ctx).map(Scalar::Str)
            }
            _ => {
                self.err(
                    Diagnostic::new(Kind::Type, v.span, "expected a single value")
                        .label(format!("this is {}", shape_name(&v.kind)))
                        .help("write a number with its unit, a word or a string here"),
                );
                None
            }
        }
    }

    /// `env("NAME", "default")`: read when the scenario is checked.
    fn env_call(&mut self, args: &[Arg], span: Span, ctx: &Picks) -> Option<String> {
        let strs: Vec<Option<String>> = args
            .iter()
            .map(
                |a| match self.resolve(&a.value, ctx).map(|v| v.kind.clone()) {
                    Some(ValueKind::Str(s)) => Some(s),
                    _ => None,
                },
            )
            .collect();
        match strs.as_slice() {
            [Some(name)] => {
                match std::env::var(name) {
                    Ok(v) => Some(v),
                    Err(_) => {
                        self.err(
                        Diagnostic::new(Kind::Value, span, format!("environment variable `{name}` is not set"))
                            .label("no default given")
                            .help(format!("set {name}, or give a default: env(\"{name}\", \"localhost:9092\")")),
                    );
                        None
                    }
                }
            }
            [Some(name), Some(default)] => {
                Some(std::env::var(name).unwrap_or_else(|_| default.clone()))
            }
            _ => {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        span,
                        "env() takes a variable name and an optional default, both strings",
                    )
                    .label("here")
                    .help("e.g. env(\"KAFKA_BOOTSTRAP\", \"localhost:9092\")"),
                );
                None
            }
        }
    }

    /// Fills `{var}` in a string with this cell's values as written.
    fn template(&mut self, s: &str, span: Span, ctx: &Picks) -> Option<String> {
        let mut out = String::new();
        let mut rest = s;
        let mut ok = true;
        while let Some(i) = rest.find(['{', '\\']) {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            if let Some(esc) = tail.strip_prefix('\\') {
                // `\{` and `\}` are literal braces (the syntax stage leaves only those two
                // escaped); any other backslash is a character of the string.
                match esc.chars().next() {
                    Some(c @ ('{' | '}')) => {
                        out.push(c);
                        rest = &esc[1..];
                    }
                    _ => {
                        out.push('\\');
                        rest = esc;
                    }
                }
                continue;
            }
            let Some(end) = tail.find('}') else {
                out.push_str(tail);
                rest = "";
                break;
            };
            let name = &tail[1..end];
            match ctx.lookup(name) {
                Some(av) => out.push_str(&av.text),
                None if self.valueless.iter().any(|v| v == name) => ok = false,
                None => {
                    ok = false;
                    let mut names = ctx.names();
                    names.extend(self.valueless.iter().map(String::as_str));
                    let off = span.start + 1 + (s.len() - rest.len()) + i;
                    let vspan = Span::new(span.file, off, (off + end + 1).min(span.end));
                    self.err(
                        Diagnostic::new(
                            Kind::Variable,
                            vspan,
                            format!("unknown variable `{name}` in this name"),
                        )
                        .label("not a matrix variable or `step`")
                        .help(suggest(name, &names, "variables are")),
                    );
                }
            }
            rest = &tail[end + 1..];
        }
        out.push_str(rest);
        ok.then_some(out)
    }

    /// Reports a value of the wrong kind at the value it resolves to.
    fn wrong_kind(&mut self, v: &Value, ctx: &Picks, message: String, label: String, help: &str) {
        let rv = self.resolve(v, ctx).map_or(v.span, |x| x.span);
        self.err(
            Diagnostic::new(Kind::Type, rv, message)
                .label(label)
                .help(help),
        );
    }

    /// A whole number in `range`, refused with the reason: a fraction, a value below or above the
    /// range (a negative count included), or another kind of value.
    pub(super) fn count(
        &mut self,
        v: &Value,
        ctx: &Picks,
        what: &str,
        range: RangeInclusive<u64>,
    ) -> Option<u64> {
        let n = match self.scalar(v, ctx)? {
            Scalar::Number(n) => n,
            other => {
                let (k, msg) = (
                    other.kind_name(),
                    format!("{what} is a whole number, not {}", other.kind_name()),
                );
                let help = match self.resolve(v, ctx).map(|x| &x.kind) {
                    Some(ValueKind::Quantity(q)) => units::mistaken_count(q).map(|f| f + "`"),
                    _ => None,
                };
                self.wrong_kind(
                    v,
                    ctx,
                    msg,
                    format!("expected a count, found {k}"),
                    help.as_deref()
                        .unwrap_or("write e.g. `100_000` or `100k` (`k`, `M`, `G`)"),
                );
                return None;
            }
        };
        let span = self.resolve(v, ctx).map_or(v.span, |x| x.span);
        let (low, high) = (*range.start(), *range.end());
        let problem = if n.fract() != 0.0 {
            Some((
                format!("{what} is a whole number, not {n}"),
                "a fraction".to_string(),
            ))
        } else if n < low as f64 {
            Some((
                format!("{what} must be at least {low}"),
                format!("{n} is too small"),
            ))
        } else if n > high as f64 {
            Some((
                format!("{what} must be at most {high}"),
                format!("{n} is too large"),
            ))
        } else {
            None
        };
        match problem {
            None => Some(n as u64),
            Some((message, label)) => {
                self.err(Diagnostic::new(Kind::Value, span, message).label(label));
                None
            }
        }
    }

    pub(super) fn duration(&mut self, v: &Value, ctx: &Picks, what: &str) -> Option<Duration> {
        match self.scalar(v, ctx)? {
            Scalar::Duration(d) => Some(d),
            other => {
                let msg = format!("{what} is a duration, not {}", other.kind_name());
                // `5M` is five million: minutes are `m`.
                let help = match self.resolve(v, ctx).map(|x| &x.kind) {
                    Some(ValueKind::Quantity(q))
                        if q.unit.as_ref().is_some_and(|u| u.node == "M") =>
                    {
                        let n = units::number_text(q.number.value);
                        format!("`M` counts millions: {n} minutes is `{n}m` or `{n}min`")
                    }
                    Some(ValueKind::Str(t)) if looks_like_a_literal(t) => {
                        format!("write `{t}` without quotes: a duration is not a string")
                    }
                    Some(ValueKind::Quantity(q)) if q.unit.is_none() => {
                        let n = units::number_text(q.number.value);
                        format!("durations carry a unit: `{n}s`, `{n}ms` or `{n}m` (ns, us, ms, s, m, h)")
                    }
                    _ => "durations carry a unit: ns, us, ms, s, m, h (e.g. `30s`)".into(),
                };
                self.wrong_kind(v, ctx, msg, "expected a duration".into(), &help);
                None
            }
        }
    }

    pub(super) fn size(&mut self, v: &Value, ctx: &Picks, what: &str) -> Option<u64> {
        match self.scalar(v, ctx)? {
            Scalar::Size(b) => Some(b),
            other => {
                let msg = format!("{what} is a size, not {}", other.kind_name());
                // `1M` is a count (a million), so `size: 1M` gets the size it meant.
                let counted = match self.resolve(v, ctx).map(|x| &x.kind) {
                    Some(ValueKind::Quantity(q)) => q.unit.as_ref().and_then(|u| {
                        let n = units::number_text(q.number.value);
                        match u.node.as_str() {
                            "k" | "K" => Some(format!(
                                "`k` counts thousands: a size is `{n}KB` or `{n}KiB`"
                            )),
                            "M" => Some(format!(
                                "`M` counts millions: a size is `{n}MB` or `{n}MiB`"
                            )),
                            "G" => Some(format!(
                                "`G` counts billions: a size is `{n}GB` or `{n}GiB`"
                            )),
                            _ => None,
                        }
                    }),
                    Some(ValueKind::Str(t)) if looks_like_a_literal(t) => Some(format!(
                        "write `{t}` without quotes: a size is not a string"
                    )),
                    _ => None,
                };
                let help = counted.unwrap_or_else(|| {
                    "sizes carry a unit: B, KB, KiB, MB, MiB, GB, GiB (e.g. `1KiB`)".into()
                });
                self.wrong_kind(v, ctx, msg, "expected a size".into(), &help);
                None
            }
        }
    }
}

/// `"30s"`, `"1KiB"`: a number with its unit, written in quotes as YAML and JSON habits have it.
fn looks_like_a_literal(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
}

fn shape_name(k: &ValueKind) -> &'static str {
    match k {
        ValueKind::List(_) => "a list",
        ValueKind::Call { .. } => "a function call",
        ValueKind::Shape(_) => "a rate shape",
        ValueKind::Tolerance(_) => "a tolerance",
        _ => "a value",
    }
}
