//! A client's own internals beside librdkafka's statistics: what the Java client's metrics
//! (and franz-go's hooks) say over the measured phase, kept as sums so that threads, shards
//! and trials merge exactly and an average is a ratio of sums (clients/PROTOCOL.md,
//! `internals`). librdkafka's batching figures stay in `ProducerStats`, which a worker's
//! batch sums fill too; these are the ones only a worker's client has.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One client's internals over the measured phase, by the client's own metric names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientSums {
    /// Averages as their parts: (sum, count). Figure `<name>-avg`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub avg: BTreeMap<String, (f64, f64)>,
    /// Counters' growth over the phase. Figure `<name>-total`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub total: BTreeMap<String, f64>,
    /// Gauges' lowest value over the phase. Figure `<name>-min`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub min: BTreeMap<String, f64>,
}

impl ClientSums {
    /// Another thread's, shard's or trial's: averages' parts and totals added, minimums the
    /// lower.
    pub fn absorb(&mut self, o: &ClientSums) {
        for (k, (s, n)) in &o.avg {
            let e = self.avg.entry(k.clone()).or_default();
            e.0 += s;
            e.1 += n;
        }
        for (k, v) in &o.total {
            *self.total.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &o.min {
            let e = self.min.entry(k.clone()).or_insert(*v);
            *e = e.min(*v);
        }
    }

    /// Either side's, merged (None when neither has any).
    pub fn merged(a: Option<&ClientSums>, b: Option<&ClientSums>) -> Option<ClientSums> {
        match (a, b) {
            (None, None) => None,
            (a, b) => {
                let mut m = a.cloned().unwrap_or_default();
                if let Some(b) = b {
                    m.absorb(b);
                }
                Some(m)
            }
        }
    }

    /// The figures, by the client's names: `<name>-avg`, `<name>-total`, `<name>-min`.
    pub fn figures(&self) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        for (k, (s, n)) in &self.avg {
            if *n > 0.0 {
                out.insert(format!("{k}-avg"), s / n);
            }
        }
        for (k, v) in &self.total {
            out.insert(format!("{k}-total"), *v);
        }
        for (k, v) in &self.min {
            out.insert(format!("{k}-min"), *v);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_averages_are_ratios_of_sums_not_averages_of_averages() {
        let mut a = ClientSums::default();
        a.avg.insert("compression-rate".into(), (0.5 * 10.0, 10.0));
        a.min.insert("buffer-available-bytes".into(), 1000.0);
        let mut b = ClientSums::default();
        b.avg.insert("compression-rate".into(), (0.8 * 30.0, 30.0));
        b.min.insert("buffer-available-bytes".into(), 400.0);
        b.total.insert("record-error".into(), 3.0);
        a.absorb(&b);
        let f = a.figures();
        assert!((f["compression-rate-avg"] - (5.0 + 24.0) / 40.0).abs() < 1e-12);
        assert_eq!(f["buffer-available-bytes-min"], 400.0);
        assert_eq!(f["record-error-total"], 3.0);
    }
}
