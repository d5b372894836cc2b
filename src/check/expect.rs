//! Assertions: metric names, units and cell references are checked here, once per assertion.

use super::axis::Axis;
use super::{units, Checker};
use crate::diagnostic::{closest, suggest, Diagnostic, Kind};
use crate::model::{
    Assertion, BinOp, Clause, CmpOp, Expr, LatencyKind, Metric, Scalar, Stat, Test, Unit,
};
use crate::syntax::{self, ClauseOp, ValueKind};

/// Names offered in "did you mean" (the percentile families accept any `pNN`).
pub const METRIC_NAMES: &[&str] = &[
    "sent",
    "acked",
    "failed",
    "queue_full",
    "consumed",
    "lost",
    "duplicated",
    "reordered",
    "elapsed",
    "steady_after",
    "throughput",
    "throughput.bytes",
    "rate.target",
    "rate.achieved",
    "disk.bytes",
    "disk.ratio",
    "batch.bytes",
    "batch.records",
    "request.records",
    "wire.ratio",
    "ack.p50",
    "ack.p90",
    "ack.p99",
    "ack.p999",
    "ack.max",
    "ack.mean",
    "e2e.p50",
    "e2e.p90",
    "e2e.p99",
    "e2e.p999",
    "e2e.max",
    "e2e.mean",
    "service.p50",
    "service.p99",
    "send_delay.p50",
    "send_delay.p99",
    "send_delay.max",
    "ack.median",
    "e2e.median",
    "consume.throughput",
    "consume.throughput.bytes",
    "lag.max",
    "rebalance.time",
    "rebalance.count",
    "rebalance.stall",
    "redelivered",
    "fetch.requests",
    "fetch.bytes",
    "drain.time",
    "drain.ack.p50",
    "drain.ack.p99",
    "drain.ack.max",
    "drain.e2e.p99",
    "backlog.cold",
    "first_record.time",
    "fetch.rtt",
    "fetch.rtt.max",
    "txn.committed",
    "txn.aborted",
    "txn.commit.p50",
    "txn.commit.p99",
    "txn.commit.max",
    "aborted.read",
    "unavailable.time",
    "recovery.time",
    "fault.ack.p50",
    "fault.ack.p99",
    "fault.ack.max",
    "fault.e2e.p99",
    "fault.failed",
    "capacity",
    "share.accepted",
    "share.released",
    "share.rejected",
    "share.archived",
    "share.redelivered",
    "share.lock_timeouts",
    "share.delivery.max",
    "share.ack.p50",
    "share.ack.p99",
    "share.ack.max",
    "compaction.keys",
    "compaction.surviving",
    "compaction.lost",
    "compaction.missing",
    "compaction.resurrected",
    "compaction.tombstones_left",
    "compaction.ratio",
    "compaction.time",
    "compression.rate",
    "buffer.available.min",
    "bufferpool.wait",
    "record_error.rate",
];

