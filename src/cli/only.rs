//! `--only var=value`: the subset of a file's runs a suite runs, chosen by the selectors
//! assertions use (`codec=zstd`, `step=baseline`).
//!
//! Selectors on one variable are alternatives (`--only codec=lz4 --only codec=zstd`); on
//! different variables all must hold. A file without the variable has no such run: all its runs
//! are left out. Values match as written in the file (`5ms`, not `0.005s`).

use crate::diagnostic::suggest;
use crate::model::Scenario;

/// One `--only` value, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pub var: String,
    pub value: String,
}

/// clap's parser for `--only`: `var=value`, both non-empty.
pub(super) fn parse(s: &str) -> Result<Selector, String> {
    match s.split_once('=') {
        Some((var, value)) if !var.trim().is_empty() && !value.trim().is_empty() => Ok(Selector {
            var: var.trim().to_string(),
            value: value.trim().to_string(),
        }),
        _ => Err(format!(
            "`{s}` is not `var=value`: name a matrix variable (or `step`) and one of its \
             values, e.g. `--only codec=zstd` or `--only step=baseline`"
        )),
    }
}

/// Whether run `cell` of `s` is selected (every run when there are no selectors).
pub(super) fn selects(only: &[Selector], s: &Scenario, cell: usize) -> bool {
    let c = &s.cells[cell];
    only.iter().map(|x| x.var.as_str()).all(|var| {
        c.coord(var)
            .is_some_and(|coord| only.iter().any(|x| x.var == var && x.value == coord.text))
    })
}

/// One message per selector that matches no run of any file, with what exists (did you
/// mean). `scenarios` are the files that loaded.
pub(super) fn problems(only: &[Selector], scenarios: &[&Scenario]) -> Vec<String> {
    let mut out = Vec::new();
    for x in only {
        let dims: Vec<_> = scenarios
            .iter()
            .flat_map(|s| s.dims.iter())
            .filter(|d| d.name == x.var)
            .collect();
        if dims.is_empty() {
            let mut names: Vec<&str> = Vec::new();
            for d in scenarios.iter().flat_map(|s| s.dims.iter()) {
                if !names.contains(&d.name.as_str()) {
                    names.push(&d.name);
                }
            }
            let help = if names.is_empty() {
                "no file has a matrix or steps; leave out --only".to_string()
            } else {
                suggest(&x.var, &names, "the variables are")
            };
            out.push(format!(
                "--only {}={}: no file has a variable `{}`\n  help: {help}",
                x.var, x.value, x.var
            ));
            continue;
        }
        let mut values: Vec<&str> = Vec::new();
        for v in dims.iter().flat_map(|d| d.values.iter()) {
            if !values.contains(&v.as_str()) {
                values.push(v);
            }
        }
        if !values.contains(&x.value.as_str()) {
            out.push(format!(
                "--only {}={}: no run has {} = {}\n  help: {}",
                x.var,
                x.value,
                x.var,
                x.value,
                suggest(&x.value, &values, &format!("the values of `{}` are", x.var))
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selector_is_var_equals_value() {
        assert_eq!(
            parse("codec=zstd"),
            Ok(Selector {
                var: "codec".into(),
                value: "zstd".into()
            })
        );
        for bad in ["codec", "=zstd", "codec=", ""] {
            assert!(
                parse(bad).unwrap_err().contains("--only codec=zstd"),
                "{bad}"
            );
        }
    }
}
