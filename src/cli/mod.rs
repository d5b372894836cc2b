//! The command layer: the command line's types, and dispatch to one file per command. Stages
//! below return values; only this layer writes to the terminal.

mod check;
mod collect;
mod compare;
mod fmt;
mod history;
mod import;
mod interval;
mod k8s;
mod merge;
mod metrics;
mod only;
mod plan;
mod progress;
mod report;
mod run;
mod suite;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::diagnostic::{render_text, Diagnostics};
use crate::exit::{Outcome, HELP};
use crate::model::Scenario;
use crate::source::Sources;

#[derive(Parser, Debug)]
#[command(
    name = "kafkabench",
    // Usage lines say `kafkabench` whatever the binary file is called (a copy, a symlink).
    bin_name = "kafkabench",
    version,
    about = "Declarative Kafka benchmarks: one .kbs file is a tuning experiment on a laptop and a pass/fail gate in CI",
    long_about = "Declarative Kafka benchmarks.\n\n\
        A scenario file (.kbs) names the cluster, the topic, producer and consumer settings, the workload, \
        the runs to compare (a matrix or named steps) and what must hold (`expect`). \
        `kafkabench check` validates it, `kafkabench plan` shows the runs it expands to, \
        `kafkabench run` executes them against a real cluster and prints one comparison table, \
        `kafkabench test DIR` runs a directory of them as one CI suite.\n\n\
        Start a local broker with scripts/kafka-local up; see grammar/REFERENCE.md for the language.",
    after_help = HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Validate scenario files without contacting a broker; exit 2 when any is invalid.
    Check(CheckArgs),
    /// Show the runs a scenario expands to, with their effective settings, without contacting a broker.
    Plan(PlanArgs),
    /// Run a scenario against a cluster, print the comparison table, evaluate `expect`.
    /// Several files (or directories) run one after the other as a suite.
    Run(RunArgs),
    /// Rewrite scenario files in the canonical layout (comments kept); `--check` only lists them.
    Fmt(FmtArgs),
    /// Compare two result files (--json) run by run; exit 1 when a --fail-on bound is exceeded.
    Compare(CompareArgs),
    /// Find change points in a history of result files (--json of `run`), series by series,
    /// with E-Divisive means; exit 1 when a recent change goes past a --fail-on bound.
    History(history::HistoryArgs),
    /// Write another tool's benchmark definition as a scenario: `import omb WORKLOAD.yaml`.
    Import(import::ImportArgs),
    /// Show a saved result file again (--json of `run`): the table and verdicts, and an HTML report with --html.
    Report(ReportArgs),
    /// Run a suite: every .kbs file given or in the directories given, one table each, then
    /// `N passed, N failed, N skipped`; one JUnit file, one exit code (the most severe).
    Test(RunArgs),
    /// Merge the result files (--json) of one run's shards exactly (histograms added, counts
    /// summed) and evaluate `expect` once on the merged figures (docs/distributed.md).
    Merge(merge::MergeArgs),
    /// Coordinate a sharded run (`run --shard I/N`): create its topics, hold its barriers,
    /// merge the shards' results exactly and judge `expect` once (docs/distributed.md).
    Collect(collect::CollectArgs),
    /// Write Kubernetes manifests for a sharded run: the scenario in a ConfigMap, an Indexed
    /// Job of N shards, the collector Job; secrets by reference (docs/distributed.md).
    K8s(k8s::K8sArgs),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiagFormat {
    /// Rendered diagnostics on stderr, with the source lines they point at.
    Text,
    /// Diagnostics as data on stdout (docs/diagnostics.md).
    Json,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// One block per run with its effective settings and estimate, then the assertions.
    Text,
    /// The plan as data, `schema_version` 1 (docs/plan-format.md).
    Json,
    /// The same data as JSON, in YAML.
    Yaml,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Scenario files (.kbs).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// `json` prints diagnostics as data on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: DiagFormat,
}

