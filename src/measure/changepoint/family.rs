//! The figures of a series as one family: each figure's hierarchical search, held to the
//! levels of Holm's step-down across the figures, then its segments summarised and the
//! changes too small to report merged away.
//!
//! Holm (1979): the K figures that have a candidate are ordered by their strongest
//! candidate's p-value (ties, all at the permutations' floor, by the tail's estimate); the
//! j-th is significant when it and every one before it reach α/(K − j + 1), and the first
//! that does not ends the step-down: it and every figure after it have no change point. A
//! figure that passed goes on splitting, each further candidate held to the level its first
//! one passed at. With no change in any figure, a change point needs some figure's first
//! candidate to pass, which Holm keeps to probability α under any dependence between the
//! figures (ack p50 and p99 move together).

use super::permutation::{test, Tested};
use super::scan::{best_over, Candidate, Flat, Scratch};
use super::{ChangePoint, Scale, Settings};
use crate::measure::stats::median;
use crate::random::Rng;

/// One figure of a family: its points (each one value or a run's trials), its scale, and the
/// seed of its permutations (the same figure gets the same answer whatever else is searched).
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub points: &'a [Vec<f64>],
    pub scale: Scale,
    pub seed: u64,
}

/// What the search found in one figure.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Found {
    /// The change points reported, in order of index.
    pub change_points: Vec<ChangePoint>,
    /// Significant changes smaller than the minimum effect, not reported (each as it was
    /// when merged away).
    pub small: Vec<ChangePoint>,
    /// The stretches between the reported change points with their summaries.
    pub segments: Vec<Segment>,
    /// The scale searched (Linear when a value was not positive).
    pub scale: Scale,
    /// The level the figure's first candidate passed at; None when it did not.
    pub level: Option<f64>,
    /// The permutations a candidate that could reach its level drew in this family.
    pub permutations: usize,
}

/// Points [start, end) between two change points (or an end of the series), and their
/// summary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub summary: f64,
}

/// Searches every figure, with Holm's levels across them. The figures' searches are
/// independent (each its own seeded permutations), so they run on the machine's cores at once
/// and give the same answer as one after another.
pub fn family(inputs: &[Input], s: &Settings) -> Vec<Found> {
    let mut searches: Vec<Search> = inputs.iter().map(|i| Search::new(i, s)).collect();
    let firsts: Vec<Option<Candidate>> = searches.iter_mut().map(Search::candidate).collect();
    let k = firsts.iter().flatten().count();
    let r = s.permutations_for(k);
    // Every first candidate at α, the loosest level any figure can get: one that cannot
    // reach it stops after a few permutations.
    let tested: Vec<Option<Tested>> = each(&mut searches, |i, x| {
        firsts[i].map(|c| x.test(c, s.alpha, r))
    });
    let mut ranked: Vec<(usize, Candidate, Tested)> = (0..searches.len())
        .filter_map(|i| Some((i, firsts[i]?, tested[i]?)))
        .collect();
    let strength = |t: &Tested| (t.p, t.tail.unwrap_or(t.p));
    ranked.sort_by(|a, b| {
        let (x, y) = (strength(&a.2), strength(&b.2));
        (x.0.total_cmp(&y.0))
            .then(x.1.total_cmp(&y.1))
            .then(a.0.cmp(&b.0))
    });
    for (j, &(i, c, t)) in ranked.iter().enumerate() {
        let level = s.alpha / (k - j) as f64;
        if t.p > level {
            break;
        }
        searches[i].level = Some(level);
        searches[i].split(c, t, level);
    }
    // Each figure that passed goes on splitting at its level.
    each(&mut searches, |_, search| {
        let Some(level) = search.level else { return };
        while let Some(c) = search.candidate() {
            let t = search.test(c, level, r);
            if t.p > level {
                break;
            }
            search.split(c, t, level);
        }
    });
    (searches.into_iter())
        .map(|x| x.finish(s.min_effect, r))
        .collect()
}

