//! The concrete parse: a pest pair as the tokens a reader sees, the grammar's literals and the
//! comments that lie between its children included, and a run of them joined on one line.
//!
//! Nothing here names a rule of the value or expect grammar: a rule is either atomic (kept as
//! written) or a sequence of children and literals, so syntax added later is formatted with the
//! same spacing, or kept as written when it holds a comment.

use std::collections::HashSet;
use std::sync::OnceLock;

use pest::iterators::Pair;

use super::super::Rule;

/// One token of a pair, in source order.
pub(super) struct Tok<'i> {
    pub kind: TokKind<'i>,
    pub start: usize,
    pub end: usize,
}

pub(super) enum TokKind<'i> {
    /// A literal of the grammar: `{`, `=`, `,`, `for`, `when`, `..`.
    Lit(&'i str),
    /// `# ...` or `// ...`, without its line end and trailing blanks.
    Comment(&'i str),
    Child(Pair<'i, Rule>),
}

impl Tok<'_> {
    pub(super) fn is_lit(&self, s: &str) -> bool {
        matches!(self.kind, TokKind::Lit(l) if l == s)
    }
}

/// The tokens of `pair`: its children, and the literals and comments of the source between them.
pub(super) fn tokens<'i>(text: &'i str, pair: &Pair<'i, Rule>) -> Vec<Tok<'i>> {
    let mut out = Vec::new();
    let mut pos = pair.as_span().start();
    for child in pair.clone().into_inner() {
        if child.as_rule() == Rule::EOI {
            continue;
        }
        let (start, end) = (child.as_span().start(), content_end(text, &child));
        lex(text, pos, start, &mut out);
        pos = end;
        out.push(Tok {
            start,
            end,
            kind: TokKind::Child(child),
        });
    }
    lex(text, pos, content_end(text, pair), &mut out);
    out
}

/// The tokens of the whole file: what follows the last entry (trailing comments) included.
pub(super) fn file_tokens<'i>(text: &'i str, top: &Pair<'i, Rule>) -> Vec<Tok<'i>> {
    let mut out = tokens(text, top);
    lex(text, content_end(text, top), top.as_span().end(), &mut out);
    out
}

/// Where a pair's own text ends. pest lets a pair end after the whitespace and comments it
/// skipped looking for an optional part that was not there (`a > 1  # why` then no `when`):
/// those comments belong to the lines around it, not inside it.
pub(super) fn content_end(text: &str, pair: &Pair<'_, Rule>) -> usize {
    let end = pair.as_span().end();
    if is_atomic(pair.as_rule()) {
        return end;
    }
    let last = pair
        .clone()
        .into_inner()
        .filter(|c| c.as_rule() != Rule::EOI)
        .last()
        .map_or(pair.as_span().start(), |c| content_end(text, &c));
    let mut gap = Vec::new();
    lex(text, last, end, &mut gap);
    gap.iter()
        .rev()
        .find(|t| matches!(t.kind, TokKind::Lit(_)))
        .map_or(last, |t| t.end)
}

/// A pair's text as written, without what [`content_end`] leaves out.
pub(super) fn source<'i>(text: &'i str, pair: &Pair<'i, Rule>) -> &'i str {
    &text[pair.as_span().start()..content_end(text, pair)]
}

/// Splits source between two children into literals and comments. Only whitespace, comments and
/// the grammar's literals can stand there: strings and numbers are children.
fn lex<'i>(text: &'i str, from: usize, to: usize, out: &mut Vec<Tok<'i>>) {
    let s = &text[from..to];
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let comment = c == b'#' || s[i..].starts_with("//");
        if comment {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        } else if s[i..].starts_with("..") {
            i += 2;
        } else if b"<>=!".contains(&c) {
            while i < b.len() && b"<>=!".contains(&b[i]) {
                i += 1;
            }
        } else {
            i += s[i..].chars().next().map_or(1, char::len_utf8);
        }
        let word = &s[start..i];
        out.push(Tok {
            start: from + start,
            end: from + i,
            kind: if comment {
                TokKind::Comment(word.trim_end())
            } else {
                TokKind::Lit(word)
            },
        });
    }
}

