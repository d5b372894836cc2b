//! One framed Kafka connection: connect (TLS and SASL as `Security` says), ApiVersions once,
//! then requests and their responses matched by correlation id. Blocking, with every wait
//! bounded; a response larger than the limit, one whose lengths would have the decoder reserve
//! more than its bytes can hold (`bounds`), or one that does not decode, is an error and the
//! connection is not used again.

use std::io::{self, Read, Write};
use std::marker::PhantomData;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};

use super::bounds::{self, Bounded};
use super::security::{self, Security};
use super::WireError;

/// Bounds on a connection's waits and sizes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Connecting, and the TLS and SASL handshakes, each.
    pub connect: Duration,
    /// Sending one request and reading its response, beyond any wait the request asks the
    /// broker for (a ShareFetch's max_wait_ms).
    pub request: Duration,
    /// The largest response accepted (bytes after the length prefix).
    pub max_response: usize,
}

impl Limits {
    pub(crate) fn new(request: Duration) -> Limits {
        Limits {
            connect: request,
            request,
            max_response: 64 << 20,
        }
    }
}

/// The bytes on the wire: a plain socket or a TLS session over one.
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<security::TlsStream>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// A request on its way: receive its response with `Conn::receive`.
#[must_use]
pub(crate) struct Sent<R> {
    correlation: i32,
    version: i16,
    /// Extra time the broker may hold the response (a fetch's max wait).
    hold: Duration,
    _r: PhantomData<R>,
}

pub(crate) struct Conn {
    broker: String,
    stream: Stream,
    client_id: StrBytes,
    correlation: i32,
    /// The broker's (min, max) version per API key; None where it serves no such API.
    versions: Vec<Option<(i16, i16)>>,
    limits: Limits,
    out: BytesMut,
    inb: BytesMut,
    /// Set on any failure mid-request: the stream may hold half a frame.
    broken: bool,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("broker", &self.broker)
            .finish()
    }
}

impl Conn {
    /// Connect to `broker` ("host:port"), secure it as `security` says, and ask its API versions.
    pub(crate) fn connect(
        broker: &str,
        security: &Security,
        limits: Limits,
        client_id: &str,
    ) -> Result<Conn, WireError> {
        let tcp = tcp_connect(broker, limits.connect)?;
        let stream = security::secure(tcp, broker, security, limits.connect)?;
        let mut conn = Conn {
            broker: broker.to_string(),
            stream,
            client_id: StrBytes::from_string(client_id.to_string()),
            correlation: 0,
            versions: Vec::new(),
            limits,
            out: BytesMut::with_capacity(4096),
            inb: BytesMut::new(),
            broken: false,
        };
        conn.api_versions()?;
        security::authenticate(&mut conn, security)?;
        Ok(conn)
    }

    pub(crate) fn broker(&self) -> &str {
        &self.broker
    }

