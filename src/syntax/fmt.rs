//! The formatter: one canonical layout of a `.kbs` file, every comment kept where it was.
//!
//! It works on the concrete parse ([`concrete`]: pest pairs and the source between them), not on
//! the AST, which has no comments. The layout: two spaces of indentation per block, `=` aligned
//! in a run of settings, `when` aligned in a run of assertions (a run ends at a blank line or a
//! block), one assertion per line, at most one blank line in a row and none at the edge of a
//! block, two spaces before an end-of-line comment. A block written on one line that holds only
//! settings stays on one line (`steps { fast { linger.ms = 0 } }` is a table of rows); the rows of
//! such a table inside a section have their `{` aligned. A list written over several lines (or
//! longer than 80 columns) gets one item per line. A setting, assertion or header with a
//! comment inside it is kept as written, so the comment stays in place.

mod concrete;

use pest::iterators::Pair;
use pest::Parser as _;

use super::{Grammar, Rule};
use crate::diagnostic::Diagnostic;
use crate::source::FileId;
use concrete::{content_end, inline, join, source, tokens, words, Tok, TokKind};

const INDENT: &str = "  ";
/// A list longer than this on one line gets one item per line.
const MAX_LIST_WIDTH: usize = 80;

/// Formats a scenario file, or an included file of bare entries. A file that does not parse is
/// refused with the diagnostics `check` would give.
pub fn format(file: FileId, text: &str) -> Result<String, Diagnostic> {
    super::init();
    super::limits::check(file, text)?;
    let parsed = if is_scenario(text) {
        Grammar::parse(Rule::file, text)
    } else {
        // An included file; if it is not one either, the error that got further says more
        // (`scenari "x" {` is a scenario with a typo, `a = ` a fragment left unfinished).
        Grammar::parse(Rule::fragment, text).map_err(|fragment| {
            match Grammar::parse(Rule::file, text) {
                Err(scenario) if reached(&scenario) > reached(&fragment) => scenario,
                _ => fragment,
            }
        })
    };
    let top = parsed
        .map_err(|e| super::errors::syntax_error(file, text, e))?
        .next()
        .expect("the top rule yields one pair");
    let f = Formatter { text };
    let toks = concrete::file_tokens(text, &top);
    let (items, _) = f.body(&toks, None);
    let mut lines = Vec::new();
    f.render(&items, 0, false, &mut lines);
    let mut out = String::new();
    for line in lines {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    Ok(out)
}

fn reached(e: &pest::error::Error<Rule>) -> usize {
    match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((_, end)) => end,
    }
}

/// Whether the first word after comments is `scenario`; anything else is an included file.
fn is_scenario(text: &str) -> bool {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if rest.starts_with('#') || rest.starts_with("//") {
            rest = rest.split_once('\n').map_or("", |(_, r)| r);
        } else {
            break;
        }
    }
    rest.strip_prefix("scenario")
        .is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}

/// One line (or a block of lines) of a block's body, before alignment.
enum Item {
    Blank,
    Comment(String),
    Setting {
        key: String,
        value: String,
        eol: Option<String>,
    },
    Assertion {
        test: String,
        when: Option<String>,
        eol: Option<String>,
    },
    Block(Block),
    /// Kept as written (it holds a comment), or syntax formatted on one line.
    Text {
        text: String,
        eol: Option<String>,
    },
}

struct Block {
    header: String,
    /// A comment after the `{`.
    open_eol: Option<String>,
    body: Vec<Item>,
    written_on_one_line: bool,
    eol: Option<String>,
}

impl Item {
    fn eol_mut(&mut self) -> Option<&mut Option<String>> {
        match self {
            Item::Blank | Item::Comment(_) => None,
            Item::Setting { eol, .. } | Item::Assertion { eol, .. } | Item::Text { eol, .. } => {
                Some(eol)
            }
            Item::Block(b) => Some(&mut b.eol),
        }
    }
}

impl Block {
    /// `header` and `{ a = 1  b = 2 }` when the block stays on one line.
    fn one_line(&self) -> Option<String> {
        if self.open_eol.is_some() {
            return None;
        }
        if self.body.is_empty() {
            return Some("{ }".into());
        }
        if !self.written_on_one_line {
            return None;
        }
        let mut parts = Vec::new();
        for item in &self.body {
            match item {
                Item::Setting {
                    key,
                    value,
                    eol: None,
                } if !value.contains('\n') => parts.push(format!("{key} = {value}")),
                _ => return None,
            }
        }
        Some(format!("{{ {} }}", parts.join("  ")))
    }
}

