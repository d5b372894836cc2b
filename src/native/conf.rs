//! librdkafka's configuration, read through its C API: the names it knows.

use std::ffi::CStr;

/// Every property name librdkafka's configuration dump lists (the defaults of a fresh
/// configuration), in dump order.
pub(crate) fn property_names() -> Vec<String> {
    let mut names = Vec::new();
    // SAFETY: conf_new/dump/dump_free/destroy are used as librdkafka documents: the dump
    // array holds cnt alternating key/value C strings and is freed by dump_free.
    unsafe {
        let conf = rdkafka::bindings::rd_kafka_conf_new();
        let mut cnt: usize = 0;
        let arr = rdkafka::bindings::rd_kafka_conf_dump(conf, &mut cnt);
        for i in (0..cnt).step_by(2) {
            let k = *arr.add(i);
            if !k.is_null() {
                names.push(CStr::from_ptr(k).to_string_lossy().into_owned());
            }
        }
        rdkafka::bindings::rd_kafka_conf_dump_free(arr, cnt);
        rdkafka::bindings::rd_kafka_conf_destroy(conf);
    }
    names
}

/// Every property of a fresh configuration with its default, global ones first, then the
/// topic-level ones (`acks`, `partitioner`, `compression.codec`, …) that the global dump leaves
/// out; as librdkafka itself writes them (its dump redacts nothing here: a fresh
/// configuration holds no secret).
pub(crate) fn defaults() -> Vec<(String, String)> {
    let mut out = Vec::new();
    // SAFETY: as in `property_names`; the topic configuration is created, dumped and
    // destroyed the same way, through its own calls.
    unsafe {
        let conf = rdkafka::bindings::rd_kafka_conf_new();
        let mut cnt: usize = 0;
        let arr = rdkafka::bindings::rd_kafka_conf_dump(conf, &mut cnt);
        pairs(arr, cnt, &mut out);
        rdkafka::bindings::rd_kafka_conf_dump_free(arr, cnt);
        rdkafka::bindings::rd_kafka_conf_destroy(conf);
        let topic = rdkafka::bindings::rd_kafka_topic_conf_new();
        let mut cnt: usize = 0;
        let arr = rdkafka::bindings::rd_kafka_topic_conf_dump(topic, &mut cnt);
        pairs(arr, cnt, &mut out);
        rdkafka::bindings::rd_kafka_conf_dump_free(arr, cnt);
        rdkafka::bindings::rd_kafka_topic_conf_destroy(topic);
    }
    out
}

/// The key/value pairs of a dump array, skipping a key already taken.
///
/// # Safety
/// `arr` holds `cnt` C strings (or nulls), alternating key and value, as a dump returns.
unsafe fn pairs(
    arr: *mut *const std::os::raw::c_char,
    cnt: usize,
    out: &mut Vec<(String, String)>,
) {
    for i in (0..cnt.saturating_sub(1)).step_by(2) {
        // SAFETY: i + 1 < cnt, and each entry is null or a C string (the caller's promise).
        let (k, v) = unsafe { (*arr.add(i), *arr.add(i + 1)) };
        if k.is_null() {
            continue;
        }
        // SAFETY: as above.
        let key = unsafe { CStr::from_ptr(k) }.to_string_lossy().into_owned();
        let value = if v.is_null() {
            String::new()
        } else {
            // SAFETY: as above.
            unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned()
        };
        // Callbacks are addresses (`log_cb`, `0x55…`): no setting, and a new one per process.
        let address = key.ends_with("_cb") || value.starts_with("0x");
        if !address && !out.iter().any(|(x, _)| *x == key) {
            out.push((key, value));
        }
    }
}

/// librdkafka's version as it reports it (`2.12.1`).
pub(crate) fn version() -> String {
    rdkafka::util::get_rdkafka_version().1
}
