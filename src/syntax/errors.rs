//! Error translation: a pest error becomes a [`Diagnostic`] in words a user knows. [`describe`]
//! is an exhaustive match, so a new grammar rule without a readable name does not compile.

use super::Rule;
use crate::diagnostic::{Diagnostic, Kind};
use crate::source::{FileId, Span};

/// At most this many alternatives in "expected one of": more is noise, not help.
const MAX_EXPECTED: usize = 8;

/// How pest words hitting its call limit ([`super::CALL_LIMIT`]) or its native stack guard; the
/// user reads what that means for their file instead.
const PEST_LIMITS: &[&str] = &["call limit", "stack limit"];

/// What a user calls each rule.
fn describe(rule: Rule) -> &'static str {
    match rule {
        Rule::EOI => "the end of the file",
        Rule::WHITESPACE | Rule::COMMENT => "white space",
        Rule::file => "a scenario",
        Rule::fragment => "settings or sections",
        Rule::scenario => "`scenario \"name\" { ... }`",
        Rule::entry => "a setting or a section",
        Rule::include => "`include \"file.kbs\"`",
        Rule::section => "a section (`name { ... }`)",
        Rule::setting => "a setting (`key = value`)",
        Rule::key => "a setting name",
        Rule::ident => "a name",
        Rule::value => "a value",
        Rule::list => "a list (`[a, b]`)",
        Rule::call => "a function (`json(size: 1KiB)`)",
        Rule::arg => "an argument",
        Rule::shape => "a rate shape (`8000/min for 1m, then 200/s for 1m`)",
        Rule::segment => "a rate segment (`200/s for 1m`)",
        Rule::ramp => "a ramp (`ramp 1000/s to 20000/s over 30s`)",
        Rule::rate => "a rate (`5000/s`)",
        Rule::quantity => "a number (`100_000`, `5ms`, `1KiB`)",
        Rule::number => "a number",
        Rule::unit => "a unit",
        Rule::noun => "what a count counts (`messages`, `records`)",
        Rule::var => "a variable (`{name}`)",
        Rule::word => "a word",
        Rule::string | Rule::string_inner => "a string",
        Rule::escape => "an escape (`\\\"`, `\\n`, `\\t`, `\\r`, `\\0`, `\\x1e`, `\\{`)",
        Rule::expect => "`expect { ... }`",
        Rule::slo => "`slo { ... }`",
        Rule::assertion => "an assertion (`ack.p99 < 5ms`)",
        Rule::compare => "a comparison (`< 5ms`)",
        Rule::within => "a range (`in 400ms..600ms`)",
        Rule::cmp_op => "a comparison (`<`, `<=`, `>`, `>=`, `==`, `!=`)",
        Rule::arith | Rule::product => "an expression",
        Rule::add_op | Rule::mul_op => "an operator",
        Rule::operand => "a metric or a number",
        Rule::metric => "a metric (`ack.p99`)",
        Rule::metric_name => "a metric name",
        Rule::selector => "a cell selector (`[codec=zstd]`)",
        Rule::pick => "`variable=value`",
        Rule::condition => "`when ...`",
        Rule::confidence => "`with 95% confidence`",
        Rule::clause => "a condition (`codec == zstd`)",
        Rule::eq_op => "`==` or `!=`",
        Rule::atom => "a value",
        Rule::faults => "`faults { ... }`",
        Rule::fault => "a fault (`at 15s kill broker 1 for 10s`)",
        Rule::fault_time => "a time (`15s`) or a variable",
        Rule::fault_lasts => "`for` and how long (`for 10s`)",
        Rule::fault_before => "`before` and an offset (`before 500`)",
        Rule::fault_of => "`of` and what it belongs to (`records of partition 0`)",
        Rule::fault_object => "what the action acts on (`broker 1`, `consumer 1`, `records of partition 0`, `\"command\"`)",
        Rule::fault_which => "which one (`2`, `leader(partition 0)`, `{victim}`)",
        Rule::leader => "`leader(partition 0)`",
        Rule::leader_word => "`leader`",
        Rule::fault_verb => "an action (`kill`, `pause`, `restart`, `run`, `stop`, `delete`)",
        Rule::fault_word => "a name",
        Rule::fault_keyword => "`at`, `for`, `before` or `of`",
    }
}

pub(super) fn syntax_error(file: FileId, text: &str, e: pest::error::Error<Rule>) -> Diagnostic {
    let (start, end) = match e.location {
        pest::error::InputLocation::Pos(p) => (p, p),
        pest::error::InputLocation::Span((s, e)) => (s, e),
    };
    // Point at the offending character (or the end) rather than an empty gap.
    let end = if end == start {
        next_char_boundary(text, start)
    } else {
        end
    };
    let help = match expected(&e).as_slice() {
        [] => None,
        [one] => Some(format!("expected {one}")),
        many => Some(format!("expected one of: {}", many.join(", "))),
    };
    let message = match e.variant {
        pest::error::ErrorVariant::CustomError { message }
            if PEST_LIMITS.iter().any(|limit| message.contains(limit)) =>
        {
            "the file is too deeply nested or too complex to parse".to_string()
        }
        pest::error::ErrorVariant::CustomError { message } => message,
        pest::error::ErrorVariant::ParsingError { .. } => {
            format!("unexpected {}", found(text, start))
        }
    };
    Diagnostic::new(Kind::Syntax, Span::new(file, start, end), message)
        .label("here")
        .help_opt(help)
}

/// What stands at the error: a short token, white space, or the end of the file.
fn found(text: &str, at: usize) -> String {
    match text[at..].chars().next() {
        None => "the end of the file".to_string(),
        Some(c) if c.is_whitespace() => "white space".to_string(),
        Some(_) => {
            let token: String = text[at..]
                .chars()
                .take_while(|c| !c.is_whitespace())
                .take(20)
                .collect();
            format!("`{token}`")
        }
    }
}

/// The rules pest tried, in words, then the literal tokens it would have taken; no repeats.
fn expected(e: &pest::error::Error<Rule>) -> Vec<String> {
    let mut expected: Vec<String> = Vec::new();
    if let pest::error::ErrorVariant::ParsingError { positives, .. } = &e.variant {
        for rule in positives {
            let words = describe(*rule);
            if !matches!(*rule, Rule::WHITESPACE | Rule::COMMENT)
                && !expected.iter().any(|x| x == words)
            {
                expected.push(words.to_string());
            }
        }
    }
    if let Some(attempts) = e.parse_attempts() {
        for token in attempts.expected_tokens() {
            // ParsingToken is not exported; only literal (case-sensitive) tokens help a user.
            let literal = token.to_string();
            let layout = literal.trim().is_empty() || literal == "#" || literal == "//";
            if format!("{token:?}").starts_with("Sensitive") && !layout {
                let quoted = format!("`{token}`");
                if !expected.contains(&quoted) {
                    expected.push(quoted);
                }
            }
        }
    }
    expected.truncate(MAX_EXPECTED);
    expected
}

fn next_char_boundary(text: &str, at: usize) -> usize {
    text[at..].chars().next().map_or(at, |c| at + c.len_utf8())
}
