//! The executor without a cluster: consumer stops, commands, the undo registry, the clock.

use super::*;

fn ctx(ends_at: Option<Duration>) -> Arc<Ctx> {
    Arc::new(Ctx {
        cluster: None,
        meta: None,
        topic: "t".into(),
        bootstrap: "127.0.0.1:1".into(),
        label: "run".into(),
        live: LiveFaults::default(),
        ends_at,
        messages: None,
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
        faults: vec![fault(50, FaultAction::StopConsumer(1), Some(200))],
        ctx: ctx(None),
    };
    let running = t.start(s.clone());
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(s.consumer_stopped.load(Ordering::Acquire), 0b10);
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(s.consumer_stopped.load(Ordering::Acquire), 0);
    let (records, notes) = running.finish().await;
    assert!(notes.is_empty(), "{notes:?}");
    let r = &records[0];
    assert_eq!(r.outcome, "ok");
    assert_eq!(r.target.as_deref(), Some("consumer 2"));
    let (fired, ended) = (r.fired_secs.unwrap(), r.ended_secs.unwrap());
    assert!((0.05..0.15).contains(&fired), "{fired}");
    assert!((0.25..0.4).contains(&ended), "{ended}");
}

#[tokio::test]
async fn a_fault_without_an_end_is_undone_when_the_measured_phase_ends() {
    let s = shared();
    let t = Timeline {
        faults: vec![
            fault(10, FaultAction::StopConsumer(0), None),
            fault(5_000, FaultAction::StopConsumer(2), None),
        ],
        ctx: ctx(Some(Duration::from_millis(200))),
    };
    let running = t.start(s.clone());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(s.consumer_stopped.load(Ordering::Acquire), 1);
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(s.consumer_stopped.load(Ordering::Acquire), 0);
    let (records, _) = running.finish().await;
    assert_eq!(
        records[0].outcome,
        "ok; started again when the measured phase ended"
    );
    assert!(
        records[1]
            .outcome
            .starts_with("not fired: the measured phase ended at 0.2s"),
        "{}",
        records[1].outcome
    );
    assert_eq!(records[1].fired_secs, None);
}

#[tokio::test]
async fn a_run_that_errors_out_undoes_its_faults_when_dropped() {
    let s = shared();
    let t = Timeline {
        faults: vec![fault(0, FaultAction::StopConsumer(0), Some(60_000))],
        ctx: ctx(None),
    };
    let running = t.start(s.clone());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(s.consumer_stopped.load(Ordering::Acquire), 1);
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
    tokio::time::sleep(Duration::from_millis(500)).await;
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
        ended(true, Some(Err("boom".into())), "restarted"),
        "not undone: boom"
    );
}
