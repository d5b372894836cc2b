//! Source files and spans. A span names the file it came from, so diagnostics from an included
//! file point into that file.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
#[derive(Debug, Default, Clone)]
pub struct Sources {
    files: Vec<Arc<SourceFile>>,
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
}
