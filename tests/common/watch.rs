//! A kafkabench child whose progress lines (stderr, a pipe) are read while it runs, so a test
//! acts when the run says it has got somewhere (a run producing, records acknowledged) instead
//! of after a sleep that a busy machine outlasts. `common::wait_bounded` is this without the
//! watching.

use std::io::Read;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub(crate) struct Watched {
    child: Child,
    stderr: Arc<Mutex<String>>,
    reader: Option<JoinHandle<()>>,
}

impl Watched {
    /// Takes over a child spawned with stderr piped (and without `--quiet`, for progress).
    pub(crate) fn new(mut child: Child) -> Watched {
        let mut pipe = child.stderr.take().expect("stderr piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        let into = stderr.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                into.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Watched {
            child,
            stderr,
            reader: Some(reader),
        }
    }

    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Waits until run `run` of the invocation (`"run 2 of 2"`) reports acknowledged records
    /// on a progress line, so it is in its measured phase; fails past `limit`, or when the
    /// process ends first.
    pub(crate) fn wait_for_acked(&mut self, run: &str, limit: Duration) {
        let head = format!("progress: {run} ");
        let started = Instant::now();
        loop {
            let seen = self.stderr.lock().unwrap().clone();
            if seen
                .lines()
                .filter(|l| l.starts_with(&head))
                .any(|l| acked(l) > 0)
            {
                return;
            }
            if let Some(status) = self.child.try_wait().expect("wait") {
                panic!("kafkabench ended ({status}) before {run} acknowledged a record:\n{seen}");
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!("{run} acknowledged no record within {limit:?}:\n{seen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for the process at most `limit` (killing it and failing past that) and returns
    /// its exit code, stdout, stderr and how long it took from this call.
    pub(crate) fn wait(mut self, limit: Duration) -> (i32, String, String, Duration) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                self.reader.take().map(JoinHandle::join);
                let mut out = String::new();
                if let Some(mut pipe) = self.child.stdout.take() {
                    let _ = pipe.read_to_string(&mut out);
                }
                panic!(
                    "kafkabench did not return within {limit:?}\nstdout:\n{out}\nstderr:\n{}",
                    self.stderr.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let took = started.elapsed();
        let _ = self.reader.take().map(JoinHandle::join);
        let mut out = String::new();
        if let Some(mut pipe) = self.child.stdout.take() {
            pipe.read_to_string(&mut out).unwrap();
        }
        let err = self.stderr.lock().unwrap().clone();
        (status.code().unwrap_or(-1), out, err, took)
    }
}

/// The acknowledged records a progress line reports: the number before ` records`
/// (`… producing: 12s of 120s, 11000 records, …` or `… producing: 4100 of 10000 records, …`).
fn acked(line: &str) -> u64 {
    let Some((_, counts)) = line.split_once("producing: ") else {
        return 0;
    };
    counts
        .split(", ")
        .find(|part| part.contains(" records"))
        .and_then(|part| part.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn acked_reads_both_forms_of_a_progress_line() {
    assert_eq!(
        acked("progress: run 2 of 2 (long) producing: 12s of 120s, 11000 records, 1000 msg/s"),
        11000
    );
    assert_eq!(
        acked("progress: run 1 of 1 (run) producing: 4100 of 10000 records, 2000 msg/s, 2s"),
        4100
    );
    assert_eq!(
        acked("progress: run 1 of 2 (short) done: 2000 of 2000 records"),
        0
    );
}
