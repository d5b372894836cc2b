//! The consumer's read path on librdkafka's C API.
//!
//! rust-rdkafka creates and configures the client (and asks librdkafka for rebalances,
//! statistics and errors as events on the consumer queue); reading happens here. Its
//! `BaseConsumer::poll` allocates an `Arc` per record, and its header access walks the whole
//! list in Rust; at a million records a second both showed in the verification consumer's
//! profile (bench/README.md, "verification consumer"). Here the consumer queue is polled
//! directly, as `rdkafka_performance -C -G` does with `rd_kafka_consumer_poll`: one event per
//! record, its stamp found with `rd_kafka_header_get_last`, nothing allocated on kafkabench's
//! side. Rebalance events are answered here too (assign or unassign, eager or cooperative), so
//! one thread owns the client and its group membership.

use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::raw::c_void;
use std::ptr;

use rdkafka::bindings as rd;
use rdkafka::consumer::{BaseConsumer, Consumer as _, ConsumerContext};
use rdkafka::types::RDKafkaErrorCode;

/// A consumer's native handles, valid while the rust-rdkafka consumer they came from lives.
pub struct Consumer<'c> {
    rk: *mut rd::rd_kafka_t,
    queue: *mut rd::rd_kafka_queue_t,
    _consumer: PhantomData<&'c ()>,
}

impl<'c> Consumer<'c> {
    /// The consumer queue (rust-rdkafka forwards the main queue to it when a `group.id` is
    /// set, so statistics and errors arrive on it too); the main queue without a group.
    pub fn new<C: ConsumerContext>(consumer: &'c BaseConsumer<C>) -> Consumer<'c> {
        let rk = consumer.client().native_ptr();
        // SAFETY: rk is a live consumer handle (borrowed for 'c); both calls return a new
        // reference (or null), released in Drop.
        let queue = unsafe {
            let q = rd::rd_kafka_queue_get_consumer(rk);
            if q.is_null() {
                rd::rd_kafka_queue_get_main(rk)
            } else {
                q
            }
        };
        Consumer {
            rk,
            queue,
            _consumer: PhantomData,
        }
    }

    /// The next event (a record, a rebalance, statistics, an error), waiting at most
    /// `timeout_ms` for one.
    #[inline]
    pub fn next_event(&self, timeout_ms: i32) -> Option<Event> {
        // SAFETY: queue is live; a non-null event is ours to destroy (Event's Drop).
        let ev = unsafe { rd::rd_kafka_queue_poll(self.queue, timeout_ms) };
        (!ev.is_null()).then_some(Event { ptr: ev })
    }

    /// A partition's high watermark as of its last fetch response (librdkafka's cached
    /// value: no request); None before any response.
    pub fn cached_end(&self, topic: &str, partition: i32) -> Option<i64> {
        let topic = CString::new(topic).ok()?;
        let (mut low, mut high) = (-1i64, -1i64);
        // SAFETY: rk is live; topic is NUL-terminated; the two outputs are written or left.
        let err = unsafe {
            rd::rd_kafka_get_watermark_offsets(
                self.rk,
                topic.as_ptr(),
                partition,
                &mut low,
                &mut high,
            )
        };
        (err == rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR && high >= 0).then_some(high)
    }

    /// Answers a rebalance event: takes the partitions it assigns, or gives up those it
    /// revokes, incrementally under the cooperative protocol. Returns the partitions, and
    /// whether they are a change to the assignment (cooperative) rather than all of it.
    pub fn answer(&self, ev: &Event, assign: bool) -> Result<(Vec<(String, i32)>, bool), String> {
        // SAFETY: ev is a live rebalance event; its list is owned by the event, borrowed here.
        let tpl = unsafe { rd::rd_kafka_event_topic_partition_list(ev.ptr) };
        let parts = partitions(tpl);
        // SAFETY: rk is live; the protocol name is a static string.
        let cooperative = unsafe {
            let p = rd::rd_kafka_rebalance_protocol(self.rk);
            !p.is_null() && CStr::from_ptr(p).to_bytes() == b"COOPERATIVE"
        };
        // SAFETY: rk is live; the calls copy the list. The returned error objects are ours.
        unsafe {
            if cooperative {
                let e = if assign {
                    rd::rd_kafka_incremental_assign(self.rk, tpl)
                } else {
                    rd::rd_kafka_incremental_unassign(self.rk, tpl)
                };
                if !e.is_null() {
                    let msg = CStr::from_ptr(rd::rd_kafka_error_string(e))
                        .to_string_lossy()
                        .into_owned();
                    rd::rd_kafka_error_destroy(e);
                    return Err(msg);
                }
            } else {
                let err = rd::rd_kafka_assign(self.rk, if assign { tpl } else { ptr::null() });
                if err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                    return Err(RDKafkaErrorCode::from(err).to_string());
                }
            }
        }
        Ok((parts, cooperative))
    }

