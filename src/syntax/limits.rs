//! Limits checked before parsing: a cheap scan refuses what would exhaust the parser (its
//! recursion on deep brackets overflows the stack; a huge rate shape runs into its call limit)
//! with a diagnostic that names the limit, instead of a crash or a vague "too complex".

use crate::diagnostic::{Diagnostic, Kind};
use crate::source::{FileId, Span};

/// `(`, `[` and `{` nest at most this deep. A scenario needs four or five levels; the parser
/// and the stages after it recurse once per level, and 5 000 levels overflowed the stack.
pub(crate) const MAX_NESTING: usize = 64;
/// A rate shape has at most this many segments: far more than anyone writes by hand, and each
/// is printed in `plan`.
pub(crate) const MAX_SEGMENTS: usize = 1_000;

/// The first limit `text` exceeds, if any. Strings and comments are skipped: brackets and
/// words in them are text, not structure.
pub(crate) fn check(file: FileId, text: &str) -> Result<(), Diagnostic> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    // Segments of the shape being read: `, then` continues a shape; any bracket or `=` ends it.
    let mut segments = 1usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i + 1),
            b'#' => i = line_end(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'/') => i = line_end(bytes, i),
            b'(' | b'[' | b'{' => {
                depth += 1;
                segments = 1;
                if depth > MAX_NESTING {
                    return Err(Diagnostic::new(
                        Kind::Limit,
                        Span::new(file, i, i + 1),
                        format!("brackets nest at most {MAX_NESTING} deep"),
                    )
                    .label(format!("level {depth} opens here"))
                    .help(
                        "flatten this expression or these sections: a scenario needs a few levels",
                    ));
                }
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                segments = 1;
                i += 1;
            }
            b'=' => {
                segments = 1;
                i += 1;
            }
            b't' if is_then(bytes, i) => {
                segments += 1;
                if segments > MAX_SEGMENTS {
                    return Err(Diagnostic::new(
                        Kind::Limit,
                        Span::new(file, i, i + 4),
                        format!("a rate shape has at most {MAX_SEGMENTS} segments"),
                    )
                    .label(format!("segment {segments} starts here"))
                    .help("merge neighbouring segments of the same rate (`1/s for 1s, then 1/s for 1s` is `1/s for 2s`)"));
                }
                i += 4;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// `then` as a whole word.
fn is_then(bytes: &[u8], i: usize) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-';
    bytes[i..].starts_with(b"then")
        && (i == 0 || !word(bytes[i - 1]))
        && !matches!(bytes.get(i + 4), Some(b) if word(*b))
}

/// Just past the closing quote of a string starting at `i`; a string ends at a line break too,
/// as the grammar has it.
fn string_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            b'\n' => return i,
            _ => i += 1,
        }
    }
    i
}

fn line_end(bytes: &[u8], i: usize) -> usize {
    bytes[i..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(bytes.len(), |p| i + p)
}