    /// Whether a failure left this connection unusable.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken
    }

    /// The broker's version range of an API, if it serves it.
    pub(crate) fn broker_versions(&self, key: i16) -> Option<(i16, i16)> {
        self.versions.get(key as usize).copied().flatten()
    }

    /// The highest version of `R` that both kafka-protocol and the broker speak.
    pub(crate) fn version<R: Request>(&self) -> Result<i16, WireError> {
        self.version_within::<R>(R::VERSIONS.min, R::VERSIONS.max)
    }

    /// The highest version of `R` within `lo..=hi` (and kafka-protocol's range) the broker speaks.
    pub(crate) fn version_within<R: Request>(&self, lo: i16, hi: i16) -> Result<i16, WireError> {
        let ours = (lo.max(R::VERSIONS.min), hi.min(R::VERSIONS.max));
        let theirs = self.broker_versions(R::KEY);
        match theirs {
            Some((bmin, bmax)) if bmin.max(ours.0) <= bmax.min(ours.1) => Ok(bmax.min(ours.1)),
            _ => Err(WireError::Unsupported {
                broker: self.broker.clone(),
                api: R::KEY,
                ours,
                theirs,
            }),
        }
    }

    /// Send `req` at the highest common version and wait for its response.
    pub(crate) fn request<R: Request>(&mut self, req: &R) -> Result<R::Response, WireError>
    where
        R::Response: Bounded,
    {
        let v = self.version::<R>()?;
        self.request_v(v, req)
    }

    /// Send `req` at `version` and wait for its response.
    pub(crate) fn request_v<R: Request>(
        &mut self,
        version: i16,
        req: &R,
    ) -> Result<R::Response, WireError>
    where
        R::Response: Bounded,
    {
        let sent = self.send(version, req, Duration::ZERO)?;
        self.receive(sent)
    }

    /// Write `req` without waiting for its response (so requests to several brokers can wait
    /// at once); `hold` is how long the broker may keep it before answering.
    pub(crate) fn send<R: Request>(
        &mut self,
        version: i16,
        req: &R,
        hold: Duration,
    ) -> Result<Sent<R>, WireError> {
        if self.broken {
            return Err(self.io_err(R::KEY, io::ErrorKind::NotConnected.into()));
        }
        self.correlation = self.correlation.wrapping_add(1) & i32::MAX;
        let correlation = self.correlation;
        let header = RequestHeader::default()
            .with_request_api_key(R::KEY)
            .with_request_api_version(version)
            .with_correlation_id(correlation)
            .with_client_id(Some(self.client_id.clone()));
        self.out.clear();
        self.out.extend_from_slice(&[0; 4]);
        let encoded = header
            .encode(&mut self.out, R::header_version(version))
            .and_then(|()| req.encode(&mut self.out, version));
        if let Err(e) = encoded {
            // Nothing was written: the connection stays usable.
            return Err(WireError::Config(format!(
                "{}: cannot encode {} v{version}: {e}",
                self.broker,
                super::error::api_name(R::KEY)
            )));
        }
        let len = (self.out.len() - 4) as u32;
        self.out[..4].copy_from_slice(&len.to_be_bytes());
        let deadline = Instant::now() + self.limits.request;
        let r = self.write_all_by(deadline, R::KEY);
        self.fail_on(r)?;
        Ok(Sent {
            correlation,
            version,
            hold,
            _r: PhantomData,
        })
    }

    /// Read the response to `sent` (responses come in the order requests were sent).
    pub(crate) fn receive<R: Request>(&mut self, sent: Sent<R>) -> Result<R::Response, WireError>
    where
        R::Response: Bounded,
    {
        let r = self.receive_inner::<R>(&sent);
        self.fail_on(r)
    }

    fn receive_inner<R: Request>(&mut self, sent: &Sent<R>) -> Result<R::Response, WireError>
    where
        R::Response: Bounded,
    {
        let body = self.read_frame(R::KEY, sent.hold)?;
        decode_guarded(|| decode_response::<R>(body, sent.version, sent.correlation))
            .map_err(|d| self.garbled(R::KEY, d))
    }

    /// One length-prefixed frame, whole.
    fn read_frame(&mut self, api: i16, hold: Duration) -> Result<Bytes, WireError> {
        let deadline = Instant::now() + self.limits.request + hold;
        let mut len = [0u8; 4];
        self.read_exact_by(&mut len, deadline, api)?;
        let len = i32::from_be_bytes(len);
        if len < 0 || len as usize > self.limits.max_response {
            return Err(self.garbled(
                api,
                format!(
                    "a response of {len} bytes (the limit is {})",
                    self.limits.max_response
                ),
            ));
        }
        let mut buf = std::mem::take(&mut self.inb);
        buf.clear();
        buf.resize(len as usize, 0);
        let r = self.read_exact_by(&mut buf, deadline, api);
        let frozen = buf.split().freeze();
        self.inb = buf;
        r.map(|()| frozen)
    }

    fn read_exact_by(
        &mut self,
        mut buf: &mut [u8],
        deadline: Instant,
        api: i16,
    ) -> Result<(), WireError> {
        while !buf.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.timed_out(api));
            }
            self.stream
                .tcp()
                .set_read_timeout(Some(left))
                .map_err(|e| self.io_err(api, e))?;
            match self.stream.read(buf) {
                Ok(0) => {
                    return Err(self.io_err(
                        api,
                        io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the broker closed the connection",
                        ),
                    ))
                }
                Ok(n) => buf = &mut buf[n..],
                Err(e) if retry_later(&e) => continue,
                Err(e) => return Err(self.io_err(api, e)),
            }
        }
        Ok(())
    }

    fn write_all_by(&mut self, deadline: Instant, api: i16) -> Result<(), WireError> {
        let mut at = 0;
        while at < self.out.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.timed_out(api));
            }
            self.stream
                .tcp()
                .set_write_timeout(Some(left))
                .map_err(|e| self.io_err(api, e))?;
            match self.stream.write(&self.out[at..]) {
                Ok(0) => {
                    return Err(self.io_err(api, io::ErrorKind::WriteZero.into()));
                }
                Ok(n) => at += n,
                Err(e) if retry_later(&e) => continue,
                Err(e) => return Err(self.io_err(api, e)),
            }
        }
        self.stream.flush().map_err(|e| self.io_err(api, e))
    }

    fn api_versions(&mut self) -> Result<(), WireError> {
        let key = ApiKey::ApiVersions as i16;
        let req = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("kafkabench"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
        let mut resp: ApiVersionsResponse = self.request_v(3, &req)?;
        if resp.error_code == 35 {
            // UNSUPPORTED_VERSION: an old broker answers in v0 and lists what it serves.
            resp = self.request_v(0, &req)?;
        }
        if resp.error_code != 0 {
            return Err(self.kafka_err(key, resp.error_code, None, ""));
        }
        for a in &resp.api_keys {
            if a.api_key < 0 || a.api_key > 1024 || a.min_version > a.max_version {
                continue;
            }
            let i = a.api_key as usize;
            if self.versions.len() <= i {
                self.versions.resize(i + 1, None);
            }
            self.versions[i] = Some((a.min_version, a.max_version));
        }
        Ok(())
    }

    fn fail_on<T>(&mut self, r: Result<T, WireError>) -> Result<T, WireError> {
        if let Err(e) = &r {
            if e.breaks_connection() {
                self.broken = true;
            }
        }
        r
    }

    pub(crate) fn io_err(&self, api: i16, source: io::Error) -> WireError {
        WireError::Io {
            broker: self.broker.clone(),
            api,
            source,
        }
    }

    fn timed_out(&self, api: i16) -> WireError {
        WireError::TimedOut {
            broker: self.broker.clone(),
            api,
            after: self.limits.request,
        }
    }

    pub(crate) fn garbled(&self, api: i16, detail: String) -> WireError {
        WireError::Garbled {
            broker: self.broker.clone(),
            api,
            detail,
        }
    }

    /// Kafka's error `code` in an answer to `api`, about `context` (a group, a partition).
    pub(crate) fn kafka_err(
        &self,
        api: i16,
        code: i16,
        message: Option<&StrBytes>,
        context: &str,
    ) -> WireError {
        WireError::Kafka {
            broker: self.broker.clone(),
            api,
            code,
            message: message.map(|m| m.as_str().to_string()),
            context: context.to_string(),
        }
    }
}

