//! A reader's view of a file that did not parse: its tokens, each with its line and column and
//! whether white space stands before it, and the blocks they open and close. It never fails:
//! it reads anything, so a syntax error can be explained by what stands around it.

/// What a token is, as a reader sees it (not as the grammar does: `1,000` is a number, a comma
/// and another number; `--throughput` a flag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TokKind {
    /// A name, possibly dotted or dashed: `linger.ms`, `orders-v1`.
    Word,
    /// A number with whatever is glued to it: `1000`, `10s`, `50k/s`, `1.5M`.
    Number,
    /// `"..."`; `closed` is false when the line ends first.
    Str { closed: bool },
    /// `'...'` or `` `...` ``: quotes the language does not have.
    Quoted,
    /// `{name}`.
    Var,
    /// `--name`: a command-line flag.
    Flag,
    /// Any other character, or one of the two-character operators.
    Punct,
}

#[derive(Clone, Debug)]
pub(super) struct Tok<'a> {
    pub kind: TokKind,
    pub text: &'a str,
    pub start: usize,
    pub end: usize,
    /// 1-based, as diagnostics count.
    pub line: usize,
    /// 1-based, in characters.
    pub col: usize,
    /// Nothing but white space before it on its line.
    pub first_on_line: bool,
    /// No white space (nor comment) between it and the token before.
    pub glued: bool,
    /// Columns of white space at the start of its line.
    pub indent: usize,
}

impl Tok<'_> {
    pub(super) fn is(&self, text: &str) -> bool {
        self.text == text
    }

    pub(super) fn is_word(&self) -> bool {
        self.kind == TokKind::Word
    }
}

const TWO_CHAR: &[&str] = &[
    "==", "!=", "<=", ">=", "..", "/*", "*/", ":=", "=>", "&&", "||", "->",
];

/// Every token of `text`; comments (`#`, `//`) and white space are skipped.
pub(super) fn tokens(text: &str) -> Vec<Tok<'_>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let mut line_start = 0;
    let mut glued = false;
    let mut first_on_line = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            i += 1;
            line += 1;
            line_start = i;
            first_on_line = true;
            glued = false;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            glued = false;
            continue;
        }
        if c == b'#' || text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n);
            glued = false;
            continue;
        }
        let start = i;
        let kind = if c == b'"' {
            let (end, closed) = string_end(b, i + 1, b'"');
            i = end;
            TokKind::Str { closed }
        } else if c == b'\'' || c == b'`' {
            i = string_end(b, i + 1, c).0;
            TokKind::Quoted
        } else if c.is_ascii_digit() || (c == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i = number_end(b, i + 1);
            TokKind::Number
        } else if c.is_ascii_alphabetic() || c == b'_' {
            i = word_end(b, i);
            TokKind::Word
        } else if text[i..].starts_with("--") && b.get(i + 2).is_some_and(u8::is_ascii_alphabetic) {
            i = word_end(b, i + 2);
            TokKind::Flag
        } else if c == b'{' && var_end(b, i).is_some() {
            i = var_end(b, i).unwrap_or(i + 1);
            TokKind::Var
        } else {
            i += TWO_CHAR
                .iter()
                .find(|op| text[i..].starts_with(**op))
                .map_or_else(
                    || text[i..].chars().next().map_or(1, char::len_utf8),
                    |op| op.len(),
                );
            TokKind::Punct
        };
        let indent = text[line_start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .count();
        out.push(Tok {
            kind,
            text: &text[start..i],
            start,
            end: i,
            line,
            col: text[line_start..start].chars().count() + 1,
            first_on_line,
            glued,
            indent,
        });
        glued = true;
        first_on_line = false;
    }
    out
}

/// Past the closing quote, or at the end of the line when there is none (then false).
fn string_end(b: &[u8], mut i: usize, quote: u8) -> (usize, bool) {
    while i < b.len() {
        match b[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\n' => return (i, false),
            q if q == quote => return (i + 1, true),
            _ => i += 1,
        }
    }
    (b.len(), false)
}

/// Digits, `_` and `.` between digits, then a glued unit and a glued `/period`.
fn number_end(b: &[u8], mut i: usize) -> usize {
    let digitish = |c: u8| c.is_ascii_digit() || c == b'_';
    while i < b.len()
        && (digitish(b[i]) || (b[i] == b'.' && b.get(i + 1).is_some_and(|c| c.is_ascii_digit())))
    {
        i += 1;
    }
    while i < b.len() && (b[i].is_ascii_alphabetic() || b[i] == b'%') {
        i += 1;
    }
    if b.get(i) == Some(&b'/') && b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
        i += 1;
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
    }
    i
}

