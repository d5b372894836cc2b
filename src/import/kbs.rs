//! Writing scenario text: values in the language's own forms, blocks with aligned `=`, notes as
//! comments; and asking the checker whether one setting would be accepted.

use std::path::PathBuf;

use crate::source::Sources;

/// One line of a block.
#[derive(Clone, Debug)]
pub(super) enum Item {
    /// `key = value  # comment`; `value` is already scenario text.
    Set {
        key: String,
        value: String,
        comment: Option<String>,
    },
    /// A comment line of its own.
    Note(String),
}

/// A section: `head { items }` (`head` is e.g. `topic "orders"`).
#[derive(Clone, Debug)]
pub(super) struct Block {
    pub head: String,
    pub items: Vec<Item>,
}

impl Block {
    pub(super) fn new(head: impl Into<String>) -> Block {
        Block {
            head: head.into(),
            items: Vec::new(),
        }
    }

    pub(super) fn set(&mut self, key: &str, value: impl Into<String>, comment: Option<String>) {
        self.items.push(Item::Set {
            key: key.to_string(),
            value: value.into(),
            comment,
        });
    }

    pub(super) fn note(&mut self, text: impl Into<String>) {
        self.items.push(Item::Note(text.into()));
    }
}

/// The widest `key = value` that trailing comments line up behind.
const ALIGN_UP_TO: usize = 60;

/// The whole file: header comments, then `scenario "name" { settings, blocks }`.
pub(super) fn render(header: &[String], name: &str, top: &Block, blocks: &[Block]) -> String {
    let mut out = String::new();
    for h in header {
        out.push_str(&comment_line("", h));
    }
    out.push_str(&format!("scenario {} {{\n", string(name)));
    render_items(&mut out, "  ", &top.items);
    for b in blocks {
        out.push('\n');
        if b.items.is_empty() {
            out.push_str(&format!("  {} {{ }}\n", b.head));
            continue;
        }
        out.push_str(&format!("  {} {{\n", b.head));
        render_items(&mut out, "    ", &b.items);
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

fn render_items(out: &mut String, indent: &str, items: &[Item]) {
    let key_width = items
        .iter()
        .filter_map(|i| match i {
            Item::Set { key, .. } => Some(key.len()),
            Item::Note(_) => None,
        })
        .max()
        .unwrap_or(0);
    // Trailing comments line up, except behind a line too long to line up with.
    let line_width = items
        .iter()
        .filter_map(|i| match i {
            Item::Set { value, .. } => Some(key_width + 3 + value.len()),
            Item::Note(_) => None,
        })
        .filter(|w| *w <= ALIGN_UP_TO)
        .max()
        .unwrap_or(0);
    for item in items {
        match item {
            Item::Note(text) => out.push_str(&comment_line(indent, text)),
            Item::Set {
                key,
                value,
                comment,
            } => {
                let line = format!("{key:key_width$} = {value}");
                match comment {
                    Some(c) => {
                        out.push_str(&format!("{indent}{line:line_width$}  # {}\n", one_line(c)))
                    }
                    None => out.push_str(&format!("{indent}{line}\n")),
                }
            }
        }
    }
}

/// A comment, one `#` line per line of text.
fn comment_line(indent: &str, text: &str) -> String {
    text.lines()
        .map(|l| format!("{indent}# {l}\n").replace(" \n", "\n"))
        .collect()
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// A string literal: quotes, backslashes, newlines and tabs escaped, and braces, which would
/// otherwise name a variable.
pub(super) fn string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '{' => out.push_str("\\{"),
            '}' => out.push_str("\\}"),
            '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether a string literal can say this text exactly: `string` turns `\r` into a space, and
/// a backslash does not survive the checker's templating (`\\` reads back as nothing).
pub(super) fn stringable(s: &str) -> bool {
    !s.chars()
        .any(|c| c == '\\' || (c.is_control() && c != '\n' && c != '\t'))
}

/// A property value as the language writes it: a plain whole or decimal number bare (no leading
/// zero, which a number would lose), a word bare, anything else quoted.
pub(super) fn literal(v: &str) -> String {
    let number = {
        let (int, frac) = v.split_once('.').unwrap_or((v, "0"));
        !int.is_empty()
            && int.bytes().all(|b| b.is_ascii_digit())
            && !frac.is_empty()
            && frac.bytes().all(|b| b.is_ascii_digit())
            && (int == "0" || !int.starts_with('0'))
            && v.len() <= 15
    };
    if number || is_word(v) {
        v.to_string()
    } else {
        string(v)
    }
}

/// The grammar's `word`: identifiers joined by `.` or `-`.
fn is_word(v: &str) -> bool {
    !v.is_empty()
        && v.split(['.', '-']).all(|id| {
            let mut b = id.bytes();
            matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
                && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
        })
}

/// `env("NAME")`.
pub(super) fn env(name: &str) -> String {
    format!("env({})", string(name))
}

/// Whether the checker accepts `key = value` in `section` (`topic`, `cluster`, `producer`,
/// `consumer`); Err is its own words (message, then help). Asking the checker keeps one source
/// of truth for which names librdkafka and the topic block know.
pub(super) fn probe(section: &str, key: &str, value: &str) -> Result<(), String> {
    let setting = format!("{key} = {value}");
    let (topic, other) = if section == "topic" {
        (setting, String::new())
    } else {
        (String::new(), format!("{section} {{ {setting} }}"))
    };
    let text = format!(
        "scenario \"probe\" {{\n topic \"probe\" {{ {topic} }}\n workload {{ messages = 1 }}\n {other}\n}}\n"
    );
    let mut sources = Sources::default();
    let id = sources.add(PathBuf::from("probe.kbs"), text.clone());
    // The value is always written in a form the grammar reads, so only the name can fail here.
    let ast = crate::syntax::parse(id, &text).map_err(|_| {
        "not a name a scenario can hold (words of letters, digits and `_`, joined by dots)"
            .to_string()
    })?;
    match crate::check::check(&ast, &sources) {
        Ok(_) => Ok(()),
        Err(diags) => Err(diags
            .items
            .first()
            .map(|d| match &d.help {
                // A help that lists every name there is says nothing about this one.
                Some(h) if h.len() <= 200 => format!("{}; {h}", d.message),
                _ => d.message.clone(),
            })
            .unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_bare_only_when_they_read_back_the_same() {
        assert_eq!(literal("1048576"), "1048576");
        assert_eq!(literal("0.5"), "0.5");
        assert_eq!(literal("all"), "all");
        assert_eq!(literal("zstd"), "zstd");
        assert_eq!(literal("007"), "\"007\"");
        assert_eq!(literal("-1"), "\"-1\"");
        assert_eq!(literal("localhost:9092"), "\"localhost:9092\"");
        assert_eq!(literal("SCRAM-SHA-512"), "\"SCRAM-SHA-512\"");
        assert_eq!(literal(""), "\"\"");
    }

    #[test]
    fn strings_escape_what_the_grammar_gives_meaning() {
        assert_eq!(string("a \"b\" {c}\n\\"), r#""a \"b\" \{c\}\n\\""#);
    }

    #[test]
    fn the_checker_is_asked_about_one_setting() {
        assert!(probe("producer", "linger.ms", "5").is_ok());
        assert!(probe("topic", "min.insync.replicas", "2").is_ok());
        let why = probe("consumer", "max.poll.records", "500").unwrap_err();
        assert!(why.contains("Java client property"), "{why}");
    }
}
