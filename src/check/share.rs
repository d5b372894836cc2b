//! A share group (`share { }`, KIP-932): the group's configs and its members' settings, the
//! workload's `ack` mix and `processing` time, and what a share group cannot be combined with.

use std::time::Duration;

use super::axis::Picks;
use super::workload::WorkloadDraft;
use super::{Checker, Setting};
use crate::diagnostic::{closest, suggest, Diagnostic, Kind};
use crate::model::share::{DELIVERY_LIMIT_MAX, DELIVERY_LIMIT_MIN};
use crate::model::{AckMode, Props, Scalar, ShareSpec};
use crate::source::Span;
use crate::syntax::ValueKind;

/// Configs of the group itself (Kafka's group configs), set on the group before it starts.
const GROUP_CONFIGS: &[&str] = &[
    "share.record.lock.duration.ms",
    "share.delivery.count.limit",
    "share.isolation.level",
    "share.auto.offset.reset",
    "share.heartbeat.interval.ms",
    "share.session.timeout.ms",
];
/// The members' own settings (the Java share consumer's names).
const CLIENT_SETTINGS: &[&str] = &[
    "group.id",
    "client.id",
    "max.poll.records",
    "fetch.max.wait.ms",
    "fetch.min.bytes",
    "fetch.max.bytes",
    "request.timeout.ms",
];

/// The longest simulated processing of one record.
const MAX_PROCESSING: Duration = Duration::from_secs(60);

/// `share { }` and the workload's share keys while a cell is lowered.
#[derive(Default)]
pub(super) struct ShareDraft {
    group: Props,
    client: Props,
    ack: Option<(AckMode, Span)>,
    processing: Option<(Duration, Span)>,
}

