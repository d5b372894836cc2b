//! The comparison's words and colours, on synthetic files.

use super::bound::parse_bound;
use super::text::{GREEN, RED};
use super::*;
use crate::measure::{new_histogram, record};

fn file(ack_ms: u64, throughput: f64) -> ResultFile {
    let mut h = new_histogram();
    record(&mut h, ack_ms * 1_000_000);
    let run = RunResult {
        label: "run".into(),
        status: crate::measure::RunStatus::Complete,
        throughput_msgs: throughput,
        ack: LatencySummary::from_histogram(&h),
        ..RunResult::default()
    };
    let text = format!(
        r#"{{"schema_version": 2, "kafkabench_version": "0", "scenario": "s", "description": null,
        "run_id": "r", "scale": 1.0, "planned_runs": 1, "outcome": "ok", "exit_code": 0,
        "failure": null, "interrupted": false, "runs": [{}], "assertions": [], "notes": []}}"#,
        serde_json::to_string(&run).unwrap()
    );
    ResultFile::parse(&text, "f.json").unwrap()
}

fn written(c: &Comparison, f: &ResultFile, color: bool) -> String {
    let sides = Sides {
        baseline: ("a.json", f),
        current: ("b.json", f),
    };
    let mut out = Vec::new();
    write(c, &sides, color, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn colour_says_better_in_green_and_worse_in_red_whichever_way_is_better() {
    let (base, cur) = (file(10, 1000.0), file(5, 900.0));
    let c = compare(&base, &cur, &[]);
    let text = written(&c, &base, true);
    let line = |name: &str| text.lines().find(|l| l.contains(name)).unwrap().to_string();
    assert!(
        line("ack.p50").contains(GREEN),
        "lower latency is better: {text}"
    );
    assert!(
        line("throughput").contains(RED),
        "lower throughput is worse: {text}"
    );
    assert!(!written(&c, &base, false).contains('\x1b'));
}

#[test]
fn a_figure_named_only_by_a_bound_gets_its_own_row() {
    let f = file(10, 1000.0);
    let c = compare(&f, &f, &[parse_bound("ack.max:+1%").unwrap()]);
    assert!(c.runs[0].figures.iter().any(|g| g.name == "ack.max"));
    assert_eq!(c.checks, 1);
    assert!(!c.regressed());
}

/// A file whose one run has a trial per throughput in `t`.
fn trials(t: &[f64]) -> ResultFile {
    let mut f = file(10, 0.0);
    let runs: Vec<RunResult> = t
        .iter()
        .map(|&x| RunResult {
            label: "run".into(),
            status: crate::measure::RunStatus::Complete,
            throughput_msgs: x,
            ..RunResult::default()
        })
        .collect();
    let mut r = crate::measure::trials::combine(runs);
    r.label = "run".into();
    f.runs = vec![r];
    f
}

#[test]
fn with_trials_a_move_within_the_noise_does_not_fail_the_gate() {
    let base = trials(&[100.0, 104.0, 96.0, 101.0, 99.0, 103.0]);
    let cur = trials(&[97.0, 101.0, 94.0, 99.0, 103.0, 95.0]);
    let gate = [parse_bound("throughput:-1%").unwrap()];
    let c = compare(&base, &cur, &gate);
    assert!(!c.regressed(), "{:?}", c.breaches);
    assert_eq!(c.within_noise.len(), 1, "{:?}", c.within_noise);
    assert!(
        c.within_noise[0].contains("6 and 6 trials"),
        "{:?}",
        c.within_noise
    );
    let text = written(&c, &base, false);
    assert!(text.contains("no change within noise"), "{text}");
}

#[test]
fn with_trials_a_significant_fall_past_the_bound_fails_and_says_its_interval() {
    let base = trials(&[100.0, 104.0, 96.0, 101.0, 99.0, 103.0]);
    let cur = trials(&[80.0, 82.0, 79.0, 83.0, 78.0, 81.0]);
    let gate = [parse_bound("throughput:-5%").unwrap()];
    let c = compare(&base, &cur, &gate);
    assert!(c.regressed());
    let n = c.runs[0].figures[0].noise.unwrap();
    assert!(n.significant && n.ratio.unwrap() < -0.15, "{n:?}");
    let text = written(&c, &base, false);
    let line = text.lines().find(|l| l.contains("throughput")).unwrap();
    assert!(line.contains("worse (p = 0.002)"), "{text}");
    assert!(line.contains(".."), "the change's interval: {text}");
}

#[test]
fn one_trial_on_a_side_is_the_plain_gate_and_says_it_cannot_tell_noise() {
    let (base, cur) = (file(10, 100.0), file(10, 90.0));
    let gate = [parse_bound("throughput:-5%").unwrap()];
    let c = compare(&base, &cur, &gate);
    assert!(c.regressed());
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("cannot be told from noise")),
        "{:?}",
        c.notes
    );
}

#[test]
fn different_environments_are_named() {
    use crate::measure::environment::{Environment, Host};
    let (mut base, mut cur) = (file(10, 100.0), file(10, 100.0));
    let env = |cores| Environment {
        kafkabench: "0.1.0".into(),
        librdkafka: "2.12.1".into(),
        cluster: None,
        host: Some(Host {
            cores,
            ..Host::default()
        }),
    };
    base.environment = Some(env(2));
    cur.environment = Some(env(16));
    let c = compare(&base, &cur, &[]);
    assert!(
        c.notes.iter().any(|n| n.contains("client cores: 2 → 16")),
        "{:?}",
        c.notes
    );
}

#[test]
fn runs_on_different_clients_are_named_and_an_older_file_ran_on_librdkafka() {
    use crate::model::{ClientKind, ClientRelease};
    let (base, mut cur) = (file(10, 100.0), file(10, 100.0));
    // The same client on both sides (an older file's producer is librdkafka's).
    cur.runs[0].producer_client = Some(ClientRelease {
        name: ClientKind::Librdkafka,
        version: "2.12.1".into(),
    });
    let same = compare(&base, &cur, &[]);
    assert!(
        !same.notes.iter().any(|n| n.contains("clients")),
        "{:?}",
        same.notes
    );
    cur.runs[0].producer_client = Some(ClientRelease {
        name: ClientKind::Java,
        version: "4.4.0".into(),
    });
    let c = compare(&base, &cur, &[]);
    assert!(
        c.notes.iter().any(|n| n
            .contains("run `run` was measured on different clients (producer librdkafka")
            && n.contains("producer java 4.4.0 now")),
        "{:?}",
        c.notes
    );
}
