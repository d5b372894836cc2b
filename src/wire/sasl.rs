//! SASL on a Kafka connection (KIP-152): SaslHandshake names the mechanism, then
//! SaslAuthenticate carries its messages. PLAIN sends the user and password (under TLS);
//! SCRAM (RFC 5802, RFC 7677) proves the password without sending it, and checks the
//! broker's proof in return.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, SaslAuthenticateRequest, SaslHandshakeRequest};
use kafka_protocol::protocol::StrBytes;
use openssl::hash::MessageDigest;
use openssl::pkey::PKey;
use openssl::sign::Signer;

use super::conn::Conn;
use super::security::{Mechanism, Sasl};
use super::WireError;

/// Kafka's brokers iterate 4096 to 16384 times; a broker asking for vastly more is refused
/// rather than let it burn our CPU.
const MAX_ITERATIONS: u32 = 1 << 20;

fn auth_err(conn: &Conn, detail: impl std::fmt::Display) -> WireError {
    WireError::Auth {
        broker: conn.broker().to_string(),
        detail: detail.to_string(),
    }
}

pub(crate) fn authenticate(conn: &mut Conn, sasl: &Sasl) -> Result<(), WireError> {
    let key = ApiKey::SaslHandshake as i16;
    let v = conn.version_within::<SaslHandshakeRequest>(1, 1)?;
    let hs = conn.request_v(
        v,
        &SaslHandshakeRequest::default()
            .with_mechanism(StrBytes::from_static_str(sasl.mechanism.name())),
    )?;
    if hs.error_code != 0 {
        let offered: Vec<&str> = hs.mechanisms.iter().map(|m| m.as_str()).collect();
        return Err(conn.kafka_err(
            key,
            hs.error_code,
            None,
            &format!(
                "SASL {} (the broker offers {})",
                sasl.mechanism.name(),
                offered.join(", ")
            ),
        ));
    }
    match sasl.mechanism {
        Mechanism::Plain => {
            let mut msg = Vec::with_capacity(sasl.username.len() + sasl.password.len() + 2);
            msg.push(0);
            msg.extend_from_slice(sasl.username.as_bytes());
            msg.push(0);
            msg.extend_from_slice(sasl.password.as_bytes());
            exchange(conn, msg).map(drop)
        }
        Mechanism::ScramSha256 => scram(conn, sasl, MessageDigest::sha256()),
        Mechanism::ScramSha512 => scram(conn, sasl, MessageDigest::sha512()),
    }
}

/// One SaslAuthenticate round trip: our bytes out, the broker's back.
fn exchange(conn: &mut Conn, msg: Vec<u8>) -> Result<Vec<u8>, WireError> {
    let v = conn.version_within::<SaslAuthenticateRequest>(0, 2)?;
    let r = conn.request_v(
        v,
        &SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(msg)),
    )?;
    if r.error_code != 0 {
        let why = r
            .error_message
            .as_ref()
            .map_or_else(|| super::code_name(r.error_code), |m| m.to_string());
        return Err(auth_err(conn, why));
    }
    Ok(r.auth_bytes.to_vec())
}

fn scram(conn: &mut Conn, sasl: &Sasl, md: MessageDigest) -> Result<(), WireError> {
    let broker = conn.broker().to_string();
    let ssl = |e: openssl::error::ErrorStack| WireError::Auth {
        broker: broker.clone(),
        detail: format!("SCRAM: {e}"),
    };
    let mut raw = [0u8; 24];
    openssl::rand::rand_bytes(&mut raw).map_err(ssl)?;
    let cnonce = B64.encode(raw);
    let user = sasl.username.replace('=', "=3D").replace(',', "=2C");
    let first_bare = format!("n={user},r={cnonce}");
    let server_first = exchange(conn, format!("n,,{first_bare}").into_bytes())?;
    let server_first = String::from_utf8(server_first)
        .map_err(|_| auth_err(conn, "SCRAM: the broker's first message is not text"))?;
    let attr = |name: char| {
        server_first
            .split(',')
            .find_map(|kv| kv.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
    };
    if let Some(e) = attr('e') {
        return Err(auth_err(conn, format!("SCRAM: the broker says {e}")));
    }
    let (Some(nonce), Some(salt), Some(iters)) = (attr('r'), attr('s'), attr('i')) else {
        return Err(auth_err(
            conn,
            "SCRAM: the broker's first message lacks r, s or i",
        ));
    };
    if !nonce.starts_with(&cnonce) {
        return Err(auth_err(
            conn,
            "SCRAM: the broker's nonce does not extend ours",
        ));
    }
    let salt = B64
        .decode(salt)
        .map_err(|_| auth_err(conn, "SCRAM: the salt is not base64"))?;
    let iters: u32 = iters
        .parse()
        .ok()
        .filter(|i| (1..=MAX_ITERATIONS).contains(i))
        .ok_or_else(|| auth_err(conn, format!("SCRAM: implausible iteration count {iters}")))?;
    let mut salted = vec![0u8; md.size()];
    openssl::pkcs5::pbkdf2_hmac(
        sasl.password.as_bytes(),
        &salt,
        iters as usize,
        md,
        &mut salted,
    )
    .map_err(ssl)?;
    let hmac = |key: &[u8], data: &[u8]| -> Result<Vec<u8>, openssl::error::ErrorStack> {
        let k = PKey::hmac(key)?;
        let mut s = Signer::new(md, &k)?;
        s.update(data)?;
        s.sign_to_vec()
    };
    let client_key = hmac(&salted, b"Client Key").map_err(ssl)?;
    let stored_key = openssl::hash::hash(md, &client_key).map_err(ssl)?;
    let without_proof = format!("c=biws,r={nonce}");
    let auth_message = format!("{first_bare},{server_first},{without_proof}");
    let signature = hmac(&stored_key, auth_message.as_bytes()).map_err(ssl)?;
    let proof: Vec<u8> = client_key
        .iter()
        .zip(&signature)
        .map(|(a, b)| a ^ b)
        .collect();
    let server_final = exchange(
        conn,
        format!("{without_proof},p={}", B64.encode(proof)).into_bytes(),
    )?;
    let server_final = String::from_utf8_lossy(&server_final).into_owned();
    if let Some(e) = server_final.strip_prefix("e=") {
        return Err(auth_err(conn, format!("SCRAM: the broker says {e}")));
    }
    let server_key = hmac(&salted, b"Server Key").map_err(ssl)?;
    let expected = hmac(&server_key, auth_message.as_bytes()).map_err(ssl)?;
    let got = server_final
        .split(',')
        .find_map(|kv| kv.strip_prefix("v="))
        .and_then(|v| B64.decode(v).ok());
    // The broker proves it knows the password too: a server without it cannot fake this.
    if got.as_deref() != Some(expected.as_slice()) {
        return Err(auth_err(
            conn,
            "SCRAM: the broker's signature does not verify",
        ));
    }
    Ok(())
}
