//! `capacity { }`: a search for the highest rate a run sustains within its SLO. Its settings
//! are flattened like any section's (a step may override `capacity.to`); its `slo { }` is
//! checked once, like `expect`, and each cell keeps the conditions whose `when` admits it.

use std::time::Duration;

use super::axis::{Axis, CapacityBlock, Picks};
use super::{expect, Checker, Setting};
use crate::diagnostic::{suggest, Diagnostic, Kind};
use crate::model::capacity::*;
use crate::model::{Assertion, Cell, Expr, Metric, Scalar, Test};
use crate::source::Span;
use crate::syntax;

pub(super) const CAPACITY_KEYS: &[&str] = &[
    "from",
    "to",
    "precision",
    "probe",
    "warmup",
    "trials",
    "budget",
    "tolerance",
    "reliability",
    "probes",
    "hold",
];

/// What a search sets on the workload: written there too, it is refused.
const SET_BY_SEARCH: &[&str] = &["rate", "messages", "duration", "warmup"];

impl CapacityBlock {
    /// The block of `sec` (a `capacity` section): its span and its `slo { }` entries.
    pub(super) fn of(c: &mut Checker, sec: &syntax::Section) -> CapacityBlock {
        let mut slo = Vec::new();
        let mut seen: Option<Span> = None;
        for e in &sec.entries {
            if let syntax::Entry::Slo(a, span) = e {
                if seen.is_some() {
                    c.err(
                        Diagnostic::new(Kind::Duplicate, *span, "`slo` is declared twice")
                            .label("second declaration")
                            .help("merge the two `slo` blocks into one"),
                    );
                    continue;
                }
                seen = Some(*span);
                slo.extend(a.iter().cloned());
            }
        }
        CapacityBlock {
            span: sec.name.span,
            slo,
            checked: None,
        }
    }
}

/// The settings of a `capacity { }` block, each with where it was written.
#[derive(Default)]
pub(super) struct CapacityDraft {
    from: Option<(f64, Span)>,
    to: Option<(f64, Span)>,
    precision: Option<f64>,
    probe: Option<Duration>,
    warmup: Option<Duration>,
    trials: Option<u32>,
    budget: Option<Duration>,
    tolerance: Option<f64>,
    reliability: Option<f64>,
    probes: Option<u32>,
    hold: Option<(Duration, Span)>,
    /// A `capacity.*` setting was seen (a step may make its cells a search with one).
    pub(super) any: bool,
}