impl Checker<'_> {
    /// One setting of `share { }`.
    pub(super) fn share_key(&mut self, d: &mut ShareDraft, e: &Setting, ctx: &Picks) {
        let key = e.key.node.as_str();
        let group = GROUP_CONFIGS.contains(&key);
        if !group && !CLIENT_SETTINGS.contains(&key) {
            let all = GROUP_CONFIGS.iter().chain(CLIENT_SETTINGS).copied();
            let help = match closest(key, all) {
                Some(c) => format!("did you mean `{c}`?"),
                None => format!(
                    "a share group takes its configs ({}) and its members' settings ({})",
                    GROUP_CONFIGS.join(", "),
                    CLIENT_SETTINGS.join(", ")
                ),
            };
            self.err(
                Diagnostic::new(
                    Kind::UnknownKey,
                    e.key.span,
                    format!("unknown share-group setting `{key}`"),
                )
                .label("not a share group config or a member setting")
                .help(help),
            );
            return;
        }
        let Some(text) = self.prop_text(key, e, ctx) else {
            return;
        };
        let span = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
        let whole = |lo: u64, hi: u64| text.parse::<u64>().ok().filter(|n| (lo..=hi).contains(n));
        let bad = match key {
            "share.delivery.count.limit" => whole(DELIVERY_LIMIT_MIN.into(), DELIVERY_LIMIT_MAX.into())
                .is_none()
                .then(|| format!("Kafka takes a delivery count limit from {DELIVERY_LIMIT_MIN} to {DELIVERY_LIMIT_MAX}")),
            "share.record.lock.duration.ms" => whole(1_000, 3_600_000)
                .is_none()
                .then(|| "Kafka takes an acquisition lock from 1s to 1h".to_string()),
            "share.isolation.level" => (!matches!(text.as_str(), "read_committed" | "read_uncommitted"))
                .then(|| "the isolation level is `read_committed` or `read_uncommitted`".to_string()),
            "max.poll.records" => whole(1, 100_000)
                .is_none()
                .then(|| "a member takes 1 to 100000 records per fetch".to_string()),
            _ => None,
        };
        if let Some(why) = bad {
            self.err(
                Diagnostic::new(Kind::Value, span, why)
                    .label("out of range")
                    .help(format!("e.g. `{}`", example(key))),
            );
            return;
        }
        if group {
            d.group.set(key, text);
        } else {
            d.client.set(key, text);
        }
    }

    /// `ack = implicit | explicit(release: 5%, reject: 1%, retry: 2%)` and `processing = 1ms`,
    /// written in `workload { }`.
    pub(super) fn share_workload_key(&mut self, d: &mut ShareDraft, e: &Setting, ctx: &Picks) {
        if e.key.node == "processing" {
            let span = e.value.span;
            if let Some(p) = self.duration(&e.value, ctx, "processing") {
                if p > MAX_PROCESSING {
                    self.err(
                        Diagnostic::new(Kind::Value, span, "processing a record takes at most 60s")
                            .label("too long")
                            .help("the simulated work per record, e.g. `processing = 2ms`"),
                    );
                } else {
                    d.processing = Some((p, span));
                }
            }
            return;
        }
        let Some(rv) = self.resolve(&e.value, ctx) else {
            return;
        };
        let span = rv.span;
        let (name, args) = match &rv.kind {
            ValueKind::Word(w) => (w.as_str(), &[][..]),
            ValueKind::Call { name, args } => (name.node.as_str(), &args[..]),
            _ => ("", &[][..]),
        };
        match name {
            "implicit" if args.is_empty() => d.ack = Some((AckMode::Implicit, span)),
            "explicit" => {
                let mut f = [0.0f64; 3];
                // Every argument is checked, so all its mistakes are reported at once.
                let mut ok = true;
                for a in args {
                    let Some(n) = &a.name else {
                        self.err(
                            Diagnostic::new(
                                Kind::Value,
                                a.value.span,
                                "name what this fraction of the records gets",
                            )
                            .label("which acknowledgement?")
                            .help("e.g. `explicit(release: 5%, reject: 1%, retry: 2%)`"),
                        );
                        ok = false;
                        continue;
                    };
                    let Some(i) = ["release", "reject", "retry"]
                        .iter()
                        .position(|k| *k == n.node)
                    else {
                        self.err(
                            Diagnostic::new(
                                Kind::UnknownKey,
                                n.span,
                                format!("`explicit` takes no `{}`", n.node),
                            )
                            .label("unknown argument")
                            .help(suggest(
                                &n.node,
                                &["release", "reject", "retry"],
                                "its arguments are",
                            )),
                        );
                        ok = false;
                        continue;
                    };
                    let vspan = a.value.span;
                    match self.scalar(&a.value, ctx) {
                        Some(Scalar::Ratio(x)) if (0.0..=1.0).contains(&x) => f[i] = x,
                        Some(Scalar::Number(x)) => {
                            self.err(
                                Diagnostic::new(
                                    Kind::Unit,
                                    vspan,
                                    format!("the {} fraction is a percentage", n.node),
                                )
                                .label("a bare number")
                                .help(format!(
                                    "write `{}: {}%`",
                                    n.node,
                                    if x <= 1.0 { x * 100.0 } else { x }
                                )),
                            );
                            ok = false;
                        }
                        Some(_) => {
                            self.err(
                                Diagnostic::new(
                                    Kind::Value,
                                    vspan,
                                    format!(
                                        "the {} fraction is a percentage from 0% to 100%",
                                        n.node
                                    ),
                                )
                                .label("not a fraction")
                                .help(format!("e.g. `{}: 5%`", n.node)),
                            );
                            ok = false;
                        }
                        None => ok = false,
                    }
                }
                if !ok {
                    return;
                }
                if f.iter().sum::<f64>() > 1.0 + 1e-9 {
                    self.err(
                        Diagnostic::new(Kind::Value, span, "release, reject and retry together exceed 100%")
                            .label("more than every record")
                            .help("the rest of the records are accepted; keep the three at or below 100% together"),
                    );
                    return;
                }
                d.ack = Some((
                    AckMode::Explicit {
                        release: f[0],
                        reject: f[1],
                        retry: f[2],
                    },
                    span,
                ));
            }
            _ => {
                let help = match closest(name, ["implicit", "explicit"]) {
                    Some(c) if !name.is_empty() => format!("did you mean `{c}`? `ack` is `implicit` or `explicit(release: 5%, reject: 1%, retry: 2%)`"),
                    _ => "`ack` is `implicit` or `explicit(release: 5%, reject: 1%, retry: 2%)`".to_string(),
                };
                self.err(
                    Diagnostic::new(Kind::Value, span, "not an acknowledgement mode")
                        .label("expected implicit or explicit(...)")
                        .help(help),
                );
            }
        }
    }

    /// The share group of one cell, checked against the rest of its workload: None when the
    /// cell has no `share { }` (then `ack` and `processing` are mistakes).
    pub(super) fn finish_share(
        &mut self,
        d: ShareDraft,
        share_on: Option<Span>,
        consumer_section: Option<Span>,
        w: &WorkloadDraft,
    ) -> Option<ShareSpec> {
        let Some(share_span) = share_on else {
            for (what, span) in [
                ("`ack`", d.ack.as_ref().map(|a| a.1)),
                ("`processing`", d.processing.map(|p| p.1)),
            ] {
                if let Some(span) = span {
                    self.err(
                        Diagnostic::new(Kind::Missing, span, format!("{what} applies to a share group"))
                            .label("no `share { }` in this run")
                            .help("add `share { }` (KIP-932) to read the run with a share group of `consumers` members"),
                    );
                }
            }
            return None;
        };
        if let Some(span) = consumer_section {
            self.err(
                Diagnostic::new(Kind::Duplicate, span, "a run is read by a share group or by consumers, not both")
                    .label("librdkafka consumers")
                    .help("remove `consumer { }`: with `share { }`, `consumers = N` is the share group's members"),
            );
        }
        let refuse = |this: &mut Self, span: Span, what: &str, why: &str| {
            this.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    format!("{what} does not apply to a share group"),
                )
                .label("with `share { }`")
                .help(why.to_string()),
            );
        };
        if let Some((_, span)) = &w.commit {
            refuse(
                self,
                *span,
                "`commit`",
                "a share group acknowledges each record (`ack`); it commits no offsets",
            );
        }
        if let Some(span) = w.txn.span() {
            refuse(self, span, "`transaction`", "share groups with transactional producers are not measured yet; drop `transaction`");
        }
        if let Some((true, span)) = w.until() {
            refuse(
                self,
                span,
                "`in_flight_until = consumed`",
                "use `in_flight_until = acked`",
            );
        }
        let _ = share_span;
        Some(ShareSpec {
            group: d.group,
            client: d.client,
            ack: d.ack.map_or(AckMode::Implicit, |(a, _)| a),
            processing: d.processing.map_or(Duration::ZERO, |(p, _)| p),
        })
    }
}

