//! Positive controls of the read side: each test makes the event happen on purpose (aborted
//! records read, a consumer stopped while records arrive, members leaving and rejoining) and
//! checks that kafkabench reports it with the number an instrument kafkabench does not own
//! gives: the topic read by rust-rdkafka's consumer with Kafka's own isolation filter
//! (tests/common/reader.rs), `kafka-consumer-groups --describe`, and the group coordinator's
//! log. A verifier that always said 0 fails each of them.

use std::path::Path;

use serde_json::Value;

use crate::common::reader::{self, Contents};
use crate::common::{self, bootstrap, repo};

/// Runs `scenario` (written to `dir`) with `--keep-topics` and `extra` options, expects exit
/// 0, and returns its one run from the result file.
fn run_kept(dir: &Path, scenario: &str, extra: &[&str]) -> Value {
    let args = [&["--keep-topics"], extra].concat();
    common::run_json_with(dir, "scenario", scenario, &args, 0).1["runs"][0].clone()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A read_uncommitted consumer reads the aborted transactions: kafkabench's `aborted_read` is
/// exactly the records Kafka's read_committed filter drops (the topic read twice), which are
/// exactly the records whose stamp says aborted; `txn`'s transactions and records are the
/// topic's commit and abort markers and the records on either side of the filter.
#[test]
fn aborted_records_read_uncommitted_are_exactly_those_kafkas_filter_drops() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    // One partition: each transaction writes one marker there, so markers are transactions.
    // 30 transactions of 100, 30 % aborted: 9 aborted (the schedule's floor), 21 committed.
    let r = run_kept(
        dir.path(),
        r#"
scenario "aborted_read" {
  topic "kb-ctl-aborted" { partitions = 1 }
  consumer { isolation.level = read_uncommitted }
  workload {
    messages    = 3000
    transaction = 100
    aborts      = 30%
  }
}
"#,
        &[],
    );
    let (b, topic) = (bootstrap(), r["topic"].as_str().unwrap().to_string());
    let all: Contents = reader::read_topic(&b, &topic, "read_uncommitted");
    let committed: Contents = reader::read_topic(&b, &topic, "read_committed");
    reader::delete_topic(&b, &topic);

    let dropped_by_kafka = all.records.len() as u64 - committed.records.len() as u64;
    let stamped_aborted = all.aborted();
    let c = &r["consume"];
    let t = &r["txn"];
    eprintln!(
        "aborted_read {} | Kafka's filter dropped {dropped_by_kafka}, stamps say aborted \
         {stamped_aborted}",
        c["aborted_read"]
    );
    assert!(
        dropped_by_kafka > 0,
        "the control needs aborted records: {r}"
    );
    // The records Kafka hides are exactly the ones stamped aborted.
    let visible: std::collections::HashSet<_> =
        committed.records.iter().map(|s| s.offset).collect();
    for s in &all.records {
        assert_eq!(
            s.aborted,
            !visible.contains(&s.offset),
            "offset {} aborted by its stamp but not by Kafka, or the reverse",
            s.offset
        );
    }
    assert_eq!(u(&c["aborted_read"]), dropped_by_kafka);
    assert_eq!(u(&c["aborted_read"]), stamped_aborted);
    assert_eq!(u(&t["aborted_records"]), dropped_by_kafka);
    assert_eq!(u(&t["committed_records"]), committed.distinct_measured());
    assert_eq!(u(&r["delivery"]["consumed"]), committed.distinct_measured());
    assert_eq!(u(&r["delivery"]["lost"]), 0);
    let (commits, aborts) = reader::markers(&all, &committed);
    eprintln!(
        "txn committed {} aborted {} | markers: {commits} commit, {aborts} abort",
        t["committed"], t["aborted"]
    );
    assert_eq!(u(&t["committed"]), commits);
    assert_eq!(u(&t["aborted"]), aborts);
    assert_eq!((commits, aborts), (21, 9), "the schedule's 30 % of 30");
}