/// The rules written `@{ }` or `${ }` in the grammar: a token as written, never re-spaced (a
/// rate is `100/s`, not `100 / s`). Read from the grammar itself, so a rule added there is known.
fn atomic_rules() -> &'static HashSet<String> {
    static RULES: OnceLock<HashSet<String>> = OnceLock::new();
    RULES.get_or_init(|| {
        include_str!("../../../grammar/kafkabench.pest")
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .filter_map(|l| l.split_once('='))
            .filter(|(_, rhs)| rhs.trim_start().starts_with(['@', '$']))
            .map(|(name, _)| name.trim().to_string())
            .collect()
    })
}

fn is_atomic(rule: Rule) -> bool {
    atomic_rules().contains(&format!("{rule:?}"))
}

/// A token on a formatted line: whether it came from a child (a name, a number) or is a
/// literal of the grammar decides the spacing before a `(` or a `[`.
#[derive(Clone, Copy)]
pub(super) struct Word<'i> {
    text: &'i str,
    named: bool,
    /// Where it stands in the source: two names written glued stay glued.
    start: usize,
    end: usize,
}

/// Collects the words of `toks` (children descended into); false if a comment stands among
/// them, which a single line could not keep in place.
pub(super) fn words<'i>(text: &'i str, toks: &[Tok<'i>], out: &mut Vec<Word<'i>>) -> bool {
    for t in toks {
        match &t.kind {
            TokKind::Comment(_) => return false,
            TokKind::Lit(l) => out.push(Word {
                text: l,
                named: false,
                start: t.start,
                end: t.end,
            }),
            TokKind::Child(p)
                if is_atomic(p.as_rule()) || p.clone().into_inner().next().is_none() =>
            {
                let s = source(text, p);
                if is_atomic(p.as_rule()) || !s.contains(char::is_whitespace) {
                    out.push(Word {
                        text: s,
                        named: true,
                        start: t.start,
                        end: t.end,
                    });
                } else if !words(text, &tokens(text, p), out) {
                    return false;
                }
            }
            TokKind::Child(p) => {
                if !words(text, &tokens(text, p), out) {
                    return false;
                }
            }
        }
    }
    true
}

/// A pair on one line with canonical spacing, or None if it holds a comment.
pub(super) fn inline<'i>(text: &'i str, pair: &Pair<'i, Rule>) -> Option<String> {
    let mut w = Vec::new();
    words(text, &tokens(text, pair), &mut w).then(|| join(&w))
}

/// Joins words the way the reference writes them: `f(a: 1, b)`, `[a, b]`, `x[k=v]`, `1ms..2ms`,
/// one space elsewhere. A trailing comma before `]` or `)` is dropped.
pub(super) fn join(words: &[Word]) -> String {
    let mut out = String::new();
    let mut prev: Option<Word> = None;
    for (i, w) in words.iter().enumerate() {
        let closes_next = words
            .get(i + 1)
            .is_some_and(|n| !n.named && matches!(n.text, "]" | ")"));
        if !w.named && w.text == "," && closes_next {
            continue;
        }
        if let Some(p) = prev {
            if spaced(p, *w) {
                out.push(' ');
            }
        }
        out.push_str(w.text);
        prev = Some(*w);
    }
    out
}

fn spaced(a: Word, b: Word) -> bool {
    let lit = |w: Word, set: &[&str]| !w.named && set.contains(&w.text);
    if lit(b, &[",", ")", "]", ":", "..", "="]) || lit(a, &["(", "[", "..", "="]) {
        return false;
    }
    let word_end = |w: Word| {
        w.text
            .ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    };
    let word_start = |w: Word| {
        w.text
            .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    };
    // A call `f(` and a selector `metric[`: the name is glued to what it opens.
    let opens = lit(b, &["(", "["]);
    if opens && a.named && word_end(a) {
        return false;
    }
    // Parts of one token as written (`300` `k` if a rule made them two): a space would split
    // what the author wrote as one word.
    !(a.named && b.named && a.end == b.start && word_end(a) && word_start(b))
}
