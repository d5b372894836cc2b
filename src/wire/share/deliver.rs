//! From a partition's fetched batches to the callback: only offsets this member acquired, with
//! their delivery count; acquired offsets without a record are acknowledged as gaps.

use kafka_protocol::messages::share_fetch_response::AcquiredRecords;

use super::super::records::BatchReader;
use super::acks::Acks;
use super::Acquired;

/// Hand the acquired records of one partition to `f`; acquired offsets that hold no record
/// (transaction markers, compacted away) are acknowledged as gaps, as Kafka's client does.
#[allow(clippy::too_many_arguments)]
pub(super) fn deliver(
    reader: &mut BatchReader,
    t: usize,
    partition: i32,
    data: &[u8],
    acquired: &[AcquiredRecords],
    acks: &mut Acks,
    f: &mut impl FnMut(&Acquired<'_>),
    count: &mut usize,
) -> Result<(), String> {
    // A hostile range must not make us loop for ever: no fetch acquires this many offsets.
    const MAX_RANGE: i64 = 1 << 24;
    if acquired.is_empty() {
        return Ok(());
    }
    for a in acquired {
        let span = a.last_offset.checked_sub(a.first_offset);
        if span.map_or(true, |d| !(0..=MAX_RANGE).contains(&d)) || a.last_offset == i64::MAX {
            return Err(format!(
                "acquired range {}..={} is implausible",
                a.first_offset, a.last_offset
            ));
        }
    }
    // The cursor: range index and the next acquired offset in it.
    let mut ri = 0usize;
    let mut next = acquired[0].first_offset;
    let r = reader.for_each(data, |rec| {
        while ri < acquired.len() {
            if next > acquired[ri].last_offset {
                ri += 1;
                if let Some(a) = acquired.get(ri) {
                    next = next.max(a.first_offset);
                }
                continue;
            }
            if rec.offset < next {
                return; // not acquired by us
            }
            if rec.offset == next {
                f(&Acquired {
                    topic: t,
                    partition,
                    offset: rec.offset,
                    delivery_count: acquired[ri].delivery_count,
                    timestamp_ms: rec.timestamp_ms,
                    key: rec.key,
                    value: rec.value,
                    headers: rec.headers,
                });
                *count += 1;
                next += 1;
                return;
            }
            acks.push_gap(t, partition, next);
            next += 1;
        }
    });
    // Acquired offsets past the last record: gaps too.
    while ri < acquired.len() {
        if next > acquired[ri].last_offset {
            ri += 1;
            if let Some(a) = acquired.get(ri) {
                next = next.max(a.first_offset);
            }
            continue;
        }
        acks.push_gap(t, partition, next);
        next += 1;
    }
    r
}
