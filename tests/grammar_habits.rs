//! The grammar of the habits (tests/habits.rs checks their meaning): ramps as shape segments,
//! counts with suffixes, the new string escapes, and a dotted percentile in a metric name.

use kafkabench::source::FileId;
use kafkabench::syntax::{parse, Entry, Expr, ValueKind};

fn value(v: &str) -> ValueKind {
    let src = format!("scenario \"t\" {{\nx = {v}\n}}");
    match parse(FileId(0), &src)
        .unwrap_or_else(|d| panic!("{v}\n{d:?}"))
        .entries
        .remove(0)
    {
        Entry::Setting(s) => s.value.kind,
        e => panic!("not a setting: {e:?}"),
    }
}

/// A shape's segments as (from, to, duration) numbers: `to` only for a ramp.
fn segments(v: &str) -> Vec<(f64, Option<f64>, f64)> {
    match value(v) {
        ValueKind::Shape(segs) => segs
            .iter()
            .map(|s| {
                (
                    s.rate.amount.number.value,
                    s.ramp_to.as_ref().map(|(r, _)| r.amount.number.value),
                    s.duration.number.value,
                )
            })
            .collect(),
        other => panic!("{v}: {other:?}"),
    }
}

#[test]
fn a_ramp_alone_is_a_shape_of_one_segment() {
    assert_eq!(
        segments("ramp 1000/s to 20000/s over 30s"),
        [(1000.0, Some(20000.0), 30.0)]
    );
}

#[test]
fn ramps_and_constant_segments_mix_in_a_shape_in_any_order() {
    assert_eq!(
        segments("ramp 0/s to 5k/s over 1m, then 5k/s for 5m, then ramp 5k/s to 0/s over 1m"),
        [
            (0.0, Some(5.0), 1.0),
            (5.0, None, 5.0),
            (5.0, Some(0.0), 1.0)
        ]
    );
}

#[test]
fn a_ramp_keeps_the_spans_of_both_rates() {
    let src = "scenario \"t\" {\nx = ramp 1/s to 2/min over 3s\n}";
    let Entry::Setting(s) = parse(FileId(0), src).unwrap().entries.remove(0) else {
        panic!()
    };
    let ValueKind::Shape(segs) = s.value.kind else {
        panic!()
    };
    let (to, to_span) = segs[0].ramp_to.clone().unwrap();
    assert_eq!(&src[segs[0].rate_span.start..segs[0].rate_span.end], "1/s");
    assert_eq!(&src[to_span.start..to_span.end], "2/min");
    assert_eq!(to.per.node, "min");
}

#[test]
fn a_ramp_written_with_for_instead_of_over_is_a_syntax_error_naming_over() {
    let src = "scenario \"t\" {\nx = ramp 1/s to 2/s for 3s\n}";
    let d = parse(FileId(0), src).expect_err("refused");
    assert!(d.help.as_deref().unwrap_or("").contains("`over`"), "{d:?}");
}

#[test]
fn the_word_ramp_on_its_own_is_still_a_word() {
    assert_eq!(value("ramp"), ValueKind::Word("ramp".into()));
}

#[test]
fn counts_with_suffixes_are_quantities_with_their_suffix() {
    for (v, unit) in [("300k", "k"), ("1M", "M"), ("2G", "G"), ("10K", "K")] {
        match value(v) {
            ValueKind::Quantity(q) => assert_eq!(q.unit.map(|u| u.node).as_deref(), Some(unit)),
            other => panic!("{v}: {other:?}"),
        }
    }
    assert!(matches!(value("100k/s"), ValueKind::Rate(r) if r.amount.unit.is_some()));
}

#[test]
fn strings_decode_carriage_return_nul_and_hex_escapes() {
    assert_eq!(
        value(r#""a\rb\0c\x1ed\x7f""#),
        ValueKind::Str("a\rb\0c\u{1e}d\u{7f}".into())
    );
    // Above \x7f a byte is not one character: refused where it is written.
    let src = "scenario \"t\" {\nx = \"\\x80\"\n}";
    assert!(parse(FileId(0), src).is_err());
}

#[test]
fn a_metric_name_may_hold_a_dotted_percentile() {
    let src = "scenario \"t\" {\nexpect { ack.p99.9 < 5ms }\n}";
    let Entry::Expect(mut a, _) = parse(FileId(0), src).unwrap().entries.remove(0) else {
        panic!()
    };
    match a.remove(0).lhs {
        Expr::Metric(m) => assert_eq!(m.name.node, "ack.p99.9"),
        other => panic!("{other:?}"),
    }
}