struct Formatter<'i> {
    text: &'i str,
}

impl<'i> Formatter<'i> {
    /// The items of a body: `toks` between `{` and `}` (or a whole file). `open_end` is where the
    /// `{` ends; a comment on its line goes after it. Returns that comment too.
    fn body(&self, toks: &[Tok<'i>], open_end: Option<usize>) -> (Vec<Item>, Option<String>) {
        let mut items: Vec<Item> = Vec::new();
        let mut open_eol = None;
        let mut prev_end = open_end;
        for t in toks {
            let newlines = prev_end.map_or(0, |p| self.text[p..t.start].matches('\n').count());
            let same_line = prev_end.is_some() && newlines == 0;
            if newlines >= 2 && !items.is_empty() {
                items.push(Item::Blank);
            }
            match &t.kind {
                TokKind::Comment(c) if same_line && items.is_empty() => {
                    open_eol = Some(c.to_string());
                }
                TokKind::Comment(c) if same_line => {
                    match items.last_mut().and_then(Item::eol_mut) {
                        Some(eol) => *eol = Some(c.to_string()),
                        None => items.push(Item::Comment(c.to_string())),
                    }
                }
                TokKind::Comment(c) => items.push(Item::Comment(c.to_string())),
                TokKind::Child(p) => items.push(self.entry(p)),
                TokKind::Lit(l) => items.push(Item::Text {
                    text: l.to_string(),
                    eol: None,
                }),
            }
            prev_end = Some(t.end);
        }
        (items, open_eol)
    }

    fn entry(&self, pair: &Pair<'i, Rule>) -> Item {
        let toks = tokens(self.text, pair);
        let verbatim = || Item::Text {
            text: source(self.text, pair).to_string(),
            eol: None,
        };
        match pair.as_rule() {
            Rule::setting => {
                let mut children = pair.clone().into_inner();
                let (Some(key), Some(value)) = (children.next(), children.next()) else {
                    return verbatim();
                };
                let clean = !toks.iter().any(|t| matches!(t.kind, TokKind::Comment(_)));
                match inline(self.text, &value).filter(|_| clean) {
                    Some(v) => Item::Setting {
                        key: key.as_str().to_string(),
                        value: self.vertical_list(&value, &v).unwrap_or(v),
                        eol: None,
                    },
                    None => verbatim(),
                }
            }
            Rule::assertion => {
                let cond = toks.iter().position(
                    |t| matches!(&t.kind, TokKind::Child(c) if c.as_rule() == Rule::condition),
                );
                let (test, when) = toks.split_at(cond.unwrap_or(toks.len()));
                let (mut tw, mut ww) = (Vec::new(), Vec::new());
                if words(self.text, test, &mut tw) && words(self.text, when, &mut ww) {
                    Item::Assertion {
                        test: join(&tw),
                        when: (!ww.is_empty()).then(|| join(&ww)),
                        eol: None,
                    }
                } else {
                    verbatim()
                }
            }
            _ if toks.iter().any(|t| t.is_lit("{")) => Item::Block(self.block(pair, &toks)),
            _ => match inline(self.text, pair) {
                Some(text) => Item::Text { text, eol: None },
                None => verbatim(),
            },
        }
    }

    /// A list value written over several lines, or too long for one, as one item per line
    /// (each with a comma): `[` and `]` on the setting's lines, the items a level deeper.
    fn vertical_list(&self, value: &Pair<'i, Rule>, one_line: &str) -> Option<String> {
        let list = value.clone().into_inner().next()?;
        let long = width(one_line) > MAX_LIST_WIDTH;
        if list.as_rule() != Rule::list || !(long || source(self.text, value).contains('\n')) {
            return None;
        }
        let items: Vec<String> = list
            .into_inner()
            .map(|item| inline(self.text, &item))
            .collect::<Option<_>>()?;
        if items.is_empty() {
            return None;
        }
        let rows: String = items.iter().map(|i| format!("\n{INDENT}{i},")).collect();
        Some(format!("[{rows}\n]"))
    }

    /// `header { body }`: the scenario, a section, `expect`, or any braced syntax.
    fn block(&self, pair: &Pair<'i, Rule>, toks: &[Tok<'i>]) -> Block {
        let open = toks.iter().position(|t| t.is_lit("{")).expect("a block");
        let close = toks
            .iter()
            .rposition(|t| t.is_lit("}"))
            .filter(|&c| c > open)
            .unwrap_or(toks.len());
        let mut hw = Vec::new();
        let header = if words(self.text, &toks[..open], &mut hw) {
            join(&hw)
        } else {
            self.text[pair.as_span().start()..toks[open].start]
                .trim_end()
                .to_string()
        };
        let (body, open_eol) = self.body(&toks[open + 1..close], Some(toks[open].end));
        let end = toks
            .get(close)
            .map_or(content_end(self.text, pair), |t| t.end);
        Block {
            header,
            open_eol,
            body,
            written_on_one_line: !self.text[toks[open].start..end].contains('\n'),
            eol: None,
        }
    }

