//! `--metrics ADDR`: an OpenMetrics endpoint while kafkabench runs, for the Prometheus a team
//! already watches soak tests and capacity searches with. The run stage hands progress
//! snapshots (counters, live latency buckets) to `sink`; this keeps the latest series of each
//! run (`report::openmetrics` makes it from the snapshot: every figure is derived there) and
//! a scrape renders them with `report::openmetrics`. `http.rs` serves them. After the
//! invocation the endpoint lingers until a scrape has read the final totals, or
//! `--metrics-linger` passes.

mod http;

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::measure::RunResult;
use crate::plan::Plan;
use crate::report::openmetrics::{
    self, Exposition, FileLabels, Format, LiveRun, ProcessStats, RunSeries,
};
use crate::run::{Progress, ProgressSink};
use http::{Limits, Page, Server, Site};

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

/// A run's series: live from its snapshots, or merged by `collect`.
enum Entry {
    Live(LiveRun),
    Collected(RunSeries),
}

impl Entry {
    fn series(&self) -> &RunSeries {
        match self {
            Entry::Live(l) => l.series(),
            Entry::Collected(s) => s,
        }
    }
}

#[derive(Default)]
struct State {
    files: Vec<FileLabels>,
    series: BTreeMap<Key, Entry>,
    finished: bool,
}

/// The latest state of every run the endpoint has seen: what it serves.
struct Board {
    state: Mutex<State>,
    /// A scrape with the final totals has been answered.
    final_scrape: AtomicBool,
    started: SystemTime,
}

impl Board {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn exposition(&self) -> Exposition {
        let st = self.lock();
        Exposition {
            runs: st.series.values().map(|e| e.series().clone()).collect(),
            process: Some(ProcessStats::now(self.started)),
            finished: st.finished,
        }
    }
}

impl Site for Board {
    fn scrape(&self, accept: Option<&str>) -> Page {
        let format = Format::negotiate(accept);
        let e = self.exposition();
        let mut body = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = openmetrics::write(&e, format, &mut body);
        Page {
            content_type: format.content_type(),
            body,
            last: e.finished,
        }
    }

    fn delivered_last(&self) {
        self.final_scrape.store(true, Ordering::Release);
    }
}

/// The endpoint and what it serves.
pub(super) struct Metrics {
    board: Arc<Board>,
    server: Server,
}

impl Metrics {
    /// Binds the address (an error is said before anything runs) and starts serving.
    pub(super) fn serve(addr: SocketAddr) -> Result<Arc<Metrics>, String> {
        Metrics::serve_within(addr, Limits::SCRAPE)
    }

    fn serve_within(addr: SocketAddr, limits: Limits) -> Result<Arc<Metrics>, String> {
        let board = Arc::new(Board {
            state: Mutex::new(State::default()),
            final_scrape: AtomicBool::new(false),
            started: SystemTime::now(),
        });
        let server = Server::start(addr, board.clone(), limits)?;
        Ok(Arc::new(Metrics { board, server }))
    }

    pub(super) fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The next file's runs will report through the sink this returns.
    pub(super) fn file(self: &Arc<Self>, plan: &Plan, shard: Option<&str>) -> ProgressSink {
        let file = {
            let mut st = self.board.lock();
            st.files.push(file_labels(plan, shard));
            st.files.len() - 1
        };
        let board = self.board.clone();
        Arc::new(move |p: &Progress| update(&board, file, p))
    }

    /// A collected run's merged figures (`collect --metrics`): the shards' totals added up.
    pub(super) fn collected(&self, plan: &Plan, results: &[RunResult]) {
        let mut st = self.board.lock();
        let fl = file_labels(plan, Some("all"));
        st.files.push(fl.clone());
        let file = st.files.len() - 1;
        for r in results {
            let series = openmetrics::collected(&fl, r);
            st.series
                .insert((file, r.index, 0, 0), Entry::Collected(series));
        }
    }

    /// The invocation is over: the endpoint stays up until a scrape has seen the final
    /// totals, `linger` passes, or `interrupt` is set; then it closes.
    pub(super) fn linger(&self, linger: Duration, interrupt: &AtomicBool) {
        self.board.lock().finished = true;
        let until = Instant::now() + linger;
        while Instant::now() < until
            && !self.board.final_scrape.load(Ordering::Acquire)
            && !interrupt.load(Ordering::Relaxed)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.server.close();
    }
}

