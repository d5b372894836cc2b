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
}

impl SourceFile {
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
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
        self.files.push(Arc::new(SourceFile { path, text }));
        FileId(self.files.len() as u32 - 1)
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

    fn hidden_spans(&self) -> Vec<Span> {
        self.hidden
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A file's text as any output may show it: every hidden byte range replaced by `*`, one
    /// per byte, so every offset and line stays where it was.
    pub fn shown_text(&self, id: FileId) -> String {
        let mut bytes = self.get(id).text.clone().into_bytes();
        for s in self.hidden_spans().iter().filter(|s| s.file == id) {
            let end = s.end.min(bytes.len());
            for b in bytes.iter_mut().take(end).skip(s.start) {
                *b = b'*';
            }
        }
        // Whole characters are replaced (spans start and end on character boundaries), so the
        // bytes are still UTF-8; lossy only guards a span that does not.
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_secret_of_several_byte_characters_keeps_every_offset() {
        let mut s = Sources::default();
        let id = s.add("a.kbs".into(), "p = \"pässwörd\"\n".into());
        s.hide(Span::new(id, 4, 16));
        let shown = s.shown_text(id);
        assert!(!shown.contains("ss"), "{shown}");
        assert_eq!(shown.len(), s.get(id).text.len());
    }
}
