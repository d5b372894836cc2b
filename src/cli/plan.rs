//! `kafkabench plan`: the runs a scenario expands to, as text, JSON or YAML.

use std::io::Write;

use super::{finish_output, load, print_diagnostics, PlanArgs, PlanFormat};
use crate::exit::Outcome;
use crate::plan::{plan, run_id_overflows, PlanOptions, RUN_ID_PLACEHOLDER};

pub(super) fn command(a: &PlanArgs) -> Outcome {
    let (sources, result) = load(&a.file);
    let scenario = match result {
        Ok(s) => s,
        Err(d) => {
            print_diagnostics(&d, &sources);
            return Outcome::Invalid;
        }
    };
    if let Some(id) = &a.run_id {
        let too_long = run_id_overflows(&scenario, id);
        if !too_long.is_empty() {
            for m in too_long {
                eprintln!("error: {m}");
            }
            return Outcome::Invalid;
        }
    }
    // A placeholder, not a fresh id: two plans of one file are then identical.
    let opts = PlanOptions {
        bootstrap: a.scaling.bootstrap.clone(),
        scale: a.scaling.scale,
        repeat: a.scaling.repeat,
        run_id: a
            .run_id
            .clone()
            .unwrap_or_else(|| RUN_ID_PLACEHOLDER.to_string()),
    };
    let p = plan(&scenario, &opts);
    let mut out = std::io::stdout().lock();
    // Serialised whole first: the writer's error then keeps its kind (a closed pipe is quiet).
    let res = match a.format {
        PlanFormat::Text if a.defaults => crate::report::plan_text_with_defaults(&p, &mut out),
        PlanFormat::Text => crate::report::plan_text(&p, &mut out),
        PlanFormat::Json => serde_json::to_string_pretty(&p)
            .map_err(std::io::Error::other)
            .and_then(|s| writeln!(out, "{s}")),
        // Enums as one-key maps (`zipf: {n, s}`), as in JSON: serde_yaml's default, YAML tags
        // (`!zipf`), is lost on most YAML readers.
        PlanFormat::Yaml => {
            let mut buf = Vec::new();
            serde_yaml::with::singleton_map_recursive::serialize(
                &p,
                &mut serde_yaml::Serializer::new(&mut buf),
            )
            .map(|()| buf)
            .map_err(std::io::Error::other)
            .and_then(|b| out.write_all(&b))
        }
    };
    finish_output(Outcome::Ok, res.and_then(|()| out.flush()))
}
