//! The endpoint's bounds, each met by a client that breaks it: wrong methods and paths,
//! malformed, oversized and slow requests, too many connections, a reader that never reads.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use super::*;

/// A page of `size` bytes (16 MiB for `Accept: big`); counts the final pages delivered.
struct Fixed {
    size: usize,
    delivered: AtomicUsize,
}

impl Site for Fixed {
    fn scrape(&self, accept: Option<&str>) -> Page {
        let mut body = format!("accept={}\n", accept.unwrap_or("-")).into_bytes();
        let size = if accept == Some("big") {
            BIG
        } else {
            self.size
        };
        body.resize(size.max(body.len()), b'#');
        Page {
            content_type: "text/plain; version=0.0.4; charset=utf-8",
            body,
            last: true,
        }
    }

    fn delivered_last(&self) {
        self.delivered.fetch_add(1, Ordering::SeqCst);
    }
}

fn server(size: usize, limits: Limits) -> (Server, Arc<Fixed>) {
    let site = Arc::new(Fixed {
        size,
        delivered: AtomicUsize::new(0),
    });
    let s = Server::start("127.0.0.1:0".parse().unwrap(), site.clone(), limits).unwrap();
    (s, site)
}

/// Far more than loopback's socket buffers hold, so its write waits on the reader.
const BIG: usize = 16 << 20;

/// Generous for every test, so a busy machine cannot fail one; a bound that fails to hold
/// shows as a client waiting this long.
const PATIENCE: Duration = Duration::from_secs(60);

fn connect(s: &Server) -> TcpStream {
    let c = TcpStream::connect(s.addr()).unwrap();
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    c
}

/// Sends `request` and reads until the server closes: the answer (lossy UTF-8), or the
/// error that ended the read (a reset, when the server closed with bytes it did not read).
fn exchange(s: &Server, request: &[u8]) -> Result<String, ErrorKind> {
    let mut c = connect(s);
    // A server that refuses early may close before all of a large request is written.
    let _ = c.write_all(request);
    read_all(&mut c)
}

fn read_all(c: &mut TcpStream) -> Result<String, ErrorKind> {
    let mut got = Vec::new();
    match c.read_to_end(&mut got) {
        Ok(_) => Ok(String::from_utf8_lossy(&got).into_owned()),
        Err(e) if e.kind() == ErrorKind::ConnectionReset && !got.is_empty() => {
            Ok(String::from_utf8_lossy(&got).into_owned())
        }
        Err(e) => {
            assert!(
                !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
                "the server kept the connection open for {PATIENCE:?}"
            );
            Err(e.kind())
        }
    }
}

fn status(answer: &str) -> &str {
    answer.get(9..12).unwrap_or(answer)
}

