//! The producer's hot path on librdkafka's C API.
//!
//! rust-rdkafka creates and configures the client; sending and serving its events happen here.
//! Its `BaseProducer::send` builds a `CString` of the topic name for every record and makes
//! librdkafka look the topic up by name, and its `poll` clones an `Arc` per delivery report and
//! keeps polling until the timeout even after events arrived. At a million records a second
//! these showed up in profiles (bench/README.md). Here a topic handle is created once (as
//! librdkafka's rdkafka_performance does) and delivery reports are read straight from the
//! event, with one clock read per event: every record in it was acknowledged by the same
//! response.

use std::ffi::CString;
use std::marker::PhantomData;
use std::os::raw::c_void;
use std::ptr;

use rdkafka::bindings as rd;
use rdkafka::bindings::rd_kafka_vtype_t::*;
use rdkafka::producer::{BaseProducer, Producer as _, ProducerContext};
use rdkafka::types::RDKafkaErrorCode;

/// The producer's native handles: a topic handle and its main event queue, valid while the
/// rust-rdkafka producer they came from lives.
pub(crate) struct Producer<'p> {
    rk: *mut rd::rd_kafka_t,
    /// The topic records go to: one of `rkts`.
    rkt: *mut rd::rd_kafka_topic_t,
    /// Every topic handle, each created once: the first topic's, then the others of a run
    /// over several topics (`add_topic`), in order.
    rkts: Vec<*mut rd::rd_kafka_topic_t>,
    /// The partition of the next records; RD_KAFKA_PARTITION_UA (-1): the configured
    /// partitioner decides, as it does unless a shard chooses among its own.
    partition: i32,
    queue: *mut rd::rd_kafka_queue_t,
    _producer: PhantomData<&'p ()>,
}

impl<'p> Producer<'p> {
    pub(crate) fn new<C: ProducerContext>(
        producer: &'p BaseProducer<C>,
        name: &str,
    ) -> Result<Self, String> {
        let rk = producer.client().native_ptr();
        let cname = CString::new(name).map_err(|_| format!("topic name {name:?} contains NUL"))?;
        // SAFETY: rk is a live producer handle (borrowed for 'p); a null conf means the
        // producer's default topic configuration.
        let rkt = unsafe { rd::rd_kafka_topic_new(rk, cname.as_ptr(), ptr::null_mut()) };
        if rkt.is_null() {
            return Err(format!("librdkafka refused topic {name:?}"));
        }
        // SAFETY: rk is live; the returned reference is released in Drop.
        let queue = unsafe { rd::rd_kafka_queue_get_main(rk) };
        Ok(Producer {
            rk,
            rkt,
            rkts: vec![rkt],
            partition: -1,
            queue,
            _producer: PhantomData,
        })
    }

    /// A handle for one more topic (the next index); records still go to the selected one.
    pub(crate) fn add_topic(&mut self, name: &str) -> Result<(), String> {
        let cname = CString::new(name).map_err(|_| format!("topic name {name:?} contains NUL"))?;
        // SAFETY: as in `new`; the handle is released in Drop.
        let rkt = unsafe { rd::rd_kafka_topic_new(self.rk, cname.as_ptr(), ptr::null_mut()) };
        if rkt.is_null() {
            return Err(format!("librdkafka refused topic {name:?}"));
        }
        self.rkts.push(rkt);
        Ok(())
    }

    /// Sends the next records to topic `i` (in the order the topics were added; 0 is the
    /// first): a handle swap, no lookup by name.
    #[inline]
    pub(crate) fn select(&mut self, i: usize) {
        self.rkt = self.rkts[i];
    }

    /// Sends the next records to partition `p` of the selected topic.
    #[inline]
    pub(crate) fn set_partition(&mut self, p: i32) {
        self.partition = p;
    }