/// One consumer stopped while records arrive at R, then the producer pauses with the consumer
/// still stopped: in that pause nothing moves, so kafkabench's lag (acked and not read) and
/// the group's lag as `kafka-consumer-groups` shows it (log end less the committed offset,
/// asked by the scenario's own `run` action inside the pause) must be the same number, and
/// about R times the time the consumer was stopped while records arrived.
///
/// They are different measures, equal only here: kafkabench counts from what it has read,
/// the tool from what the group committed (which trails reading by up to the commit interval
/// while running), and the tool's log end includes records not yet acknowledged. In the pause
/// every record is acknowledged, and the stopped member committed what it had read when it
/// gave up its partitions (offsets stored, then committed on the revoke).
#[test]
fn a_stopped_consumers_lag_is_what_kafka_consumer_groups_shows_and_about_rate_times_time() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let group = common::unique("kb-ctl-lag");
    let out = dir.path().join("describe.txt");
    let tool = repo().join("scripts/kafka-local");
    // Records arrive at 2000/s until 2 s, then none until 9 s; the consumer is stopped from
    // 0.5 s to 9 s. The tool starts at 2.5 s: 6.5 s is a JVM's start-up on a loaded machine
    // several times over (the test checks it finished inside the pause).
    let (rate, produce_until, pause_until) = (2000.0, 2.0, 9.0);
    let r = run_kept(
        dir.path(),
        &format!(
            r#"
scenario "lag" {{
  topic "kb-ctl-lag" {{ partitions = 2 }}
  consumer {{ group.id = "{group}" }}
  workload {{
    rate      = 2000/s for 2s, then 0/s for 7s, then 200/s for 500ms
    consumers = 1
    commit    = auto(1s)
  }}
  faults {{
    at 500ms stop consumer 1 for 8500ms
    at 2500ms run "'{tool}' tool org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server $KB_BOOTSTRAP --describe --group {group} > '{out}' 2>&1"
  }}
}}
"#,
            tool = tool.display(),
            out = out.display()
        ),
        &["--interval", "500ms"],
    );
    let topic = r["topic"].as_str().unwrap().to_string();
    reader::delete_topic(&bootstrap(), &topic);
    let actions = r["faults"]["actions"].as_array().unwrap();
    let (stop, ask) = (&actions[0], &actions[1]);
    assert_eq!(ask["outcome"], "ok (exit 0)", "the tool failed: {ask}");
    let stopped_at = f(&stop["fired_secs"]);
    assert!(
        f(&ask["fired_secs"]) >= produce_until && f(&ask["ended_secs"]) < pause_until,
        "kafka-consumer-groups ran outside the pause ({produce_until}s to {pause_until}s): {ask}"
    );
    let describe = std::fs::read_to_string(&out).unwrap();
    let rows = reader::group_rows(&describe, &topic);
    assert_eq!(rows.len(), 2, "a line per partition:\n{describe}");
    let sum = |g: fn(&reader::GroupRow) -> Option<i64>| -> u64 {
        rows.iter()
            .map(|row| g(row).unwrap_or_else(|| panic!("a `-` in:\n{describe}")) as u64)
            .sum()
    };
    let (tool_lag, committed, log_end) = (sum(|r| r.lag), sum(|r| r.current), sum(|r| r.log_end));

    // kafkabench's lag at each interval end inside the pause, before the consumer is back.
    let points = r["series"]["points"].as_array().unwrap();
    let w = f(&r["series"]["interval_secs"]);
    let inside: Vec<&Value> = points
        .iter()
        .filter(|p| {
            let end = f(&p["t_secs"]) + w;
            end >= produce_until + 0.5 && end <= pause_until
        })
        .collect();
    assert!(inside.len() >= 10, "points in the pause: {}", inside.len());
    let before = |key: &str| -> u64 {
        points
            .iter()
            .filter(|p| f(&p["t_secs"]) + w <= pause_until)
            .map(|p| u(&p[key]))
            .sum()
    };
    let lags: Vec<u64> = inside.iter().map(|p| u(&p["lag"])).collect();
    eprintln!(
        "kafkabench lag in the pause {lags:?}, lag_max {} | kafka-consumer-groups LAG \
         {tool_lag} (log end {log_end}, committed {committed})",
        r["consume"]["lag_max"]
    );
    assert!(
        lags.iter().all(|l| *l == tool_lag),
        "{lags:?} vs {tool_lag}"
    );
    assert_eq!(u(&r["consume"]["lag_max"]), tool_lag);
    // The two sides of the difference, each against its own count.
    assert_eq!(
        log_end,
        before("acked"),
        "the log end is every record acked"
    );
    assert_eq!(
        committed,
        before("consumed"),
        "the commit is every record read"
    );
    // About R·D, D the time the consumer was stopped while records arrived. Margin R·0.5 s:
    // a stop takes effect at the consumer's next poll (up to 100 ms), the consumer may trail
    // the producer at that moment by its end-to-end latency (tenths of a second on a loaded
    // machine), and the last records are acked a little after 2 s.
    let expected = rate * (produce_until - stopped_at);
    assert!(
        (tool_lag as f64 - expected).abs() <= rate * 0.5,
        "lag {tool_lag} is not R·D = {expected} within {}",
        rate * 0.5
    );
}

