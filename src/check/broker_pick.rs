//! `of broker 2` and `of every broker` after a metric: which broker's figure an assertion
//! reads, and where such a figure may stand (the left side alone, against constants, in
//! `expect` without `with … confidence`).

use super::Checker;
use crate::diagnostic::{closest, Diagnostic, Kind};
use crate::model::{Assertion, BrokerPick, Cell, ClientKind, Expr, LatencyKind, Metric, Test};
use crate::syntax;

impl Checker<'_> {
    /// The broker a metric reference names; Err when what it names is refused (reported).
    pub(super) fn broker_pick(
        &mut self,
        m: &syntax::MetricRef,
        metric: Metric,
    ) -> Result<Option<BrokerPick>, ()> {
        let Some(p) = &m.place else {
            return Ok(None);
        };
        if p.noun.node != "broker" {
            let help = match closest(&p.noun.node, ["broker"]) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "figures by broker are read with `of broker 2` or `of every broker`; \
                         partitions are in the report and the result file, not in `expect`"
                    .into(),
            };
            self.err(
                Diagnostic::new(
                    Kind::Metric,
                    p.noun.span,
                    format!("`expect` has no figures of a `{}`", p.noun.node),
                )
                .label("not `broker`")
                .help(help),
            );
            return Err(());
        }
        let pick = match (p.every, &p.id) {
            (true, None) => BrokerPick::Every,
            (false, Some(id)) => match id.node.replace('_', "").parse::<i32>() {
                Ok(n) if n >= 0 => BrokerPick::One(n),
                _ => {
                    self.err(
                        Diagnostic::new(Kind::Value, id.span, "a broker is named by its node id")
                            .label("not a node id")
                            .help("write e.g. `ack.p99 of broker 2 < 20ms`, as `faults` names `broker 2`"),
                    );
                    return Err(());
                }
            },
            (true, Some(id)) => {
                self.err(
                    Diagnostic::new(Kind::Value, id.span, "`every broker` takes no number")
                        .label("one broker, or every one")
                        .help("write `of every broker` or `of broker 2`"),
                );
                return Err(());
            }
            (false, None) => {
                self.err(
                    Diagnostic::new(Kind::Value, p.span, "which broker?")
                        .label("no node id")
                        .help("write `of broker 2` (its node id) or `of every broker`"),
                );
                return Err(());
            }
        };
        if !matches!(metric, Metric::Latency(LatencyKind::Ack, _)) {
            self.err(
                Diagnostic::new(
                    Kind::Metric,
                    m.span,
                    format!("`{}` is not kept per broker", m.name.node),
                )
                .label("a figure of the whole run")
                .help("per broker, `expect` reads the ack latency: `ack.p50`, `ack.p99`, `ack.max`, … `of broker 2`"),
            );
            return Err(());
        }
        Ok(Some(pick))
    }

    /// A broker's figure is the assertion's whole left side, held to constants, without
    /// `with … confidence`; in a capacity search's `slo` (`in_slo`), not at all. False when
    /// refused (reported).
    pub(super) fn broker_fits(&mut self, a: &Assertion, in_slo: bool) -> bool {
        let mut picks = 0;
        let mut count = |e: &Expr| count_picks(e, &mut picks);
        count(&a.lhs);
        match &a.test {
            Test::Compare(_, r) => count(r),
            Test::Within(l, h) => {
                count(l);
                count(h);
            }
        }
        if picks == 0 {
            return true;
        }
        let constant = |e: &Expr| matches!(e, Expr::Const(..));
        let why = if in_slo {
            Some("a capacity search's `slo` judges the run's own figures, not a broker's")
        } else if a.confidence.is_some() {
            Some("`with … confidence` judges a run's figure over its trials, not a broker's")
        } else if !matches!(
            a.lhs,
            Expr::Metric {
                broker: Some(_),
                ..
            }
        ) || !match &a.test {
            Test::Compare(_, r) => constant(r),
            Test::Within(l, h) => constant(l) && constant(h),
        } {
            Some("a broker's figure is compared with constants, alone on the left side")
        } else {
            None
        };
        let Some(why) = why else {
            return true;
        };
        let at = first_pick(&a.lhs)
            .or_else(|| match &a.test {
                Test::Compare(_, r) => first_pick(r),
                Test::Within(l, h) => first_pick(l).or_else(|| first_pick(h)),
            })
            .unwrap_or(a.span);
        self.err(
            Diagnostic::new(Kind::Value, at, "a broker's figure cannot stand here")
                .label("`of broker …` here")
                .help(format!(
                    "{why}: write e.g. `ack.p99 of every broker < 20ms` in `expect`"
                )),
        );
        false
    }
}

/// Why a producer on `client` has no figures per broker, when it has none.
fn no_broker_figures(client: ClientKind) -> Option<&'static str> {
    match client {
        ClientKind::Librdkafka => None,
        ClientKind::Java => Some("the Java client does not say which broker acknowledged a record (its callback gives the partition and offset only), and kafkabench does not guess it from the leaders; figures per partition are measured, in the report and the result file"),
        ClientKind::FranzGo => Some("the franz-go worker does not yet say which broker acknowledged a record, and kafkabench does not guess it from the leaders; figures per partition are measured, in the report and the result file"),
    }
}

impl Checker<'_> {
    /// An `of broker` figure read from a run whose producer's client does not say which
    /// broker acknowledged: refused, where it would only ever be *not measured*. The runs an
    /// assertion reads are those its `when` admits, each with the selector's coordinates.
    pub(super) fn broker_clients(&mut self, assertions: &[Assertion], cells: &[Cell]) {
        for a in assertions {
            let Expr::Metric {
                broker: Some(_),
                select,
                span,
                ..
            } = &a.lhs
            else {
                continue;
            };
            let read = cells
                .iter()
                .filter(|from| a.when.iter().all(|c| c.holds(from)))
                .filter_map(|from| {
                    cells.iter().find(|r| {
                        r.coords
                            .iter()
                            .all(|c| match select.iter().find(|(d, _)| *d == c.dim) {
                                Some((_, v)) => c.value == *v,
                                None => from.coord(&c.dim).is_some_and(|b| b.value == c.value),
                            })
                    })
                });
            let Some((run, why)) = read
                .filter_map(|r| Some((r, no_broker_figures(r.spec.producer_client)?)))
                .next()
            else {
                continue;
            };
            self.err(
                Diagnostic::new(
                    Kind::ClientUnsupported,
                    *span,
                    format!(
                        "figures per broker are not measured on a {} producer",
                        run.spec.producer_client
                    ),
                )
                .label(format!("reads run `{}`", run.label()))
                .help(why),
            );
        }
    }
}

/// Where the first broker's figure in `e` is written.
fn first_pick(e: &Expr) -> Option<crate::source::Span> {
    match e {
        Expr::Metric {
            broker: Some(_),
            span,
            ..
        } => Some(*span),
        Expr::Metric { .. } | Expr::Const(..) => None,
        Expr::Binary(l, _, r) => first_pick(l).or_else(|| first_pick(r)),
    }
}

fn count_picks(e: &Expr, n: &mut usize) {
    match e {
        Expr::Metric {
            broker: Some(_), ..
        } => *n += 1,
        Expr::Metric { .. } | Expr::Const(..) => {}
        Expr::Binary(l, _, r) => {
            count_picks(l, n);
            count_picks(r, n);
        }
    }
}
