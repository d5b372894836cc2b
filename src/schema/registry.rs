//! A schema registry's REST API (Confluent's, and the `ccompat` APIs of Apicurio and others):
//! register a subject's schema, read a schema by id. Blocking HTTP/1.1 over one connection per
//! request, bounded by timeouts, so an unreachable registry is an error in seconds, not a hang.

use std::fmt;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::Schema;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// An answer larger than this is not a registry's.
const MAX_ANSWER: u64 = 8 << 20;
const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

#[derive(Debug)]
pub enum RegistryError {
    /// The URL cannot be used (not http(s), no host).
    BadUrl(String),
    /// No connection, or no answer in time.
    Unreachable { url: String, why: String },
    /// The registry answered with an error status; `message` is its own words.
    Status { status: u16, message: String },
    /// The answer is not what the API promises.
    BadAnswer(String),
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::BadUrl(why) => write!(f, "the schema registry URL {why}"),
            RegistryError::Unreachable { url, why } => {
                write!(f, "the schema registry at {url} is unreachable: {why}")
            }
            RegistryError::Status { status, message } => {
                write!(f, "the schema registry answered {status}: {message}")
            }
            RegistryError::BadAnswer(why) => {
                write!(f, "the schema registry's answer makes no sense: {why}")
            }
        }
    }
}

impl std::error::Error for RegistryError {}

/// Registers `schema` under `subject` (TopicNameStrategy: `<topic>-value`, `<topic>-key`);
/// the registry's id for it. Registering the same schema again returns the same id.
/// A `.proto`'s local imports are registered first, each under its import name as subject
/// (Confluent's DefaultReferenceSubjectNameStrategy), and named as its references.
pub fn register(base_url: &str, subject: &str, schema: &Schema) -> Result<u32, RegistryError> {
    let mut versions = Vec::new();
    let refs = references(base_url, schema.text(), schema.imports(), &mut versions)?;
    let body = body(schema.format(), schema.text(), refs);
    let path = format!("/subjects/{}/versions", encode_segment(subject));
    let answer = request(base_url, "POST", &path, Some(&body.to_string()))?;
    id_of(&answer)
}

fn body(format: super::Format, text: &str, refs: Vec<serde_json::Value>) -> serde_json::Value {
    let mut body = serde_json::json!({ "schema": text });
    // Old registries know only Avro and refuse the field.
    if format != super::Format::Avro {
        body["schemaType"] = format.registry_type().into();
    }
    if !refs.is_empty() {
        body["references"] = refs.into();
    }
    body
}

/// The references of a `.proto`'s text: each local file it imports, registered (its own
/// imports first) under its import name; `done` holds the versions already registered.
fn references(
    base_url: &str,
    text: &str,
    files: &[(String, String)],
    done: &mut Vec<(String, u64)>,
) -> Result<Vec<serde_json::Value>, RegistryError> {
    let mut refs = Vec::new();
    for name in super::imported(text) {
        let Some((_, imported)) = files.iter().find(|(n, _)| *n == name) else {
            continue; // a well-known type: the registry has it
        };
        let version = match done.iter().find(|(n, _)| *n == name) {
            Some((_, v)) => *v,
            None => {
                let inner = references(base_url, imported, files, done)?;
                let body = body(super::Format::Protobuf, imported, inner).to_string();
                let subject = encode_segment(&name);
                request(
                    base_url,
                    "POST",
                    &format!("/subjects/{subject}/versions"),
                    Some(&body),
                )?;
                // The version it got: the subject looked up with the same schema.
                let answer = request(
                    base_url,
                    "POST",
                    &format!("/subjects/{subject}"),
                    Some(&body),
                )?;
                let v = answer
                    .get("version")
                    .and_then(serde_json::Value::as_u64)
                    .ok_or_else(|| {
                        RegistryError::BadAnswer(format!(
                            "no version for subject {name} in {answer}"
                        ))
                    })?;
                done.push((name.clone(), v));
                v
            }
        };
        refs.push(serde_json::json!({ "name": name, "subject": name, "version": version }));
    }
    Ok(refs)
}

fn id_of(answer: &serde_json::Value) -> Result<u32, RegistryError> {
    answer
        .get("id")
        .and_then(serde_json::Value::as_u64)
        .and_then(|id| u32::try_from(id).ok())
        .ok_or_else(|| RegistryError::BadAnswer(format!("no schema id in {answer}")))
}

/// The text of the schema with `id`.
pub fn schema_by_id(base_url: &str, id: u32) -> Result<String, RegistryError> {
    let answer = request(base_url, "GET", &format!("/schemas/ids/{id}"), None)?;
    answer
        .get("schema")
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| RegistryError::BadAnswer(format!("no schema in {answer}")))
}

/// A registry URL taken apart.
struct Url {
    tls: bool,
    host: String,
    port: u16,
    /// The base path, without a trailing slash.
    path: String,
    /// `user:pass` from the URL, for basic authentication.
    auth: Option<String>,
}

