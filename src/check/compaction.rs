//! Compacted topics: the workload's `tombstones` and `compaction = verify`, and what the check
//! after the run asks of the topic and the keys (`run::compaction` does the check).

use std::time::Duration;

use super::axis::Picks;
use super::{Checker, Setting};
use crate::diagnostic::{Diagnostic, Kind};
use crate::format::human_duration;
use crate::model::{CompactionCheck, KeySpec, Scalar, TopicSpec};
use crate::source::Span;
use crate::syntax::ValueKind;

/// The longest the after-run check may wait: longer is a slipped unit.
const MAX_WITHIN: Duration = Duration::from_secs(3600);

/// The compaction keys of one cell's workload while it is checked.
#[derive(Default)]
pub(super) struct CompactionDraft {
    tombstones: Option<(f64, Span)>,
    verify: Option<(CompactionCheck, Span)>,
}

impl CompactionDraft {
    pub(super) fn tombstones(&self) -> f64 {
        self.tombstones.map_or(0.0, |(f, _)| f)
    }

    pub(super) fn check(&self) -> Option<CompactionCheck> {
        self.verify.as_ref().map(|(c, _)| c.clone())
    }
}

/// What the check finds of the topic and the rest of the workload, once all is known.
pub(super) struct CompactionContext<'a> {
    pub topic: &'a TopicSpec,
    pub key: Option<&'a KeySpec>,
    pub topics: u32,
    pub transactions: bool,
}

