//! Result files kept from earlier kafkabench versions read back the same: every `.json` under
//! tests/fixtures/results (written by `run --json`, their scenarios beside them) is shown by
//! `report` as its snapshot says, and its read side re-derives from the sums it keeps. A new
//! schema version must keep these passing: files already written stay readable.

use std::path::PathBuf;

use crate::common::{expect_exit, fixture, kafkabench};
use kafkabench::measure::RunResult;
use kafkabench::report::json::{ResultFile, SCHEMA_VERSION};

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
            let (Some(sums), Some(figures)) = (&r.recording.read, &r.consume) else {
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

/// A kept file written again by this kafkabench (the current schema, with each run's whole
/// recording) and read back: a reader derives every figure again from the recordings, and
/// they are the figures the older file was written with. A derived figure changed by hand in
/// the new file changes nothing: readers ignore them.
#[test]
fn a_kept_file_written_again_derives_the_same_figures_from_its_recordings() {
    let dir = tempfile::tempdir().expect("tempdir");
    for file in files() {
        let old = ResultFile::read(&file).expect("it reads back");
        let new = dir.path().join(file.file_name().unwrap());
        let mut text = Vec::new();
        old.write(&mut text).expect("written");
        let mut value: serde_json::Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(value["schema_version"], SCHEMA_VERSION);
        assert!(
            value["runs"][0]["recording"]["producer"]["sent"].is_u64(),
            "{}: the recording is written",
            file.display()
        );
        // Derived figures a reader must not trust.
        let run = &mut value["runs"][0];
        run["throughput_msgs"] = 1.0.into();
        run["sent"] = 1.into();
        run["ack"]["p99_ms"] = 12345.0.into();
        if run["consume"].is_object() {
            run["consume"]["lag_max"] = 999_999.into();
        }
        std::fs::write(&new, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
        let back = ResultFile::read(&new).expect("the new file reads back");
        for (a, b) in old.runs.iter().zip(&back.runs) {
            let (a, b) = (
                serde_json::to_value(a).unwrap(),
                serde_json::to_value(b).unwrap(),
            );
            let mut at = Vec::new();
            differences(&a, &b, "", &mut at);
            assert!(at.is_empty(), "{}: {}", file.display(), at.join("\n"));
        }
        let shown = |f: &std::path::Path| {
            expect_exit(&kafkabench(&["report", f.to_str().unwrap()]), 0).to_string()
        };
        assert_eq!(shown(&file), shown(&new), "{}", file.display());
    }
}

/// Where two values are not `same`: each path with both values.
fn differences(a: &serde_json::Value, b: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let null = Value::Null;
                let (v, w) = (x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null));
                differences(v, w, &format!("{path}.{k}"), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                differences(v, w, &format!("{path}[{i}]"), out);
            }
        }
        _ if !same(a, b) => out.push(format!("{path}: {a} ≠ {b}")),
        _ => {}
    }
}
