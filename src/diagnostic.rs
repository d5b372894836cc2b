//! Diagnostics are data: a stable code, a message, a labelled span and a help line. Stages
//! return them; only the edge ([`render_text`], [`render_json`]) turns them into text.

use std::fmt::Write as _;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};
use serde::Serialize;

use crate::format::plural;
use crate::source::{SourceFile, Sources, Span};

/// What kind of mistake; each has a stable code users can search for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Kind {
    Io,
    Syntax,
    UnknownSection,
    UnknownKey,
    Duplicate,
    Missing,
    Unit,
    Type,
    Value,
    Property,
    JavaProperty,
    Variable,
    Metric,
    Cell,
    EmptyList,
    PayloadFile,
    Include,
    Limit,
    Client,
    ClientUnsupported,
    KeyPlacement,
}

impl Kind {
    pub fn code(self) -> &'static str {
        match self {
            Kind::Io => "kb::io",
            Kind::Syntax => "kb::syntax",
            Kind::UnknownSection => "kb::unknown-section",
            Kind::UnknownKey => "kb::unknown-key",
            Kind::Duplicate => "kb::duplicate",
            Kind::Missing => "kb::missing",
            Kind::Unit => "kb::unit",
            Kind::Type => "kb::type",
            Kind::Value => "kb::value",
            Kind::Property => "kb::property",
            Kind::JavaProperty => "kb::java-property",
            Kind::Variable => "kb::variable",
            Kind::Metric => "kb::metric",
            Kind::Cell => "kb::cell",
            Kind::EmptyList => "kb::empty-list",
            Kind::PayloadFile => "kb::payload-file",
            Kind::Include => "kb::include",
            Kind::Limit => "kb::limit",
            Kind::Client => "kb::client",
            Kind::ClientUnsupported => "kb::client-unsupported",
            Kind::KeyPlacement => "kb::key-placement",
        }
    }
}

/// An error makes a file invalid; a note says something worth knowing about a valid one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    #[default]
    Error,
    Note,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Note => "note",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub kind: Kind,
    pub severity: Severity,
    pub message: String,
    pub span: Option<Span>,
    pub label: Option<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(kind: Kind, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            kind,
            severity: Severity::Error,
            message: message.into(),
            span: Some(span),
            label: None,
            help: None,
        }
    }

    /// A note: true of a valid file, and worth knowing before it runs.
    pub fn note(kind: Kind, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Note,
            ..Diagnostic::new(kind, span, message)
        }
    }

    /// A problem with no place in a file (a file that cannot be read).
    pub fn unplaced(kind: Kind, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            kind,
            severity: Severity::Error,
            message: message.into(),
            span: None,
            label: None,
            help: None,
        }
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn help_opt(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }
}

/// Every diagnostic of one scenario, in source order.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Source order, and one copy of each: the check stage validates every matrix cell, so the
    /// same mistake would otherwise be reported once per cell.
    pub fn finish(mut self) -> Self {
        self.items
            .sort_by_key(|d| (d.span.map(|s| s.key()), d.kind));
        self.items.dedup_by(|a, b| {
            a.kind == b.kind
                && a.message == b.message
                && a.span.map(|s| s.key()) == b.span.map(|s| s.key())
        });
        self
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics { items: vec![d] }
    }
}

/// Lines longer than this (in characters) are not shown: miette cannot lay out a label past
/// column 65 535 (Rust's formatting width limit), and a wall of text helps nobody anyway.
const MAX_SHOWN_LINE: usize = 1_000;

/// miette's view of one diagnostic.
#[derive(Debug)]
struct Rendered<'a> {
    d: &'a Diagnostic,
    source: Option<CharColumns<'a>>,
    /// Set when the source is too long to show: where the span is, said in words instead.
    unshown: Option<String>,
}

impl std::fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.d.message)?;
        match &self.unshown {
            Some(at) => write!(f, "\n{at}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for Rendered<'_> {}

impl miette::Diagnostic for Rendered<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        Some(Box::new(self.d.kind.code()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Note => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.d
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.source.as_ref()?;
        let span = self.d.span?;
        let label = LabeledSpan::new_with_span(
            self.d.label.clone(),
            SourceSpan::new(span.start.into(), span.len()),
        );
        Some(Box::new(std::iter::once(label)))
    }
}

/// A named source whose columns count characters, as JSON's do and as editors show them;
/// miette's own count is in bytes, so the two disagreed on any line with an accent. miette
/// reads only the lines around the span (found by the file's line index): it scans what it is
/// given from the start, and a file with thousands of mistakes made that quadratic.
#[derive(Debug)]
struct CharColumns<'a> {
    name: String,
    /// The text as shown (secrets starred): the file's bytes, one for one.
    text: &'a str,
    file: &'a SourceFile,
}

impl SourceCode for CharColumns<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let last_byte = (span.offset() + span.len())
            .saturating_sub(1)
            .max(span.offset());
        let first = self.file.line_of(span.offset()).saturating_sub(before);
        let range = self
            .file
            .lines_range(first, self.file.line_of(last_byte) + after);
        let (window, base, base_line) = match self.text.get(range.clone()) {
            Some(w) if span.offset() >= range.start => (w, range.start, first),
            _ => (self.text, 0, 0),
        };
        let local = SourceSpan::new((span.offset() - base).into(), span.len());
        let c = window.read_span(&local, before, after)?;
        let at = c.span().offset();
        let line_start = window[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let column = window
            .get(line_start..at)
            .map_or(c.column(), |s| s.chars().count());
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            c.data(),
            SourceSpan::new((at + base).into(), c.span().len()),
            c.line() + base_line,
            column,
            c.line_count(),
        )))
    }
}

