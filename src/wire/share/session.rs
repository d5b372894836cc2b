//! A share session: this member's fetch state on one partition leader (KIP-932). Epoch 0 opens
//! it with every partition wanted there; each later ShareFetch or ShareAcknowledge carries the
//! next epoch and only what changed (partitions added or forgotten, acknowledgements).

use std::time::Duration;

use kafka_protocol::messages::share_acknowledge_request::{AcknowledgePartition, AcknowledgeTopic};
use kafka_protocol::messages::share_fetch_request::{FetchPartition, FetchTopic, ForgottenTopic};
use kafka_protocol::messages::share_fetch_response::PartitionData;
use kafka_protocol::messages::{
    ApiKey, GroupId, ShareAcknowledgeRequest, ShareFetchRequest, ShareFetchResponse,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::super::conn::{Conn, Limits, Sent};
use super::super::WireError;
use super::acks::{self, AckReport, Acks};
use super::ShareConfig;

pub(super) const SHARE_FETCH: i16 = ApiKey::ShareFetch as i16;
pub(super) const SHARE_ACK: i16 = ApiKey::ShareAcknowledge as i16;
/// NETWORK_EXCEPTION: what an acknowledgement lost with its connection is refused with.
pub(crate) const NETWORK_EXCEPTION: i16 = 13;

/// Errors after which the broker has no session for us any more: open a new one.
pub(super) fn session_lost(code: i16) -> bool {
    matches!(code, 122 | 123 | 133)
}

/// What every request of a session needs from the consumer.
pub(super) struct Ctx<'a> {
    pub cfg: &'a ShareConfig,
    pub limits: Limits,
    pub member_id: &'a str,
    /// Topic ids by topic index.
    pub ids: &'a [Uuid],
}

pub(super) struct Session {
    pub node: i32,
    pub addr: String,
    conn: Option<Conn>,
    /// The epoch the next request carries: 0 opens a session.
    pub epoch: i32,
    /// The partitions in the broker's session.
    pub parts: Vec<(usize, i32)>,
    /// Partitions whose acknowledgements ride the request in flight.
    acked: Vec<(usize, i32)>,
    inflight: Option<Sent<ShareFetchRequest>>,
}

fn next_epoch(e: i32) -> i32 {
    if e == i32::MAX {
        1
    } else {
        e + 1
    }
}

impl Session {
    pub(super) fn new(node: i32, addr: String) -> Session {
        Session {
            node,
            addr,
            conn: None,
            epoch: 0,
            parts: Vec::new(),
            acked: Vec::new(),
            inflight: None,
        }
    }

    fn conn(&mut self, cfg: &ShareConfig, limits: Limits) -> Result<&mut Conn, WireError> {
        if self.conn.as_ref().is_some_and(Conn::is_broken) {
            self.drop_conn();
        }
        let c = match self.conn.take() {
            Some(c) => c,
            None => Conn::connect(&self.addr, &cfg.security, limits, &cfg.client_id)?,
        };
        Ok(self.conn.insert(c))
    }

    /// The connection is gone, and the broker's session with it (it is bound to the
    /// connection): the next request opens a new one.
    pub(super) fn drop_conn(&mut self) {
        self.conn = None;
        self.epoch = 0;
        self.parts.clear();
        self.inflight = None;
    }

    pub(super) fn is_open(&self) -> bool {
        self.epoch > 0 && self.conn.is_some()
    }

    /// Whether a ShareFetch to this leader has something to do.
    pub(super) fn wants_fetch(&self, want: &[(usize, i32)]) -> bool {
        !want.is_empty() || (!self.parts.is_empty() && self.epoch > 0)
    }

