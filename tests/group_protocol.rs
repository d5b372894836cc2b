//! The classic and the consumer group protocol (KIP-848, `group.protocol = consumer`) side by
//! side, each with a member stopped and started again, against the real broker. kafkabench's
//! counts are checked against what it did not count: the topic's offsets (Kafka's
//! GetOffsetShell) and, on a kafka-local broker, the group coordinator's log of the group (its
//! protocol, its generations or target assignments).

use std::path::Path;

use serde_json::Value;

use crate::common::reader;
use crate::common::{self, bootstrap};

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Runs three members of a group that never commits on six partitions; member 2 leaves at 2 s
/// and rejoins at 6 s. Returns the run (its topic kept, then deleted here), the topic's
/// records by GetOffsetShell, and the group's id.
fn stop_and_start(dir: &Path, protocol: &str) -> (Value, i64, String) {
    common::require_broker();
    let group = common::unique(&format!("kb-protocol-{protocol}"));
    let text = format!(
        r#"
scenario "protocol" {{
  topic "kb-test-protocol-{protocol}" {{ partitions = 6 }}
  consumer {{
    group.protocol = {protocol}
    group.id       = "{group}"
  }}
  workload {{
    duration  = 16s
    rate      = 1000/s
    consumers = 3
    commit    = off
  }}
  faults {{
    at 2s stop consumer 2 for 4s
  }}
}}
"#
    );
    let (_, v) = common::run_json_with(dir, protocol, &text, &["--keep-topics"], 0);
    let run = v["runs"][0].clone();
    let topic = run["topic"].as_str().unwrap().to_string();
    let b = bootstrap();
    let end = reader::offset_shell(&b, &topic, -1);
    let start = reader::offset_shell(&b, &topic, -2);
    reader::delete_topic(&b, &topic);
    let records = end.iter().map(|e| e.1).sum::<i64>() - start.iter().map(|s| s.1).sum::<i64>();
    (run, records, group)
}

/// The group coordinator's log lines about `group`, when the broker is a kafka-local one.
fn coordinator_log(group: &str) -> Option<Vec<String>> {
    let logs = reader::local_broker_logs(&bootstrap())?;
    // "Stabilized group G generation N" (classic), "[GroupId G] Member ..." (consumer).
    let (spaced, bracketed) = (format!("{group} "), format!("{group}]"));
    let lines = logs
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|l| l.contains(&spaced) || l.contains(&bracketed))
        .collect();
    Some(lines)
}

/// Delivery and redelivery, the same for both protocols: nothing lost or duplicated, and every
/// record read either once or counted as redelivered. Nothing is committed, so whoever takes
/// over the stopped member's partitions reads them again from their start: `redelivered` > 0,
/// and the records read less those redelivered are exactly the topic's records.
fn delivery(run: &Value, records: i64, protocol: &str) {
    let d = &run["delivery"];
    let c = &run["consume"];
    eprintln!(
        "{protocol}: rebalances {}, longest stall {}s, stalled {}s, stalls {}, redelivered {}, \
         read {}, topic {records}",
        c["rebalances"],
        c["rebalance_secs"],
        c["stall_secs"],
        c["rebalance"]["count"],
        c["redelivered"],
        c["records"]
    );
    assert_eq!(run["faults"]["actions"][0]["outcome"], "ok", "{run}");
    assert_eq!(d["lost"], 0, "{protocol}: {d}");
    assert_eq!(d["duplicated"], 0, "{protocol}: {d}");
    assert_eq!(u(&d["consumed"]), u(&run["acked"]), "{protocol}: {d}");
    assert_eq!(
        u(&run["acked"]) as i64,
        records,
        "{protocol}: the topic holds what was acked"
    );
    assert!(
        u(&c["redelivered"]) > 0,
        "{protocol}: a handover re-reads: {c}"
    );
    assert_eq!(
        u(&c["records"]) - u(&c["redelivered"]),
        records as u64,
        "{protocol}: every offset read once, besides those counted as redelivered: {c}"
    );
    // Event by event: the leave's handover re-reads the stopped member's partitions (nothing
    // was committed); the rows' redeliveries (the join's row holds those before the first
    // event) are all the run's.
    let churn = run["faults"]["churn"].as_array().expect("churn events");
    let leave = churn
        .iter()
        .find(|e| e["join"] != true)
        .expect("an event besides the join");
    assert_eq!(leave["event"], "consumer 2 left", "{churn:?}");
    assert!(u(&leave["redelivered"]) > 0, "{protocol}: {churn:?}");
    let by_row: u64 = churn.iter().map(|e| u(&e["redelivered"])).sum();
    assert_eq!(by_row, u(&c["redelivered"]), "{protocol}: {churn:?}");
    // The join, and the handover of the stopped member's partitions (its rejoin too, unless
    // the run ends before the broker gives it partitions again).
    assert!(u(&c["rebalances"]) >= 2, "{protocol}: {c}");
    assert!(c["stall_secs"].as_f64().unwrap() > 0.0, "{protocol}: {c}");
}