/// `f` over every item (with its index), on up to as many threads as the machine has cores;
/// the results in the items' order.
fn each<T: Send, R: Send>(items: &mut [T], f: impl Fn(usize, &mut T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads <= 1 || items.len() <= 1 {
        return (items.iter_mut().enumerate())
            .map(|(i, x)| f(i, x))
            .collect();
    }
    let workers = threads.min(items.len());
    let queue = std::sync::Mutex::new(items.iter_mut().enumerate());
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let next = queue.lock().map(|mut q| q.next());
                let Ok(Some((i, x))) = next else { break };
                let r = f(i, x);
                if let Ok(mut d) = done.lock() {
                    d.push((i, r));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_default();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// One figure's search.
struct Search {
    /// The values as given (NaN left out), and as searched (their logarithms on a log scale).
    values: Flat,
    keyed: Flat,
    scale: Scale,
    min: usize,
    /// The change points so far, and the ends of the series: the clusters' bounds.
    cuts: Vec<usize>,
    found: Vec<(usize, Tested, f64, f64)>,
    level: Option<f64>,
    rng: Rng,
    scratch: Scratch,
}

impl Search {
    fn new(input: &Input, s: &Settings) -> Search {
        let kept = || (input.points.iter()).map(|p| p.iter().copied().filter(|v| !v.is_nan()));
        let values = Flat::of(kept());
        let log = input.scale == Scale::Log && values.values.iter().all(|v| *v > 0.0);
        let keyed = if log {
            Flat::of(kept().map(|p| p.map(f64::ln)))
        } else {
            Flat::of(kept())
        };
        Search {
            cuts: vec![0, values.points()],
            values,
            keyed,
            scale: if log { Scale::Log } else { Scale::Linear },
            min: s.min_size.max(1),
            found: Vec::new(),
            level: None,
            rng: Rng::new(input.seed),
            scratch: Scratch::default(),
        }
    }

    fn clusters(&self) -> Vec<(usize, usize)> {
        self.cuts.windows(2).map(|w| (w[0], w[1])).collect()
    }

    /// The best split over the clusters; None when there is nothing to test (a constant
    /// series, or clusters too short to split).
    fn candidate(&mut self) -> Option<Candidate> {
        let clusters = self.clusters();
        best_over(&self.keyed, &clusters, self.min, &mut self.scratch).filter(|c| c.q > 0.0)
    }

    fn test(&mut self, c: Candidate, level: f64, r: usize) -> Tested {
        let clusters = self.clusters();
        test(
            &self.keyed,
            &clusters,
            c.q,
            level,
            r,
            self.min,
            &mut self.rng,
            &mut self.scratch,
        )
    }

    fn split(&mut self, c: Candidate, t: Tested, level: f64) {
        self.found.push((c.tau, t, c.q, level));
        let at = self.cuts.partition_point(|x| *x < c.tau);
        self.cuts.insert(at, c.tau);
    }

    /// The summary of points [a, b).
    fn summary(&self, range: (usize, usize)) -> f64 {
        let v = self.values.range(range);
        match self.scale {
            Scale::Linear => median(v).unwrap_or(f64::NAN),
            Scale::Log => (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp(),
        }
    }

    /// The change points with their segments' summaries; those whose change is under
    /// `min_effect` merged away, the smallest first (its neighbours' segments grow, and are
    /// summarised again).
    fn finish(mut self, min_effect: f64, r: usize) -> Found {
        self.found.sort_by_key(|f| f.0);
        let n = self.values.points();
        let mut small = Vec::new();
        let point = |me: &Search, found: &[(usize, Tested, f64, f64)], k: usize| {
            let (index, t, q, level) = found[k];
            let start = if k == 0 { 0 } else { found[k - 1].0 };
            let end = found.get(k + 1).map_or(n, |f| f.0);
            ChangePoint {
                index,
                p_value: t.p,
                p_tail: t.tail,
                level,
                permutations: t.drawn,
                statistic: q,
                before: me.summary((start, index)),
                after: me.summary((index, end)),
                points_before: index - start,
                points_after: end - index,
            }
        };
        loop {
            let weakest = (0..self.found.len())
                .map(|k| (k, effect(&point(&self, &self.found, k))))
                .filter(|(_, e)| *e < min_effect)
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let Some((k, _)) = weakest else { break };
            small.push(point(&self, &self.found, k));
            self.found.remove(k);
        }
        let change_points: Vec<ChangePoint> = (0..self.found.len())
            .map(|k| point(&self, &self.found, k))
            .collect();
        let mut bounds: Vec<usize> = change_points.iter().map(|c| c.index).collect();
        bounds.insert(0, 0);
        bounds.push(n);
        let segments = (bounds.windows(2))
            .filter(|w| w[1] > w[0])
            .map(|w| Segment {
                start: w[0],
                end: w[1],
                summary: self.summary((w[0], w[1])),
            })
            .collect();
        small.sort_by_key(|c| c.index);
        Found {
            change_points,
            small,
            segments,
            scale: self.scale,
            level: self.level,
            permutations: r,
        }
    }
}

/// How far a change moved its figure, relative to the level before: |after / before − 1|;
/// infinite from 0 to anything else, 0 from 0 to 0.
fn effect(c: &ChangePoint) -> f64 {
    if c.before == 0.0 {
        if c.after == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        ((c.after - c.before) / c.before).abs()
    }
}