pub fn parse_metric(name: &str) -> Option<Metric> {
    Some(match name {
        "sent" => Metric::Sent,
        "acked" => Metric::Acked,
        "failed" => Metric::Failed,
        "queue_full" => Metric::QueueFull,
        "consumed" => Metric::Consumed,
        "lost" => Metric::Lost,
        "duplicated" => Metric::Duplicated,
        "reordered" => Metric::Reordered,
        "elapsed" => Metric::Elapsed,
        "steady_after" => Metric::SteadyAfter,
        "throughput" => Metric::Throughput,
        "throughput.bytes" => Metric::ThroughputBytes,
        "rate.target" => Metric::RateTarget,
        "rate.achieved" => Metric::RateAchieved,
        "disk.bytes" => Metric::DiskBytes,
        "disk.ratio" => Metric::DiskRatio,
        "batch.bytes" => Metric::BatchBytes,
        "batch.records" => Metric::BatchRecords,
        "request.records" => Metric::RequestRecords,
        "wire.ratio" => Metric::WireRatio,
        "consume.throughput" => Metric::ConsumeThroughput,
        "consume.throughput.bytes" => Metric::ConsumeThroughputBytes,
        "lag.max" => Metric::LagMax,
        "rebalance.time" => Metric::RebalanceTime,
        "rebalance.count" => Metric::RebalanceCount,
        "rebalance.stall" => Metric::RebalanceStall,
        "redelivered" => Metric::Redelivered,
        "fetch.requests" => Metric::FetchRequests,
        "fetch.bytes" => Metric::FetchBytes,
        "drain.time" => Metric::DrainTime,
        "backlog.cold" => Metric::BacklogCold,
        "first_record.time" => Metric::FirstRecordTime,
        "fetch.rtt" => Metric::FetchRtt,
        "fetch.rtt.max" => Metric::FetchRttMax,
        "txn.committed" => Metric::TxnCommitted,
        "txn.aborted" => Metric::TxnAborted,
        "aborted.read" => Metric::AbortedRead,
        "unavailable.time" => Metric::UnavailableTime,
        "recovery.time" => Metric::RecoveryTime,
        "fault.failed" => Metric::FaultFailed,
        "capacity" => Metric::Capacity,
        "compaction.keys" => Metric::CompactionKeys,
        "compaction.surviving" => Metric::CompactionSurviving,
        "compaction.lost" => Metric::CompactionLost,
        "compaction.missing" => Metric::CompactionMissing,
        "compaction.resurrected" => Metric::CompactionResurrected,
        "compaction.tombstones_left" => Metric::CompactionTombstonesLeft,
        "compaction.ratio" => Metric::CompactionRatio,
        "compaction.time" => Metric::CompactionTime,
        "compression.rate" => Metric::ClientCompressionRate,
        "buffer.available.min" => Metric::ClientBufferAvailable,
        "bufferpool.wait" => Metric::ClientBufferWait,
        "record_error.rate" => Metric::ClientRecordErrors,
        "share.accepted" => Metric::ShareAccepted,
        "share.released" => Metric::ShareReleased,
        "share.rejected" => Metric::ShareRejected,
        "share.archived" => Metric::ShareArchived,
        "share.redelivered" => Metric::ShareRedelivered,
        "share.lock_timeouts" => Metric::ShareLockTimeouts,
        "share.delivery.max" => Metric::ShareDeliveryMax,
        _ => {
            if let Some(rest) = name.strip_prefix("share.ack.") {
                return Some(Metric::Latency(LatencyKind::ShareAck, parse_stat(rest)?));
            }
            if let Some(rest) = name.strip_prefix("txn.commit.") {
                return Some(Metric::Latency(LatencyKind::TxnCommit, parse_stat(rest)?));
            }
            if let Some(rest) = name.strip_prefix("fault.") {
                return match parse_metric(rest)? {
                    Metric::Latency(kind @ (LatencyKind::Ack | LatencyKind::E2e), stat) => {
                        Some(Metric::FaultLatency(kind, stat))
                    }
                    _ => None,
                };
            }
            if let Some(rest) = name.strip_prefix("drain.") {
                return match parse_metric(rest)? {
                    Metric::Latency(kind @ (LatencyKind::Ack | LatencyKind::E2e), stat) => {
                        Some(Metric::DrainLatency(kind, stat))
                    }
                    _ => None,
                };
            }
            let (family, stat) = name.split_once('.')?;
            let kind = match family {
                "ack" => LatencyKind::Ack,
                "e2e" => LatencyKind::E2e,
                "service" => LatencyKind::Service,
                "send_delay" => LatencyKind::SendDelay,
                _ => return None,
            };
            Metric::Latency(kind, parse_stat(stat)?)
        }
    })
}

/// `p50` → 50, `p999` → 99.9, `p9999` → 99.99, `p99.9` → 99.9 (the dot as people write it),
/// plus min/max/mean and `median` (the median is p50, not the mean).
fn parse_stat(s: &str) -> Option<Stat> {
    match s {
        "min" => return Some(Stat::Min),
        "max" => return Some(Stat::Max),
        "mean" | "avg" => return Some(Stat::Mean),
        "median" => return Some(Stat::Percentile(50.0)),
        _ => {}
    }
    let digits = s.strip_prefix('p')?;
    if let Some((whole, fraction)) = digits.split_once('.') {
        let plain =
            |d: &str| !d.is_empty() && d.len() <= 4 && d.bytes().all(|b| b.is_ascii_digit());
        if !plain(whole) || !plain(fraction) {
            return None;
        }
        let pct: f64 = digits.parse().ok()?;
        return (pct > 0.0 && pct <= 100.0).then_some(Stat::Percentile(pct));
    }
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 6 {
        return None;
    }
    let pct = if digits.len() <= 2 {
        digits.parse::<f64>().ok()?
    } else {
        format!("{}.{}", &digits[..2], &digits[2..])
            .parse::<f64>()
            .ok()?
    };
    (pct > 0.0 && pct <= 100.0).then_some(Stat::Percentile(pct))
}