#[test]
fn classic_a_member_stopped_and_started_is_counted_as_the_coordinator_saw_it() {
    let dir = tempfile::tempdir().unwrap();
    let (run, records, group) = stop_and_start(dir.path(), "classic");
    delivery(&run, records, "classic");
    let Some(log) = coordinator_log(&group) else {
        eprintln!("SKIPPED the coordinator's side: not a kafka-local broker");
        return;
    };
    let gens = reader::group_generations(&log.join("\n"), &group);
    // A generation superseded while its assignment was being stored may not have reached
    // any member (reader::Generation::superseded_ms): only the bounds hold for it.
    let (surely, maybe) = reader::given_bounds(&gens);
    let counted = u(&run["consume"]["rebalances"]);
    assert!(
        (surely..=maybe).contains(&counted),
        "{counted} rebalances, the generations the coordinator completed {surely}..={maybe}: \
         {gens:?}"
    );
}

/// Under KIP-848 librdkafka's "generation" is the member epoch, which differs between members;
/// kafkabench counts the epochs of the target assignments that gave members partitions, so
/// each counted rebalance is one the coordinator computed, and never more than it computed.
#[test]
fn consumer_a_member_stopped_and_started_is_counted_as_the_coordinator_saw_it() {
    let dir = tempfile::tempdir().unwrap();
    let (run, records, group) = stop_and_start(dir.path(), "consumer");
    delivery(&run, records, "consumer");
    let Some(log) = coordinator_log(&group) else {
        eprintln!("SKIPPED the coordinator's side: not a kafka-local broker");
        return;
    };
    assert!(
        log.iter()
            .any(|l| l.contains("joins the consumer group using the consumer protocol")),
        "the group used the consumer protocol:\n{}",
        log.join("\n")
    );
    let computed = log
        .iter()
        .filter(|l| l.contains("Computed a new target assignment for epoch"))
        .count() as u64;
    let counted = u(&run["consume"]["rebalances"]);
    eprintln!("consumer: target assignments computed {computed}, rebalances counted {counted}");
    assert!(
        counted <= computed,
        "kafkabench counted {counted} rebalances, the coordinator computed {computed} \
         assignments:\n{}",
        log.join("\n")
    );
}

