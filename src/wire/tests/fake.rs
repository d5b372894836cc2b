//! Brokers that misbehave: nothing listening, a listener that never answers, garbage, a
//! response too large. Each is an error in bounded time, never a panic.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use super::super::conn::{Conn, Limits};
use super::super::{Security, ShareConsumer, WireError};
use super::config;

/// A listener on a free port that answers each connection with `reply(request bytes)`
/// (nothing when None), for `n` connections.
fn fake_broker(n: usize, reply: fn(&[u8]) -> Option<Vec<u8>>) -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().take(n) {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let got = s.read(&mut buf).unwrap_or(0);
            if let Some(r) = reply(&buf[..got]) {
                let _ = s.write_all(&r);
            }
            held.push(s); // keep the socket open: silence, not a reset
        }
        std::thread::sleep(Duration::from_secs(10));
    });
    addr
}

#[test]
fn an_unreachable_bootstrap_fails_at_once() {
    let mut cfg = config("g", &["t"]);
    cfg.bootstrap = vec!["127.0.0.1:1".to_string()];
    let started = Instant::now();
    let e = ShareConsumer::join(cfg).expect_err("nothing listens on port 1");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(matches!(e, WireError::Connect { .. }), "{e}");
    assert!(e.to_string().contains("127.0.0.1:1"), "{e}");
}

#[test]
fn a_silent_broker_fails_within_the_request_timeout() {
    let addr = fake_broker(1, |_| None);
    let mut cfg = config("g", &["t"]);
    cfg.bootstrap = vec![addr.clone()];
    cfg.request_timeout = Duration::from_millis(800);
    let started = Instant::now();
    let e = ShareConsumer::join(cfg).expect_err("no answer");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(700) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert!(matches!(e, WireError::TimedOut { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains(&addr) && text.contains("ApiVersions"),
        "{text}"
    );
}

#[test]
fn garbage_and_oversized_answers_are_errors() {
    // A frame whose correlation id and body are noise.
    let addr = fake_broker(1, |_| {
        Some(vec![0, 0, 0, 6, 0xde, 0xad, 0xbe, 0xef, 0xff, 0x07])
    });
    let e = Conn::connect(
        &addr,
        &Security::plaintext(),
        Limits::new(Duration::from_secs(2)),
        "t",
    )
    .expect_err("garbage");
    assert!(matches!(e, WireError::Garbled { .. }), "{e}");
    // A length prefix of 2 GB.
    let addr = fake_broker(1, |_| Some(vec![0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1]));
    let e = Conn::connect(
        &addr,
        &Security::plaintext(),
        Limits::new(Duration::from_secs(2)),
        "t",
    )
    .expect_err("too large");
    assert!(e.to_string().contains("limit"), "{e}");
    // The right correlation id, then a truncated ApiVersions body claiming many keys.
    let addr = fake_broker(1, |req| {
        let corr = req.get(8..12).unwrap_or(&[0, 0, 0, 1]).to_vec();
        let mut body = corr;
        // No error, then a compact array that claims 127 keys and holds none.
        body.extend_from_slice(&[0, 0, 0x80, 0x01]);
        let mut frame = (body.len() as u32).to_be_bytes().to_vec();
        frame.extend_from_slice(&body);
        Some(frame)
    });
    let e = Conn::connect(
        &addr,
        &Security::plaintext(),
        Limits::new(Duration::from_secs(2)),
        "t",
    )
    .expect_err("truncated");
    assert!(matches!(e, WireError::Garbled { .. }), "{e}");
}
