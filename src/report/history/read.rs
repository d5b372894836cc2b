//! Reading a history: result files named one by one or found in directories (their `*.json`
//! and gzip-compressed `*.json.gz` files, not below), each read whole and placed by when it
//! started. Every problem is found before any analysis, and all of them are said at once.

use std::path::{Path, PathBuf};

use crate::report::json::{ReadError, ResultFile};

/// One result file of the history.
pub(crate) struct Loaded {
    /// As the user named it (or the directory and its name).
    pub path: String,
    pub file: ResultFile,
    /// When it started, RFC 3339 as written, and as milliseconds since 1970 for the order.
    pub started_at: String,
    pub started_ms: i64,
}

/// Why a history could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HistoryError {
    #[error("cannot read the directory {path}: {source}")]
    Dir {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} holds no result files (*.json, *.json.gz); a history is the `--json` files of `kafkabench run`")]
    EmptyDir { path: String },
    #[error("{0}")]
    Read(#[from] ReadError),
    #[error(
        "{path} has no start time (`started_at`, neither the file's nor a run's), so it has no \
         place in the history; remove it from the directory"
    )]
    NoStart { path: String },
    #[error("{path}: `started_at` is `{value}`, which is not an RFC 3339 time such as 2026-12-02T17:32:00.842Z")]
    BadStart { path: String, value: String },
}

/// Every result file under `paths` (files, or directories whose `*.json` files are read in
/// name order), oldest first; ties keep the order they were named in. Duplicates — the same
/// run id started at the same instant, a file copied twice — are read once, and said in
/// `notes`.
pub(crate) fn load(
    paths: &[PathBuf],
    notes: &mut Vec<String>,
) -> Result<Vec<Loaded>, Vec<HistoryError>> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        if p.is_dir() {
            match json_files(p) {
                Ok(found) if found.is_empty() => errors.push(HistoryError::EmptyDir {
                    path: p.display().to_string(),
                }),
                Ok(found) => files.extend(found),
                Err(source) => errors.push(HistoryError::Dir {
                    path: p.display().to_string(),
                    source,
                }),
            }
        } else {
            files.push(p.clone());
        }
    }
    let mut loaded: Vec<Loaded> = Vec::new();
    for path in files {
        match read_one(&path) {
            Ok(l) => loaded.push(l),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    loaded.sort_by_key(|l| l.started_ms);
    let mut kept: Vec<Loaded> = Vec::with_capacity(loaded.len());
    for l in loaded {
        let copy = kept
            .iter()
            .find(|k| k.file.run_id == l.file.run_id && k.started_at == l.started_at);
        match copy {
            Some(k) => notes.push(format!(
                "{} is a copy of {} (the same run id {} started at the same instant): read once",
                l.path, k.path, l.file.run_id
            )),
            None => kept.push(l),
        }
    }
    Ok(kept)
}

/// The `*.json` and `*.json.gz` files directly in `dir`, by name (hidden ones left out).
fn json_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let json = name.ends_with(".json") || name.ends_with(".json.gz");
        if path.is_file() && json && !name.starts_with('.') {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

fn read_one(path: &Path) -> Result<Loaded, HistoryError> {
    let shown = path.display().to_string();
    let file = if shown.ends_with(".gz") {
        ResultFile::parse(&gunzip(path)?, &shown)?
    } else {
        ResultFile::read(path)?
    };
    // An invocation's start, or else its first run's: both are when it started measuring.
    let start =
        (file.started_at.clone()).or_else(|| file.runs.iter().find_map(|r| r.started_at.clone()));
    let Some(started_at) = start else {
        return Err(HistoryError::NoStart { path: shown });
    };
    let Some(started_ms) = rfc3339_ms(&started_at) else {
        return Err(HistoryError::BadStart {
            path: shown,
            value: started_at,
        });
    };
    Ok(Loaded {
        path: shown,
        file,
        started_at,
        started_ms,
    })
}

/// The text of a gzip-compressed file: a long history kept small (a result file shrinks to
/// about half, to a quarter once its histograms and time series are gone).
fn gunzip(path: &Path) -> Result<String, ReadError> {
    use std::io::Read;
    let io = |source| ReadError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).map_err(io)?)
        .read_to_string(&mut text)
        .map_err(io)?;
    Ok(text)
}

/// Milliseconds since 1970 of an RFC 3339 time (`2026-12-02T17:32:00.842Z`, any number of
/// fraction digits, `Z` or an offset like `+02:00`); None when it is not one.
pub(crate) fn rfc3339_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut at = 19;
    let mut ms = 0i64;
    if b[at] == b'.' {
        let digits = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 {
            return None;
        }
        let frac = &s[at + 1..at + 1 + digits];
        ms = format!("{frac:0<3}")[..3].parse().ok()?;
        at += 1 + digits;
    }
    let offset_min = match &s[at..] {
        "Z" | "z" => 0,
        o if o.len() == 6 && matches!(o.as_bytes()[0], b'+' | b'-') && o.as_bytes()[3] == b':' => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            sign * (num(at + 1..at + 3)? * 60 + num(at + 4..at + 6)?)
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    Some(((days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60) * 1000) + ms)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`,
/// the inverse of `format::civil_from_days`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_3339_times_read_as_milliseconds_since_1970() {
        assert_eq!(rfc3339_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(
            rfc3339_ms("2000-02-29T00:00:00.005Z"),
            Some(951_782_400_005)
        );
        assert_eq!(
            rfc3339_ms("2026-11-30T13:45:07.123Z"),
            Some(1_796_046_307_123)
        );
        assert_eq!(rfc3339_ms("2026-11-30T13:45:07Z"), Some(1_796_046_307_000));
        assert_eq!(
            rfc3339_ms("2026-11-30T15:45:07.1234+02:00"),
            Some(1_796_046_307_123)
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-11-30T13:45:07",
            "2026-11-30T13:45:07.Z",
        ] {
            assert_eq!(rfc3339_ms(bad), None, "{bad}");
        }
    }
}