    /// The group generation this member is in (librdkafka's, from its last JoinGroup
    /// response); None outside a group. Read at an assignment, it names the rebalance the
    /// assignment ends: members of one group see the same number for the same rebalance.
    pub fn generation(&self) -> Option<i32> {
        // SAFETY: rk is live; the metadata returned is a copy, ours to destroy.
        unsafe {
            let md = rd::rd_kafka_consumer_group_metadata(self.rk);
            if md.is_null() {
                return None;
            }
            let g = rd::rd_kafka_consumer_group_metadata_generation_id(md);
            rd::rd_kafka_consumer_group_metadata_destroy(md);
            (g >= 0).then_some(g)
        }
    }
}

impl Drop for Consumer<'_> {
    fn drop(&mut self) {
        // SAFETY: taken in new(), released once, before the consumer ('c).
        unsafe { rd::rd_kafka_queue_destroy(self.queue) }
    }
}

/// The (topic, partition) pairs of a native list.
fn partitions(tpl: *const rd::rd_kafka_topic_partition_list_t) -> Vec<(String, i32)> {
    if tpl.is_null() {
        return Vec::new();
    }
    // SAFETY: a live list: `cnt` elements, each with a NUL-terminated topic name.
    unsafe {
        let l = &*tpl;
        (0..l.cnt as usize)
            .map(|i| {
                let e = &*l.elems.add(i);
                (
                    CStr::from_ptr(e.topic).to_string_lossy().into_owned(),
                    e.partition,
                )
            })
            .collect()
    }
}

/// One event taken from the consumer queue.
pub struct Event {
    ptr: *mut rd::rd_kafka_event_t,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A record (or a consumer error carried as one).
    Fetch,
    /// Partitions assigned (true) or revoked (false).
    Rebalance(bool),
    Stats,
    Error,
    Other,
}

impl Event {
    #[inline]
    pub fn kind(&self) -> EventKind {
        // SAFETY: ptr is a live event.
        match unsafe { rd::rd_kafka_event_type(self.ptr) } {
            rd::RD_KAFKA_EVENT_FETCH => EventKind::Fetch,
            rd::RD_KAFKA_EVENT_REBALANCE => EventKind::Rebalance(
                // SAFETY: as above.
                unsafe { rd::rd_kafka_event_error(self.ptr) }
                    == rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS,
            ),
            rd::RD_KAFKA_EVENT_STATS => EventKind::Stats,
            rd::RD_KAFKA_EVENT_ERROR => EventKind::Error,
            _ => EventKind::Other,
        }
    }

