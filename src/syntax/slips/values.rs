//! The rules about one setting or assertion: how its name, its `=` and its value were written.
//! Each names the slip and writes the right form from the file's own words.

use super::lex::{tokens, Tok, TokKind};
use super::{foreign, shown, Cx, Explained};

/// The value written from token `j` to the end of its line (before a `}`, `;` or `,` that ends
/// it), as it should be written: a quoted number or word without its quotes, other quoted text
/// in double quotes.
pub(super) fn value_from(cx: &Cx, j: usize) -> Option<String> {
    let first = cx.toks.get(j)?;
    let mut last = j;
    let mut depth = i32::from(matches!(first.text, "(" | "["));
    while let Some(t) = cx.toks.get(last + 1) {
        let closes = matches!(t.text, ")" | "]");
        // The next setting on the same line: `rate == 5/s  duration = 1m`.
        let next_key = t.is_word()
            && cx
                .toks
                .get(last + 2)
                .is_some_and(|n| n.is("=") || n.is(":"));
        let ends = closes || next_key || matches!(t.text, "}" | ";" | ",");
        if t.line != first.line || (depth == 0 && ends) {
            break;
        }
        depth += i32::from(matches!(t.text, "(" | "[")) - i32::from(closes);
        last += 1;
    }
    let on_a_new_line = j > 0 && cx.toks[j - 1].line != first.line;
    if matches!(first.text, "}" | ";" | ",") || on_a_new_line {
        return None;
    }
    Some(normal_value(cx.source(j, last)))
}

/// `'30s'` → `30s`, `'zstd'` → `zstd`, `'a b'` → `"a b"`; anything else as written.
pub(super) fn normal_value(v: &str) -> String {
    let quoted = v.len() >= 2
        && (v.starts_with('\'') && v.ends_with('\'')
            || v.starts_with('`') && v.ends_with('`')
            || v.starts_with('"') && v.ends_with('"'));
    if !quoted {
        return v.to_string();
    }
    let inner = &v[1..v.len() - 1];
    let toks = tokens(inner);
    match toks.as_slice() {
        [t] if t.kind == TokKind::Number && t.end == inner.len() => inner.to_string(),
        [t] if t.is_word() && t.end == inner.len() && !v.starts_with('"') => inner.to_string(),
        _ => format!("\"{}\"", inner.replace('"', "\\\"")),
    }
}

/// The key of a setting as written, unquoted.
fn key_text<'a>(t: &Tok<'a>) -> &'a str {
    t.text
        .trim_matches(['"', '\'', '`'])
        .trim_start_matches('-')
}

/// `key = value` as help writes it, or the foreign name's equivalent.
fn setting_help(key: &str, value: Option<&str>) -> String {
    if let Some(h) = foreign::help(key, value) {
        return h;
    }
    match value {
        Some(v) => format!("write `{key} = {}`", shown(key, v)),
        None => format!("write `{key} = ...`"),
    }
}

/// A command-line flag in a block: `--throughput 1000`.
pub(super) fn flag(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur().filter(|t| t.kind == TokKind::Flag)?;
    let value = cx
        .toks
        .get(cx.i + 1)
        .filter(|t| t.line == cur.line && t.kind != TokKind::Flag && !t.is("}"))
        .map(|t| normal_value(t.text));
    let help = foreign::help(cur.text, value.as_deref()).unwrap_or_else(|| {
        "settings are `key = value` inside a section (grammar/REFERENCE.md lists them)".into()
    });
    Some(Explained::at(
        cur,
        format!("`{}` is a command-line flag, not a setting", cur.text),
        "a flag",
        help,
    ))
}