    /// Which topic a delivered record went to, as an index of `select`; `hint` is tried
    /// first (the records of one delivery event usually share their topic).
    #[inline]
    pub(crate) fn topic_of(&self, d: &Delivery, hint: usize) -> Option<usize> {
        // SAFETY: d points into a live event; rkt is the handle the record was produced with.
        let rkt = unsafe { (*d.m).rkt };
        if self.rkts.get(hint) == Some(&rkt) {
            return Some(hint);
        }
        self.rkts.iter().position(|&t| t == rkt)
    }

    /// The next event on the main queue (delivery reports, statistics, errors), waiting at most
    /// `timeout_ms` for one.
    #[inline]
    pub(crate) fn next_event(&self, timeout_ms: i32) -> Option<Event> {
        // SAFETY: queue is live; a non-null event is ours to destroy (Event's Drop).
        let ev = unsafe { rd::rd_kafka_queue_poll(self.queue, timeout_ms) };
        (!ev.is_null()).then_some(Event { ptr: ev })
    }

    /// Records not yet delivered or failed, including reports not yet served.
    pub(crate) fn outq_len(&self) -> i32 {
        // SAFETY: rk is live.
        unsafe { rd::rd_kafka_outq_len(self.rk) }
    }

    /// Fails every record still queued or in flight (each gets a Purge* delivery report): for
    /// a cluster that is gone, where waiting would only run into `message.timeout.ms`.
    pub(crate) fn purge(&self) {
        // SAFETY: rk is live; purging without blocking is allowed from any thread.
        unsafe {
            rd::rd_kafka_purge(
                self.rk,
                rd::RD_KAFKA_PURGE_F_QUEUE | rd::RD_KAFKA_PURGE_F_INFLIGHT,
            );
        }
    }

    /// Sends lingering batches now instead of when their timer fires (the start of a flush;
    /// the caller serves events until `outq_len` is 0).
    pub(crate) fn begin_flush(&self) {
        // SAFETY: rk is live; with a zero timeout this only wakes the broker threads.
        unsafe {
            rd::rd_kafka_flush(self.rk, 0);
        }
    }

    /// Enqueues one record (librdkafka copies value, key and header bytes). `opaque` comes back
    /// in the delivery report. On failure the headers are handed back so a retry after
    /// `QueueFull` sends the same record.
    #[inline]
    pub(crate) fn produce(
        &self,
        value: &[u8],
        key: Option<&[u8]>,
        opaque: usize,
        headers: Option<Headers>,
    ) -> Result<(), (RDKafkaErrorCode, Option<Headers>)> {
        // SAFETY: with RD_KAFKA_MSG_F_COPY librdkafka keeps no reference to `value`.
        unsafe { self.produce_flags(rd::RD_KAFKA_MSG_F_COPY, Some(value), key, opaque, headers) }
    }

    /// Enqueues a tombstone: `key` with a null value (not an empty one), which deletes the key
    /// from a compacted topic.
    #[inline]
    pub(crate) fn produce_tombstone(
        &self,
        key: Option<&[u8]>,
        opaque: usize,
        headers: Option<Headers>,
    ) -> Result<(), (RDKafkaErrorCode, Option<Headers>)> {
        // SAFETY: no value to keep alive; the key is copied.
        unsafe { self.produce_flags(rd::RD_KAFKA_MSG_F_COPY, None, key, opaque, headers) }
    }

    /// Like `produce`, but librdkafka references `value` instead of copying it (as
    /// rdkafka_performance does): no allocation or copy of the payload per record.
    ///
    /// # Safety
    /// `value` must stay valid and unchanged until the rust-rdkafka producer is destroyed
    /// (queued and in-flight records point into it until then).
    #[inline]
    pub(crate) unsafe fn produce_shared(
        &self,
        value: &[u8],
        key: Option<&[u8]>,
        opaque: usize,
        headers: Option<Headers>,
    ) -> Result<(), (RDKafkaErrorCode, Option<Headers>)> {
        // SAFETY: the caller keeps `value` alive and unchanged (see above).
        unsafe { self.produce_flags(0, Some(value), key, opaque, headers) }
    }