impl Checker<'_> {
    /// Checks each SLO condition of a block once: no selector (a probe reads only itself),
    /// not `capacity` (what the search finds), then as an assertion.
    pub(super) fn check_slo(&mut self, b: &mut CapacityBlock, axes: &[Axis], consumer: bool) {
        let before = self.diags.len();
        let mut out = Vec::new();
        for a in &b.slo {
            let mut fine = true;
            for e in exprs(a) {
                fine &= self.slo_refs(e);
            }
            if fine {
                if let Some(x) = expect::assertion(self, a, axes, consumer) {
                    if self.broker_fits(&x, true) {
                        out.push(x);
                    }
                }
            }
        }
        b.checked = (self.diags.len() == before).then_some(out);
    }

    /// Refuses what an SLO cannot read; true when `e` is fine.
    fn slo_refs(&mut self, e: &syntax::Expr) -> bool {
        match e {
            syntax::Expr::Literal(_) => true,
            syntax::Expr::Binary(l, _, r, _) => self.slo_refs(l) & self.slo_refs(r),
            syntax::Expr::Metric(m) => {
                if m.name.node == "capacity" {
                    self.err(
                        Diagnostic::new(
                            Kind::Value,
                            m.name.span,
                            "an SLO cannot ask for the capacity: the search finds it",
                        )
                        .label("what the search finds")
                        .help("assert it in `expect { }`, e.g. `capacity > 100k/s`"),
                    );
                    return false;
                }
                if let (Some((first, _)), Some((last, _))) = (m.select.first(), m.select.last()) {
                    self.err(
                        Diagnostic::new(
                            Kind::Value,
                            first.span.to(last.span),
                            "an SLO condition reads the probe it judges, not another run",
                        )
                        .label("a selector")
                        .help(format!(
                            "write `{}` alone; compare runs in `expect {{ }}`",
                            m.name.node
                        )),
                    );
                    return false;
                }
                true
            }
        }
    }

    /// One `capacity` setting into the draft.
    pub(super) fn capacity_key(&mut self, d: &mut CapacityDraft, e: &Setting, ctx: &Picks) {
        d.any = true;
        let span = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
        match e.key.node.as_str() {
            k @ ("from" | "to") => {
                let r = self.search_rate(e, ctx, k).map(|r| (r, span));
                if k == "from" {
                    d.from = r
                } else {
                    d.to = r
                }
            }
            "precision" => d.precision = self.fraction(e, ctx, "precision", 0.5, "2%"),
            "tolerance" => d.tolerance = self.fraction(e, ctx, "tolerance", 0.5, "5%"),
            "probe" => d.probe = self.span_of_time(e, ctx, "a probe", false),
            "warmup" if super::workload::is_auto(&e.value) => self.err(
                Diagnostic::new(
                    Kind::Value,
                    e.value.span,
                    "a probe's warm-up is a duration, not `auto`",
                )
                .label("every probe warms up alike")
                .help("write e.g. `warmup = 2s`; `warmup = auto` is for a run's `workload { }`"),
            ),
            "warmup" => d.warmup = self.span_of_time(e, ctx, "a probe's warm-up", true),
            "budget" => d.budget = self.span_of_time(e, ctx, "the budget", false),
            "hold" => {
                d.hold = self
                    .span_of_time(e, ctx, "`hold`", false)
                    .map(|h| (h, span))
            }
            "reliability" => {
                d.reliability = self
                    .fraction(e, ctx, "reliability", 0.99, "80%")
                    .and_then(|f| self.at_least_half(f, span))
            }
            "probes" => {
                d.probes = self
                    .count(&e.value, ctx, "probes", 3..=1000)
                    .map(|n| n as u32)
            }
            "trials" => {
                d.trials = self
                    .count(&e.value, ctx, "trials", 1..=20)
                    .map(|n| n as u32)
            }
            key => self.err(
                Diagnostic::new(
                    Kind::UnknownKey,
                    e.key.span,
                    format!("unknown capacity setting `{key}`"),
                )
                .label("not a capacity setting")
                .help(suggest(key, CAPACITY_KEYS, "capacity settings are")),
            ),
        }
    }

    /// `from`/`to`: records per second (a byte rate is refused: the search steps record rates).
    fn search_rate(&mut self, e: &Setting, ctx: &Picks, what: &str) -> Option<f64> {
        let span = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
        match self.scalar(&e.value, ctx)? {
            Scalar::Rate(r) if r > 0.0 => Some(r),
            Scalar::Rate(_) => {
                self.err(
                    Diagnostic::new(Kind::Value, span, format!("`{what}` must be above 0/s"))
                        .label("no record would be sent")
                        .help("e.g. `from = 1000/s`"),
                );
                None
            }
            other => {
                let help = if matches!(other, Scalar::ByteRate(_)) {
                    "the search steps record rates: write records per second, e.g. `50k/s`"
                } else {
                    "e.g. `from = 10k/s`, `to = 1M/s`"
                };
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        span,
                        format!("`{what}` is a rate, not {}", other.kind_name()),
                    )
                    .label("expected records per second")
                    .help(help),
                );
                None
            }
        }
    }

    /// A percentage above 0 and at most `max`.
    fn fraction(
        &mut self,
        e: &Setting,
        ctx: &Picks,
        what: &str,
        max: f64,
        example: &str,
    ) -> Option<f64> {
        let span = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
        match self.scalar(&e.value, ctx)? {
            Scalar::Ratio(f) if f > 0.0 && f <= max => Some(f),
            Scalar::Ratio(_) => {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        span,
                        format!("{what} is above 0% and at most {}%", max * 100.0),
                    )
                    .label("out of range")
                    .help(format!("e.g. `{what} = {example}`")),
                );
                None
            }
            Scalar::Number(n) => {
                let fix = if n > 0.0 && n < 1.0 { n * 100.0 } else { n };
                self.err(
                    Diagnostic::new(Kind::Unit, span, format!("{what} is a percentage"))
                        .label("a bare number")
                        .help(format!("write `{what} = {fix}%`")),
                );
                None
            }
            other => {
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        span,
                        format!("{what} is a percentage, not {}", other.kind_name()),
                    )
                    .label("expected a percentage")
                    .help(format!("e.g. `{what} = {example}`")),
                );
                None
            }
        }
    }

    /// A reliability below one half would call a rate that mostly fails a capacity.
    fn at_least_half(&mut self, f: f64, span: Span) -> Option<f64> {
        if f >= 0.5 {
            return Some(f);
        }
        self.err(
            Diagnostic::new(Kind::Value, span, "reliability is at least 50%")
                .label("out of range")
                .help("the share of probes the SLO must hold in at the capacity, e.g. `80%`"),
        );
        None
    }

    /// A duration above 0 (or 0 itself when `zero`), at most a day.
    fn span_of_time(
        &mut self,
        e: &Setting,
        ctx: &Picks,
        what: &str,
        zero: bool,
    ) -> Option<Duration> {
        let span = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
        let d = self.duration(&e.value, ctx, e.key.node.as_str())?;
        let problem = if d.is_zero() && !zero {
            Some(format!("{what} must be longer than 0s"))
        } else if d > Duration::from_secs(86_400) {
            Some(format!("{what} lasts at most 1 day"))
        } else {
            None
        };
        match problem {
            Some(p) => {
                self.err(Diagnostic::new(Kind::Value, span, p).label("out of range"));
                None
            }
            None => Some(d),
        }
    }

    /// The search of one cell, from its block (if any) and its `capacity.*` settings; None when
    /// the cell is not a search or it did not check. The workload's `rate`, `messages`,
    /// `duration` and `warmup` are each probe's, so writing them is refused.
    pub(super) fn finish_capacity(
        &mut self,
        d: CapacityDraft,
        block: Option<&CapacityBlock>,
        settings: &[Setting],
    ) -> Option<Option<CapacitySearch>> {
        if block.is_none() && !d.any {
            return Some(None);
        }
        let before = self.diags.len();
        for s in settings {
            if s.section == "workload" && SET_BY_SEARCH.contains(&s.key.node.as_str()) {
                let key = s.key.node.as_str();
                let instead = match key {
                    "rate" => "the search sets each probe's rate",
                    "warmup" => "each probe warms up for `capacity.warmup`",
                    _ => "each probe lasts `capacity.probe`",
                };
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        s.key.span,
                        format!("`{key}` cannot be set in a capacity search"),
                    )
                    .label("set by the search")
                    .help(format!("remove it: {instead}")),
                );
            }
        }
        // Without `from`, a low `to` still leaves room to bracket.
        let from = d.from.map_or(
            DEFAULT_FROM.min(d.to.map_or(f64::MAX, |t| t.0 / 8.0)),
            |f| f.0,
        );
        let to = d.to.map_or(DEFAULT_TO.max(from * 2.0), |t| t.0);
        if let (Some((f, _)), Some((t, span))) = (d.from, d.to) {
            if t <= f {
                self.err(
                    Diagnostic::new(Kind::Value, span, "`to` must be above `from`")
                        .label("not above `from`")
                        .help("the search probes rates from `from` up to `to`"),
                );
            }
        }
        let probe = d.probe.unwrap_or(DEFAULT_PROBE);
        if let Some((hold, span)) = d.hold {
            self.check_hold(hold, probe, span);
        }
        let block_span = block.map_or(Span::default(), |b| b.span);
        let slo = match block {
            Some(b) => b.checked.clone()?,
            None => Vec::new(),
        };
        (self.diags.len() == before).then(|| {
            Some(CapacitySearch {
                from,
                to,
                precision: d.precision.unwrap_or(DEFAULT_PRECISION),
                probe,
                warmup: d.warmup.unwrap_or(DEFAULT_WARMUP),
                trials: d.trials.unwrap_or(1),
                reliability: d.reliability.unwrap_or(DEFAULT_RELIABILITY),
                probes: d.probes.unwrap_or(DEFAULT_PROBES),
                budget: d.budget,
                hold: d.hold.map(|h| h.0),
                tolerance: d.tolerance.unwrap_or(DEFAULT_TOLERANCE),
                slo,
                span: block_span,
            })
        })
    }
}

