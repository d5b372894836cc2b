//! One test per grammar construct: the parser turns each into the AST node a reader expects.

use kafkabench::source::FileId;
use kafkabench::syntax::{parse, BinOp, ClauseOp, CmpOp, Entry, Expr, Test, ValueKind};

fn entries(body: &str) -> Vec<Entry> {
    let src = format!("scenario \"t\" {{\n{body}\n}}");
    parse(FileId(0), &src)
        .unwrap_or_else(|d| panic!("{body}\n{d:?}"))
        .entries
}

fn value(v: &str) -> ValueKind {
    match entries(&format!("x = {v}")).remove(0) {
        Entry::Setting(s) => s.value.kind,
        e => panic!("not a setting: {e:?}"),
    }
}

fn assertion(a: &str) -> kafkabench::syntax::Assertion {
    match entries(&format!("expect {{ {a} }}")).remove(0) {
        Entry::Expect(mut v, _) => v.remove(0),
        e => panic!("{e:?}"),
    }
}

#[test]
fn scenario_name_and_description() {
    let ast = parse(FileId(0), "scenario \"promo\" { description = \"burst\" }").unwrap();
    assert_eq!(ast.name.node, "promo");
    assert!(matches!(&ast.entries[0], Entry::Setting(s)
        if s.key.node == "description" && s.value.kind == ValueKind::Str("burst".into())));
}

#[test]
fn comments_both_styles_are_skipped() {
    let e = entries("# a comment\n// another\nx = 1 # trailing\ny = 2 // trailing");
    let keys: Vec<&str> = e
        .iter()
        .map(|x| match x {
            Entry::Setting(s) => s.key.node.as_str(),
            e => panic!("{e:?}"),
        })
        .collect();
    assert_eq!(keys, ["x", "y"]);
}