    /// Lays out a body's items at `depth`; `table`: one-line blocks get their `{` aligned.
    fn render(&self, items: &[Item], depth: usize, table: bool, out: &mut Vec<String>) {
        let indent = INDENT.repeat(depth);
        let key_width = run_widths(items, |i| match i {
            Item::Setting { key, .. } => Some(Some(width(key))),
            _ => None,
        });
        let test_width = run_widths(items, |i| match i {
            Item::Assertion { test, when, .. } => Some(when.as_ref().map(|_| width(test))),
            _ => None,
        });
        let header_width = table
            .then(|| {
                items
                    .iter()
                    .filter_map(|i| match i {
                        Item::Block(b) => b.one_line().map(|_| width(&b.header)),
                        _ => None,
                    })
                    .max()
            })
            .flatten()
            .unwrap_or(0);
        for (n, item) in items.iter().enumerate() {
            let (line, eol) = match item {
                Item::Blank => (String::new(), &None),
                Item::Comment(c) => (format!("{indent}{c}"), &None),
                Item::Setting { key, value, eol } => {
                    let value = value.replace('\n', &format!("\n{indent}"));
                    (format!("{indent}{} = {value}", pad(key, key_width[n])), eol)
                }
                Item::Assertion { test, when, eol } => match when {
                    Some(w) => (format!("{indent}{}  {w}", pad(test, test_width[n])), eol),
                    None => (format!("{indent}{test}"), eol),
                },
                Item::Text { text, eol } => (format!("{indent}{text}"), eol),
                Item::Block(b) => match b.one_line() {
                    Some(rest) => (
                        format!("{indent}{} {rest}", pad(&b.header, header_width)),
                        &b.eol,
                    ),
                    None => {
                        out.push(with_eol(format!("{indent}{} {{", b.header), &b.open_eol));
                        let is_section = !b.header.starts_with("scenario ");
                        self.render(&b.body, depth + 1, is_section, out);
                        (format!("{indent}}}"), &b.eol)
                    }
                },
            };
            out.push(with_eol(line, eol));
        }
    }
}

/// For each item, the width its run aligns to: `measure` says whether an item belongs to a run
/// (Some) and what it contributes (Some(Some(w))); comments do not end a run, anything else does.
fn run_widths(items: &[Item], measure: impl Fn(&Item) -> Option<Option<usize>>) -> Vec<usize> {
    let mut widths = vec![0; items.len()];
    let mut start = 0;
    let mut max = 0;
    for (n, item) in items.iter().enumerate() {
        match (item, measure(item)) {
            (_, Some(w)) => max = max.max(w.unwrap_or(0)),
            (Item::Comment(_), None) => {}
            (_, None) => {
                widths[start..n].fill(max);
                start = n + 1;
                max = 0;
            }
        }
    }
    widths[start..].fill(max);
    widths
}

fn width(s: &str) -> usize {
    s.chars().count()
}

fn pad(s: &str, to: usize) -> String {
    format!("{s}{}", " ".repeat(to.saturating_sub(width(s))))
}

fn with_eol(line: String, eol: &Option<String>) -> String {
    match eol {
        Some(c) => format!("{line}  {c}"),
        None => line,
    }
}