impl Checker<'_> {
    /// `hold` asks for longer probes than the short ones, long enough for the steady-state
    /// detector's intervals.
    fn check_hold(&mut self, hold: Duration, probe: Duration, span: Span) {
        let secs = |d: Duration| crate::format::human_duration(d.as_secs_f64());
        let problem = if hold <= probe {
            Some((
                format!("`hold` must be longer than `probe` ({})", secs(probe)),
                "not longer than a probe",
            ))
        } else if hold < MIN_HOLD {
            Some((
                format!("`hold` is at least {}", secs(MIN_HOLD)),
                "too short to judge",
            ))
        } else {
            None
        };
        if let Some((message, label)) = problem {
            self.err(
                Diagnostic::new(Kind::Value, span, message)
                    .label(label)
                    .help(
                        "`hold` asks for a rate that holds longer than a broker host keeps \
                         writes in its page cache (`vm.dirty_expire_centisecs`, 30s by \
                         default on Linux): e.g. `hold = 60s`",
                    ),
            );
        }
    }

    /// `capacity` in `expect` when no cell searches: it would never be measured.
    pub(super) fn capacity_unsearched(&mut self, assertions: &[Assertion], cells: &[Cell]) {
        if cells.iter().any(|c| c.spec.capacity.is_some()) {
            return;
        }
        for a in assertions {
            let mut spans = Vec::new();
            capacity_refs(&a.lhs, &mut spans);
            match &a.test {
                Test::Compare(_, r) => capacity_refs(r, &mut spans),
                Test::Within(l, h) => {
                    capacity_refs(l, &mut spans);
                    capacity_refs(h, &mut spans);
                }
            }
            for span in spans {
                self.err(
                    Diagnostic::new(
                        Kind::Missing,
                        span,
                        "no run searches for its capacity, so `capacity` is never measured",
                    )
                    .label("needs `capacity { }`")
                    .help("add `capacity { slo { e2e.p99 < 20ms } }` to search for the highest rate within an SLO"),
                );
            }
        }
    }
}

/// Where `e` reads `capacity`.
fn capacity_refs(e: &Expr, out: &mut Vec<Span>) {
    match e {
        Expr::Metric {
            metric: Metric::Capacity,
            span,
            ..
        } => out.push(*span),
        Expr::Binary(l, _, r) => {
            capacity_refs(l, out);
            capacity_refs(r, out);
        }
        _ => {}
    }
}

/// The expressions of an assertion, every side.
fn exprs(a: &syntax::Assertion) -> Vec<&syntax::Expr> {
    let mut v = vec![&a.lhs];
    match &a.test {
        syntax::Test::Compare(_, r) => v.push(r),
        syntax::Test::Within(l, h) => v.extend([l, h]),
    }
    v
}