impl Url {
    fn parse(url: &str) -> Result<Url, RegistryError> {
        let bad = |why: &str| RegistryError::BadUrl(format!("{:?} {why}", masked(url)));
        let (tls, rest) = if let Some(r) = url.strip_prefix("http://") {
            (false, r)
        } else if let Some(r) = url.strip_prefix("https://") {
            (true, r)
        } else {
            return Err(bad("is not http:// or https://"));
        };
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (auth, hostport) = match authority.rsplit_once('@') {
            Some((a, h)) => (Some(percent_decode(a)), h),
            None => (None, authority),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (
                h,
                p.parse()
                    .map_err(|_| bad("has a port that is not a number"))?,
            ),
            _ => (hostport, if tls { 443 } else { 80 }),
        };
        if host.is_empty() {
            return Err(bad("has no host"));
        }
        Ok(Url {
            tls,
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            path: path.trim_end_matches('/').to_string(),
            auth,
        })
    }

    /// The URL as shown in messages: without the password.
    fn shown(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}:{}{}", self.host, self.port, self.path)
    }
}

/// One request, its JSON answer (or the registry's error as `Status`).
fn request(
    base: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<serde_json::Value, RegistryError> {
    let url = Url::parse(base)?;
    let unreachable = |why: String| RegistryError::Unreachable {
        url: url.shown(),
        why,
    };
    let addrs: Vec<_> = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|e| unreachable(format!("cannot resolve {}: {e}", url.host)))?
        .collect();
    let mut last = String::from("no address");
    let mut tcp = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(e) => last = e.to_string(),
        }
    }
    let tcp = tcp.ok_or_else(|| unreachable(last))?;
    let _ = tcp.set_read_timeout(Some(IO_TIMEOUT));
    let _ = tcp.set_write_timeout(Some(IO_TIMEOUT));
    let _ = tcp.set_nodelay(true);
    let mut stream: Box<dyn ReadWrite> = if url.tls {
        let connector = openssl::ssl::SslConnector::builder(openssl::ssl::SslMethod::tls())
            .map_err(|e| unreachable(format!("TLS: {e}")))?
            .build();
        Box::new(
            connector
                .connect(&url.host, tcp)
                .map_err(|e| unreachable(format!("TLS handshake: {e}")))?,
        )
    } else {
        Box::new(tcp)
    };
    let mut head = format!(
        "{method} {}{path} HTTP/1.1\r\nHost: {}:{}\r\nAccept: {CONTENT_TYPE}, application/json\r\nConnection: close\r\n",
        url.path, url.host, url.port
    );
    if let Some(auth) = &url.auth {
        use base64::Engine as _;
        let token = base64::engine::general_purpose::STANDARD.encode(auth);
        head.push_str(&format!("Authorization: Basic {token}\r\n"));
    }
    let body = body.unwrap_or("");
    if method != "GET" {
        head.push_str(&format!(
            "Content-Type: {CONTENT_TYPE}\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    let io = |e: std::io::Error| unreachable(format!("{e}"));
    stream.write_all(head.as_bytes()).map_err(io)?;
    stream.write_all(body.as_bytes()).map_err(io)?;
    stream.flush().map_err(io)?;
    let mut raw = Vec::new();
    let read = stream.take(MAX_ANSWER).read_to_end(&mut raw);
    // A TLS peer that closes without close_notify still sent its whole answer.
    if let Err(e) = read {
        if raw.is_empty() {
            return Err(io(e));
        }
    }
    let (status, answer) = parse_response(&raw)?;
    let json: serde_json::Value = serde_json::from_slice(&answer).unwrap_or_else(|_| {
        serde_json::Value::String(
            String::from_utf8_lossy(&answer)
                .trim()
                .chars()
                .take(300)
                .collect(),
        )
    });
    if !(200..300).contains(&status) {
        let message = json
            .get("message")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| match &json {
                serde_json::Value::String(s) if s.is_empty() => "(no message)".into(),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        return Err(RegistryError::Status { status, message });
    }
    Ok(json)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// The status and body of an HTTP/1.1 response read to its end (chunked or not).
fn parse_response(raw: &[u8]) -> Result<(u16, Vec<u8>), RegistryError> {
    let bad = |why: &str| RegistryError::BadAnswer(why.to_string());
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("not an HTTP response (no end of headers)"))?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("not an HTTP response (no status)"))?;
    let mut chunked = false;
    let mut length = None;
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            if k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked") {
                chunked = true;
            } else if k == "content-length" {
                length = v.parse::<usize>().ok();
            }
        }
    }
    let body = &raw[end + 4..];
    let body = if chunked {
        dechunk(body).ok_or_else(|| bad("a chunked body cut short"))?
    } else {
        let n = length.unwrap_or(body.len()).min(body.len());
        body[..n].to_vec()
    };
    Ok((status, body))
}

fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(&b[..eol]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        b = &b[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size + 2..)?;
    }
}

/// A subject as one path segment: topic names are letters, digits, `.`, `_` and `-`, which
/// need no escaping; anything else is percent-encoded.
fn encode_segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (b[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(x)) => {
                out.push(x);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Checks a registry URL's shape without connecting (for the check stage). Err: why.
pub fn url_problem(url: &str) -> Option<String> {
    Url::parse(url).err().map(|e| e.to_string())
}

/// The URL with its password replaced, for plans and messages.
/// Everything before the last `@` but the user name is hidden, wherever that `@` is (a
/// password with a `/` in it, a URL without a scheme): better too much hidden than a password
/// shown.
pub fn masked(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    match rest.rsplit_once('@') {
        Some((auth, host)) => {
            let user = auth.split([':', '/']).next().unwrap_or("");
            format!("{scheme}{user}:***@{host}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
