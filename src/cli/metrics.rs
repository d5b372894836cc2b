//! `--metrics ADDR`: an OpenMetrics endpoint while kafkabench runs, for the Prometheus a team
//! already watches soak tests and capacity searches with. The run stage hands progress
//! snapshots (counters, live latency buckets) to `sink`; a scrape renders the latest of each
//! run with `report::openmetrics`. After the invocation the endpoint lingers until a scrape has
//! seen the final totals, or `--metrics-linger` passes.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::measure::RunResult;
use crate::plan::Plan;
use crate::report::openmetrics::{self, Exposition, Format, ProcessStats, RunSeries};
use crate::run::{Progress, ProgressPhase, ProgressSink};

/// The window the achieved rate is taken over while a run goes on.
const RATE_WINDOW: Duration = Duration::from_secs(1);
/// How long one connection may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// The largest request head read.
const MAX_HEAD: usize = 16 * 1024;

/// `--metrics`' address: `HOST:PORT`, or `:PORT` for every interface.
pub(super) fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let full = match s.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => s.to_string(),
    };
    full.to_socket_addrs()
        .map_err(|e| format!("`{s}` is not HOST:PORT ({e}); e.g. 127.0.0.1:9464 or :9464"))?
        .next()
        .ok_or_else(|| format!("`{s}` names no address"))
}

/// Which series a snapshot updates: the file, the plan's run, its trial and probe.
type Key = (usize, usize, u32, u32);

struct Entry {
    series: RunSeries,
    /// Recent (when, acked) pairs, for the achieved rate.
    window: Vec<(Instant, u64)>,
}

/// What the labels of one file's runs are made of.
#[derive(Clone, Default)]
struct FileLabels {
    scenario: String,
    run_id: String,
    shard: Option<String>,
    /// The plan's label of each run, by index.
    runs: Vec<String>,
}

#[derive(Default)]
struct State {
    files: Vec<FileLabels>,
    series: BTreeMap<Key, Entry>,
    finished: bool,
}

/// The endpoint and the latest state of every run it has seen.
pub(super) struct Metrics {
    state: Mutex<State>,
    addr: SocketAddr,
    stop: AtomicBool,
    /// A scrape that began after the invocation finished has been answered.
    final_scrape: AtomicBool,
    started: SystemTime,
    server: Mutex<Option<JoinHandle<()>>>,
}

