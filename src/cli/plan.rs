//! `kafkabench plan`: the runs a scenario expands to, as text, JSON or YAML.

use std::io::Write;

use super::{load, print_diagnostics, PlanArgs, PlanFormat};
use crate::exit::Outcome;
use crate::plan::{plan, PlanOptions};

pub fn command(a: &PlanArgs) -> Outcome {
    let (sources, result) = load(&a.file);
    let scenario = match result {
        Ok(s) => s,
        Err(d) => {
            print_diagnostics(&d, &sources);
            return Outcome::Invalid;
        }
    };
    let opts = PlanOptions {
        bootstrap: a.scaling.bootstrap.clone(),
        scale: a.scaling.scale,
        ..PlanOptions::default()
    };
    let p = plan(&scenario, &opts);
    let mut out = std::io::stdout().lock();
    let res = match a.format {
        PlanFormat::Text => crate::report::plan_text(&p, &mut out),
        PlanFormat::Json => serde_json::to_writer_pretty(&mut out, &p)
            .map_err(std::io::Error::other)
            .and_then(|_| writeln!(out)),
        PlanFormat::Yaml => serde_yaml::to_writer(&mut out, &p).map_err(std::io::Error::other),
    };
    match res {
        Ok(()) => Outcome::Ok,
        Err(_) => Outcome::RunFailed,
    }
}