    /// The record of a Fetch event.
    #[inline]
    pub fn message(&self) -> Option<Message<'_>> {
        // SAFETY: the event is live; its message lives as long as it does.
        let m = unsafe { rd::rd_kafka_event_message_next(self.ptr) };
        (!m.is_null()).then_some(Message {
            m,
            _ev: PhantomData,
        })
    }

    /// The JSON document of a Stats event.
    pub fn stats_json(&self) -> Option<&str> {
        // SAFETY: for a stats event librdkafka returns a NUL-terminated string owned by the
        // event, which outlives the borrow.
        let p = unsafe { rd::rd_kafka_event_stats(self.ptr) };
        if p.is_null() {
            return None;
        }
        unsafe { CStr::from_ptr(p) }.to_str().ok()
    }

    /// The error of an Error event, with librdkafka's explanation, and whether it is fatal.
    pub fn error(&self) -> (RDKafkaErrorCode, String, bool) {
        // SAFETY: ptr is a live event; the string is owned by it.
        unsafe {
            let code = RDKafkaErrorCode::from(rd::rd_kafka_event_error(self.ptr));
            let s = rd::rd_kafka_event_error_string(self.ptr);
            let reason = if s.is_null() {
                String::new()
            } else {
                CStr::from_ptr(s).to_string_lossy().into_owned()
            };
            (
                code,
                reason,
                rd::rd_kafka_event_error_is_fatal(self.ptr) != 0,
            )
        }
    }

    /// The partition an Error event is about (a partition read to its end), as topic name
    /// bytes and partition, handed to `f`.
    pub fn with_partition<T>(&self, f: impl FnOnce(&[u8], i32) -> T) -> Option<T> {
        // SAFETY: a new copy (or null), destroyed below; its topic is NUL-terminated.
        unsafe {
            let tp = rd::rd_kafka_event_topic_partition(self.ptr);
            if tp.is_null() {
                return None;
            }
            let out = f(CStr::from_ptr((*tp).topic).to_bytes(), (*tp).partition);
            rd::rd_kafka_topic_partition_destroy(tp);
            Some(out)
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: taken from rd_kafka_queue_poll, destroyed once.
        unsafe { rd::rd_kafka_event_destroy(self.ptr) }
    }
}

/// Whether an error code is librdkafka's "partition read to its end" (`enable.partition.eof`).
pub fn is_partition_eof(code: RDKafkaErrorCode) -> bool {
    code == RDKafkaErrorCode::PartitionEOF
}

/// One record read.
pub struct Message<'e> {
    m: *const rd::rd_kafka_message_t,
    _ev: PhantomData<&'e Event>,
}

impl Message<'_> {
    /// A consumer error carried as a record (a partition's end, a fetch error).
    #[inline]
    pub fn error(&self) -> Option<RDKafkaErrorCode> {
        // SAFETY: m points into a live event (lifetime 'e).
        super::error::of_message(unsafe { (*self.m).err })
    }

    #[inline]
    pub fn partition(&self) -> i32 {
        // SAFETY: as above.
        unsafe { (*self.m).partition }
    }

    #[inline]
    pub fn offset(&self) -> i64 {
        // SAFETY: as above.
        unsafe { (*self.m).offset }
    }

    /// Key and value bytes.
    #[inline]
    pub fn key_value_bytes(&self) -> u64 {
        // SAFETY: as above.
        unsafe { ((*self.m).len + (*self.m).key_len) as u64 }
    }

    /// The record's topic handle, as an identity: the same topic gives the same value for the
    /// client's lifetime, so callers map it to their own index without comparing names.
    #[inline]
    pub fn topic_id(&self) -> usize {
        // SAFETY: as above.
        unsafe { (*self.m).rkt as usize }
    }

    /// The record's topic name (for the first record of a topic handle; then `topic_id`).
    pub fn topic_name(&self) -> &[u8] {
        // SAFETY: the topic handle lives as long as the message; its name is NUL-terminated.
        unsafe {
            let rkt = (*self.m).rkt;
            if rkt.is_null() {
                return &[];
            }
            CStr::from_ptr(rd::rd_kafka_topic_name(rkt)).to_bytes()
        }
    }

    /// The value of the record's last header named `name`, without copying.
    #[inline]
    pub fn header(&self, name: &CStr) -> Option<&[u8]> {
        let mut hdrs: *mut rd::rd_kafka_headers_t = ptr::null_mut();
        let (mut value, mut size): (*const c_void, usize) = (ptr::null(), 0);
        let ok = rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR;
        // SAFETY: as above; the header list and its values live as long as the message.
        unsafe {
            if rd::rd_kafka_message_headers(self.m, &mut hdrs) != ok
                || rd::rd_kafka_header_get_last(hdrs, name.as_ptr(), &mut value, &mut size) != ok
                || value.is_null()
            {
                return None;
            }
            Some(std::slice::from_raw_parts(value.cast::<u8>(), size))
        }
    }
}
