//! A flat YAML file read into a typed struct with every problem at once: bad YAML at its line,
//! each unknown field with a did-you-mean, each mistyped field at its value.
//!
//! serde stops at the first problem, so each top-level field is deserialized on its own first
//! (the struct's fields all have defaults); only a file with no problem is read as a whole.
//!
//! A field the struct does not know is a problem only when it looks like a misspelling of one it
//! knows that the file lacks; otherwise it is handed back as an extra (OMB's own YAML reader
//! ignores fields it does not know, and its forks add their own), for the mapping to comment on.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde_yaml::{Mapping, Value};

use crate::diagnostic::{closest, suggest, Diagnostic, Diagnostics, Kind};
use crate::source::{FileId, Sources, Span};

/// What a typed struct tells the reader about its fields.
pub(super) struct Fields {
    /// The names as written in YAML.
    pub names: &'static [&'static str],
    /// What the field takes, in a user's words, for the help line of a mistyped value.
    pub takes: fn(&str) -> String,
    /// What a file of this kind is called in messages ("workload", "driver").
    pub what: &'static str,
    /// Fields the forks of OMB add: extras, never taken for a misspelling.
    pub forks: &'static [&'static str],
    /// Fields without which there is nothing to import: a name near one of them that the file
    /// lacks is its misspelling, refused. A name near another field is an extra (a fork's field,
    /// or a misspelling OMB would ignore), which the mapping warns about with a did-you-mean.
    pub required: &'static [&'static str],
}

/// A top-level field the struct does not know, with its value and where its name is.
pub(super) struct Extra {
    pub name: String,
    pub value: Value,
    pub span: Span,
}

/// A file read as far as it could be: `value` holds every field that was right, `problems`
/// the others, and `bad` names the fields that were there but wrong (so that no later check
/// calls them missing).
pub(super) struct Read<T> {
    pub value: T,
    pub file: FileId,
    pub problems: Diagnostics,
    pub bad: Vec<String>,
    pub extras: Vec<Extra>,
    /// The `{{ … }}` placeholders of a template (Ansible's Jinja), in order, once each.
    pub placeholders: Vec<String>,
    /// The `${NAME:-default}` placeholders read as their defaults (fgelcer's fork fills them).
    pub filled: Vec<super::shell::Filled>,
}

/// Reads `path` into `T`, adding the file to `sources` so diagnostics can point into it. Err
/// only when there is nothing to read fields from (no file, not YAML, not a mapping).
pub(super) fn read<T: DeserializeOwned>(
    path: &Path,
    sources: &mut Sources,
    fields: &Fields,
) -> Result<Read<T>, Diagnostics> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Diagnostic::unplaced(
            Kind::Io,
            format!(
                "cannot read the OMB {} file {}: {}",
                fields.what,
                path.display(),
                e.to_string().to_lowercase()
            ),
        )
        .help("give the path of an OpenMessaging Benchmark YAML file")
    })?;
    let id = sources.add(path.to_path_buf(), text.clone());
    let whole = |msg: String| -> Diagnostic {
        Diagnostic::new(Kind::Syntax, Span::new(id, 0, first_line_end(&text)), msg)
            .label("this file")
            .help(format!(
                "an OMB {} file is a YAML mapping of `field: value` lines",
                fields.what
            ))
    };
    let (defaults, filled) = super::shell::fill(&text);
    let (parsable, templated) = quote_placeholders(&defaults);
    let value: Value =
        serde_yaml::from_str(&parsable).map_err(|e| yaml_error(id, &text, &e, fields))?;
    let map = match value {
        Value::Mapping(m) => m,
        Value::Null => return Err(whole(format!("the {} file is empty", fields.what)).into()),
        _ => {
            return Err(whole(format!(
                "the {} file is not a mapping of fields",
                fields.what
            ))
            .into())
        }
    };
    let mut diags = Diagnostics::default();
    let mut bad = Vec::new();
    let mut extras = Vec::new();
    let mut known = Mapping::new();
    let given: Vec<String> = map
        .keys()
        .filter_map(|k| k.as_str().map(str::to_string))
        .collect();
    for (k, v) in map {
        let Some(name) = k.as_str() else {
            diags.push(whole(format!("a field name is not text: {k:?}")));
            continue;
        };
        // A placeholder read back as written, for the field to say what is missing.
        let v = match templated.iter().find(|(f, _)| f == name) {
            Some((_, original)) => Value::String(original.clone()),
            None => v,
        };
        if !fields.names.contains(&name) {
            // A misspelling stands for a required field the file lacks; a name near one the
            // file has is another field (a fork's), not a second spelling of it.
            let meant = closest(name, fields.names.iter().copied()).filter(|m| {
                !fields.forks.contains(&name)
                    && !given.iter().any(|g| g == m)
                    && fields.required.contains(m)
            });
            let Some(meant) = meant else {
                extras.push(Extra {
                    name: name.to_string(),
                    value: v,
                    span: key_span(id, &text, name),
                });
                continue;
            };
            // The field it is a misspelling of is then not missing as well.
            bad.push(meant.to_string());
            diags.push(
                Diagnostic::new(
                    Kind::UnknownKey,
                    key_span(id, &text, name),
                    format!("the OMB {} has no field `{name}`", fields.what),
                )
                .label("unknown field")
                .help(suggest(name, fields.names, "fields are")),
            );
            continue;
        }
        let mut one = Mapping::new();
        one.insert(k.clone(), v.clone());
        if let Err(e) = serde_yaml::from_value::<T>(Value::Mapping(one)) {
            bad.push(name.to_string());
            diags.push(
                Diagnostic::new(
                    Kind::Type,
                    value_span(id, &text, name),
                    format!("`{name}`: {}", in_words(&without_location(&e.to_string()))),
                )
                .label("wrong value")
                .help(format!("`{name}` takes {}", (fields.takes)(name))),
            );
            continue;
        }
        known.insert(k, v);
    }
    let value = serde_yaml::from_value::<T>(Value::Mapping(known))
        .map_err(|e| Diagnostics::from(whole(without_location(&e.to_string()))))?;
    Ok(Read {
        value,
        file: id,
        problems: diags,
        bad,
        extras,
        placeholders: placeholders(&text),
        filled,
    })
}