fn example(key: &str) -> &'static str {
    match key {
        "share.delivery.count.limit" => "share.delivery.count.limit = 3",
        "share.record.lock.duration.ms" => "share.record.lock.duration.ms = 5s",
        "share.isolation.level" => "share.isolation.level = read_committed",
        _ => "max.poll.records = 500",
    }
}

impl Checker<'_> {
    /// A share group's figures asked of a scenario in which no run has one.
    pub(super) fn share_metrics(
        &mut self,
        expects: &[&crate::syntax::Assertion],
        cells: &[crate::model::Cell],
    ) {
        if cells.iter().any(|c| c.spec.share.is_some()) {
            return;
        }
        let mut metrics = Vec::new();
        for a in expects {
            super::faults::metric_refs(&a.lhs, &mut metrics);
            match &a.test {
                crate::syntax::Test::Compare(_, rhs) => {
                    super::faults::metric_refs(rhs, &mut metrics)
                }
                crate::syntax::Test::Within(lo, hi) => {
                    super::faults::metric_refs(lo, &mut metrics);
                    super::faults::metric_refs(hi, &mut metrics);
                }
            }
        }
        for m in metrics {
            if super::parse_metric(&m.name.node).is_some_and(|x| x.needs_share()) {
                self.err(
                    Diagnostic::new(
                        Kind::Metric,
                        m.name.span,
                        format!("`{}` is measured by a share group, and no run of this scenario has one", m.name.node),
                    )
                    .label("needs a share group")
                    .help("add `share { }` to read the run with a share group (KIP-932)"),
                );
            }
        }
    }
}
