//! A share-group consumer (KIP-932) on the Kafka protocol: join with ShareGroupHeartbeat,
//! fetch with ShareFetch from every partition leader at once (one share session per leader),
//! acknowledge each record (piggybacked on the next fetch, or ShareAcknowledge on commit).

mod acks;
mod deliver;
mod group;
mod session;
mod types;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use kafka_protocol::messages::ApiKey;
use uuid::Uuid;

pub(crate) use acks::{AckKind, AckReport};
pub(crate) use session::NETWORK_EXCEPTION;
pub(crate) use types::{Acquired, PollOutcome, ShareConfig};

use super::admin;
use super::conn::Limits;
use super::records::BatchReader;
use super::WireError;
use acks::Acks;
use deliver::deliver;
use group::Group;
use session::{Ctx, Session};

/// Topic ids, leaders and broker addresses, as last asked.
#[derive(Debug, Default)]
struct Meta {
    ids: Vec<Uuid>,
    leaders: Vec<Vec<i32>>,
    brokers: HashMap<i32, String>,
    stale: bool,
    refreshed: Option<Instant>,
}

impl Meta {
    fn leader(&self, t: usize, p: i32) -> Option<i32> {
        let l = *self.leaders.get(t)?.get(usize::try_from(p).ok()?)?;
        (l >= 0 && self.brokers.contains_key(&l)).then_some(l)
    }
}

/// How often a member with no partitions heartbeats, to get its first assignment promptly.
const UNASSIGNED_BEAT: Duration = Duration::from_millis(300);

/// The least time between two Metadata requests when leaders are unknown.
const META_BACKOFF: Duration = Duration::from_millis(200);

pub(crate) struct ShareConsumer {
    cfg: ShareConfig,
    limits: Limits,
    group: Group,
    meta: Meta,
    assignment: Vec<(usize, i32)>,
    /// An assignment naming topic ids not yet in `meta`: applied after the next refresh.
    unresolved: Option<Vec<(Uuid, Vec<i32>)>>,
    sessions: Vec<Session>,
    acks: Acks,
    reader: BatchReader,
    changed: bool,
    lock_timeout_ms: i32,
    /// Since when fetches have failed, for the bound on retrying.
    failing_since: Option<Instant>,
}

impl std::fmt::Debug for ShareConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShareConsumer")
            .field("group", &self.cfg.group_id)
            .field("member", &self.group.member_id)
            .finish()
    }
}

impl ShareConsumer {
    /// Find the coordinator, join the group (epoch 0, a member id made here), learn the
    /// subscribed topics' ids and leaders. Every subscribed topic must exist.
    pub(crate) fn join(cfg: ShareConfig) -> Result<ShareConsumer, WireError> {
        if cfg.bootstrap.is_empty() || cfg.topics.is_empty() || cfg.group_id.is_empty() {
            return Err(WireError::Config(
                "a share consumer needs bootstrap servers, a group id and topics".to_string(),
            ));
        }
        let mut limits = Limits::new(cfg.request_timeout);
        // A fetch may exceed max_bytes by one batch (KIP-74): room for a large one.
        limits.max_response = (cfg.max_bytes.max(0) as usize).saturating_add(64 << 20);
        let mut c = ShareConsumer {
            group: Group::new(&cfg.group_id),
            reader: BatchReader::new(limits.max_response.saturating_mul(4)),
            cfg,
            limits,
            meta: Meta::default(),
            assignment: Vec::new(),
            unresolved: None,
            sessions: Vec::new(),
            acks: Acks::default(),
            changed: false,
            lock_timeout_ms: 0,
            failing_since: None,
        };
        c.refresh_metadata()?;
        for (i, t) in c.cfg.topics.iter().enumerate() {
            if c.meta.ids.get(i).map_or(true, |id| id.is_nil()) {
                return Err(WireError::Kafka {
                    broker: c.cfg.bootstrap.join(","),
                    api: ApiKey::Metadata as i16,
                    code: 3,
                    message: None,
                    context: format!("topic {t}"),
                });
            }
        }
        c.heartbeat()?;
        Ok(c)
    }

    /// The partitions assigned now, as (topic index, partition).
    pub(crate) fn assignment(&self) -> &[(usize, i32)] {
        &self.assignment
    }

    /// The acquisition lock the brokers last announced (ms), 0 before the first fetch.
    #[cfg(test)]
    pub(crate) fn lock_timeout_ms(&self) -> i32 {
        self.lock_timeout_ms
    }

