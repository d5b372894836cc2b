//! Parse and check never panic and never hang, whatever the input.

use std::time::{Duration, Instant};

use kafkabench::source::{FileId, Sources};
use proptest::prelude::*;

fn parse_and_check(text: &str) {
    let mut sources = Sources::default();
    let id = sources.add("fuzz.kbs".into(), text.to_string());
    if let Ok(ast) = kafkabench::syntax::parse(id, text) {
        let _ = kafkabench::check::check(&ast, &sources);
    }
}

const TOKENS: &[&str] = &[
    "scenario",
    "\"s\"",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "=",
    ",",
    "..",
    "topic",
    "producer",
    "consumer",
    "workload",
    "matrix",
    "steps",
    "ladder",
    "expect",
    "when",
    "in",
    "and",
    "for",
    "then",
    "linger.ms",
    "{linger}",
    "5ms",
    "1KiB",
    "8000/min",
    "10x",
    "50%",
    "json(size: 1KiB)",
    "ack.p99",
    "<",
    ">=",
    "==",
    "*",
    "-",
    "messages",
    "rate",
    "100_000",
    "codec",
    "zstd",
    "[0ms, 5ms]",
    "#c\n",
    "\n",
    " ",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,400}") {
        parse_and_check(&s);
    }

    #[test]
    fn token_soup_never_panics(toks in proptest::collection::vec(0..TOKENS.len(), 0..120)) {
        let text: String = toks.iter().map(|i| TOKENS[*i]).collect::<Vec<_>>().join(" ");
        parse_and_check(&text);
        let wrapped = format!("scenario \"s\" {{ {text} }}");
        parse_and_check(&wrapped);
    }
}

#[test]
fn deep_nesting_is_refused_quickly() {
    let t = Instant::now();
    let text = format!("scenario \"s\" {{ {} }}", "a { ".repeat(50_000));
    let refused = kafkabench::syntax::parse(FileId(0), &text).expect_err("too deep to parse");
    assert_eq!(
        refused.message,
        "the file is too deeply nested or too complex to parse"
    );
    let expr = format!(
        "scenario \"s\" {{ expect {{ {}1{} < 1 }} }}",
        "(".repeat(20_000),
        ")".repeat(20_000)
    );
    let refused = kafkabench::syntax::parse(FileId(0), &expr).expect_err("too deep to parse");
    assert_eq!(
        refused.message,
        "the file is too deeply nested or too complex to parse"
    );
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );
}
