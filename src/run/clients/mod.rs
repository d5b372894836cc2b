//! The client boundary: the run drives every producer and reader through `Client`, whatever
//! library it is. librdkafka is one implementation (in-process, its hot path unchanged behind
//! one call per thread); every other client is a worker process (`run::worker`) named by a
//! `Launcher`, one small file per client saying how it is built and started.
//!
//! As OpenMessaging Benchmark's driver API, the division is that a client only sends and
//! receives: the schedule, the generator's definition and every measurement stay on
//! kafkabench's side of the line, so every client is measured by the same code.

mod franz_go;
mod java;

use std::sync::Arc;

use super::blocking::blocking;
use super::consumer::{ConsumerJob, ConsumerOutcome};
use super::error::RunError;
use super::error::WorkerError;
use super::producer::{ProducerJob, ProducerOutcome};
use super::worker::{self, Built, Launcher};
use crate::model::ClientKind;
use crate::plan::RunPlan;

/// One client library, as the run's threads use it: each call runs one producer or reader
/// on the calling thread (its own) from its start to its recording.
pub(super) trait Client: Send + Sync {
    fn produce(&self, job: ProducerJob) -> ProducerOutcome;
    fn read(&self, job: ConsumerJob) -> ConsumerOutcome;
}

/// librdkafka, in kafkabench's own process (`run::producer`, `run::consumer`).
struct Librdkafka;

impl Client for Librdkafka {
    fn produce(&self, job: ProducerJob) -> ProducerOutcome {
        super::producer::run(job)
    }

    fn read(&self, job: ConsumerJob) -> ConsumerOutcome {
        super::consumer::run(job)
    }
}

/// A client in a worker process, built.
struct Worker(Built);

impl Client for Worker {
    fn produce(&self, job: ProducerJob) -> ProducerOutcome {
        worker::producer::run(&self.0, job)
    }

    fn read(&self, job: ConsumerJob) -> ConsumerOutcome {
        worker::reader::run(&self.0, job)
    }
}

/// The clients of a run's two sides.
pub(super) struct Sides {
    pub producer: Arc<dyn Client>,
    pub reader: Arc<dyn Client>,
}

/// Run `rp`'s clients, ready (each worker built on first use, off the orchestrator's thread).
/// A share group's members are kafkabench's own client (`run::share`), whatever the side says.
pub(super) async fn for_run(rp: &RunPlan) -> Result<Sides, RunError> {
    let producer = rp.producer_release();
    let reader = rp.consumer_release();
    blocking(move || {
        let p = prepare(producer.name, Some(&producer.version))?;
        let r = match reader {
            Some(r) if r == producer => p.clone(),
            Some(r) => prepare(r.name, Some(&r.version))?,
            None => prepare(ClientKind::Librdkafka, None)?,
        };
        Ok(Sides {
            producer: p,
            reader: r,
        })
    })
    .await?
}

/// Every worker client: one `Launcher` per folder under `clients/`.
const LAUNCHERS: &[&Launcher] = &[&java::LAUNCHER, &franz_go::LAUNCHER];

/// The launcher of client `kind` (None for librdkafka, which needs none, and for a client
/// this build has no worker for).
pub(crate) fn launcher(kind: ClientKind) -> Option<&'static Launcher> {
    LAUNCHERS.iter().copied().find(|l| l.client == kind.name())
}

/// Client `kind` ready to run: a worker is built on first use (this blocks: call it before
/// the run's threads start, off the orchestrator's thread). `version` is the client's
/// release (the launcher's default when None).
pub(super) fn prepare(
    kind: ClientKind,
    version: Option<&str>,
) -> Result<Arc<dyn Client>, RunError> {
    if kind == ClientKind::Librdkafka {
        return Ok(Arc::new(Librdkafka));
    }
    let Some(l) = launcher(kind) else {
        return Err(RunError::Worker(WorkerError {
            client: kind.name(),
            what: "is not part of this kafkabench (no launcher in src/run/clients/)".into(),
            log: Vec::new(),
        }));
    };
    let built = l.ensure(version).map_err(RunError::Worker)?;
    Ok(Arc::new(Worker(built)))
}
