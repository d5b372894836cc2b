//! Record sizes drawn from a distribution (grammar/REFERENCE.md, "Record sizes from a
//! distribution"), checked against counts kafkabench did not make: the topic read back by
//! rust-rdkafka's own consumer (tests/common/reader.rs), each value's length and bytes.

use std::path::Path;

use serde_json::Value;

use crate::common::reader;
use crate::common::{self, bootstrap};

/// Runs `scenario` with `--keep-topics`, expects exit 0, returns its one run.
fn run_kept(dir: &Path, scenario: &str) -> Value {
    common::run_json_with(dir, "sizes", scenario, &["--keep-topics"], 0).1["runs"][0].clone()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// P(round(median·e^(σZ)) ≤ k), clipped at `max` (every size from `max` up is drawn as `max`).
fn lognormal_cdf(median: f64, sigma: f64, max: usize, k: usize) -> f64 {
    if k >= max {
        return 1.0;
    }
    let z = ((k as f64 + 0.5) / median).ln() / sigma;
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// The Kolmogorov–Smirnov distance of `sample` to `cdf`, on both sides of each size it holds.
fn ks_distance(sample: &mut [usize], cdf: impl Fn(usize) -> f64) -> f64 {
    sample.sort_unstable();
    let n = sample.len() as f64;
    let (mut d, mut i) = (0.0f64, 0);
    while i < sample.len() {
        let k = sample[i];
        let before = i as f64 / n;
        while i < sample.len() && sample[i] == k {
            i += 1;
        }
        let below = if k == 0 { 0.0 } else { cdf(k - 1) };
        d = d
            .max((i as f64 / n - cdf(k)).abs())
            .max((before - below).abs());
    }
    d
}

/// `size: lognormal(median: 1KiB, sigma: 0.8)` over 100 000 records: the values the topic holds
/// pass a KS test against the distribution (at significance 0.001; a fixed seed, so the test
/// cannot fail by chance one run in a thousand), and the report's p50 and
/// p99 are the distribution's within 5 % and the sample's within a histogram bucket.
#[test]
fn lognormal_sizes_sent_follow_the_distribution_and_the_report_says_so() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let r = run_kept(
        dir.path(),
        r#"
scenario "sizes" {
  topic "kb-sizes-lognormal" { partitions = 2 }
  workload {
    messages = 100000
    payload  = random(size: lognormal(median: 1KiB, sigma: 0.8, max: 64KiB))
    seed     = 42
  }
}
"#,
    );
    let (b, topic) = (bootstrap(), r["topic"].as_str().unwrap().to_string());
    let mut sizes = Vec::with_capacity(100_000);
    let read = reader::each_value(&b, &topic, |v| sizes.push(v.len()));
    reader::delete_topic(&b, &topic);

    assert_eq!(read, u(&r["acked"]), "the topic holds what was acked: {r}");
    assert_eq!(read, 100_000);
    let s = &r["sizes"];
    assert_eq!(u(&s["count"]), read, "every record's size recorded: {s}");

    let (median, sigma, max) = (1024.0, 0.8, 64 * 1024);
    let d = ks_distance(&mut sizes, |k| lognormal_cdf(median, sigma, max, k));
    let critical = 1.949 / (sizes.len() as f64).sqrt();
    eprintln!("KS distance {d:.5} (critical {critical:.5}), report {s}");
    assert!(d < critical, "KS distance {d} ≥ {critical}");

    // The sample's own quantiles (sorted above), as HdrHistogram reads them.
    let at = |q: f64| sizes[((q * sizes.len() as f64).ceil() as usize).max(1) - 1] as f64;
    // The distribution's: median·e^(σ·z_q).
    for (field, q, truth) in [
        ("p50", 0.50, median),
        ("p99", 0.99, median * (sigma * 2.326_347_874).exp()),
    ] {
        let got = s[field].as_f64().unwrap();
        assert!(
            (got - truth).abs() / truth < 0.05,
            "{field} {got} is not the distribution's {truth:.0} within 5 %"
        );
        // A figure is its histogram bucket's lowest size: at most 0.1 % below the size.
        let sample = at(q);
        assert!(
            got <= sample && got >= sample * 0.998,
            "{field} {got}, the topic's {sample}"
        );
    }
    let largest = *sizes.last().unwrap() as f64;
    let got = s["max"].as_f64().unwrap();
    assert!(
        got <= largest && got >= largest * 0.998,
        "max {got}, the topic's {largest}"
    );
}

/// `random(size: uniform(…), compressibility: 50%)` with sizes that vary: every value read back
/// has its second half zero (no random bytes left over from a larger record), and the topic
/// compresses as half-random data does.
#[test]
fn a_compressible_payload_stays_compressible_when_sizes_vary() {
    common::require_broker();
    let dir = tempfile::tempdir().unwrap();
    let r = run_kept(
        dir.path(),
        r#"
scenario "sizes" {
  topic "kb-sizes-compressible" { partitions = 1 }
  producer { compression.type = lz4 }
  workload {
    messages = 20000
    payload  = random(size: uniform(100B, 8KiB), compressibility: 50%)
  }
}
"#,
    );
    let (b, topic) = (bootstrap(), r["topic"].as_str().unwrap().to_string());
    let (mut dirty, mut zeros, mut bytes) = (0u64, 0u64, 0u64);
    let read = reader::each_value(&b, &topic, |v| {
        let random = (v.len() as f64 * 0.5).round() as usize;
        if v[random..].iter().any(|&x| x != 0) {
            dirty += 1;
        }
        zeros += v.iter().filter(|&&x| x == 0).count() as u64;
        bytes += v.len() as u64;
    });
    reader::delete_topic(&b, &topic);
    assert_eq!(read, 20_000);
    assert_eq!(dirty, 0, "records whose filler held random bytes");
    // Half zero filler, and 1/256 of the random half zero by chance.
    let share = zeros as f64 / bytes as f64;
    assert!((0.49..0.52).contains(&share), "zero share {share}");
    let ratio = r["disk_ratio"].as_f64();
    eprintln!(
        "disk ratio {ratio:?}, zero share {share:.4}, sizes {}",
        r["sizes"]
    );
    // Half of each record compresses away; without the explicit zeroing the filler of most
    // records was random and the ratio near 1.
    let ratio = ratio.expect("a disk ratio");
    assert!(ratio > 1.7, "disk ratio {ratio}");
}

/// `plan` shows a distribution with its mean, and warns before a run whose largest draw is
/// above the producer's `message.max.bytes`. No broker needed.
#[test]
fn plan_shows_the_mean_and_warns_of_records_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sizes.kbs");
    std::fs::write(
        &file,
        r#"
scenario "sizes" {
  topic "kb-sizes-plan-{p}" { partitions = 1 }
  workload {
    messages = 1000
    payload  = {p}
  }
  matrix {
    p = [
      random(size: lognormal(median: 1KiB, sigma: 0.8, max: 64KiB)),
      random(size: lognormal(median: 1KiB, sigma: 0.8)),
    ]
  }
}
"#,
    )
    .unwrap();
    let out = common::kafkabench(&["plan", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    // e^(σ²/2) · 1KiB = 1.38 KiB.
    assert!(text.contains("mean 1.4KiB"), "{text}");
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "only the unclipped run warns: {text}");
    assert!(
        warnings[0].contains("message.max.bytes (1000000)"),
        "{}",
        warnings[0]
    );
}