    /// Write a ShareFetch for `want` (this leader's assigned partitions), with the queued
    /// acknowledgements of those partitions unless the session is being opened.
    pub(super) fn send_fetch(
        &mut self,
        cx: &Ctx<'_>,
        want: &[(usize, i32)],
        acks: &mut Acks,
        report: &mut AckReport,
    ) -> Result<(), WireError> {
        let (cfg, limits, member_id, ids) = (cx.cfg, cx.limits, cx.member_id, cx.ids);
        self.acked.clear();
        let mut topics: Vec<FetchTopic> = Vec::new();
        let mut forgotten: Vec<ForgottenTopic> = Vec::new();
        let opening = self.epoch == 0;
        if opening {
            self.parts = want.to_vec();
        }
        for &(t, p) in want {
            let added = opening || !self.parts.contains(&(t, p));
            let batches = if !opening && acks.has_queued(t, p) {
                self.acked.push((t, p));
                acks::fetch_batches(&acks.take_batches(t, p, report))
            } else {
                Vec::new()
            };
            if added || !batches.is_empty() {
                let part = FetchPartition::default()
                    .with_partition_index(p)
                    .with_acknowledgement_batches(batches);
                match topics.iter_mut().find(|ft| ft.topic_id == ids[t]) {
                    Some(ft) => ft.partitions.push(part),
                    None => topics.push(
                        FetchTopic::default()
                            .with_topic_id(ids[t])
                            .with_partitions(vec![part]),
                    ),
                }
            }
        }
        if !opening {
            for &(t, p) in &self.parts {
                if want.contains(&(t, p)) {
                    continue;
                }
                match forgotten.iter_mut().find(|f| f.topic_id == ids[t]) {
                    Some(f) => f.partitions.push(p),
                    None => forgotten.push(
                        ForgottenTopic::default()
                            .with_topic_id(ids[t])
                            .with_partitions(vec![p]),
                    ),
                }
            }
            self.parts.retain(|tp| want.contains(tp));
            for tp in want {
                if !self.parts.contains(tp) {
                    self.parts.push(*tp);
                }
            }
        }
        let req = ShareFetchRequest::default()
            .with_group_id(Some(GroupId(StrBytes::from_string(cfg.group_id.clone()))))
            .with_member_id(Some(StrBytes::from_string(member_id.to_string())))
            .with_share_session_epoch(self.epoch)
            .with_max_wait_ms(cfg.max_wait.as_millis().min(i32::MAX as u128) as i32)
            .with_min_bytes(cfg.min_bytes)
            .with_max_bytes(cfg.max_bytes)
            .with_max_records(cfg.max_records)
            .with_batch_size(cfg.max_records)
            .with_topics(topics)
            .with_forgotten_topics_data(forgotten);
        let hold = cfg.max_wait;
        let sent = (|| {
            let conn = self.conn(cfg, limits)?;
            let v = conn.version_within::<ShareFetchRequest>(1, 1)?;
            conn.send(v, &req, hold)
        })();
        match sent {
            Ok(s) => {
                self.inflight = Some(s);
                Ok(())
            }
            Err(e) => {
                self.fail_acked(acks, NETWORK_EXCEPTION, report);
                self.drop_conn();
                Err(e)
            }
        }
    }

    /// Read the ShareFetch response written by `send_fetch`. The session's epoch moves on;
    /// a lost session is opened again on the next fetch. Acknowledgements that rode the
    /// request are settled into `report`.
    pub(super) fn receive_fetch(
        &mut self,
        acks: &mut Acks,
        report: &mut AckReport,
    ) -> Result<Option<ShareFetchResponse>, WireError> {
        let Some(sent) = self.inflight.take() else {
            return Ok(None);
        };
        let Some(conn) = self.conn.as_mut() else {
            return Ok(None);
        };
        let resp = match conn.receive(sent) {
            Ok(r) => r,
            Err(e) => {
                self.fail_acked(acks, NETWORK_EXCEPTION, report);
                self.drop_conn();
                return Err(e);
            }
        };
        if resp.error_code != 0 {
            let e = conn.kafka_err(
                SHARE_FETCH,
                resp.error_code,
                resp.error_message.as_ref(),
                "",
            );
            self.fail_acked(acks, resp.error_code, report);
            if session_lost(resp.error_code) {
                self.epoch = 0;
                self.parts.clear();
            } else {
                self.epoch = next_epoch(self.epoch);
            }
            return Err(e);
        }
        self.epoch = next_epoch(self.epoch);
        Ok(Some(resp))
    }

