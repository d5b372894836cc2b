//! Placeholder until the statistics module lands (same API): median and [min, max].

/// The median and an interval for it.
pub struct Estimate {
    pub n: usize,
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    pub coverage: f64,
}

pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

pub fn median_interval(values: &[f64], _level: f64) -> Option<Estimate> {
    let m = median(values)?;
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(Estimate {
        n: values.len(),
        median: m,
        lo,
        hi,
        coverage: 1.0 - 2.0 * 0.5f64.powi(values.len() as i32),
    })
}

pub fn spread(_values: &[f64]) -> Option<f64> {
    None
}

pub fn outliers(_values: &[f64]) -> Vec<usize> {
    Vec::new()
}
