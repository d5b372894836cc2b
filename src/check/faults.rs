//! The fault timeline of one cell: `faults { at 15s kill broker 2 for 10s }` checked and lowered
//! to [`Fault`]s. Times fall within the measured phase when its length is known, each action
//! has the target it acts on, and no two faults hold one broker (or one consumer) at once.

use std::time::Duration;

use super::axis::Picks;
use super::Checker;
use crate::diagnostic::{suggest, Diagnostic, Kind};
use crate::format::human_duration;
use crate::model::{
    BrokerTarget, Cell, Fault, FaultAction, Metric, RateSpec, Scalar, TopicSpec, Workload,
};
use crate::syntax::{self, FaultObject, Value, ValueKind};

mod records;

/// The action words, as `check` suggests them.
pub(super) const ACTIONS: &[&str] = &["kill", "pause", "restart", "run", "stop", "delete"];

/// Words people reach for, and the action that does it.
const SYNONYMS: &[(&str, &str)] = &[
    ("crash", "kill"),
    ("sigkill", "kill"),
    ("suspend", "pause"),
    ("freeze", "pause"),
    ("sigstop", "pause"),
    ("bounce", "restart"),
    ("reboot", "restart"),
    ("exec", "run"),
    ("shell", "run"),
    ("sh", "run"),
    ("truncate", "delete"),
    ("purge", "delete"),
];

/// What the cell's faults are checked against.
pub(super) struct RunShape<'a> {
    pub workload: &'a Workload,
    pub topic: &'a TopicSpec,
}

/// What a fault holds while it lasts: one broker or one consumer.
#[derive(PartialEq)]
enum Holds {
    Broker(BrokerTarget),
    Consumer(u32),
}

