//! Rough figures, run by hand (`cargo test --release --lib wire::tests::bench -- --ignored`):
//! the batch reader against kafka-protocol's decoder, and one share consumer acquiring and
//! accepting a pre-filled topic. Figures go to the file WIRE_BENCH_OUT (default
//! $TMPDIR/wire-bench.txt): this module writes nothing to the terminal.

use std::io::Write as _;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use super::super::records::BatchReader;
use super::super::{AckKind, ShareConsumer};
use super::{config, create_topic, produce_with, share_group, unique};

fn note(line: &str) {
    let path = std::env::var("WIRE_BENCH_OUT").unwrap_or_else(|_| {
        std::env::temp_dir()
            .join("wire-bench.txt")
            .to_string_lossy()
            .into_owned()
    });
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("bench notes file");
    writeln!(f, "{line}").expect("written");
}

#[test]
#[ignore = "a benchmark, run by hand"]
fn decode_speed_against_kafka_protocol() {
    let recs: Vec<Record> = (0..500)
        .map(|i| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i,
            sequence: -1,
            timestamp: 1_700_000_000_000 + i,
            key: None,
            value: Some(Bytes::from(vec![b'v'; 100])),
            headers: IndexMap::new(),
        })
        .collect();
    for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
        let mut one = BytesMut::new();
        let opts = RecordEncodeOptions {
            version: 2,
            compression: c,
        };
        RecordBatchEncoder::encode(&mut one, &recs, &opts).expect("encode");
        // 200 batches of 500 records: 100k records, as a few fetch responses would hold.
        let data: Vec<u8> = one.iter().copied().cycle().take(one.len() * 200).collect();
        let n = 100_000f64;
        let mut reader = BatchReader::new(64 << 20);
        let t = Instant::now();
        let mut sum = 0usize;
        for _ in 0..5 {
            reader
                .for_each(&data, |r| sum += r.value.map_or(0, <[u8]>::len))
                .expect("reads");
        }
        let ours = 5.0 * n / t.elapsed().as_secs_f64();
        let t = Instant::now();
        for _ in 0..5 {
            let mut b = Bytes::from(data.clone());
            for set in RecordBatchDecoder::decode_all(&mut b).expect("decodes") {
                sum += set
                    .records
                    .iter()
                    .map(|r| r.value.as_ref().map_or(0, Bytes::len))
                    .sum::<usize>();
            }
        }
        let theirs = 5.0 * n / t.elapsed().as_secs_f64();
        assert!(sum > 0);
        note(&format!(
            "decode {c:?}: batch reader {:.1} M records/s, kafka-protocol {:.1} M records/s",
            ours / 1e6,
            theirs / 1e6
        ));
    }
}

#[test]
#[ignore = "a benchmark, run by hand"]
fn one_consumer_acquires_and_accepts_a_prefilled_topic() {
    // WIRE_BENCH_TOPIC reuses a filled topic (and WIRE_BENCH_RECORDS says how many it holds).
    let n: usize = std::env::var("WIRE_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let topic = match std::env::var("WIRE_BENCH_TOPIC") {
        Ok(t) => t,
        Err(_) => {
            let t = unique("bench");
            create_topic(&t, 1);
            let t0 = Instant::now();
            produce_with(
                &t,
                n,
                &[("linger.ms", "50"), ("batch.size", "1000000")],
                |_| vec![b'x'; 100],
            );
            note(&format!(
                "bench topic {t}: {n} records of 100 B produced in {:?}",
                t0.elapsed()
            ));
            t
        }
    };
    let group = share_group(&[]);
    let mut cfg = config(&group, &[&topic]);
    cfg.max_wait = Duration::from_millis(500);
    cfg.max_records = 500;
    let joined = Instant::now();
    let mut c = ShareConsumer::join(cfg).expect("join");
    let mut got = 0usize;
    let mut accepted = 0u64;
    let mut first: Option<Instant> = None;
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut batch = Vec::with_capacity(4096);
    while got < n && Instant::now() < deadline {
        batch.clear();
        let out = c
            .poll(|r| batch.push((r.topic, r.partition, r.offset)))
            .expect("poll");
        accepted += out.acks.accepted;
        if !batch.is_empty() {
            first.get_or_insert_with(Instant::now);
        }
        got += batch.len();
        for &(t, p, o) in &batch {
            c.ack(t, p, o, AckKind::Accept);
        }
    }
    let took = first.map_or(Duration::ZERO, |f| f.elapsed());
    let all = joined.elapsed();
    accepted += c.close().expect("close").accepted;
    assert_eq!(got, n);
    assert_eq!(accepted, n as u64);
    note(&format!(
        "share consumer, 1 thread, max_records 500: {n} records acquired+accepted in {took:?} \
         from the first record ({:.0} records/s), {all:?} from join ({:.0} records/s); topic {topic}",
        n as f64 / took.as_secs_f64(),
        n as f64 / all.as_secs_f64()
    ));
}
