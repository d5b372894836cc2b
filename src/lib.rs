//! kafkabench: declarative Kafka benchmark scenarios. See ARCHITECTURE.md for the pipeline.
#![doc = include_str!("../ARCHITECTURE.md")]

pub mod assert;
pub mod check;
pub mod cli;
pub mod diagnostic;
pub mod exit;
pub mod format;
pub mod import;
pub mod k8s;
pub mod measure;
pub mod model;
pub mod native;
pub mod plan;
pub mod random;
pub mod report;
pub mod run;
pub mod shard;
pub mod source;
pub mod syntax;