#[test]
fn numbers_with_separators_and_fractions() {
    match value("100_000") {
        ValueKind::Quantity(q) => assert_eq!(q.number.integer, Some(100_000)),
        v => panic!("{v:?}"),
    }
    match value("0.8") {
        ValueKind::Quantity(q) => {
            assert!((q.number.value - 0.8).abs() < 1e-12 && q.number.integer.is_none())
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn units_are_glued_to_numbers() {
    assert!(
        parse(FileId(0), "scenario \"t\" { x = 5 ms }").is_err(),
        "a unit after a space is not the number's unit"
    );
    for (text, unit) in [
        ("5ms", "ms"),
        ("1KiB", "KiB"),
        ("10x", "x"),
        ("50%", "%"),
        ("2h", "h"),
    ] {
        match value(text) {
            ValueKind::Quantity(q) => assert_eq!(q.unit.unwrap().node, unit),
            v => panic!("{text}: {v:?}"),
        }
    }
}

#[test]
fn a_count_may_say_what_it_counts_after_a_space() {
    for (text, unit) in [
        ("1000 messages", "messages"),
        ("1 record", "record"),
        ("1M records", "M"),
    ] {
        match value(text) {
            ValueKind::Quantity(q) => assert_eq!(q.unit.unwrap().node, unit, "{text}"),
            v => panic!("{text}: {v:?}"),
        }
    }
    // On its own line, `messages` is the next setting's key, as ever.
    for two in [
        "transaction = 1000\nmessages = 5",
        "transaction = 1000 messages = 5",
    ] {
        let e = entries(two);
        assert_eq!(e.len(), 2, "{two}: {e:?}");
    }
    assert!(
        parse(FileId(0), "scenario \"t\" { x = 5 messagesx }").is_err(),
        "only the words themselves"
    );
}

#[test]
fn rates_per_second_and_minute_and_bytes() {
    match value("8000/min") {
        ValueKind::Rate(r) => assert_eq!(
            (r.amount.number.integer, r.per.node.as_str()),
            (Some(8000), "min")
        ),
        v => panic!("{v:?}"),
    }
    match value("50MB/s") {
        ValueKind::Rate(r) => assert_eq!(
            (r.amount.unit.unwrap().node.as_str(), r.per.node.as_str()),
            ("MB", "s")
        ),
        v => panic!("{v:?}"),
    }
}

#[test]
fn rate_shapes() {
    match value("8000/min for 1m, then 20000/s for 30s, then 200/s for 1m") {
        ValueKind::Shape(segs) => {
            let read: Vec<(Option<u64>, &str, Option<u64>)> = segs
                .iter()
                .map(|s| {
                    (
                        s.rate.amount.number.integer,
                        s.rate.per.node.as_str(),
                        s.duration.number.integer,
                    )
                })
                .collect();
            assert_eq!(
                read,
                [
                    (Some(8000), "min", Some(1)),
                    (Some(20000), "s", Some(30)),
                    (Some(200), "s", Some(1))
                ]
            );
        }
        v => panic!("{v:?}"),
    }
    assert!(matches!(value("5000/s for 10s"), ValueKind::Shape(s) if s.len() == 1));
}

#[test]
fn strings_with_escapes_and_templates() {
    assert_eq!(value(r#""a\"b""#), ValueKind::Str("a\"b".into()));
    assert_eq!(value(r#""t-{codec}""#), ValueKind::Str("t-{codec}".into()));
}

#[test]
fn env_lists_calls_vars_words() {
    assert!(
        matches!(value(r#"env("KAFKA_BOOTSTRAP", "localhost:9092")"#), ValueKind::Call { name, args } if name.node == "env" && args.len() == 2)
    );
    assert!(matches!(value("[0ms, 5ms, 50ms]"), ValueKind::List(v) if v.len() == 3));
    assert!(
        matches!(value("json(size: 1KiB)"), ValueKind::Call { args, .. } if args[0].name.as_ref().unwrap().node == "size")
    );
    assert!(matches!(value("{linger}"), ValueKind::Var(v) if v.node == "linger"));
    assert_eq!(value("zstd"), ValueKind::Word("zstd".into()));
    assert_eq!(
        value("murmur2_random"),
        ValueKind::Word("murmur2_random".into())
    );
}

#[test]
fn sections_labels_dotted_keys_and_include() {
    let e =
        entries("topic \"orders\" { partitions = 3 retention.ms = 1h }\ninclude \"common.kbs\"");
    match &e[0] {
        Entry::Section(s) => {
            assert_eq!(s.name.node, "topic");
            assert_eq!(s.label.as_ref().unwrap().node, "orders");
            assert!(matches!(&s.entries[1], Entry::Setting(x) if x.key.node == "retention.ms"));
        }
        e => panic!("{e:?}"),
    }
    assert!(matches!(&e[1], Entry::Include(p) if p.node == "common.kbs"));
}

#[test]
fn steps_are_nested_sections() {
    let e = entries("ladder { defaults { } bigger { producer.batch.size = 64KiB } }");
    assert!(matches!(&e[0], Entry::Section(s) if s.entries.len() == 2));
}

#[test]
fn comparisons() {
    for (text, op) in [
        ("a < 1", CmpOp::Lt),
        ("a <= 1", CmpOp::Le),
        ("a > 1", CmpOp::Gt),
        ("a >= 1", CmpOp::Ge),
        ("a == 1", CmpOp::Eq),
        ("a != 1", CmpOp::Ne),
    ] {
        assert!(
            matches!(assertion(text).test, Test::Compare(o, _) if o == op),
            "{text}"
        );
    }
}

#[test]
fn ranges_conditions_and_selectors() {
    let a = assertion("e2e.p50 in 400ms..600ms when step == fetch_min and codec in [lz4, zstd]");
    assert!(matches!(a.test, Test::Within(..)));
    assert_eq!(a.when.len(), 2);
    assert_eq!(a.when[1].op, ClauseOp::In);
    let r = assertion("throughput[codec=zstd, linger=5ms] >= 0.8 * throughput[codec=none]");
    match r.lhs {
        Expr::Metric(m) => assert_eq!(m.select.len(), 2),
        e => panic!("{e:?}"),
    }
    assert!(matches!(r.test, Test::Compare(_, Expr::Binary(..))));
}

#[test]
fn arithmetic_is_left_associative_with_precedence_and_parentheses() {
    // `(a - b) / 2`: the parentheses make the subtraction the left operand of the division.
    let a = assertion("(e2e.p50 - ack.p50) / 2 < 1ms");
    match a.lhs {
        Expr::Binary(l, BinOp::Div, r, _) => {
            assert!(matches!(*l, Expr::Binary(_, BinOp::Sub, _, _)), "{l:?}");
            assert!(matches!(*r, Expr::Literal(_)), "{r:?}");
        }
        e => panic!("{e:?}"),
    }
    // `a - b * 2 - c`: `*` binds tighter, and `-` groups to the left: `(a - (b * 2)) - c`.
    let b = assertion("e2e.p50 - ack.p50 * 2 - ack.p99 < 1ms");
    match b.lhs {
        Expr::Binary(l, BinOp::Sub, r, _) => {
            assert!(matches!(*r, Expr::Metric(_)), "{r:?}");
            match *l {
                Expr::Binary(_, BinOp::Sub, inner, _) => {
                    assert!(
                        matches!(*inner, Expr::Binary(_, BinOp::Mul, _, _)),
                        "{inner:?}"
                    )
                }
                e => panic!("{e:?}"),
            }
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn several_assertions_without_separators() {
    match entries("expect { failed == 0 ack.p99 < 5s disk.ratio > 10x when codec == zstd }")
        .remove(0)
    {
        Entry::Expect(v, _) => assert_eq!(v.len(), 3),
        e => panic!("{e:?}"),
    }
}

#[test]
fn spans_point_at_the_source() {
    let src = "scenario \"t\" { linger = 5ms }";
    let ast = parse(FileId(0), src).unwrap();
    match &ast.entries[0] {
        Entry::Setting(s) => assert_eq!(&src[s.value.span.start..s.value.span.end], "5ms"),
        e => panic!("{e:?}"),
    }
}
