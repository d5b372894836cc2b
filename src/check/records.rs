//! Payload files cut into records: by a delimiter (newline by default) or length-prefixed.

use std::path::Path;
use std::sync::Arc;

/// A payload file's lines, loaded once per check however many cells use it.
pub(super) type Lines = std::sync::Arc<Vec<Vec<u8>>>;

/// Payload files are read whole into memory: at most this big.
const MAX_PAYLOAD_FILE: u64 = 256 << 20;

/// The bytes of a length prefix: a 4-byte big-endian unsigned length, then that many bytes.
const PREFIX: usize = 4;

/// How a payload file is cut into records: `file("a.jsonl")`, `file("a.txt", delimiter: "|")`,
/// `file("a.bin", format: length_prefixed)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Records {
    /// Records between delimiters; empty ones are skipped. With the default `\n`, a `\r`
    /// before it is dropped too (a file from Windows).
    Delimited(Vec<u8>),
    /// Each record is a 4-byte big-endian length and that many bytes, back to back.
    LengthPrefixed,
}

impl Records {
    pub(super) fn lines() -> Records {
        Records::Delimited(b"\n".to_vec())
    }
}

/// Why a payload file cannot be used: the file itself (missing, not regular, too large), or
/// its content (records that do not fit how it is cut), which has another fix.
#[derive(Clone, Debug)]
pub(super) struct Unusable {
    pub why: String,
    pub in_content: bool,
}

impl Records {
    /// The help for a file whose content does not cut into records this way.
    pub(super) fn fix(&self) -> String {
        match self {
            Records::LengthPrefixed => "each record is a 4-byte big-endian length, then that many bytes; for a text file leave out `format: length_prefixed`".into(),
            Records::Delimited(d) => format!("records are cut at {}; name another with `delimiter: \"...\"`, or use `format: length_prefixed` for binary records", shown(d)),
        }
    }
}

/// Reads a payload file and cuts it into records. Regular files only (stat first: opening a
/// FIFO blocks, and a device such as /dev/zero never ends), and bounded even if the file grows.
pub(super) fn load(path: &Path, records: &Records) -> Result<Lines, Unusable> {
    let data = read(path).map_err(|why| Unusable {
        why,
        in_content: false,
    })?;
    split(&data, records).map(Arc::new).map_err(|why| Unusable {
        why,
        in_content: true,
    })
}

pub(super) fn read(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let reason = |e: std::io::Error| e.to_string().to_lowercase();
    let meta = std::fs::metadata(path).map_err(reason)?;
    if !meta.is_file() {
        return Err("it is not a regular file (a directory, a device, a pipe or a socket)".into());
    }
    let limit = format!("a payload file is at most {} MiB", MAX_PAYLOAD_FILE >> 20);
    if meta.len() > MAX_PAYLOAD_FILE {
        return Err(format!("it is {} MiB; {limit}", meta.len() >> 20));
    }
    let mut data = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_PAYLOAD_FILE + 1).read_to_end(&mut data))
        .map_err(reason)?;
    if data.len() as u64 > MAX_PAYLOAD_FILE {
        return Err(format!("it grew past the limit while read; {limit}"));
    }
    Ok(data)
}

/// The records of a file's bytes.
pub(super) fn split(data: &[u8], records: &Records) -> Result<Vec<Vec<u8>>, String> {
    match records {
        Records::Delimited(d) => {
            let newline = d.as_slice() == b"\n";
            let out: Vec<Vec<u8>> = Pieces {
                rest: data,
                delimiter: d,
            }
            .map(|r| match r.strip_suffix(b"\r") {
                Some(r) if newline => r,
                _ => r,
            })
            .filter(|r| !r.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
            match (out.is_empty(), newline) {
                (false, _) => Ok(out),
                (true, true) => Err("it has no non-empty lines".into()),
                (true, false) => Err(format!(
                    "it has no non-empty records between the delimiters {}",
                    shown(d)
                )),
            }
        }
        Records::LengthPrefixed => length_prefixed(data),
    }
}

/// Back-to-back records, each a 4-byte big-endian length and that many bytes. A record that
/// runs past the end of the file is a mistake (a text file, or a little-endian length), named
/// with its place so it can be found with a hex dump.
fn length_prefixed(data: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let n = out.len() + 1;
        let Some(prefix) = data.get(at..at + PREFIX) else {
            return Err(format!(
                "record {n} at byte {at} has {} bytes of its 4-byte length prefix",
                data.len() - at
            ));
        };
        let len = u32::from_be_bytes(prefix.try_into().expect("4 bytes")) as usize;
        let body = at + PREFIX;
        let Some(record) = data.get(body..body + len) else {
            return Err(format!(
                "record {n} at byte {at} declares {len} bytes, but {} remain",
                data.len() - body
            ));
        };
        out.push(record.to_vec());
        at = body + len;
    }
    if out.is_empty() {
        return Err("it is empty: it has no records".into());
    }
    Ok(out)
}

