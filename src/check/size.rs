//! A payload's `size:`: one size (`1KiB`), or a distribution the sizes are drawn from per
//! record: `uniform(100B, 4KiB)`, `lognormal(median: 1KiB, sigma: 0.8, max: 16KiB)`,
//! `choice([100B: 70%, 4KiB: 25%, 64KiB: 5%])`, `sizes("data/sizes.csv")`. Each is compiled
//! here, once, into the table the run draws from (`model::SizeTable`).

use std::sync::Arc;

use super::axis::Picks;
use super::size_file;
use super::Checker;
use crate::diagnostic::{suggest, Diagnostic, Kind};
use crate::format::human_bytes;
use crate::model::{
    json_smallest, PayloadSize, Scalar, SizeDist, SizeShape, SizeTable, LARGEST_PAYLOAD,
};
use crate::source::{Span, Spanned};
use crate::syntax::{Arg, Value, ValueKind};

/// The distributions `size:` takes.
const DISTRIBUTIONS: &[&str] = &["uniform", "lognormal", "choice", "sizes"];

/// A lognormal's sigma at most: at 4 the middle 95 % of sizes already spans a factor of 6 000,
/// so a larger one is a slipped digit.
const MAX_SIGMA: f64 = 4.0;

/// Sizes a `choice([...])` lists at most.
const MAX_CHOICES: usize = 10_000;

/// Shares of a `choice` sum to 100 % within this (they are written as percentages).
const SHARE_SLACK: f64 = 1e-9;

