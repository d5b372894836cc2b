//! The shared test vectors (`clients/vectors/generator.json`): what kafkabench's generator and
//! schedule give for fixed seeds and rates, which every worker's build checks its port
//! against. This test fails when the file and the Rust generator disagree; after a change
//! to the generator on purpose, `KAFKABENCH_WRITE_VECTORS=1 cargo test --lib vectors` writes
//! the file again (and every worker is rebuilt, its hash covering the vectors).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::setup;
use crate::model::{
    KeySpec, PayloadSize, PayloadSpec, RateSegment, RateSpec, SizeDist, SizeShape, SizeTable,
};
use crate::random::Rng;
use crate::run::pacer::{Pacer, Share, Slot};
use crate::run::payload::{KeyGen, PayloadGen, Seeds};
use crate::run::producer::tombstone_threshold;

const UNIX_MS: u64 = 1_764_921_600_000;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn rng() -> Value {
    let seeds = [0u64, 1, 42, u64::MAX, 0x1234_5678_9abc_def0];
    Value::Array(
        seeds
            .iter()
            .map(|&seed| {
                let mut r = Rng::new(seed);
                let draws: Vec<String> = (0..20).map(|_| r.next_u64().to_string()).collect();
                let f64s: Vec<f64> = (0..5).map(|_| r.next_f64()).collect();
                json!({"seed": seed.to_string(), "draws": draws, "f64": f64s})
            })
            .collect(),
    )
}

fn payloads() -> Value {
    let lines: Arc<Vec<Vec<u8>>> = Arc::new(vec![b"one".to_vec(), b"".to_vec(), b"three".to_vec()]);
    let specs = vec![
        PayloadSpec::Random {
            size: crate::model::PayloadSize::Fixed(100),
            compressibility: 0.0,
        },
        PayloadSpec::Random {
            size: crate::model::PayloadSize::Fixed(300),
            compressibility: 0.5,
        },
        PayloadSpec::Random {
            size: crate::model::PayloadSize::Fixed(13),
            compressibility: 0.3,
        },
        PayloadSpec::Json {
            size: crate::model::PayloadSize::Fixed(200),
            event: "order.created".into(),
        },
        PayloadSpec::Json {
            size: crate::model::PayloadSize::Fixed(10),
            event: "e".into(),
        },
        PayloadSpec::File {
            path: "lines.txt".into(),
            lines: lines.clone(),
        },
        // Sizes drawn per record (clients/PROTOCOL.md, "Record sizes"): each kind that has a
        // size, each distribution's table shape (one wide bin; many narrow ones; a few).
        PayloadSpec::Random {
            size: drawn(
                SizeShape::Lognormal {
                    median: 60.0,
                    sigma: 0.8,
                    min: 1,
                    max: 400,
                },
                SizeTable::lognormal(60.0, 0.8, 1, 400),
            ),
            compressibility: 0.4,
        },
        PayloadSpec::Json {
            size: drawn(
                SizeShape::Uniform { min: 90, max: 300 },
                SizeTable::uniform(90, 300),
            ),
            event: "e".into(),
        },
        PayloadSpec::Constant {
            bytes: Arc::new((0..=255u8).cycle().take(700).collect()),
            size: drawn(
                SizeShape::Choice {
                    sizes: vec![(10, 0.7), (300, 0.25), (700, 0.05)],
                },
                SizeTable::from_shares(&[(10, 1, 0.7), (300, 1, 0.25), (700, 1, 0.05)]),
            ),
        },
    ];
    let mut out = Vec::new();
    for spec in &specs {
        for run_seed in [7u64, 0xdead_beef_0000_0001] {
            let seeds = Seeds::of(run_seed, 1);
            let mut g = PayloadGen::new(spec, seeds.payload);
            let records: Vec<Value> = (0..20u64)
                .map(|seq| {
                    let unix_ms = UNIX_MS + seq * 3;
                    json!({"seq": seq, "unix_ms": unix_ms.to_string(), "value": hex(g.next(seq, unix_ms))})
                })
                .collect();
            out.push(json!({
                "payload": setup::payload(spec, seeds.payload),
                "payload_seed": seeds.payload.to_string(),
                "lines": setup::lines_of(spec).unwrap_or(lines.iter().map(Vec::as_slice).collect())
                    .iter().map(|l| hex(l)).collect::<Vec<_>>(),
                "records": records,
            }));
        }
    }
    Value::Array(out)
}