    #[inline]
    unsafe fn produce_flags(
        &self,
        msgflags: i32,
        value: Option<&[u8]>,
        key: Option<&[u8]>,
        opaque: usize,
        headers: Option<Headers>,
    ) -> Result<(), (RDKafkaErrorCode, Option<Headers>)> {
        let (kp, kl) = key.map_or((ptr::null(), 0), |k| (k.as_ptr(), k.len()));
        // None is a null value (a tombstone), which librdkafka tells apart from an empty one.
        let (vp, vl) = value.map_or((ptr::null(), 0), |v| (v.as_ptr(), v.len()));
        let Some(h) = headers else {
            // No headers: the classic call, which skips producev's argument parsing (7 % of
            // the send thread's time in a profile at 100 B records).
            // SAFETY: rkt belongs to rk; key copied, value as `msgflags` says (see callers).
            let rc = unsafe {
                rd::rd_kafka_produce(
                    self.rkt,
                    self.partition,
                    msgflags,
                    vp as *mut c_void,
                    vl,
                    kp as *const c_void,
                    kl,
                    opaque as *mut c_void,
                )
            };
            return if rc == 0 {
                Ok(())
            } else {
                // SAFETY: reads this thread's last librdkafka error, set by the failed call.
                Err((
                    RDKafkaErrorCode::from(unsafe { rd::rd_kafka_last_error() }),
                    None,
                ))
            };
        };
        let hp = h.ptr;
        // SAFETY: the vtype list matches librdkafka's rd_kafka_producev contract (each tag
        // followed by its arguments, END last); the key is always copied and the value as
        // `msgflags` says (the callers' contracts); rkt belongs to rk. librdkafka takes the
        // headers only on success.
        let err = unsafe {
            rd::rd_kafka_producev(
                self.rk,
                RD_KAFKA_VTYPE_RKT,
                self.rkt,
                RD_KAFKA_VTYPE_PARTITION,
                self.partition,
                RD_KAFKA_VTYPE_MSGFLAGS,
                msgflags,
                RD_KAFKA_VTYPE_VALUE,
                vp as *mut c_void,
                vl,
                RD_KAFKA_VTYPE_KEY,
                kp as *const c_void,
                kl,
                RD_KAFKA_VTYPE_OPAQUE,
                opaque as *mut c_void,
                RD_KAFKA_VTYPE_HEADERS,
                hp,
                RD_KAFKA_VTYPE_END,
            )
        };
        if err == rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            std::mem::forget(h); // owned by the message now
            Ok(())
        } else {
            Err((RDKafkaErrorCode::from(err), Some(h)))
        }
    }
}

/// A failed transaction call, as librdkafka classified it.
#[derive(Debug)]
pub(crate) struct TxnError {
    pub code: RDKafkaErrorCode,
    pub message: String,
    /// The producer cannot go on (fenced by a newer instance with the same transactional.id).
    pub fatal: bool,
    /// The call timed out while its work goes on: calling it again resumes it.
    pub retriable: bool,
    /// The transaction must be aborted before another can begin.
    pub requires_abort: bool,
}

impl std::fmt::Display for TxnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

/// The transaction calls (librdkafka's transactional producer API). Each blocks at most
/// `timeout_ms`; a timeout is retriable and the same call resumes the work.
impl Producer<'_> {
    pub(crate) fn init_transactions(&self, timeout_ms: i32) -> Result<(), TxnError> {
        // SAFETY: rk is live; the error, if any, is ours to destroy (txn_result).
        txn_result(unsafe { rd::rd_kafka_init_transactions(self.rk, timeout_ms) })
    }

    pub(crate) fn begin_transaction(&self) -> Result<(), TxnError> {
        // SAFETY: as above.
        txn_result(unsafe { rd::rd_kafka_begin_transaction(self.rk) })
    }

    /// Commits the open transaction. librdkafka flushes first, but with delivery reports as
    /// events it does not serve them, so the caller drains its queue before calling this.
    pub(crate) fn commit_transaction(&self, timeout_ms: i32) -> Result<(), TxnError> {
        // SAFETY: as above.
        txn_result(unsafe { rd::rd_kafka_commit_transaction(self.rk, timeout_ms) })
    }

    /// Aborts the open transaction (what is still queued is purged).
    pub(crate) fn abort_transaction(&self, timeout_ms: i32) -> Result<(), TxnError> {
        // SAFETY: as above.
        txn_result(unsafe { rd::rd_kafka_abort_transaction(self.rk, timeout_ms) })
    }
}

