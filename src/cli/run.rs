//! `kafkabench run`: load, check, plan, execute, assert, report, and say why it stopped.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::{load, print_diagnostics, progress, RunArgs};
use crate::exit::Outcome;
use crate::plan::{plan, PlanOptions};
use crate::report::json::ResultFile;
use crate::run::{execute, LiveTopic, RunOptions};

pub fn command(a: &RunArgs) -> Outcome {
    // Before any work: a report that cannot be written would otherwise be found out only
    // after the whole run.
    let unwritable: Vec<String> = [
        ("--json", &a.json),
        ("--junit", &a.junit),
        ("--html", &a.html),
    ]
    .into_iter()
    .filter_map(|(flag, path)| {
        let path = path.as_deref()?;
        writable(path)
            .err()
            .map(|e| format!("error: cannot write {flag} {}: {e}", path.display()))
    })
    .collect();
    let (sources, result) = load(&a.file);
    let scenario = match result {
        Ok(s) if unwritable.is_empty() => s,
        Ok(_) => {
            eprintln!("{}", unwritable.join("\n"));
            return Outcome::Invalid;
        }
        Err(d) => {
            print_diagnostics(&d, &sources);
            for e in &unwritable {
                eprintln!("{e}");
            }
            return Outcome::Invalid;
        }
    };
    let p = plan(
        &scenario,
        &PlanOptions {
            bootstrap: a.scaling.bootstrap.clone(),
            scale: a.scaling.scale,
            ..PlanOptions::default()
        },
    );
    // Bars where someone watches, a plain line every few seconds in a CI log; none with --quiet.
    let live = (!a.quiet).then(|| progress::on_stderr(&p, std::io::stderr().is_terminal()));
    let opts = RunOptions {
        keep_topics: a.keep_topics,
        progress: live.as_ref().map(|l| l.sink()),
        live_topic: LiveTopic::default(),
        interval: a.interval,
    };
    // The orchestration is light (the work is on the run's own threads): one worker will do.
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return Outcome::RunFailed;
        }
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    rt.spawn(signals(interrupt.clone(), opts.live_topic.clone()));
    let started = SystemTime::now();
    let exec = rt.block_on(execute(&p, &opts, interrupt));
    if let Some(l) = &live {
        l.finish();
    }
    let verdicts = crate::assert::evaluate(&p, &exec.results);
    let mut out = std::io::stdout().lock();
    let _ = crate::report::table::write(&p, &exec, &mut out);
    let _ = crate::report::verdicts_text(&verdicts, &mut out);
    let _ = out.flush();
    let mut outcome = crate::assert::outcome(&exec, &verdicts, false);
    // JUnit first, so the JSON's outcome can include a JUnit file that failed.
    if let Some(path) = &a.junit {
        if !write_file(path, |f| {
            crate::report::junit::write(&p, &exec, &verdicts, f)
        }) {
            outcome = crate::assert::outcome(&exec, &verdicts, true);
        }
    }
    if let Some(path) = &a.json {
        let json_outcome = outcome;
        let file = ResultFile::new(&p, &exec, &verdicts, json_outcome)
            .with_sources(&sources)
            .started(started)
            .interval(a.interval);
        if !write_file(path, |f| file.write(f)) {
            outcome = crate::assert::outcome(&exec, &verdicts, true);
        }
    }
    if let Some(path) = &a.html {
        let file = crate::report::json::ResultFile::new(&p, &exec, &verdicts, outcome);
        if let Err(e) = super::report::write_html(&file, path) {
            eprintln!("error: cannot write {}: {e}", path.display());
            outcome = crate::assert::outcome(&exec, &verdicts, true);
        }
    }
    if let Some(f) = &exec.failure {
        eprintln!("error: {f}");
    }
    if exec.interrupted {
        eprintln!("interrupted: the report above covers what was measured before the signal");
    }
    // Dropping the runtime would wait for a blocking call an interrupt gave up on (a connect
    // to a cluster that does not answer).
    rt.shutdown_background();
    outcome
}

/// Ctrl-C and SIGTERM (CI timeouts, `docker stop`, Kubernetes) stop the run the same way: the
/// first lets it report and clean up; a second ends the process at once, saying what it
/// leaves behind.
async fn signals(interrupt: Arc<AtomicBool>, live_topic: LiveTopic) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        eprintln!("warning: cannot listen for signals; an interrupt ends the run unreported");
        return;
    };
    let mut first = true;
    loop {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        if first {
            first = false;
            interrupt.store(true, Ordering::SeqCst);
            eprintln!("interrupted: stopping and cleaning up (interrupt again to exit at once)");
            continue;
        }
        let left = match live_topic.get() {
            Some(t) => format!("topic {t} is left behind"),
            None => "nothing is left behind".into(),
        };
        eprintln!("interrupted again: exiting without a report; {left}");
        std::process::exit(i32::from(Outcome::Interrupted.code()));
    }
}

