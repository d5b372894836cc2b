//! A worker process: started from its build, its `hello` checked, its log kept, its death
//! named with its last log lines (rust-analyzer's proc-macro server does the same: a worker
//! that dies or lies is named, never trusted).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::super::error::WorkerError;
use super::frame::{self, FrameReader, Next};

/// The protocol version this kafkabench speaks (clients/PROTOCOL.md).
pub(crate) const PROTOCOL: u64 = 2;
/// How many of a worker's last log lines an error shows.
const LOG_LINES: usize = 12;
/// How long a worker may take to say hello (a JVM starts in well under a second; a loaded
/// machine may take several).
const HELLO_WITHIN: Duration = Duration::from_secs(60);

/// The worker's output pipe holds this much: Linux's default (64 KiB) is one completion
/// frame, so a worker whose frame found kafkabench's reader descheduled for a moment would
/// block in its write, on the client's own callback thread.
const PIPE_BYTES: libc::c_int = 1 << 20;

/// Widens the pipe to `PIPE_BYTES` where the system allows it (fs.pipe-max-size); where not,
/// it stays as it was: only the slack changes, never what is sent.
fn widen_pipe(p: &ChildStdout) {
    use std::os::fd::AsRawFd;
    // SAFETY: F_SETPIPE_SZ on a pipe this process owns; it reads and writes no memory.
    unsafe {
        libc::fcntl(p.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES);
    }
}

/// What a worker said of itself.
#[derive(Debug, Clone)]
pub(crate) struct Hello {
    /// The client library's own version (the kafka-clients jar's, franz-go's module's).
    pub version: String,
    pub roles: Vec<String>,
}

/// One running worker and its pipes.
pub(crate) struct Worker {
    pub client: &'static str,
    child: Child,
    stdin: BufWriter<ChildStdin>,
    /// Kept open for `frames`, which reads its descriptor.
    _stdout: ChildStdout,
    pub frames: FrameReader,
    log: Arc<Mutex<VecDeque<String>>>,
    pub hello: Hello,
}

impl Worker {
    /// Starts the worker of `built` and waits for its `hello`, which must name the client
    /// release it was built for (proof the release asked for is the one that runs).
    pub(crate) fn of(built: &super::Built) -> Result<Worker, WorkerError> {
        let w = Worker::start(built.client, &built.run)?;
        if w.hello.version != built.version {
            return Err(w.failed(format!(
                "runs {} {}, not the {} it was built for",
                built.client, w.hello.version, built.version
            )));
        }
        Ok(w)
    }