/// YAML's and JSON's `key: value`, and `name:` opening a block as YAML does.
pub(super) fn colon_for_equals(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur().filter(|t| t.is(":"))?;
    let key = cx
        .back(1)
        .filter(|t| t.is_word() || matches!(t.kind, TokKind::Str { .. } | TokKind::Quoted))?;
    // After `=` it is inside a value (`localhost:9092`), not after a key.
    if cx.in_brackets() || !entry_start(cx, cx.i - 1) {
        return None;
    }
    let name = key_text(key);
    let next = cx.toks.get(cx.i + 1);
    if next.map_or(true, |n| n.line != cur.line || n.is("{")) {
        return Some(Explained::at(
            cur,
            format!("`{name}:` opens nothing: a block is written `{name} {{ ... }}`"),
            "write `{` instead of `:`",
            format!(
                "write `{name} {{`, and `}}` after its settings (indentation does not nest blocks \
                 here)"
            ),
        ));
    }
    let value = value_from(cx, cx.i + 1);
    Some(Explained::at(
        cur,
        "a setting is written `key = value`, not `key: value`",
        "write `=` instead of `:`",
        setting_help(name, value.as_deref()),
    ))
}

/// `acks = all;`, or a `;` comment.
pub(super) fn semicolon(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur().filter(|t| t.is(";"))?;
    if cur.first_on_line {
        return Some(Explained::at(
            cur,
            "`;` does not start a comment",
            "not a comment",
            "comments start with `#` or `//` and run to the end of the line",
        ));
    }
    Some(Explained::at(
        cur,
        "a setting does not end with `;`",
        "remove this `;`",
        "remove the `;`: a new line or a space separates settings",
    ))
}

/// Settings separated by commas as in JSON, or a list written without its brackets.
pub(super) fn comma(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur().filter(|t| t.is(","))?;
    if cx.in_brackets() {
        return None;
    }
    // `linger = 0ms, 5ms`: what follows is another value, not another setting.
    let next = cx.toks.get(cx.i + 1);
    let another_setting = cx
        .toks
        .get(cx.i + 2)
        .is_some_and(|t| t.is("=") || t.is("{") || t.is(":"));
    if let (Some((key, eq)), Some(_), false) = (cx.setting_of(cx.i), next, another_setting) {
        let line = cur.line;
        let last = (eq + 1..cx.toks.len())
            .take_while(|&j| cx.toks[j].line == line && !cx.toks[j].is("}"))
            .last()?;
        let key = cx.toks[key].text;
        return Some(Explained::span(
            cx.toks[eq + 1].start,
            cx.toks[last].end,
            "several values are a list, written in brackets",
            "a list without brackets",
            format!(
                "write `{key} = [{}]` (in `matrix {{ }}`: each value is a run)",
                shown(key, cx.source(eq + 1, last))
            ),
        ));
    }
    Some(Explained::at(
        cur,
        "settings are not separated by `,`",
        "remove this `,`",
        "remove it: a new line or a space separates settings (a `,` separates the items of a \
         list or the arguments of a call)",
    ))
}

/// `rate == 5/s`, `rate := 5/s` in a block of settings.
pub(super) fn doubled_equals(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur().filter(|t| matches!(t.text, "==" | ":=" | "=>"))?;
    if matches!(cx.block(), Some("expect" | "slo")) {
        return None;
    }
    let key = cx.back(1).filter(|t| t.is_word())?;
    let value = value_from(cx, cx.i + 1);
    Some(Explained::at(
        cur,
        format!("a setting takes one `=`, not `{}`", cur.text),
        "write `=`",
        setting_help(key.text, value.as_deref()),
    ))
}

/// `/* ... */`, `-- ...`: other languages' comments.
pub(super) fn block_comment(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur()?;
    let dashes = cur.is("-") && cx.toks.get(cx.i + 1).is_some_and(|t| t.is("-") && t.glued);
    if !(cur.is("/*") || cur.is("*/") || dashes) {
        return None;
    }
    Some(Explained::at(
        cur,
        if dashes {
            "`--` does not start a comment"
        } else {
            "`/* */` is not a comment here"
        },
        "not a comment",
        if dashes {
            "comments start with `#` or `//` and run to the end of the line: write `# ...`"
        } else {
            "comments start with `#` or `//` and run to the end of the line: start each line of \
             it with `#`"
        },
    ))
}