/// ` (did you mean `X`?)` when a name is near one of `names`, else nothing.
pub(super) fn did_you_mean(name: &str, names: &[&str]) -> String {
    closest(name, names.iter().copied())
        .map_or(String::new(), |m| format!(" (did you mean `{m}`?)"))
}

/// The text with each top-level value that is a whole `{{ … }}` placeholder (a Jinja template's,
/// which YAML would read as a nested mapping) turned into a quoted string of the same length, so
/// that every offset still points into the file; and each such field with its original value.
fn quote_placeholders(text: &str) -> (String, Vec<(String, String)>) {
    let mut out = String::with_capacity(text.len());
    let mut fields = Vec::new();
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let field = (!bare.starts_with([' ', '\t', '#', '-']))
            .then(|| bare.split_once(':'))
            .flatten()
            .filter(|(_, rest)| rest.starts_with([' ', '\t']));
        let Some((name, rest)) = field else {
            out.push_str(line);
            continue;
        };
        let value = rest.trim_start();
        let value = value.find(" #").map_or(value, |i| &value[..i]).trim_end();
        let whole = value.starts_with("{{") && value.ends_with("}}") && value.len() >= 4;
        if !whole || value[2..value.len() - 2].contains(['{', '}', '"']) {
            out.push_str(line);
            continue;
        }
        let at = bare.len() - rest.trim_start().len();
        out.push_str(&line[..at]);
        out.push('"');
        out.push_str(&value[1..value.len() - 1]);
        out.push('"');
        out.push_str(&line[at + value.len()..]);
        fields.push((
            name.trim().trim_matches(['"', '\'']).to_string(),
            value.to_string(),
        ));
    }
    (out, fields)
}

/// Every `{{ … }}` in the text, once each, in order.
fn placeholders(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let p = &rest[start..start + len + 2];
        if !p.contains('\n') && !found.iter().any(|f| f == p) {
            found.push(p.to_string());
        }
        rest = &rest[start + len + 2..];
    }
    found
}

/// Bad YAML, at the place serde_yaml names; a field given twice at its second line (serde_yaml
/// names no place for it).
fn yaml_error(id: FileId, text: &str, e: &serde_yaml::Error, fields: &Fields) -> Diagnostics {
    let msg = without_location(&e.to_string());
    if let Some(name) = msg
        .strip_prefix("duplicate entry with key \"")
        .and_then(|r| r.strip_suffix('"'))
    {
        let lines = top_level_lines(text, name);
        if let Some((start, len, _)) = lines.get(1) {
            return Diagnostic::new(
                Kind::Duplicate,
                Span::new(id, *start, start + len),
                format!("`{name}` is given twice"),
            )
            .label("second time")
            .help(format!(
                "keep one `{name}` line (OMB would silently take the last one of this {} file)",
                fields.what
            ))
            .into();
        }
    }
    let at = e.location().map_or(0, |l| l.index()).min(text.len());
    let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
    Diagnostic::new(
        Kind::Syntax,
        Span::new(id, at, end),
        // The line is in the message too, for readers of the JSON form and of logs.
        match e.location() {
            Some(l) => format!(
                "this is not valid YAML (line {}, column {}): {}",
                l.line(),
                l.column(),
                without_location(&e.to_string())
            ),
            None => format!(
                "this is not valid YAML: {}",
                without_location(&e.to_string())
            ),
        },
    )
    .label("here")
    .help("OMB files are YAML: `field: value` lines, Java properties as `|` blocks")
    .into()
}

