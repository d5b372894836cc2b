//! The consumer's read path on librdkafka's C API.
//!
//! rust-rdkafka creates and configures the client (and asks librdkafka for rebalances,
//! statistics and errors as events on the consumer queue); reading happens here. Its
//! `BaseConsumer::poll` allocates an `Arc` per record, and its header access walks the whole
//! list in Rust; at a million records a second both showed in the verification consumer's
//! profile (bench/README.md, "verification consumer"). Here the consumer queue is polled
//! directly, as `rdkafka_performance -C -G` does with `rd_kafka_consumer_poll`: one event per
//! record, its stamp read from the record's header bytes (below), nothing allocated per record
//! for it. Rebalance events are answered here too (assign or unassign, eager or cooperative), so
//! one thread owns the client and its group membership.
//!
//! The stamp is read from the record's header bytes as fetched, not through
//! `rd_kafka_message_headers`: that call parses every header into a new list (a zeroed
//! shadow buffer, a list and a copy per header, all freed with the record), which made a
//! verifying drain cost 3 900 instructions per record against 1 400 for a plain one
//! (callgrind, bench/README.md). The bytes sit in librdkafka's private `rd_kafka_msg_t`; the
//! offsets of its fields are measured in librdkafka's own headers when kafkabench is built
//! (build.rs, src/native/layout.c), so a librdkafka that moves them is read at the new offsets
//! and one that renames or drops them fails the build. See `Message::header`.

use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};
use std::ptr;

use rdkafka::bindings as rd;
use rdkafka::consumer::{BaseConsumer, Consumer as _, ConsumerContext};
use rdkafka::types::RDKafkaErrorCode;

/// A consumer's native handles, valid while the rust-rdkafka consumer they came from lives.
pub(crate) struct Consumer<'c> {
    rk: *mut rd::rd_kafka_t,
    queue: *mut rd::rd_kafka_queue_t,
    /// The linked librdkafka is the one whose headers `layout` was measured in.
    raw_headers: bool,
    _consumer: PhantomData<&'c ()>,
}