/// A name with `.` and `-` between its parts, as keys and words are written.
fn word_end(b: &[u8], mut i: usize) -> usize {
    let part = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let joins = (b[i] == b'.' || b[i] == b'-') && b.get(i + 1).is_some_and(|c| part(*c));
        if !part(b[i]) && !joins {
            break;
        }
        i += 1;
    }
    i
}

/// `{name}` with nothing between: the end, past `}`.
fn var_end(b: &[u8], i: usize) -> Option<usize> {
    let first = *b.get(i + 1)?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let mut j = i + 2;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        j += 1;
    }
    (b.get(j) == Some(&b'}')).then_some(j + 1)
}

/// A bracket that is open: which one, the token that opened it, and its name as written
/// (`workload`, `topic "orders"`; empty for a list or a bare `{`).
#[derive(Clone, Debug)]
pub(super) struct Open {
    pub bracket: char,
    pub at: usize,
    /// The first token of its header (the name), or the bracket itself.
    pub head: usize,
    pub name: String,
}

/// The brackets open before token `upto`, outermost first; and the first block whose `}` is
/// probably missing: one closed by a `}` whose indentation belongs to an enclosing block.
pub(super) struct Nesting {
    pub open: Vec<Open>,
    pub suspect: Option<Open>,
    /// The `}` that closed the suspect (by count).
    pub suspect_closer: Option<usize>,
}

pub(super) fn nesting(toks: &[Tok], upto: usize) -> Nesting {
    let mut open: Vec<Open> = Vec::new();
    let mut suspect = None;
    let mut suspect_closer = None;
    for (i, t) in toks.iter().enumerate().take(upto) {
        match t.text {
            "{" | "[" | "(" => {
                let bracket = t.text.chars().next().unwrap_or('{');
                let head = header_start(toks, i);
                let name = if bracket == '{' {
                    toks[head..i]
                        .iter()
                        .map(|t| t.text)
                        .collect::<Vec<_>>()
                        .join(" ")
                } else {
                    String::new()
                };
                open.push(Open {
                    bracket,
                    at: i,
                    head,
                    name,
                });
            }
            "}" | "]" | ")" => {
                let want = match t.text {
                    "}" => '{',
                    "]" => '[',
                    _ => '(',
                };
                let Some(k) = open.iter().rposition(|o| o.bracket == want) else {
                    continue;
                };
                let closed = open.remove(k);
                open.truncate(k);
                if want == '{' && t.first_on_line && suspect.is_none() {
                    let own = toks[closed.head].indent;
                    let outer = open.iter().rev().find(|o| o.bracket == '{');
                    let multi_line = toks[closed.at].line != t.line;
                    if multi_line
                        && t.indent < own
                        && outer.is_some_and(|o| toks[o.head].indent == t.indent)
                    {
                        suspect = Some(closed);
                        suspect_closer = Some(i);
                    }
                }
            }
            _ => {}
        }
    }
    Nesting {
        open,
        suspect,
        suspect_closer,
    }
}

/// Where the header of the block opened at `brace` starts: its name and label on the same
/// line (`topic "orders" {`), or the brace itself.
fn header_start(toks: &[Tok], brace: usize) -> usize {
    let mut h = brace;
    while h > 0 {
        let p = &toks[h - 1];
        let fits = p.line == toks[brace].line
            && matches!(p.kind, TokKind::Word | TokKind::Str { .. })
            && brace - (h - 1) <= 2;
        if !fits {
            break;
        }
        h -= 1;
        if p.kind == TokKind::Word {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(TokKind, &str)> {
        tokens(text).into_iter().map(|t| (t.kind, t.text)).collect()
    }

    #[test]
    fn numbers_keep_their_units_and_periods_and_commas_split_them() {
        use TokKind::*;
        assert_eq!(
            kinds("rate = 50k/s {r}/s 1,000 --throughput 'x' # c\n\"open"),
            [
                (Word, "rate"),
                (Punct, "="),
                (Number, "50k/s"),
                (Var, "{r}"),
                (Punct, "/"),
                (Word, "s"),
                (Number, "1"),
                (Punct, ","),
                (Number, "000"),
                (Flag, "--throughput"),
                (Quoted, "'x'"),
                (Str { closed: false }, "\"open"),
            ]
        );
    }

    #[test]
    fn a_block_closed_by_a_brace_indented_for_its_parent_is_the_suspect() {
        let text = "scenario \"s\" {\n  workload {\n    a = 1\n}\n";
        let toks = tokens(text);
        let n = nesting(&toks, toks.len());
        assert_eq!(n.suspect.map(|o| o.name).as_deref(), Some("workload"));
        assert_eq!(n.open.len(), 1);
        assert_eq!(n.open[0].name, "scenario \"s\"");
    }
}
