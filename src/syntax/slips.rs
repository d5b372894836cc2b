//! Syntax errors explained by what stands around them. pest says where it stopped and which
//! tokens it would have taken there; a newcomer needs the slip named and the right form shown.
//! [`explain`] reads the file again as a reader does ([`lex`]: tokens, lines, open blocks) and
//! tries, in order, rules about the shape of the slip (an unclosed block, `key: value`, a unit
//! after a variable, a word after a value, ...); each rule is about a shape, never a file. When
//! none fits, the caller keeps pest's "expected one of".

mod assertions;
mod foreign;
mod lex;
mod numbers;
mod values;
mod words;

pub(crate) use foreign::help as foreign_help;
use lex::{Tok, TokKind};

/// What pest reported, as the rules need it.
pub(super) struct Failure {
    /// The furthest position pest reached: where a rule or a token was last tried.
    pub at: usize,
    /// pest would have taken the end of the file here (the scenario, or a fragment, was over).
    pub expects_end: bool,
    /// pest was looking for the scenario itself: the file does not start with one.
    pub expects_scenario: bool,
}

/// A syntax error told in words: where, what, and the right form.
#[derive(Debug)]
pub(super) struct Explained {
    pub start: usize,
    pub end: usize,
    pub message: String,
    pub label: String,
    pub help: String,
}

impl Explained {
    fn at(
        t: &Tok,
        message: impl Into<String>,
        label: impl Into<String>,
        help: impl Into<String>,
    ) -> Self {
        Explained::span(t.start, t.end, message, label, help)
    }

    fn span(
        start: usize,
        end: usize,
        message: impl Into<String>,
        label: impl Into<String>,
        help: impl Into<String>,
    ) -> Self {
        Explained {
            start,
            end,
            message: message.into(),
            label: label.into(),
            help: help.into(),
        }
    }
}

/// The file around the error.
pub(super) struct Cx<'a> {
    text: &'a str,
    toks: Vec<Tok<'a>>,
    /// The token at the error (`toks.len()` at the end of the file).
    i: usize,
    nest: lex::Nesting,
    failure: &'a Failure,
    /// The tokens reach the end of the file (it was not cut after the error).
    whole: bool,
}

impl<'a> Cx<'a> {
    fn cur(&self) -> Option<&Tok<'a>> {
        self.toks.get(self.i)
    }

    /// The token `k` before the one at the error.
    fn back(&self, k: usize) -> Option<&Tok<'a>> {
        self.i.checked_sub(k).and_then(|j| self.toks.get(j))
    }

    /// The first word of the innermost `{ }` block the error is in (`workload`, `expect`).
    fn block(&self) -> Option<&str> {
        self.nest
            .open
            .iter()
            .rev()
            .find(|o| o.bracket == '{')
            .map(|o| self.toks[o.head].text)
    }

    /// Inside a list or a call's arguments rather than directly in a block.
    fn in_brackets(&self) -> bool {
        self.nest.open.last().is_some_and(|o| o.bracket != '{')
    }

    /// The setting token `j` belongs to: the indexes of its key and its `=`, found on the same
    /// line before `j` (not past a bracket that opens or closes a block).
    fn setting_of(&self, j: usize) -> Option<(usize, usize)> {
        let line = self.toks.get(j)?.line;
        let mut k = j;
        while k > 0 {
            k -= 1;
            let t = &self.toks[k];
            if t.line != line || t.is("{") || t.is("}") || t.is(";") {
                return None;
            }
            if t.is("=") || t.is(":") {
                let key = k.checked_sub(1).filter(|&q| {
                    let kt = &self.toks[q];
                    kt.is_word() || matches!(kt.kind, TokKind::Str { .. } | TokKind::Flag)
                })?;
                return Some((key, k));
            }
        }
        None
    }

    /// Past the last token glued to token `j` (a run written without spaces), not counting a
    /// closing bracket or a comma that ends it.
    fn run_end(&self, j: usize) -> usize {
        let mut k = j + 1;
        while k < self.toks.len()
            && self.toks[k].glued
            && !matches!(self.toks[k].text, "}" | "]" | ")" | ",")
        {
            k += 1;
        }
        k
    }

    /// The source from token `a` to token `b` (both included).
    fn source(&self, a: usize, b: usize) -> &'a str {
        &self.text[self.toks[a].start..self.toks[b].end]
    }

    /// The text of a block's header as its name: `workload`, `topic "orders"`.
    fn opener(&self, o: &lex::Open) -> String {
        match o.bracket {
            '{' if o.name.is_empty() => "{".to_string(),
            '{' => format!("{} {{", o.name),
            c => c.to_string(),
        }
    }
}

