//! Kafka spoken natively, for what librdkafka cannot do: a framed connection (`conn`), a few
//! admin requests (`admin`, `configs`: the brokers' configs and the client quotas) and a
//! share-group consumer (KIP-932, `share`). A foundation: it imports nothing from the crate.
//! Blocking I/O with timeouts: each consumer runs on its own OS thread. Nothing here prints;
//! every failure is a `WireError` that names the broker, the request and Kafka's error. What a
//! broker sends is bounded before it is allocated: the frame by `Limits::max_response`, what
//! decoding it reserves by `bounds`, a batch's decompressed size by `records`.

// The share consumer's caller (the run's share workload) lands on another branch; until then
// parts of this API are used only by its tests.

pub(crate) mod admin;
pub(crate) mod bounds;
pub(crate) mod configs;
pub(crate) mod conn;
mod error;
mod records;
mod sasl;
pub(crate) mod security;
pub(crate) mod share;
#[cfg(test)]
mod tests;

pub(crate) use admin::alter_group_configs;
pub(crate) use error::{code_name, WireError};
pub(crate) use security::Security;
pub(crate) use share::{AckKind, AckReport, ShareConfig, ShareConsumer, NETWORK_EXCEPTION};