/// Three members, two of them stopped and restarted in turn: every leave and every rejoin is
/// a new generation of the group. kafkabench's `rebalances` (`rebalance.count`) is the
/// generations the group went through, the first join included, checked against the group
/// coordinator's own log of this group. An eager rebalance stops every partition: the
/// `rebalance` summary has a stall per partition at least for the join. A stopped member's
/// time out of the group is not a rebalance: `rebalance.time` stays near the coordinator's
/// longest rebalance, below the stop.
#[test]
fn rebalances_are_the_generations_the_group_coordinator_logged() {
    // heartbeat.interval.ms = 300: members learn of a rebalance within 0.3 s, not Kafka's 3 s,
    // so each leave and rejoin settles well inside the 2 s between them.
    let Some(GroupRun { r, log, group }) = group_run(
        "rebalance",
        "11s",
        3,
        "at 1s stop consumer 2 for 3s\n    at 6s stop consumer 3 for 3s",
    ) else {
        return;
    };
    let all = reader::group_generations(&log, &group);
    let (surely, maybe) = reader::given_bounds(&all);
    let c = &r["consume"];
    eprintln!(
        "kafkabench rebalances {}, partition stalls {}, longest {}s, stalled {}s | \
         coordinator: generations {all:?}",
        c["rebalances"], c["rebalance"]["count"], c["rebalance_secs"], c["stall_secs"]
    );
    // The join, two leaves and two rejoins make five when each settles before the next; on a
    // busy machine a rejoin still settling when the next member leaves folds them into one
    // generation (seen: 2, 3, 4 completed, 5 superseded). The event this test needs is the
    // join and at least one leave: three completed generations. A join split in two (the
    // first member alone in generation 1, the second joining 3 ms after its assignment) may
    // end generation 1 before any member got it: then it is no rebalance a member saw, and
    // only the bounds hold.
    assert!(surely >= 3, "the coordinator logged {all:?}");
    let counted = u(&c["rebalances"]);
    assert!(
        (surely..=maybe).contains(&counted),
        "{counted} rebalances, the coordinator's {surely}..={maybe}: {all:?}"
    );
    assert!(
        u(&c["rebalance"]["count"]) >= 6,
        "every partition stalls at the join: {c}"
    );
    // From its own rejoin, not from when it left (3 s before): within 1.5 s of the
    // coordinator's longest rebalance (prepared to stabilized), the margin for what a member
    // does around it (finding the coordinator, SyncGroup, its first fetch) on a busy machine.
    let longest = f(&c["rebalance_secs"]);
    let broker = reader::longest_group_rebalance(&log, &group).unwrap();
    assert!(
        longest <= broker + 1.5,
        "rebalance.time {longest}s, the coordinator's longest rebalance {broker}s: a stopped \
         member's time out of the group counted?"
    );
    // Event by event: each leave and rejoin, in order, owns the stalls that began until the
    // next (the join's row, when its stalls reach into the measured phase, those before the
    // first); together they are every partition-second of `stalled`, and none is longer than
    // the coordinator's longest rebalance allows.
    let churn = r["faults"]["churn"].as_array().expect("churn events");
    let events: Vec<&str> = churn
        .iter()
        .filter(|e| e["join"] != true)
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        [
            "consumer 2 left",
            "consumer 2 rejoined",
            "consumer 3 left",
            "consumer 3 rejoined"
        ],
        "{churn:?}"
    );
    rows_add_up_to_stalled(&r);
    for e in churn.iter().filter(|e| e["join"] != true) {
        assert!(
            u(&e["stalls"]) >= 1,
            "every leave and rejoin moved a partition: {e}"
        );
        assert!(f(&e["longest_secs"]) <= broker + 1.5, "{e}");
    }
}

/// A group run whose members the faults stop, on the local broker, with its group
/// coordinator's log: the outside count the churn tests compare with.
struct GroupRun {
    r: Value,
    log: String,
    group: String,
}

