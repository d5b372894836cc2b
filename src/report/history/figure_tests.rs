//! A series' figures as the table and the gate read them: a paced run's throughput judged
//! against its plan, significant changes under the minimum effect held back and counted, the
//! figures searched as one family, and the `--json` document's segments.

use super::tests::{env, loaded, options, run};
use super::*;
use crate::random::Rng;

/// 40 paced results (`plan` records/s planned), ack p50 2 ms; the throughput `achieved(i)`
/// of the plan at result i, with 0.1 % noise.
fn paced(plan: f64, achieved: impl Fn(usize) -> f64) -> Vec<Loaded> {
    let mut rng = Rng::new(12);
    (0..40)
        .map(|i| {
            let tput = plan * achieved(i) * (1.0 + 0.001 * (rng.next_f64() - 0.5));
            let mut r = run("rate=1k/s", tput, 2.0 * (1.0 + 0.1 * rng.next_f64()));
            r.target_rate = Some(plan);
            loaded(i, "paced", vec![r], env(2, "c", 0.2))
        })
        .collect()
}

fn throughput(h: &History) -> &Figure {
    (h.series[0].figures.iter())
        .find(|f| f.name == "throughput")
        .expect("the throughput figure")
}

#[test]
fn a_paced_runs_throughput_is_its_share_of_the_plan_and_a_small_shortfall_is_held_back() {
    // 99.7 % of the plan, then 99.4 %: significant, and no reason to act.
    let h = analyse(
        &paced(1000.0, |i| if i < 25 { 0.997 } else { 0.994 }),
        &options(&[]),
        vec![],
    );
    let f = throughput(&h);
    assert_eq!(f.against_plan.as_deref().map(<[f64]>::len), Some(40));
    assert_eq!(f.shown_name(), "throughput ÷ plan");
    assert!(f.values.iter().flatten().all(|v| (0.99..1.0).contains(v)));
    assert!(f.change_points.is_empty(), "{:?}", f.change_points);
    assert_eq!(f.held_back.len(), 1, "{:?}", f.held_back);
    assert_eq!(f.held_back[0].index, 25);
    let mut out = Vec::new();
    text::write(&h, false, &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains(
            "note: 1 significant change under 5% not shown (throughput ÷ plan -0.3% at #26); \
             --min-effect 0 shows it"
        ),
        "{out}"
    );
    // With every significant change shown, it is a row of the table in per cent of the plan.
    let every = Options {
        min_effect: 0.0,
        ..options(&[])
    };
    let h = analyse(
        &paced(1000.0, |i| if i < 25 { 0.997 } else { 0.994 }),
        &every,
        vec![],
    );
    let mut out = Vec::new();
    text::write(&h, false, &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    let row = out
        .lines()
        .find(|l| l.contains("throughput ÷ plan"))
        .unwrap_or("");
    assert!(
        row.contains("99.7%") && row.contains("99.4%") && row.contains("-0.3%"),
        "{out}"
    );
}

#[test]
fn a_paced_run_that_falls_behind_its_plan_is_a_change_and_bounds_read_it_in_both_units() {
    // The cluster keeps up for 30 results, then delivers 80 % of the plan.
    let files = paced(2000.0, |i| if i < 30 { 1.0 } else { 0.8 });
    let h = analyse(&files, &options(&["throughput:-10%"]), vec![]);
    let c = &throughput(&h).change_points[0];
    assert_eq!((c.index, c.verdict), (30, "worse"));
    assert!(
        (c.before - 1.0).abs() < 0.001 && (c.after - 0.8).abs() < 0.001,
        "{c:?}"
    );
    assert_eq!(h.breaches.len(), 1);
    // A bound in records per second is checked against the planned rates: 2000/s → 1600/s.
    let h = analyse(&files, &options(&["throughput:-300/s"]), vec![]);
    let b = &h.breaches[0];
    assert!(
        (b.before - 2000.0).abs() < 2.0 && (b.after - 1600.0).abs() < 2.0,
        "{b:?}"
    );
    assert!(analyse(&files, &options(&["throughput:-500/s"]), vec![])
        .breaches
        .is_empty());
}

#[test]
fn an_unpaced_runs_throughput_is_a_figure_of_its_own() {
    let mut files = paced(1000.0, |_| 1.0);
    for l in &mut files {
        l.file.runs[0].target_rate = None;
    }
    let h = analyse(&files, &options(&[]), vec![]);
    let f = throughput(&h);
    assert!(f.against_plan.is_none());
    assert_eq!(f.shown_name(), "throughput");
    assert!(f.values[0][0] > 900.0);
}

#[test]
fn the_figures_of_a_series_are_one_family_and_the_json_says_how_each_was_held() {
    // A drop in ack p50 only: found at its Holm level among the series' figures.
    let mut rng = Rng::new(2);
    let files: Vec<Loaded> = (0..40)
        .map(|i| {
            let level = if i >= 20 { 1.0 } else { 2.0 };
            let r = run("r", 1000.0 * (1.0 + 0.01 * rng.next_f64()), level);
            loaded(i, "s", vec![r], env(2, "c", 0.1))
        })
        .collect();
    let h = analyse(&files, &options(&[]), vec![]);
    let s = &h.series[0];
    let figures: Vec<&str> = s.figures.iter().map(|f| f.name.as_str()).collect();
    // ack.p999 and failed are 0 throughout (no file here keeps them): no candidate to test.
    assert_eq!(
        figures,
        ["throughput", "ack.p50", "ack.p99", "ack.p999", "failed"]
    );
    let p50 = &s.figures[1];
    let c = &p50.change_points[0];
    // Three figures can change (failed and lost are 0 throughout): the strongest at α/3.
    assert!(c.level <= crate::measure::changepoint::ALPHA / 2.0, "{c:?}");
    assert!(c.permutations >= 999 && c.p_value <= c.level);
    assert_eq!(p50.segments.len(), 2);
    assert_eq!((p50.segments[0].from, p50.segments[0].to), (0, 20));
    let mut buf = Vec::new();
    h.write_json(&mut buf).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    assert_eq!(v["history_version"], 2);
    assert_eq!(v["min_effect"], 0.05);
    let p50 = &v["series"][0]["figures"][1];
    assert_eq!(p50["summary"], "geometric mean");
    assert_eq!(p50["scale"], "log");
    assert_eq!(p50["segments"][1]["from"], 20);
    assert!(p50["change_points"][0]["p_tail"].as_f64().unwrap() < 0.001);
}
