use super::*;
use crate::model::{SizeShape, SizeTable};

#[test]
fn json_records_are_unique_and_sized() {
    let spec = PayloadSpec::Json {
        size: PayloadSize::Fixed(1024),
        event: "order.created".into(),
    };
    let mut g = PayloadGen::new(&spec, 1);
    let a = g.next(1, 1000).to_vec();
    let b = g.next(2, 1000).to_vec();
    assert_ne!(a, b);
    assert_eq!(a.len(), 1024);
    let v: serde_json::Value = serde_json::from_slice(&a).expect("valid JSON");
    assert_eq!(v["seq"], 1);
    assert_eq!(v["event"], "order.created");
}

#[test]
fn zipf_is_skewed_and_in_range() {
    let z = Zipf::new(1000, 1.1);
    let mut rng = Rng::new(7);
    let mut counts = vec![0u32; 1001];
    for _ in 0..100_000 {
        let k = z.sample(&mut rng) as usize;
        assert!((1..=1000).contains(&k));
        counts[k] += 1;
    }
    // The hottest key takes far more than a uniform share (100), the tail far less.
    assert!(counts[1] > 10_000, "key 1 drew {}", counts[1]);
    assert!(counts[1] > 20 * counts[500].max(1));
}

#[test]
fn random_payload_respects_compressibility() {
    let spec = PayloadSpec::Random {
        size: PayloadSize::Fixed(1000),
        compressibility: 0.5,
    };
    let mut g = PayloadGen::new(&spec, 3);
    let p = g.next(0, 0);
    assert_eq!(p.len(), 1000);
    assert!(p[500..].iter().all(|b| *b == 0));
    assert!(p[..500].iter().filter(|b| **b == 0).count() < 20);
}

fn drawn(shape: SizeShape, table: SizeTable) -> PayloadSize {
    PayloadSize::Drawn(Arc::new(SizeDist::new(shape, table)))
}

fn uniform(min: usize, max: usize) -> PayloadSize {
    drawn(
        SizeShape::Uniform { min, max },
        SizeTable::uniform(min, max).unwrap(),
    )
}

/// The generator's records over 100 000 draws at a fixed seed follow the lognormal they were
/// drawn from: the Kolmogorov–Smirnov distance to the distribution itself (not to the table
/// compiled from it) is below its critical value at significance 0.001.
#[test]
fn random_records_follow_a_lognormal_size_at_a_fixed_seed() {
    let (median, sigma) = (1024.0, 0.8);
    let size = drawn(
        SizeShape::Lognormal {
            median,
            sigma,
            min: 1,
            max: crate::model::LARGEST_PAYLOAD,
        },
        SizeTable::lognormal(median, sigma, 1, crate::model::LARGEST_PAYLOAD).unwrap(),
    );
    let spec = PayloadSpec::Random {
        size,
        compressibility: 0.0,
    };
    let mut g = PayloadGen::new(&spec, 42);
    let mut sizes: Vec<usize> = (0..100_000).map(|i| g.next(i, 0).len()).collect();
    let d = crate::model::size_testing::ks_distance(&mut sizes, |k| {
        crate::model::size_testing::lognormal_cdf(median, sigma, k)
    });
    assert!(d < 1.949 / 100_000f64.sqrt(), "KS distance {d}");
}

/// With sizes that vary, a record's compressible part is zero however large the records
/// before it were: the disk ratio a codec reaches stays the one `compressibility` asks for.
#[test]
fn varying_sizes_keep_the_compressible_part_zero() {
    let spec = PayloadSpec::Random {
        size: uniform(100, 4096),
        compressibility: 0.5,
    };
    let mut g = PayloadGen::new(&spec, 5);
    let mut zeros = 0usize;
    let mut total = 0usize;
    for i in 0..10_000 {
        let p = g.next(i, 0);
        let random = (p.len() as f64 * 0.5).round() as usize;
        assert!(
            p[random..].iter().all(|b| *b == 0),
            "record {i} of {} B",
            p.len()
        );
        zeros += p[..random].iter().filter(|b| **b == 0).count();
        total += random;
    }
    // The random half is random: about 1/256 of its bytes are zero.
    assert!(
        zeros * 100 < total,
        "{zeros} zero bytes of {total} random ones"
    );
}

#[test]
fn json_and_constant_records_take_the_size_drawn() {
    let size = uniform(100, 2000);
    let table = size.dist().unwrap().table.clone();
    let expected = |seed: u64| {
        let mut rng = Rng::new(seed ^ SIZE_STREAM);
        (0..1000).map(|_| table.draw(&mut rng)).collect::<Vec<_>>()
    };
    let json = PayloadSpec::Json {
        size: size.clone(),
        event: "order.created".into(),
    };
    let mut g = PayloadGen::new(&json, 9);
    for (i, want) in expected(9).into_iter().enumerate() {
        let r = g.next(i as u64, 1_764_921_600_000);
        assert_eq!(r.len(), want);
        let v: serde_json::Value = serde_json::from_slice(r).expect("valid JSON");
        assert_eq!(v["seq"], i as u64);
    }
    let whole: Vec<u8> = (0..2000u32).map(|i| (i % 251) as u8).collect();
    let constant = PayloadSpec::Constant {
        bytes: Arc::new(whole.clone()),
        size,
    };
    let mut g = PayloadGen::new(&constant, 9);
    assert!(g.is_shared());
    for (i, want) in expected(9).into_iter().enumerate() {
        assert_eq!(g.next(i as u64, 0), &whole[..want]);
    }
}