/// A transaction call's result: null is success; an error object is read and destroyed.
fn txn_result(e: *mut rd::rd_kafka_error_t) -> Result<(), TxnError> {
    if e.is_null() {
        return Ok(());
    }
    // SAFETY: e is a live error object returned to us; its string lives until it is destroyed,
    // which happens once, after everything was copied out of it.
    unsafe {
        let s = rd::rd_kafka_error_string(e);
        let message = if s.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
        };
        let err = TxnError {
            code: RDKafkaErrorCode::from(rd::rd_kafka_error_code(e)),
            message,
            fatal: rd::rd_kafka_error_is_fatal(e) != 0,
            retriable: rd::rd_kafka_error_is_retriable(e) != 0,
            requires_abort: rd::rd_kafka_error_txn_requires_abort(e) != 0,
        };
        rd::rd_kafka_error_destroy(e);
        Err(err)
    }
}

impl Drop for Producer<'_> {
    fn drop(&mut self) {
        // SAFETY: all were created in new() or add_topic() and are released once, before the
        // producer ('p).
        unsafe {
            rd::rd_kafka_queue_destroy(self.queue);
            for &rkt in &self.rkts {
                rd::rd_kafka_topic_destroy(rkt);
            }
        }
    }
}

/// One event taken from the main queue.
pub(crate) struct Event {
    ptr: *mut rd::rd_kafka_event_t,
}

pub(crate) enum EventKind {
    Delivery,
    Stats,
    Error,
    Other,
}

impl Event {
    pub(crate) fn kind(&self) -> EventKind {
        // SAFETY: ptr is a live event.
        match unsafe { rd::rd_kafka_event_type(self.ptr) } {
            rd::RD_KAFKA_EVENT_DR => EventKind::Delivery,
            rd::RD_KAFKA_EVENT_STATS => EventKind::Stats,
            rd::RD_KAFKA_EVENT_ERROR => EventKind::Error,
            _ => EventKind::Other,
        }
    }

    /// The delivery reports of a Delivery event.
    pub(crate) fn deliveries(&self) -> Deliveries<'_> {
        Deliveries { ev: self }
    }

    /// The JSON document of a Stats event.
    pub(crate) fn stats_json(&self) -> Option<&str> {
        // SAFETY: for a stats event librdkafka returns a NUL-terminated string owned by the
        // event, which outlives the borrow.
        let p = unsafe { rd::rd_kafka_event_stats(self.ptr) };
        if p.is_null() {
            return None;
        }
        // SAFETY: not null, and NUL-terminated by librdkafka (above).
        unsafe { std::ffi::CStr::from_ptr(p) }.to_str().ok()
    }

    /// The error of an Error event, with librdkafka's explanation.
    pub(crate) fn error(&self) -> (RDKafkaErrorCode, String) {
        // SAFETY: ptr is a live event; the string is owned by it.
        unsafe {
            let code = RDKafkaErrorCode::from(rd::rd_kafka_event_error(self.ptr));
            let s = rd::rd_kafka_event_error_string(self.ptr);
            let reason = if s.is_null() {
                String::new()
            } else {
                std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
            };
            (code, reason)
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: taken from rd_kafka_queue_poll, destroyed once.
        unsafe { rd::rd_kafka_event_destroy(self.ptr) }
    }
}

pub(crate) struct Deliveries<'e> {
    ev: &'e Event,
}

impl<'e> Iterator for Deliveries<'e> {
    type Item = Delivery<'e>;

