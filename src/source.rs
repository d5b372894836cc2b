//! Source files and spans. A span names the file it came from, so diagnostics from an included
//! file point into that file.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Index of a file in [`Sources`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range in one source file.
///
/// Spans compare equal regardless of position: two ASTs that differ only in layout are the
/// same program, which keeps AST equality tests about meaning (as kdl-rs and PRQL do).
#[derive(Clone, Copy, Default)]
pub struct Span {
    pub file: FileId,
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span { file, start, end }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(
            self.file,
            self.start.min(other.start),
            self.end.max(other.end),
        )
    }

    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Identity including position, for de-duplicating diagnostics.
    pub fn key(&self) -> (FileId, usize, usize) {
        (self.file, self.start, self.end)
    }
}

impl PartialEq for Span {
    fn eq(&self, _: &Span) -> bool {
        true
    }
}
impl Eq for Span {}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// A value with the span it was written at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spanned<T> {
    pub node: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(node: T, span: Span) -> Self {
        Spanned { node, span }
    }
}

/// One loaded file.
#[derive(Debug)]
pub struct SourceFile {
    /// The path as the user wrote it (or as it was resolved for an include).
    pub path: PathBuf,
    pub text: String,
    /// Where each line starts (byte offsets), built on first use: a file with thousands of
    /// mistakes must not be scanned from its start for each one.
    line_starts: std::sync::OnceLock<Vec<usize>>,
}

impl SourceFile {
    pub fn new(path: PathBuf, text: String) -> SourceFile {
        SourceFile {
            path,
            text,
            line_starts: std::sync::OnceLock::new(),
        }
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        })
    }

    /// The 0-based line a byte offset is on.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts()
            .partition_point(|&s| s <= offset.min(self.text.len()))
            - 1
    }

    /// The byte range of 0-based lines `first..=last` (clamped), their line breaks included.
    pub fn lines_range(&self, first: usize, last: usize) -> std::ops::Range<usize> {
        let starts = self.line_starts();
        let first = first.min(starts.len() - 1);
        let end = starts.get(last + 1).copied().unwrap_or(self.text.len());
        starts[first]..end.max(starts[first])
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_of(offset);
        let start = self.line_starts()[line];
        let col = self
            .text
            .get(start..offset)
            .map_or(0, |l| l.chars().count())
            + 1;
        (line + 1, col)
    }

    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }
}

/// All files of one scenario: the main file first, then includes in the order they were met.
///
/// Also the byte ranges that hold secrets: the check stage marks them through a shared
/// reference (it holds `&Sources`), and [`Sources::shown_text`] is what diagnostics render, so a
/// snippet never shows a password that sits on the line it points at.
#[derive(Debug, Default)]
pub struct Sources {
    files: Vec<Arc<SourceFile>>,
    hidden: Mutex<Vec<Span>>,
}

impl Clone for Sources {
    fn clone(&self) -> Self {
        Sources {
            files: self.files.clone(),
            hidden: Mutex::new(self.hidden_spans()),
        }
    }
}

impl Sources {
    pub fn add(&mut self, path: PathBuf, text: String) -> FileId {
        self.files.push(Arc::new(SourceFile::new(path, text)));
        FileId(self.files.len() as u32 - 1)
    }

    /// Every file's id: the main file first, then includes in the order they were met.
    pub fn ids(&self) -> impl Iterator<Item = FileId> {
        (0..self.files.len() as u32).map(FileId)
    }

    pub fn get(&self, id: FileId) -> &Arc<SourceFile> {
        &self.files[id.0 as usize]
    }

    pub fn text(&self, span: Span) -> &str {
        let f = self.get(span.file);
        f.text.get(span.start..span.end).unwrap_or("")
    }

    /// Marks a span as secret: it is shown as `*` wherever source text is rendered.
    pub fn hide(&self, span: Span) {
        if !span.is_empty() {
            self.hidden
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(span);
        }
    }

