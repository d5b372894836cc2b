//! A histogram of a real topic's record sizes (`size: sizes("data/sizes.csv")`): one
//! `size,count` line per size, read into a size table.

use std::path::Path;
use std::sync::Arc;

use super::records::{self, Unusable};
use crate::model::{Bin, SizeDist, SizeShape, SizeTable, LARGEST_PAYLOAD};

/// Distinct sizes a file holds at most: a table of them is drawn from per record.
const MAX_DISTINCT: usize = 100_000;

/// The format, as the help of a file that does not follow it says it.
pub(super) const FORMAT: &str = "one `size,count` line per size: the size in bytes (1 to 67108864) and how many records had it; a first line `size,count`, blank lines and `#` comments are skipped";

/// A sizes file read and compiled, or why it cannot be used.
pub(super) type Loaded = Result<Arc<SizeDist>, Unusable>;

pub(super) fn load(path: &Path) -> Loaded {
    let data = records::read(path).map_err(|why| Unusable {
        why,
        in_content: false,
    })?;
    let bins = parse(&data).map_err(|why| Unusable {
        why,
        in_content: true,
    })?;
    let records: u64 = bins.iter().map(|b| b.weight).sum();
    let distinct = bins.len();
    let table = SizeTable::new(bins).ok_or_else(|| Unusable {
        why: "it counts no record".into(),
        in_content: true,
    })?;
    Ok(Arc::new(SizeDist::new(
        SizeShape::Sizes {
            path: path.to_path_buf(),
            distinct,
            records,
        },
        table,
    )))
}

/// The file's sizes and counts, in increasing size order (a size given twice counts both).
fn parse(data: &[u8]) -> Result<Vec<Bin>, String> {
    let text = std::str::from_utf8(data).map_err(|_| "it is not UTF-8 text".to_string())?;
    let mut counts: std::collections::BTreeMap<u32, u64> = Default::default();
    let mut first = true;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let no = i + 1;
        let fields: Vec<&str> = line.split([',', '\t']).map(str::trim).collect();
        let header = first && !fields[0].starts_with(|c: char| c.is_ascii_digit());
        first = false;
        if header {
            continue;
        }
        let [size, count] = fields[..] else {
            return Err(format!(
                "line {no} has {} fields, not 2 (`{}`)",
                fields.len(),
                shown(line)
            ));
        };
        let size: u64 = size.parse().map_err(|_| {
            format!(
                "line {no}: `{}` is not a whole number of bytes",
                shown(size)
            )
        })?;
        if !(1..=LARGEST_PAYLOAD as u64).contains(&size) {
            return Err(format!(
                "line {no}: a size of {size} bytes is out of range (1 B to 64 MiB; a record without a value is a tombstone, `tombstones = 1%`)"
            ));
        }
        let count: u64 = count
            .parse()
            .map_err(|_| format!("line {no}: `{}` is not a whole count", shown(count)))?;
        let sum = counts.entry(size as u32).or_default();
        *sum = sum
            .checked_add(count)
            .ok_or_else(|| format!("line {no}: the counts of {size} bytes overflow"))?;
        if counts.len() > MAX_DISTINCT {
            return Err(format!("it has over {MAX_DISTINCT} distinct sizes"));
        }
    }
    Ok(counts
        .into_iter()
        .map(|(lo, weight)| Bin {
            lo,
            span: 1,
            weight,
        })
        .collect())
}

/// A line or field as a diagnostic quotes it: at most 40 characters.
fn shown(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_comments_and_repeated_sizes_are_read() {
        let bins =
            parse(b"size,count\n# from kafka-dump-log\n100, 7\n\n4096\t3\n100,1\r\n").unwrap();
        let got: Vec<(u32, u64)> = bins.iter().map(|b| (b.lo, b.weight)).collect();
        assert_eq!(got, [(100, 8), (4096, 3)]);
    }

    #[test]
    fn a_wrong_line_is_named() {
        assert_eq!(
            parse(b"100,1\n2KiB,3\n").unwrap_err(),
            "line 2: `2KiB` is not a whole number of bytes"
        );
        assert!(parse(b"100,1,2\n")
            .unwrap_err()
            .starts_with("line 1 has 3 fields"));
        assert!(parse(b"0,5\n").unwrap_err().contains("out of range"));
        assert!(parse(b"5,-1\n").unwrap_err().contains("not a whole count"));
    }
}