impl Checker<'_> {
    /// The cell's timeline, every problem reported; None when any action does not check.
    pub(super) fn faults(
        &mut self,
        faults: &[syntax::Fault],
        ctx: &Picks,
        run: &RunShape,
    ) -> Option<Vec<Fault>> {
        let length = measured_length(run.workload);
        let lowered: Vec<Option<Fault>> = faults
            .iter()
            .map(|f| self.fault(f, ctx, run, length))
            .collect();
        let out: Vec<Fault> = lowered.iter().flatten().cloned().collect();
        self.overlaps(&out, length);
        (out.len() == faults.len()).then_some(out)
    }

    fn fault(
        &mut self,
        f: &syntax::Fault,
        ctx: &Picks,
        run: &RunShape,
        length: Option<Duration>,
    ) -> Option<Fault> {
        let verb = self.verb(&f.verb);
        let at = self.duration(&f.at, ctx, "a fault's time");
        let lasts = f
            .lasts
            .as_ref()
            .map(|v| (self.duration(v, ctx, "how long a fault lasts"), v.span));
        let placed = self.misplaced_words(f, verb?);
        let action = match verb? {
            "kill" | "pause" | "restart" => {
                let target = self.broker(f, ctx, run.topic)?;
                match verb? {
                    "kill" => FaultAction::Kill(target),
                    "pause" => FaultAction::Pause(target),
                    _ => FaultAction::Restart(target),
                }
            }
            "run" => FaultAction::Run(self.command(f, ctx)?),
            "delete" => self.delete_records(f, ctx, run.topic)?,
            _ => FaultAction::StopConsumer(self.consumer(f, ctx, run.workload)?),
        };
        let takes_for = matches!(
            action,
            FaultAction::Kill(_) | FaultAction::Pause(_) | FaultAction::StopConsumer(_)
        );
        let lasts = match lasts {
            None => None,
            Some((_, span)) if !takes_for => {
                let help = match action {
                    FaultAction::Run(_) => "a command runs once; to undo what it did, add a second `at ... run \"...\"`",
                    FaultAction::DeleteRecords { .. } => "deleted records stay deleted: nothing undoes a `delete`",
                    _ => "`restart` stops and starts the broker at once; for a broker down a while, write `kill broker ... for 10s`",
                };
                self.err(
                    Diagnostic::new(Kind::Value, span, format!("`{}` takes no `for`", verb?))
                        .label("remove this")
                        .help(help),
                );
                return None;
            }
            Some((None, _)) => return None,
            Some((Some(d), span)) if d.is_zero() => {
                self.err(
                    Diagnostic::new(Kind::Value, span, "a fault lasts longer than 0s")
                        .label("no time at all")
                        .help("give it a length, e.g. `for 10s`, or leave `for` out: the fault then lasts until the run ends"),
                );
                return None;
            }
            Some((Some(d), _)) => Some(d),
        };
        let at = at?;
        if !placed || !self.within_run(f, at, lasts, length) {
            return None;
        }
        Some(Fault::new(at, action, lasts, Some(f.span)))
    }

    fn verb(&mut self, verb: &crate::source::Spanned<String>) -> Option<&'static str> {
        if let Some(known) = ACTIONS.iter().find(|a| **a == verb.node) {
            return Some(known);
        }
        let lower = verb.node.to_ascii_lowercase();
        let help = match SYNONYMS.iter().find(|(w, _)| *w == lower) {
            Some((_, action)) => format!("did you mean `{action}`?"),
            None if matches!(lower.as_str(), "resume" | "continue" | "start" | "unpause") => {
                "a fault is undone by itself after `for`: `pause broker 2 for 5s`".to_string()
            }
            None => suggest(&verb.node, ACTIONS, "actions are"),
        };
        self.err(
            Diagnostic::new(
                Kind::UnknownKey,
                verb.span,
                format!("unknown fault action `{}`", verb.node),
            )
            .label("not an action")
            .help(help),
        );
        None
    }

    /// `broker 2`, `broker {victim}`, `broker leader(partition 0)`.
    fn broker(
        &mut self,
        f: &syntax::Fault,
        ctx: &Picks,
        topic: &TopicSpec,
    ) -> Option<BrokerTarget> {
        let verb = &f.verb.node;
        let example = format!("e.g. `{verb} broker 1` or `{verb} broker leader(partition 0)`");
        let which = match &f.object {
            Some(FaultObject::Node { noun, which, .. }) if noun.node == "broker" => which,
            Some(FaultObject::Node { noun, .. }) if noun.node == "consumer" => {
                let help = if verb == "kill" || verb == "pause" {
                    "a consumer is stopped with `stop consumer 1 for 10s`".to_string()
                } else {
                    example
                };
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        noun.span,
                        format!("`{verb}` acts on a broker, not a consumer"),
                    )
                    .label("not a broker")
                    .help(help),
                );
                return None;
            }
            Some(FaultObject::Node { noun, .. }) => {
                self.noun_error(noun, &["broker"], &example);
                return None;
            }
            Some(FaultObject::Command(c)) => {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        c.span,
                        format!("`{verb}` acts on a broker, not a command"),
                    )
                    .label("a command")
                    .help(format!("{example}; a command is run with `run \"...\"`")),
                );
                return None;
            }
            None => {
                self.err(
                    Diagnostic::new(
                        Kind::Missing,
                        f.verb.span,
                        format!("`{verb}` needs a broker"),
                    )
                    .label("which broker?")
                    .help(example),
                );
                return None;
            }
        };
        let Some(which) = which else {
            let Some(FaultObject::Node { noun, .. }) = &f.object else {
                unreachable!("matched a node above")
            };
            self.err(
                Diagnostic::new(Kind::Missing, noun.span, "which broker?")
                    .label("a broker id or a partition's leader follows")
                    .help(example),
            );
            return None;
        };
        let resolved = self.resolve(which, ctx)?.clone();
        match &resolved.kind {
            ValueKind::Call { name, args } if name.node == "leader" => {
                let partition = match args.as_slice() {
                    [a] if a.name.as_ref().map_or(true, |n| n.node == "partition") => &a.value,
                    _ => {
                        self.err(
                            Diagnostic::new(
                                Kind::Value,
                                resolved.span,
                                "`leader` takes one partition",
                            )
                            .label("here")
                            .help("write `leader(partition 0)`"),
                        );
                        return None;
                    }
                };
                let p = self.count(partition, ctx, "a partition", 0..=i32::MAX as u64)?;
                // An existing topic's partitions are known only when the run finds it.
                let n = topic.partitions.max(1) as u64;
                if p >= n && !topic.existing {
                    let span = self
                        .resolve(partition, ctx)
                        .map_or(partition.span, |v| v.span);
                    self.err(
                        Diagnostic::new(
                            Kind::Value,
                            span,
                            format!("the topic has no partition {p}"),
                        )
                        .label(format!("partitions are 0 to {}", n - 1))
                        .help(format!(
                            "name a partition from 0 to {}, or raise the topic's `partitions`",
                            n - 1
                        )),
                    );
                    return None;
                }
                Some(BrokerTarget::Leader(p as i32))
            }
            ValueKind::Word(w) if w == "leader" => {
                self.err(
                    Diagnostic::new(
                        Kind::Missing,
                        resolved.span,
                        "the leader of which partition?",
                    )
                    .label("a topic's partitions each have their own leader")
                    .help("write `leader(partition 0)`"),
                );
                None
            }
            ValueKind::Quantity(_) | ValueKind::Var(_) => {
                let id = self.count(&resolved, ctx, "a broker id", 0..=i32::MAX as u64)?;
                Some(BrokerTarget::Id(id as i32))
            }
            _ => {
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        resolved.span,
                        "a broker is named by its id or as a partition's leader",
                    )
                    .label("not a broker")
                    .help(example),
                );
                None
            }
        }
    }

    /// `run "kubectl delete pod kafka-1"`: a command, `{var}` filled in.
    fn command(&mut self, f: &syntax::Fault, ctx: &Picks) -> Option<String> {
        let example = "e.g. `run \"kubectl delete pod kafka-1\"`";
        match &f.object {
            Some(FaultObject::Command(c)) => {
                let v = Value {
                    kind: ValueKind::Str(c.node.clone()),
                    span: c.span,
                };
                let Some(Scalar::Str(cmd)) = self.scalar(&v, ctx) else {
                    return None;
                };
                if cmd.trim().is_empty() {
                    self.err(
                        Diagnostic::new(Kind::Value, c.span, "the command is empty")
                            .label("nothing to run")
                            .help(example),
                    );
                    return None;
                }
                Some(cmd)
            }
            Some(FaultObject::Node { noun, .. }) => {
                self.err(
                    Diagnostic::new(Kind::Type, noun.span, "`run` takes a command in quotes")
                        .label("not a string")
                        .help(example),
                );
                None
            }
            None => {
                self.err(
                    Diagnostic::new(Kind::Missing, f.verb.span, "`run` needs a command")
                        .label("run what?")
                        .help(example),
                );
                None
            }
        }
    }

    /// `stop consumer 1`: numbered from 1 within the group's `consumers`; the index returned is
    /// 0-based.
    fn consumer(&mut self, f: &syntax::Fault, ctx: &Picks, w: &Workload) -> Option<u32> {
        let example = "e.g. `stop consumer 1 for 10s`";
        let which = match &f.object {
            Some(FaultObject::Node { noun, which, .. }) if noun.node == "consumer" => which,
            Some(FaultObject::Node { noun, .. }) if noun.node == "broker" => {
                self.err(
                    Diagnostic::new(Kind::Value, f.verb.span, "`stop` acts on a consumer, not a broker")
                        .label("stops a consumer")
                        .help("stop a broker with `kill broker 1 for 10s` (SIGKILL, restarted after `for`) or `restart broker 1` (a clean stop and start)"),
                );
                return None;
            }
            Some(FaultObject::Node { noun, .. }) => {
                self.noun_error(noun, &["consumer"], example);
                return None;
            }
            _ => {
                self.err(
                    Diagnostic::new(Kind::Missing, f.verb.span, "`stop` needs a consumer")
                        .label("stop which consumer?")
                        .help(example),
                );
                return None;
            }
        };
        let Some(which) = which else {
            self.err(
                Diagnostic::new(Kind::Missing, f.span, "which consumer?")
                    .label("a consumer's number follows `consumer`")
                    .help(example),
            );
            return None;
        };
        let Some(n) = w.consumers else {
            self.err(
                Diagnostic::new(Kind::Missing, f.span, "`stop consumer` needs a consumer group")
                    .label("this run has no group of consumers")
                    .help("add `consumers = 2` to `workload`: a group of consumers that shares the partitions"),
            );
            return None;
        };
        let i = self.count(which, ctx, "a consumer's number", 1..=u64::from(n.max(1)))?;
        Some(i as u32 - 1)
    }

    fn noun_error(&mut self, noun: &crate::source::Spanned<String>, nouns: &[&str], example: &str) {
        let help = match crate::diagnostic::closest(&noun.node, nouns.iter().copied()) {
            Some(c) => format!("did you mean `{c}`?"),
            None => example.to_string(),
        };
        self.err(
            Diagnostic::new(
                Kind::UnknownKey,
                noun.span,
                format!("unknown target `{}`", noun.node),
            )
            .label(format!("expected `{}`", nouns.join("` or `")))
            .help(help),
        );
    }

    /// The action and its length fall within the measured phase, when its length is known.
    fn within_run(
        &mut self,
        f: &syntax::Fault,
        at: Duration,
        lasts: Option<Duration>,
        length: Option<Duration>,
    ) -> bool {
        let Some(length) = length else { return true };
        let end = human_duration(length.as_secs_f64());
        if at >= length {
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    f.at.span,
                    format!("the measured phase ends at {end}: the fault would never fire"),
                )
                .label("after the run")
                .help(format!(
                    "fire it before {end}, or lengthen the run (`duration`, `messages`)"
                )),
            );
            return false;
        }
        if let Some(d) = lasts.filter(|d| at + *d > length) {
            let span = f.lasts.as_ref().map_or(f.span, |v| v.span);
            let most = human_duration((length - at).as_secs_f64());
            self.err(
                Diagnostic::new(
                    Kind::Value,
                    span,
                    format!(
                        "the fault would last past the end of the measured phase ({} + {} > {end})",
                        human_duration(at.as_secs_f64()),
                        human_duration(d.as_secs_f64())
                    ),
                )
                .label("too long")
                .help(format!("at most `for {most}`; or leave `for` out, and the fault lasts until the run ends")),
            );
            return false;
        }
        true
    }

    /// Two faults on one broker (as written: by id, or by the same partition's leader) or one
    /// consumer at once are refused: the second would act on a node the first already holds.
    fn overlaps(&mut self, faults: &[Fault], length: Option<Duration>) {
        let held = |f: &Fault| match &f.action {
            FaultAction::Kill(t) | FaultAction::Pause(t) | FaultAction::Restart(t) => {
                Some(Holds::Broker(t.clone()))
            }
            FaultAction::StopConsumer(i) => Some(Holds::Consumer(*i)),
            FaultAction::Run(_) | FaultAction::DeleteRecords { .. } => None,
        };
        // A restart holds its broker for an instant; a fault without `for` until the end.
        let end = |f: &Fault| match f.action {
            FaultAction::Restart(_) => Some(f.at),
            _ => f.until().or(length),
        };
        for (j, later) in faults.iter().enumerate() {
            let Some(what) = held(later) else { continue };
            let clash = faults.iter().enumerate().find(|(i, earlier)| {
                *i != j
                    && held(earlier).as_ref() == Some(&what)
                    && (earlier.at, *i) < (later.at, j)
                    && match end(earlier) {
                        None => true,
                        Some(e) if e == earlier.at => later.at == e,
                        Some(e) => later.at < e,
                    }
            });
            if let Some((_, earlier)) = clash {
                let until = match end(earlier) {
                    Some(e) if e == earlier.at => String::new(),
                    Some(e) => format!(" until {}", human_duration(e.as_secs_f64())),
                    None => " until the run ends".to_string(),
                };
                let span = later.span.unwrap_or_else(|| earlier.span.expect("a span"));
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        span,
                        format!(
                            "this overlaps `{}`, which holds the same target{until}",
                            earlier.text
                        ),
                    )
                    .label("at the same time")
                    .help(match end(earlier) {
                        Some(e) if e > earlier.at => format!(
                            "start it at {} or later, or act on another target",
                            human_duration(e.as_secs_f64())
                        ),
                        Some(_) => "start it later, or act on another target".to_string(),
                        None => "give the first one a length with `for`, or act on another target"
                            .to_string(),
                    }),
                );
            }
        }
    }
}