/// A value as help may quote it: a secret's is stars.
fn shown(key: &str, value: &str) -> String {
    if crate::model::is_secret(key) {
        "****".to_string()
    } else {
        value.to_string()
    }
}

type Rule = fn(&Cx) -> Option<Explained>;

/// Tried in order; the first that recognises the shape explains it.
const RULES: &[Rule] = &[
    unclosed_string,
    unclosed_at_end,
    mismatched_bracket,
    after_the_end,
    not_a_scenario,
    values::flag,
    values::block_comment,
    assertions::assertion_slips,
    values::argument_with_equals,
    values::colon_for_equals,
    values::semicolon,
    numbers::grouped_digits,
    values::comma,
    values::doubled_equals,
    values::section_without_braces,
    values::quoted_key,
    values::other_quotes,
    values::section_with_equals,
    values::unit_after_variable,
    words::spaced_period,
    numbers::unit_apart,
    values::missing_comma,
    words::shape_words,
    words::word_after_value,
    words::missing_value,
    words::unquoted_label,
    words::missing_equals,
    words::unquoted_text,
];

/// In `faults { }`, whose lines are sentences (`at 15s kill broker 1 for 10s`), the rules about
/// settings do not apply.
const FAULT_RULES: &[Rule] = &[
    unclosed_string,
    unclosed_at_end,
    mismatched_bracket,
    after_the_end,
    values::block_comment,
    values::semicolon,
    values::other_quotes,
    numbers::unit_apart,
    values::fault_slips,
];

/// Past this, an error is not explained: a scenario is a few kilobytes, and reading a huge file
/// again as tokens would cost memory for nothing.
const MAX_EXPLAINED: usize = 1 << 20;
/// How much of the file after the error the rules may look at.
const LOOK_AHEAD: usize = 16 << 10;

pub(super) fn explain(text: &str, failure: &Failure) -> Option<Explained> {
    if failure.at > MAX_EXPLAINED {
        return None;
    }
    let mut cut = (failure.at + LOOK_AHEAD).min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let toks = lex::tokens(&text[..cut]);
    let mut i = toks.partition_point(|t| t.end <= failure.at);
    // pest stops inside `compression.type` when it took `compression` for a section's name: the
    // slip is after the whole key.
    if toks.get(i).is_some_and(|t| {
        t.kind == TokKind::Word && t.start < failure.at && text[failure.at..].starts_with('.')
    }) {
        i += 1;
    }
    let nest = lex::nesting(&toks, i);
    let cx = Cx {
        text: &text[..cut],
        toks,
        i,
        nest,
        failure,
        whole: cut == text.len(),
    };
    let rules = if cx.block() == Some("faults") {
        FAULT_RULES
    } else {
        RULES
    };
    rules.iter().find_map(|rule| rule(&cx))
}

/// `description = "abc` with no closing quote on its line.
fn unclosed_string(cx: &Cx) -> Option<Explained> {
    let s = [cx.cur(), cx.back(1)]
        .into_iter()
        .flatten()
        .find(|t| t.kind == TokKind::Str { closed: false } && t.start <= cx.failure.at)?;
    let j = cx.toks.iter().position(|t| t.start == s.start)?;
    let key = cx.setting_of(j).map_or("", |(k, _)| cx.toks[k].text);
    Some(Explained::at(
        s,
        "this string is never closed",
        "no closing `\"` on this line",
        format!(
            "end it with `\"` on the same line: `{}\"` (a string is one line; write a line break \
             as `\\n` and a quote as `\\\"`)",
            shown(key, s.text.trim_end())
        ),
    ))
}