/// Where a span is, in words, when a line it touches (or the one before or after, which miette
/// shows as context) is too long to show; None when the source can be shown.
fn too_long_to_show(file: &SourceFile, span: Span, label: Option<&str>) -> Option<String> {
    let text = file.text.as_str();
    let start = text[..span.start.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| text[..i].rfind('\n').map_or(0, |j| j + 1));
    let end = span.end.min(text.len());
    let end = text[end..].find('\n').map_or(text.len(), |i| {
        let next = end + i + 1;
        text[next..].find('\n').map_or(text.len(), |j| next + j)
    });
    let longest = text[start..end]
        .split('\n')
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    if longest <= MAX_SHOWN_LINE {
        return None;
    }
    let (line, column) = file.line_col(span.start);
    let label = label.map(|l| format!(" ({l})")).unwrap_or_default();
    Some(format!(
        "at {}:{line}:{column}{label}; the source is not shown: a line there has {longest} \
         characters, over {MAX_SHOWN_LINE}",
        file.path.display()
    ))
}

/// Human-readable rendering: miette's graphical report for each diagnostic, then a summary.
/// `color` off and a fixed `width` give byte-stable output for snapshot tests. Columns count
/// characters.
pub fn render_text(diags: &Diagnostics, sources: &Sources, color: bool, width: usize) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(width);
    let mut out = String::new();
    // Secrets are shown as stars (by span, `Sources::shown_text`), made once per file.
    let mut shown: std::collections::HashMap<crate::source::FileId, String> = Default::default();
    for d in &diags.items {
        if let Some(s) = d.span {
            shown
                .entry(s.file)
                .or_insert_with(|| sources.shown_text(s.file));
        }
    }
    for d in &diags.items {
        let (source, unshown) = match d.span {
            Some(s) => {
                let f = sources.get(s.file);
                match too_long_to_show(f, s, d.label.as_deref()) {
                    Some(at) => (None, Some(at)),
                    None => (
                        Some(CharColumns {
                            name: f.path.display().to_string(),
                            text: &shown[&s.file],
                            file: f,
                        }),
                        None,
                    ),
                }
            }
            None => (None, None),
        };
        let r = Rendered { d, source, unshown };
        let _ = handler.render_report(&mut out, &r);
        out.push('\n');
    }
    let notes = (diags.items.iter())
        .filter(|d| d.severity == Severity::Note)
        .count();
    let n = diags.len() - notes;
    let notes_text = format!("{notes} note{}", plural(notes));
    let _ = match (n, notes) {
        (0, _) => writeln!(out, "{notes_text}"),
        (_, 0) => writeln!(out, "{n} problem{} found", plural(n)),
        _ => writeln!(out, "{n} problem{} found, {notes_text}", plural(n)),
    };
    out
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'static str,
    severity: &'static str,
    message: &'a str,
    file: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    start: Option<usize>,
    end: Option<usize>,
    label: Option<&'a str>,
    help: Option<&'a str>,
}

/// The same diagnostics as data, for editors and CI annotations (docs/diagnostics.md). Lines
/// and columns are 1-based and count characters, as the text rendering does; `start`/`end` are
/// byte offsets.
pub fn render_json(diags: &Diagnostics, sources: &Sources) -> serde_json::Value {
    let items: Vec<JsonDiagnostic> = diags
        .items
        .iter()
        .map(|d| {
            let (file, begin, finish) = match d.span {
                Some(s) => {
                    let f = sources.get(s.file);
                    (
                        Some(f.path.display().to_string()),
                        Some(f.line_col(s.start)),
                        Some(f.line_col(s.end)),
                    )
                }
                None => (None, None, None),
            };
            JsonDiagnostic {
                code: d.kind.code(),
                severity: d.severity.name(),
                message: &d.message,
                file,
                line: begin.map(|p| p.0),
                column: begin.map(|p| p.1),
                end_line: finish.map(|p| p.0),
                end_column: finish.map(|p| p.1),
                start: d.span.map(|s| s.start),
                end: d.span.map(|s| s.end),
                label: d.label.as_deref(),
                help: d.help.as_deref(),
            }
        })
        .collect();
    serde_json::json!({ "schema_version": 1, "diagnostics": items })
}

/// A folder as a help line shows it: the current one is `.`, never an empty `()`.
pub fn shown_folder(dir: &std::path::Path) -> String {
    if dir.as_os_str().is_empty() {
        ".".to_string()
    } else {
        dir.display().to_string()
    }
}

/// "did you mean" by edit distance; None when nothing is close.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word_l = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::damerau_levenshtein(&word_l, &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 3).max(1) + usize::from(word.len() > 6))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// "did you mean `x`?", or the list of what exists when nothing is close.
pub fn suggest(word: &str, candidates: &[&str], what: &str) -> String {
    match closest(word, candidates.iter().copied()) {
        Some(c) => format!("did you mean `{c}`?"),
        None if candidates.is_empty() => format!("there are no {what} here"),
        None => format!(
            "{what}: {}",
            candidates
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