#[derive(Args, Debug)]
pub struct FmtArgs {
    /// Scenario or included files (.kbs); `-` reads stdin and writes the result to stdout.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Change nothing: list the files that are not formatted, with a short diff, and exit 1.
    #[arg(long)]
    pub check: bool,
}

#[derive(Args, Debug, Clone)]
pub struct Scaling {
    /// Multiply message counts and durations (not rates or timers), e.g. 0.1 for a quick CI pass.
    #[arg(long, default_value_t = 1.0, value_parser = parse_scale)]
    pub scale: f64,
    /// Bootstrap servers to use instead of the scenario's (also: KAFKA_BOOTSTRAP in `env(...)`).
    #[arg(long, value_parser = parse_bootstrap)]
    pub bootstrap: Option<String>,
    /// Run every run this many times (trials, interleaved: A B C, B C A, …, each on fresh
    /// topics) instead of the scenario's `repeat`; figures become medians with intervals.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: Option<u32>,
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The scenario file (.kbs).
    pub file: PathBuf,
    #[command(flatten)]
    pub scaling: Scaling,
    /// Output format: `text` for people; `json` or `yaml` for tools (docs/plan-format.md).
    #[arg(long, value_enum, default_value = "text")]
    pub format: PlanFormat,
    /// The id that suffixes topic names and consumer groups; without it the plan shows
    /// `<run-id>`, so two plans of one file are identical (and no seed: a scenario without
    /// `seed` draws it from the run id).
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    pub run_id: Option<String>,
    /// Also list every default of each client the plan runs on, and in every run the settings
    /// whose value differs between clients (JSON and YAML always carry both).
    #[arg(long)]
    pub defaults: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scenario files (.kbs), or directories whose .kbs files run in name order. Every file
    /// is checked before anything runs.
    #[arg(required = true, value_name = "FILE|DIR")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub scaling: Scaling,
    /// Run only the runs with this matrix value or step, as assertions select them (e.g.
    /// `codec=zstd`, `step=baseline`); repeat for several. Assertions that read a run left out
    /// are skipped.
    #[arg(long, value_name = "VAR=VALUE", value_parser = only::parse)]
    pub only: Vec<only::Selector>,
    /// The id that suffixes topic names and consumer groups (default: a fresh random one).
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    pub run_id: Option<String>,
    /// Write every figure, histogram, time series and effective setting as JSON
    /// (docs/result-format.md; the file says its version in `schema_version`). With several
    /// files, a directory: one NAME.json per scenario file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Width of the time series' intervals in the result file, from 10ms to 1h (e.g. 500ms,
    /// 1s, 1m).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = interval::parse_interval)]
    pub interval: std::time::Duration,
    /// Write one JUnit test case per assertion, for CI systems; one file for a whole suite,
    /// a test suite per scenario.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a self-contained HTML report with plots (no network needed to view it). With
    /// several files, a directory: one NAME.html per scenario file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Keep the topics kafkabench created (normally deleted after each run).
    #[arg(long)]
    pub keep_topics: bool,
    /// No live progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run as shard I of N of a sharded run (docs/distributed.md): this process sends its
    /// share of every run on its own partitions, meets the other shards at `kafkabench
    /// collect`'s barriers, and hands its results to the collector, which judges `expect`.
    /// Needs --run-id. `/N` takes I from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub metrics: MetricsArgs,
}

