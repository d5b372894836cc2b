//! `${NAME:-default}` placeholders: fgelcer's fork of OMB fills them from the environment
//! (Apache commons-text's `StrSubstitutor`, `PlaceHolderUtils`) in the whole file before it
//! reads a workload or driver file as YAML. The import reads each as its default, and says so.

use crate::source::{FileId, Sources, Span};

/// One placeholder filled with its default: where it is in the file as written.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Filled {
    pub placeholder: String,
    pub default: String,
    pub at: usize,
}

/// The text with each `${NAME:-default}` replaced by its default, and what was filled. Every
/// line keeps its length (padded with spaces at its end, which YAML and Java properties
/// ignore), so offsets into the file as written still hold for the other lines. Comment lines
/// and `${NAME}` without a default are left as they are; a secret property's are filled but
/// not listed.
pub(super) fn fill(text: &str) -> (String, Vec<Filled>) {
    let mut out = String::with_capacity(text.len());
    let mut filled = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let end = &line[body.len()..];
        let mut new = String::with_capacity(body.len());
        let mut rest = body;
        let mut at = offset;
        let key = body
            .trim_start()
            .split(['=', ':', ' ', '\t'])
            .next()
            .unwrap_or("");
        let secret = crate::model::is_secret(key);
        while let Some(i) = rest
            .find("${")
            .filter(|_| !body.trim_start().starts_with('#'))
        {
            let Some((len, name_default)) = rest[i + 2..]
                .find('}')
                .map(|j| (j + 3, &rest[i + 2..i + 2 + j]))
            else {
                break;
            };
            new.push_str(&rest[..i]);
            match name_default.split_once(":-") {
                Some((name, default)) if is_name(name) => {
                    new.push_str(default);
                    // A secret's text is never quoted, nor what fills it (a JAAS user name).
                    if !secret {
                        filled.push(Filled {
                            placeholder: rest[i..i + len].to_string(),
                            default: default.to_string(),
                            at: at + i,
                        });
                    }
                }
                _ => new.push_str(&rest[i..i + len]),
            }
            at += i + len;
            rest = &rest[i + len..];
        }
        new.push_str(rest);
        // A properties line ending in `\` continues: padding would end it.
        if !new.ends_with('\\') {
            new.push_str(&" ".repeat(body.len().saturating_sub(new.len())));
        }
        out.push_str(&new);
        out.push_str(end);
        offset += line.len();
    }
    (out, filled)
}

fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// A comment for each placeholder (once each), and a warning at its first place.
pub(super) fn said(
    filled: &[Filled],
    sources: &Sources,
    file: FileId,
) -> (Vec<String>, Vec<String>) {
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for f in filled {
        if seen.contains(&f.placeholder.as_str()) {
            continue;
        }
        seen.push(&f.placeholder);
        notes.push(format!(
            "{}: a placeholder fgelcer's fork of OMB fills from the environment before it reads the file; read as its default, `{}`",
            f.placeholder, f.default
        ));
        let span = Span::new(file, f.at, f.at + f.placeholder.len());
        warnings.push(super::warning(
            sources,
            span,
            &format!(
                "`{}` is a placeholder (fgelcer's fork fills it from the environment): read as its default `{}`",
                f.placeholder, f.default
            ),
        ));
    }
    (notes, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_is_its_default_and_every_line_keeps_its_length() {
        let text = "# ${x:-no}\ntestDurationMinutes: ${ombTestDuration:-15}\nc: |\n  a=${url:-h:9092} b=${t}\n  sasl.jaas.config=x u='${u:-me}'\n";
        let (out, filled) = fill(text);
        assert_eq!(out.len(), text.len());
        let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            [
                "# ${x:-no}",
                "testDurationMinutes: 15",
                "c: |",
                "  a=h:9092 b=${t}",
                "  sasl.jaas.config=x u='me'"
            ]
        );
        let at = text.find("${omb").unwrap();
        assert_eq!(
            filled[0],
            Filled {
                placeholder: "${ombTestDuration:-15}".into(),
                default: "15".into(),
                at
            }
        );
        assert_eq!(&text[filled[1].at..][..14], "${url:-h:9092}");
        assert_eq!(filled.len(), 2, "the JAAS user's placeholder is not listed");
    }
}
