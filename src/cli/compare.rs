//! `kafkabench compare`: two result files run by run, gated by `--fail-on` bounds.

use std::io::{IsTerminal, Write};

use super::{finish_output, CompareArgs};
use crate::exit::Outcome;
use crate::report::compare::{compare_at, parse_bounds, write, Sides};
use crate::report::json::ResultFile;

pub(super) fn command(a: &CompareArgs) -> Outcome {
    // Every problem of the invocation at once: both files and every bound.
    let bounds = parse_bounds(a.fail_on.iter().map(String::as_str));
    let baseline = ResultFile::read(&a.baseline);
    let current = ResultFile::read(&a.current);
    let mut problems: Vec<String> = Vec::new();
    if let Err(e) = &baseline {
        problems.push(format!("error: baseline: {e}"));
    }
    if let Err(e) = &current {
        problems.push(format!("error: current: {e}"));
    }
    if let Err(errs) = &bounds {
        problems.extend(errs.iter().map(|e| format!("error: {e}")));
    }
    let (Ok(baseline), Ok(current), Ok(bounds)) = (baseline, current, bounds) else {
        let _ = writeln!(std::io::stderr(), "{}", problems.join("\n"));
        return Outcome::Invalid;
    };
    let c = compare_at(&baseline, &current, &bounds, a.alpha);
    let (b, cur) = (
        a.baseline.display().to_string(),
        a.current.display().to_string(),
    );
    let sides = Sides {
        baseline: (&b, &baseline),
        current: (&cur, &current),
    };
    let stdout = std::io::stdout();
    let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut out = stdout.lock();
    let written = write(&c, &sides, color, &mut out).and_then(|()| out.flush());
    let outcome = if c.regressed() {
        Outcome::AssertionFailed
    } else {
        Outcome::Ok
    };
    finish_output(outcome, written)
}
