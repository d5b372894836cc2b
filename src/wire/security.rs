//! How a connection is secured: TLS (server verification against a CA, optional client
//! certificate, hostname verification) and SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), set from
//! librdkafka-style properties. OpenSSL is the one rdkafka already builds (vendored).

use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use openssl::pkey::PKey;
use openssl::ssl::{HandshakeError, SslConnector, SslFiletype, SslMethod, SslVerifyMode};
use openssl::x509::X509;

use super::conn::{Conn, Stream};
use super::WireError;

pub(crate) type TlsStream = openssl::ssl::SslStream<TcpStream>;

/// The security of a cluster's client listener.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Security {
    pub tls: Option<Tls>,
    pub sasl: Option<Sasl>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tls {
    /// CA certificates (PEM file or directory); None: the system's.
    pub ca_location: Option<PathBuf>,
    /// CA certificates as PEM text (librdkafka's `ssl.ca.pem`).
    pub ca_pem: Option<String>,
    /// Client certificate and key (PEM), for mutual TLS.
    pub cert_location: Option<PathBuf>,
    pub key_location: Option<PathBuf>,
    pub key_password: Option<String>,
    /// Check the certificate names the host we dialled (`https`, the default).
    pub verify_hostname: bool,
    /// Check the certificate chain at all (`enable.ssl.certificate.verification`).
    pub verify: bool,
}

#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Sasl {
    pub mechanism: Mechanism,
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Sasl {
    // The password stays out of logs and error reports.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sasl")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mechanism {
    Plain,
    ScramSha256,
    ScramSha512,
}

impl Mechanism {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }
}

impl Security {
    #[cfg(test)]
    pub(crate) fn plaintext() -> Security {
        Security::default()
    }

    /// From librdkafka's property names: `security.protocol`, `ssl.ca.location`, `ssl.ca.pem`,
    /// `ssl.certificate.location`, `ssl.key.location`, `ssl.key.password`,
    /// `ssl.endpoint.identification.algorithm`, `enable.ssl.certificate.verification`,
    /// `sasl.mechanism(s)`, `sasl.username`, `sasl.password`. Err says what is wrong or
    /// unsupported.
    pub(crate) fn from_props(get: impl Fn(&str) -> Option<String>) -> Result<Security, String> {
        let protocol = get("security.protocol").unwrap_or_else(|| "plaintext".to_string());
        let (tls, sasl) = match protocol.to_ascii_lowercase().as_str() {
            "plaintext" => (false, false),
            "ssl" => (true, false),
            "sasl_plaintext" => (false, true),
            "sasl_ssl" => (true, true),
            other => {
                return Err(format!(
                    "security.protocol {other:?} is not one of plaintext, ssl, sasl_plaintext, sasl_ssl"
                ))
            }
        };
        let mut out = Security::default();
        if tls {
            let flag = |k: &str, default: bool| match get(k).map(|v| v.to_ascii_lowercase()) {
                None => Ok(default),
                Some(v) if v == "true" => Ok(true),
                Some(v) if v == "false" => Ok(false),
                Some(v) => Err(format!("{k} must be true or false, not {v:?}")),
            };
            let hostname = match get("ssl.endpoint.identification.algorithm")
                .map(|v| v.to_ascii_lowercase())
                .as_deref()
            {
                None | Some("https") => true,
                Some("none") | Some("") => false,
                Some(v) => {
                    return Err(format!(
                        "ssl.endpoint.identification.algorithm {v:?} is not https or none"
                    ))
                }
            };
            let ca_location = get("ssl.ca.location").filter(|v| v != "probe");
            out.tls = Some(Tls {
                ca_location: ca_location.map(PathBuf::from),
                ca_pem: get("ssl.ca.pem"),
                cert_location: get("ssl.certificate.location").map(PathBuf::from),
                key_location: get("ssl.key.location").map(PathBuf::from),
                key_password: get("ssl.key.password"),
                verify_hostname: hostname,
                verify: flag("enable.ssl.certificate.verification", true)?,
            });
        }
        if sasl {
            let m = get("sasl.mechanism")
                .or_else(|| get("sasl.mechanisms"))
                .unwrap_or_else(|| "GSSAPI".to_string());
            let mechanism = match m.to_ascii_uppercase().as_str() {
                "PLAIN" => Mechanism::Plain,
                "SCRAM-SHA-256" => Mechanism::ScramSha256,
                "SCRAM-SHA-512" => Mechanism::ScramSha512,
                other => {
                    return Err(format!(
                        "sasl.mechanism {other} is not supported here (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"
                    ))
                }
            };
            let need = |k: &str| get(k).ok_or_else(|| format!("{k} is needed for SASL {m}"));
            out.sasl = Some(Sasl {
                mechanism,
                username: need("sasl.username")?,
                password: need("sasl.password")?,
            });
        }
        Ok(out)
    }
}

