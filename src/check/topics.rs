//! `topics = N` (workload): a run spread over N topics of one configuration, and what that
//! asks of the topic block (a created topic, names within Kafka's length, a partition total
//! a cluster can hold).

use super::axis::Picks;
use super::{Checker, Setting};
use crate::diagnostic::{Diagnostic, Kind};
use crate::model::{topic_index_len, TopicSpec, RUN_SUFFIX_LEN, TOPICS_MAX, TOPIC_NAME_MAX};
use crate::source::Span;

/// Partitions of all a run's topics together: the same bound as one topic's `partitions`,
/// since the cluster holds (and the consumer assigns) every one of them.
const PARTITIONS_MAX: u64 = 100_000;

impl Checker<'_> {
    /// The `topics` key: 1 to [`TOPICS_MAX`], and where it was written.
    pub(super) fn topics_key(&mut self, e: &Setting, ctx: &Picks) -> Option<(u32, Span)> {
        let n = self.count(&e.value, ctx, "topics", 1..=u64::from(TOPICS_MAX))?;
        let span = self.resolve(&e.value, ctx).map_or(e.value.span, |v| v.span);
        Some((n as u32, span))
    }

    /// Several topics against the topic block: each is created by the run (never an
    /// `existing` one), each name fits Kafka's length with its index, and their partitions
    /// together stay within [`PARTITIONS_MAX`].
    pub(super) fn topics_fit(&mut self, topic: &TopicSpec, topics: Option<(u32, Span)>) {
        let Some((n, span)) = topics.filter(|(n, _)| *n > 1) else {
            return;
        };
        if topic.existing {
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    format!("`topics = {n}` needs topics the run creates, and this topic is `existing`"),
                )
                .label("several topics")
                .help("remove `topics` to use the existing topic, or remove `existing = true` to have the run create its topics (and delete them after)"),
            );
            return;
        }
        let total = u64::from(n) * topic.partitions as u64;
        if total > PARTITIONS_MAX {
            let fewer = (PARTITIONS_MAX / topic.partitions.max(1) as u64).max(1);
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    format!(
                        "{n} topics of {} partitions are {total} partitions; a run may have at most {PARTITIONS_MAX}",
                        topic.partitions
                    ),
                )
                .label("too many partitions in all")
                .help(format!(
                    "with {} partitions per topic, use at most `topics = {fewer}`",
                    topic.partitions
                )),
            );
        }
        let Some(name_span) = topic.name_span else {
            return;
        };
        let base = topic.name.chars().count() + RUN_SUFFIX_LEN;
        let length = base + topic_index_len(n);
        // A name too long without its index was reported where the name is checked.
        if base <= TOPIC_NAME_MAX && length > TOPIC_NAME_MAX {
            let keep = TOPIC_NAME_MAX - (length - topic.name.chars().count());
            // The most topics whose index still fits: 10^d of them have indices of d digits.
            let room = TOPIC_NAME_MAX - base;
            let fewer = match room.checked_sub(1) {
                Some(digits) if digits > 0 => {
                    format!(", or use at most `topics = {}`", 10u64.pow(digits as u32))
                }
                _ => String::new(),
            };
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    name_span,
                    format!(
                        "with `topics = {n}` this topic name is {length} characters with the run suffix and the topic index; Kafka allows {TOPIC_NAME_MAX}"
                    ),
                )
                .label("too long for an index")
                .help(format!(
                    "shorten the name to at most {keep} characters{fewer}"
                )),
            );
        }
    }
}
