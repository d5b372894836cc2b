//! The HTTP side of `--metrics`: hyper 1's HTTP/1.1 server on a thread of its own, with a
//! current-thread tokio runtime, so a scraper (or anything else that reaches the port) never
//! shares the run's runtime or threads.
//!
//! Why hyper: it is the HTTP implementation most of the Rust ecosystem stands on (axum, reqwest,
//! tonic), maintained, and it has the bounds this endpoint needs built in: request head size
//! and header count (431), a header read timeout that closes a slowloris, and graceful
//! close. Without its client, HTTP/2, or axum's router and tower stack (about 31 crates over
//! tokio against hyper's 12), it adds eight small crates to this build; two paths need no
//! router.
//!
//! What any client gets: `GET` (or `HEAD`) of `/metrics` or `/`; 404 for another path, 405
//! for another method; one request per connection (no keep-alive, so an idle connection holds
//! nothing); at most `Limits::connections` at once (the next one is told 503 and closed); a
//! head past `Limits::max_head` bytes or `Limits::max_headers` lines is refused with 431; a
//! head not read within `Limits::header_timeout` closes the connection, and so does a
//! connection, however slow its reader, still open after `Limits::deadline`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, ACCEPT, ALLOW, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::sync::{oneshot, Semaphore};

/// How much of itself a client may take.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// Connections served at once.
    pub connections: usize,
    /// From accepting a connection to the end of its request head.
    pub header_timeout: Duration,
    /// From accepting a connection to its close, answer written included.
    pub deadline: Duration,
    /// Bytes of request line and headers (hyper's least is 8 KiB).
    pub max_head: usize,
    /// Header lines.
    pub max_headers: usize,
}

impl Limits {
    /// A Prometheus scrape is one small request: a head of a few hundred bytes, sent at once.
    pub(super) const SCRAPE: Limits = Limits {
        connections: 32,
        header_timeout: Duration::from_secs(5),
        deadline: Duration::from_secs(15),
        max_head: 16 * 1024,
        max_headers: 64,
    };
}

/// One answer to a scrape.
pub(super) struct Page {
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// These are the invocation's final totals.
    pub last: bool,
}

/// What the endpoint serves.
pub(super) trait Site: Send + Sync + 'static {
    /// The exposition, for a client whose `Accept` header says `accept`.
    fn scrape(&self, accept: Option<&str>) -> Page;
    /// A page with the final totals has been written out whole.
    fn delivered_last(&self);
}

/// How long a close waits for answers under way (a client still sending its head is not
/// waited for: the final totals have been delivered, or the linger is over).
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// Said to a connection past the cap, without reading its request.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n";

/// The running endpoint.
pub(super) struct Server {
    addr: SocketAddr,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Server {
    /// Binds `addr` now (an address that cannot be served is an error before anything runs)
    /// and serves `site` from a thread of its own.
    pub(super) fn start(
        addr: SocketAddr,
        site: Arc<dyn Site>,
        limits: Limits,
    ) -> Result<Server, String> {
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|e| format!("--metrics {addr}: cannot listen there: {e}"))?;
        let addr = listener.local_addr().unwrap_or(addr);
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("--metrics {addr}: {e}"))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| format!("--metrics: cannot start its runtime: {e}"))?;
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("kafkabench-metrics".into())
            .spawn(move || rt.block_on(serve(listener, site, limits, stopped)))
            .map_err(|e| format!("--metrics: cannot start its thread: {e}"))?;
        Ok(Server {
            addr,
            stop: Mutex::new(Some(stop)),
            thread: Mutex::new(Some(thread)),
        })
    }

    pub(super) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, lets the answers under way finish (within `CLOSE_GRACE`), and
    /// returns once the port is closed.
    pub(super) fn close(&self) {
        if let Some(stop) = self.stop.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    /// Closes without waiting: a dropped endpoint must not hold up the exit.
    fn drop(&mut self) {
        if let Some(stop) = self
            .stop
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = stop.send(());
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    site: Arc<dyn Site>,
    limits: Limits,
    mut stopped: oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let permits = Arc::new(Semaphore::new(limits.connections));
    let graceful = GracefulShutdown::new();
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(false)
        .max_buf_size(limits.max_head.max(8192))
        .max_header_size(limits.max_head)
        .max_headers(limits.max_headers);
    loop {
        let stream = tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors, or a connection reset before it was accepted:
                // try again shortly rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            // Best effort: a full socket buffer just means a close without the 503.
            let _ = stream.try_write(BUSY);
            continue;
        };
        let last = Arc::new(AtomicBool::new(false));
        let service = {
            let (site, last) = (site.clone(), last.clone());
            service_fn(move |req| {
                let answer = respond(&*site, &req, &last);
                async move { Ok::<_, Infallible>(answer) }
            })
        };
        let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        let site = site.clone();
        tokio::spawn(async move {
            let done = tokio::time::timeout(limits.deadline, conn).await;
            drop(permit);
            // Without keep-alive the connection ends once its answer is written out whole.
            if matches!(done, Ok(Ok(()))) && last.load(Ordering::Acquire) {
                site.delivered_last();
            }
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(CLOSE_GRACE, graceful.shutdown()).await;
}

/// The answer to one request; `last` is set when it carries the final totals.
fn respond<B>(site: &dyn Site, req: &Request<B>, last: &AtomicBool) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    if !matches!(path, "/metrics" | "/") {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: metrics are at /metrics\n",
        );
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET\n");
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if path == "/" {
        return plain(StatusCode::OK, "kafkabench: metrics at /metrics\n");
    }
    let accept = req.headers().get(ACCEPT).and_then(|v| v.to_str().ok());
    let page = site.scrape(accept);
    // A HEAD carries no body: a health check after the run is not the final scrape.
    if page.last && req.method() == Method::GET {
        last.store(true, Ordering::Release);
    }
    let mut r = Response::new(Full::new(Bytes::from(page.body)));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(page.content_type));
    r
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
