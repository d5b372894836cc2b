//! The digest every participant of a sharded run compares: of the scenario's texts (main file,
//! then its includes in the order met, secrets masked, as every shard masks them alike) and, for
//! a live run, its payload data files (and sizes files). Paths are left out: they depend on where each machine
//! keeps the files, and the include lines in the texts already name them. FNV-1a: a check that
//! the shards ran one scenario, not a defence against forgery.

use std::collections::HashSet;

use crate::model::PayloadSpec;
use crate::plan::Plan;
use crate::source::Sources;

/// The digest of everything a live participant's scenario reads: its texts and its payload
/// data files. Shards of one run must all have the same.
pub(crate) fn of_run(sources: &Sources, p: &Plan) -> String {
    let texts = shown_texts(sources);
    let mut seen = HashSet::new();
    let data = p.runs.iter().filter_map(|rp| match &rp.workload.payload {
        PayloadSpec::File { lines, .. } if seen.insert(std::sync::Arc::as_ptr(lines)) => {
            Some(lines.iter().map(Vec::as_slice))
        }
        _ => None,
    });
    // A schema payload's schema text (and its encoded lines) are data files too.
    let mut schemas: Vec<&[u8]> = Vec::new();
    let mut seen_schemas = HashSet::new();
    for rp in &p.runs {
        let (value, key) = (&rp.workload.payload, &rp.workload.key);
        let spec = [
            match value {
                PayloadSpec::Schema(s) => Some(s),
                _ => None,
            },
            match key {
                crate::model::KeySpec::Schema(s) => Some(s),
                _ => None,
            },
        ];
        for s in spec.into_iter().flatten() {
            if seen_schemas.insert(std::sync::Arc::as_ptr(&s.schema) as usize) {
                schemas.push(s.schema.text().as_bytes());
            }
            if let Some(lines) = s
                .encoded
                .as_ref()
                .filter(|l| seen_schemas.insert(std::sync::Arc::as_ptr(l) as usize))
            {
                schemas.extend(lines.iter().map(Vec::as_slice));
            }
        }
    }
    // A `sizes("…")` file's histogram, as the table compiled from it.
    let mut seen_sizes = HashSet::new();
    let sizes: Vec<Vec<u8>> = (p.runs.iter())
        .filter_map(|rp| rp.workload.payload.size()?.dist())
        .filter(|d| d.shape.file().is_some() && seen_sizes.insert(std::sync::Arc::as_ptr(d)))
        .map(|d| d.table.digest_bytes())
        .collect();
    digest(
        texts
            .iter()
            .map(String::as_bytes)
            .chain(data.flatten())
            .chain(schemas)
            .chain(sizes.iter().map(Vec::as_slice)),
    )
}

/// The digest of the texts a result file carries (main text, then the includes' texts);
/// `merge` compares result files by it.
pub(super) fn of_texts<'a>(main: &'a str, includes: impl Iterator<Item = &'a str>) -> String {
    digest(std::iter::once(main).chain(includes).map(str::as_bytes))
}

/// The same digest of scenario sources as they were loaded here.
pub(super) fn of_sources(sources: &Sources) -> String {
    digest(shown_texts(sources).iter().map(String::as_bytes))
}

fn shown_texts(sources: &Sources) -> Vec<String> {
    sources.ids().map(|id| sources.shown_text(id)).collect()
}

/// FNV-1a over the pieces, each ended by a 0 byte, in hex.
fn digest<'a>(pieces: impl Iterator<Item = &'a [u8]>) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for t in pieces {
        for b in t.iter().copied().chain([0u8]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}