/// The file ends inside a block: name the block, where it opened, and where its `}` is missing.
fn unclosed_at_end(cx: &Cx) -> Option<Explained> {
    if cx.cur().is_some() || !cx.whole {
        return None;
    }
    if cx.toks.is_empty() {
        let blank = cx.text.trim().is_empty();
        return Some(Explained::span(
            0,
            0,
            if blank {
                "the file is empty"
            } else {
                "the file holds only comments"
            },
            "expected `scenario \"name\" {`",
            "expected a scenario: `scenario \"name\" { topic \"t\" { } workload { rate = 1000/s  \
             duration = 1m } }`",
        ));
    }
    let innermost = cx.nest.open.last()?;
    let open = cx.nest.suspect.as_ref().unwrap_or(innermost);
    let head = &cx.toks[open.head];
    let opener = cx.opener(open);
    let message = format!(
        "`{opener}` (line {}, column {}) is never closed",
        head.line, head.col
    );
    let close = match open.bracket {
        '[' => "]",
        '(' => ")",
        _ => "}",
    };
    let help = match (cx.nest.suspect_closer, open.bracket) {
        (Some(closer), '{') => {
            let c = &cx.toks[closer];
            let outer = cx
                .nest
                .open
                .iter()
                .rev()
                .find(|o| o.bracket == '{' && cx.toks[o.head].indent == c.indent)
                .map_or_else(
                    || "an outer block".to_string(),
                    |o| format!("`{}`", cx.opener(o)),
                );
            format!(
                "add `}}` where `{opener}` ends, before line {}: the `}}` on line {} is indented \
                 as the end of {outer}",
                c.line, c.line
            )
        }
        _ if cx.nest.open.len() == 1 => format!("add `{close}` at the end of the file"),
        _ => {
            let then: Vec<String> = cx.nest.open[..cx.nest.open.len() - 1]
                .iter()
                .rev()
                .map(|o| {
                    let closer = match o.bracket {
                        '[' => "]",
                        '(' => ")",
                        _ => "}",
                    };
                    format!("`{closer}` for `{}`", cx.opener(o))
                })
                .collect();
            format!("add `{close}` where it ends, then {}", then.join(", then "))
        }
    };
    Some(Explained::span(
        head.start,
        cx.toks[open.at].end,
        message,
        "opened here",
        help,
    ))
}

/// `[1, 2 }`, `json(size: 1KiB }`: a block closed while a list or a call inside it is open.
fn mismatched_bracket(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur().filter(|t| matches!(t.text, "}" | "]" | ")"))?;
    let open = cx.nest.open.last()?;
    let close = match open.bracket {
        '[' => "]",
        '(' => ")",
        _ => "}",
    };
    if cur.is(close) {
        return None;
    }
    let o = &cx.toks[open.at];
    Some(Explained::at(
        cur,
        format!(
            "the `{}` opened on line {}, column {} is not closed before this `{}`",
            o.text, o.line, o.col, cur.text
        ),
        format!("`{close}` expected before this"),
        format!(
            "close it with `{close}`: `{}{close}`",
            cx.source(open.at, cx.i - 1)
        ),
    ))
}

/// Something after the scenario's (or a fragment's) last `}`: usually one `}` too many earlier.
fn after_the_end(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur()?;
    if !cx.failure.expects_end || !cx.nest.open.is_empty() {
        return None;
    }
    // The `}` that closed the outermost block: one the layout says is not the scenario's own
    // (not first on its line under a block that spans lines, or indented differently from the
    // block's header) is one too many.
    let closer = (0..cx.i).rev().find(|&j| cx.toks[j].is("}"));
    if let Some(c) = closer.filter(|_| !cur.is("}")) {
        let ct = &cx.toks[c];
        let misplaced = lex::nesting(&cx.toks, c).open.last().is_some_and(|o| {
            let h = &cx.toks[o.head];
            if ct.first_on_line {
                ct.indent != h.indent
            } else {
                h.line != ct.line
            }
        });
        if misplaced {
            return Some(Explained::at(
                ct,
                format!("this `}}` on line {} ends the scenario early", ct.line),
                "closes the scenario",
                format!(
                    "remove it: the block before it is closed already, so it closes the scenario, \
                     and `{}` (line {}) is left outside",
                    cur.text, cur.line
                ),
            ));
        }
    }
    if cur.is("}") {
        return Some(Explained::at(
            cur,
            "this `}` closes nothing",
            "one `}` too many",
            "remove it: every block is closed before it",
        ));
    }
    Some(Explained::at(
        cur,
        format!("`{}` is after the end of the scenario", cur.text),
        "outside the scenario",
        "a file holds one scenario: move this inside its `{ ... }`, before the last `}`",
    ))
}

