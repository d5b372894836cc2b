//! Cold reads from tiered storage (KIP-405) against a kafka-local broker started with
//! `--tiered` (CI's is): `backlog = cold(N)` writes the backlog, waits until it has left local
//! disk, then reads it from remote storage while a producer keeps writing. Checked against
//! what kafkabench did not count: the broker's earliest and earliest-local offsets
//! (GetOffsetShell −2 and −4), the topic's records, and LocalTieredStorage's own directory.

use serde_json::Value;

use crate::common::reader;
use crate::common::{self, bootstrap};

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn a_cold_backlog_is_read_from_remote_storage_and_every_record_of_it_verified() {
    common::require_broker();
    let b = bootstrap();
    let Some(remote) = reader::local_broker_remote_dir(&b) else {
        eprintln!("SKIPPED: not a kafka-local broker started with --tiered");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // 24 MB of backlog over 2 partitions of 1 MiB segments: about a dozen segments each, all
    // but the last closed, so most of it can leave local disk.
    let text = format!(
        r#"
scenario "cold" {{
  topic "kb-test-cold-{}" {{
    partitions            = 2
    remote.storage.enable = true
    local.retention.ms    = 1000
    segment.bytes         = 1048576
  }}
  consumer {{ }}
  workload {{
    backlog   = cold(24k)
    messages  = 3000
    rate      = 1000/s
    payload   = random(size: 1KiB)
    consumers = 1
  }}
}}
"#,
        std::process::id()
    );
    let (stdout, v) = common::run_json_with(dir.path(), "cold", &text, &["--keep-topics"], 0);
    let run = v["runs"][0].clone();
    let topic = run["topic"].as_str().unwrap().to_string();
    let earliest = reader::offset_shell(&b, &topic, -2);
    let local = reader::offset_shell(&b, &topic, -4);
    let end = reader::offset_shell(&b, &topic, -1);
    let stored: Vec<String> = walk(&remote)
        .into_iter()
        .filter(|p| p.contains(&topic) && p.ends_with(".log"))
        .collect();
    reader::delete_topic(&b, &topic);
    let c = &run["consume"];
    let d = &run["delivery"];
    eprintln!(
        "cold share {}, first record {}s, drain {}s, fetch rtt {}s (max {}s); earliest \
         {earliest:?}, local {local:?}, end {end:?}; {} segment(s) in remote storage",
        c["cold_share"],
        c["first_record_secs"],
        c["drain_secs"],
        c["fetch_rtt_secs"],
        c["fetch_rtt_max_secs"],
        stored.len()
    );
    // The broker: the topic starts in remote storage, and its local copy later.
    assert_eq!(earliest.len(), 2, "{earliest:?}");
    for ((p, e), (_, l)) in earliest.iter().zip(&local) {
        assert!(
            l > e,
            "partition {p} still starts on local disk: {e} vs {l}"
        );
    }
    assert!(
        !stored.is_empty(),
        "LocalTieredStorage holds no segment of {topic}"
    );
    // kafkabench: most of what the topic held was cold, and no more than the broker's local
    // start says (it only moves on).
    let cold = c["cold_share"].as_f64().expect("a cold share");
    assert!(cold > 0.5, "{c}");
    let backlog = 24_000.0;
    let remote_now: i64 = local.iter().zip(&earliest).map(|(l, e)| l.1 - e.1).sum();
    assert!(
        cold * backlog <= remote_now as f64 + 1.0,
        "kafkabench says {cold} of {backlog} were cold; the broker's local log starts {remote_now} in"
    );
    assert!(c["first_record_secs"].as_f64().unwrap() > 0.0, "{c}");
    // The fetches' round trips while the backlog drained: taken, and each within the drain
    // (its statistics window ends at most one interval, 0.5 s, after it).
    let (rtt, rtt_max) = (
        c["fetch_rtt_secs"].as_f64().expect("a fetch round trip"),
        c["fetch_rtt_max_secs"].as_f64().expect("a longest fetch"),
    );
    let drain = c["drain_secs"].as_f64().unwrap();
    assert!(0.0 < rtt && rtt <= rtt_max, "{c}");
    assert!(rtt_max <= drain + 0.5, "{c}");
    // Every record of the backlog, read from remote storage, and every live one, verified.
    assert_eq!(d["lost"], 0, "{d}");
    assert_eq!(d["duplicated"], 0, "{d}");
    assert_eq!(u(&d["consumed"]), u(&run["acked"]), "{d}");
    let held: i64 = end.iter().zip(&earliest).map(|(x, e)| x.1 - e.1).sum();
    assert_eq!(
        held as u64,
        24_000 + u(&run["acked"]),
        "the topic holds backlog and run"
    );
    assert_eq!(u(&c["records"]), held as u64, "every record read once: {c}");
    assert!(
        stdout.contains("cold") && stdout.contains("fetch rtt"),
        "the table shows the cold share and the fetches:\n{stdout}"
    );
}

/// Every file under `dir`, as paths.
fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.to_string_lossy().into_owned());
        }
    }
    out
}
