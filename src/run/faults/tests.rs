//! The executor without a cluster: consumer stops, commands, the undo registry, the clock.

use super::*;

fn ctx(ends_at: Option<Duration>) -> Arc<Ctx> {
    ctx_of(ends_at, None)
}

/// A phase that ends at `ends_at` or once `messages` are sent.
fn ctx_of(ends_at: Option<Duration>, messages: Option<u64>) -> Arc<Ctx> {
    Arc::new(Ctx {
        cluster: None,
        meta: None,
        topic: "t".into(),
        bootstrap: "127.0.0.1:1".into(),
        label: "run".into(),
        live: LiveFaults::default(),
        ends_at,
        messages,
    })
}

fn fault(at_ms: u64, action: FaultAction, lasts_ms: Option<u64>) -> Fault {
    Fault {
        at: Duration::from_millis(at_ms),
        action,
        lasts: lasts_ms.map(Duration::from_millis),
        text: "an action".into(),
        span: None,
    }
}

/// Waits until every action's task has ended on its own (its window over, or the phase), so
/// what a test reads next does not depend on how fast the machine ran them.
async fn settled(running: &Running) {
    let by = Instant::now() + Duration::from_secs(30);
    while !running.tasks.iter().all(JoinHandle::is_finished) {
        assert!(Instant::now() < by, "the actions never ended");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until `consumer_stopped` reads `want` (a fault in force until the test ends it).
async fn stopped(s: &Shared, want: u64) {
    let by = Instant::now() + Duration::from_secs(30);
    while s.consumer_stopped.load(Ordering::Acquire) != want {
        assert!(
            Instant::now() < by,
            "consumer_stopped never became {want:#b}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn shared() -> Arc<Shared> {
    let s = Arc::new(Shared::new(Arc::new(std::sync::atomic::AtomicBool::new(
        false,
    ))));
    s.start_measuring();
    s
}

#[tokio::test]
async fn a_stopped_consumer_is_stopped_within_its_window_and_started_after() {
    let s = shared();
    let t = Timeline {
        faults: vec![
            fault(50, FaultAction::StopConsumer(1), Some(200)),
            // One without an end: in force until the timeline ends, so it is seen stopped.
            fault(50, FaultAction::StopConsumer(2), None),
        ],
        ctx: ctx(None),
    };
    let running = t.start(s.clone());
    // Consumer 2's window is over (its task ended by itself), consumer 3 is still stopped.
    let by = Instant::now() + Duration::from_secs(30);
    while !running.tasks[0].is_finished() {
        assert!(Instant::now() < by, "the window never ended");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stopped(&s, 0b100).await;
    let (records, notes) = running.finish().await;
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(s.consumer_stopped.load(Ordering::Acquire), 0);
    let r = &records[0];
    assert_eq!(r.outcome, "ok");
    assert_eq!(r.target.as_deref(), Some("consumer 2"));
    // Never early, and never shorter than its 200 ms; lateness is the machine's.
    let (fired, ended) = (r.fired_secs.unwrap(), r.ended_secs.unwrap());
    assert!(fired >= 0.05, "{fired}");
    assert!(ended >= 0.25 && ended >= fired, "{ended}");
    assert_eq!(
        records[1].outcome,
        "ok; started again when the measured phase ended"
    );
}

#[tokio::test]
async fn a_fault_without_an_end_is_undone_when_the_measured_phase_ends() {
    let s = shared();
    // The phase ends when its count is sent: a moment the test chooses, on any machine.
    let t = Timeline {
        faults: vec![
            fault(0, FaultAction::StopConsumer(0), None),
            fault(60_000, FaultAction::StopConsumer(2), None),
        ],
        ctx: ctx_of(None, Some(10)),
    };
    let running = t.start(s.clone());
    stopped(&s, 1).await;
    s.sent.store(10, Ordering::Relaxed);
    // Both tasks end by themselves with the phase: the first undone, the second unfired.
    settled(&running).await;
    assert_eq!(s.consumer_stopped.load(Ordering::Acquire), 0);
    let (records, _) = running.finish().await;
    assert_eq!(
        records[0].outcome,
        "ok; started again when the measured phase ended"
    );
    assert!(
        records[1]
            .outcome
            .starts_with("not fired: the measured phase ended at "),
        "{}",
        records[1].outcome
    );
    assert_eq!(records[1].fired_secs, None);
}

#[tokio::test]
async fn a_phase_of_planned_length_ends_the_timeline_at_that_length() {
    let s = shared();
    let t = Timeline {
        faults: vec![fault(60_000, FaultAction::StopConsumer(0), None)],
        ctx: ctx(Some(Duration::from_millis(200))),
    };
    let running = t.start(s.clone());
    settled(&running).await;
    let (records, _) = running.finish().await;
    // Noticed at the phase's end, or later on a busy machine; never before.
    let at: f64 = records[0]
        .outcome
        .strip_prefix("not fired: the measured phase ended at ")
        .and_then(|s| s.strip_suffix('s'))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{}", records[0].outcome));
    assert!(at >= 0.2, "{}", records[0].outcome);
}

#[tokio::test]
async fn a_run_that_errors_out_undoes_its_faults_when_dropped() {
    let s = shared();
    let t = Timeline {
        faults: vec![fault(0, FaultAction::StopConsumer(0), Some(60_000))],
        ctx: ctx(None),
    };
    let running = t.start(s.clone());
    stopped(&s, 1).await;
    drop(running);
    assert_eq!(s.consumer_stopped.load(Ordering::Acquire), 0);
}

#[tokio::test]
async fn a_command_gets_its_environment_and_its_exit_status_and_output_are_recorded() {
    let s = shared();
    let t = Timeline {
        faults: vec![
            fault(
                0,
                FaultAction::Run(
                    "echo topic=$KB_TOPIC at=$KB_FAULT_AT; echo oops >&2; exit 3".into(),
                ),
                None,
            ),
            fault(0, FaultAction::Run("true".into()), None),
        ],
        ctx: ctx(None),
    };
    let running = t.start(s);
    settled(&running).await;
    let (records, _) = running.finish().await;
    assert_eq!(records[0].outcome, "exit 3: topic=t at=0 oops");
    assert_eq!(records[1].outcome, "ok (exit 0)");
    assert!(records[0].ended_secs.is_some());
}

#[test]
fn the_undo_registry_undoes_each_fault_once() {
    let s = shared();
    let live = LiveFaults::default();
    s.consumer_stopped.store(0b11, Ordering::Release);
    let a = live.hold(Undo::Consumer(s.clone(), 0));
    live.hold(Undo::Consumer(s.clone(), 1));
    assert!(live.take(a).is_some());
    assert!(live.take(a).is_none(), "taken once");
    assert_eq!(live.undo_now(), vec!["consumer 2 may run again"]);
    assert!(!live.any());
    assert_eq!(s.consumer_stopped.load(Ordering::Acquire), 0b01);
}

#[test]
fn an_outcome_says_how_the_fault_ended() {
    assert_eq!(ended(true, Some(Ok(String::new())), "restarted"), "ok");
    assert_eq!(
        ended(false, None, "restarted"),
        "ok; restarted when the measured phase ended"
    );
    assert_eq!(
        ended(true, Some(Err(FaultError::NoMetadataClient)), "restarted"),
        "not undone: no metadata client"
    );
}

#[test]
fn a_fault_error_says_what_it_always_said() {
    use std::os::unix::process::ExitStatusExt;
    let failed = |last: &str| FaultError::ScriptFailed {
        args: "stop 2 --kill".into(),
        status: std::process::ExitStatus::from_raw(1 << 8),
        last: last.into(),
    };
    assert_eq!(
        failed("").to_string(),
        "scripts/kafka-local stop 2 --kill failed (exit status: 1)"
    );
    assert_eq!(
        failed("no node 2").to_string(),
        "scripts/kafka-local stop 2 --kill failed (exit status: 1): no node 2"
    );
    let not_a_node = FaultError::Action {
        text: "at 1s kill broker 4".into(),
        cause: Box::new(FaultError::NotANode {
            id: 4,
            home: "/h".into(),
            ids: vec![1, 2, 3],
        }),
    };
    let problems = Problems(vec![
        not_a_node,
        FaultError::NodeNotRunning {
            id: 2,
            home: "/h".into(),
            state: "paused".into(),
        },
    ]);
    assert_eq!(
        problems.to_string(),
        "`at 1s kill broker 4`: broker 4 is not a node of the kafka-local cluster in /h (its \
         brokers are 1, 2, 3); broker 2 of the kafka-local cluster in /h is paused; \
         `scripts/kafka-local up` repairs it"
    );
}