/// Every flag of a command line and the text after it up to the next flag on its line.
fn flags<'a>(cx: &Cx<'a>) -> Vec<(&'a str, Option<&'a str>)> {
    let mut out = Vec::new();
    for (j, t) in cx.toks.iter().enumerate() {
        if t.kind != TokKind::Flag {
            continue;
        }
        let last = (j + 1..cx.toks.len())
            .take_while(|&k| cx.toks[k].line == t.line && cx.toks[k].kind != TokKind::Flag)
            .last();
        out.push((t.text, last.map(|k| cx.source(j + 1, k))));
    }
    out
}

/// The file does not start with `scenario "name" {`: say what it looks like instead.
fn not_a_scenario(cx: &Cx) -> Option<Explained> {
    let first = cx.toks.first()?;
    let in_header = first.is("scenario") && cx.i <= 2 && cx.nest.open.is_empty();
    if !cx.failure.expects_scenario && !in_header {
        return None;
    }
    let skeleton = "a scenario file is `scenario \"name\" { topic \"t\" { } workload { rate = 1000/s  duration = 1m } }`";
    if first.is("scenario") {
        let next = cx.toks.get(1);
        let brace = (1..cx.toks.len())
            .take_while(|&k| cx.toks[k].line == first.line)
            .find(|&k| cx.toks[k].is("{"));
        let name = match brace {
            Some(b) if b > 1 => cx.source(1, b - 1),
            _ => next.map_or("", |t| t.text),
        };
        let name = name.trim_matches(['\'', '`', '"']);
        let name = if name.is_empty() || name == "{" {
            "name"
        } else {
            name
        };
        return Some(Explained::at(
            next.unwrap_or(first),
            "a scenario's name is a string",
            "expected `\"name\"`",
            format!("write `scenario \"{name}\" {{`"),
        ));
    }
    if let Some(c) =
        crate::diagnostic::closest(first.text, ["scenario"]).filter(|_| first.is_word())
    {
        return Some(Explained::at(
            first,
            format!("a scenario file starts with `{c}`"),
            "not `scenario`",
            format!("did you mean `{c}`? (`scenario \"name\" {{ ... }}`)"),
        ));
    }
    let second = cx.toks.get(1);
    let (message, help) = if first.is("{") || first.is("[") {
        (
            "this file looks like JSON, not a scenario".to_string(),
            skeleton.to_string(),
        )
    } else if matches!(
        first.text,
        "export" | "import" | "const" | "let" | "var" | "function"
    ) {
        (
            "this file looks like a k6 script (JavaScript), not a scenario".to_string(),
            format!(
                "{skeleton}; k6's `vus` are `producers`, its `duration: '30s'` is `duration = 30s`"
            ),
        )
    } else if first.kind == TokKind::Flag {
        let help = match foreign::scenario(&flags(cx)) {
            Some(s) => format!("write it as a scenario: `{s}`"),
            None => skeleton.to_string(),
        };
        ("command-line flags are not a scenario".to_string(), help)
    } else if second.is_some_and(|t| t.is(":") || t.is("-")) || first.is("-") {
        (
            "this file looks like YAML, not a scenario".to_string(),
            format!(
                "{skeleton}; an OpenMessaging Benchmark workload converts with `kafkabench import \
                 omb FILE.yaml`"
            ),
        )
    } else if second.is_some_and(|t| t.is("=")) {
        (
            format!("`{}` is outside any scenario", first.text),
            format!("settings go inside a scenario's sections: {skeleton}"),
        )
    } else if let Some(k) = (1..cx.toks.len()).find(|&k| {
        cx.toks[k].is("scenario")
            && cx.toks[k].first_on_line
            && cx
                .toks
                .get(k + 1)
                .is_some_and(|t| t.kind == TokKind::Str { closed: true })
    }) {
        (
            format!("`{}` stands before the scenario", first.text),
            format!(
                "the scenario starts on line {}: start a comment line with `#` (or `//`)",
                cx.toks[k].line
            ),
        )
    } else {
        (
            format!(
                "unexpected `{}`: a scenario file starts with `scenario`",
                first.text
            ),
            skeleton.to_string(),
        )
    };
    Some(Explained::at(
        first,
        message,
        "expected `scenario \"name\" {`",
        help,
    ))
}
