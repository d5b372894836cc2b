//! What went wrong, in words a person can act on: which broker, which request, and Kafka's own
//! name for its error code.

use std::io;
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use kafka_protocol::ResponseError;

/// A failure talking to Kafka. Never a panic: a garbled or hostile response is `Garbled`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WireError {
    #[error("{broker}: the address does not resolve ({detail})")]
    Resolve { broker: String, detail: String },
    #[error("{broker}: cannot connect: {source}")]
    Connect { broker: String, source: io::Error },
    #[error("{broker}: {source} during {}", api_name(*.api))]
    Io {
        broker: String,
        api: i16,
        source: io::Error,
    },
    #[error("{broker}: no answer to {} within {after:?}", api_name(*.api))]
    TimedOut {
        broker: String,
        api: i16,
        after: Duration,
    },
    #[error("{broker}: garbled answer to {}: {detail}", api_name(*.api))]
    Garbled {
        broker: String,
        api: i16,
        detail: String,
    },
    #[error("{broker}: {} is not served here (we speak v{}-v{}, the broker {})",
        api_name(*.api), .ours.0, .ours.1, theirs_text(*.theirs))]
    Unsupported {
        broker: String,
        api: i16,
        ours: (i16, i16),
        theirs: Option<(i16, i16)>,
    },
    #[error("{broker}: {} failed{}: {}{}", api_name(*.api), context_text(.context),
        code_name(*.code), message_text(.message))]
    Kafka {
        broker: String,
        api: i16,
        code: i16,
        message: Option<String>,
        /// What the request was about (a group, a topic-partition), or empty.
        context: String,
    },
    #[error("{broker}: TLS: {detail}")]
    Tls { broker: String, detail: String },
    #[error("{broker}: SASL authentication failed: {detail}")]
    Auth { broker: String, detail: String },
    #[error("{0}")]
    Config(String),
}

impl WireError {
    /// The Kafka error code, when the broker answered with one.
    pub(crate) fn kafka_code(&self) -> Option<i16> {
        match self {
            WireError::Kafka { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Whether the connection that produced this is no longer usable (I/O, timeout, garbage):
    /// the next request must reconnect.
    pub(crate) fn breaks_connection(&self) -> bool {
        matches!(
            self,
            WireError::Io { .. }
                | WireError::TimedOut { .. }
                | WireError::Garbled { .. }
                | WireError::Connect { .. }
                | WireError::Tls { .. }
        )
    }
}

/// `ShareFetch`, or the number when the key is unknown to kafka-protocol.
pub(crate) fn api_name(key: i16) -> String {
    if key == -1 {
        return "the TLS handshake".to_string();
    }
    match ApiKey::try_from(key) {
        Ok(k) => format!("{k:?}"),
        Err(()) => format!("API key {key}"),
    }
}

/// Kafka's name for an error code as its Java clients print it: `NOT_COORDINATOR (16)`.
pub(crate) fn code_name(code: i16) -> String {
    match ResponseError::try_from_code(code) {
        None => "NONE (0)".to_string(),
        Some(ResponseError::Unknown(c)) => format!("unknown error code {c}"),
        Some(e) => {
            let camel = format!("{e:?}");
            let mut out = String::with_capacity(camel.len() + 8);
            for (i, ch) in camel.chars().enumerate() {
                if ch.is_ascii_uppercase() && i > 0 {
                    out.push('_');
                }
                out.push(ch.to_ascii_uppercase());
            }
            format!("{out} ({code})")
        }
    }
}

fn theirs_text(theirs: Option<(i16, i16)>) -> String {
    match theirs {
        Some((lo, hi)) => format!("v{lo}-v{hi}"),
        None => "not at all".to_string(),
    }
}

fn context_text(context: &str) -> String {
    if context.is_empty() {
        String::new()
    } else {
        format!(" for {context}")
    }
}

fn message_text(message: &Option<String>) -> String {
    match message {
        Some(m) if !m.is_empty() => format!(" ({m})"),
        _ => String::new(),
    }
}
