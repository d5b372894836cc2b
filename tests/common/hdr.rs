//! The result file's histogram encoding as docs/result-format.md documents it (HdrHistogram V2
//! compressed, base64), written and read here with `hdrhistogram` and `base64` directly: the
//! tests hold the file to the documented format, not to kafkabench's own codec.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// An interval's histogram as the documented format describes it: nanoseconds, 1 ns to 1 h,
/// 2 significant digits.
pub(crate) fn interval_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("valid bounds")
}

pub(crate) fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("a bounded histogram serializes");
    STANDARD.encode(bytes)
}

/// Decodes as docs/result-format.md shows a reader doing it.
pub(crate) fn decode(b64: &str) -> Result<Histogram<u64>, String> {
    let bytes = STANDARD
        .decode(b64)
        .map_err(|e| format!("not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("not HdrHistogram V2: {e:?}"))
}
