//! The record-batch reader against hostile batches: record counts of i32::MAX, decompression
//! bombs in every codec, and random mutations of batches kafka-protocol encodes. Each is read
//! or refused with no panic, and with no allocation past its bound: the reader's one
//! decompression buffer, at most twice its cap as a Vec grows (zstd's and lz4's C contexts
//! are not counted: zstd's window is capped at 128 MiB by its own default).

use bytes::{Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use proptest::prelude::*;

use super::super::records::{header, BatchReader};
use super::alloc::measure;

/// Random cases per CI run (each reads two batches), unless PROPTEST_CASES says otherwise.
const CI_CASES: u32 = 20_000;

/// The reader's bound on one batch's decompressed size, here.
const CAP: usize = 1 << 20;

/// The largest allocation reading may make: the buffer's growth past CAP, and a codec's own
/// blocks (lz4's are at most 4 MiB, allocated in C).
const LARGEST: usize = 2 * CAP + (256 << 10);

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn record(i: usize, value: Bytes) -> Record {
    let mut headers = IndexMap::new();
    headers.insert(
        StrBytes::from_static_str("h"),
        Some(Bytes::from(format!("{i}"))),
    );
    Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset: i as i64,
        sequence: -1,
        timestamp: 1_700_000_000_000 + i as i64,
        key: Some(Bytes::from(format!("k{i}"))),
        value: Some(value),
        headers,
    }
}

fn encode(recs: &[Record], compression: Compression) -> Vec<u8> {
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        recs,
        &RecordEncodeOptions {
            version: 2,
            compression,
        },
    )
    .expect("encode");
    buf.to_vec()
}

/// Set a single batch's CRC to match its bytes (so a mutation is read past the check).
fn fix_crc(batch: &mut [u8]) {
    let crc = crc32c::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
}

fn read(reader: &mut BatchReader, data: &[u8]) -> Result<usize, String> {
    let mut n = 0;
    let (r, a) = measure(|| {
        reader.for_each(data, |r| {
            let _ = (r.key, r.value, header(r.headers, b"h"));
            n += 1;
        })
    });
    assert!(a.largest <= LARGEST, "an allocation of {} bytes", a.largest);
    r.map(|()| n)
}

#[test]
fn a_record_count_of_i32_max_is_an_error_without_allocating() {
    for c in CODECS {
        let mut batch = encode(&[record(0, Bytes::from_static(b"v"))], c);
        batch[57..61].copy_from_slice(&i32::MAX.to_be_bytes());
        fix_crc(&mut batch);
        let mut reader = BatchReader::new(CAP);
        let e = read(&mut reader, &batch).expect_err("2^31 records in one");
        assert!(e.contains("garbled record"), "{c:?}: {e}");
    }
}

#[test]
fn decompression_bombs_stop_at_the_cap() {
    // 8 MiB of zeros compresses to kilobytes: eight times what the reader will inflate.
    let bomb = Bytes::from(vec![0u8; 8 * CAP]);
    for c in CODECS.into_iter().skip(1) {
        let batch = encode(&[record(0, bomb.clone())], c);
        assert!(batch.len() < CAP, "{c:?} compresses the bomb");
        let mut reader = BatchReader::new(CAP);
        let e = read(&mut reader, &batch).expect_err("past the cap");
        assert!(e.contains("more than"), "{c:?}: {e}");
    }
}

fn seeds() -> &'static [Vec<u8>] {
    static S: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        CODECS
            .iter()
            .map(|&c| {
                let recs: Vec<Record> = (0..20)
                    .map(|i| record(i, Bytes::from(vec![b'a' + i as u8; 50 + i])))
                    .collect();
                let mut d = encode(&recs[..10], c);
                d.extend(encode(&recs[10..], c));
                d
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(super::fuzz::config(CI_CASES))]

    #[test]
    fn mutated_batches_never_panic_nor_allocate_past_the_cap(
        seed in any::<usize>(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..5),
        // A hostile INT32 (a record count or batch length) somewhere, and maybe a cut.
        int in proptest::option::of((any::<usize>(), prop_oneof![
            Just(i32::MAX), Just(i32::MIN), Just(-1), any::<i32>()
        ])),
        cut in proptest::option::weighted(0.3, any::<usize>()),
        crc in any::<bool>(),
    ) {
        let mut d = seeds()[seed % seeds().len()].clone();
        if let Some((at, v)) = int {
            let at = at % (d.len() - 4);
            d[at..at + 4].copy_from_slice(&v.to_be_bytes());
        }
        for (at, byte) in flips {
            let i = at % d.len();
            d[i] = byte;
        }
        if let Some(c) = cut {
            d.truncate(c % (d.len() + 1));
        }
        // Past the CRC too, half the time, so the record walk itself is tried.
        let mut reader = BatchReader::new(CAP);
        reader.check_crc = crc;
        let _ = read(&mut reader, &d);
    }
}