fn drawn(shape: SizeShape, table: Option<SizeTable>) -> PayloadSize {
    PayloadSize::Drawn(Arc::new(SizeDist::new(shape, table.expect("a table"))))
}

fn keys() -> Value {
    let specs = [
        KeySpec::Fixed("k".into()),
        KeySpec::Sequence,
        KeySpec::Uniform(1000),
        KeySpec::Uniform(3),
        KeySpec::Zipf { n: 1000, s: 1.1 },
        KeySpec::Zipf {
            n: 10_000_000,
            s: 0.99,
        },
        KeySpec::Zipf { n: 50, s: 2.0 },
    ];
    let mut out = Vec::new();
    for spec in &specs {
        for run_seed in [7u64, 0xdead_beef_0000_0001] {
            let seeds = Seeds::of(run_seed, 2);
            let mut g = KeyGen::new(spec, seeds.key);
            let keys: Vec<String> = (0..200u64)
                .map(|seq| String::from_utf8_lossy(g.next(seq, UNIX_MS).unwrap_or(b"")).into())
                .collect();
            out.push(json!({"key": setup::key(spec), "seed": seeds.key.to_string(), "keys": keys}));
        }
    }
    Value::Array(out)
}

fn tombstones() -> Value {
    let mut out = Vec::new();
    for f in [0.05, 0.5] {
        let at_most = tombstone_threshold(f).unwrap_or(0);
        let seeds = Seeds::of(11, 0);
        let mut r = Rng::new(seeds.tombstone);
        let draws: Vec<bool> = (0..100).map(|_| r.next_u64() <= at_most).collect();
        out.push(json!({
            "seed": seeds.tombstone.to_string(),
            "at_most": at_most.to_string(),
            "tombstones": draws,
        }));
    }
    Value::Array(out)
}

fn schedules() -> Value {
    let seg = |per_sec: f64, ramp_to: Option<f64>, secs: f64| RateSegment {
        per_sec,
        ramp_to,
        duration: Duration::from_secs_f64(secs),
    };
    let rates = [
        RateSpec::Fixed(1000.0),
        RateSpec::Fixed(333.3),
        RateSpec::Fixed(0.1),
        RateSpec::Shape(vec![
            seg(100.0, None, 2.0),
            seg(0.0, None, 1.0),
            seg(0.0, Some(1000.0), 1.0),
            seg(500.0, Some(50.0), 2.0),
            seg(7.0, None, 0.3),
        ]),
        RateSpec::Shape(vec![seg(2.5, Some(0.5), 3.0)]),
    ];
    let mut out = Vec::new();
    for rate in &rates {
        for (index, of) in [(0u64, 1u64), (1, 3), (2, 3)] {
            let mut p = Pacer::new(rate, Share { index, of }, 0);
            let slots: Vec<String> = (0..200)
                .map(|_| match p.next_slot() {
                    Slot::At(t) => t.to_string(),
                    Slot::Now => "now".into(),
                    Slot::Done => "done".into(),
                })
                .collect();
            out.push(json!({
                "rate": setup::rate(rate),
                "share_index": index,
                "share_of": of,
                "slots": slots,
            }));
        }
    }
    Value::Array(out)
}

