//! OMB's `payloadFile` as a kafkabench payload: one whole file sent as every record, where
//! kafkabench's `file()` sends a file's lines (or pieces cut at a delimiter), so the file is
//! written as `file()`, its text, or `file()` cut at a delimiter it never holds.

use std::path::{Path, PathBuf};

use super::kbs;
use super::workload::Input;

/// A payload as written in the scenario: the value, its trailing comment, a note above it.
pub(super) struct Payload {
    pub value: String,
    pub comment: String,
    pub note: Option<String>,
}

/// The payload file, found where OMB would read it (its working folder, which for OMB's own
/// layout is the workload folder's parent), as one constant record; Err is (message, help).
pub(super) fn payload_file(
    written: &str,
    size: u64,
    input: &Input,
) -> Result<Payload, (String, String)> {
    let dir = input.path.parent().unwrap_or(Path::new(""));
    let mut tried: Vec<PathBuf> = vec![PathBuf::from(written), dir.join(written)];
    if let Some(up) = dir.parent() {
        tried.push(up.join(written));
    }
    let Some(path) = tried.iter().find(|p| p.is_file()) else {
        let shown: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
        return Err((
            format!("cannot find the payload file `{written}`"),
            format!(
                "OMB reads it relative to the folder it runs in; looked for {}",
                shown.join(", ")
            ),
        ));
    };
    let bytes = std::fs::read(path).map_err(|e| {
        (
            format!("cannot read the payload file {}: {e}", path.display()),
            "make the file readable".to_string(),
        )
    })?;
    if bytes.len() as u64 != size {
        return Err((
            format!(
                "the payload file holds {} bytes, but `messageSize` is {size}",
                bytes.len()
            ),
            format!(
                "OMB refuses this too (payload length mismatch): set `messageSize: {}`",
                bytes.len()
            ),
        ));
    }
    // file() sends a file's lines in turn: a file without a line break is one record, exactly
    // OMB's constant payload.
    if !bytes.contains(&b'\n') && bytes.last() != Some(&b'\r') {
        return Ok(Payload {
            value: format!("file({})", kbs::string(&relative(path, input.out_dir))),
            comment: "payloadFile: one line, so every record is the whole file".into(),
            note: None,
        });
    }
    match String::from_utf8(bytes.clone()) {
        Ok(text) if kbs::stringable(&text) && text.len() <= 64 * 1024 => Ok(Payload {
            value: format!("constant({})", kbs::string(&text)),
            comment: format!("payloadFile {written}"),
            note: Some(format!(
                "{written} has line breaks, and file() would send each line as a record: its text is written here"
            )),
        }),
        _ => Ok(match absent_delimiter(&bytes) {
            // file() cuts at its delimiter: one that never occurs leaves the whole file one
            // record, byte for byte.
            Some(d) => Payload {
                value: format!(
                    "file({}, delimiter: {})",
                    kbs::string(&relative(path, input.out_dir)),
                    kbs::string(&d)
                ),
                comment: format!("payloadFile {written}: one record, the whole file"),
                note: Some(format!(
                    "{written} has line breaks: cut at `{d}`, which it never holds, every record is the whole file"
                )),
            },
            None => Payload {
                value: format!("constant(size: {size}B)"),
                comment: format!("payloadFile {written}: its size, not its bytes"),
                note: Some(format!(
                    "{written} holds every short delimiter `file()` could cut at, so it cannot be sent whole;\nthe nearest is a constant payload of the same size (other bytes: compression figures may differ)"
                )),
            },
        }),
    }
}

/// A delimiter of one or two printable characters the bytes never hold, if there is one.
fn absent_delimiter(bytes: &[u8]) -> Option<String> {
    // Printable ASCII a string literal writes without escapes or templating.
    let usable: Vec<u8> = (b'!'..=b'~')
        .filter(|c| !matches!(c, b'"' | b'\\' | b'{' | b'}'))
        .collect();
    let mut singles = [false; 256];
    let mut pairs = vec![false; 1 << 16];
    for (i, b) in bytes.iter().enumerate() {
        singles[*b as usize] = true;
        if let Some(next) = bytes.get(i + 1) {
            pairs[(*b as usize) << 8 | *next as usize] = true;
        }
    }
    if let Some(c) = usable.iter().find(|c| !singles[**c as usize]) {
        return Some((*c as char).to_string());
    }
    usable
        .iter()
        .flat_map(|a| usable.iter().map(move |b| (*a, *b)))
        .find(|(a, b)| !pairs[(*a as usize) << 8 | *b as usize])
        .map(|(a, b)| format!("{}{}", a as char, b as char))
}

/// `path` as seen from `dir`, or absolute when that cannot be said.
fn relative(path: &Path, dir: &Path) -> String {
    let (Ok(p), Ok(d)) = (path.canonicalize(), dir.canonicalize()) else {
        return path.display().to_string();
    };
    let common = p
        .components()
        .zip(d.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in d.components().skip(common) {
        out.push("..");
    }
    for c in p.components().skip(common) {
        out.push(c);
    }
    out.display().to_string()
}