    /// Settle the acknowledgements of partition `(t, p)` as the response says.
    pub(super) fn settle(
        &mut self,
        t: usize,
        part: &PartitionData,
        acks: &mut Acks,
        report: &mut AckReport,
    ) {
        let tp = (t, part.partition_index);
        if let Some(i) = self.acked.iter().position(|x| *x == tp) {
            self.acked.swap_remove(i);
            acks.settle(t, part.partition_index, part.acknowledge_error_code, report);
        }
    }

    /// Acknowledgements in the last request that no partition of the response answered for.
    pub(super) fn settle_unanswered(&mut self, acks: &mut Acks, report: &mut AckReport) {
        // UNKNOWN_SERVER_ERROR: the broker said nothing about them.
        self.fail_acked(acks, -1, report);
    }

    fn fail_acked(&mut self, acks: &mut Acks, code: i16, report: &mut AckReport) {
        for (t, p) in self.acked.drain(..) {
            acks.settle(t, p, code, report);
        }
    }

    /// Send the queued acknowledgements of `parts` now (ShareAcknowledge), on this open
    /// session; `close` also ends the session (epoch -1). Returns per-offset results.
    pub(super) fn acknowledge(
        &mut self,
        cx: &Ctx<'_>,
        parts: &[(usize, i32)],
        close: bool,
        acks: &mut Acks,
        report: &mut AckReport,
    ) -> Result<(), WireError> {
        let (cfg, limits, member_id, ids) = (cx.cfg, cx.limits, cx.member_id, cx.ids);
        self.acked.clear();
        let mut topics: Vec<AcknowledgeTopic> = Vec::new();
        for &(t, p) in parts {
            if !acks.has_queued(t, p) {
                continue;
            }
            self.acked.push((t, p));
            let part = AcknowledgePartition::default()
                .with_partition_index(p)
                .with_acknowledgement_batches(acks::ack_batches(&acks.take_batches(t, p, report)));
            match topics.iter_mut().find(|at| at.topic_id == ids[t]) {
                Some(at) => at.partitions.push(part),
                None => topics.push(
                    AcknowledgeTopic::default()
                        .with_topic_id(ids[t])
                        .with_partitions(vec![part]),
                ),
            }
        }
        if topics.is_empty() && !close {
            return Ok(());
        }
        let epoch = if close { -1 } else { self.epoch };
        let req = ShareAcknowledgeRequest::default()
            .with_group_id(Some(GroupId(StrBytes::from_string(cfg.group_id.clone()))))
            .with_member_id(Some(StrBytes::from_string(member_id.to_string())))
            .with_share_session_epoch(epoch)
            .with_topics(topics);
        let sent = (|| {
            let conn = self.conn(cfg, limits)?;
            let v = conn.version_within::<ShareAcknowledgeRequest>(1, 1)?;
            conn.request_v(v, &req)
        })();
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                self.fail_acked(acks, NETWORK_EXCEPTION, report);
                self.drop_conn();
                return Err(e);
            }
        };
        if resp.error_code != 0 {
            let e = WireError::Kafka {
                broker: self.addr.clone(),
                api: SHARE_ACK,
                code: resp.error_code,
                message: resp.error_message.as_ref().map(|m| m.to_string()),
                context: String::new(),
            };
            self.fail_acked(acks, resp.error_code, report);
            if session_lost(resp.error_code) || close {
                self.epoch = 0;
                self.parts.clear();
            } else {
                self.epoch = next_epoch(self.epoch);
            }
            return Err(e);
        }
        if close {
            self.epoch = 0;
            self.parts.clear();
        } else {
            self.epoch = next_epoch(self.epoch);
        }
        for topic in &resp.responses {
            let Some(t) = ids.iter().position(|id| *id == topic.topic_id) else {
                continue;
            };
            for part in &topic.partitions {
                let tp = (t, part.partition_index);
                if let Some(i) = self.acked.iter().position(|x| *x == tp) {
                    self.acked.swap_remove(i);
                    acks.settle(t, part.partition_index, part.error_code, report);
                }
            }
        }
        self.settle_unanswered(acks, report);
        Ok(())
    }
}

/// Sleep helper shared by the consumer's back-offs.
pub(super) fn backoff_sleep(d: Duration) {
    if !d.is_zero() {
        std::thread::sleep(d);
    }
}
