//! Assertions on a marked phase of a run (`drain.ack.*`, `drain.e2e.*`: the live records due
//! while a backlog drained) need a run that has one; otherwise nothing could measure them.

use super::Checker;
use crate::diagnostic::{Diagnostic, Kind};
use crate::model::{Cell, Metric};
use crate::syntax;

impl Checker<'_> {
    pub(super) fn drain_metrics(&mut self, expects: &[&syntax::Assertion], cells: &[Cell]) {
        if cells.iter().any(|c| c.spec.workload.backlog.is_some()) {
            return;
        }
        let mut metrics = Vec::new();
        for a in expects {
            super::faults::metric_refs(&a.lhs, &mut metrics);
            match &a.test {
                syntax::Test::Compare(_, rhs) => super::faults::metric_refs(rhs, &mut metrics),
                syntax::Test::Within(lo, hi) => {
                    super::faults::metric_refs(lo, &mut metrics);
                    super::faults::metric_refs(hi, &mut metrics);
                }
            }
        }
        for m in metrics {
            if matches!(
                super::parse_metric(&m.name.node),
                Some(Metric::DrainLatency(..))
            ) {
                self.err(
                    Diagnostic::new(
                        Kind::Metric,
                        m.name.span,
                        format!(
                            "`{}` is measured while a backlog drains, and no run of this scenario has one",
                            m.name.node
                        ),
                    )
                    .label("needs a backlog")
                    .help("give a step a backlog to drain, e.g. `replay { workload.backlog = cold(1M) }`, and compare it with the step without: `drain.ack.p99 < 2 * drain.ack.p99[step=live_only]`"),
                );
            }
        }
    }
}
