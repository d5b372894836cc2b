//! The rules about what follows a value: a unit written apart (`1 minute`), `for` after a
//! variable, a second word, a missing `=` or value, a section's name without quotes, and text
//! that needs quotes.

use super::lex::{Tok, TokKind};
use super::numbers::{bare_number, number_forms, number_text, period_word, unit_word};
use super::values::{matrix_values, normal_value};
use super::{shown, Cx, Explained};

/// Whether a token can end a value: what stands before a word that should not be there.
pub(super) fn ends_value(t: &Tok) -> bool {
    matches!(
        t.kind,
        TokKind::Number | TokKind::Var | TokKind::Str { closed: true } | TokKind::Word
    ) || t.is(")")
        || t.is("]")
}

/// The value after the `=` at `eq`, to the end of its line, with every segment of a rate
/// shape joined by `, then`.
fn joined_shape(cx: &Cx, eq: usize) -> String {
    let line = cx.toks[eq].line;
    let mut words: Vec<String> = Vec::new();
    for t in cx.toks[eq + 1..]
        .iter()
        .take_while(|t| t.line == line && !t.is("}"))
    {
        let after_comma = words.last().is_some_and(|w| w.ends_with(','));
        if t.is(",") || (t.is("then") && !after_comma) {
            if let Some(w) = words.last_mut() {
                w.push(',');
            }
            if t.is(",") {
                continue;
            }
        }
        if after_comma && !t.is("then") {
            words.push("then".into());
        }
        words.push(t.text.to_string());
    }
    words.join(" ")
}

/// `rate = 1000 /s`: a period written apart from its number.
pub(super) fn spaced_period(cx: &Cx) -> Option<Explained> {
    let slash = cx.cur().filter(|t| t.is("/") && !t.glued)?;
    let n = cx
        .back(1)
        .filter(|t| t.kind == TokKind::Number && t.line == slash.line)?;
    let period = cx.toks.get(cx.i + 1).filter(|t| t.glued && t.is_word())?;
    Some(Explained::span(
        n.start,
        period.end,
        "a rate is written without spaces",
        "spaces inside a rate",
        format!("write `{}/{}`", n.text, period.text),
    ))
}

