//! kafkabench: declarative Kafka benchmark scenarios. See ARCHITECTURE.md for the pipeline.
#![doc = include_str!("../ARCHITECTURE.md")]

pub mod assert;
pub mod check;
pub mod cli;
pub mod diagnostic;
pub(crate) mod exit;
pub(crate) mod format;
pub mod import;
pub(crate) mod k8s;
pub mod measure;
pub mod model;
pub(crate) mod native;
pub mod plan;
pub mod random;
pub mod report;
pub(crate) mod run;
pub mod schema;
pub(crate) mod shard;
pub mod source;
pub mod syntax;
pub(crate) mod wire;