/// The pieces of `rest` between occurrences of `delimiter` (which is never empty).
struct Pieces<'a> {
    rest: &'a [u8],
    delimiter: &'a [u8],
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let d = self.delimiter;
        match self.rest.windows(d.len()).position(|w| w == d) {
            Some(i) => {
                let piece = &self.rest[..i];
                self.rest = &self.rest[i + d.len()..];
                Some(piece)
            }
            None => Some(std::mem::take(&mut self.rest)),
        }
    }
}

/// A delimiter as it would be written in a string, escapes and all.
pub(super) fn shown(d: &[u8]) -> String {
    let mut s = String::from("\"");
    for &b in d {
        match b {
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            b'\0' => s.push_str("\\0"),
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::{split, Records};

    fn delimited(d: &str) -> Records {
        Records::Delimited(d.as_bytes().to_vec())
    }

    fn texts(records: Vec<Vec<u8>>) -> Vec<String> {
        records
            .into_iter()
            .map(|r| String::from_utf8(r).unwrap())
            .collect()
    }

    #[test]
    fn lines_drop_a_carriage_return_and_skip_empty_lines() {
        let got = split(b"a\r\n\nb\nc", &Records::lines()).unwrap();
        assert_eq!(texts(got), ["a", "b", "c"]);
    }

    #[test]
    fn a_delimiter_of_several_characters_cuts_where_it_stands_whole() {
        let got = split(b"one||two|three||||four||", &delimited("||")).unwrap();
        assert_eq!(texts(got), ["one", "two|three", "four"]);
    }

    #[test]
    fn with_another_delimiter_newlines_are_part_of_a_record() {
        let got = split(b"{\n \"a\": 1\n}\x1e{\"b\": 2}\x1e", &delimited("\x1e")).unwrap();
        assert_eq!(texts(got), ["{\n \"a\": 1\n}", "{\"b\": 2}"]);
    }

    #[test]
    fn a_file_without_a_record_between_its_delimiters_is_refused_naming_the_delimiter() {
        let why = split(b"|||", &delimited("|")).unwrap_err();
        assert_eq!(
            why,
            "it has no non-empty records between the delimiters \"|\""
        );
        assert_eq!(
            split(b"\n\n", &Records::lines()).unwrap_err(),
            "it has no non-empty lines"
        );
    }

    #[test]
    fn length_prefixed_records_are_a_big_endian_length_then_that_many_bytes() {
        let data = [
            &[0, 0, 0, 3][..],
            b"abc",
            &[0, 0, 0, 0],
            &[0, 0, 1, 0],
            &[7; 256],
        ]
        .concat();
        let got = split(&data, &Records::LengthPrefixed).unwrap();
        assert_eq!(got, [b"abc".to_vec(), vec![], vec![7; 256]]);
    }

    #[test]
    fn a_length_prefixed_record_past_the_end_of_the_file_is_refused_with_its_place() {
        let data = [&[0, 0, 0, 2][..], b"ab", &[0, 0, 0, 9], b"abc"].concat();
        let why = split(&data, &Records::LengthPrefixed).unwrap_err();
        assert!(
            why.starts_with("record 2 at byte 6 declares 9 bytes, but 3 remain"),
            "{why}"
        );
        let why = split(&[0, 0, 0, 1, b'x', 0, 0], &Records::LengthPrefixed).unwrap_err();
        assert!(
            why.starts_with("record 2 at byte 5 has 2 bytes of its 4-byte length prefix"),
            "{why}"
        );
    }
}
