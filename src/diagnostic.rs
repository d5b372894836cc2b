//! Diagnostics are data: a stable code, a message, a labelled span and a help line. Stages
//! return them; only the edge ([`render_text`], [`render_json`]) turns them into text.

use std::fmt::Write as _;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan};
use serde::Serialize;

use crate::format::plural;
use crate::source::{Sources, Span};

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
        }
    }
}

#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub kind: Kind,
    pub message: String,
    pub span: Option<Span>,
    pub label: Option<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(kind: Kind, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            kind,
            message: message.into(),
            span: Some(span),
            label: None,
            help: None,
        }
    }

    /// A problem with no place in a file (a file that cannot be read).
    pub fn unplaced(kind: Kind, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            kind,
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

/// miette's view of one diagnostic.
#[derive(Debug)]
struct Rendered<'a> {
    d: &'a Diagnostic,
    source: Option<NamedSource<String>>,
}

impl std::fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.d.message)
    }
}

impl std::error::Error for Rendered<'_> {}

impl miette::Diagnostic for Rendered<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        Some(Box::new(self.d.kind.code()))
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
        let span = self.d.span?;
        let label = LabeledSpan::new_with_span(
            self.d.label.clone(),
            SourceSpan::new(span.start.into(), span.len()),
        );
        Some(Box::new(std::iter::once(label)))
    }
}

/// Human-readable rendering: miette's graphical report for each diagnostic, then a summary.
/// `color` off and a fixed `width` give byte-stable output for snapshot tests.
pub fn render_text(diags: &Diagnostics, sources: &Sources, color: bool, width: usize) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(width);
    let mut out = String::new();
    for d in &diags.items {
        let source = d.span.map(|s| {
            let f = sources.get(s.file);
            NamedSource::new(f.path.display().to_string(), sources.shown_text(s.file))
        });
        let r = Rendered { d, source };
        let _ = handler.render_report(&mut out, &r);
        out.push('\n');
    }
    let n = diags.len();
    let _ = writeln!(out, "{n} problem{} found", plural(n));
    out
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'static str,
    message: &'a str,
    file: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    start: Option<usize>,
    end: Option<usize>,
    label: Option<&'a str>,
    help: Option<&'a str>,
}

/// The same diagnostics as data, for editors and CI annotations.
pub fn render_json(diags: &Diagnostics, sources: &Sources) -> serde_json::Value {
    let items: Vec<JsonDiagnostic> = diags
        .items
        .iter()
        .map(|d| {
            let (file, line, column) = match d.span {
                Some(s) => {
                    let f = sources.get(s.file);
                    let (l, c) = f.line_col(s.start);
                    (Some(f.path.display().to_string()), Some(l), Some(c))
                }
                None => (None, None, None),
            };
            JsonDiagnostic {
                code: d.kind.code(),
                message: &d.message,
                file,
                line,
                column,
                start: d.span.map(|s| s.start),
                end: d.span.map(|s| s.end),
                label: d.label.as_deref(),
                help: d.help.as_deref(),
            }
        })
        .collect();
    serde_json::json!({ "schema_version": 1, "diagnostics": items })
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
