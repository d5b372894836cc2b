//! A worker's `internals` (clients/PROTOCOL.md) as kafkabench's sums: the batching figures
//! every client has (`ProducerStats`, librdkafka's from its statistics) and the client's own
//! (`ClientSums`).

use serde_json::Value;

use crate::measure::client::ClientSums;
use crate::measure::ProducerStats;

/// A worker's internals as the client's own sums; an entry of another form is left out.
pub(crate) fn client_sums(internals: &Value) -> ClientSums {
    let mut sums = ClientSums::default();
    let Some(map) = internals.as_object() else {
        return sums;
    };
    for (name, e) in map {
        let f = |k: &str| e[k].as_f64();
        if let (Some(s), Some(n)) = (f("sum"), f("count")) {
            sums.avg.insert(name.clone(), (s, n));
        } else if let Some(t) = f("total") {
            sums.total.insert(name.clone(), t);
        } else if let Some(m) = f("min") {
            sums.min.insert(name.clone(), m);
        }
    }
    sums
}

/// The batching sums kafkabench derives `batch.bytes`, `batch.records`, `request.records`
/// and `wire.ratio` from, out of a worker's `batch-size` and `records-per-request`;
/// `key_value_bytes` is what its completions acknowledged.
pub(crate) fn stats(sums: &ClientSums, key_value_bytes: u64) -> ProducerStats {
    let n = |x: f64| x.round().max(0.0) as u64;
    let (bytes, batches) = sums.avg.get("batch-size").copied().unwrap_or_default();
    let (records, requests) = sums
        .avg
        .get("records-per-request")
        .copied()
        .unwrap_or_default();
    ProducerStats {
        batch_bytes: n(bytes),
        batch_bytes_batches: n(batches),
        batch_records: n(records),
        batch_records_batches: if records > 0.0 { n(batches) } else { 0 },
        records: n(records),
        record_bytes: if bytes > 0.0 { key_value_bytes } else { 0 },
        produce_requests: n(requests),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workers_batches_give_kafkabenchs_averages() {
        let v = serde_json::json!({
            "batch-size": {"sum": 1_000_000.0, "count": 100.0},
            "records-per-request": {"sum": 5_000.0, "count": 50.0},
            "bufferpool-wait-time-ns": {"total": 12.0},
            "buffer-available-bytes": {"min": 4096.0},
            "odd": {"value": 1.0},
        });
        let sums = client_sums(&v);
        let i = stats(&sums, 2_000_000).internals();
        assert_eq!(i.batch_bytes_avg, Some(10_000.0));
        assert_eq!(i.batch_records_avg, Some(50.0));
        assert_eq!(i.records_per_request, Some(100.0));
        assert_eq!(i.wire_ratio, Some(2.0));
        let f = sums.figures();
        assert_eq!(f["bufferpool-wait-time-ns-total"], 12.0);
        assert_eq!(f["buffer-available-bytes-min"], 4096.0);
        assert!(!f.contains_key("odd"));
    }
}
