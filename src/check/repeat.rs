//! `repeat = N` and `repeat = auto(±5%, max 20)`: how many trials of every run, or the rule that
//! decides it (`measure::sequential`).

use super::axis::Picks;
use super::{Checker, MAX_REPEAT};
use crate::diagnostic::{closest, Diagnostic, Kind};
use crate::model::{AutoRepeat, Scalar};
use crate::syntax::{Arg, Value, ValueKind};

/// What `repeat` said.
pub(super) enum Repeat {
    Fixed(u64),
    Auto(AutoRepeat),
}

/// The arguments `auto(…)` takes by name.
const NAMES: [&str; 2] = ["within", "max"];

/// The widest tolerance: beyond ±50 % the median is not being measured.
const WIDEST: f64 = 0.5;

impl Checker<'_> {
    pub(super) fn repeat(&mut self, v: &Value) -> Option<Repeat> {
        match &v.kind {
            ValueKind::Word(w) if w == "auto" => Some(Repeat::Auto(AutoRepeat::DEFAULT)),
            ValueKind::Call { name, args } if name.node == "auto" => {
                self.auto_args(args).map(Repeat::Auto)
            }
            ValueKind::Call { name, .. } => {
                let help = match closest(&name.node, ["auto"]) {
                    Some(c) => format!("did you mean `{c}(±5%, max 20)`?"),
                    None => "write `repeat = 5`, or `repeat = auto(±5%, max 20)` to repeat until \
                             the figures are known within ±5 %"
                        .into(),
                };
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        name.span,
                        format!("unknown function `{}` for `repeat`", name.node),
                    )
                    .label("not `auto`")
                    .help(help),
                );
                None
            }
            _ => self
                .count(v, &Picks::none(), "repeat", 1..=MAX_REPEAT)
                .map(Repeat::Fixed),
        }
    }

    /// `auto(±5%, max 20)`, `auto(within: ±5%)`, `auto(max 12)`: the tolerance first or by
    /// name, `max` by name; what is left out takes its default.
    fn auto_args(&mut self, args: &[Arg]) -> Option<AutoRepeat> {
        let mut out = AutoRepeat::DEFAULT;
        let mut seen: Vec<&str> = Vec::new();
        let mut ok = true;
        for (i, a) in args.iter().enumerate() {
            let name = match &a.name {
                Some(n) if NAMES.contains(&n.node.as_str()) => n.node.as_str(),
                Some(n) => {
                    self.unknown_auto_argument(
                        n,
                        &NAMES,
                        "`auto` takes a tolerance (`±5%`) and `max` (trials)",
                    );
                    ok = false;
                    continue;
                }
                None if i == 0 => "within",
                None => {
                    self.err(
                        Diagnostic::new(Kind::Value, a.value.span, "`auto` names this argument")
                            .label("which one?")
                            .help(format!(
                                "write `auto(±5%, max {})` (the tolerance first, then `max`)",
                                self.sources.text(a.value.span)
                            )),
                    );
                    ok = false;
                    continue;
                }
            };
            if seen.contains(&name) {
                self.err(
                    Diagnostic::new(
                        Kind::Duplicate,
                        a.name.as_ref().map_or(a.value.span, |n| n.span),
                        format!("`{name}` is given twice"),
                    )
                    .label("second")
                    .help("give each argument of `auto` once"),
                );
                ok = false;
                continue;
            }
            seen.push(name);
            match name {
                "within" => match self.tolerance(&a.value) {
                    Some(w) => out.within = w,
                    None => ok = false,
                },
                _ => match self.count(&a.value, &Picks::none(), "`max`", 1..=MAX_REPEAT) {
                    Some(m) if m < u64::from(AutoRepeat::FIRST_LOOK) => {
                        self.err(
                            Diagnostic::new(
                                Kind::Value,
                                a.value.span,
                                format!(
                                    "`max` is at least {}: the first look",
                                    AutoRepeat::FIRST_LOOK
                                ),
                            )
                            .label(format!("{m} trials end before it"))
                            .help(format!(
                                "each look's interval is at a level above 95 % (99 % for five \
                                 looks), which fewer than {} trials cannot give; for {m} trials \
                                 write `repeat = {m}`",
                                AutoRepeat::FIRST_LOOK
                            )),
                        );
                        ok = false;
                    }
                    Some(m) => out.max = m as u32,
                    None => ok = false,
                },
            }
        }
        ok.then_some(out)
    }

    /// `±5%`: above 0 and at most ±50 %. A plain `5%` means the same.
    fn tolerance(&mut self, v: &Value) -> Option<f64> {
        let q = match &v.kind {
            ValueKind::Tolerance(q) | ValueKind::Quantity(q) => q,
            _ => {
                self.err(
                    Diagnostic::new(
                        Kind::Type,
                        v.span,
                        "the tolerance of `auto` is a percentage",
                    )
                    .label("expected e.g. `±5%`")
                    .help("write `repeat = auto(±5%, max 20)`"),
                );
                return None;
            }
        };
        let span = v.span;
        match super::units::quantity(q, span) {
            Ok(Scalar::Ratio(f)) if f > 0.0 && f <= WIDEST => Some(f),
            Ok(Scalar::Ratio(_)) => {
                self.err(
                    Diagnostic::new(
                        Kind::Value,
                        span,
                        "the tolerance of `auto` is above ±0% and at most ±50%",
                    )
                    .label("out of range")
                    .help("the interval of each judged median must narrow to it, e.g. `±5%`"),
                );
                None
            }
            Ok(_) => {
                self.err(
                    Diagnostic::new(Kind::Unit, span, "the tolerance of `auto` is a percentage")
                        .label("not a percentage")
                        .help("write e.g. `±5%`: relative to each judged median"),
                );
                None
            }
            Err(d) => {
                self.err(d);
                None
            }
        }
    }
}

impl Checker<'_> {
    /// An argument `auto(…)` does not take (`repeat = auto`, `warmup = auto`): its name, a
    /// did-you-mean among `names`, else `usage`.
    pub(super) fn unknown_auto_argument(
        &mut self,
        n: &crate::source::Spanned<String>,
        names: &[&str],
        usage: &str,
    ) {
        let help = match closest(&n.node, names.iter().copied()) {
            Some(c) => format!("did you mean `{c}`?"),
            None => usage.to_string(),
        };
        self.err(
            Diagnostic::new(
                Kind::UnknownKey,
                n.span,
                format!("unknown argument `{}` of `auto`", n.node),
            )
            .label("not an argument of `auto`")
            .help(help),
        );
    }
}
