//! The read side per partition and the counts per partition over time (issue 52 item 3), on
//! the shared broker (the shared lane: counts against Kafka's own, no timing bound):
//! - a group of two reads the whole topic: each partition's `read_partitions[].records` is
//!   its log end offset (GetOffsetShell), warm-up records included, each offset once over
//!   both members;
//! - each partition's acknowledged records over time (`partition_counts.acked`) add up to its
//!   acknowledged records (`partitions[].records`), its read ones to its measured records read
//!   back, and those to the run's `delivery.consumed`; every read partition has its
//!   end-to-end histogram and its lag.

use serde_json::Value;

use crate::common::{self, reader};

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn row_sum(v: &Value) -> u64 {
    v.as_array()
        .unwrap_or_else(|| panic!("not a row: {v}"))
        .iter()
        .map(u)
        .sum()
}

#[test]
fn each_partitions_reads_are_its_log_end_offset_and_its_counts_over_time_add_up() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let group = common::unique("kb-bypartition");
    let text = format!(
        r#"
scenario "bypartition" {{
  topic "kb-test-bypartition" {{ partitions = 6 }}
  producer {{ linger.ms = 5ms }}
  consumer {{ group.id = "{group}" }}
  workload {{
    duration  = 3s
    warmup    = 1s
    rate      = 1500/s
    payload   = random(size: 100B)
    consumers = 2
    commit    = off
  }}
}}
"#
    );
    let (stdout, v) = common::run_json_with(
        dir.path(),
        "bypartition",
        &text,
        &["--keep-topics", "--interval", "500ms"],
        0,
    );
    let run = &v["runs"][0];
    let topic = run["topic"].as_str().unwrap().to_string();
    let b = common::bootstrap();
    let end = reader::offset_shell(&b, &topic, -1);
    let start = reader::offset_shell(&b, &topic, -2);
    reader::delete_topic(&b, &topic);
    assert_eq!(end.len(), 6);

    let read = run["read_partitions"]
        .as_array()
        .unwrap_or_else(|| panic!("figures per partition read:\n{stdout}\n{run}"));
    assert_eq!(read.len(), 6);
    for ((p, leo), (_, first)) in end.iter().zip(&start) {
        let r = &read[*p as usize];
        assert_eq!(r["id"], *p);
        assert_eq!(
            u(&r["records"]) as i64,
            leo - first,
            "partition {p}: records read against its log end offset"
        );
    }

    let counts = &run["partition_counts"];
    assert_eq!(counts["interval_secs"], 0.5, "{counts}");
    let acked = counts["acked"].as_array().expect("acked per partition");
    let read_t = counts["read"].as_array().expect("read per partition");
    assert_eq!((acked.len(), read_t.len()), (6, 6));
    assert!(
        acked[0].as_array().unwrap().len() >= 4,
        "3 s in 0.5 s columns: {counts}"
    );
    let mut consumed = 0;
    for (p, part) in run["partitions"].as_array().unwrap().iter().enumerate() {
        assert_eq!(
            row_sum(&acked[p]),
            u(&part["records"]),
            "partition {p}: acknowledged over time against its acknowledged records"
        );
        let r = &read[p];
        assert_eq!(row_sum(&read_t[p]), u(&r["consumed"]), "partition {p}");
        assert_eq!(u(&r["e2e"]["count"]), u(&r["consumed"]), "partition {p}");
        assert!(r["e2e"]["histogram"].is_string(), "partition {p}: {r}");
        assert!(
            r["lag_max"].is_u64(),
            "partition {p}: the lag is measured: {r}"
        );
        assert!(u(&r["consumed"]) > 0, "partition {p} read back: {r}");
        consumed += u(&r["consumed"]);
    }
    assert_eq!(consumed, u(&run["delivery"]["consumed"]));
    assert_eq!(u(&run["delivery"]["lost"]), 0);
}