/// serde names Rust types ("expected u32"); a user reads what kind of value that is.
fn in_words(msg: &str) -> String {
    let mut out = msg.to_string();
    for (rust, words) in [
        ("expected u8", "expected a whole number, 0 or more"),
        ("expected u16", "expected a whole number, 0 or more"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected i16", "expected a whole number"),
        ("expected i32", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
    ] {
        if let Some(rest) = out.strip_suffix(rust) {
            out = format!("{rest}{words}");
        }
    }
    out
}

/// serde_yaml appends "at line L column C"; the diagnostic shows the place itself.
fn without_location(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn first_line_end(text: &str) -> usize {
    text.find('\n').unwrap_or(text.len())
}

/// The byte range of a top-level field's name (`name:` at the start of a line, quoted or not);
/// the file's start when it is written some other way (flow style).
pub(super) fn key_span(id: FileId, text: &str, name: &str) -> Span {
    top_level_line(text, name).map_or(Span::new(id, 0, 0), |(start, key_len, _)| {
        Span::new(id, start, start + key_len)
    })
}

/// The byte range of a top-level field's value on its line, or its name when the value starts
/// on the next line (a `|` block or a nested list).
pub(super) fn value_span(id: FileId, text: &str, name: &str) -> Span {
    let Some((start, key_len, line)) = top_level_line(text, name) else {
        return Span::new(id, 0, 0);
    };
    let colon = line[key_len..]
        .find(':')
        .map_or(key_len, |i| key_len + i + 1);
    let rest = &line[colon..];
    let rest = rest.find(" #").map_or(rest, |i| &rest[..i]);
    let lead = rest.len() - rest.trim_start().len();
    let value = rest.trim();
    if value.is_empty() || value == "|" || value == ">" {
        Span::new(id, start, start + key_len)
    } else {
        let from = start + colon + lead;
        Span::new(id, from, from + value.len())
    }
}

/// Whether the text sets `name` at the top level.
pub(super) fn has_field(text: &str, name: &str) -> bool {
    top_level_line(text, name).is_some()
}

/// (offset of the line, length of the written name, the line) for `name:` at indent 0.
fn top_level_line<'t>(text: &'t str, name: &str) -> Option<(usize, usize, &'t str)> {
    top_level_lines(text, name).into_iter().next()
}

/// Every line that sets `name` at indent 0, in order.
fn top_level_lines<'t>(text: &'t str, name: &str) -> Vec<(usize, usize, &'t str)> {
    let mut found = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        for written in [name.to_string(), format!("\"{name}\""), format!("'{name}'")] {
            if let Some(after) = bare.strip_prefix(written.as_str()) {
                if after.trim_start().starts_with(':') {
                    found.push((offset, written.len(), bare));
                }
            }
        }
        offset += line.len();
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_span_covers_the_value_without_its_comment() {
        let text = "name: x\ntopics: 12 # many\n";
        let s = value_span(FileId(0), text, "topics");
        assert_eq!(&text[s.start..s.end], "12");
    }

    #[test]
    fn a_block_value_is_pointed_at_by_its_name() {
        let text = "producerConfig: |\n  acks=all\n";
        let s = value_span(FileId(0), text, "producerConfig");
        assert_eq!(&text[s.start..s.end], "producerConfig");
    }

    #[test]
    fn a_whole_placeholder_value_is_quoted_in_place() {
        let text = "name: {{ svc_name }} # x\ncommonConfig: |\n  a={{ uri }}\n";
        let (quoted, fields) = quote_placeholders(text);
        assert_eq!(
            quoted,
            "name: \"{ svc_name }\" # x\ncommonConfig: |\n  a={{ uri }}\n"
        );
        assert_eq!(
            fields,
            vec![("name".to_string(), "{{ svc_name }}".to_string())]
        );
        assert_eq!(placeholders(text), vec!["{{ svc_name }}", "{{ uri }}"]);
    }

    #[test]
    fn a_quoted_name_is_found() {
        let text = "\"topics\": 1\n";
        let s = key_span(FileId(0), text, "topics");
        assert_eq!(&text[s.start..s.end], "\"topics\"");
    }
}