/// The coordinator's log as read for the classic case: a generation counts as completed when
/// the leader's assignment was received for it, not when no member joined meanwhile. A new
/// member's first JoinGroup (given only a member id) in CompletingRebalance does not stop
/// the generation; the JoinGroup that adds it does. A generation superseded soon after its
/// assignment was received may not have reached its members: only the bounds count it.
#[test]
fn a_generation_completes_when_the_coordinator_receives_its_assignment() {
    let g = "kb-g";
    let log = [
        "[2026-12-04 10:00:00,001] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Preparing to rebalance group kb-g in state PreparingRebalance with old generation 0 (reason: Adding new member m1).",
        "[2026-12-04 10:00:00,010] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Stabilized group kb-g generation 1 with 1 members.",
        "[2026-12-04 10:00:00,011] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Dynamic member with unknown member id joins group kb-g in CompletingRebalance state. Created a new member id m2 and requesting the member to rejoin with this id.",
        "[2026-12-04 10:00:00,012] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Assignment received from leader m1 for group kb-g for generation 1. The group has 1 members, 0 of which are static.",
        "[2026-12-04 10:00:00,015] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Preparing to rebalance group kb-gx in state PreparingRebalance with old generation 1 (reason: Adding new member m9).",
        "[2026-12-04 10:00:00,020] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Pending dynamic member with id m2 joins group kb-g in Stable state. Adding to the group now.",
        "[2026-12-04 10:00:00,020] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Preparing to rebalance group kb-g in state PreparingRebalance with old generation 1 (reason: Adding new member m2).",
        "[2026-12-04 10:00:00,030] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Stabilized group kb-g generation 2 with 2 members.",
        "[2026-12-04 10:00:00,031] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Pending dynamic member with id m3 joins group kb-g in CompletingRebalance state. Adding to the group now.",
        "[2026-12-04 10:00:00,040] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Stabilized group kb-g generation 3 with 3 members.",
        "[2026-12-04 10:00:00,041] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Assignment received from leader m1 for group kb-g for generation 3. The group has 3 members, 0 of which are static.",
        "[2026-12-04 10:00:00,050] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Assignment received from leader m1 for group kb-gx for generation 2. The group has 3 members, 0 of which are static.",
        "[2026-12-04 10:00:03,041] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] Preparing to rebalance group kb-g in state PreparingRebalance with old generation 3 (reason: explicit `LeaveGroup` request for (m2) members.).",
    ]
    .join("\n");
    let gens = reader::group_generations(&log, g);
    let done: Vec<(i32, u32, bool)> = gens
        .iter()
        .map(|g| (g.generation, g.members, g.completed))
        .collect();
    assert_eq!(done, [(1, 1, true), (2, 2, false), (3, 3, true)]);
    let superseded: Vec<Option<u64>> = gens.iter().map(|g| g.superseded_ms).collect();
    assert_eq!(superseded, [Some(8), None, Some(3000)]);
    assert_eq!(reader::given_bounds(&gens), (1, 2));
}

/// `consumer.heartbeat.interval.ms` in `consumer { }` is the group's own config under the
/// consumer protocol: set on the group before its members join (Kafka's ConfigCommand reads
/// it back from the broker), never given to librdkafka (which would refuse the name). A value
/// below the broker's floor is refused before the run measures, in the broker's words.
#[test]
fn a_consumer_group_config_is_set_on_the_group_and_a_refused_one_fails_the_run() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let scenario = |group: &str, ms: u32| {
        format!(
            r#"
scenario "heartbeat" {{
  topic "kb-test-heartbeat" {{ partitions = 2 }}
  consumer {{
    group.protocol                 = consumer
    group.id                       = "{group}"
    consumer.heartbeat.interval.ms = {ms}
  }}
  workload {{
    duration  = 2s
    rate      = 100/s
    consumers = 2
  }}
}}
"#
        )
    };
    let group = common::unique("kb-heartbeat");
    let (_, v) = common::run_json_with(dir.path(), "heartbeat", &scenario(&group, 1000), &[], 0);
    let run = &v["runs"][0];
    assert_eq!(run["delivery"]["lost"], 0, "{run}");
    let set = run["consumer_config"]
        .as_array()
        .expect("the consumer's properties")
        .iter()
        .find(|p| p["key"] == "consumer.heartbeat.interval.ms")
        .map(|p| p["value"].clone());
    assert_eq!(
        set,
        Some("1000".into()),
        "the result file says what was set"
    );
    let b = bootstrap();
    let described = reader::kafka_tool(
        "org.apache.kafka.tools.ConfigCommand",
        &[
            "--bootstrap-server",
            &b,
            "--entity-type",
            "groups",
            "--entity-name",
            &group,
            "--describe",
        ],
    );
    assert!(
        described.contains("consumer.heartbeat.interval.ms=1000"),
        "the broker holds the group's config:\n{described}"
    );
    // Below the broker's floor (5 s by default, 1 s on kafka-local): refused, exit 3.
    let file = dir.path().join("refused.kbs");
    std::fs::write(&file, scenario(&common::unique("kb-heartbeat"), 500)).unwrap();
    let out = common::kafkabench(&["run", file.to_str().unwrap(), "--quiet"]);
    let stderr = common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("INVALID_CONFIG") && stderr.contains("consumer.heartbeat.interval.ms"),
        "{stderr}"
    );
}
