//! Repeated runs (`repeat = N`) end to end on the local broker: every trial a whole run on its
//! own topics, counts summed over them, the environment recorded, and a confident assertion
//! that the trials cannot support failing with how many it needs.

use crate::common::{self, expect_exit, kafkabench};

const SCENARIO: &str = r#"scenario "trials" {
  repeat = 3
  topic "trials" { partitions = 2 }
  consumer { }
  workload {
    messages = 2000
    rate     = 4000/s
    payload  = random(size: 100B)
  }
  expect {
    lost == 0
    sent == 6000
    throughput > 1/s with 95% confidence
  }
}
"#;

#[test]
fn plan_counts_the_trials_and_repeat_on_the_command_line_wins() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trials.kbs");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = kafkabench(&["plan", file.to_str().unwrap()]);
    let text = expect_exit(&out, 0);
    assert!(
        text.contains("3 trials of every run, interleaved"),
        "{text}"
    );
    let out = kafkabench(&["plan", file.to_str().unwrap(), "--repeat", "6"]);
    assert!(expect_exit(&out, 0).contains("6 trials of every run"));
}

#[test]
fn every_trial_is_a_whole_run_and_counts_add_up() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    // The confident assertion cannot pass on 3 trials: exit 1, and it says why.
    let (stdout, v) = common::run_text_json(dir.path(), "trials", SCENARIO, 1);
    assert!(stdout.contains("3 trials per run"), "{stdout}");
    assert!(
        stdout.contains(
            "3 trials give an interval of at most 75.0% confidence; `repeat = 6` reaches it"
        ),
        "{stdout}"
    );
    let run = &v["runs"][0];
    let trials = run["trials"]["results"]
        .as_array()
        .expect("every trial kept");
    assert_eq!(trials.len(), 3);
    let topics: Vec<&str> = trials
        .iter()
        .map(|t| t["topic"].as_str().unwrap())
        .collect();
    for (k, t) in topics.iter().enumerate() {
        assert!(
            t.ends_with(&format!("-t{}", k + 1)),
            "a trial's own topic: {topics:?}"
        );
    }
    // Counts are the trials' sums, as the consumer verified each trial's records.
    assert_eq!(run["sent"], 6000);
    assert_eq!(run["delivery"]["consumed"], 6000);
    assert_eq!(run["delivery"]["lost"], 0);
    for t in trials {
        assert_eq!(t["sent"], 2000);
        assert_eq!(t["delivery"]["consumed"], 2000, "{t}");
    }
    // The throughput shown is the median trial's.
    let mut rates: Vec<f64> = trials
        .iter()
        .map(|t| t["throughput_msgs"].as_f64().unwrap())
        .collect();
    rates.sort_by(f64::total_cmp);
    assert_eq!(run["throughput_msgs"].as_f64().unwrap(), rates[1]);
    let fig = run["trials"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["metric"] == "throughput")
        .unwrap();
    assert_eq!(fig["values"].as_array().unwrap().len(), 3);
    assert_eq!(fig["coverage"].as_f64().unwrap(), 0.75);
    let verdicts = v["assertions"].as_array().unwrap();
    assert!(
        verdicts.iter().take(2).all(|a| a["pass"] == true),
        "{verdicts:?}"
    );
    assert_eq!(
        verdicts[2]["judged"]["shortfall"]["kind"], "too_few_trials",
        "{verdicts:?}"
    );
    // Where it was measured.
    let env = &v["environment"];
    assert!(env["host"]["cores"].as_u64().unwrap() >= 1, "{env}");
    assert!(env["cluster"]["brokers"].as_u64().unwrap() >= 1, "{env}");
    assert!(
        env["cluster"]["api"][0]
            .as_str()
            .unwrap()
            .contains("Produce v"),
        "{env}"
    );
    // None of the trials' topics is left behind.
    let left = common::broker_topics(|t| topics.contains(&t));
    assert!(left.is_empty(), "{left:?}");
}

const AUTO: &str = r#"scenario "auto" {
  repeat = auto(±50%, max 10)
  topic "auto" { partitions = 1 }
  workload {
    messages = 400
    rate     = 4000/s
    payload  = random(size: 100B)
  }
  expect {
    throughput > 1/s with 95% confidence
  }
}
"#;

#[test]
fn plan_shows_the_auto_rule_its_looks_and_what_it_judges() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auto.kbs");
    std::fs::write(&file, AUTO).unwrap();
    let out = kafkabench(&["plan", file.to_str().unwrap()]);
    let text = expect_exit(&out, 0);
    assert!(
        text.contains("repeat = auto(±50%, max 10)") && text.contains("looks after 8, 10 trials"),
        "{text}"
    );
    assert!(text.contains("judged    throughput"), "{text}");
    // `--repeat N` is a fixed count instead.
    let out = kafkabench(&["plan", file.to_str().unwrap(), "--repeat", "4"]);
    let text = expect_exit(&out, 0);
    assert!(
        text.contains("4 trials of every run") && !text.contains("repeat = auto"),
        "{text}"
    );
}

/// A loose target on the local broker: the first look (8 trials) has the answer, and the
/// result says so; the confident assertion is judged at the looks' level.
#[test]
fn auto_repeat_stops_at_the_first_look_that_has_its_answer() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let (stdout, v) = common::run_text_json(dir.path(), "auto", AUTO, 0);
    assert!(
        // Throughput only: a paced rate's is steady on a busy machine, a 100 ms trial's ack.p99
        // is not (±89 % once, with one trial far from the others).
        stdout.contains("8 trials, throughput ±"),
        "{stdout}"
    );
    assert!(stdout.contains("(reached ±50%)"), "{stdout}");
    let t = &v["runs"][0]["trials"];
    assert_eq!(t["results"].as_array().unwrap().len(), 8);
    let a = &t["auto"];
    assert_eq!(a["stop"], "reached", "{a}");
    assert_eq!(a["looks"], serde_json::json!([8, 10]));
    assert!(a["reached"].as_f64().unwrap() <= 0.5, "{a}");
    let confident = &v["assertions"][0];
    assert_eq!(confident["pass"], true, "{confident}");
}