impl Checker<'_> {
    /// A payload's `size:` value: a size in range, or a distribution compiled. Every mistake
    /// is reported here; None then.
    pub(super) fn payload_size_arg(&mut self, v: &Value, ctx: &Picks) -> Option<PayloadSize> {
        let rv = self.resolve(v, ctx)?;
        match &rv.kind {
            ValueKind::Call { name, args } if name.node != "env" => self
                .size_distribution(name, args, rv.span, ctx)
                .map(PayloadSize::Drawn),
            _ => {
                let b = self.size(v, ctx, "size")?;
                self.one_size(b, rv.span, "a payload")
                    .map(PayloadSize::Fixed)
            }
        }
    }

    /// A size in range for a payload (1 B to 64 MiB); `what` names what it sizes.
    fn one_size(&mut self, b: u64, span: Span, what: &str) -> Option<usize> {
        if (1..=LARGEST_PAYLOAD as u64).contains(&b) {
            return Some(b as usize);
        }
        self.err(
            Diagnostic::new(
                Kind::Value,
                span,
                format!("{what} of {b} bytes is out of range"),
            )
            .label("here")
            .help("payload sizes go from 1B to 64MiB"),
        );
        None
    }

    fn size_distribution(
        &mut self,
        name: &Spanned<String>,
        args: &[Arg],
        span: Span,
        ctx: &Picks,
    ) -> Option<Arc<SizeDist>> {
        match name.node.as_str() {
            "uniform" => self.uniform_sizes(name, args, span, ctx).map(Arc::new),
            "lognormal" => self.lognormal_sizes(name, args, span, ctx).map(Arc::new),
            "choice" => self.choice_sizes(name, args, span, ctx).map(Arc::new),
            "sizes" => self.sizes_file(name, args, span, ctx),
            other => {
                self.err(
                    Diagnostic::new(
                        Kind::UnknownKey,
                        name.span,
                        format!("unknown size distribution `{other}`"),
                    )
                    .label("not a distribution")
                    .help(suggest(other, DISTRIBUTIONS, "distributions are")),
                );
                None
            }
        }
    }

    /// The sizes a call's arguments name, each checked in range: (name, size, its span).
    fn size_args(
        &mut self,
        args: &[(String, &Value)],
        ctx: &Picks,
        names: &[&str],
    ) -> (Vec<(String, usize, Span)>, bool) {
        let (mut out, mut ok) = (Vec::new(), true);
        for (k, v) in args {
            if !names.contains(&k.as_str()) {
                continue;
            }
            let span = self.resolve(v, ctx).map_or(v.span, |x| x.span);
            match self.size(v, ctx, &format!("`{k}`")) {
                Some(b) => match self.one_size(b, span, &format!("`{k}`")) {
                    Some(n) => out.push((k.clone(), n, span)),
                    None => ok = false,
                },
                None => ok = false,
            }
        }
        (out, ok)
    }

    /// `uniform(100B, 4KiB)`: every whole size from the first to the second alike.
    fn uniform_sizes(
        &mut self,
        name: &Spanned<String>,
        args: &[Arg],
        span: Span,
        ctx: &Picks,
    ) -> Option<SizeDist> {
        let a = self.call_args(name, args, &["min", "max"]);
        let (sizes, ok) = self.size_args(&a, ctx, &["min", "max"]);
        let get = |k: &str| sizes.iter().find(|s| s.0 == k).map(|s| (s.1, s.2));
        let (Some((min, _)), Some((max, max_span))) = (get("min"), get("max")) else {
            if ok {
                self.err(
                    Diagnostic::new(
                        Kind::Missing,
                        span,
                        "uniform() needs the smallest and the largest size",
                    )
                    .label("here")
                    .help("e.g. `size: uniform(100B, 4KiB)`"),
                );
            }
            return None;
        };
        if min > max {
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    max_span,
                    format!(
                        "the largest size ({}) is below the smallest ({})",
                        human_bytes(max as f64),
                        human_bytes(min as f64)
                    ),
                )
                .label("below the first")
                .help("write the smallest size first: `uniform(100B, 4KiB)`"),
            );
            return None;
        }
        let table = SizeTable::uniform(min, max)?;
        Some(SizeDist::new(SizeShape::Uniform { min, max }, table))
    }

    /// `lognormal(median: 1KiB, sigma: 0.8)`, clipped at `max` (64 MiB unless given) and at
    /// `min` (1 B unless given).
    fn lognormal_sizes(
        &mut self,
        name: &Spanned<String>,
        args: &[Arg],
        span: Span,
        ctx: &Picks,
    ) -> Option<SizeDist> {
        let a = self.call_args(name, args, &["median", "sigma", "max", "min"]);
        let (sizes, mut ok) = self.size_args(&a, ctx, &["median", "max", "min"]);
        let get = |k: &str| sizes.iter().find(|s| s.0 == k).map(|s| (s.1, s.2));
        let mut sigma = None;
        let mut sigma_written = false;
        for (k, v) in &a {
            if k != "sigma" {
                continue;
            }
            sigma_written = true;
            let vspan = self.resolve(v, ctx).map_or(v.span, |x| x.span);
            match self.scalar(v, ctx) {
                Some(Scalar::Number(s)) if s > 0.0 && s <= MAX_SIGMA => sigma = Some(s),
                Some(Scalar::Number(s)) if s <= 0.0 => {
                    ok = false;
                    self.err(
                        Diagnostic::new(Kind::Value, vspan, "sigma is above 0")
                            .label("no spread")
                            .help("one size for every record is `size: 1KiB`"),
                    );
                }
                Some(Scalar::Number(_)) => {
                    ok = false;
                    self.err(
                        Diagnostic::new(Kind::Value, vspan, format!("sigma is at most {MAX_SIGMA}"))
                            .label("too wide")
                            .help("sigma is the spread of ln(size): 0.5 is narrow, 1 wide, 2 very wide (the middle 95 % of sizes within a factor of 50 of the median)"),
                    );
                }
                Some(other) => {
                    ok = false;
                    self.err(
                        Diagnostic::new(
                            Kind::Type,
                            vspan,
                            format!("sigma is a plain number, not {}", other.kind_name()),
                        )
                        .label("expected e.g. `0.8`")
                        .help("sigma is the standard deviation of ln(size), without a unit"),
                    );
                }
                None => ok = false,
            }
        }
        let (Some((median, median_span)), Some(sigma)) = (get("median"), sigma) else {
            if ok {
                let missing = match (get("median").is_some(), sigma_written) {
                    (false, false) => "a median and a sigma",
                    (false, true) => "a median",
                    _ => "a sigma",
                };
                self.err(
                    Diagnostic::new(Kind::Missing, span, format!("lognormal() needs {missing}"))
                        .label("here")
                        .help("e.g. `size: lognormal(median: 1KiB, sigma: 0.8)`"),
                );
            }
            return None;
        };
        let max = get("max").unwrap_or((LARGEST_PAYLOAD, span));
        let min = get("min").unwrap_or((1, span));
        let clip = |(n, s): (usize, Span), side: &str| (n, s, side.to_string());
        for (bound, bound_span, side) in [clip(max, "max"), clip(min, "min")] {
            let wrong = if side == "max" {
                bound <= median
            } else {
                bound >= median
            };
            if wrong && ok {
                ok = false;
                let at = if bound_span == span {
                    median_span
                } else {
                    bound_span
                };
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        at,
                        format!(
                            "`{side}: {}` leaves the median ({}) outside the sizes drawn",
                            human_bytes(bound as f64),
                            human_bytes(median as f64)
                        ),
                    )
                    .label(format!("the {side} clip"))
                    .help("the clips bound the tails: `min` below the median, `max` above it"),
                );
            }
        }
        if !ok {
            return None;
        }
        let table = SizeTable::lognormal(median as f64, sigma, min.0, max.0)?;
        Some(SizeDist::new(
            SizeShape::Lognormal {
                median: median as f64,
                sigma,
                min: min.0,
                max: max.0,
            },
            table,
        ))
    }

    /// `choice([100B: 70%, 4KiB: 25%, 64KiB: 5%])`: each size with its share of the records.
    fn choice_sizes(
        &mut self,
        name: &Spanned<String>,
        args: &[Arg],
        span: Span,
        ctx: &Picks,
    ) -> Option<SizeDist> {
        let a = self.call_args(name, args, &["sizes"]);
        let example = "e.g. `size: choice([100B: 70%, 4KiB: 30%])`";
        let Some((_, list)) = a.into_iter().next() else {
            self.err(
                Diagnostic::new(
                    Kind::Missing,
                    span,
                    "choice() needs its sizes and their shares",
                )
                .label("here")
                .help(example),
            );
            return None;
        };
        let list = self.resolve(list, ctx)?;
        let ValueKind::List(items) = &list.kind else {
            self.err(
                Diagnostic::new(
                    Kind::Type,
                    list.span,
                    "choice() takes a list of sizes and their shares",
                )
                .label("not a list")
                .help(example),
            );
            return None;
        };
        if items.is_empty() {
            self.err(
                Diagnostic::new(Kind::EmptyList, list.span, "choice() has no sizes")
                    .label("empty list")
                    .help(example),
            );
            return None;
        }
        if items.len() > MAX_CHOICES {
            self.err(
                Diagnostic::new(
                    Kind::Limit,
                    list.span,
                    format!("choice() lists at most {MAX_CHOICES} sizes"),
                )
                .label("too many")
                .help("a histogram of a real topic's sizes is `sizes(\"data/sizes.csv\")`"),
            );
            return None;
        }
        let mut ok = true;
        let mut sizes: Vec<(usize, f64)> = Vec::new();
        for item in items {
            let ValueKind::Pair(size, share) = &item.kind else {
                ok = false;
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        item.span,
                        "each choice is a size and its share of the records",
                    )
                    .label("no share")
                    .help(format!(
                        "write `{}: 50%`",
                        self.sources.text(item.span).trim()
                    )),
                );
                continue;
            };
            let n = self
                .size(size, ctx, "a choice")
                .and_then(|b| self.one_size(b, size.span, "a choice"));
            let p = match self.scalar(share, ctx) {
                Some(Scalar::Ratio(r)) if r > 0.0 && r <= 1.0 => Some(r),
                Some(Scalar::Ratio(_)) => {
                    self.err(
                        Diagnostic::new(
                            Kind::Value,
                            share.span,
                            "a share is above 0% and at most 100%",
                        )
                        .label("out of range"),
                    );
                    None
                }
                Some(other) => {
                    self.err(
                        Diagnostic::new(
                            Kind::Type,
                            share.span,
                            format!("a share is a percentage, not {}", other.kind_name()),
                        )
                        .label("expected e.g. `25%`"),
                    );
                    None
                }
                None => None,
            };
            let (Some(n), Some(p)) = (n, p) else {
                ok = false;
                continue;
            };
            if sizes.iter().any(|(m, _)| *m == n) {
                ok = false;
                self.err(
                    Diagnostic::new(
                        Kind::Duplicate,
                        size.span,
                        format!("{} is listed twice", human_bytes(n as f64)),
                    )
                    .label("again")
                    .help("give each size once, with its whole share"),
                );
                continue;
            }
            sizes.push((n, p));
        }
        if !ok {
            return None;
        }
        let sum: f64 = sizes.iter().map(|s| s.1).sum();
        if (sum - 1.0).abs() > SHARE_SLACK {
            let shown = (sum * 1e6).round() / 1e4;
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    list.span,
                    format!("the shares add up to {shown}%, not 100%"),
                )
                .label("every record's size comes from this list")
                .help("give each size its share of the records, the shares adding up to 100%"),
            );
            return None;
        }
        sizes.sort_by_key(|s| s.0);
        let bins: Vec<(u32, u32, f64)> = sizes.iter().map(|&(n, p)| (n as u32, 1, p)).collect();
        let table = SizeTable::from_shares(&bins)?;
        Some(SizeDist::new(SizeShape::Choice { sizes }, table))
    }

    /// `sizes("data/sizes.csv")`: a histogram of a real topic's record sizes, `size,count` per
    /// line, read once however many cells use it.
    fn sizes_file(
        &mut self,
        name: &Spanned<String>,
        args: &[Arg],
        span: Span,
        ctx: &Picks,
    ) -> Option<Arc<SizeDist>> {
        let a = self.call_args(name, args, &["path"]);
        let Some((_, val)) = a.into_iter().next() else {
            self.err(
                Diagnostic::new(
                    Kind::Missing,
                    span,
                    "sizes() needs the file of sizes and counts",
                )
                .label("here")
                .help("e.g. `size: sizes(\"data/sizes.csv\")`, a `size,count` line per size"),
            );
            return None;
        };
        let Some(Scalar::Str(p)) = self.scalar(val, ctx) else {
            self.err(
                Diagnostic::new(Kind::Type, val.span, "sizes() takes a path string")
                    .label("expected \"path\""),
            );
            return None;
        };
        let path = self.scenario_path(&p, val);
        let loaded = self
            .size_files
            .entry(path.clone())
            .or_insert_with(|| size_file::load(&path))
            .clone();
        match loaded {
            Ok(d) => Some(d),
            Err(unusable) => {
                let help = if unusable.in_content {
                    size_file::FORMAT.to_string()
                } else {
                    self.relative_paths_help(val.span)
                };
                self.err(
                    Diagnostic::new(
                        Kind::PayloadFile,
                        val.span,
                        format!("cannot use sizes file {}: {}", path.display(), unusable.why),
                    )
                    .label("this file")
                    .help(help),
                );
                None
            }
        }
    }

    /// A `json` payload's records are at least their header: a size (or a distribution
    /// reaching one) below it could not be honoured. `span` is the size's.
    pub(super) fn json_fits(&mut self, size: &PayloadSize, event: &str, span: Span) -> bool {
        let least = json_smallest(event);
        let smallest = size.smallest();
        if smallest >= least {
            return true;
        }
        let fix = match size.dist().map(|d| &d.shape) {
            None => format!(
                "write `size: {least}B` or more, or use `random(size: {smallest}B)` for smaller records"
            ),
            Some(SizeShape::Lognormal { .. }) => {
                format!("clip the distribution there: `lognormal(..., min: {least}B)`")
            }
            Some(SizeShape::Uniform { max, .. }) => {
                format!("start the range there: `uniform({least}B, {})`", human_bytes(*max as f64))
            }
            Some(SizeShape::Choice { .. }) => format!("list sizes of {least}B or more"),
            Some(SizeShape::Sizes { .. }) => {
                format!("the file has sizes from {smallest}B; `random(size: sizes(...))` sends any size")
            }
        };
        let what = if size.dist().is_some() {
            format!("this distribution draws sizes from {smallest}B")
        } else {
            format!("a JSON record of {smallest}B")
        };
        self.err(
            Diagnostic::new(
                Kind::Value,
                span,
                format!(
                    "{what}, but a `json` record of event `{event}` is at least {least}B (its fields before the filler)"
                ),
            )
            .label("smaller than the JSON record's header")
            .help(fix),
        );
        false
    }
}
