//! The scan: E-Divisive's statistic Q̂ for every split of every cluster from running sums, and
//! the largest of them (the candidate). O(n²) for n values, whatever the points hold.

/// The values of every point in one array; point i holds `values[bounds[i]..bounds[i + 1]]`.
#[derive(Default)]
pub(super) struct Flat {
    pub values: Vec<f64>,
    pub bounds: Vec<usize>,
}

impl Flat {
    pub(super) fn of<P: IntoIterator<Item = f64>>(points: impl IntoIterator<Item = P>) -> Flat {
        let mut f = Flat {
            values: Vec::new(),
            bounds: vec![0],
        };
        for p in points {
            f.values.extend(p);
            f.bounds.push(f.values.len());
        }
        f
    }

    pub(super) fn points(&self) -> usize {
        self.bounds.len() - 1
    }

    pub(super) fn point(&self, i: usize) -> &[f64] {
        &self.values[self.bounds[i]..self.bounds[i + 1]]
    }

    /// The values of points [a, b).
    pub(super) fn range(&self, (a, b): (usize, usize)) -> &[f64] {
        &self.values[self.bounds[a]..self.bounds[b]]
    }

    /// This series with its points in `order`.
    pub(super) fn permuted(&self, order: &[usize], into: &mut Flat) {
        into.values.clear();
        into.bounds.clear();
        into.bounds.push(0);
        for &i in order {
            into.values.extend_from_slice(self.point(i));
            into.bounds.push(into.values.len());
        }
    }
}

/// A split of a cluster: X is [start, tau), Y is [tau, kappa), in points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Candidate {
    pub tau: usize,
    pub kappa: usize,
    pub q: f64,
}

/// Reused buffers of the scan and of the permutations.
#[derive(Default)]
pub(super) struct Scratch {
    /// Per value: the sum of distances within [value, current end).
    within: Vec<f64>,
    /// prefix[t]: the sum of distances within [0, B_t).
    prefix: Vec<f64>,
    /// 1 / C(c, 2) by count c.
    inv_pairs: Vec<f64>,
    pub order: Vec<usize>,
    pub permuted: Flat,
    /// Each permutation's largest statistic, for the tail beyond them.
    pub maxima: Vec<f64>,
}

/// The best candidate over the clusters (each [start, end) in points).
pub(super) fn best_over(
    flat: &Flat,
    clusters: &[(usize, usize)],
    min: usize,
    scratch: &mut Scratch,
) -> Option<Candidate> {
    (clusters.iter())
        .filter_map(|&c| best_split(flat, c, min, scratch))
        .fold(None, |best: Option<Candidate>, c| match best {
            Some(b) if b.q >= c.q => Some(b),
            _ => Some(c),
        })
}

/// The (τ, κ) of cluster [a, b) with the largest Q̂, each segment at least `min` points; None
/// when the cluster is too short to split.
pub(super) fn best_split(
    flat: &Flat,
    (a, b): (usize, usize),
    min: usize,
    sc: &mut Scratch,
) -> Option<Candidate> {
    let points = b - a;
    if points < 2 * min {
        return None;
    }
    let base = flat.bounds[a];
    let bound = |t: usize| flat.bounds[a + t] - base;
    let v = &flat.values[base..flat.bounds[b]];
    // within[i]: the sum of distances within values [i, current end), for every value i (the
    // scan reads it at the points' first values); one tight loop, whatever the points hold.
    sc.within.clear();
    sc.within.resize(v.len(), 0.0);
    sc.prefix.clear();
    sc.prefix.resize(points + 1, 0.0);
    // 1 / C(c, 2) for every count c of values (0 for fewer than two: no pairs, no mean).
    if sc.inv_pairs.len() <= v.len() {
        sc.inv_pairs = (0..=v.len())
            .map(|c| {
                if c > 1 {
                    2.0 / (c * (c - 1)) as f64
                } else {
                    0.0
                }
            })
            .collect();
    }
    let mut best: Option<Candidate> = None;
    for k in 1..=points {
        // Add point k − 1's values one by one: value j adds its distance to every earlier
        // value i to the within-sum of each segment [i, j) it extends.
        for j in bound(k - 1)..bound(k) {
            let (x, mut acc) = (v[j], 0.0);
            for (w, y) in sc.within[..j].iter_mut().zip(&v[..j]).rev() {
                acc += (x - y).abs();
                *w += acc;
            }
        }
        sc.prefix[k] = sc.within[0];
        // κ = k: every τ with at least `min` points on each side.
        if k < 2 * min {
            continue;
        }
        let end = bound(k);
        let (total, inv_all) = (sc.within[0], 1.0 / end as f64);
        for t in min..=k - min {
            let (m, n) = (bound(t), end - bound(t));
            if m == 0 || n == 0 {
                continue;
            }
            let (wx, wy) = (sc.prefix[t], sc.within[bound(t)]);
            let between = total - wx - wy;
            // Q̂ = mn/(m+n) · (2·between/(mn) − wx/C(m,2) − wy/C(n,2)), without a division.
            let (mf, nf) = (m as f64, n as f64);
            let q =
                inv_all * (2.0 * between - mf * nf * (wx * sc.inv_pairs[m] + wy * sc.inv_pairs[n]));
            if best.map_or(true, |c| q > c.q) {
                best = Some(Candidate {
                    tau: a + t,
                    kappa: a + k,
                    q,
                });
            }
        }
    }
    best
}
