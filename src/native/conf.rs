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