/// A read or write that timed out (or was interrupted) before the deadline: try again.
fn retry_later(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// Resolve and connect within `timeout`, trying each address the name resolves to.
pub(crate) fn tcp_connect(broker: &str, timeout: Duration) -> Result<TcpStream, WireError> {
    let addrs: Vec<_> = broker
        .to_socket_addrs()
        .map_err(|e| WireError::Resolve {
            broker: broker.to_string(),
            detail: e.to_string(),
        })?
        .collect();
    if addrs.is_empty() {
        return Err(WireError::Resolve {
            broker: broker.to_string(),
            detail: "no addresses".to_string(),
        });
    }
    let deadline = Instant::now() + timeout;
    let mut last = io::Error::new(io::ErrorKind::TimedOut, "connect timed out");
    for a in addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match TcpStream::connect_timeout(&a, left) {
            Ok(s) => {
                // Requests are small and latency-bound: no Nagle delay.
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => last = e,
        }
    }
    Err(WireError::Connect {
        broker: broker.to_string(),
        source: last,
    })
}

/// The response to `R` sent at `version` with `correlation`, from `body` (its frame after the
/// length): its lengths checked against its bytes (`bounds`), then decoded by kafka-protocol.
pub(crate) fn decode_response<R: Request>(
    mut body: Bytes,
    version: i16,
    correlation: i32,
) -> Result<R::Response, String>
where
    R::Response: Bounded,
{
    // ApiVersions answers with a v0 header whatever the request's version (KIP-511).
    let hv = if R::KEY == ApiKey::ApiVersions as i16 {
        0
    } else {
        R::Response::header_version(version)
    };
    bounds::check::<R::Response>(&body, hv, version)?;
    let header = ResponseHeader::decode(&mut body, hv).map_err(|e| e.to_string())?;
    if header.correlation_id != correlation {
        return Err(format!(
            "correlation id {} where {correlation} was expected",
            header.correlation_id
        ));
    }
    R::Response::decode(&mut body, version).map_err(|e| e.to_string())
}

/// Decode, turning any panic inside kafka-protocol into an error (a garbled response must not
/// take the process down).
fn decode_guarded<T, E: std::fmt::Display>(f: impl FnOnce() -> Result<T, E>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("the decoder failed on it".to_string()),
    }
}
