//! The sizes of the values a run sent, when they vary (a size distribution, a payload file, a
//! schema): recorded per record into a histogram on each producer's thread, merged with the
//! producer's recording (`Recording::sizes`), and summarised here, once. The summary keeps
//! the histogram (as the latency summaries do), so a file read back is summarised again and
//! shards merge exactly.
//!
//! Each figure is the lowest size of its histogram bucket (3 significant digits, as every
//! kafkabench histogram): a size sent exactly (100 B, 4 KiB, 64 KiB) reads exactly, and any
//! other is at most 0.1 % above its figure.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::codec;

/// The value sizes of the measured records sent, in bytes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(try_from = "SizeSummaryFile")]
pub struct SizeSummary {
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    /// HdrHistogram V2 deflate, base64 (bytes).
    pub histogram: Option<String>,
    #[serde(skip)]
    hist: Option<Histogram<u64>>,
}

/// A summary as a result file holds it; its histogram is decoded on reading.
#[derive(Deserialize)]
struct SizeSummaryFile {
    count: u64,
    min: u64,
    mean: f64,
    p50: u64,
    p90: u64,
    p99: u64,
    p999: u64,
    max: u64,
    #[serde(default)]
    histogram: Option<String>,
}

impl TryFrom<SizeSummaryFile> for SizeSummary {
    type Error = String;
    fn try_from(f: SizeSummaryFile) -> Result<Self, String> {
        let hist = f.histogram.as_deref().map(codec::decode).transpose()?;
        Ok(SizeSummary {
            count: f.count,
            min: f.min,
            mean: f.mean,
            p50: f.p50,
            p90: f.p90,
            p99: f.p99,
            p999: f.p999,
            max: f.max,
            histogram: f.histogram,
            hist,
        })
    }
}

impl SizeSummary {
    /// None when nothing was recorded.
    pub fn from_histogram(h: &Histogram<u64>) -> Option<SizeSummary> {
        if h.is_empty() {
            return None;
        }
        let at = |q: f64| h.lowest_equivalent(h.value_at_quantile(q));
        Some(SizeSummary {
            count: h.len(),
            min: h.min(),
            mean: h.mean(),
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            p999: at(0.999),
            max: h.lowest_equivalent(h.max()),
            histogram: Some(codec::encode(h)),
            hist: Some(h.clone()),
        })
    }

    /// The whole distribution (recorded, or decoded from a file).
    pub fn histogram(&self) -> Option<&Histogram<u64>> {
        self.hist.as_ref()
    }

    /// The figures read off its histogram again (a file's are ignored); as it was when the
    /// file kept no histogram.
    pub(crate) fn resummarise(&mut self) {
        if let Some(s) = self
            .hist
            .clone()
            .and_then(|h| SizeSummary::from_histogram(&h))
        {
            *self = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{new_histogram, record};

    #[test]
    fn sizes_sent_exactly_read_exactly_and_survive_a_file() {
        let mut h = new_histogram();
        for (size, n) in [(100u64, 70u64), (4096, 25), (65536, 5)] {
            for _ in 0..n {
                record(&mut h, size);
            }
        }
        let s = SizeSummary::from_histogram(&h).unwrap();
        assert_eq!(
            (s.min, s.p50, s.p90, s.p99, s.max),
            (100, 100, 4096, 65536, 65536)
        );
        let back: SizeSummary = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back.histogram().unwrap().len(), 100);
        assert_eq!(back.p99, 65536);
    }
}