/// `"linger.ms" = 5`, `"producer": {`: a quoted name.
pub(super) fn quoted_key(cx: &Cx) -> Option<Explained> {
    let cur = cx
        .cur()
        .filter(|t| matches!(t.kind, TokKind::Str { closed: true } | TokKind::Quoted))?;
    if cx.in_brackets() || !entry_start(cx, cx.i) {
        return None;
    }
    let next = cx.toks.get(cx.i + 1)?;
    let name = key_text(cur);
    let after = cx.toks.get(cx.i + 2);
    if next.is("{") || (next.is(":") && after.is_some_and(|t| t.is("{") || t.line != next.line)) {
        return Some(Explained::at(
            cur,
            "a section's name is not quoted",
            "a quoted name",
            format!("write `{name} {{`"),
        ));
    }
    if !(next.is("=") || next.is(":")) {
        return None;
    }
    Some(Explained::at(
        cur,
        "a setting's name is not quoted",
        "a quoted name",
        setting_help(name, value_from(cx, cx.i + 2).as_deref()),
    ))
}

/// Whether token `j` stands where a setting or a section may start.
fn entry_start(cx: &Cx, j: usize) -> bool {
    let Some(prev) = j.checked_sub(1).map(|p| &cx.toks[p]) else {
        return true;
    };
    prev.is("{") || prev.is("}") || prev.line != cx.toks[j].line || prev.is(",") || prev.is(";")
}

/// `'30s'`, `` `zstd` ``: quotes the language does not have.
pub(super) fn other_quotes(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur().filter(|t| t.kind == TokKind::Quoted)?;
    let key = cx.setting_of(cx.i).map_or("", |(k, _)| cx.toks[k].text);
    let fixed = shown(key, &normal_value(cur.text));
    let quote = if cur.text.starts_with('`') {
        "backquotes"
    } else {
        "single quotes"
    };
    let help = if fixed.starts_with('"') {
        format!("strings take double quotes: write `{fixed}`")
    } else {
        format!("write `{fixed}` without quotes (or a string in double quotes, `\"{fixed}\"`)")
    };
    Some(Explained::at(
        cur,
        format!("{quote} do not make a string"),
        "not a value",
        help,
    ))
}

/// `workload = { ... }`: a block written as a value, as in JavaScript or HCL.
pub(super) fn section_with_equals(cx: &Cx) -> Option<Explained> {
    // pest stops at the `{`, or inside it when it took it for a variable's.
    let brace = if cx.cur().is_some_and(|t| t.is("{")) {
        cx.i
    } else {
        cx.i.checked_sub(1)?
    };
    let cur = cx.toks.get(brace).filter(|t| t.is("{"))?;
    let eq = cx
        .toks
        .get(brace.checked_sub(1)?)
        .filter(|t| t.is("=") || t.is(":"))?;
    let name = cx.toks.get(brace.checked_sub(2)?).filter(|t| t.is_word())?;
    Some(Explained::span(
        eq.start,
        cur.end,
        format!(
            "a block is written `{} {{`, without `{}`",
            name.text, eq.text
        ),
        format!("remove `{}`", eq.text),
        format!(
            "write `{} {{ ... }}` with `key = value` settings inside (one per line, or spaces \
             between them)",
            name.text
        ),
    ))
}