    #[inline]
    fn next(&mut self) -> Option<Delivery<'e>> {
        // SAFETY: the event is live; its messages live as long as it does.
        let m = unsafe { rd::rd_kafka_event_message_next(self.ev.ptr) };
        (!m.is_null()).then_some(Delivery {
            m,
            _ev: PhantomData,
        })
    }
}

/// One record's delivery report.
pub(crate) struct Delivery<'e> {
    m: *const rd::rd_kafka_message_t,
    _ev: PhantomData<&'e Event>,
}

impl Delivery<'_> {
    #[inline]
    pub(crate) fn error(&self) -> Option<RDKafkaErrorCode> {
        // SAFETY: m points into a live event (lifetime 'e).
        super::error::of_message(unsafe { (*self.m).err })
    }

    /// The opaque passed to `produce`.
    #[inline]
    pub(crate) fn opaque(&self) -> usize {
        // SAFETY: as above; for delivery reports _private is the per-message opaque.
        unsafe { (*self.m)._private as usize }
    }

    /// The partition and offset the record was written at (offset -1 when not written).
    #[inline]
    pub(crate) fn position(&self) -> (i32, i64) {
        // SAFETY: as above.
        unsafe { ((*self.m).partition, (*self.m).offset) }
    }

    /// The record's key (None: no key), and whether its value is null (a tombstone).
    #[inline]
    pub(crate) fn key_and_null(&self) -> (Option<&[u8]>, bool) {
        // SAFETY: as above; key and payload live as long as the message.
        unsafe {
            let m = &*self.m;
            let key = (!m.key.is_null())
                .then(|| std::slice::from_raw_parts(m.key.cast::<u8>(), m.key_len));
            (key, m.payload.is_null())
        }
    }

    /// Key and value bytes of the record.
    #[inline]
    pub(crate) fn key_value_bytes(&self) -> u64 {
        // SAFETY: as above.
        unsafe { ((*self.m).len + (*self.m).key_len) as u64 }
    }

    /// The value of the record's last header named `name`. It searches the header list, so
    /// the caller asks only on the rare path (a failed record's stamp).
    pub(crate) fn header(&self, name: &std::ffi::CStr) -> Option<&[u8]> {
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

    /// The node id of the broker whose response acknowledged the record (-1 when none did).
    /// A field read behind a call; the caller asks once per event, whose records one
    /// response acknowledged.
    #[inline]
    pub(crate) fn broker_id(&self) -> i32 {
        // SAFETY: as above.
        unsafe { rd::rd_kafka_message_broker_id(self.m) }
    }

    /// librdkafka's own produce() → delivery time in microseconds. It reads the clock, so the
    /// caller asks only when it needs it (paced runs).
    pub(crate) fn latency_us(&self) -> i64 {
        // SAFETY: as above.
        unsafe { rd::rd_kafka_message_latency(self.m) }
    }
}

/// Record headers in librdkafka's own list (names and values copied in).
pub(crate) struct Headers {
    ptr: *mut rd::rd_kafka_headers_t,
}

impl Headers {
    pub(crate) fn with_capacity(n: usize) -> Headers {
        // SAFETY: plain allocation; freed in Drop unless a produce call took ownership.
        let ptr = unsafe { rd::rd_kafka_headers_new(n) };
        Headers { ptr }
    }

    pub(crate) fn add(&mut self, name: &str, value: &[u8]) {
        // SAFETY: explicit sizes, so no NUL terminators are needed; librdkafka copies both.
        unsafe {
            rd::rd_kafka_header_add(
                self.ptr,
                name.as_ptr().cast(),
                name.len() as isize,
                value.as_ptr().cast(),
                value.len() as isize,
            );
        }
    }
}

impl Drop for Headers {
    fn drop(&mut self) {
        // SAFETY: still ours: produce() forgets the value when librdkafka takes it.
        unsafe { rd::rd_kafka_headers_destroy(self.ptr) }
    }
}