    /// Hides, by reading the text alone, the value of every `key = value` whose key `secret`
    /// names. For files that did not parse, so have no tree to find values in; a value ends at
    /// the end of its string, call or list, or at a space, `}` or `#`, and never past its line.
    pub fn hide_assignments(&self, secret: impl Fn(&str) -> bool) {
        for (i, f) in self.files.iter().enumerate() {
            let file = FileId(i as u32);
            let t = f.text.as_bytes();
            let mut line_start = 0;
            for line in f.text.split_inclusive('\n') {
                for (at, _) in line.match_indices('=') {
                    let eq = line_start + at;
                    let before = t.get(eq.wrapping_sub(1)).copied().unwrap_or(b' ');
                    if matches!(before, b'=' | b'!' | b'<' | b'>') || t.get(eq + 1) == Some(&b'=') {
                        continue;
                    }
                    let head = f.text[line_start..eq].trim_end();
                    let key_from = head
                        .rfind(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
                        .map_or(0, |k| k + 1);
                    if !secret(&head[key_from..]) {
                        continue;
                    }
                    let line_end = line_start + line.trim_end_matches(['\n', '\r']).len();
                    let start = eq
                        + 1
                        + (f.text[eq + 1..line_end].len()
                            - f.text[eq + 1..line_end].trim_start().len());
                    self.hide(Span::new(file, start, value_end(t, start, line_end)));
                }
                line_start += line.len();
            }
        }
    }

    fn hidden_spans(&self) -> Vec<Span> {
        self.hidden
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A file's text as any output may show it: every hidden byte range replaced by `*`, one
    /// per byte, so every offset and line stays where it was.
    pub fn shown_text(&self, id: FileId) -> String {
        let text = &self.get(id).text;
        let mut bytes = text.clone().into_bytes();
        let spans = self.hidden_spans().into_iter().filter(|s| s.file == id);
        for (start, end) in spans.map(|s| (s.start, s.end)).chain(url_passwords(text)) {
            let end = end.min(bytes.len());
            for b in bytes.iter_mut().take(end).skip(start) {
                *b = b'*';
            }
        }
        // Whole characters are replaced (spans start and end on character boundaries), so the
        // bytes are still UTF-8; lossy only guards a span that does not.
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }
}

/// The password of every `scheme://user:password@host` written anywhere (a registry or proxy
/// URL): from after the user's `:` to the token's last `@`, since a password may hold `/` or
/// `@`. A token ends at white space, a quote or a closing bracket.
fn url_passwords(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("://") {
        let from = at + 3;
        let len = text[from..]
            .find(|c: char| c.is_whitespace() || "\"')]}".contains(c))
            .unwrap_or(text.len() - from);
        let token = &text[from..from + len];
        let Some(end) = token.rfind('@') else {
            continue;
        };
        if let Some(colon) = token[..end].find(':') {
            out.push((from + colon + 1, from + end));
        }
    }
    out
}

/// Where a value written at `start` ends, by its brackets and quotes.
fn value_end(t: &[u8], start: usize, line_end: usize) -> usize {
    let (mut depth, mut quoted, mut escaped) = (0usize, false, false);
    for (i, &b) in t.iter().enumerate().take(line_end).skip(start) {
        match b {
            _ if escaped => escaped = false,
            b'\\' if quoted => escaped = true,
            b'"' if quoted && depth == 0 => return i + 1,
            b'"' => quoted = !quoted,
            _ if quoted => {}
            b'(' | b'[' => depth += 1,
            b')' | b']' if depth <= 1 => return i + 1,
            b')' | b']' => depth -= 1,
            b' ' | b'\t' | b'}' | b'#' | b',' if depth == 0 => return i,
            _ => {}
        }
    }
    line_end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_come_from_the_line_index() {
        let f = SourceFile::new("f.kbs".into(), "ab\r\nçd\n\nlast".into());
        // Columns count characters; a CR belongs to the line it ends.
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(2), (1, 3));
        assert_eq!(f.line_col(4), (2, 1));
        assert_eq!(f.line_col(6), (2, 2)); // after the two bytes of ç
        assert_eq!(f.line_col(8), (3, 1));
        assert_eq!(f.line_col(9), (4, 1));
        assert_eq!(f.line_col(99), (4, 5)); // clamped to the end
        assert_eq!(f.line_of(7), 1);
        assert_eq!(&f.text[f.lines_range(1, 2)], "çd\n\n");
        assert_eq!(&f.text[f.lines_range(3, 9)], "last");
    }

    #[test]
    fn a_hidden_span_is_shown_as_stars_of_equal_length() {
        let mut s = Sources::default();
        let id = s.add("a.kbs".into(), "p = \"hunter2\" # é\nx = 1".into());
        s.hide(Span::new(id, 4, 13));
        let shown = s.shown_text(id);
        assert_eq!(shown, "p = ********* # é\nx = 1");
        assert_eq!(shown.len(), s.get(id).text.len());
    }

    #[test]
    fn a_file_that_did_not_parse_has_its_secret_assignments_hidden_by_reading() {
        let mut s = Sources::default();
        let text = "a { pw = \"x y\" b == 1  pw = env(\"V\", \"d e\") pw=[1, 2] other = 3 }\npw = hunter2\n";
        let id = s.add("a.kbs".into(), text.into());
        s.hide_assignments(|k| k == "pw");
        assert_eq!(
            s.shown_text(id),
            "a { pw = ***** b == 1  pw = *************** pw=****** other = 3 }\npw = *******\n"
        );
    }

    #[test]
    fn a_secret_of_several_byte_characters_keeps_every_offset() {
        let mut s = Sources::default();
        let id = s.add("a.kbs".into(), "p = \"pässwörd\"\n".into());
        s.hide(Span::new(id, 4, 16));
        let shown = s.shown_text(id);
        assert!(!shown.contains("ss"), "{shown}");
        assert_eq!(shown.len(), s.get(id).text.len());
    }

    #[test]
    fn a_password_in_any_url_is_shown_as_stars() {
        let mut s = Sources::default();
        let text =
            "r = \"https://bob:p/a@ss@reg:8081/x\" # see http://h:1/y\nq = \"ftp://anon@h\"\n";
        let id = s.add("a.kbs".into(), text.into());
        assert_eq!(
            s.shown_text(id),
            "r = \"https://bob:******@reg:8081/x\" # see http://h:1/y\nq = \"ftp://anon@h\"\n"
        );
    }
}
