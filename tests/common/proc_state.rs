//! A process's real stops and starts, as the kernel sees them: its state in `/proc/PID/stat`
//! (`T` stopped, anything else running) polled every few milliseconds on a thread, each change
//! stamped with the wall clock. What a broker paused from outside did, by a count kafkabench
//! did not make.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

/// How often the state is read: a change is stamped at most this late.
const EVERY: Duration = Duration::from_millis(5);

pub(crate) struct StateWatch {
    changes: Arc<Mutex<Vec<(SystemTime, bool)>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Whether process `pid` is stopped (SIGSTOP), from its stat line; None once it is gone.
fn stopped(pid: i32) -> Option<bool> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the command name's closing parenthesis.
    let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
    Some(state == 'T')
}

impl StateWatch {
    pub(crate) fn start(pid: i32) -> StateWatch {
        let changes = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (changes.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut last = None;
            while !s.load(Ordering::Relaxed) {
                let Some(now) = stopped(pid) else { break };
                if last != Some(now) {
                    c.lock().unwrap().push((SystemTime::now(), now));
                    last = Some(now);
                }
                std::thread::sleep(EVERY);
            }
        });
        StateWatch {
            changes,
            stop,
            thread: Some(thread),
        }
    }

    /// Each time the process was seen stopped: (stopped at, continued at, when seen).
    pub(crate) fn stops(&self) -> Vec<(SystemTime, Option<SystemTime>)> {
        let changes = self.changes.lock().unwrap().clone();
        let mut out = Vec::new();
        for (k, (at, is_stopped)) in changes.iter().enumerate() {
            if *is_stopped {
                let back = changes.get(k + 1).map(|c| c.0);
                out.push((*at, back));
            }
        }
        out
    }
}

impl Drop for StateWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