pub(super) fn assertion(
    c: &mut Checker,
    a: &syntax::Assertion,
    axes: &[Axis],
    consumer: bool,
) -> Option<Assertion> {
    let before = c.diags.len();
    let lhs = expr(c, &a.lhs, axes, consumer);
    let test = match &a.test {
        syntax::Test::Compare(op, rhs) => {
            expr(c, rhs, axes, consumer).map(|r| Test::Compare(*op, r.0))
        }
        syntax::Test::Within(lo, hi) => {
            let lo = expr(c, lo, axes, consumer);
            let hi = expr(c, hi, axes, consumer);
            lo.zip(hi).map(|(l, h)| Test::Within(l.0, h.0))
        }
    };
    let when: Vec<Clause> = a.when.iter().filter_map(|cl| clause(c, cl, axes)).collect();
    let (lhs, test) = (lhs?, test?);
    if c.diags.len() > before || when.len() != a.when.len() {
        return None;
    }
    // Both sides must measure the same thing.
    let lu = lhs.1;
    let rhs_units: Vec<(Unit, crate::source::Span)> = match &test {
        Test::Compare(_, r) => vec![(r.unit(), syntax_rhs_span(a))],
        Test::Within(l, h) => vec![
            (l.unit(), syntax_rhs_span(a)),
            (h.unit(), syntax_rhs_span(a)),
        ],
    };
    for (ru, span) in rhs_units {
        if ru != lu {
            c.err(
                Diagnostic::new(
                    Kind::Type,
                    span,
                    format!(
                        "`{}` is {}, but this is {}",
                        c.sources.text(a.lhs.span()).trim(),
                        lu.name(),
                        ru.name()
                    ),
                )
                .label(format!("{} here", ru.name()))
                .help(unit_hint(lu)),
            );
            return None;
        }
    }
    if let Test::Within(Expr::Const(lo, _), Expr::Const(hi, _)) = &test {
        if lo > hi {
            let syntax::Test::Within(l, h) = &a.test else {
                unreachable!("a model range comes from a syntax range")
            };
            let (l, h) = (c.sources.text(l.span()), c.sources.text(h.span()));
            c.err(
                Diagnostic::new(
                    Kind::Value,
                    syntax_rhs_span(a),
                    "the low end is above the high end",
                )
                .label("no value is in this range")
                .help(format!("write `in {h}..{l}`")),
            );
            return None;
        }
    }
    // The span may run over a trailing comment (pest skips it while looking for `when`).
    let text: Vec<&str> = c
        .sources
        .text(a.span)
        .lines()
        .map(|l| {
            l.split(['#'])
                .next()
                .unwrap_or("")
                .split("//")
                .next()
                .unwrap_or("")
        })
        .flat_map(|l| l.split_whitespace())
        .collect();
    let confidence = match &a.confidence {
        None => None,
        Some(v) => Some(confidence(c, v, &lhs.0, &test, a)?),
    };
    Some(Assertion {
        text: text.join(" "),
        span: a.span,
        lhs: lhs.0,
        test,
        confidence,
        when,
    })
}

