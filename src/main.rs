//! The kafkabench binary: parses the command line and hands it to the command layer.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = kafkabench::cli::Cli::parse();
    kafkabench::cli::main(cli).into()
}
