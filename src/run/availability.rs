//! Whether the cluster answers. A client's all-brokers-down event opens a period of
//! unavailability (`Shared::brokers_down`); from then on this thread asks the brokers itself,
//! a connection and ApiVersions each quarter second, until one answers, which closes the
//! period. Only when none has answered for `cluster { lost_after }` is the cluster lost and the
//! run ended. A broker restart, a paused process or a GC pause is a measured gap, not the end.
//!
//! Its own probe, not librdkafka's reconnection: librdkafka backs off between reconnects (up to
//! `reconnect.backoff.max.ms`), which would be charged to the cluster.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::shared::Shared;
use crate::measure::outage::{Lost, Outage};
use crate::plan::RunPlan;
use crate::wire::conn::{Conn, Limits};
use crate::wire::Security;

/// How often the brokers are asked while none answers, and how long each may take.
const PROBE_EVERY: Duration = Duration::from_millis(250);
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// How often an idle watch looks whether a period has begun.
const IDLE: Duration = Duration::from_millis(50);

/// The watch over one run; stopped (and joined) when dropped.
pub(super) struct Watch {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Starts the watch of `rp`'s cluster: `brokers` are the addresses it learned, asked besides
/// the bootstrap list.
pub(super) fn watch(rp: &RunPlan, brokers: &[String], shared: Arc<Shared>) -> Watch {
    let stop = Arc::new(AtomicBool::new(false));
    let mut addresses: Vec<String> = brokers.to_vec();
    for b in rp
        .bootstrap
        .split(',')
        .map(str::trim)
        .filter(|b| !b.is_empty())
    {
        if !addresses.iter().any(|a| a == b) {
            addresses.push(b.to_string());
        }
    }
    // A security kafkabench's own connection does not speak (GSSAPI): the broker's TCP
    // accept is the answer then.
    let security = Security::from_props(|k| rp.admin.get(k).map(str::to_string)).ok();
    let bound = rp.cell.spec.lost_after;
    let s = stop.clone();
    let handle = std::thread::Builder::new()
        .name("kb-availability".into())
        .spawn(move || run(&addresses, security.as_ref(), bound, &shared, &s))
        .ok();
    Watch { stop, handle }
}

fn run(
    addresses: &[String],
    security: Option<&Security>,
    bound: Duration,
    shared: &Shared,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Acquire) && !shared.lost() && !shared.interrupted() {
        let Some(since) = shared.down_since() else {
            std::thread::sleep(IDLE);
            continue;
        };
        if answers(addresses, security) {
            shared.brokers_back(since, now_ns(shared));
            continue;
        }
        let down_for = now_ns(shared).saturating_sub(since);
        if down_for >= bound.as_nanos() as u64 {
            let lost = Lost {
                for_secs: down_for as f64 / 1e9,
                bound_secs: bound.as_secs_f64(),
            };
            shared.cluster_lost(format!("the cluster was lost: {lost}"));
            return;
        }
        std::thread::sleep(PROBE_EVERY);
    }
}

fn now_ns(shared: &Shared) -> u64 {
    shared.t0.elapsed().as_nanos() as u64
}

/// Whether any broker answers: connected, secured, and its API versions read.
fn answers(addresses: &[String], security: Option<&Security>) -> bool {
    addresses.iter().any(|a| match security {
        Some(s) => Conn::connect(a, s, Limits::new(PROBE_TIMEOUT), "kafkabench").is_ok(),
        None => crate::wire::conn::tcp_connect(a, PROBE_TIMEOUT).is_ok(),
    })
}

/// The run's periods of unavailability, on the measured phase's clock (`origin_ns`).
pub(super) fn outages(shared: &Shared, origin_ns: u64) -> Vec<Outage> {
    let secs = |ns: u64| (ns as f64 - origin_ns as f64) / 1e9;
    shared
        .outages()
        .into_iter()
        .map(|(from, to)| Outage {
            from_secs: secs(from),
            to_secs: (to > 0).then(|| secs(to)),
        })
        .collect()
}
