//! `kafkabench history`: a series of result files searched for change points, gated by
//! `--fail-on` on the newest change (the work is `report::history`'s).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;

use super::{finish_output, run::writable};
use crate::exit::Outcome;
use crate::measure::changepoint;
use crate::report::compare::parse_bounds;
use crate::report::history::{analyse, load, text, Options, LAST};

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Result files (`run --json`), or directories whose *.json files are read. They are
    /// ordered by when they started and grouped into series: a scenario's run, on the same
    /// brokers (count and release) and the same client CPU and cores.
    #[arg(required = true, value_name = "FILE|DIR")]
    pub files: Vec<PathBuf>,
    /// Exit 1 when a figure's newest change point, among the last --last results of a series,
    /// moves it past a bound: METRIC:CHANGE as in `compare`, e.g. `ack.p99:+10%`,
    /// `throughput:-5%`. Comma-separated or repeated.
    #[arg(long, value_name = "SPEC")]
    pub fail_on: Vec<String>,
    /// How many of a series' newest results --fail-on looks at: a change point before them is
    /// history, not news. A change shows once 3 results follow it.
    #[arg(long, value_name = "K", default_value_t = LAST, value_parser = parse_last)]
    pub last: usize,
    /// The family-wise significance level of a series: the chance that pure noise shows a
    /// change point in any of its figures (Holm across them; permutation tests of E-Divisive's
    /// statistic, at least 999 permutations; from 0.001 to 0.5).
    #[arg(long, default_value_t = changepoint::ALPHA, value_parser = parse_alpha)]
    pub alpha: f64,
    /// The smallest change reported, as a per cent of the figure's level before it: a
    /// significant change smaller than this is counted in a note, not shown (0 shows every
    /// one). 5% by default: the precision `repeat = auto` aims a figure at.
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = parse_min_effect)]
    pub min_effect: f64,
    /// Write the series, their figures and change points, and the gate as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML page: each figure over time, its change points marked.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

fn parse_last(s: &str) -> Result<usize, String> {
    // A change point has at least MIN_SIZE results after it: a smaller K could never fire.
    let least = changepoint::MIN_SIZE;
    match s.parse::<usize>() {
        Ok(k) if k >= least => Ok(k),
        _ => Err(format!(
            "the number of newest results is a whole number, at least {least} (a change \
             point has {least} results after it), e.g. 10"
        )),
    }
}

fn parse_alpha(s: &str) -> Result<f64, String> {
    // Below it the permutations a family needs (K / α) grow past what a history is worth.
    let smallest = 1.0 / (changepoint::PERMUTATIONS + 1) as f64;
    match s.parse::<f64>() {
        Ok(a) if a >= smallest && a <= 0.5 => Ok(a),
        _ => Err(format!(
            "the significance level is from {smallest} (the smallest p-value of {} \
             permutations) to 0.5, e.g. 0.01",
            changepoint::PERMUTATIONS
        )),
    }
}

/// `5%`, `0.5%` or `0`: a fraction.
fn parse_min_effect(s: &str) -> Result<f64, String> {
    let number = s.trim().strip_suffix('%').unwrap_or(s.trim());
    match number.parse::<f64>() {
        Ok(p) if (0.0..1000.0).contains(&p) && (p == 0.0 || s.trim().ends_with('%')) => {
            Ok(p / 100.0)
        }
        _ => Err(
            "the smallest change reported is a per cent of the level before it, e.g. 5% (or 0 \
             for every significant change)"
                .into(),
        ),
    }
}

pub(super) fn command(a: &HistoryArgs) -> Outcome {
    // Every problem of the invocation at once: bounds, outputs and every file.
    let mut problems: Vec<String> = Vec::new();
    let bounds = match parse_bounds(a.fail_on.iter().map(String::as_str)) {
        Ok(b) => b,
        Err(errs) => {
            problems.extend(errs.iter().map(|e| format!("error: {e}")));
            Vec::new()
        }
    };
    for (flag, path) in [("--json", &a.json), ("--html", &a.html)] {
        if let Some(p) = path {
            if let Err(e) = writable(p) {
                problems.push(format!("error: cannot write {flag} {}: {e}", p.display()));
            }
        }
    }
    let mut notes = Vec::new();
    let loaded = match load(&a.files, &mut notes) {
        Ok(l) => l,
        Err(errs) => {
            problems.extend(errs.iter().map(|e| format!("error: {e}")));
            Vec::new()
        }
    };
    if !problems.is_empty() {
        let _ = writeln!(std::io::stderr(), "{}", problems.join("\n"));
        return Outcome::Invalid;
    }
    let o = Options {
        alpha: a.alpha,
        min_effect: a.min_effect,
        last: a.last,
        bounds,
    };
    let h = analyse(&loaded, &o, notes);
    let stdout = std::io::stdout();
    let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut out = stdout.lock();
    let written = text::write(&h, color, &mut out).and_then(|()| out.flush());
    let outcome = if h.breaches.is_empty() {
        Outcome::Ok
    } else {
        Outcome::AssertionFailed
    };
    let mut outcome = finish_output(outcome, written);
    if let Some(path) = &a.json {
        let mut buf = Vec::new();
        let r = h
            .write_json(&mut buf)
            .and_then(|()| std::fs::write(path, buf));
        outcome = report_written(outcome, "--json", path, r);
    }
    if let Some(path) = &a.html {
        let r = std::fs::write(path, crate::report::html::history_page(&h));
        outcome = report_written(outcome, "--html", path, r);
    }
    outcome
}

/// A report file that could not be written after the analysis: said, and a failed run (3).
fn report_written(
    outcome: Outcome,
    flag: &str,
    path: &std::path::Path,
    r: std::io::Result<()>,
) -> Outcome {
    match r {
        Ok(()) => outcome,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: cannot write {flag} {}: {e}",
                path.display()
            );
            outcome.worst(Outcome::RunFailed)
        }
    }
}
