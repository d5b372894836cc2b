//! Stage shard: one scenario run from several machines (docs/distributed.md).
//!
//! Shard I of N runs its share of every run through the run stage, meeting the others at the
//! points the run stage offers ([`crate::run::Coordination`], implemented by [`ShardRun`]);
//! the collector creates the topics, holds both barriers, measures the disk once and gathers
//! the results over the control topic; and the shards' results, gathered live or read from
//! result files (`kafkabench merge`), become one `Execution` through one function. Nothing
//! here prints: the collector's progress goes to the caller's `say`.

pub(crate) mod collect;
pub(crate) mod control;
mod digest;
mod error;
pub(crate) mod execution;
pub(crate) mod files;
pub(crate) mod letdown;
pub(crate) mod policy;
mod recheck;
mod side;

pub(crate) use digest::of_run as digest;
pub(crate) use side::{ShardArgs, ShardRun};
