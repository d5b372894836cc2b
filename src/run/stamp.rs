//! The end-to-end stamp: the record header the producer writes and the consumer reads back.
//!
//! 21 bytes, little-endian: intended send time (ns since the run's clock origin, 8), producer
//! id (4), the producer's sequence number (8), and a flags byte: bit 0 measured (warm-up records
//! are read back but not counted), bit 1 in a transaction the producer will abort (a
//! read_committed consumer must never see it), bit 2 a backlog record (written before the clock
//! started: read and verified, but no end-to-end latency).

/// The header key the stamp travels under.
pub(super) const HEADER: &str = "kb";
/// The same key for librdkafka's C API.
pub(super) const HEADER_C: &std::ffi::CStr = c"kb";
/// Encoded length; a header of another length under `HEADER` is not ours.
pub(super) const LEN: usize = 21;

/// What the consumer needs to know about one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    pub intended_ns: u64,
    pub producer: u32,
    pub seq: u64,
    pub measured: bool,
    pub aborted: bool,
    pub backlog: bool,
}

const MEASURED: u8 = 1;
const ABORTED: u8 = 2;
const BACKLOG: u8 = 4;

/// Writes `stamp` into a reused buffer (the hot path allocates nothing for it).
#[inline]
pub(super) fn encode(stamp: &Stamp, out: &mut [u8; LEN]) {
    out[..8].copy_from_slice(&stamp.intended_ns.to_le_bytes());
    out[8..12].copy_from_slice(&stamp.producer.to_le_bytes());
    out[12..20].copy_from_slice(&stamp.seq.to_le_bytes());
    out[20] = if stamp.measured { MEASURED } else { 0 }
        | if stamp.aborted { ABORTED } else { 0 }
        | if stamp.backlog { BACKLOG } else { 0 };
}

/// The stamp in a header value; None when the value is not a stamp.
pub(super) fn decode(value: &[u8]) -> Option<Stamp> {
    let bytes: &[u8; LEN] = value.try_into().ok()?;
    let (intended, rest) = bytes.split_at(8);
    let (producer, rest) = rest.split_at(4);
    let (seq, flags) = rest.split_at(8);
    Some(Stamp {
        intended_ns: u64::from_le_bytes(intended.try_into().ok()?),
        producer: u32::from_le_bytes(producer.try_into().ok()?),
        seq: u64::from_le_bytes(seq.try_into().ok()?),
        measured: flags[0] & MEASURED != 0,
        aborted: flags[0] & ABORTED != 0,
        backlog: flags[0] & BACKLOG != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_reads_back_as_written() {
        let stamp = Stamp {
            intended_ns: 123_456_789_012,
            producer: 7,
            seq: u64::MAX - 1,
            measured: true,
            aborted: false,
            backlog: false,
        };
        let mut buf = [0u8; LEN];
        encode(&stamp, &mut buf);
        assert_eq!(decode(&buf), Some(stamp));
        for (aborted, backlog) in [(true, false), (false, true), (true, true)] {
            let other = Stamp {
                measured: false,
                aborted,
                backlog,
                ..stamp
            };
            encode(&other, &mut buf);
            assert_eq!(decode(&buf), Some(other));
        }
    }

    #[test]
    fn a_header_of_another_length_is_not_a_stamp() {
        assert_eq!(decode(&[0u8; LEN - 1]), None);
        assert_eq!(decode(&[0u8; LEN + 1]), None);
    }
}