fn file_labels(plan: &Plan, shard: Option<&str>) -> FileLabels {
    FileLabels {
        scenario: plan.scenario.clone(),
        run_id: plan.run_id.clone(),
        shard: shard.map(str::to_string),
        runs: plan.runs.iter().map(|r| r.label.clone()).collect(),
    }
}

/// A snapshot of one of `file`'s runs, kept as its series.
fn update(board: &Board, file: usize, p: &Progress) {
    let now = Instant::now();
    let mut st = board.lock();
    let State { files, series, .. } = &mut *st;
    let Some(fl) = files.get(file) else {
        return;
    };
    let trial = p.at.trial.map_or(0, |t| t.0);
    let probe = p.at.probe.map_or(0, |(k, _)| k);
    let e = series
        .entry((file, p.index, trial, probe))
        .or_insert_with(|| Entry::Live(LiveRun::new(fl, p)));
    if let Entry::Live(l) = e {
        l.update(p, now);
    }
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

    /// Whether `text` has `line` as a whole line.
    fn has(text: &str, line: &str) -> bool {
        text.lines().any(|l| l == line)
    }

    /// One request on a fresh connection, and the whole answer.
    fn get(addr: SocketAddr, path: &str, accept: &str) -> String {
        request(addr, "GET", path, accept)
    }

    fn request(addr: SocketAddr, method: &str, path: &str, accept: &str) -> String {
        use std::io::{Read, Write};
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        write!(c, "{method} {path} HTTP/1.1\r\nHost: x\r\n{accept}\r\n").unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn the_endpoint_negotiates_the_format_and_lingers_only_until_a_scrape_sees_the_end() {
        let m = Metrics::serve("127.0.0.1:0".parse().unwrap()).unwrap();
        let first = get(
            m.addr(),
            "/metrics",
            "ACCEPT: application/openmetrics-text; version=1.0.0\r\n",
        );
        assert!(first.starts_with("HTTP/1.1 200 OK"), "{first}");
        assert!(
            first.contains("content-type: application/openmetrics-text"),
            "{first}"
        );
        assert!(has(&first, "kafkabench_finished 0"));
        assert!(first.ends_with("# EOF\n"));
        let plain = get(m.addr(), "/metrics", "");
        assert!(
            plain.contains("content-type: text/plain; version=0.0.4"),
            "{plain}"
        );
        assert!(has(&plain, "kafkabench_finished 0") && !plain.contains("# EOF"));
        let m2 = m.clone();
        let scraper = std::thread::spawn(move || {
            // After the end is marked, one scrape sees it and lets the endpoint close.
            while !m2.board.lock().finished {
                std::thread::sleep(Duration::from_millis(5));
            }
            get(m2.addr(), "/metrics", "")
        });
        let t = Instant::now();
        m.linger(Duration::from_secs(30), &AtomicBool::new(false));
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "closed after the scrape"
        );
        assert!(has(&scraper.join().unwrap(), "kafkabench_finished 1"));
        assert!(
            std::net::TcpStream::connect(m.addr()).is_err(),
            "the port is closed once it has lingered"
        );
    }

    #[test]
    fn a_page_or_a_refusal_after_the_end_that_is_not_a_scrape_does_not_end_the_linger() {
        let m = Metrics::serve("127.0.0.1:0".parse().unwrap()).unwrap();
        m.board.lock().finished = true;
        assert!(get(m.addr(), "/", "").starts_with("HTTP/1.1 200"));
        assert!(get(m.addr(), "/nope", "").starts_with("HTTP/1.1 404"));
        assert!(request(m.addr(), "HEAD", "/metrics", "").starts_with("HTTP/1.1 200"));
        // Each answer is counted (or not) a moment after its connection closed: give the
        // three that moment, then none may have ended the linger.
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until {
            assert!(!m.board.final_scrape.load(Ordering::Acquire));
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(has(
            &get(m.addr(), "/metrics?x=1", ""),
            "kafkabench_finished 1"
        ));
        // The answer is counted once its connection is done, a moment after the client has it.
        let until = Instant::now() + Duration::from_secs(30);
        while !m.board.final_scrape.load(Ordering::Acquire) {
            assert!(Instant::now() < until, "the final scrape was never counted");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