fn tls_err(broker: &str, detail: impl std::fmt::Display) -> WireError {
    WireError::Tls {
        broker: broker.to_string(),
        detail: detail.to_string(),
    }
}

fn connector(broker: &str, tls: &Tls) -> Result<SslConnector, WireError> {
    let e = |what: &str, err: openssl::error::ErrorStack| tls_err(broker, format!("{what}: {err}"));
    let mut b = SslConnector::builder(SslMethod::tls_client()).map_err(|x| e("setup", x))?;
    if let Some(ca) = &tls.ca_location {
        let r = if ca.is_dir() {
            b.set_ca_file(ca.join("ca.pem")) // rarely: a directory holding one bundle
        } else {
            b.set_ca_file(ca)
        };
        r.map_err(|x| e(&format!("ssl.ca.location {}", ca.display()), x))?;
    }
    if let Some(pem) = &tls.ca_pem {
        let certs = X509::stack_from_pem(pem.as_bytes()).map_err(|x| e("ssl.ca.pem", x))?;
        for c in certs {
            b.cert_store_mut()
                .add_cert(c)
                .map_err(|x| e("ssl.ca.pem", x))?;
        }
    }
    if let Some(cert) = &tls.cert_location {
        b.set_certificate_chain_file(cert)
            .map_err(|x| e(&format!("ssl.certificate.location {}", cert.display()), x))?;
    }
    if let Some(key) = &tls.key_location {
        let what = format!("ssl.key.location {}", key.display());
        match &tls.key_password {
            Some(pw) => {
                let pem =
                    std::fs::read(key).map_err(|x| tls_err(broker, format!("{what}: {x}")))?;
                let k = PKey::private_key_from_pem_passphrase(&pem, pw.as_bytes())
                    .map_err(|x| e(&what, x))?;
                b.set_private_key(&k).map_err(|x| e(&what, x))?;
            }
            None => b
                .set_private_key_file(key, SslFiletype::PEM)
                .map_err(|x| e(&what, x))?,
        }
        b.check_private_key()
            .map_err(|x| e("the client key does not match its certificate", x))?;
    }
    if !tls.verify {
        b.set_verify(SslVerifyMode::NONE);
    }
    Ok(b.build())
}

/// Wrap `tcp` as `security` says: a TLS handshake (within `timeout`) when it asks for TLS.
pub(crate) fn secure(
    tcp: TcpStream,
    broker: &str,
    security: &Security,
    timeout: Duration,
) -> Result<Stream, WireError> {
    let Some(tls) = &security.tls else {
        return Ok(Stream::Plain(tcp));
    };
    let host = broker
        .rsplit_once(':')
        .map_or(broker, |(h, _)| h)
        .trim_start_matches('[')
        .trim_end_matches(']');
    let deadline = Instant::now() + timeout;
    let set = |s: &TcpStream| {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        s.set_read_timeout(Some(left))
            .and_then(|()| s.set_write_timeout(Some(left)))
            .map_err(|x| tls_err(broker, x))
    };
    set(&tcp)?;
    let mut cfg = connector(broker, tls)?
        .configure()
        .map_err(|x| tls_err(broker, x))?;
    cfg.set_verify_hostname(tls.verify_hostname && tls.verify);
    let mut attempt = cfg.connect(host, tcp);
    loop {
        match attempt {
            Ok(s) => return Ok(Stream::Tls(Box::new(s))),
            Err(HandshakeError::WouldBlock(mid)) => {
                // A socket timeout mid-handshake: go on until the deadline.
                if Instant::now() >= deadline {
                    return Err(WireError::TimedOut {
                        broker: broker.to_string(),
                        api: -1,
                        after: timeout,
                    });
                }
                set(mid.get_ref())?;
                attempt = mid.handshake();
            }
            Err(HandshakeError::SetupFailure(x)) => return Err(tls_err(broker, x)),
            Err(HandshakeError::Failure(mid)) => {
                let verify = mid.ssl().verify_result();
                let detail = if verify == openssl::x509::X509VerifyResult::OK {
                    mid.error().to_string()
                } else {
                    format!("the broker's certificate is not trusted: {verify}")
                };
                return Err(tls_err(broker, detail));
            }
        }
    }
}

/// Authenticate `conn` (SASL) when `security` asks for it, after ApiVersions.
pub(crate) fn authenticate(conn: &mut Conn, security: &Security) -> Result<(), WireError> {
    match &security.sasl {
        Some(s) => super::sasl::authenticate(conn, s),
        None => Ok(()),
    }
}
