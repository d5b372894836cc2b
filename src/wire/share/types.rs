//! The share consumer's configuration and what it hands out.

use std::time::Duration;

use super::super::records;
use super::super::Security;
use super::AckReport;

/// How to join and fetch.
#[derive(Debug, Clone)]
pub(crate) struct ShareConfig {
    /// "host:port" of some brokers.
    pub bootstrap: Vec<String>,
    pub group_id: String,
    pub client_id: String,
    /// The subscription.
    pub topics: Vec<String>,
    /// How long a ShareFetch may wait for records (max_wait_ms).
    pub max_wait: Duration,
    /// Records per ShareFetch (and the batch size asked for).
    pub max_records: i32,
    pub max_bytes: i32,
    pub min_bytes: i32,
    /// Bound on every request (beyond a fetch's `max_wait`), and on connecting: a dead broker
    /// is an error in bounded time.
    pub request_timeout: Duration,
    pub security: Security,
}

/// One acquired record, borrowed from the fetch response for the duration of the callback.
#[derive(Debug)]
pub(crate) struct Acquired<'a> {
    /// Index into `ShareConfig::topics`.
    pub topic: usize,
    pub partition: i32,
    pub offset: i64,
    /// 1 on first delivery; more after a release or an expired acquisition lock.
    pub delivery_count: i16,
    /// The record's own time (create or log-append): kafkabench reads its stamp instead.
    #[allow(dead_code)]
    pub timestamp_ms: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub(super) headers: &'a [u8],
}

impl<'a> Acquired<'a> {
    /// The value of the record's first header named `name` (None also for a null value).
    pub(crate) fn header(&self, name: &[u8]) -> Option<&'a [u8]> {
        records::header(self.headers, name)
    }
}

/// What one poll did.
#[derive(Debug, Clone, Default)]
pub(crate) struct PollOutcome {
    /// Records handed to the callback.
    pub records: usize,
    /// The acknowledgements this poll's fetches carried, settled.
    pub acks: AckReport,
    /// The partitions assigned changed since the previous poll.
    pub assignment_changed: bool,
}
