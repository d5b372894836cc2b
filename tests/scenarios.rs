//! Every scenario under scenarios/ runs against the real broker at CI scale and its assertions
//! (the seed article's finding) must hold. KB_SCENARIO_SCALE sets the scale (default 0.1);
//! `kafkabench run FILE` without --scale is the full experiment.

mod common;

use common::{kafkabench, text};

#[test]
fn every_scenario_reproduces_its_finding_at_ci_scale() {
    common::require_broker();
    let scale = std::env::var("KB_SCENARIO_SCALE").unwrap_or_else(|_| "0.1".into());
    let mut files: Vec<_> = std::fs::read_dir(common::repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "kbs"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    for f in &files {
        let name = f.display().to_string();
        let started = std::time::Instant::now();
        let out = kafkabench(&["run", &name, "--scale", &scale, "--quiet"]);
        let stdout = text(&out.stdout);
        eprintln!(
            "{name}: exit {:?} in {:.1}s\n{stdout}",
            out.status.code(),
            started.elapsed().as_secs_f64()
        );
        if out.status.code() != Some(0) {
            failures.push(format!(
                "{name} exited {:?}\n{stdout}\n{}",
                out.status.code(),
                text(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