impl<'c> Consumer<'c> {
    /// The consumer queue (rust-rdkafka forwards the main queue to it when a `group.id` is
    /// set, so statistics and errors arrive on it too); the main queue without a group.
    pub(crate) fn new<C: ConsumerContext>(consumer: &'c BaseConsumer<C>) -> Consumer<'c> {
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
        // SAFETY: a plain getter. Statically linked, it is always the version built against;
        // the check guards a librdkafka swapped in at link or load time.
        let raw_headers = unsafe { rd::rd_kafka_version() } == layout::VERSION;
        Consumer {
            rk,
            queue,
            raw_headers,
            _consumer: PhantomData,
        }
    }

    /// The next event (a record, a rebalance, statistics, an error), waiting at most
    /// `timeout_ms` for one.
    #[inline]
    pub(crate) fn next_event(&self, timeout_ms: i32) -> Option<Event> {
        // SAFETY: queue is live; a non-null event is ours to destroy (Event's Drop).
        let ev = unsafe { rd::rd_kafka_queue_poll(self.queue, timeout_ms) };
        (!ev.is_null()).then_some(Event {
            ptr: ev,
            raw_headers: self.raw_headers,
        })
    }

    /// A partition's high watermark as of its last fetch response (librdkafka's cached
    /// value: no request); None before any response.
    pub(crate) fn cached_end(&self, topic: &str, partition: i32) -> Option<i64> {
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
    pub(crate) fn answer(
        &self,
        ev: &Event,
        assign: bool,
    ) -> Result<(Vec<(String, i32)>, bool), String> {
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

    /// The assignment epoch this member is in; None outside a group. Under the classic
    /// protocol the group generation (from its last JoinGroup response); under the consumer
    /// protocol (KIP-848) librdkafka gives the member epoch here, the epoch of the group's
    /// target assignment the member last reconciled to. Read at an assignment, it names the
    /// rebalance the assignment belongs to: members given partitions by one group assignment
    /// see the same number.
    pub(crate) fn generation(&self) -> Option<i32> {
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
pub(crate) struct Event {
    ptr: *mut rd::rd_kafka_event_t,
    raw_headers: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
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
    pub(crate) fn kind(&self) -> EventKind {
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
    pub(crate) fn message(&self) -> Option<Message<'_>> {
        // SAFETY: the event is live; its message lives as long as it does.
        let m = unsafe { rd::rd_kafka_event_message_next(self.ptr) };
        (!m.is_null()).then_some(Message {
            m,
            raw_headers: self.raw_headers,
            _ev: PhantomData,
        })
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
        unsafe { CStr::from_ptr(p) }.to_str().ok()
    }

    /// The error of an Error event, with librdkafka's explanation, and whether it is fatal.
    pub(crate) fn error(&self) -> (RDKafkaErrorCode, String, bool) {
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
    pub(crate) fn with_partition<T>(&self, f: impl FnOnce(&[u8], i32) -> T) -> Option<T> {
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
pub(crate) fn is_partition_eof(code: RDKafkaErrorCode) -> bool {
    code == RDKafkaErrorCode::PartitionEOF
}

/// One record read.
pub(crate) struct Message<'e> {
    m: *const rd::rd_kafka_message_t,
    raw_headers: bool,
    _ev: PhantomData<&'e Event>,
}

impl Message<'_> {
    /// A consumer error carried as a record (a partition's end, a fetch error).
    #[inline]
    pub(crate) fn error(&self) -> Option<RDKafkaErrorCode> {
        // SAFETY: m points into a live event (lifetime 'e).
        super::error::of_message(unsafe { (*self.m).err })
    }

    #[inline]
    pub(crate) fn partition(&self) -> i32 {
        // SAFETY: as above.
        unsafe { (*self.m).partition }
    }

    #[inline]
    pub(crate) fn offset(&self) -> i64 {
        // SAFETY: as above.
        unsafe { (*self.m).offset }
    }

    /// Key and value bytes.
    #[inline]
    pub(crate) fn key_value_bytes(&self) -> u64 {
        // SAFETY: as above.
        unsafe { ((*self.m).len + (*self.m).key_len) as u64 }
    }

    /// The record's topic handle, as an identity: the same topic gives the same value for the
    /// client's lifetime, so callers map it to their own index without comparing names.
    #[inline]
    pub(crate) fn topic_id(&self) -> usize {
        // SAFETY: as above.
        unsafe { (*self.m).rkt as usize }
    }

    /// The record's topic name (for the first record of a topic handle; then `topic_id`).
    pub(crate) fn topic_name(&self) -> &[u8] {
        // SAFETY: the topic handle lives as long as the message; its name is NUL-terminated.
        unsafe {
            let rkt = (*self.m).rkt;
            if rkt.is_null() {
                return &[];
            }
            CStr::from_ptr(rd::rd_kafka_topic_name(rkt)).to_bytes()
        }
    }

    /// The value of the record's last header named `name`, without copying: found in the
    /// header bytes as fetched when librdkafka is the one `layout` was measured in and the
    /// record's own fields agree with it; through `rd_kafka_message_headers` otherwise.
    #[inline]
    pub(crate) fn header(&self, name: &CStr) -> Option<&[u8]> {
        match self.raw_headers() {
            Some(raw) => last_header(raw, name.to_bytes()),
            None => self.parsed_header(name),
        }
    }

    /// The same through librdkafka's public header list (parsed on first use, kept with the
    /// record).
    fn parsed_header(&self, name: &CStr) -> Option<&[u8]> {
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

    /// The record's header section as fetched (count, then each header), when it can be
    /// trusted: the fetch reader stores it right after the value, so its start must be the
    /// value's end (a wrong layout could not match that by chance); not yet parsed (a parsed
    /// list would be librdkafka's to answer from).
    #[inline]
    fn raw_headers(&self) -> Option<&[u8]> {
        if !self.raw_headers {
            return None;
        }
        // SAFETY: m is the first field of librdkafka's rd_kafka_msg_t (rd_kafka_message2msg
        // is a cast; `layout` asserts the offset 0), and a consumed message lives inside an
        // rd_kafka_op_t, which holds a whole rd_kafka_msg_t: every read below is of a field at
        // its offset and size as measured in the linked librdkafka's headers (checked in
        // Consumer::new), each aligned for its type. The bytes lie in the fetch buffer the
        // message holds a reference to.
        unsafe {
            let base = self.m.cast::<u8>();
            let at = |offset: usize| base.add(offset);
            let headers = at(layout::HEADERS_OFFSET).cast::<*const c_void>().read();
            let flags = at(layout::FLAGS_OFFSET).cast::<c_int>().read();
            let len = at(layout::BINHDRS_LEN_OFFSET).cast::<i32>().read();
            let data = at(layout::BINHDRS_DATA_OFFSET).cast::<*const u8>().read();
            let value = (*self.m).payload as usize;
            if headers.is_null()
                && flags & layout::MSG_F_PRODUCER == 0
                && len > 0
                && value != 0
                && value + (*self.m).len == data as usize
            {
                Some(std::slice::from_raw_parts(data, len as usize))
            } else {
                None
            }
        }
    }
}

/// librdkafka's `rd_kafka_msg_t` fields the header bytes are read from, measured in its headers
/// by build.rs; the Rust reads above must match their sizes, or this does not compile.
mod layout {
    include!(concat!(env!("OUT_DIR"), "/rdkafka_layout.rs"));

    use std::mem::size_of;
    use std::os::raw::{c_int, c_void};

    const _: () = assert!(MESSAGE_OFFSET == 0, "rd_kafka_message_t is the first field");
    const _: () = assert!(MESSAGE_SIZE == size_of::<rdkafka::bindings::rd_kafka_message_t>());
    const _: () = assert!(HEADERS_SIZE == size_of::<*const c_void>());
    const _: () = assert!(FLAGS_SIZE == size_of::<c_int>());
    const _: () = assert!(BINHDRS_LEN_SIZE == size_of::<i32>());
    const _: () = assert!(BINHDRS_DATA_SIZE == size_of::<*const u8>());
    const _: () = assert!(MSG_SIZE >= BINHDRS_DATA_OFFSET + BINHDRS_DATA_SIZE);
    const _: () = assert!(HEADERS_OFFSET % size_of::<*const c_void>() == 0);
    const _: () = assert!(FLAGS_OFFSET % size_of::<c_int>() == 0);
    const _: () = assert!(BINHDRS_LEN_OFFSET % size_of::<i32>() == 0);
    const _: () = assert!(BINHDRS_DATA_OFFSET % size_of::<*const u8>() == 0);
}

/// The value of the last header named `name` in a record's header section (Kafka's record
/// format v2: a count, then per header a key and a value, each after its length, all lengths
/// zigzag varints; a value of length -1 is null). None when absent, null, or malformed.
#[inline]
fn last_header<'a>(raw: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    // A stamped record's whole section: one header, `name`, a value shorter than 64 bytes
    // (every length one byte: zigzag 2n), nothing after it. The general walk below costs about
    // twice the instructions.
    if let [2, key_len, rest @ ..] = raw {
        if usize::from(*key_len) == 2 * name.len() && *key_len < 0x80 {
            if let Some((value_len, value)) = rest.strip_prefix(name).and_then(<[u8]>::split_first)
            {
                if *value_len < 0x80 && usize::from(*value_len) == 2 * value.len() {
                    return Some(value);
                }
            }
        }
    }
    walk_headers(raw, name)
}

/// `last_header` for any section.
fn walk_headers<'a>(mut raw: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let count = varint(&mut raw)?;
    let mut found = None;
    for _ in 0..count {
        let key_len = usize::try_from(varint(&mut raw)?).ok()?;
        let key = take(&mut raw, key_len)?;
        let value = match varint(&mut raw)? {
            -1 => None,
            n => Some(take(&mut raw, usize::try_from(n).ok()?)?),
        };
        if key == name {
            found = Some(value);
        }
    }
    found.flatten()
}

/// A zigzag varint (at most 10 bytes) off the front of `raw`.
#[inline]
fn varint(raw: &mut &[u8]) -> Option<i64> {
    let zigzag = |n: u64| (n >> 1) as i64 ^ -((n & 1) as i64);
    // One byte: every length and count of a stamp's header section.
    if let Some((&b, rest)) = raw.split_first() {
        if b < 0x80 {
            *raw = rest;
            return Some(zigzag(u64::from(b)));
        }
    }
    let mut n = 0u64;
    for (i, b) in raw.iter().enumerate().take(10) {
        n |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            *raw = &raw[i + 1..];
            return Some(zigzag(n));
        }
    }
    None
}

fn take<'a>(raw: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if n > raw.len() {
        return None;
    }
    let (head, rest) = raw.split_at(n);
    *raw = rest;
    Some(head)
}

#[cfg(test)]
#[path = "consumer_tests.rs"]
mod broker_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn zigzag(out: &mut Vec<u8>, v: i64) {
        let mut n = ((v << 1) ^ (v >> 63)) as u64;
        while n >= 0x80 {
            out.push(n as u8 | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    fn section(headers: &[(&[u8], Option<&[u8]>)]) -> Vec<u8> {
        let mut out = Vec::new();
        zigzag(&mut out, headers.len() as i64);
        for (k, v) in headers {
            zigzag(&mut out, k.len() as i64);
            out.extend_from_slice(k);
            match v {
                Some(v) => {
                    zigzag(&mut out, v.len() as i64);
                    out.extend_from_slice(v);
                }
                None => zigzag(&mut out, -1),
            }
        }
        out
    }

    #[test]
    fn the_last_header_of_a_name_is_found() {
        let long = [7u8; 300]; // a two-byte length
        let raw = section(&[
            (b"kb", Some(b"first")),
            (b"other", Some(&long)),
            (b"kb", Some(b"second")),
            (b"k", Some(b"x")),
        ]);
        assert_eq!(last_header(&raw, b"kb"), Some(&b"second"[..]));
        assert_eq!(last_header(&raw, b"other"), Some(&long[..]));
        assert_eq!(last_header(&raw, b"kbx"), None);
    }

    #[test]
    fn a_single_header_reads_as_the_general_walk_reads_it() {
        let long = [9u8; 64]; // a two-byte length: not the short form
        for (k, v) in [
            (&b"kb"[..], Some(&[1u8; 21][..])),
            (b"kb", Some(&b""[..])),
            (b"kb", Some(&long[..63])),
            (b"kb", Some(&long[..])),
            (b"kb", None),
            (b"k", Some(&b"v"[..])),
            (b"kbx", Some(&b"v"[..])),
        ] {
            let raw = section(&[(k, v)]);
            assert_eq!(
                last_header(&raw, b"kb"),
                walk_headers(&raw, b"kb"),
                "{k:?} {v:?}"
            );
            let mut longer = raw.clone();
            longer.push(0); // trailing bytes: not a whole single-header section
            assert_eq!(
                last_header(&longer, b"kb"),
                walk_headers(&longer, b"kb"),
                "{k:?} {v:?} +1"
            );
        }
        assert_eq!(
            last_header(&section(&[(b"kb", Some(&[7u8; 21]))]), b"kb"),
            Some(&[7u8; 21][..])
        );
    }

    #[test]
    fn a_null_or_empty_value_and_a_malformed_section() {
        let raw = section(&[(b"kb", Some(b"v")), (b"kb", None)]);
        assert_eq!(last_header(&raw, b"kb"), None, "the last one is null");
        let raw = section(&[(b"kb", Some(b""))]);
        assert_eq!(last_header(&raw, b"kb"), Some(&b""[..]));
        let raw = section(&[(b"kb", Some(b"value"))]);
        assert_eq!(last_header(&raw[..raw.len() - 1], b"kb"), None, "cut short");
        assert_eq!(last_header(&[], b"kb"), None);
        assert_eq!(last_header(&section(&[]), b"kb"), None);
    }
}
