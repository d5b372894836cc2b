//! Exit codes, decided in one place. Documented in the README and in `--help`.

use std::process::ExitCode;

/// Every assertion held (or there were none).
pub(crate) const OK: u8 = 0;
/// The runs completed, and at least one assertion failed.
pub(crate) const ASSERTION_FAILED: u8 = 1;
/// The scenario or the command line is invalid (a report file that cannot be written
/// included); nothing was run.
pub(crate) const INVALID: u8 = 2;
/// The cluster could not be reached, or a run failed (broker lost, topic refused, nothing
/// delivered), or a report file could not be written after the run.
pub(crate) const RUN_FAILED: u8 = 3;
/// Interrupted by Ctrl-C or SIGTERM; what was measured has been reported.
pub(crate) const INTERRUPTED: u8 = 130;

pub(crate) const HELP: &str = "\
Exit codes:
  0    every assertion held
  1    an assertion failed (the report says which bound, and by how much)
  2    the scenario or the command line is invalid (e.g. an unwritable --json); nothing was run
  3    the cluster could not be reached, a run failed or delivered nothing, or a report file
       could not be written (partial report written)
  130  interrupted (Ctrl-C or SIGTERM; a second one exits at once); partial report written
A suite of files (`kafkabench test DIR`) exits with the most severe of its files' codes:
130 over 3 over 2 over 1 over 0.";

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

    /// How severe the outcome is, for a suite of files whose one exit code is the most severe
    /// of theirs: interrupted (130) over a failed run (3) over invalid input (2) over a failed
    /// assertion (1) over ok (0), the order of `decide` with "invalid" in its place.
    pub fn severity(self) -> u8 {
        match self {
            Outcome::Ok => 0,
            Outcome::AssertionFailed => 1,
            Outcome::Invalid => 2,
            Outcome::RunFailed => 3,
            Outcome::Interrupted => 4,
        }
    }

    /// The more severe of two outcomes (see [`Outcome::severity`]).
    pub fn worst(self, other: Outcome) -> Outcome {
        if other.severity() > self.severity() {
            other
        } else {
            self
        }
    }

    /// The most severe of several outcomes; `Ok` for none.
    pub fn most_severe(all: impl IntoIterator<Item = Outcome>) -> Outcome {
        all.into_iter().fold(Outcome::Ok, Outcome::worst)
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

#[cfg(test)]
mod tests {
    use super::Outcome::{self, *};

    #[test]
    fn the_most_severe_outcome_is_130_then_3_then_2_then_1_then_0() {
        let order = [Ok, AssertionFailed, Invalid, RunFailed, Interrupted];
        for (i, a) in order.iter().enumerate() {
            for (j, b) in order.iter().enumerate() {
                assert_eq!(a.worst(*b), order[i.max(j)], "{a:?} vs {b:?}");
            }
        }
        assert_eq!(Outcome::most_severe([]), Ok);
        assert_eq!(
            Outcome::most_severe([AssertionFailed, RunFailed, Ok]).code(),
            3
        );
    }
}