/// Whether `path` can be written as a file, found out without changing it: an existing file
/// is opened for writing (not truncated); a new one is created and removed again.
pub(super) fn writable(path: &Path) -> std::io::Result<()> {
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    if path.exists() {
        open.open(path).map(drop)
    } else {
        open.create_new(true).open(path)?;
        std::fs::remove_file(path)
    }
}

/// Writes one report file; a failure is said on stderr (the report is on stdout already).
/// False when it failed.
fn write_file(path: &Path, write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>) -> bool {
    match std::fs::File::create(path).and_then(|mut f| write(&mut f)) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            false
        }
    }
}

/// Bounds of `--interval`: finer than 10 ms the series costs more than it shows; coarser than
/// an hour it shows nothing a run's totals do not.
const INTERVAL_MIN: Duration = Duration::from_millis(10);
const INTERVAL_MAX: Duration = Duration::from_secs(3600);
/// The duration units of the scenario language, so `--interval` reads like a `.kbs` duration.
const INTERVAL_UNITS: &[(&str, f64)] = &[
    ("ns", 1e-9),
    ("us", 1e-6),
    ("µs", 1e-6),
    ("ms", 1e-3),
    ("s", 1.0),
    ("m", 60.0),
    ("min", 60.0),
    ("h", 3600.0),
];

/// `--interval DURATION`: a number and a unit (`500ms`, `1s`, `1.5s`, `2m`), 10ms to 1h.
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let Ok(n) = number.parse::<f64>() else {
        return Err(format!(
            "`{text}` is not a duration: write a number and a unit, e.g. 500ms, 1s or 2m"
        ));
    };
    let unit = unit.trim();
    if unit.is_empty() {
        return Err(format!(
            "`{text}` has no unit: write {number}s or {number}ms"
        ));
    }
    let Some((_, secs_per)) = INTERVAL_UNITS.iter().find(|(u, _)| *u == unit) else {
        let known: Vec<&str> = INTERVAL_UNITS.iter().map(|(u, _)| *u).collect();
        let hint = match crate::diagnostic::closest(unit, known.iter().copied()) {
            Some(s) => format!("did you mean `{number}{s}`?"),
            None => format!("use one of {}", known.join(", ")),
        };
        return Err(format!("unknown unit `{unit}` in `{text}`: {hint}"));
    };
    let secs = n * secs_per;
    // Compared as seconds first: a huge number would not fit a Duration.
    if !(INTERVAL_MIN.as_secs_f64()..=INTERVAL_MAX.as_secs_f64()).contains(&secs) {
        return Err(format!(
            "an interval of `{text}` is out of range: use 10ms to 1h"
        ));
    }
    Ok(Duration::from_nanos((secs * 1e9).round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_reads_a_number_and_a_unit() {
        assert_eq!(parse_interval("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_interval("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_interval("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_interval("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_interval("0.3s"), Ok(Duration::from_millis(300)));
        assert_eq!(
            parse_interval("10ms"),
            Ok(Duration::from_millis(10)),
            "the least"
        );
        assert_eq!(
            parse_interval("1h"),
            Ok(Duration::from_secs(3600)),
            "the most"
        );
    }

    #[test]
    fn an_interval_without_a_unit_says_which_to_write() {
        assert_eq!(
            parse_interval("5").unwrap_err(),
            "`5` has no unit: write 5s or 5ms"
        );
    }

    #[test]
    fn an_interval_with_a_misspelt_unit_suggests_the_fix() {
        let e = parse_interval("500mss").unwrap_err();
        assert!(e.contains("did you mean `500ms`?"), "{e}");
        let e = parse_interval("1fortnight").unwrap_err();
        assert_eq!(
            e,
            "unknown unit `fortnight` in `1fortnight`: use one of ns, us, µs, ms, s, m, min, h"
        );
    }

    #[test]
    fn an_interval_out_of_range_is_refused_with_the_range() {
        for t in [
            "0s",
            "1ms",
            "2h",
            "-1s",
            "1500us",
            "99999999999999999999999h",
        ] {
            assert!(parse_interval(t).is_err(), "{t}");
        }
        assert!(parse_interval("2h").unwrap_err().contains("10ms to 1h"));
    }
}
