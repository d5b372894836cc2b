//! The rules about assertions in `expect { }` and `slo { }`: a comparison written as a setting
//! (`=`), in words (`less than`), or reversed (`=<`); assertions joined with `and`; a condition
//! started with `if`; a range written as a list.

use super::lex::{Tok, TokKind};
use super::values::value_from;
use super::words::ends_value;
use super::{Cx, Explained};

/// The comparison a word (or two) stands for; `..` for a range.
fn comparison_word(w: &str) -> Option<&'static str> {
    Some(match w.to_ascii_lowercase().as_str() {
        "less" | "lower" | "below" | "under" | "smaller" | "lt" => "<",
        "greater" | "more" | "above" | "over" | "higher" | "exceeds" | "gt" => ">",
        "le" | "lte" | "max" | "most" => "<=",
        "ge" | "gte" | "min" | "least" => ">=",
        "is" | "equals" | "eq" => "==",
        "ne" | "neq" => "!=",
        "between" | "within" => "..",
        _ => return None,
    })
}

/// The first number or rate after token `j` on its line, as written.
fn next_values<'a>(cx: &Cx<'a>, j: usize) -> Vec<&'a str> {
    let line = cx.toks[j].line;
    cx.toks[j..]
        .iter()
        .take_while(|t| t.line == line && !t.is("}"))
        .filter(|t| t.kind == TokKind::Number)
        .map(|t| t.text.trim_start_matches('-'))
        .collect()
}

/// `when` earlier on the line of token `j`, within the same assertion.
fn after_when(cx: &Cx, j: usize) -> bool {
    let line = cx.toks[j].line;
    cx.toks[..j]
        .iter()
        .rev()
        .take_while(|t| t.line == line && !t.is("{"))
        .any(|t| t.is("when"))
}

fn metric_before<'c, 'a>(cx: &'c Cx<'a>) -> Option<&'c Tok<'a>> {
    let cur = cx.cur()?;
    cx.back(1).filter(|t| t.is_word() && t.line == cur.line)
}

pub(super) fn assertion_slips(cx: &Cx) -> Option<Explained> {
    if !matches!(cx.block(), Some("expect" | "slo")) || cx.in_brackets() {
        return None;
    }
    let cur = cx.cur()?;
    let next = cx.toks.get(cx.i + 1);
    // `=<`, `=>`: the two characters reversed.
    let reversed = match (cur.text, next) {
        ("=", Some(n)) if n.glued && (n.is("<") || n.is(">")) => Some(format!("{}=", n.text)),
        ("=>", _) => Some(">=".into()),
        _ => None,
    };
    if let Some(op) = reversed {
        return Some(Explained::at(
            cur,
            format!("this comparison is written `{op}`"),
            "reversed",
            format!("write `{op}`"),
        ));
    }
    if cur.is("=") {
        let lhs = cx.back(1)?.text;
        let rhs = value_from(cx, cx.i + 1).unwrap_or_else(|| "5ms".into());
        if after_when(cx, cx.i) {
            return Some(Explained::at(
                cur,
                "a condition compares with `==`; `=` sets a value",
                "write `==`",
                format!("write `when {lhs} == {rhs}`"),
            ));
        }
        return Some(Explained::at(
            cur,
            "an assertion compares; `=` sets a value",
            "a comparison goes here",
            format!("compare with `<`, `<=`, `>`, `>=`, `==` or `!=`: e.g. `{lhs} <= {rhs}`"),
        ));
    }
    if let Some(joiner) = [Some(cur), cx.back(1)]
        .into_iter()
        .flatten()
        .find(|t| matches!(t.text, "and" | "or" | "&&" | "||" | "," | ";"))
    {
        if !after_when(cx, cx.i) {
            return Some(Explained::at(
                joiner,
                format!("assertions are not joined with `{}`", joiner.text),
                "write the next assertion on its own",
                "write each assertion on its own line (every one must hold); `and` joins only \
                 the conditions after `when`",
            ));
        }
    }
    // `ack.p99 less than 5ms`, `ack.p99 between 1ms and 5ms`.
    if let (Some(op), Some(metric)) = (comparison_word(cur.text), metric_before(cx)) {
        let values = next_values(cx, cx.i);
        let written = match (op, values.as_slice()) {
            ("..", [lo, hi, ..]) => format!("{} in {lo}..{hi}", metric.text),
            ("..", _) => format!("{} in 1ms..5ms", metric.text),
            (op, [v, ..]) => format!("{} {op} {v}", metric.text),
            (op, []) => format!("{} {op} 5ms", metric.text),
        };
        return Some(Explained::at(
            cur,
            "a comparison is written with a sign, not in words",
            "not a comparison",
            format!("write `{written}`"),
        ));
    }
    // `... < 5ms if codec == zstd`: a condition started with another word.
    let starter = cx.back(1).filter(|t| {
        matches!(t.text, "if" | "where" | "for" | "while" | "only")
            && cx
                .back(2)
                .is_some_and(|p| p.line == t.line && ends_value(p))
    });
    if let Some(starter) = starter {
        let line = starter.line;
        let last = (cx.i..cx.toks.len())
            .take_while(|&j| cx.toks[j].line == line && !cx.toks[j].is("}"))
            .last()
            .unwrap_or(cx.i);
        return Some(Explained::at(
            starter,
            format!("a condition starts with `when`, not `{}`", starter.text),
            "write `when`",
            format!("write `when {}`", cx.source(cx.i, last)),
        ));
    }
    // `in [1ms, 5ms]`, `in 1ms-5ms`, `in 1ms to 5ms`: a range.
    let after_in = cx.back(1).is_some_and(|t| t.is("in")) && (cur.is("[") || cur.is("("))
        || cx.back(2).is_some_and(|t| t.is("in"))
            && (cur.is("to") || cur.kind == TokKind::Number && cur.text.starts_with('-'));
    if after_in {
        let from = if cx.back(1).is_some_and(|t| t.is("in")) {
            cx.i
        } else {
            cx.i - 1
        };
        let values = next_values(cx, from);
        let (lo, hi) = match values.as_slice() {
            [lo, hi, ..] => (*lo, *hi),
            _ => ("1ms", "5ms"),
        };
        return Some(Explained::at(
            cur,
            "a range is written `low..high`",
            "not a range",
            format!("write `in {lo}..{hi}`"),
        ));
    }
    // `ack.p99 5ms`: no comparison at all.
    let metric = cx.back(1).filter(|t| t.is_word() && t.line == cur.line)?;
    if cur.kind == TokKind::Number {
        return Some(Explained::at(
            cur,
            "an assertion compares a figure with a value",
            "a comparison goes before this",
            format!(
                "write e.g. `{} <= {}` (`<`, `<=`, `>`, `>=`, `==`, `!=`)",
                metric.text, cur.text
            ),
        ));
    }
    None
}
