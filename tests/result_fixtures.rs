//! Result files kept from earlier kafkabench versions read back the same: every `.json` under
//! tests/fixtures/results (written by `run --json`, their scenarios beside them) is shown by
//! `report` as its snapshot says, and its read side re-derives from the sums it keeps. A new
//! schema version must keep these passing: files already written stay readable.

use std::path::PathBuf;

use crate::common::{expect_exit, fixture, kafkabench};
use kafkabench::measure::RunResult;
use kafkabench::report::json::ResultFile;

fn files() -> Vec<PathBuf> {
    let dir = PathBuf::from(fixture("results"));
    let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/results")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    all.sort();
    assert!(all.len() >= 3, "the committed result files: {all:?}");
    all
}

#[test]
fn every_kept_result_file_reports_the_same_figures() {
    for file in files() {
        let name = file.file_stem().unwrap().to_string_lossy().to_string();
        let out = kafkabench(&["report", file.to_str().unwrap()]);
        let shown = expect_exit(&out, 0);
        insta::assert_snapshot!(name, shown);
    }
}

/// Every run of a file, with its trials and probes.
fn runs(f: &ResultFile) -> Vec<&RunResult> {
    let mut all = Vec::new();
    for r in &f.runs {
        all.push(r);
        if let Some(t) = &r.trials {
            all.extend(t.results.iter());
        }
        if let Some(c) = &r.capacity {
            all.extend(c.probes.iter().map(|p| &*p.result));
        }
    }
    all
}

#[test]
fn a_kept_files_read_side_re_derives_from_its_sums() {
    let mut checked = 0;
    for file in files() {
        let f = ResultFile::read(&file).expect("it reads back");
        for r in runs(&f) {
            let (Some(sums), Some(figures)) = (&r.raw_read, &r.consume) else {
                continue;
            };
            // A repeated run's own figures are its trials' medians; each trial's re-derive.
            if r.trials.is_some() {
                continue;
            }
            let again = sums.figures(r.series.as_ref());
            let (a, b) = (
                serde_json::to_value(&again).unwrap(),
                serde_json::to_value(figures).unwrap(),
            );
            assert!(
                same(&a, &b),
                "{} run {}: {a} ≠ {b}",
                file.display(),
                r.label
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "runs with a read side: {checked}");
}

/// Equal, but for a float's last digit (serde_json's parsing is not exact to the bit).
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= y.abs() * 1e-12
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ => a == b,
    }
}
