//! The registry client against a fake registry: a thread that answers one canned response per
//! connection and hands back the request it read.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::*;
use crate::schema::Format;

/// A server answering each of `answers` to one connection; the requests it read, in order.
fn fake(answers: Vec<String>) -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for answer in answers {
            let Ok((mut s, _)) = listener.accept() else {
                return;
            };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            // Headers, then as many body bytes as Content-Length says.
            loop {
                let n = s.read(&mut buf).unwrap_or(0);
                req.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&req).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if req.len() >= end + 4 + len {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&req).into_owned());
            let _ = s.write_all(answer.as_bytes());
        }
    });
    (url, rx)
}

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.schemaregistry.v1+json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn schema(format: Format, file: &str, text: &str, message: Option<&str>) -> Schema {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    std::fs::write(&path, text).unwrap();
    Schema::load(format, &path, message).unwrap()
}

#[test]
fn registering_posts_the_schema_to_the_subject_and_returns_the_id() {
    let (url, requests) = fake(vec![ok(r#"{"id":42}"#)]);
    let avro = schema(
        Format::Avro,
        "a.avsc",
        r#"{"type":"record","name":"A","fields":[{"name":"x","type":"int"}]}"#,
        None,
    );
    let base = format!("{url}/apis/ccompat/v7");
    assert_eq!(register(&base, "orders-value", &avro).unwrap(), 42);
    let req = requests.recv().unwrap();
    assert!(
        req.starts_with("POST /apis/ccompat/v7/subjects/orders-value/versions HTTP/1.1\r\n"),
        "{req}"
    );
    assert!(req.contains("Content-Type: application/vnd.schemaregistry.v1+json\r\n"));
    let body: serde_json::Value =
        serde_json::from_str(&req[req.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!(body["schema"], avro.text());
    assert!(
        body.get("schemaType").is_none(),
        "Avro omits schemaType for old registries"
    );
}

#[test]
fn a_protobuf_schema_says_its_type_and_credentials_go_as_basic_auth() {
    let (url, requests) = fake(vec![ok(r#"{"id":7}"#)]);
    let proto = schema(
        Format::Protobuf,
        "a.proto",
        "syntax = \"proto3\"; message A { int32 x = 1; }",
        Some("A"),
    );
    let base = url.replace("http://", "http://alice:s%40cret@");
    assert_eq!(register(&base, "t-key", &proto).unwrap(), 7);
    let req = requests.recv().unwrap();
    assert!(req.contains("\"schemaType\":\"PROTOBUF\""), "{req}");
    // base64("alice:s@cret")
    assert!(
        req.contains("Authorization: Basic YWxpY2U6c0BjcmV0\r\n"),
        "{req}"
    );
}

#[test]
fn an_error_status_carries_the_registrys_message() {
    let body = r#"{"error_code":42201,"message":"Invalid schema"}"#;
    let answer = format!(
        "HTTP/1.1 422 Unprocessable Entity\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (url, _requests) = fake(vec![answer]);
    let avro = schema(Format::Avro, "a.avsc", r#""string""#, None);
    let err = register(&url, "s", &avro).unwrap_err();
    assert!(
        matches!(err, RegistryError::Status { status: 422, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "the schema registry answered 422: Invalid schema"
    );
}

#[test]
fn a_schema_is_read_back_by_id_from_a_chunked_answer() {
    let body = r#"{"schema":"\"string\""}"#;
    let answer = format!(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n",
        5,
        &body[..5],
        body.len() - 5,
        &body[5..]
    );
    let (url, requests) = fake(vec![answer]);
    assert_eq!(schema_by_id(&url, 3).unwrap(), "\"string\"");
    assert!(requests
        .recv()
        .unwrap()
        .starts_with("GET /schemas/ids/3 HTTP/1.1"));
}

#[test]
fn an_unreachable_registry_is_an_error_in_bounded_time() {
    // A port nobody listens on: bind, learn the port, close.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let err = schema_by_id(&format!("http://127.0.0.1:{port}"), 1).unwrap_err();
    assert!(matches!(err, RegistryError::Unreachable { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(6));
    let garbage = fake(vec!["hello".into()]).0;
    assert!(matches!(
        schema_by_id(&garbage, 1),
        Err(RegistryError::BadAnswer(_))
    ));
}

#[test]
fn urls_are_checked_and_passwords_masked() {
    assert!(url_problem("ftp://x").is_some());
    assert!(url_problem("http://:80").is_some());
    assert!(url_problem("http://h:port").is_some());
    assert!(url_problem("https://registry.example:8081/apis/ccompat/v7").is_none());
    assert_eq!(masked("http://u:p@h:1/x"), "http://u:***@h:1/x");
    assert_eq!(masked("http://h:1/x"), "http://h:1/x");
    // A password with a `/` in it, a URL without a scheme: the password is never shown.
    for (url, secret) in [
        ("http://bob:s3cr/et@host:80x", "s3cr"),
        ("bob:hunter2@host:8081", "hunter2"),
        ("https://bob:p%40ss@h:port/x", "p%40ss"),
    ] {
        assert!(!masked(url).contains(secret), "{}", masked(url));
        let why = url_problem(url).expect("a bad URL");
        assert!(!why.contains(secret), "{why}");
    }
}

#[test]
fn a_proto_names_its_local_imports_as_written() {
    let text = "syntax = \"proto3\";\n// import \"commented.proto\";\nimport \"google/protobuf/timestamp.proto\";\nimport public \"a.proto\";\n  import weak 'sub/b.proto' ;\nmessage M { int32 importance = 1; }";
    assert_eq!(
        crate::schema::imported(text),
        ["google/protobuf/timestamp.proto", "a.proto", "sub/b.proto"]
    );
}
