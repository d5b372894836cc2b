//! The words of a verdict from its numbers, and the result file's form read back.

use super::*;

fn passed(unit: Unit, measured: f64, bound: Bound) -> Verdict {
    Verdict {
        assertion: "x".into(),
        runs: vec![RunRef {
            index: 1,
            label: "linger=5ms".into(),
        }],
        unit,
        pass: true,
        measured: Some(measured),
        bound: Some(bound),
        shortfall: None,
        recorded: None,
        interval: None,
        broker: None,
    }
}

#[test]
fn a_pass_shows_its_headroom_across_units() {
    let v = passed(Unit::Duration, 0.015, Bound::Compare(CmpOp::Lt, 30.0));
    assert_eq!(margin(&v), "99.9 % below the bound");
    let v = passed(
        Unit::Size,
        2.5 * 1024.0 * 1024.0,
        Bound::Compare(CmpOp::Gt, 2.0 * 1024.0 * 1024.0),
    );
    assert_eq!(margin(&v), "25.0 % above the bound");
    assert_eq!(
        (measured(&v), bound(&v)),
        ("2.5MiB".into(), "> 2MiB".into())
    );
}

#[test]
fn a_pass_in_a_range_shows_the_distance_to_its_nearer_edge() {
    let v = passed(Unit::Rate, 1990.0, Bound::Within(1960.0, 2040.0));
    assert_eq!(margin(&v), "38 % of the range from its nearer edge");
    assert_eq!(bound(&v), "in 1960/s..2040/s");
}

#[test]
fn an_equality_or_a_zero_bound_has_no_margin() {
    assert_eq!(
        margin(&passed(Unit::Number, 0.0, Bound::Compare(CmpOp::Eq, 0.0))),
        ""
    );
    assert_eq!(
        margin(&passed(Unit::Number, -1.0, Bound::Compare(CmpOp::Lt, 0.0))),
        ""
    );
}

#[test]
fn a_failure_says_by_how_much_and_its_margin_is_that_detail() {
    let mut v = passed(Unit::Duration, 0.040, Bound::Compare(CmpOp::Lt, 0.030));
    v.pass = false;
    v.shortfall = Some(Shortfall::OutOfBound);
    let d = "measured 40ms against < 30ms (+33.3%)";
    assert_eq!(detail(&v).as_deref(), Some(d));
    assert_eq!(margin(&v), d);
}

#[test]
fn a_figure_not_measured_names_its_run() {
    let mut v = passed(Unit::Size, 0.0, Bound::Compare(CmpOp::Gt, 1.0));
    v.pass = false;
    v.measured = None;
    v.bound = None;
    v.shortfall = Some(Shortfall::NotMeasured { run: 1 });
    assert_eq!(
        detail(&v).as_deref(),
        Some("not measured in run `linger=5ms`")
    );
    assert_eq!((measured(&v), bound(&v)), ("-".into(), "-".into()));
}

#[test]
fn the_result_files_form_reads_back_to_the_same_verdict() {
    let mut v = passed(Unit::Duration, 0.040, Bound::Within(0.001, 0.030));
    v.pass = false;
    v.shortfall = Some(Shortfall::OutOfBound);
    let json = serde_json::to_string(&VerdictRecord::of(&v)).unwrap();
    let back: VerdictRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back.verdict(|_| None), v);
    assert_eq!(back.measured, "40ms");
}

#[test]
fn an_older_files_verdict_is_shown_as_it_was_recorded() {
    let old = r#"{"assertion": "ack.p99 < 40ms", "runs": ["linger=9ms"], "pass": false,
                  "measured": "61ms", "bound": "< 40ms", "detail": "61ms over"}"#;
    let r: VerdictRecord = serde_json::from_str(old).unwrap();
    let v = r.verdict(|l| (l == "linger=9ms").then_some(3));
    assert_eq!(v.runs[0].index, 3);
    assert_eq!((measured(&v), bound(&v)), ("61ms".into(), "< 40ms".into()));
    assert_eq!(detail(&v).as_deref(), Some("61ms over"));
    assert_eq!(margin(&v), "61ms over");
}

#[test]
fn a_confident_verdict_says_its_interval_and_how_many_trials_it_needs() {
    let mut v = passed(Unit::Rate, 1.2e6, Bound::Compare(CmpOp::Gt, 1e6));
    v.interval = Some(crate::assert::Interval {
        lo: 0.9e6,
        hi: 1.3e6,
        level: 0.95,
        coverage: 0.969,
        trials: 6,
    });
    v.pass = false;
    v.shortfall = Some(Shortfall::OutOfBound);
    assert_eq!(
        detail(&v).unwrap(),
        "95% interval 900000/s..1300000/s over 6 trials against > 1000000/s"
    );
    assert!(measured(&v).starts_with("1200000/s (95% interval"));
    let back = VerdictRecord::of(&v).verdict(|_| None);
    assert_eq!(back.interval, v.interval);
    v.interval = None;
    v.shortfall = Some(Shortfall::TooFewTrials {
        run: 1,
        trials: 5,
        coverage: 0.9375,
        auto: None,
    });
    assert_eq!(
        detail(&v).unwrap(),
        "run `linger=5ms`: 5 trials give an interval of at most 93.8% confidence; `repeat = 6` reaches it"
    );
    v.shortfall = Some(Shortfall::TooFewTrials {
        run: 1,
        trials: 1,
        coverage: 0.0,
        auto: None,
    });
    assert!(detail(&v).unwrap().contains("one trial"));
    // An auto-repeated run that reached its `max`: the looks' level, and a larger `max`.
    v.shortfall = Some(Shortfall::TooFewTrials {
        run: 1,
        trials: 8,
        coverage: 0.9922,
        auto: Some(0.999),
    });
    assert_eq!(
        detail(&v).unwrap(),
        "run `linger=5ms`: `repeat = auto` stopped at its `max` of 8 trials, whose interval reaches at most 99.2% confidence where its looks need 99.9%; raise `max` (at least 11)"
    );
}

#[test]
fn a_passing_comparison_between_runs_shows_both_sides_and_one_run_only_its_own() {
    let one = passed(Unit::Number, 7.18, Bound::Compare(CmpOp::Gt, 6.0));
    let mut two = passed(Unit::Number, 7.18, Bound::Compare(CmpOp::Gt, 3.78));
    two.assertion = "y".into();
    two.runs.push(RunRef {
        index: 2,
        label: "avro codec=zstd".into(),
    });
    let mut out = Vec::new();
    crate::report::verdicts_text(&[one, two], &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("[linger=5ms]; measured 7.18)"), "{text}");
    assert!(
        text.contains("[linger=5ms vs avro codec=zstd]; measured 7.18 > 3.78)"),
        "{text}"
    );
}
