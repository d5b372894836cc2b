//! `kafkabench plan`: the runs a scenario expands to, as text, JSON or YAML.

use std::io::Write;

use super::{finish_output, load, print_diagnostics, PlanArgs, PlanFormat};
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
    // Serialised whole first: the writer's error then keeps its kind (a closed pipe is quiet).
    let res = match a.format {
        PlanFormat::Text => crate::report::plan_text(&p, &mut out),
        PlanFormat::Json => serde_json::to_string_pretty(&p)
            .map_err(std::io::Error::other)
            .and_then(|s| writeln!(out, "{s}")),
        PlanFormat::Yaml => serde_yaml::to_string(&p)
            .map_err(std::io::Error::other)
            .and_then(|s| out.write_all(s.as_bytes())),
    };
    finish_output(Outcome::Ok, res.and_then(|()| out.flush()))
}