impl Metrics {
    /// Binds the address (an error is said before anything runs) and starts serving.
    pub(super) fn serve(addr: SocketAddr) -> Result<Arc<Metrics>, String> {
        let listener = TcpListener::bind(addr)
            .map_err(|e| format!("--metrics {addr}: cannot listen there: {e}"))?;
        let addr = listener.local_addr().unwrap_or(addr);
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("--metrics {addr}: {e}"))?;
        let m = Arc::new(Metrics {
            state: Mutex::new(State::default()),
            addr,
            stop: AtomicBool::new(false),
            final_scrape: AtomicBool::new(false),
            started: SystemTime::now(),
            server: Mutex::new(None),
        });
        let me = m.clone();
        let handle = std::thread::Builder::new()
            .name("kafkabench-metrics".into())
            .spawn(move || me.accept_loop(listener))
            .map_err(|e| format!("--metrics: cannot start its thread: {e}"))?;
        *m.server.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle);
        Ok(m)
    }

    pub(super) fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next file's runs will report through the sink this returns.
    pub(super) fn file(self: &Arc<Self>, plan: &Plan, shard: Option<&str>) -> ProgressSink {
        let file = {
            let mut st = self.lock();
            st.files.push(FileLabels {
                scenario: plan.scenario.clone(),
                run_id: plan.run_id.clone(),
                shard: shard.map(str::to_string),
                runs: plan.runs.iter().map(|r| r.label.clone()).collect(),
            });
            st.files.len() - 1
        };
        let me = self.clone();
        Arc::new(move |p: &Progress| me.update(file, p))
    }

    fn update(&self, file: usize, p: &Progress) {
        let now = Instant::now();
        let mut st = self.lock();
        let Some(fl) = st.files.get(file).cloned() else {
            return;
        };
        let trial = p.at.trial.map_or(0, |t| t.0);
        let probe = p.at.probe.map(|(k, _)| k);
        let key = (file, p.index, trial, probe.unwrap_or(0));
        let e = st.series.entry(key).or_insert_with(|| Entry {
            series: RunSeries {
                labels: labels(&fl, p),
                probe,
                ..RunSeries::default()
            },
            window: Vec::new(),
        });
        let s = &mut e.series;
        s.phase = match p.phase {
            ProgressPhase::Warmup => "warmup",
            ProgressPhase::Producing => "measured",
            ProgressPhase::Draining => "drain",
            ProgressPhase::Finished => "done",
        };
        s.sent = p.sent.max(p.acked + p.failed);
        s.acked = p.acked;
        s.failed = p.failed;
        s.elapsed_secs = p.elapsed.as_secs_f64();
        s.target_rate = p.target_rate;
        if let Some(l) = p.live {
            s.ack = Some(l.ack());
            if !l.e2e.is_empty() {
                let e2e = l.e2e();
                s.consumed = Some(e2e.count());
                s.e2e = Some(e2e);
            }
        }
        s.achieved_rate = match p.phase {
            ProgressPhase::Finished | ProgressPhase::Draining => {
                p.acked as f64 / p.elapsed.as_secs_f64().max(1e-3)
            }
            ProgressPhase::Warmup => 0.0,
            ProgressPhase::Producing => {
                e.window.push((now, p.acked));
                let keep = e
                    .window
                    .iter()
                    .rposition(|(t, _)| now.duration_since(*t) >= RATE_WINDOW)
                    .unwrap_or(0);
                e.window.drain(..keep);
                let (t0, a0) = e.window[0];
                let dt = now.duration_since(t0).as_secs_f64();
                if dt > 0.0 {
                    p.acked.saturating_sub(a0) as f64 / dt
                } else {
                    0.0
                }
            }
        };
    }

    /// A collected run's merged figures (`collect --metrics`): the shards' totals added up.
    pub(super) fn collected(&self, plan: &Plan, results: &[RunResult]) {
        let mut st = self.lock();
        st.files.push(FileLabels {
            scenario: plan.scenario.clone(),
            run_id: plan.run_id.clone(),
            shard: Some("all".into()),
            runs: plan.runs.iter().map(|r| r.label.clone()).collect(),
        });
        let file = st.files.len() - 1;
        let fl = st.files[file].clone();
        for r in results {
            let labels = vec![
                ("scenario", fl.scenario.clone()),
                ("run", fl.runs.get(r.index).cloned().unwrap_or_default()),
                ("run_id", fl.run_id.clone()),
                ("shard", "all".to_string()),
            ];
            let series = RunSeries {
                labels,
                phase: "done",
                sent: r.sent,
                acked: r.acked,
                failed: r.failed,
                consumed: r.delivery.as_ref().map(|d| d.consumed),
                achieved_rate: r.throughput_msgs,
                elapsed_secs: r.elapsed_secs,
                ..RunSeries::default()
            };
            st.series.insert(
                (file, r.index, 0, 0),
                Entry {
                    series,
                    window: Vec::new(),
                },
            );
        }
    }

    fn exposition(&self) -> Exposition {
        let st = self.lock();
        Exposition {
            runs: st.series.values().map(|e| e.series.clone()).collect(),
            process: Some(process(self.started)),
            finished: st.finished,
        }
    }

    /// The invocation is over: the endpoint stays up until a scrape has seen the final
    /// totals, `linger` passes, or `interrupt` is set; then it closes.
    pub(super) fn linger(&self, linger: Duration, interrupt: &AtomicBool) {
        self.lock().finished = true;
        let until = Instant::now() + linger;
        while Instant::now() < until
            && !self.final_scrape.load(Ordering::Acquire)
            && !interrupt.load(Ordering::Relaxed)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.close();
    }

    fn close(&self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.server.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = h.join();
        }
    }

    fn accept_loop(&self, listener: TcpListener) {
        while !self.stop.load(Ordering::Acquire) {
            match listener.accept() {
                Ok((conn, _)) => {
                    // A client that stalls or hangs up costs this scrape, nothing more.
                    let _ = self.answer(conn);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// One request: `GET /metrics` is the exposition; anything else a short answer.
    fn answer(&self, mut conn: TcpStream) -> std::io::Result<()> {
        conn.set_nonblocking(false)?;
        conn.set_read_timeout(Some(REQUEST_TIMEOUT))?;
        conn.set_write_timeout(Some(REQUEST_TIMEOUT))?;
        let finished_before = self.lock().finished;
        let head = read_head(&mut conn)?;
        let line = head.lines().next().unwrap_or("");
        let mut parts = line.split_whitespace();
        let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let path = path.split('?').next().unwrap_or("");
        let (status, ctype, body) = match (method, path) {
            ("GET" | "HEAD", "/metrics") => {
                let format = Format::negotiate(header(&head, "accept"));
                let mut body = Vec::new();
                openmetrics::write(&self.exposition(), format, &mut body)?;
                ("200 OK", format.content_type(), body)
            }
            ("GET" | "HEAD", "/") => (
                "200 OK",
                "text/plain; charset=utf-8",
                b"kafkabench: metrics at /metrics\n".to_vec(),
            ),
            ("GET" | "HEAD", _) => (
                "404 Not Found",
                "text/plain; charset=utf-8",
                b"not found: metrics are at /metrics\n".to_vec(),
            ),
            _ => (
                "405 Method Not Allowed",
                "text/plain; charset=utf-8",
                b"only GET\n".to_vec(),
            ),
        };
        write!(
            conn,
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )?;
        if method != "HEAD" {
            conn.write_all(&body)?;
        }
        conn.flush()?;
        if finished_before && path == "/metrics" {
            self.final_scrape.store(true, Ordering::Release);
        }
        Ok(())
    }
}

impl Drop for Metrics {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// A request header's value by its (case-insensitive) name.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Reads up to the blank line that ends a request head.
fn read_head(conn: &mut TcpStream) -> std::io::Result<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_HEAD {
        let n = conn.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn labels(fl: &FileLabels, p: &Progress) -> Vec<(&'static str, String)> {
    let mut l = vec![
        ("scenario", fl.scenario.clone()),
        ("run", fl.runs.get(p.index).cloned().unwrap_or_default()),
        ("run_id", fl.run_id.clone()),
    ];
    if let Some(s) = &fl.shard {
        l.push(("shard", s.clone()));
    }
    if let Some((t, n)) = p.at.trial {
        l.push(("trial", format!("{t}/{n}")));
    }
    if let Some((k, _)) = p.at.probe {
        l.push(("probe", k.to_string()));
    }
    l
}

/// The process's CPU time and resident memory, read from the kernel at the scrape.
fn process(started: SystemTime) -> ProcessStats {
    ProcessStats {
        cpu_secs: crate::run::cpu::process().as_secs_f64(),
        rss_bytes: rss_bytes(),
        start_time_secs: started
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
    }
}

/// Resident pages × page size, from /proc (0 where there is none).
fn rss_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page.max(0) as u64
}

/// The endpoint `--metrics` asks for, started (its address said on stderr); an address that
/// cannot be served is said and ends the invocation before anything runs.
pub(super) fn start(
    args: &super::MetricsArgs,
) -> Result<Option<Arc<Metrics>>, crate::exit::Outcome> {
    let Some(addr) = args.metrics else {
        return Ok(None);
    };
    match Metrics::serve(addr) {
        Ok(m) => {
            eprintln!("metrics: OpenMetrics at http://{}/metrics", m.addr());
            Ok(Some(m))
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(crate::exit::Outcome::Invalid)
        }
    }
}

/// Two sinks fed the same snapshots (the progress display and the metrics).
pub(super) fn both(a: Option<ProgressSink>, b: Option<ProgressSink>) -> Option<ProgressSink> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Arc::new(move |p: &Progress| {
            a(p);
            b(p);
        })),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_host_and_port_or_a_bare_port_for_every_interface() {
        assert_eq!(
            parse_addr(":9464").unwrap(),
            "0.0.0.0:9464".parse().unwrap()
        );
        assert_eq!(
            parse_addr("127.0.0.1:0").unwrap(),
            "127.0.0.1:0".parse().unwrap()
        );
        assert!(parse_addr("9464").is_err());
        assert!(parse_addr("localhost:http-ish").is_err());
    }

    #[test]
    fn the_endpoint_answers_a_scrape_and_lingers_only_until_one_sees_the_end() {
        let m = Metrics::serve("127.0.0.1:0".parse().unwrap()).unwrap();
        let get = |path: &str, accept: &str| {
            let mut c = TcpStream::connect(m.addr()).unwrap();
            write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n{accept}\r\n").unwrap();
            let mut s = String::new();
            c.read_to_string(&mut s).unwrap();
            s
        };
        let first = get(
            "/metrics",
            "ACCEPT: application/openmetrics-text; version=1.0.0\r\n",
        );
        assert!(first.starts_with("HTTP/1.1 200 OK"), "{first}");
        assert!(first.contains("Content-Type: application/openmetrics-text"));
        assert!(first.contains("kafkabench_finished 0"));
        assert!(first.ends_with("# EOF\n"));
        let plain = get("/metrics", "");
        assert!(
            plain.contains("Content-Type: text/plain; version=0.0.4"),
            "{plain}"
        );
        assert!(plain.contains("kafkabench_finished 0") && !plain.contains("# EOF"));
        assert!(get("/nope", "").starts_with("HTTP/1.1 404"));
        let m2 = m.clone();
        let scraper = std::thread::spawn(move || {
            // After the end is marked, one scrape sees it and lets the endpoint close.
            while !m2.lock().finished {
                std::thread::sleep(Duration::from_millis(5));
            }
            let mut c = TcpStream::connect(m2.addr()).unwrap();
            write!(c, "GET /metrics HTTP/1.1\r\n\r\n").unwrap();
            let mut s = String::new();
            c.read_to_string(&mut s).unwrap();
            s
        });
        let t = Instant::now();
        m.linger(Duration::from_secs(30), &AtomicBool::new(false));
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "closed after the scrape"
        );
        assert!(scraper.join().unwrap().contains("kafkabench_finished 1"));
    }
}
