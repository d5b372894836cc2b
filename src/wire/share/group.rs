//! Membership: the group coordinator connection and the ShareGroupHeartbeat exchange that
//! joins, keeps, and leaves the group, and carries the assignment.

use std::time::{Duration, Instant};

use kafka_protocol::messages::{ApiKey, GroupId, ShareGroupHeartbeatRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::super::admin::{bootstrap_conn, coordinator_moving, find_coordinator};
use super::super::conn::{Conn, Limits};
use super::super::{Security, WireError};

const HB: i16 = ApiKey::ShareGroupHeartbeat as i16;
const UNKNOWN_MEMBER_ID: i16 = 25;
const FENCED_MEMBER_EPOCH: i16 = 110;

/// What a heartbeat brought.
#[derive(Debug, Default)]
pub(super) struct Beat {
    /// A new assignment (topic id, partitions), when the coordinator sent one.
    pub assignment: Option<Vec<(Uuid, Vec<i32>)>>,
    /// The member was fenced or forgotten and joined again: everything acquired is gone.
    pub rejoined: bool,
}

pub(super) struct Group {
    pub group_id: String,
    pub member_id: String,
    pub epoch: i32,
    conn: Option<Conn>,
    interval: Duration,
    pub next_beat: Instant,
    /// Send the subscription: on joining, and after any failure (the coordinator may have
    /// lost it).
    full: bool,
}

impl Group {
    pub(super) fn new(group_id: &str) -> Group {
        Group {
            group_id: group_id.to_string(),
            member_id: new_member_id(),
            epoch: 0,
            conn: None,
            interval: Duration::from_secs(5),
            next_beat: Instant::now(),
            full: true,
        }
    }

    /// A connection to any broker (the coordinator's when there is one): for Metadata.
    pub(super) fn any_conn(
        &mut self,
        bootstrap: &[String],
        security: &Security,
        limits: Limits,
        client_id: &str,
    ) -> Result<&mut Conn, WireError> {
        if self.conn.as_ref().is_some_and(Conn::is_broken) {
            self.conn = None;
        }
        let c = match self.conn.take() {
            Some(c) => c,
            None => self.coordinator(bootstrap, security, limits, client_id)?,
        };
        Ok(self.conn.insert(c))
    }

    fn coordinator(
        &self,
        bootstrap: &[String],
        security: &Security,
        limits: Limits,
        client_id: &str,
    ) -> Result<Conn, WireError> {
        let mut boot = bootstrap_conn(bootstrap, security, limits, client_id)?;
        let addr = find_coordinator(&mut boot, &self.group_id, Instant::now() + limits.request)?;
        if addr == boot.broker() {
            return Ok(boot);
        }
        Conn::connect(&addr, security, limits, client_id)
    }

    /// One heartbeat now, with `epoch` (0 joins, -1 leaves). Coordinator moves and loading
    /// are retried (backing off briefly) within `limits.request`; a fenced member joins again.
    pub(super) fn beat(
        &mut self,
        topics: &[String],
        bootstrap: &[String],
        security: &Security,
        limits: Limits,
        client_id: &str,
    ) -> Result<Beat, WireError> {
        let mut out = Beat::default();
        let deadline = Instant::now() + limits.request;
        let mut backoff = Duration::from_millis(50);
        loop {
            match self.beat_once(topics, bootstrap, security, limits, client_id) {
                Ok(b) => {
                    out.assignment = b.assignment.or(out.assignment);
                    return Ok(out);
                }
                Err(e) => {
                    let code = e.kafka_code();
                    if matches!(code, Some(UNKNOWN_MEMBER_ID | FENCED_MEMBER_EPOCH))
                        && self.epoch != -1
                    {
                        // The coordinator no longer knows this member: join again, empty-handed.
                        self.epoch = 0;
                        self.full = true;
                        out.rejoined = true;
                        out.assignment = Some(Vec::new());
                        if Instant::now() < deadline {
                            continue;
                        }
                        return Err(e);
                    }
                    let retriable = e.breaks_connection() || code.is_some_and(coordinator_moving);
                    if !retriable {
                        return Err(e);
                    }
                    if code.is_some_and(|c| c != 14) || e.breaks_connection() {
                        // NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a dead socket: find it anew.
                        self.conn = None;
                    }
                    self.full = true;
                    if Instant::now() + backoff >= deadline {
                        return Err(e);
                    }
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_millis(1000));
                }
            }
        }
    }

    fn beat_once(
        &mut self,
        topics: &[String],
        bootstrap: &[String],
        security: &Security,
        limits: Limits,
        client_id: &str,
    ) -> Result<Beat, WireError> {
        let full = self.full || self.epoch == 0;
        let req = ShareGroupHeartbeatRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(self.group_id.clone())))
            .with_member_id(StrBytes::from_string(self.member_id.clone()))
            .with_member_epoch(self.epoch)
            .with_subscribed_topic_names(full.then(|| {
                topics
                    .iter()
                    .map(|t| TopicName(StrBytes::from_string(t.clone())))
                    .collect()
            }));
        let leaving = self.epoch == -1;
        let context = format!("group {} member {}", self.group_id, self.member_id);
        let conn = self.any_conn(bootstrap, security, limits, client_id)?;
        let resp = conn.request(&req)?;
        if resp.error_code != 0 {
            return Err(conn.kafka_err(HB, resp.error_code, resp.error_message.as_ref(), &context));
        }
        self.full = false;
        if leaving {
            return Ok(Beat::default());
        }
        self.epoch = resp.member_epoch;
        if resp.heartbeat_interval_ms > 0 {
            self.interval = Duration::from_millis(resp.heartbeat_interval_ms as u64);
        }
        self.next_beat = Instant::now() + self.interval;
        Ok(Beat {
            assignment: resp.assignment.map(|a| {
                a.topic_partitions
                    .into_iter()
                    .map(|tp| (tp.topic_id, tp.partitions))
                    .collect()
            }),
            rejoined: false,
        })
    }

    /// Leave the group (epoch -1): the coordinator hands this member's partitions to others.
    pub(super) fn leave(
        &mut self,
        bootstrap: &[String],
        security: &Security,
        limits: Limits,
        client_id: &str,
    ) -> Result<(), WireError> {
        self.epoch = -1;
        self.beat_once(&[], bootstrap, security, limits, client_id)
            .map(|_| ())
    }
}

/// A member id as ShareGroupHeartbeat v1 wants it: made by the client, a UUID. Random enough
/// to be unique among members (std's per-process random keys, the clock, a counter); not a
/// secret.
fn new_member_id() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let half = |salt: u64| {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(salt);
        h.write_u64(n);
        h.write_u64(nanos);
        h.write_u32(std::process::id());
        h.finish()
    };
    let bits = (u128::from(half(1)) << 64) | u128::from(half(2));
    uuid::Builder::from_random_bytes(bits.to_be_bytes())
        .into_uuid()
        .to_string()
}
