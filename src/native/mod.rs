//! The one place kafkabench calls librdkafka's C API directly (every `unsafe` block that
//! touches librdkafka lives under this module, each with a SAFETY comment). rust-rdkafka does
//! everything else. A foundation: it imports nothing from the crate.

pub(crate) mod conf;
pub(crate) mod consumer;
pub(crate) mod error;
pub(crate) mod producer;
