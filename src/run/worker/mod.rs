//! Client workers: a client library other than librdkafka runs in a process of its own
//! language, started per producer or reader and driven over one framed protocol on its
//! standard input and output (clients/PROTOCOL.md).
//!
//! The worker sends and reads; this side keeps everything else. A producer's driver
//! (`producer.rs`) meets the run's barriers and tells the worker each phase, and turns the
//! worker's completion stream (`completions.rs`) into the same `Recorder` librdkafka's
//! delivery reports fill; a reader's driver (`reader.rs`) verifies each record the worker
//! read with the same `Verifier` librdkafka's reads go through. `frame.rs` is the framing,
//! `process.rs` the process (its hello, its log, its death named), `build.rs` the build on
//! first use from `clients/<name>/`, `setup.rs` the run's parameters as a worker is told
//! them, `internals.rs` the client's own figures as sums.

mod build;
mod completions;
mod frame;
mod internals;
mod process;
pub(super) mod producer;
pub(super) mod reader;
mod setup;
#[cfg(test)]
mod vectors;

pub(super) use build::{Built, Launcher, Tool};
