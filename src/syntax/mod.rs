//! Stage 1, parse: text → [`Ast`]. pest is confined to this module and its files: [`errors`]
//! turns pest errors into diagnostics, [`build`] turns pest pairs into the AST, [`include`]
//! reads files and splices included ones in, [`limits`] refuses what would exhaust the parser,
//! [`slips`] explains a syntax error by the slip that made it.

pub(crate) mod ast;
mod build;
mod errors;
pub mod fmt;
mod include;
pub(crate) mod limits;
mod slips;

use std::num::NonZeroUsize;
use std::sync::Once;

use pest::Parser as _;

use crate::diagnostic::Diagnostic;
use crate::source::FileId;
pub use ast::*;
pub use include::{load, Loaded};
pub(crate) use slips::foreign_help;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/kafkabench.pest"]
struct Grammar;

/// Bounds the parser's work on hostile input (deep nesting, pathological backtracking).
const CALL_LIMIT: usize = 5_000_000;

fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        pest::set_call_limit(NonZeroUsize::new(CALL_LIMIT));
        // Keeps the tokens each failed attempt expected, for the "expected one of" help.
        pest::set_error_detail(true);
    });
}

/// Parses a scenario file.
pub fn parse(file: FileId, text: &str) -> Result<Ast, Diagnostic> {
    init();
    limits::check(file, text)?;
    let mut pairs =
        Grammar::parse(Rule::file, text).map_err(|e| errors::syntax_error(file, text, e))?;
    let file_pair = pairs.next().expect("file rule always yields one pair");
    let scenario = file_pair
        .into_inner()
        .next()
        .expect("file holds a scenario");
    Ok(build::Builder::new(file).scenario(scenario))
}

/// Parses an included file: bare entries, no `scenario` around them.
pub fn parse_fragment(file: FileId, text: &str) -> Result<Vec<Entry>, Diagnostic> {
    init();
    limits::check(file, text)?;
    let mut pairs =
        Grammar::parse(Rule::fragment, text).map_err(|e| errors::syntax_error(file, text, e))?;
    let builder = build::Builder::new(file);
    Ok(pairs
        .next()
        .expect("fragment rule yields one pair")
        .into_inner()
        .filter(|p| p.as_rule() != Rule::EOI)
        .map(|p| builder.entry(p))
        .collect())
}
