//! A suite: several scenario files run as one test run, the way a CI job runs a directory of
//! checks. Every file is checked before anything runs; each prints its own table; the suite
//! ends with `N passed, N failed, N skipped`, one JUnit file and one exit code, the most severe
//! of the files' (`exit::Outcome::worst`).

use std::path::{Path, PathBuf};

use crate::assert::Verdict;
use crate::format::plural;
use crate::plan::Plan;
use crate::report::junit::Skipped;

/// The files a list of paths names: a file as given, a directory as its `.kbs` files in name
/// order (not recursive). A directory without any is an error, said once.
pub(super) fn expand(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
    let (mut files, mut errors) = (Vec::new(), Vec::new());
    for p in paths {
        if !p.is_dir() {
            files.push(p.clone());
            continue;
        }
        match std::fs::read_dir(p) {
            Ok(entries) => {
                let mut found: Vec<PathBuf> = entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|f| f.is_file() && f.extension().is_some_and(|e| e == "kbs"))
                    .collect();
                found.sort();
                if found.is_empty() {
                    errors.push(format!(
                        "error: {} has no .kbs files (directories are not searched below \
                         their own files)",
                        p.display()
                    ));
                }
                files.extend(found);
            }
            Err(e) => errors.push(format!("error: cannot read {}: {e}", p.display())),
        }
    }
    (files, errors)
}

/// Where a file's report goes (`--json`, and any other per-file report such as `--html`):
/// the path itself for one file; for several, the path is a directory and each file gets
/// `STEM.EXT` in it (`STEM-2.EXT` when two files share a stem).
pub(super) fn report_path(
    given: &Path,
    file: &Path,
    several: bool,
    ext: &str,
    used: &mut Vec<String>,
) -> PathBuf {
    if !several {
        return given.to_path_buf();
    }
    let stem = file
        .file_stem()
        .map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    let mut name = stem.clone();
    let mut n = 1;
    while used.contains(&name) {
        n += 1;
        name = format!("{stem}-{n}");
    }
    used.push(name.clone());
    given.join(format!("{name}.{ext}"))
}

/// The assertion instances of `full` that read a run `selected` leaves out: not judged,
/// reported as skipped (not failed), with the reason.
pub(super) fn skipped(full: &Plan, selected: &[bool]) -> Vec<Skipped> {
    full.instances()
        .filter(|(_, i)| i.runs.iter().any(|r| !selected[*r]))
        .map(|(a, i)| {
            let out: Vec<&str> = i
                .runs
                .iter()
                .filter(|r| !selected[**r])
                .map(|r| full.runs[*r].label.as_str())
                .collect();
            Skipped {
                assertion: a.text.clone(),
                runs: i.runs.iter().map(|r| full.runs[*r].label.clone()).collect(),
                reason: format!(
                    "--only left out run{} `{}`",
                    plural(out.len()),
                    out.join("`, `")
                ),
            }
        })
        .collect()
}

/// What the suite's files came to, for the summary line.
#[derive(Default, Debug, PartialEq, Eq)]
pub(super) struct Tally {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub files: usize,
    /// Files whose runs stopped early (a failed run) or never started (an interrupt).
    pub files_failed: usize,
    pub files_not_run: usize,
}

impl Tally {
    /// Counts one file's verdicts; `cut` are the runs (indices) cut short, whose verdicts are
    /// partial and count as skipped (as in JUnit).
    pub(super) fn add(&mut self, verdicts: &[Verdict], cut: &[usize], skipped: usize) {
        self.files += 1;
        self.skipped += skipped;
        for v in verdicts {
            if v.runs.iter().any(|r| cut.contains(&r.index)) {
                self.skipped += 1;
            } else if v.pass {
                self.passed += 1;
            } else {
                self.failed += 1;
            }
        }
    }

    /// `12 passed, 1 failed, 2 skipped (9 files)`, with the files that did not complete.
    pub(super) fn line(&self) -> String {
        let mut s = format!(
            "{} passed, {} failed, {} skipped ({} file{}",
            self.passed,
            self.failed,
            self.skipped,
            self.files,
            plural(self.files)
        );
        if self.files_failed > 0 {
            s += &format!(", {} with a failed run", self.files_failed);
        }
        if self.files_not_run > 0 {
            s += &format!(", {} not run: interrupted", self.files_not_run);
        }
        s + ")"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_files_get_one_json_file_each_and_shared_stems_are_told_apart() {
        let mut used = Vec::new();
        let dir = Path::new("out");
        let a = report_path(dir, Path::new("a/x.kbs"), true, "json", &mut used);
        let b = report_path(dir, Path::new("b/x.kbs"), true, "json", &mut used);
        assert_eq!((a, b), (dir.join("x.json"), dir.join("x-2.json")));
        assert_eq!(
            report_path(
                Path::new("r.json"),
                Path::new("x.kbs"),
                false,
                "json",
                &mut used
            ),
            Path::new("r.json")
        );
    }

    #[test]
    fn the_summary_line_says_passed_failed_and_skipped() {
        let t = Tally {
            passed: 12,
            failed: 1,
            skipped: 2,
            files: 3,
            files_failed: 1,
            files_not_run: 0,
        };
        assert_eq!(
            t.line(),
            "12 passed, 1 failed, 2 skipped (3 files, 1 with a failed run)"
        );
    }
}
