//! `delete records of partition 0 before 500`: what a `delete` action acts on, and which
//! faults may say `before` or `of`.

use super::super::axis::Picks;
use super::super::Checker;
use crate::diagnostic::{Diagnostic, Kind};
use crate::model::{FaultAction, TopicSpec};
use crate::syntax::{self, FaultObject};

const EXAMPLE: &str = "e.g. `delete records of partition 0 before 500`";

impl Checker<'_> {
    /// `delete records of partition P [before N]`: the run's topic's partition P, up to offset
    /// N (the topic is the run's own, so offsets count from its first record), or everything
    /// it holds when the action fires.
    pub(in crate::check) fn delete_records(
        &mut self,
        f: &syntax::Fault,
        ctx: &Picks,
        topic: &TopicSpec,
    ) -> Option<FaultAction> {
        let which = match &f.object {
            Some(FaultObject::Node { noun, of, which }) if noun.node == "records" => match of {
                Some(of) if of.node == "partition" => which.as_ref(),
                Some(of) => {
                    self.err(
                        Diagnostic::new(
                            Kind::UnknownKey,
                            of.span,
                            format!("records of a {}?", of.node),
                        )
                        .label("expected `partition`")
                        .help(EXAMPLE),
                    );
                    return None;
                }
                None => {
                    self.err(
                        Diagnostic::new(Kind::Missing, noun.span, "records of which partition?")
                            .label("`of partition N` follows")
                            .help(EXAMPLE),
                    );
                    return None;
                }
            },
            Some(FaultObject::Node { noun, .. }) => {
                self.noun_error(noun, &["records"], EXAMPLE);
                return None;
            }
            Some(FaultObject::Command(c)) => {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        c.span,
                        "`delete` acts on records, not a command",
                    )
                    .label("a command")
                    .help(format!("{EXAMPLE}; a command is run with `run \"...\"`")),
                );
                return None;
            }
            None => {
                self.err(
                    Diagnostic::new(Kind::Missing, f.verb.span, "`delete` needs records")
                        .label("delete what?")
                        .help(EXAMPLE),
                );
                return None;
            }
        };
        let Some(which) = which else {
            self.err(
                Diagnostic::new(Kind::Missing, f.span, "which partition?")
                    .label("a partition's number follows `partition`")
                    .help(EXAMPLE),
            );
            return None;
        };
        let partition = self.count(which, ctx, "a partition", 0..=i32::MAX as u64);
        let before = f
            .before
            .as_ref()
            .map(|b| self.count(b, ctx, "an offset", 1..=i64::MAX as u64));
        if topic.existing {
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    f.span,
                    "kafkabench deletes records only from a topic it created",
                )
                .label("the topic is `existing`")
                .help("records of a topic kafkabench did not create may be someone else's: drop `existing = true`, or use `run \"kafka-delete-records.sh ...\"`"),
            );
            return None;
        }
        let partition = partition?;
        let n = topic.partitions.max(1) as u64;
        if partition >= n {
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    which.span,
                    format!("the topic has no partition {partition}"),
                )
                .label(format!("partitions are 0 to {}", n - 1))
                .help(format!(
                    "name a partition from 0 to {}, or raise the topic's `partitions`",
                    n - 1
                )),
            );
            return None;
        }
        let before = match before {
            Some(b) => Some(b?),
            None => None,
        };
        Some(FaultAction::DeleteRecords {
            partition: partition as i32,
            before,
        })
    }

    /// `before` belongs to `delete`, and `of` to `records`: said at the word that does not fit.
    pub(in crate::check) fn misplaced_words(&mut self, f: &syntax::Fault, verb: &str) -> bool {
        let mut ok = true;
        if verb != "delete" {
            if let Some(b) = &f.before {
                self.err(
                    Diagnostic::new(Kind::Value, b.span, format!("`{verb}` takes no `before`"))
                        .label("remove this")
                        .help("`before` says up to which offset `delete records of partition N` deletes"),
                );
                ok = false;
            }
            if let Some(FaultObject::Node { of: Some(of), .. }) = &f.object {
                self.err(
                    Diagnostic::new(Kind::Value, of.span, format!("`{verb}` takes no `of ...`"))
                        .label("remove this")
                        .help("`of` names a partition only in `delete records of partition N`"),
                );
                ok = false;
            }
        }
        ok
    }
}