/// Every vector, as the file holds them.
fn all() -> Value {
    json!({
        "about": "kafkabench's generator and schedule for fixed seeds (src/run/worker/vectors.rs writes this file; every worker's build checks against it)",
        "rng": rng(),
        "payloads": payloads(),
        "keys": keys(),
        "tombstones": tombstones(),
        "schedules": schedules(),
    })
}

#[test]
fn vectors_agree_with_the_rust_generator() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/vectors/generator.json");
    let want = all();
    let text = serde_json::to_string_pretty(&want).expect("serialise") + "\n";
    if std::env::var_os("KAFKABENCH_WRITE_VECTORS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, &text).expect("write the vectors");
        return;
    }
    // Compared as text: serde_json's reading of a float is not always the nearest double.
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == text,
        "{} disagrees with kafkabench's generator: if the generator changed on purpose, \
         write it again with KAFKABENCH_WRITE_VECTORS=1 cargo test --lib vectors (every worker \
         is rebuilt against it)",
        path.display()
    );
}

/// Completion records as kafkabench reads them (clients/PROTOCOL.md, `C`): the fields and the
/// 48 bytes a worker must write for them, so every worker's encoder is checked against
/// kafkabench's decoder (clients/vectors/completions.json).
fn completions() -> Value {
    use super::completions::{Completion, NO_BROKER};
    let records = [
        // Acknowledged by broker 2; a short send delay in ns.
        (1_000_000, 4_500_000, 17, 1_500, 0, 120, 0, 0, 1, 100, 2),
        // A failure: the seq in place of the offset, no partition, no broker, a tombstone.
        (
            5_000_000_000,
            9_000_000_000,
            42,
            0,
            -1,
            7,
            3,
            4,
            1,
            u32::MAX,
            NO_BROKER,
        ),
        // A send delay past 2^31 ns, kept in µs; refused by the send call.
        (
            u64::MAX - 1,
            u64::MAX,
            u64::MAX,
            5_000_000_000,
            11,
            1024,
            65_535,
            255,
            3,
            1000,
            -1,
        ),
        // A warm-up record of a high partition on a high broker id.
        (
            0,
            1,
            1 << 40,
            2_147_483_647,
            1 << 30,
            0,
            1,
            0,
            0,
            0,
            i32::MAX,
        ),
    ];
    Value::Array(
        records
            .iter()
            .map(|&(i, d, o, s, p, b, t, e, f, v, br)| {
                let c = Completion {
                    intended_ns: i,
                    done_ns: d,
                    offset_or_seq: o,
                    send_delay_ns: s,
                    partition: p,
                    bytes: b,
                    topic: t,
                    error: e,
                    flags: f,
                    value_bytes: v,
                    broker: br,
                };
                let bytes = c.encode();
                assert_eq!(Completion::decode(&bytes), c, "reads back as written");
                json!({
                    "intended_ns": i.to_string(), "done_ns": d.to_string(),
                    "offset_or_seq": o.to_string(), "send_delay_ns": s.to_string(),
                    "partition": p, "bytes": b, "topic": t, "error": e, "flags": f,
                    "value_bytes": v, "broker": br, "hex": hex(&bytes),
                })
            })
            .collect(),
    )
}

#[test]
fn completion_vectors_agree_with_the_decoder() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/vectors/completions.json");
    let want = json!({
        "about": "completion records (clients/PROTOCOL.md, C, protocol 2) and their bytes as kafkabench decodes them (src/run/worker/vectors.rs writes this file; every worker's build checks its encoder against it)",
        "completions": completions(),
    });
    let text = serde_json::to_string_pretty(&want).expect("serialise") + "\n";
    if std::env::var_os("KAFKABENCH_WRITE_VECTORS").is_some() {
        std::fs::write(&path, &text).expect("write the vectors");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == text,
        "{} disagrees with kafkabench's completion decoder: if the record changed on purpose, \
         write it again with KAFKABENCH_WRITE_VECTORS=1 cargo test --lib vectors",
        path.display()
    );
}
