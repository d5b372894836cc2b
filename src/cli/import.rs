//! `kafkabench import omb`: an OpenMessaging Benchmark workload (and Kafka driver file) written
//! as a scenario, to stdout or to `-o FILE`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::{finish_output, print_diagnostics};
use crate::exit::Outcome;
use crate::import::{omb, OmbFiles};
use crate::source::Sources;

#[derive(Args, Debug)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub tool: ImportTool,
}

#[derive(Subcommand, Debug)]
pub enum ImportTool {
    /// OpenMessaging Benchmark: a workload YAML and, optionally, a Kafka driver YAML.
    Omb(OmbArgs),
}

#[derive(Args, Debug)]
pub struct OmbArgs {
    /// The workload file (OMB's workloads/*.yaml).
    pub workload: PathBuf,
    /// The Kafka driver file (OMB's driver-kafka/*.yaml): replication, topic configs, client properties.
    #[arg(long, value_name = "DRIVER.yaml")]
    pub driver: Option<PathBuf>,
    /// Write the scenario to this file instead of stdout (a payload file is then named relative to its folder).
    #[arg(long, short = 'o', value_name = "OUT.kbs")]
    pub output: Option<PathBuf>,
}

pub(super) fn command(a: &ImportArgs) -> Outcome {
    match &a.tool {
        ImportTool::Omb(o) => import_omb(o),
    }
}

fn import_omb(a: &OmbArgs) -> Outcome {
    let out_dir = match &a.output {
        Some(o) => o.parent().unwrap_or(Path::new("")).to_path_buf(),
        None => PathBuf::from("."),
    };
    let out_dir = if out_dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out_dir
    };
    let mut sources = Sources::default();
    let files = OmbFiles {
        workload: &a.workload,
        driver: a.driver.as_deref(),
        out_dir: &out_dir,
    };
    let text = match omb(files, &mut sources) {
        Ok(imported) => {
            // What the import could only carry as comments is said where a user looks first.
            let mut err = std::io::stderr().lock();
            for w in &imported.warnings {
                let _ = writeln!(err, "warning: {w}");
            }
            imported.text
        }
        Err(d) => {
            print_diagnostics(&d, &sources);
            return Outcome::Invalid;
        }
    };
    match &a.output {
        Some(path) => match std::fs::write(path, &text) {
            Ok(()) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "wrote {}; next: kafkabench check {0}",
                    path.display()
                );
                Outcome::Ok
            }
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "error: cannot write {}: {}",
                    path.display(),
                    e.to_string().to_lowercase()
                );
                Outcome::Invalid
            }
        },
        None => {
            let mut out = std::io::stdout().lock();
            let res = out.write_all(text.as_bytes()).and_then(|()| out.flush());
            finish_output(Outcome::Ok, res)
        }
    }
}