impl Checker<'_> {
    /// Assertions on the fault figures need a run with a timeline (and `recovery.time` a paced
    /// one); otherwise nothing could ever measure them.
    pub(super) fn fault_metrics(&mut self, expects: &[&syntax::Assertion], cells: &[Cell]) {
        let faulted: Vec<&Cell> = cells.iter().filter(|c| !c.spec.faults.is_empty()).collect();
        let paced = faulted
            .iter()
            .any(|c| !matches!(c.spec.workload.rate, RateSpec::Unlimited));
        let mut metrics = Vec::new();
        for a in expects {
            metric_refs(&a.lhs, &mut metrics);
            match &a.test {
                syntax::Test::Compare(_, rhs) => metric_refs(rhs, &mut metrics),
                syntax::Test::Within(lo, hi) => {
                    metric_refs(lo, &mut metrics);
                    metric_refs(hi, &mut metrics);
                }
            }
        }
        for m in metrics {
            let Some(metric) = super::parse_metric(&m.name.node) else {
                continue;
            };
            let is_fault = matches!(
                metric,
                Metric::UnavailableTime
                    | Metric::RecoveryTime
                    | Metric::FaultLatency(..)
                    | Metric::FaultFailed
            );
            if is_fault && faulted.is_empty() {
                self.err(
                    Diagnostic::new(
                        Kind::Metric,
                        m.name.span,
                        format!(
                            "`{}` describes a fault, and no run of this scenario has one",
                            m.name.node
                        ),
                    )
                    .label("needs a fault timeline")
                    .help("add a timeline, e.g. `faults { at 10s kill broker 1 for 10s }`"),
                );
            } else if metric == Metric::RecoveryTime && !paced {
                self.err(
                    Diagnostic::new(
                        Kind::Metric,
                        m.name.span,
                        "`recovery.time` is measured against the target rate, and no run with faults is paced",
                    )
                    .label("needs a paced run")
                    .help("give the workload a rate, e.g. `rate = 1000/s`"),
                );
            }
        }
    }
}

pub(super) fn metric_refs<'a>(e: &'a syntax::Expr, out: &mut Vec<&'a syntax::MetricRef>) {
    match e {
        syntax::Expr::Metric(m) => out.push(m),
        syntax::Expr::Literal(_) => {}
        syntax::Expr::Binary(l, _, r, _) => {
            metric_refs(l, out);
            metric_refs(r, out);
        }
    }
}

/// How long the measured phase of a workload lasts, when it is known: its `duration`, the
/// instant its schedule reaches `messages` (a paced run), or the end of its shape, whichever
/// comes first (the arithmetic of `plan`'s estimate). A count at an unlimited rate has none.
pub(super) fn measured_length(w: &Workload) -> Option<Duration> {
    let by_count = w
        .messages
        .and_then(|n| w.rate.time_of(n as f64))
        .map(Duration::from_secs_f64);
    let shape_end = match w.rate {
        RateSpec::Shape(_) => w.rate.total_duration(),
        _ => None,
    };
    [w.duration, by_count, shape_end]
        .into_iter()
        .flatten()
        .min()
}