    /// Queue an acknowledgement of a record this member acquired: it goes with the next poll
    /// or commit.
    pub(crate) fn ack(&mut self, topic: usize, partition: i32, offset: i64, kind: AckKind) {
        self.acks.push(topic, partition, offset, kind);
    }

    /// Heartbeat when due, fetch from every leader of the assignment (queued acknowledgements
    /// ride along), and call `f` for every record acquired. Waits at most about `max_wait`
    /// when there is nothing to fetch.
    pub(crate) fn poll(
        &mut self,
        mut f: impl FnMut(&Acquired<'_>),
    ) -> Result<PollOutcome, WireError> {
        let mut out = PollOutcome::default();
        if Instant::now() >= self.group.next_beat {
            self.heartbeat()?;
        }
        if self.meta.stale
            && self
                .meta
                .refreshed
                .map_or(true, |t| t.elapsed() >= META_BACKOFF)
        {
            if let Err(e) = self.refresh_metadata() {
                self.failing(e)?;
            }
        }
        let plan = self.plan();
        self.send_orphan_acks(&plan, &mut out.acks);
        let mut sent = Vec::new();
        let mut first_err = None;
        for (node, want) in &plan {
            let i = self.session_index(*node);
            let s = &mut self.sessions[i];
            if !s.wants_fetch(want) {
                continue;
            }
            let cx = Ctx {
                cfg: &self.cfg,
                limits: self.limits,
                member_id: &self.group.member_id,
                ids: &self.meta.ids,
            };
            match s.send_fetch(&cx, want, &mut self.acks, &mut out.acks) {
                Ok(()) => sent.push(i),
                Err(e) => {
                    self.meta.stale = true;
                    first_err.get_or_insert(e);
                }
            }
        }
        if sent.is_empty() && first_err.is_none() {
            // Nothing assigned (yet): wait as a fetch would, but not past the next heartbeat.
            let until_beat = self
                .group
                .next_beat
                .saturating_duration_since(Instant::now());
            session::backoff_sleep(self.cfg.max_wait.min(until_beat));
        }
        for i in sent {
            if let Err(e) = self.receive(i, &mut f, &mut out) {
                first_err.get_or_insert(e);
            }
        }
        out.assignment_changed = std::mem::take(&mut self.changed);
        match first_err {
            None => {
                self.failing_since = None;
                Ok(out)
            }
            Some(e) => {
                self.failing(e)?;
                Ok(out)
            }
        }
    }

    /// Send every queued acknowledgement now (ShareAcknowledge) and say what became of them.
    /// Acknowledgements for a leader with no open session (it was lost, so were the records'
    /// acquisitions) are refused with SHARE_SESSION_NOT_FOUND.
    pub(crate) fn commit(&mut self) -> Result<AckReport, WireError> {
        self.acknowledge_all(false)
    }

    /// Send what is queued, close every share session (epoch -1: what this member still holds
    /// goes back to the group), and leave the group.
    pub(crate) fn close(mut self) -> Result<AckReport, WireError> {
        let r = self.acknowledge_all(true);
        let left = self.group.leave(
            &self.cfg.bootstrap,
            &self.cfg.security,
            self.limits,
            &self.cfg.client_id,
        );
        let report = r?;
        left.map(|()| report)
    }

    fn acknowledge_all(&mut self, close: bool) -> Result<AckReport, WireError> {
        let mut report = AckReport::default();
        let queued: Vec<(usize, i32)> = self.acks.queued_partitions().collect();
        let mut by_node: Vec<(usize, Vec<(usize, i32)>)> = Vec::new();
        for tp in queued {
            match self.session_of(tp) {
                Some(i) => match by_node.iter_mut().find(|(n, _)| *n == i) {
                    Some((_, v)) => v.push(tp),
                    None => by_node.push((i, vec![tp])),
                },
                None => self.acks.refuse_queued(tp.0, tp.1, 122, &mut report),
            }
        }
        if close {
            for i in 0..self.sessions.len() {
                if self.sessions[i].is_open() && !by_node.iter().any(|(n, _)| *n == i) {
                    by_node.push((i, Vec::new()));
                }
            }
        }
        let mut first_err = None;
        for (i, parts) in by_node {
            let s = &mut self.sessions[i];
            let cx = Ctx {
                cfg: &self.cfg,
                limits: self.limits,
                member_id: &self.group.member_id,
                ids: &self.meta.ids,
            };
            if let Err(e) = s.acknowledge(&cx, &parts, close, &mut self.acks, &mut report) {
                first_err.get_or_insert(e);
            }
        }
        match first_err {
            Some(e) if close => Err(e),
            // A failed commit is in the report (refused offsets); the session reopens on poll.
            _ => Ok(report),
        }
    }

    /// The open session a partition's acknowledgements go to: where it is being fetched.
    fn session_of(&self, tp: (usize, i32)) -> Option<usize> {
        self.sessions
            .iter()
            .position(|s| s.is_open() && s.parts.contains(&tp))
            .or_else(|| {
                let node = self.meta.leader(tp.0, tp.1)?;
                self.sessions
                    .iter()
                    .position(|s| s.node == node && s.is_open())
            })
    }

    /// Acknowledgements of partitions no fetch will carry (no longer assigned): sent now.
    fn send_orphan_acks(&mut self, plan: &[(i32, Vec<(usize, i32)>)], report: &mut AckReport) {
        let orphans: Vec<(usize, i32)> = self
            .acks
            .queued_partitions()
            .filter(|tp| !plan.iter().any(|(_, want)| want.contains(tp)))
            .collect();
        if orphans.is_empty() {
            return;
        }
        for tp in orphans {
            match self.session_of(tp) {
                Some(i) => {
                    let s = &mut self.sessions[i];
                    // Refused offsets land in the report; the error needs no more.
                    let cx = Ctx {
                        cfg: &self.cfg,
                        limits: self.limits,
                        member_id: &self.group.member_id,
                        ids: &self.meta.ids,
                    };
                    let _ = s.acknowledge(&cx, &[tp], false, &mut self.acks, report);
                }
                None => self.acks.refuse_queued(tp.0, tp.1, 122, report),
            }
        }
    }

    /// The assigned partitions by leader; a partition without a known leader asks for
    /// Metadata. Leaders that had partitions before and have none now still get an entry, so
    /// their sessions forget them.
    fn plan(&mut self) -> Vec<(i32, Vec<(usize, i32)>)> {
        let mut plan: Vec<(i32, Vec<(usize, i32)>)> = Vec::new();
        for &(t, p) in &self.assignment {
            match self.meta.leader(t, p) {
                Some(node) => match plan.iter_mut().find(|(n, _)| *n == node) {
                    Some((_, v)) => v.push((t, p)),
                    None => plan.push((node, vec![(t, p)])),
                },
                None => self.meta.stale = true,
            }
        }
        for s in &self.sessions {
            if !s.parts.is_empty() && !plan.iter().any(|(n, _)| *n == s.node) {
                plan.push((s.node, Vec::new()));
            }
        }
        plan
    }

    fn session_index(&mut self, node: i32) -> usize {
        let addr = self.meta.brokers.get(&node).cloned().unwrap_or_default();
        match self.sessions.iter().position(|s| s.node == node) {
            Some(i) => {
                if !addr.is_empty() && self.sessions[i].addr != addr {
                    // The broker moved: its old session died with the old address.
                    self.sessions[i].drop_conn();
                    self.sessions[i].addr = addr;
                }
                i
            }
            None => {
                self.sessions.push(Session::new(node, addr));
                self.sessions.len() - 1
            }
        }
    }

    /// Read session `i`'s fetch response: settle acknowledgements, hand records to `f`.
    fn receive(
        &mut self,
        i: usize,
        f: &mut impl FnMut(&Acquired<'_>),
        out: &mut PollOutcome,
    ) -> Result<(), WireError> {
        let s = &mut self.sessions[i];
        let resp = match s.receive_fetch(&mut self.acks, &mut out.acks) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(()),
            Err(e) => {
                if e.kafka_code().map_or(true, |c| !session::session_lost(c)) {
                    self.meta.stale = true;
                }
                return Err(e);
            }
        };
        if resp.acquisition_lock_timeout_ms > 0 {
            self.lock_timeout_ms = resp.acquisition_lock_timeout_ms;
        }
        let mut garbled = None;
        for topic in &resp.responses {
            let Some(t) = self.meta.ids.iter().position(|id| *id == topic.topic_id) else {
                self.meta.stale = true;
                continue;
            };
            for part in &topic.partitions {
                s.settle(t, part, &mut self.acks, &mut out.acks);
                if part.error_code != 0 {
                    // NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH
                    // and the like: the leader moved or the topic changed.
                    self.meta.stale = true;
                    continue;
                }
                let data = part.records.as_deref().unwrap_or_default();
                if let Err(e) = deliver(
                    &mut self.reader,
                    t,
                    part.partition_index,
                    data,
                    &part.acquired_records,
                    &mut self.acks,
                    f,
                    &mut out.records,
                ) {
                    garbled.get_or_insert(WireError::Garbled {
                        broker: s.addr.clone(),
                        api: session::SHARE_FETCH,
                        detail: format!(
                            "{} partition {}: {e}",
                            self.cfg.topics[t], part.partition_index
                        ),
                    });
                }
            }
        }
        s.settle_unanswered(&mut self.acks, &mut out.acks);
        garbled.map_or(Ok(()), Err)
    }

    pub(crate) fn heartbeat(&mut self) -> Result<(), WireError> {
        let beat = self.group.beat(
            &self.cfg.topics,
            &self.cfg.bootstrap,
            &self.cfg.security,
            self.limits,
            &self.cfg.client_id,
        )?;
        if beat.rejoined {
            // Fenced: the broker dropped this member's sessions and acquisitions.
            for s in &mut self.sessions {
                s.drop_conn();
            }
            let mut report = AckReport::default();
            self.acks.settle_all_sending(NETWORK_EXCEPTION, &mut report);
        }
        if let Some(a) = beat.assignment {
            self.apply_assignment(a);
        }
        if self.assignment.is_empty() {
            // The coordinator assigns a newcomer within its assignment interval (1 s by
            // default), well before the next regular heartbeat (5 s or more): ask again soon.
            let soon = Instant::now() + UNASSIGNED_BEAT;
            self.group.next_beat = self.group.next_beat.min(soon);
        }
        Ok(())
    }

    fn apply_assignment(&mut self, a: Vec<(Uuid, Vec<i32>)>) {
        let mut next = Vec::new();
        for (id, parts) in &a {
            let Some(t) = self.meta.ids.iter().position(|x| x == id) else {
                // A topic id we do not know (yet): ask Metadata, then apply.
                self.meta.stale = true;
                self.unresolved = Some(a);
                return;
            };
            next.extend(parts.iter().map(|p| (t, *p)));
        }
        next.sort_unstable();
        next.dedup();
        self.unresolved = None;
        if next != self.assignment {
            self.assignment = next;
            self.changed = true;
        }
    }

    fn refresh_metadata(&mut self) -> Result<(), WireError> {
        self.meta.refreshed = Some(Instant::now());
        let conn = self.group.any_conn(
            &self.cfg.bootstrap,
            &self.cfg.security,
            self.limits,
            &self.cfg.client_id,
        )?;
        let m = admin::metadata(conn, &self.cfg.topics)?;
        self.meta.ids = Vec::with_capacity(self.cfg.topics.len());
        self.meta.leaders = Vec::with_capacity(self.cfg.topics.len());
        for t in &self.cfg.topics {
            match m.topics.get(t) {
                Some(tm) if tm.error == 0 => {
                    self.meta.ids.push(tm.id);
                    self.meta.leaders.push(tm.leaders.clone());
                }
                _ => {
                    self.meta.ids.push(Uuid::nil());
                    self.meta.leaders.push(Vec::new());
                }
            }
        }
        self.meta.brokers = m.brokers;
        self.meta.stale = false;
        if let Some(a) = self.unresolved.take() {
            self.apply_assignment(a);
        }
        Ok(())
    }

    /// A failure in poll: retried on the next polls (backing off) until failures have lasted
    /// `request_timeout`; then it is the caller's.
    fn failing(&mut self, e: WireError) -> Result<(), WireError> {
        let since = *self.failing_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= self.limits.request || !retriable(&e) {
            return Err(e);
        }
        session::backoff_sleep(Duration::from_millis(100));
        Ok(())
    }
}

/// Errors a later poll may get past: connection trouble, moving leaders, lost sessions.
fn retriable(e: &WireError) -> bool {
    if e.breaks_connection() {
        return true;
    }
    match e.kafka_code() {
        // NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE,
        // REQUEST_TIMED_OUT, NETWORK_EXCEPTION, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
        // UNKNOWN_TOPIC_ID, the share session errors, coordinator moves.
        Some(c) => matches!(
            c,
            3 | 5 | 6 | 7 | 13 | 14 | 15 | 16 | 74 | 75 | 100 | 122 | 123 | 133
        ),
        None => false,
    }
}
