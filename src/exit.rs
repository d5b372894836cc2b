//! Exit codes, decided in one place. Documented in the README and in `--help`.

use std::process::ExitCode;

/// Every assertion held (or there were none).
pub const OK: u8 = 0;
/// The runs completed, and at least one assertion failed.
pub const ASSERTION_FAILED: u8 = 1;
/// The scenario or the command line is invalid (a report file that cannot be written
/// included); nothing was run.
pub const INVALID: u8 = 2;
/// The cluster could not be reached, or a run failed (broker lost, topic refused, nothing
/// delivered), or a report file could not be written after the run.
pub const RUN_FAILED: u8 = 3;
/// Interrupted by Ctrl-C or SIGTERM; what was measured has been reported.
pub const INTERRUPTED: u8 = 130;

pub const HELP: &str = "\
Exit codes:
  0    every assertion held
  1    an assertion failed (the report says which bound, and by how much)
  2    the scenario or the command line is invalid (e.g. an unwritable --json); nothing was run
  3    the cluster could not be reached, a run failed or delivered nothing, or a report file
       could not be written (partial report written)
  130  interrupted (Ctrl-C or SIGTERM; a second one exits at once); partial report written";

/// The outcome of a command, mapped to its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    AssertionFailed,
    Invalid,
    RunFailed,
    Interrupted,
}

impl Outcome {
    /// The one decision of a command's exit code from what happened, most severe first: an
    /// interruption (the user stopped it) over a failed run (the cluster or an output failed us,
    /// whatever the `RunError`) over a failed assertion (the scenario ran and a bound did not
    /// hold).
    pub fn decide(interrupted: bool, run_failed: bool, assertion_failed: bool) -> Outcome {
        if interrupted {
            Outcome::Interrupted
        } else if run_failed {
            Outcome::RunFailed
        } else if assertion_failed {
            Outcome::AssertionFailed
        } else {
            Outcome::Ok
        }
    }

    /// The outcome's name in result files (`"run_failed"`), stable like the code.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::AssertionFailed => "assertion_failed",
            Outcome::Invalid => "invalid",
            Outcome::RunFailed => "run_failed",
            Outcome::Interrupted => "interrupted",
        }
    }

    pub fn code(self) -> u8 {
        match self {
            Outcome::Ok => OK,
            Outcome::AssertionFailed => ASSERTION_FAILED,
            Outcome::Invalid => INVALID,
            Outcome::RunFailed => RUN_FAILED,
            Outcome::Interrupted => INTERRUPTED,
        }
    }
}

impl From<Outcome> for ExitCode {
    fn from(o: Outcome) -> ExitCode {
        ExitCode::from(o.code())
    }
}