impl Checker<'_> {
    /// `tombstones = 5%`.
    pub(super) fn tombstones_key(&mut self, c: &mut CompactionDraft, e: &Setting, ctx: &Picks) {
        let span = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
        c.tombstones = match self.scalar(&e.value, ctx) {
            None => None,
            Some(Scalar::Ratio(f)) if (0.0..=1.0).contains(&f) => Some((f, span)),
            Some(Scalar::Ratio(_)) => {
                self.err(
                    Diagnostic::new(Kind::Value, span, "at most every record is a tombstone")
                        .label("above 100%")
                        .help("e.g. `tombstones = 5%`: one record in twenty deletes its key"),
                );
                None
            }
            Some(Scalar::Number(n)) => {
                let fix = if (0.0..=1.0).contains(&n) {
                    n * 100.0
                } else {
                    n
                };
                self.err(
                    Diagnostic::new(Kind::Unit, span, "the tombstone fraction is a percentage")
                        .label("a bare number")
                        .help(format!(
                            "write `tombstones = {}%`",
                            (fix * 1e6).round() / 1e6
                        )),
                );
                None
            }
            Some(other) => {
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        span,
                        format!(
                            "the tombstone fraction is a percentage, not {}",
                            other.kind_name()
                        ),
                    )
                    .label("expected e.g. `5%`")
                    .help("`tombstones = 5%`: one record in twenty deletes its key"),
                );
                None
            }
        };
    }

    /// `compaction = verify` or `compaction = verify(within: 2m)`.
    pub(super) fn compaction_key(&mut self, c: &mut CompactionDraft, e: &Setting, ctx: &Picks) {
        let Some(rv) = self.resolve(&e.value, ctx) else {
            return;
        };
        let span = rv.span;
        let wrong = |what: &str| {
            Diagnostic::new(
                Kind::Value,
                span,
                format!("`{what}` is not a compaction check"),
            )
            .label("expected verify or verify(within: ...)")
            .help(format!(
                "{} e.g. `compaction = verify`: after the run kafkabench forces compaction and reads the topic whole",
                crate::diagnostic::suggest(what, &["verify"], "compaction checks are")
            ))
        };
        let within = match &rv.kind {
            ValueKind::Word(w) if w == "verify" => CompactionCheck::WITHIN,
            ValueKind::Word(w) => {
                let d = wrong(w);
                self.err(d);
                return;
            }
            ValueKind::Call { name, args } if name.node == "verify" => {
                let mut within = CompactionCheck::WITHIN;
                for (_, val) in self.call_args(name, args, &["within"]) {
                    let Some(d) = self.duration(val, ctx, "how long the compaction check waits")
                    else {
                        return;
                    };
                    if d < Duration::from_secs(1) || d > MAX_WITHIN {
                        self.err(
                            Diagnostic::new(Kind::Value, val.span, "the compaction check waits from 1s to 1h")
                                .label("out of range")
                                .help("e.g. `verify(within: 2m)`: the cleaner works in passes, 15 s apart by default (log.cleaner.backoff.ms)"),
                        );
                        return;
                    }
                    within = d;
                }
                within
            }
            ValueKind::Call { name, .. } => {
                let d = wrong(&format!("{}(...)", name.node));
                self.err(d);
                return;
            }
            _ => {
                let text = self.sources.text(span).trim().to_string();
                let d = wrong(&text);
                self.err(d);
                return;
            }
        };
        c.verify = Some((CompactionCheck { within }, span));
    }

    /// Tombstones need keys; the check needs a compacted topic kafkabench creates, keys it can
    /// tell apart, and time for the tombstones' `delete.retention.ms`.
    pub(super) fn compaction_fits(&mut self, c: &CompactionDraft, x: &CompactionContext) {
        let keyless = matches!(x.key, None | Some(KeySpec::None));
        if let (Some((f, span)), true) = (c.tombstones, keyless) {
            if f > 0.0 {
                self.err(
                    Diagnostic::new(
                        Kind::Missing,
                        span,
                        "tombstones delete keys, and the workload sends none",
                    )
                    .label("records without a key")
                    .help("add a key pattern: `key = uniform(10k)`"),
                );
            }
        }
        let Some((check, span)) = &c.verify else {
            return;
        };
        let span = *span;
        let policy = x.topic.configs.get("cleanup.policy").unwrap_or("delete");
        if !policy.split(',').any(|p| p.trim() == "compact") {
            self.err(
                Diagnostic::new(
                    Kind::Missing,
                    span,
                    "`compaction = verify` checks a compacted topic",
                )
                .label(format!(
                    "topic `{}` has cleanup.policy {policy}",
                    x.topic.name
                ))
                .help("add `cleanup.policy = compact` to the topic block"),
            );
        }
        let refuse = |this: &mut Self, why: &str, help: &str| {
            this.err(
                Diagnostic::new(Kind::Value, span, format!("`compaction = verify` {why}"))
                    .label("the check after the run")
                    .help(help.to_string()),
            );
        };
        if x.topic.existing {
            refuse(self, "alters the topic's configs to force compaction, so it runs only on a topic kafkabench creates",
                "drop `existing = true`: kafkabench creates the topic and deletes it after the run");
        }
        if x.topic.tiered() {
            refuse(
                self,
                "needs a topic on local disk",
                "Kafka compacts no topic in remote storage: drop `remote.storage.enable`",
            );
        }
        if x.topics > 1 {
            refuse(
                self,
                "checks one topic",
                "drop `topics`, or compare topics as steps",
            );
        }
        if x.transactions {
            refuse(self, "checks what committed writes left; records of aborted transactions would count as writes",
                "drop `transaction` from this workload");
        }
        match x.key {
            None | Some(KeySpec::None) => refuse(
                self,
                "checks every key's latest value, and the workload sends no keys",
                "add a key pattern: `key = uniform(10k)`",
            ),
            Some(KeySpec::Schema(_)) => refuse(
                self,
                "needs keys it can tell apart, and keys of a schema are random",
                "use `key = uniform(10k)`, `zipf(10k)`, `sequence` or a fixed key",
            ),
            _ => {}
        }
        // A tombstone goes in the cleaner pass after `delete.retention.ms` (24 h by default).
        let retention = x
            .topic
            .configs
            .get("delete.retention.ms")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(86_400_000);
        if c.tombstones() > 0.0 && Duration::from_millis(retention) >= check.within {
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    format!(
                        "tombstones stay for delete.retention.ms ({}), longer than the check waits ({})",
                        human_duration(retention as f64 / 1e3),
                        human_duration(check.within.as_secs_f64())
                    ),
                )
                .label("the check could not see a tombstoned key go")
                .help("add `delete.retention.ms = 1000` to the topic block"),
            );
        }
    }
}