/// `with 95% confidence`: a level between 50 % and 99.9 %, on one metric held to constants
/// (its interval over the trials is judged, so the other side may not vary too).
fn confidence(
    c: &mut Checker,
    v: &syntax::Value,
    lhs: &Expr,
    test: &Test,
    a: &syntax::Assertion,
) -> Option<f64> {
    let level = match c.scalar_plain(v) {
        Some(Scalar::Ratio(f)) if (0.5..=0.999).contains(&f) => Some(f),
        Some(Scalar::Ratio(_)) => {
            c.err(
                Diagnostic::new(
                    Kind::Value,
                    v.span,
                    "a confidence level is from 50% to 99.9%",
                )
                .label("out of range")
                .help("e.g. `with 95% confidence`"),
            );
            None
        }
        _ => {
            c.err(
                Diagnostic::new(Kind::Unit, v.span, "a confidence level is a percentage")
                    .label("expected e.g. `95%`")
                    .help("e.g. `throughput > 1M/s with 95% confidence`"),
            );
            None
        }
    }?;
    let constant = |e: &Expr| matches!(e, Expr::Const(..));
    let sides_fit = matches!(lhs, Expr::Metric { select, .. } if select.is_empty())
        && match test {
            Test::Compare(op, r) => constant(r) && !matches!(op, CmpOp::Eq | CmpOp::Ne),
            Test::Within(l, h) => constant(l) && constant(h),
        };
    if !sides_fit {
        c.err(
            Diagnostic::new(
                Kind::Value,
                a.span,
                "`with … confidence` judges one metric's interval against constants",
            )
            .label("not a metric compared with a constant")
            .help("write e.g. `throughput > 1M/s with 95% confidence` or `ack.p99 in 1ms..5ms with 90% confidence`; `==` and `!=` take no interval"),
        );
        return None;
    }
    Some(level)
}

fn syntax_rhs_span(a: &syntax::Assertion) -> crate::source::Span {
    match &a.test {
        syntax::Test::Compare(_, r) => r.span(),
        syntax::Test::Within(l, h) => l.span().to(h.span()),
    }
}

fn unit_hint(u: Unit) -> String {
    match u {
        Unit::Duration => "write a duration such as `5ms`".into(),
        Unit::Size => "write a size such as `10MB`".into(),
        Unit::Rate => "write a rate such as `5000/s`".into(),
        Unit::ByteRate => "write a byte rate such as `50MB/s`".into(),
        Unit::Number => "write a plain number, a ratio such as `10x`, or a percentage".into(),
    }
}