/// `rate = {r}/s`, `linger.ms = {l}ms`: a unit glued to a variable.
pub(super) fn unit_after_variable(cx: &Cx) -> Option<Explained> {
    let var = cx.back(1).filter(|t| t.kind == TokKind::Var)?;
    let cur = cx.cur().filter(|t| t.glued)?;
    let end = cx.run_end(cx.i) - 1;
    let glued = cx.source(cx.i, end);
    let name = &var.text[1..var.text.len() - 1];
    let key = cx
        .setting_of(cx.i - 1)
        .map_or("rate", |(k, _)| cx.toks[k].text);
    let unit = glued.starts_with('/') || cur.is_word();
    if !unit {
        return Some(Explained::span(
            var.start,
            cx.toks[end].end,
            "text built from a variable is a string",
            "not one value",
            format!(
                "write `\"{}\"`: a string may hold `{{{name}}}`",
                cx.source(cx.i - 1, end)
            ),
        ));
    }
    let values = match matrix_values(cx, name) {
        Some(items) => format!(
            "`{name} = [{}]`",
            items
                .iter()
                .map(|v| {
                    if v.bytes()
                        .all(|b| b.is_ascii_digit() || b == b'_' || b == b'.')
                    {
                        format!("{v}{glued}")
                    } else {
                        v.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!("e.g. `{name} = [50k{glued}, 70k{glued}]`"),
    };
    Some(Explained::span(
        var.start,
        cx.toks[end].end,
        format!("a unit cannot follow a variable: `{{{name}}}` is a whole value"),
        format!("`{glued}` after `{{{name}}}`"),
        format!("write the unit in the values, {values}, and `{key} = {{{name}}}` here"),
    ))
}

/// The values of `name = [ ... ]` as written (a matrix variable), if the file has them.
pub(super) fn matrix_values(cx: &Cx, name: &str) -> Option<Vec<String>> {
    let at = (0..cx.toks.len().saturating_sub(2))
        .find(|&j| cx.toks[j].is(name) && cx.toks[j + 1].is("=") && cx.toks[j + 2].is("["))?;
    let mut items = Vec::new();
    let (mut from, mut depth) = (at + 3, 0i32);
    for j in at + 3..cx.toks.len() {
        let t = &cx.toks[j];
        match t.text {
            "(" | "[" => depth += 1,
            ")" => depth -= 1,
            "]" if depth > 0 => depth -= 1,
            "," | "]" if depth == 0 => {
                if j > from {
                    items.push(cx.source(from, j - 1).to_string());
                }
                if t.is("]") {
                    return Some(items);
                }
                from = j + 1;
            }
            _ => {}
        }
    }
    None
}

/// `topic "t" partitions = 3`: a section's settings without their braces; `description "x"`:
/// a string setting without its `=`.
pub(super) fn section_without_braces(cx: &Cx) -> Option<Explained> {
    if matches!(cx.block(), Some("faults" | "expect" | "slo")) {
        return None;
    }
    let j = [cx.i, cx.i.checked_sub(2)?].into_iter().find(|&j| {
        let (Some(w), Some(s)) = (cx.toks.get(j), cx.toks.get(j + 1)) else {
            return false;
        };
        w.is_word()
            && !w.is("include")
            && s.kind == TokKind::Str { closed: true }
            && s.line == w.line
            && entry_start(cx, j)
            && cx
                .toks
                .get(j + 2)
                .map_or(true, |t| !t.is("{") && !t.is("="))
    })?;
    let (word, label) = (&cx.toks[j], &cx.toks[j + 1]);
    if !word.is("topic") {
        return Some(Explained::span(
            word.start,
            label.end,
            format!("`=` is missing between `{}` and its value", word.text),
            "`=` goes between these",
            format!("write `{} = {}`", word.text, shown(word.text, label.text)),
        ));
    }
    Some(Explained::span(
        word.start,
        label.end,
        format!("`{} {}` opens no block", word.text, label.text),
        "`{` expected after this",
        format!(
            "write `{} {} {{ ... }}` with its settings inside the braces",
            word.text, label.text
        ),
    ))
}

/// `json(size = 1KiB)`: an argument named with `=`.
pub(super) fn argument_with_equals(cx: &Cx) -> Option<Explained> {
    if cx.nest.open.last().map_or(true, |o| o.bracket != '(') {
        return None;
    }
    let at = [cx.i, cx.i + 1].into_iter().find(|&j| {
        cx.toks.get(j).is_some_and(|t| t.is("=")) && j > 0 && cx.toks[j - 1].is_word()
    })?;
    let name = cx.toks[at - 1].text;
    let value = value_from(cx, at + 1).unwrap_or_else(|| "...".into());
    Some(Explained::at(
        &cx.toks[at],
        "a function's arguments are named with `:`",
        "write `:`",
        format!("write `{name}: {value}`"),
    ))
}

/// In `faults { }`: an action without `at` and its time first, or a `:` after the time.
pub(super) fn fault_slips(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur()?;
    if cur.is(":") && cx.back(1).is_some_and(|t| t.kind == TokKind::Number) {
        return Some(Explained::at(
            cur,
            "no `:` after an action's time",
            "remove this `:`",
            "write the action after its time: `at 15s kill broker 1`",
        ));
    }
    if cx.back(1).is_some_and(|t| t.is("at")) && !matches!(cur.kind, TokKind::Number | TokKind::Var)
    {
        return Some(Explained::at(
            cur,
            "`at` takes the time the action happens",
            "a time goes before this",
            format!("write `at 15s {}`", line_from(cx, cx.i)),
        ));
    }
    // `kill broker 1 at 10s`: the time after the action.
    let starts_line = cx.back(1).map_or(true, |t| t.line != cur.line || t.is("{"));
    if cur.is_word() && !cur.is("at") && starts_line {
        let line: Vec<usize> = (cx.i..cx.toks.len())
            .take_while(|&j| cx.toks[j].line == cur.line && !cx.toks[j].is("}"))
            .collect();
        let at = line.iter().position(|&j| cx.toks[j].is("at"));
        let help = match at {
            Some(k) if k + 1 < line.len() => {
                let time = cx.toks[line[k + 1]].text;
                let action = cx.source(cx.i, line[k] - 1);
                let rest = line
                    .get(k + 2)
                    .map_or(String::new(), |&j| format!(" {}", line_from(cx, j)));
                format!("write `at {time} {action}{rest}`")
            }
            _ => format!("write `at 15s {}`", line_from(cx, cx.i)),
        };
        return Some(Explained::at(
            cur,
            "an action starts with `at` and its time",
            "`at` expected",
            help,
        ));
    }
    None
}

/// The source from token `j` to the end of its line (before a `}`).
fn line_from<'a>(cx: &Cx<'a>, j: usize) -> &'a str {
    let line = cx.toks[j].line;
    let last = (j..cx.toks.len())
        .take_while(|&k| cx.toks[k].line == line && !cx.toks[k].is("}"))
        .last()
        .unwrap_or(j);
    cx.source(j, last)
}

/// `env("A" "b")`, `[0ms 5ms]`: items of a call or a list without the `,` between them.
pub(super) fn missing_comma(cx: &Cx) -> Option<Explained> {
    let open = cx.nest.open.last().filter(|o| o.bracket != '{')?;
    let cur = cx.cur()?;
    let before = cx.back(1)?;
    let value_start = matches!(
        cur.kind,
        TokKind::Number | TokKind::Str { closed: true } | TokKind::Var | TokKind::Word
    ) || cur.is("[");
    let value_end = matches!(
        before.kind,
        TokKind::Number | TokKind::Str { closed: true } | TokKind::Var | TokKind::Word
    ) || before.is(")")
        || before.is("]");
    if !value_start || !value_end || cur.glued || cx.i - 1 == open.at {
        return None;
    }
    let close = if open.bracket == '[' { "]" } else { ")" };
    let what = if open.bracket == '[' {
        "the items of a list are separated by `,`"
    } else {
        "a function's arguments are separated by `,`"
    };
    // From the call's name (`env(`), or the list's `[`.
    let head = match open.at.checked_sub(1).map(|k| &cx.toks[k]) {
        Some(name) if open.bracket == '(' && name.is_word() && cx.toks[open.at].glued => {
            open.at - 1
        }
        _ => open.at,
    };
    let fixed = format!(
        "{}, {}",
        cx.source(head, cx.i - 1),
        value_from(cx, cx.i).unwrap_or_default()
    );
    let fixed = if fixed.ends_with(close) {
        fixed
    } else {
        format!("{fixed}{close}")
    };
    Some(Explained::at(
        cur,
        what,
        "a `,` goes before this",
        format!("write `{fixed}`"),
    ))
}
