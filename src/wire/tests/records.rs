//! The batch reader against kafka-protocol's encoder and decoder, every codec; and garbled
//! batches (truncated, bytes flipped) that must be errors or skips, never panics.

use bytes::{Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use super::super::records::{header, BatchReader};

fn records(base: i64, n: usize) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let mut headers = IndexMap::new();
            headers.insert(
                StrBytes::from_static_str("h"),
                Some(Bytes::from(format!("{i}"))),
            );
            headers.insert(StrBytes::from_static_str("null"), None);
            Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: 0,
                producer_id: -1,
                producer_epoch: -1,
                timestamp_type: TimestampType::Creation,
                offset: base + i as i64,
                sequence: -1,
                timestamp: 1_700_000_000_000 + i as i64,
                key: (i % 3 != 0).then(|| Bytes::from(format!("k{i}"))),
                value: (i % 5 != 0).then(|| Bytes::from(vec![b'a' + (i % 26) as u8; 100])),
                headers,
            }
        })
        .collect()
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

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

#[test]
fn every_codec_reads_as_kafka_protocol_reads_it() {
    for c in CODECS {
        let recs = records(1000, 120);
        let mut data = encode(&recs[..60], c);
        data.extend(encode(&recs[60..], c));
        let mut theirs = Bytes::from(data.clone());
        let sets = RecordBatchDecoder::decode_all(&mut theirs).expect("kafka-protocol decodes");
        let expected: Vec<&Record> = sets.iter().flat_map(|s| &s.records).collect();
        assert_eq!(expected.len(), 120);
        let mut reader = BatchReader::new(1 << 20);
        let mut n = 0;
        reader
            .for_each(&data, |r| {
                let e = expected[n];
                assert_eq!(r.offset, e.offset, "{c:?}");
                assert_eq!(r.timestamp_ms, e.timestamp, "{c:?}");
                assert_eq!(r.key, e.key.as_deref(), "{c:?}");
                assert_eq!(r.value, e.value.as_deref(), "{c:?}");
                let h = e
                    .headers
                    .get(&StrBytes::from_static_str("h"))
                    .cloned()
                    .flatten();
                assert_eq!(header(r.headers, b"h"), h.as_deref());
                assert_eq!(header(r.headers, b"null"), None);
                assert_eq!(header(r.headers, b"absent"), None);
                n += 1;
            })
            .expect("reads");
        assert_eq!(n, 120, "{c:?}");
        // A batch cut short at the end (a fetch's size limit) ends the walk quietly.
        let cut = &data[..data.len() - 7];
        let (mut at, mut want) = (0usize, 0usize);
        while at + 61 <= cut.len() {
            let len = i32::from_be_bytes(cut[at + 8..at + 12].try_into().expect("4")) as usize;
            if at + 12 + len > cut.len() {
                break;
            }
            want += i32::from_be_bytes(cut[at + 57..at + 61].try_into().expect("4")) as usize;
            at += 12 + len;
        }
        let mut m = 0;
        reader
            .for_each(cut, |_| m += 1)
            .expect("reads the whole batches");
        assert!(want < 120 && m == want, "{c:?}: {m} of {want}");
    }
}

#[test]
fn garbled_batches_are_errors_not_panics() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut reader = BatchReader::new(1 << 20);
    for c in CODECS {
        let clean = encode(&records(0, 40), c);
        for round in 0..400 {
            let mut d = clean.clone();
            let flips = 1 + rnd() % 4;
            for _ in 0..flips {
                let at = (rnd() as usize) % d.len();
                d[at] = rnd() as u8;
            }
            if round % 3 == 0 {
                d.truncate((rnd() as usize) % d.len());
            }
            // Past the CRC as well: the record walk itself must hold.
            reader.check_crc = round % 2 == 0;
            let _ = reader.for_each(&d, |r| {
                let _ = (r.key, r.value, header(r.headers, b"h"));
            });
        }
    }
    reader.check_crc = true;
    let mut d = encode(&records(0, 5), Compression::None);
    let last = d.len() - 1;
    d[last] ^= 1;
    let e = reader.for_each(&d, |_| {}).expect_err("a flipped bit");
    assert!(e.contains("CRC"), "{e}");
}
