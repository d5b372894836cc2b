//! Histograms in a result file: HdrHistogram's V2 compressed format, base64, the encoding
//! HdrHistogram's own log writers use, so a saved run can be re-analysed and merged exactly.

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// The histogram as base64 of its V2 deflate serialization.
pub(crate) fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    // Serializing into memory fails only on a histogram too large to describe, which the
    // fixed bounds of `new_histogram` rule out.
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("a bounded histogram serializes");
    STANDARD.encode(bytes)
}

/// Decodes what `encode` wrote (or any V2/V2-deflate histogram in base64).
pub(crate) fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|e| format!("not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("not an HdrHistogram V2 serialization: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{new_histogram, record};

    #[test]
    fn a_histogram_survives_encoding_with_every_percentile() {
        let mut h = new_histogram();
        for v in [1_000u64, 20_000, 300_000, 4_000_000, 50_000_000] {
            record(&mut h, v);
        }
        let back = decode(&encode(&h)).unwrap();
        assert_eq!(back.len(), h.len());
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(back.value_at_quantile(q), h.value_at_quantile(q));
        }
    }

    #[test]
    fn merged_serialized_histograms_equal_one_histogram_fed_both_sets() {
        let (mut a, mut b, mut both) = (new_histogram(), new_histogram(), new_histogram());
        for i in 0..10_000u64 {
            let v = 1_000 + i * i % 7_919_003;
            if i % 3 == 0 {
                record(&mut a, v);
            } else {
                record(&mut b, v * 3);
            }
            record(&mut both, if i % 3 == 0 { v } else { v * 3 });
        }
        let mut merged = decode(&encode(&a)).unwrap();
        merged.add(decode(&encode(&b)).unwrap()).unwrap();
        assert_eq!(merged.len(), both.len());
        for q in [0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            assert_eq!(
                merged.value_at_quantile(q),
                both.value_at_quantile(q),
                "q={q}"
            );
        }
    }

    #[test]
    fn garbage_is_refused_with_a_reason() {
        assert!(decode("not base64!").unwrap_err().contains("base64"));
        assert!(decode("aGVsbG8=").unwrap_err().contains("HdrHistogram"));
    }
}
