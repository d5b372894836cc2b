//! Error translation: a pest error becomes a [`Diagnostic`] in words a user knows. [`describe`]
//! is an exhaustive match, so a new grammar rule without a readable name does not compile.

use super::{slips, Rule};
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
        Rule::item => "a list item",
        Rule::pair => "a value and its share (`100B: 70%`)",
        Rule::call => "a function (`json(size: 1KiB)`)",
        Rule::arg => "an argument",
        Rule::shape => "a rate shape (`8000/min for 1m, then 200/s for 1m`)",
        Rule::segment => "a rate segment (`200/s for 1m`)",
        Rule::ramp => "a ramp (`ramp 1000/s to 20000/s over 30s`)",
        Rule::rate => "a rate (`5000/s`)",
        Rule::quantity => "a number (`100_000`, `5ms`, `1KiB`)",
        Rule::tolerance => "a tolerance (`±5%`)",
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
        Rule::place => "`of broker 2` or `of every broker`",
        Rule::every => "`every`",
        Rule::place_noun => "`broker`",
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
    let positives: &[Rule] = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => positives,
        pest::error::ErrorVariant::CustomError { message } => {
            let message = if PEST_LIMITS.iter().any(|limit| message.contains(limit)) {
                "the file is too deeply nested or too complex to parse".to_string()
            } else {
                message.clone()
            };
            let end = if end == start {
                next_char_boundary(text, start)
            } else {
                end
            };
            return Diagnostic::new(Kind::Syntax, Span::new(file, start, end), message)
                .label("here");
        }
    };
    // pest's location is the furthest rule it tried; a literal (`=` after an atomic key) may
    // have been tried further on, and that is where the file stopped making sense.
    let furthest = e
        .parse_attempts()
        .map_or(start, |a| a.max_position.max(start))
        .min(text.len());
    let failure = slips::Failure {
        at: furthest,
        expects_end: positives.contains(&Rule::EOI),
        expects_scenario: positives
            .iter()
            .any(|r| matches!(r, Rule::scenario | Rule::file)),
    };
    if let Some(x) = slips::explain(text, &failure) {
        return Diagnostic::new(Kind::Syntax, Span::new(file, x.start, x.end), x.message)
            .label(x.label)
            .help(x.help);
    }
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
    let message = match found(text, start) {
        None => "the file ends too early".to_string(),
        Some(token) => format!("unexpected {token}"),
    };
    Diagnostic::new(Kind::Syntax, Span::new(file, start, end), message)
        .label("here")
        .help_opt(help)
}

/// What stands at the error: a short token or white space; None at the end of the file.
fn found(text: &str, at: usize) -> Option<String> {
    match text[at..].chars().next() {
        None => None,
        Some(c) if c.is_whitespace() => Some("white space".to_string()),
        Some(_) => {
            let token: String = text[at..]
                .chars()
                .take_while(|c| !c.is_whitespace())
                .take(20)
                .collect();
            Some(format!("`{token}`"))
        }
    }
}

/// The rules pest tried, in words, then the literal tokens it would have taken; no repeats.
fn expected(e: &pest::error::Error<Rule>) -> Vec<String> {
    let mut expected: Vec<String> = Vec::new();
    if let pest::error::ErrorVariant::ParsingError { positives, .. } = &e.variant {
        // After a number, pest would also take a unit or a count's noun: true, but rarely the
        // help someone needs when something else fits.
        let rest = positives
            .iter()
            .any(|r| !matches!(r, Rule::unit | Rule::noun));
        for rule in positives
            .iter()
            .filter(|r| !rest || !matches!(r, Rule::unit | Rule::noun))
        {
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
            // ParsingToken is not exported; only literal (case-sensitive) tokens help a user, and
            // only those that are words or punctuation of the language (never `_` of a name).
            if !format!("{token:?}").starts_with("Sensitive") {
                continue;
            }
            if let Some(shown) = literal(&token.to_string()) {
                let quoted = format!("`{shown}`");
                // `expect` beside `expect { ... }` says nothing more.
                let said = expected
                    .iter()
                    .any(|x| x.starts_with(&format!("`{shown} ")));
                if !expected.contains(&quoted) && !said {
                    expected.push(quoted);
                }
            }
        }
    }
    expected.truncate(MAX_EXPECTED);
    expected
}

/// The grammar's literals a user may be told to write. Parts of names, numbers and strings
/// (`_`, `.`, `-`, `%`, a quote, an escape letter) and layout are left out: "expected `_`" names
/// the inside of a rule, not something to type. The test below keeps this list exhaustive.
const SHOWN_LITERALS: &[&str] = &[
    "=",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ",",
    ":",
    "..",
    "<",
    "<=",
    ">",
    ">=",
    "==",
    "!=",
    "+",
    "*",
    "/",
    "scenario",
    "include",
    "expect",
    "slo",
    "faults",
    "for",
    "then",
    "ramp",
    "to",
    "over",
    "in",
    "with",
    "confidence",
    "when",
    "and",
    "at",
    "before",
    "of",
    "every",
    "leader",
    "partition",
];

/// Literals that are pieces of a rule, never told to a user.
#[cfg(test)]
const HIDDEN_LITERALS: &[&str] = &[
    " ", "\t", "\r", "\n", "#", "//", "_", ".", "-", "%", "\"", "\\", "n", "t", "r", "0", "x",
    "message", "messages", "record", "records",
    // A tolerance's sign (`±5%`, `+-5%`): part of a value, as `-` and `%` are.
    "±", "+-",
];

fn literal(token: &str) -> Option<&'static str> {
    SHOWN_LITERALS.iter().find(|l| **l == token).copied()
}

fn next_char_boundary(text: &str, at: usize) -> usize {
    text[at..].chars().next().map_or(at, |c| at + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every string literal of the grammar, decoded; comments (`//` to the end of a line) are
    /// skipped.
    fn grammar_literals() -> Vec<String> {
        let grammar = include_str!("../../grammar/kafkabench.pest");
        let mut out = Vec::new();
        let mut chars = grammar.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '/' if chars.peek() == Some(&'/') => {
                    for c in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                '"' => {
                    let mut lit = String::new();
                    while let Some(c) = chars.next() {
                        match c {
                            '"' => break,
                            '\\' => lit.push(match chars.next() {
                                Some('n') => '\n',
                                Some('t') => '\t',
                                Some('r') => '\r',
                                Some(other) => other,
                                None => break,
                            }),
                            c => lit.push(c),
                        }
                    }
                    out.push(lit);
                }
                _ => {}
            }
        }
        out
    }

    #[test]
    fn every_literal_of_the_grammar_is_either_shown_or_hidden() {
        let literals = grammar_literals();
        assert!(literals.iter().any(|l| l == "scenario"), "{literals:?}");
        for l in &literals {
            let shown = SHOWN_LITERALS.contains(&l.as_str());
            let hidden = HIDDEN_LITERALS.contains(&l.as_str());
            assert!(
                shown != hidden,
                "grammar literal {l:?}: put it in exactly one of SHOWN_LITERALS and HIDDEN_LITERALS"
            );
        }
    }
}
