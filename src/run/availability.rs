//! Whether the cluster answers. A client's all-brokers-down event opens a period of
//! unavailability (`Shared::brokers_down`); from then on this thread asks the brokers itself,
//! a connection and ApiVersions each quarter second, until one answers, which closes the
//! period. Only when none has answered for `cluster { lost_after }` is the cluster lost and the
//! run ended. A broker restart, a paused process or a GC pause is a measured gap, not the end.
//!
//! Its own probe, not librdkafka's reconnection: librdkafka backs off between reconnects (up to
//! `reconnect.backoff.max.ms`), which would be charged to the cluster.
//!
//! Nor only librdkafka's all-brokers-down: it counts each broker down once until one comes
//! back up, so after an outage a broker handle it never reconnected (sparse connections)
//! keeps it from ever reporting the next one (a second stop of a single broker went
//! unreported in one run of three here). So when no client has heard an answer for as long as
//! a request may wait (`socket.timeout.ms`), this thread asks the brokers itself; when none
//! answers, the period begins, at the last answer a client (or this probe) had.

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
/// While the clients hear nothing, the watch asks the brokers at most this often (ns).
const SECOND: u64 = 1_000_000_000;

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
    for b in crate::wire::admin::bootstrap_list(&rp.bootstrap) {
        if !addresses.contains(&b) {
            addresses.push(b);
        }
    }
    // The probe asks for ApiVersions, which a broker answers before any authentication: the
    // listener's TLS is spoken, SASL never (so GSSAPI or OAUTHBEARER clusters are probed too).
    let security = Security::from_props(|k| match k {
        "security.protocol" => rp.admin.get(k).map(without_sasl),
        _ => rp.admin.get(k).map(str::to_string),
    })
    .ok();
    shared.set_down_window(down_window(rp));
    let bound = rp.cell.spec.lost_after;
    let silent = down_window(rp).saturating_sub(Duration::from_secs(1));
    let s = stop.clone();
    let handle = std::thread::Builder::new()
        .name("kb-availability".into())
        .spawn(move || run(addresses, security.as_ref(), bound, silent, &shared, &s))
        .ok();
    Watch { stop, handle }
}

fn run(
    mut addresses: Vec<String>,
    security: Option<&Security>,
    bound: Duration,
    silent: Duration,
    shared: &Shared,
    stop: &AtomicBool,
) {
    // This probe's own last answer, and when it last asked.
    let (mut answered_ns, mut asked_ns) = (0u64, 0u64);
    while !stop.load(Ordering::Acquire) && !shared.lost() && !shared.interrupted() {
        let Some(since) = shared.down_since() else {
            let (now, heard) = (now_ns(shared), shared.last_heard());
            let last = heard.max(answered_ns);
            let silent_for = now.saturating_sub(last);
            let asked_for = now.saturating_sub(asked_ns);
            if heard > 0 && silent_for > silent.as_nanos() as u64 && asked_for >= SECOND {
                asked_ns = now;
                match answers(&mut addresses, security, shared, u64::MAX) {
                    Some(at) => answered_ns = at,
                    None => shared.unreachable_since(last),
                }
                continue;
            }
            std::thread::sleep(IDLE);
            continue;
        };
        let lost_at = since.saturating_add(bound.as_nanos() as u64);
        if let Some(at) = answers(&mut addresses, security, shared, lost_at) {
            shared.brokers_back(since, at);
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

/// When a broker answered (ns since `t0`): connected, TLS spoken, and its API versions read.
/// The brokers are asked in turn until `lost_at`, so a dead address listed first cannot carry
/// the probe past the bound; the one that answers is asked first next time.
fn answers(
    addresses: &mut [String],
    security: Option<&Security>,
    shared: &Shared,
    lost_at: u64,
) -> Option<u64> {
    for i in 0..addresses.len() {
        if i > 0 && now_ns(shared) >= lost_at {
            return None;
        }
        let a = &addresses[i];
        let ok = match security {
            Some(s) => Conn::connect(a, s, Limits::new(PROBE_TIMEOUT), "kafkabench").is_ok(),
            // A security.protocol the probe cannot speak: the broker's TCP accept is all it has.
            None => crate::wire::conn::tcp_connect(a, PROBE_TIMEOUT).is_ok(),
        };
        if ok {
            let at = now_ns(shared);
            addresses[..=i].rotate_right(1);
            return Some(at);
        }
    }
    None
}

/// `security.protocol` for a probe that stops before authentication.
fn without_sasl(protocol: &str) -> String {
    match protocol.to_ascii_lowercase().as_str() {
        "sasl_ssl" => "ssl".to_string(),
        "sasl_plaintext" => "plaintext".to_string(),
        other => other.to_string(),
    }
}

/// The longest a client may take to report every broker down: its `socket.timeout.ms`
/// (librdkafka's default 60 s) and a second of librdkafka's timeout scan.
fn down_window(rp: &RunPlan) -> Duration {
    let timeout_ms = |p: &crate::model::Props| {
        p.get("socket.timeout.ms")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(60_000)
    };
    let longest = rp
        .consumer
        .iter()
        .map(timeout_ms)
        .fold(timeout_ms(&rp.producer), u64::max);
    Duration::from_millis(longest) + Duration::from_secs(1)
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