/// `rate = {r} for 10s`, `rate = 1000 for 10s`, `100/s for 10s then ...`, `for` in a ramp.
pub(super) fn shape_words(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur()?;
    // `ramp 1/s to 2/s for 3s`: a ramp lasts `over` its duration.
    if cur.is("for") {
        if let Some(ramp) = (0..cx.i).rev().take(6).find(|&j| cx.toks[j].is("ramp")) {
            let d = cx.toks.get(cx.i + 1).map_or("30s", |t| t.text);
            return Some(Explained::at(
                cur,
                "a ramp lasts `over` a duration, not `for` one",
                "write `over`",
                format!("write `over`: `{} over {d}`", cx.source(ramp, cx.i - 1)),
            ));
        }
    }
    // `100/s for 10s, 200/s for 10s`: a `,` without `then`.
    if cx.back(1).is_some_and(|t| t.is(",")) && !cx.in_brackets() {
        let rate = cur.kind == TokKind::Number && cur.text.contains('/') || cur.is("ramp");
        if rate && cx.setting_of(cx.i).is_some() {
            let (key, eq) = cx.setting_of(cx.i).expect("checked above");
            return Some(Explained::at(
                cur,
                "the segments of a rate shape are joined by `, then`",
                "`then` goes before this segment",
                format!("write `{} = {}`", cx.toks[key].text, joined_shape(cx, eq)),
            ));
        }
    }
    let word = cx
        .back(1)
        .filter(|t| matches!(t.text, "for" | "then" | "over" | "to"))?;
    let before = cx
        .back(2)
        .filter(|t| t.line == word.line && ends_value(t))?;
    if matches!(cx.block(), Some("faults")) {
        return None;
    }
    let (key_at, eq) = cx.setting_of(cx.i - 2)?;
    let key = cx.toks[key_at].text;
    let length = Some(cur)
        .filter(|t| t.line == word.line && t.kind == TokKind::Number)
        .map_or("10s", |t| t.text);
    let end = if cur.line == word.line {
        cur.end
    } else {
        word.end
    };
    let explained = |message: String, label: &str, help: String| {
        Some(Explained::span(before.start, end, message, label, help))
    };
    match word.text {
        "for" if before.kind == TokKind::Var => {
            let name = &before.text[1..before.text.len() - 1];
            let shaped = match matrix_values(cx, name) {
                Some(items) => items
                    .iter()
                    .map(|v| match v.parse::<f64>() {
                        Ok(_) => format!("{v}/s for {length}"),
                        Err(_) => format!("{v} for {length}"),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                None => format!("50k/s for {length}, 70k/s for {length}"),
            };
            explained(
                format!(
                    "`for` cannot follow a variable: `{}` is a whole value",
                    before.text
                ),
                "a length after a variable",
                format!(
                    "keep `{key} = {}` and say how long with `duration = {length}` in \
                     `workload {{ }}`; or make each value a shape: `{name} = [{shaped}]`",
                    before.text
                ),
            )
        }
        "for" => match bare_number(before) {
            Some(n) => explained(
                "a rate segment is a rate and how long it lasts".into(),
                "a number, not a rate",
                format!("write `{key} = {}/s for {length}`", number_text(n)),
            ),
            None => explained(
                format!(
                    "`for` follows a rate such as `1000/s`, not `{}`",
                    before.text
                ),
                "not a rate",
                format!(
                    "keep `{key} = {}` and say how long with `duration = {length}` in \
                     `workload {{ }}`",
                    before.text
                ),
            ),
        },
        "then" => Some(Explained::at(
            word,
            "the segments of a rate shape are joined by `, then`",
            "a `,` goes before `then`",
            format!("write `{key} = {}`", joined_shape(cx, eq)),
        )),
        _ => Some(Explained::at(
            word,
            format!("`{}` belongs to a ramp", word.text),
            "not in a ramp",
            "a ramp is `ramp 1000/s to 20000/s over 30s`",
        )),
    }
}

/// `duration = 1 minute`, `rate = 1000 msg/s`, `rate = 1000 per second`, `a = 1 2`: a word
/// after a complete value, which the parser took for the next setting's name.
pub(super) fn word_after_value(cx: &Cx) -> Option<Explained> {
    let word = cx.back(1).filter(|t| t.is_word())?;
    let value = cx
        .back(2)
        .filter(|t| t.line == word.line && ends_value(t))?;
    let setting = cx.setting_of(cx.i - 2);
    let in_assertion = matches!(cx.block(), Some("expect" | "slo"));
    if setting.is_none() && !in_assertion {
        return None;
    }
    let key = setting.map_or("", |(k, _)| cx.toks[k].text);
    let cur = cx.cur();
    let per_period = word.is("per") && cur.is_some_and(|t| t.line == word.line && t.is_word());
    let slash = cur.filter(|t| t.is("/") && t.glued);
    let dangling = cur.map_or(true, |t| t.line != word.line || t.is("}"));
    if !(dangling || per_period || slash.is_some()) {
        return None;
    }
    let n = bare_number(value);
    let span_end = match (per_period, slash) {
        (true, _) | (_, Some(_)) => cx.toks[cx.run_end(cx.i) - 1].end,
        _ => word.end,
    };
    let explained = |message: String, label: &str, help: String| {
        Some(Explained::span(value.start, span_end, message, label, help))
    };
    if let (Some(n), true) = (n, per_period) {
        let period = cur.and_then(|t| period_word(t.text)).unwrap_or("s");
        return explained(
            "a rate is written `1000/s`".into(),
            "a rate in words",
            format!("write `{}/{period}`", number_text(n)),
        );
    }
    if let (Some(n), Some(_)) = (n, slash) {
        let period = cx
            .toks
            .get(cx.i + 1)
            .and_then(|t| period_word(t.text))
            .unwrap_or("s");
        return explained(
            "a rate is written `1000/s`: the period follows the number".into(),
            "a rate with a word inside",
            format!(
                "write `{}/{period}` (what is counted goes unsaid: records)",
                number_text(n)
            ),
        );
    }
    if let Some(n) = n {
        if matches!(
            word.text.to_ascii_lowercase().as_str(),
            "day" | "days" | "d"
        ) {
            return explained(
                "a unit is written against its number".into(),
                "a unit after a space",
                format!(
                    "write `{}h` (durations go up to `h`)",
                    number_text(n * 24.0)
                ),
            );
        }
        if let Some(unit) = unit_word(word.text) {
            return explained(
                "a unit is written against its number, without a space".into(),
                "a unit after a space",
                format!("write `{}{unit}`", value.text),
            );
        }
    }
    if in_assertion {
        return None;
    }
    let both = cx.source(cx.i - 2, cx.i - 1);
    explained(
        format!("`{}` is two values; a setting takes one", shown(key, both)),
        "two values",
        format!(
            "text with spaces is a string: `\"{}\"`; or give `{}` a line of its own with `=`",
            shown(key, both),
            word.text
        ),
    )
}

/// `linger.ms =` with nothing after it on its line.
pub(super) fn missing_value(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur();
    // `a =` then `b = 1` on the next line: `b` was read as a's value, and the error is its `=`.
    let (eq, key) = match (cx.back(1), cx.back(2), cx.back(3)) {
        (Some(e), Some(k), _)
            if e.is("=") && cur.map_or(true, |t| t.line != e.line || t.is("}")) =>
        {
            (e, k)
        }
        (Some(w), Some(e), Some(k))
            if cur.is_some_and(|t| t.is("=")) && e.is("=") && w.line != e.line =>
        {
            (e, k)
        }
        _ => return None,
    };
    if !key.is_word() {
        return None;
    }
    if let Some(after) = cur.filter(|t| t.line == eq.line) {
        return Some(Explained::at(
            after,
            format!("`{} =` has no value", key.text),
            "a value goes before this",
            format!(
                "write a value after `=` (`{} = ...`), or remove the setting",
                key.text
            ),
        ));
    }
    Some(Explained::span(
        key.start,
        eq.end,
        format!("`{} =` has no value", key.text),
        "no value on this line",
        format!(
            "write the value after `=` on the same line (`{} = ...`), or remove the setting",
            key.text
        ),
    ))
}

/// `topic orders.v1 {`, `producer my-producer {`: a section's name without quotes.
pub(super) fn unquoted_label(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur()?;
    let section = cx.back(1).filter(|t| t.is_word() && t.line == cur.line)?;
    if cur.is("{") || cur.is("=") || matches!(cur.kind, TokKind::Str { .. } | TokKind::Punct) {
        return None;
    }
    let brace = (cx.i + 1..cx.toks.len())
        .take_while(|&j| cx.toks[j].line == cur.line)
        .find(|&j| cx.toks[j].is("{"))?;
    let label = cx.source(cx.i, brace - 1);
    let label = normal_value(label.trim_matches(['\'', '`']));
    Some(Explained::span(
        cur.start,
        cx.toks[brace - 1].end,
        "a section's name is a string",
        "not quoted",
        format!(
            "write `{} \"{}\" {{`",
            section.text,
            label.trim_matches('"')
        ),
    ))
}

/// `partitions 3`: a name and a value with no `=` between them.
pub(super) fn missing_equals(cx: &Cx) -> Option<Explained> {
    let cur = cx.cur()?;
    let key = cx.back(1).filter(|t| t.is_word() && t.line == cur.line)?;
    let value_start = matches!(
        cur.kind,
        TokKind::Number | TokKind::Str { .. } | TokKind::Var | TokKind::Word | TokKind::Quoted
    ) || cur.is("[");
    let after_value_or_start = cx.back(2).map_or(true, |p| {
        p.line != key.line || p.is("{") || p.is("}") || ends_value(p)
    });
    if !value_start || !after_value_or_start || cx.in_brackets() {
        return None;
    }
    let value = normal_value(cx.source(cx.i, cx.run_end(cx.i) - 1));
    if key.is("include") {
        return Some(Explained::at(
            cur,
            "the file to include is a string",
            "not quoted",
            format!("write `include \"{}\"`", value.trim_matches('"')),
        ));
    }
    if matches!(cx.block(), Some("expect" | "slo")) {
        return None;
    }
    Some(Explained::at(
        cur,
        format!("`=` is missing between `{}` and its value", key.text),
        "`=` goes before this",
        format!("write `{} = {}`", key.text, shown(key.text, &value)),
    ))
}

/// `bootstrap = localhost:9092`, `file(data/orders.jsonl)`: text that needs quotes.
pub(super) fn unquoted_text(cx: &Cx) -> Option<Explained> {
    // The run of glued tokens the error is in, and where it starts.
    cx.cur()?;
    let opens = |t: &Tok| matches!(t.text, "=" | "(" | "[" | "," | ":");
    let mut first = cx.i;
    while first > 0 && cx.toks[first].glued && !opens(&cx.toks[first - 1]) {
        first -= 1;
    }
    let opener = cx.toks.get(first.checked_sub(1)?)?;
    if !opens(opener) || cx.failure.at <= cx.toks[first].start {
        return None;
    }
    let last = cx.run_end(first) - 1;
    let run = cx.source(first, last);
    let secret = cx
        .setting_of(first)
        .is_some_and(|(k, _)| crate::model::is_secret(cx.toks[k].text));
    if cx.toks[first].kind == TokKind::Number && !secret {
        if let Some((message, help)) = number_forms(run) {
            let label = "written in another notation";
            return Some(Explained::span(
                cx.toks[first].start,
                cx.toks[last].end,
                message,
                label,
                help,
            ));
        }
    }
    let key = cx.setting_of(first).map_or("", |(k, _)| cx.toks[k].text);
    let quoted = format!("\"{}\"", shown(key, run));
    let before = first.checked_sub(2).map(|k| &cx.toks[k]);
    let written = match (opener.text, before) {
        ("=", _) if !key.is_empty() => format!("{key} = {quoted}"),
        ("(", Some(call)) if call.is_word() => format!("{}({quoted})", call.text),
        (":", Some(arg)) if arg.is_word() => format!("{}: {quoted}", arg.text),
        _ => quoted,
    };
    Some(Explained::span(
        cx.toks[first].start,
        cx.toks[last].end,
        format!("`{}` is text: write it as a string", shown(key, run)),
        "not one value",
        format!("write `{written}`"),
    ))
}