/// Runs `consumers` members of a fresh group reading 1 000 records/s for `duration` under
/// `faults`, with a 300 ms heartbeat; None (and SKIPPED said) when the broker is not a
/// kafka-local one, whose log is out of reach.
fn group_run(name: &str, duration: &str, consumers: u32, faults: &str) -> Option<GroupRun> {
    common::require_broker();
    let b = bootstrap();
    let Some(logs) = reader::local_broker_logs(&b) else {
        eprintln!(
            "SKIPPED: the broker at {b} is not a kafka-local one (KAFKA_LOCAL_HOME or \
             .cache/kafka-local): its group coordinator's log is out of reach"
        );
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let group = common::unique(&format!("kb-ctl-{name}"));
    let r = run_kept(
        dir.path(),
        &format!(
            r#"
scenario "churn" {{
  topic "kb-ctl-{name}" {{ partitions = 6 }}
  consumer {{
    group.id = "{group}"
    heartbeat.interval.ms = 300
  }}
  workload {{
    duration  = {duration}
    rate      = 1000/s
    consumers = {consumers}
    commit    = auto(1s)
  }}
  faults {{
    {faults}
  }}
}}
"#
        ),
        &[],
    );
    let topic = r["topic"].as_str().unwrap().to_string();
    reader::delete_topic(&b, &topic);
    let log = logs
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    Some(GroupRun { r, log, group })
}

/// The churn rows' partition-seconds add up to the run's `stalled`, and every stall of the
/// recording that reached into the measured phase is in exactly one row.
fn rows_add_up_to_stalled(r: &Value) {
    let churn = r["faults"]["churn"].as_array().expect("churn events");
    let rows: f64 = churn.iter().map(|e| f(&e["stalled_secs"])).sum();
    let stalled = f(&r["consume"]["stall_secs"]);
    assert!(
        (rows - stalled).abs() < 1e-6,
        "the rows' partition-seconds {rows} against stalled {stalled}: {churn:?}"
    );
    let measured = r["recording"]["read"]["stalls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s[1].as_i64().unwrap() > 0)
        .count() as u64;
    let counted: u64 = churn.iter().map(|e| u(&e["stalls"])).sum();
    assert_eq!(counted, measured, "{churn:?}");
}

/// Preparing → Stabilized of each rebalance of `group` the coordinator logged, in seconds,
/// with the reason it gave (the log's millisecond timestamps).
fn logged_rebalances(log: &str, group: &str) -> Vec<(f64, String)> {
    let prepare = format!("Preparing to rebalance group {group} ");
    let stable = format!("Stabilized group {group} generation ");
    let ms = reader::log_ms;
    let mut open: Option<(u64, String)> = None;
    let mut out = Vec::new();
    for l in log.lines() {
        if l.contains(&prepare) && open.is_none() {
            let reason = l.split("(reason: ").nth(1).unwrap_or("").to_string();
            open = ms(l).map(|t| (t, reason));
        } else if l.contains(&stable) {
            if let (Some((a, why)), Some(b)) = (open.take(), ms(l)) {
                out.push((b.saturating_sub(a) as f64 / 1e3, why));
            }
        }
    }
    out
}

/// Members stopped from the first instant leave the group before the clock starts (so they
/// read no measured record), and the partitions they held stall until the others take them
/// over. That leave is an event of its own, timed before the clock, owning those stalls: the
/// issue-49 bug printed "consumers … left at 134µs: no partition stalled" and counted their
/// partition-seconds in `stalled` and in no row. The coordinator's log is the outside count:
/// it logged the rebalance the leave began, and a partition the stopped members held cannot
/// be read again before that rebalance is over, so the leave's longest stall is at least as
/// long as the coordinator's rebalance.
#[test]
fn members_stopped_at_the_first_instant_own_the_stalls_of_their_leave() {
    // Eager (librdkafka's default assignors): the leave stops every partition. A 300 ms
    // heartbeat settles each rebalance well within the 4 s the members are away.
    let Some(GroupRun { r, log, group }) = group_run(
        "first-instant",
        "9s",
        4,
        "at 0s stop consumer 2 for 4s\n    at 0s stop consumer 3 for 4s",
    ) else {
        return;
    };
    let logged = logged_rebalances(&log, &group);
    let churn = r["faults"]["churn"].as_array().expect("churn events");
    eprintln!("churn {churn:?} | coordinator's rebalances {logged:?}");
    let events: Vec<&Value> = churn.iter().filter(|e| e["join"] != true).collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["consumers 2 and 3 left", "consumers 2 and 3 rejoined"],
        "{churn:?}"
    );
    let leave = events[0];
    assert!(f(&leave["at_secs"]) < 0.0, "left before the clock: {leave}");
    // An eager rebalance stops all six partitions: those the join before the clock had not
    // yet handed out (on a busy machine it may still be under way when the members leave) are
    // the join's stalls, the rest the leave's.
    let joining: u64 = churn
        .iter()
        .filter(|e| e["join"] == true)
        .map(|e| u(&e["stalls"]))
        .sum();
    assert!(u(&leave["stalls"]) + joining >= 6, "{churn:?}");
    let left = logged
        .iter()
        .find(|(_, why)| why.contains("LeaveGroup"))
        .unwrap_or_else(|| panic!("the coordinator logged no leave: {logged:?}"));
    // The log's millisecond resolution, twice.
    assert!(
        f(&leave["longest_secs"]) + 0.002 >= left.0,
        "the leave's longest stall against the coordinator's rebalance {left:?}: {leave}"
    );
    assert!(f(&leave["longest_secs"]) <= left.0 + 1.5, "{leave}");
    rows_add_up_to_stalled(&r);
}