fn expr(c: &mut Checker, e: &syntax::Expr, axes: &[Axis], consumer: bool) -> Option<(Expr, Unit)> {
    match e {
        syntax::Expr::Literal(v) => {
            // A constant may be negative (`e2e.p50 - ack.p50 > -1ms`): its magnitude is read
            // like any literal, and the sign applied in base units.
            let sign = |n: &syntax::Number| if n.value < 0.0 { -1.0 } else { 1.0 };
            let abs = |q: &syntax::Quantity| syntax::Quantity {
                number: syntax::Number {
                    value: q.number.value.abs(),
                    integer: q.number.integer,
                },
                unit: q.unit.clone(),
            };
            let (val, sign) = match &v.kind {
                ValueKind::Quantity(q) => (
                    units::quantity(&abs(q), v.span)
                        .map_err(|d| c.err(d))
                        .ok()?,
                    sign(&q.number),
                ),
                ValueKind::Rate(r) => {
                    let magnitude = syntax::RateLit {
                        amount: abs(&r.amount),
                        per: r.per.clone(),
                    };
                    (
                        units::rate(&magnitude, v.span).map_err(|d| c.err(d)).ok()?,
                        sign(&r.amount.number),
                    )
                }
                _ => return None,
            };
            let (x, d) = match val {
                Scalar::Number(n) | Scalar::Ratio(n) => (n, Unit::Number),
                Scalar::Duration(d) => (d.as_secs_f64(), Unit::Duration),
                Scalar::Size(b) => (b as f64, Unit::Size),
                Scalar::Rate(r) => (r, Unit::Rate),
                Scalar::ByteRate(r) => (r, Unit::ByteRate),
                Scalar::Word(_) | Scalar::Str(_) => return None,
            };
            Some((Expr::Const(sign * x, d), d))
        }
        syntax::Expr::Metric(m) => {
            let Some(metric) = parse_metric(&m.name.node) else {
                let help = match closest(&m.name.node, METRIC_NAMES.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!(
                        "metrics are: {}",
                        METRIC_NAMES[..19].join(", ")
                            + ", and ack/e2e/service/send_delay with .p50 .p99 .p999 .max .mean"
                    ),
                };
                c.err(
                    Diagnostic::new(
                        Kind::Metric,
                        m.name.span,
                        format!("unknown metric `{}`", m.name.node),
                    )
                    .label("not a metric")
                    .help(help),
                );
                return None;
            };
            if metric.needs_consumer() && !consumer {
                c.err(
                    Diagnostic::new(Kind::Metric, m.name.span, format!("`{}` is measured by a consumer, and this scenario has none", m.name.node))
                        .label("needs a consumer")
                        .help("add `consumer { }` to read the records back and measure end-to-end latency and delivery"),
                );
                return None;
            }
            if metric.needs_compaction() && !c.compaction_checked {
                c.err(
                    Diagnostic::new(Kind::Metric, m.name.span, format!("`{}` is measured by the compaction check, and this scenario has none", m.name.node))
                        .label("needs `compaction = verify`")
                        .help("add `compaction = verify` to `workload { }`: after the run kafkabench forces compaction and reads the topic whole"),
                );
                return None;
            }
            let mut select = Vec::new();
            for (var, val) in &m.select {
                let v = pick(c, &var.node, var.span, val, axes)?;
                select.push((var.node.clone(), v));
            }
            let broker = c.broker_pick(m, metric).ok()?;
            Some((
                Expr::Metric {
                    metric,
                    select,
                    broker,
                    span: m.span,
                },
                metric.unit(),
            ))
        }
        syntax::Expr::Binary(l, op, r, span) => {
            let (le, lu) = expr(c, l, axes, consumer)?;
            let (re, ru) = expr(c, r, axes, consumer)?;
            let op = *op;
            let ok = match op {
                BinOp::Add | BinOp::Sub => lu == ru,
                BinOp::Mul => lu == Unit::Number || ru == Unit::Number,
                BinOp::Div => ru == Unit::Number || lu == ru,
            };
            if !ok {
                c.err(
                    Diagnostic::new(
                        Kind::Type,
                        *span,
                        format!("cannot combine {} with {} this way", lu.name(), ru.name()),
                    )
                    .label("mismatched units")
                    .help("add or subtract like with like; multiply or divide by plain numbers"),
                );
                return None;
            }
            let e = Expr::Binary(Box::new(le), op, Box::new(re));
            let d = e.unit();
            Some((e, d))
        }
    }
}

/// A variable and a value that must name an existing cell coordinate.
fn pick(
    c: &mut Checker,
    var: &str,
    var_span: crate::source::Span,
    value: &syntax::Value,
    axes: &[Axis],
) -> Option<Scalar> {
    // A variable declared without values is already reported.
    if c.valueless.iter().any(|v| v == var) {
        return None;
    }
    let Some(axis) = axes.iter().find(|a| a.name == var) else {
        let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
        c.err(
            Diagnostic::new(
                Kind::Variable,
                var_span,
                format!("unknown variable `{var}`"),
            )
            .label("not a matrix variable or `step`")
            .help(suggest(var, &names, "variables are")),
        );
        return None;
    };
    let val = c.scalar_plain(value)?;
    if axis.values.iter().any(|v| v.scalar == val) {
        return Some(val);
    }
    let texts: Vec<&str> = axis.values.iter().map(|v| v.text.as_str()).collect();
    let written = c.sources.text(value.span).to_string();
    let help = match closest(&written, texts.iter().copied()) {
        Some(s) => format!(
            "did you mean `{s}`? `{var}` is one of: {}",
            texts.join(", ")
        ),
        None => format!("`{var}` is one of: {}", texts.join(", ")),
    };
    c.err(
        Diagnostic::new(
            Kind::Cell,
            value.span,
            format!("no run has {var} = {written}"),
        )
        .label("no such cell")
        .help(help),
    );
    None
}

fn clause(c: &mut Checker, cl: &syntax::Clause, axes: &[Axis]) -> Option<Clause> {
    let mut values = Vec::new();
    for v in &cl.values {
        values.push(pick(c, &cl.var.node, cl.var.span, v, axes)?);
    }
    Some(Clause {
        dim: cl.var.node.clone(),
        negate: cl.op == ClauseOp::Ne,
        values,
    })
}
