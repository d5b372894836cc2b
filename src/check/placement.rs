//! Keys placed differently by the clients a scenario compares: librdkafka hashes a key with
//! CRC32 by default (`consistent_random`), the Java client and franz-go with murmur2, so the
//! same key lands on another partition, and per-partition load and key order differ between
//! the runs. A note, in `check` and `plan`, with the way to align them.

use super::Checker;
use crate::diagnostic::{Diagnostic, Kind};
use crate::model::client::differences::{placement, Placement};
use crate::model::client::names;
use crate::model::{Cell, ClientKind, KeySpec, Side};
use crate::source::Span;

/// A keyed cell's producer: where it puts a key.
pub(super) struct Placed {
    label: String,
    client: ClientKind,
    placement: Placement,
    /// Where the producer's `client` was written in this cell.
    client_at: Option<Span>,
}

impl Checker<'_> {
    /// Records where a cell's producer puts its keys (a cell without keys, or with one
    /// partition, places nothing).
    pub(super) fn placed(&mut self, cell: &Cell, client_at: Option<Span>) {
        let spec = &cell.spec;
        let one_partition = !spec.topic.existing && spec.topic.partitions == 1;
        if matches!(spec.workload.key, KeySpec::None) || one_partition {
            return;
        }
        let client = spec.producer_client;
        let get = |k: &str| {
            (spec.producer.get(k))
                .or_else(|| spec.client.get(k))
                .or_else(|| names::default_of(client, Side::Producer, k))
        };
        self.placements.push(Placed {
            label: cell.label(),
            client,
            placement: placement(client, get),
            client_at,
        });
    }

    /// The note, once every cell is placed: runs on different clients whose keys go to
    /// different partitions.
    pub(super) fn placement_note(&mut self) {
        let p = std::mem::take(&mut self.placements);
        let differs = |a: &Placed| {
            p.iter()
                .any(|b| b.client != a.client && b.placement != a.placement)
        };
        let Some((first, at)) = (p.iter())
            .filter(|a| differs(a))
            .find_map(|a| Some((a, a.client_at?)))
        else {
            return;
        };
        let mut groups: Vec<(ClientKind, &Placement, Vec<&str>)> = Vec::new();
        for a in &p {
            match groups
                .iter_mut()
                .find(|(c, pl, _)| *c == a.client && **pl == a.placement)
            {
                Some(g) => g.2.push(&a.label),
                None => groups.push((a.client, &a.placement, vec![&a.label])),
            }
        }
        let said: Vec<String> = groups
            .iter()
            .map(|(c, pl, labels)| {
                format!(
                    "{} by {} in `{}`",
                    c.described(),
                    pl.describe(),
                    labels.join("`, `")
                )
            })
            .collect();
        let crc = groups
            .iter()
            .any(|(c, pl, _)| *c == ClientKind::Librdkafka && **pl == Placement::Crc32);
        let help = if crc {
            "the same key lands on another partition, so per-partition load and each key's order differ between these runs; give librdkafka murmur2 as the others have it: `partitioner = murmur2_random` in a librdkafka producer's block (in a comparison, a step per client: `steps { librdkafka { producer.client = librdkafka  producer.partitioner = murmur2_random }  java { producer.client = java } }`)"
        } else {
            "the same key lands on another partition, so per-partition load and each key's order differ between these runs; give every client the same placement (murmur2 on all three: librdkafka's `partitioner = murmur2_random`, the Java client's default, franz-go's)"
        };
        let note = Diagnostic::note(
            Kind::KeyPlacement,
            at,
            "the clients compared here place keys on different partitions",
        )
        .label(format!(
            "{}: keys by {}",
            first.client,
            first.placement.describe()
        ))
        .help(format!("{}; {help}", said.join("; ")));
        self.notes.push(note);
    }
}