/// `--metrics`: live OpenMetrics for Prometheus (`run`, `test`, shards and `collect`).
#[derive(Args, Debug, Clone)]
pub struct MetricsArgs {
    /// Serve live metrics in the OpenMetrics text format at http://ADDR/metrics while the
    /// invocation runs (`127.0.0.1:9464`, `:9464` for every interface, port 0 for any free
    /// one; the address is said on stderr). REFERENCE.md lists the metrics.
    #[arg(long, value_name = "ADDR", value_parser = metrics::parse_addr)]
    pub metrics: Option<std::net::SocketAddr>,
    /// After the end, keep the endpoint up until a scrape has read the final totals, at most
    /// this long.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = interval::parse_linger)]
    pub metrics_linger: std::time::Duration,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The result file to compare against (e.g. last release's `--json` output).
    pub baseline: PathBuf,
    /// The result file of the run under test.
    pub current: PathBuf,
    /// Exit 1 when a figure moves past a bound: METRIC:CHANGE in the scenario language's
    /// metric names, e.g. `throughput:-5%`, `ack.p99:+10%`, `e2e.p99.9:+20%`, `failed:+0`
    /// (absolute). Comma-separated or repeated.
    #[arg(long, value_name = "SPEC")]
    pub fail_on: Vec<String>,
    /// With trials on both sides (`repeat`, `--repeat`): the significance level a change must
    /// reach (exact Mann–Whitney test) before a bound may fail on it.
    #[arg(long, default_value_t = crate::report::compare::ALPHA, value_parser = parse_alpha)]
    pub alpha: f64,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A result file written by `kafkabench run --json`.
    pub file: PathBuf,
    /// Write a self-contained HTML report with plots (no network needed to view it).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

fn parse_alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a <= 0.5 => Ok(a),
        _ => Err("the significance level is above 0 and at most 0.5 (e.g. 0.05, 0.01)".into()),
    }
}

fn parse_scale(s: &str) -> Result<f64, String> {
    let f: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if f > 0.0 && f <= 100.0 {
        Ok(f)
    } else {
        Err("scale must be above 0 and at most 100".into())
    }
}

/// A run id goes into topic names: their characters, and a length bound.
fn parse_run_id(s: &str) -> Result<String, String> {
    match crate::plan::run_id_problem(s) {
        Some(why) => Err(why),
        None => Ok(s.to_string()),
    }
}

/// A malformed list is invalid input, refused before anything connects (exit 2).
fn parse_bootstrap(s: &str) -> Result<String, String> {
    match crate::check::bootstrap::problem(s) {
        Some(why) => Err(why),
        None => Ok(s.to_string()),
    }
}

/// Runs the command; its outcome is the exit code.
pub fn main(cli: Cli) -> Outcome {
    // OpenSSL is initialised here, first, so that it registers no exit handler: the first
    // initialisation decides, and librdkafka's would register OPENSSL_cleanup. That cleanup
    // raced the tokio threads left to end after the runtime's background shutdown, which free
    // their own OpenSSL state as they exit: a SASL_SSL run aborted with "double free or
    // corruption" once in CI. The process is exiting; the kernel takes the memory back.
    openssl::init();
    match cli.command {
        Command::Check(a) => check::command(&a),
        Command::Plan(a) => plan::command(&a),
        Command::Run(a) => run::command(&a, false),
        Command::Test(a) => run::command(&a, true),
        Command::Fmt(a) => fmt::command(&a),
        Command::Compare(a) => compare::command(&a),
        Command::History(a) => history::command(&a),
        Command::Import(a) => import::command(&a),
        Command::Report(a) => report::command(&a),
        Command::Merge(a) => merge::command(&a),
        Command::Collect(a) => collect::command(&a),
        Command::K8s(a) => k8s::command(&a),
    }
}

/// Loads, parses and checks one file.
pub fn load(path: &Path) -> (Sources, Result<Scenario, Diagnostics>) {
    let mut sources = Sources::default();
    let result = crate::check::load(path, &mut sources);
    (sources, result)
}

/// The outcome once stdout is written: a reader that closed the pipe (`| head`) had what it
/// wanted, so that is quiet and changes nothing; any other write failure is said, exit 3.
fn finish_output(outcome: Outcome, written: std::io::Result<()>) -> Outcome {
    match written {
        Ok(()) => outcome,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => outcome,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: cannot write the output: {e}");
            Outcome::RunFailed
        }
    }
}

/// Renders diagnostics on stderr: colour and terminal width when it is a terminal.
pub fn print_diagnostics(diags: &Diagnostics, sources: &Sources) {
    let stderr = std::io::stderr();
    let color = stderr.is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let width = if color { terminal_width() } else { 100 };
    let _ = stderr
        .lock()
        .write_all(render_text(diags, sources, color, width).as_bytes());
}

fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(100)
}
