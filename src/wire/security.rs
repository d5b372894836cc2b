//! How a connection is secured: plaintext for now (TLS and SASL come next).

use std::net::TcpStream;
use std::time::Duration;

use super::conn::{Conn, Stream};
use super::WireError;

/// The security of a cluster's client listener.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Security {}

impl Security {
    pub(crate) fn plaintext() -> Security {
        Security {}
    }
}

/// Wrap `tcp` as `security` says (TLS handshake included).
pub(crate) fn secure(
    tcp: TcpStream,
    _broker: &str,
    _security: &Security,
    _timeout: Duration,
) -> Result<Stream, WireError> {
    Ok(Stream::Plain(tcp))
}

/// Authenticate `conn` (SASL), after ApiVersions.
pub(crate) fn authenticate(_conn: &mut Conn, _security: &Security) -> Result<(), WireError> {
    Ok(())
}

impl Security {
    /// The cluster block's settings as a `Security`: plaintext only, so far; a secured
    /// cluster is refused in words rather than met with a handshake it cannot answer.
    pub(crate) fn from_props(get: impl Fn(&str) -> Option<String>) -> Result<Security, String> {
        match get("security.protocol").map(|p| p.to_ascii_lowercase()) {
            None => Ok(Security::plaintext()),
            Some(p) if p == "plaintext" => Ok(Security::plaintext()),
            Some(p) => Err(format!(
                "kafkabench's share consumer speaks PLAINTEXT only so far, and this cluster is                  `security.protocol = {p}`"
            )),
        }
    }
}