#[test]
fn only_get_and_head_of_its_two_paths_are_answered() {
    let (s, _) = server(100, Limits::SCRAPE);
    let get = exchange(
        &s,
        b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: text/x\r\n\r\n",
    )
    .unwrap();
    assert_eq!(status(&get), "200", "{get}");
    assert!(
        get.contains("content-type: text/plain; version=0.0.4"),
        "{get}"
    );
    assert!(get.contains("content-length: 100\r\n") && get.contains("\r\n\r\naccept=text/x\n"));
    let head = exchange(&s, b"HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(status(&head), "200", "{head}");
    assert!(head.ends_with("\r\n\r\n"), "no body for HEAD: {head}");
    let root = exchange(&s, b"GET / HTTP/1.0\r\n\r\n").unwrap();
    assert!(
        root.starts_with("HTTP/1.0 200") && root.contains("/metrics"),
        "{root}"
    );
    for (request, want) in [
        (&b"GET /metricsx HTTP/1.1\r\nHost: a\r\n\r\n"[..], "404"),
        (b"GET /metrics/ HTTP/1.1\r\nHost: a\r\n\r\n", "404"),
        (
            b"POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc",
            "405",
        ),
        (b"DELETE / HTTP/1.1\r\nHost: a\r\n\r\n", "405"),
        (
            b"PUT /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
            "405",
        ),
        (b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "404"),
    ] {
        let a = exchange(&s, request).unwrap();
        assert_eq!(
            status(&a),
            want,
            "{}\n→ {a}",
            String::from_utf8_lossy(request)
        );
        if want == "405" {
            assert!(a.contains("allow: GET, HEAD"), "{a}");
        }
    }
}

#[test]
fn malformed_and_oversized_requests_are_refused_and_the_next_scrape_is_answered() {
    let limits = Limits {
        max_head: 8192,
        max_headers: 16,
        ..Limits::SCRAPE
    };
    let (s, _) = server(10, limits);
    let many_headers: String = (0..17).map(|i| format!("X-{i}: y\r\n")).collect();
    let long_header = format!("X-Long: {}\r\n", "y".repeat(6000));
    for (what, request, want) in [
        (
            "garbage",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n".to_vec(),
            "400",
        ),
        ("no version", b"GET /metrics\r\n\r\n".to_vec(), "400"),
        (
            "a header without a colon",
            b"GET /metrics HTTP/1.1\r\nHost\r\n\r\n".to_vec(),
            "400",
        ),
        (
            "a bad content length",
            b"GET /metrics HTTP/1.1\r\nContent-Length: -1\r\n\r\n".to_vec(),
            "400",
        ),
        (
            "too many headers",
            format!("GET /metrics HTTP/1.1\r\n{many_headers}\r\n").into_bytes(),
            "431",
        ),
        (
            "a head past the size",
            format!("GET /metrics HTTP/1.1\r\n{long_header}{long_header}\r\n").into_bytes(),
            "431",
        ),
    ] {
        let a = exchange(&s, &request).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert_eq!(status(&a), want, "{what} → {a}");
    }
    // A megabyte of head: refused after at most the buffer's worth is read. The refusal may
    // be lost to a reset (closing with unread bytes resets), but never answered with a page.
    let huge = format!(
        "GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n",
        "y".repeat(1 << 20)
    );
    match exchange(&s, huge.as_bytes()) {
        Ok(a) => assert_eq!(status(&a), "431", "{a}"),
        Err(e) => assert!(
            matches!(e, ErrorKind::ConnectionReset | ErrorKind::BrokenPipe),
            "{e:?}"
        ),
    }
    // A GET with a body it never reads: answered, the body ignored.
    let mut c = connect(&s);
    c.write_all(b"GET /metrics HTTP/1.1\r\nContent-Length: 1000000000\r\n\r\nabc")
        .unwrap();
    assert_eq!(status(&read_all(&mut c).unwrap()), "200");
    let ok = exchange(&s, b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(status(&ok), "200", "{ok}");
}

#[test]
fn a_client_that_does_not_finish_its_head_in_time_is_closed() {
    let limits = Limits {
        header_timeout: Duration::from_millis(300),
        ..Limits::SCRAPE
    };
    let (s, _) = server(10, limits);
    let mut silent = connect(&s);
    let mut partial = connect(&s);
    partial
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: a\r\n")
        .unwrap();
    let mut trickle = connect(&s);
    let started = Instant::now();
    // A byte at a time does not renew the timeout: it bounds the whole head.
    let trickled = (|| -> std::io::Result<()> {
        for b in b"GET /metrics HTTP/1.1\r\nHost: a\r\nX: " {
            trickle.write_all(&[*b])?;
            std::thread::sleep(Duration::from_millis(50));
        }
        loop {
            trickle.write_all(b"y")?;
            std::thread::sleep(Duration::from_millis(50));
            if started.elapsed() > PATIENCE {
                return Ok(());
            }
        }
    })();
    assert!(
        trickled.is_err(),
        "a trickling head was read for {PATIENCE:?}"
    );
    for (what, c) in [("silent", &mut silent), ("partial", &mut partial)] {
        if let Ok(a) = read_all(c) {
            assert!(a.is_empty() || status(&a) == "408", "{what}: {a}");
        }
    }
    let ok = exchange(&s, b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(status(&ok), "200");
}

#[test]
fn connections_past_the_cap_are_told_503_and_a_freed_slot_serves_again() {
    let limits = Limits {
        connections: 2,
        ..Limits::SCRAPE
    };
    let (s, _) = server(10, limits);
    let held = [connect(&s), connect(&s)];
    let refused = exchange(&s, b"GET /metrics HTTP/1.1\r\n\r\n");
    match &refused {
        Ok(a) => assert_eq!(status(a), "503", "{a}"),
        Err(e) => assert_eq!(*e, ErrorKind::ConnectionReset),
    }
    drop(held);
    // The slots come back once the server has seen the two close.
    let until = Instant::now() + PATIENCE;
    loop {
        let a = exchange(&s, b"GET /metrics HTTP/1.1\r\n\r\n").unwrap_or_default();
        if status(&a) == "200" {
            break;
        }
        assert!(Instant::now() < until, "no slot freed: {a}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_reader_that_never_reads_is_cut_at_the_deadline_and_frees_its_slot() {
    let limits = Limits {
        connections: 1,
        deadline: Duration::from_millis(500),
        ..Limits::SCRAPE
    };
    let (s, site) = server(10, limits);
    let mut stalled = connect(&s);
    stalled
        .write_all(b"GET /metrics HTTP/1.1\r\nAccept: big\r\n\r\n")
        .unwrap();
    // Once the deadline has cut it, the one slot serves a reader that reads.
    let until = Instant::now() + PATIENCE;
    loop {
        let a = exchange(&s, b"GET /metrics HTTP/1.1\r\n\r\n").unwrap_or_default();
        if status(&a) == "200" && a.ends_with("\r\n\r\naccept=-\n#") {
            break;
        }
        assert!(Instant::now() < until, "the stalled reader kept its slot");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Only the whole answer counts as delivered, not the cut one.
    let until = Instant::now() + PATIENCE;
    while site.delivered.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < until, "the whole page was never counted");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(site.delivered.load(Ordering::SeqCst), 1);
    let mut rest = Vec::new();
    let _ = stalled.read_to_end(&mut rest);
    assert!(rest.len() < BIG, "the stalled reader got it all");
}

#[test]
fn a_closed_endpoint_frees_its_port() {
    let (s, _) = server(10, Limits::SCRAPE);
    let _idle = connect(&s);
    s.close();
    assert!(TcpStream::connect(s.addr()).is_err());
}