    /// Starts the worker at `run` (its build's start script) and waits for its `hello`.
    pub(crate) fn start(client: &'static str, run: &Path) -> Result<Worker, WorkerError> {
        let refused = |what: String| WorkerError {
            client,
            what,
            log: Vec::new(),
        };
        let mut child = Command::new(run)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| refused(format!("could not start ({}): {e}", run.display())))?;
        let (Some(stdin), Some(from_worker), Some(worker_log)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            return Err(refused("has no pipes".into()));
        };
        widen_pipe(&from_worker);
        let log = Arc::new(Mutex::new(VecDeque::new()));
        let keep = log.clone();
        let _ = std::thread::Builder::new()
            .name(format!("kb-{client}-log"))
            .spawn(move || {
                for line in BufReader::new(worker_log).lines() {
                    let Ok(line) = line else { break };
                    let mut l = keep.lock().unwrap_or_else(|e| e.into_inner());
                    if l.len() == LOG_LINES {
                        l.pop_front();
                    }
                    l.push_back(line);
                }
            });
        let frames = FrameReader::new(&from_worker);
        let mut w = Worker {
            client,
            child,
            stdin: BufWriter::with_capacity(1 << 16, stdin),
            _stdout: from_worker,
            frames,
            log,
            hello: Hello {
                version: String::new(),
                roles: Vec::new(),
            },
        };
        let hello = w.expect("hello", HELLO_WITHIN, &|| false)?;
        let protocol = hello["protocol"].as_u64().unwrap_or(0);
        if protocol != PROTOCOL {
            return Err(w.failed(format!(
                "speaks protocol {protocol}; this kafkabench speaks {PROTOCOL} \
                 (clients/PROTOCOL.md): rebuild it from this checkout's clients/"
            )));
        }
        w.hello = Hello {
            version: hello["version"].as_str().unwrap_or("?").to_string(),
            roles: (hello["roles"].as_array().into_iter().flatten())
                .filter_map(|r| r.as_str().map(str::to_string))
                .collect(),
        };
        Ok(w)
    }

    /// Sends one JSON message.
    pub(crate) fn send(&mut self, msg: &Value) -> Result<(), WorkerError> {
        frame::write_json(&mut self.stdin, msg)
            .map_err(|e| self.failed(format!("stopped reading its input ({e})")))
    }

    /// Sends payload lines.
    pub(crate) fn send_lines<'a>(
        &mut self,
        lines: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<(), WorkerError> {
        frame::write_lines(&mut self.stdin, lines)
            .map_err(|e| self.failed(format!("stopped reading its input ({e})")))
    }

    /// Waits for the JSON message `msg`, at most `within` or until `give_up` says so. Any
    /// other frame before it is a worker out of turn.
    pub(crate) fn expect(
        &mut self,
        msg: &str,
        within: Duration,
        give_up: &dyn Fn() -> bool,
    ) -> Result<Value, WorkerError> {
        let by = Instant::now() + within;
        loop {
            let got = match self.frames.next(50) {
                Ok(Next::Frame(frame::JSON, body)) => serde_json::from_slice::<Value>(body)
                    .map_err(|e| format!("wrote a message that is not JSON ({e})")),
                Ok(Next::Frame(kind, _)) => Err(format!(
                    "wrote a '{}' frame while kafkabench waited for '{msg}'",
                    kind as char
                )),
                Ok(Next::Idle) => {
                    if Instant::now() >= by {
                        return Err(self.failed(format!(
                            "did not answer '{msg}' within {}s",
                            within.as_secs()
                        )));
                    }
                    if give_up() {
                        return Err(self.failed(format!("was stopped before '{msg}'")));
                    }
                    continue;
                }
                Ok(Next::Closed) => Err(self.exited()),
                Err(e) => Err(format!("wrote a broken frame ({e})")),
            };
            let v = got.map_err(|what| self.failed(what))?;
            return match v["msg"].as_str() {
                Some(m) if m == msg => Ok(v),
                Some("fail") => Err(self.failed(format!(
                    "failed: {}",
                    v["message"].as_str().unwrap_or("(no message)")
                ))),
                other => Err(self.failed(format!(
                    "answered '{}' where kafkabench waited for '{msg}'",
                    other.unwrap_or("(no msg)")
                ))),
            };
        }
    }

    /// The worker's output ended: how it exited.
    pub(crate) fn exited(&mut self) -> String {
        // Its log thread reads to the end; give it a moment to take the last lines.
        let by = Instant::now() + Duration::from_secs(2);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < by => std::thread::sleep(Duration::from_millis(20)),
                _ => break None,
            }
        };
        std::thread::sleep(Duration::from_millis(50));
        match status {
            Some(s) => format!("exited ({s}) in the middle of the run"),
            None => "closed its output in the middle of the run".into(),
        }
    }

    /// The worker process's CPU time so far (None once it has exited).
    pub(crate) fn cpu(&self) -> Option<Duration> {
        crate::run::cpu::of_process(self.child.id())
    }

    /// An error naming this worker, with its last log lines.
    pub(crate) fn failed(&self, what: impl Into<String>) -> WorkerError {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        WorkerError {
            client: self.client,
            what: what.into(),
            log: log.iter().cloned().collect(),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // A worker is never left behind: one that did not exit by now is killed.
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.stdin.flush();
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
