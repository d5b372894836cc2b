//! The AST builder: pest pairs → [`Ast`] nodes, each with its span. The grammar guarantees the
//! shape of every pair, so a missing child is a bug in this file, not a user error.

use pest::iterators::Pair;

use super::ast::*;
use super::Rule;
use crate::source::{FileId, Span, Spanned};

pub(super) struct Builder {
    file: FileId,
}

impl Builder {
    pub(super) fn new(file: FileId) -> Builder {
        Builder { file }
    }

    fn span(&self, p: &Pair<Rule>) -> Span {
        let s = p.as_span();
        Span::new(self.file, s.start(), s.end())
    }

    fn spanned(&self, p: &Pair<Rule>) -> Spanned<String> {
        Spanned::new(p.as_str().to_string(), self.span(p))
    }

    pub(super) fn scenario(&self, p: Pair<Rule>) -> Ast {
        let span = self.span(&p);
        let mut inner = p.into_inner();
        let name = self.string(inner.next().expect("scenario has a name"));
        let entries = inner.map(|e| self.entry(e)).collect();
        Ast {
            name,
            entries,
            span,
        }
    }

    fn string(&self, p: Pair<Rule>) -> Spanned<String> {
        let span = self.span(&p);
        let raw = p.into_inner().next().map_or("", |i| i.as_str());
        Spanned::new(unescape(raw), span)
    }

    pub(super) fn entry(&self, p: Pair<Rule>) -> Entry {
        let span = self.span(&p);
        match p.as_rule() {
            Rule::include => Entry::Include(self.string(p.into_inner().next().expect("path"))),
            Rule::expect => {
                Entry::Expect(p.into_inner().map(|a| self.assertion(a)).collect(), span)
            }
            Rule::slo => Entry::Slo(p.into_inner().map(|a| self.assertion(a)).collect(), span),
            Rule::faults => Entry::Faults(p.into_inner().map(|f| self.fault(f)).collect(), span),
            Rule::section => {
                let mut inner = p.into_inner().peekable();
                let name = self.spanned(&inner.next().expect("section name"));
                let label = match inner.peek().map(|x| x.as_rule()) {
                    Some(Rule::string) => Some(self.string(inner.next().expect("peeked"))),
                    _ => None,
                };
                let entries = inner.map(|e| self.entry(e)).collect();
                Entry::Section(Section {
                    name,
                    label,
                    entries,
                    span,
                })
            }
            Rule::setting => {
                let mut inner = p.into_inner();
                let key = self.spanned(&inner.next().expect("key"));
                let value = self.value(inner.next().expect("value"));
                Entry::Setting(Setting { key, value, span })
            }
            r => unreachable!("entry cannot be {r:?}"),
        }
    }

    fn value(&self, p: Pair<Rule>) -> Value {
        // `value` wraps exactly one alternative.
        let inner = p.into_inner().next().expect("value has one alternative");
        self.value_alt(inner)
    }

    /// A list's item: a value, or a value and its share (`100B: 70%`).
    fn item(&self, p: Pair<Rule>) -> Value {
        if p.as_rule() != Rule::pair {
            return self.value(p);
        }
        let span = self.span(&p);
        let mut inner = p.into_inner();
        let what = self.value(inner.next().expect("a pair's value"));
        let share = self.value(inner.next().expect("a pair's share"));
        Value {
            kind: ValueKind::Pair(Box::new(what), Box::new(share)),
            span,
        }
    }

    fn value_alt(&self, p: Pair<Rule>) -> Value {
        let span = self.span(&p);
        let kind = match p.as_rule() {
            Rule::shape => {
                let segs: Vec<Segment> = p.into_inner().map(|s| self.segment(s)).collect();
                ValueKind::Shape(segs)
            }
            Rule::list => ValueKind::List(p.into_inner().map(|v| self.item(v)).collect()),
            Rule::call => {
                let mut inner = p.into_inner();
                let name = self.spanned(&inner.next().expect("call name"));
                let args = inner
                    .map(|a| {
                        let mut ai = a.into_inner().peekable();
                        let name = match ai.peek().map(|x| x.as_rule()) {
                            Some(Rule::ident) => Some(self.spanned(&ai.next().expect("peeked"))),
                            _ => None,
                        };
                        Arg {
                            name,
                            value: self.value(ai.next().expect("arg value")),
                        }
                    })
                    .collect();
                ValueKind::Call { name, args }
            }
            Rule::rate => ValueKind::Rate(self.rate(p)),
            Rule::quantity => ValueKind::Quantity(self.quantity(p)),
            Rule::tolerance => {
                ValueKind::Tolerance(self.quantity(p.into_inner().next().expect("tolerance")))
            }
            Rule::string => ValueKind::Str(self.string(p).node),
            Rule::var => ValueKind::Var(self.spanned(&p.into_inner().next().expect("var name"))),
            Rule::word => ValueKind::Word(p.as_str().to_string()),
            Rule::atom => return self.value_alt(p.into_inner().next().expect("atom alt")),
            r => unreachable!("value cannot be {r:?}"),
        };
        Value { kind, span }
    }

    /// `200/s for 1m`, or `ramp 1000/s to 20000/s over 30s`.
    fn segment(&self, p: Pair<Rule>) -> Segment {
        let ramp = p.as_rule() == Rule::ramp;
        let mut inner = p.into_inner();
        let r = inner.next().expect("segment rate");
        let rate_span = self.span(&r);
        let ramp_to = ramp.then(|| {
            let to = inner.next().expect("a ramp has `to` and a rate");
            let span = self.span(&to);
            (self.rate(to), span)
        });
        let d = inner.next().expect("segment has `for` and a duration");
        let duration_span = self.span(&d);
        Segment {
            rate: self.rate(r),
            rate_span,
            ramp_to,
            duration: self.quantity(d),
            duration_span,
        }
    }

    fn rate(&self, p: Pair<Rule>) -> RateLit {
        let mut inner = p.into_inner();
        let number = number(inner.next().expect("rate number").as_str());
        let mut rest: Vec<Pair<Rule>> = inner.collect();
        let per = rest.pop().expect("rate period");
        let unit = rest.pop().map(|u| self.spanned(&u));
        RateLit {
            amount: Quantity { number, unit },
            per: self.spanned(&per),
        }
    }

    fn quantity(&self, p: Pair<Rule>) -> Quantity {
        let mut inner = p.into_inner();
        let number = number(inner.next().expect("quantity number").as_str());
        // A noun (`1000 messages`) stands for the unit a bare count would have: a count.
        let mut unit = None;
        for u in inner {
            if u.as_rule() == Rule::unit || unit.is_none() {
                unit = Some(self.spanned(&u));
            }
        }
        Quantity { number, unit }
    }

    fn assertion(&self, p: Pair<Rule>) -> Assertion {
        let span = self.span(&p);
        let mut inner = p.into_inner();
        let lhs = self.arith(inner.next().expect("lhs"));
        let t = inner.next().expect("test");
        let test = match t.as_rule() {
            Rule::compare => {
                let mut ti = t.into_inner();
                let op = match ti.next().expect("op").as_str() {
                    "<" => CmpOp::Lt,
                    "<=" => CmpOp::Le,
                    ">" => CmpOp::Gt,
                    ">=" => CmpOp::Ge,
                    "==" => CmpOp::Eq,
                    _ => CmpOp::Ne,
                };
                Test::Compare(op, self.arith(ti.next().expect("rhs")))
            }
            Rule::within => {
                let mut ti = t.into_inner();
                let lo = self.operand(ti.next().expect("low"));
                let hi = self.operand(ti.next().expect("high"));
                Test::Within(lo, hi)
            }
            r => unreachable!("test cannot be {r:?}"),
        };
        let mut next = inner.next();
        let confidence = match &next {
            Some(c) if c.as_rule() == Rule::confidence => {
                let q = c.clone().into_inner().next().expect("a level");
                next = inner.next();
                Some(self.value_alt(q))
            }
            _ => None,
        };
        let when = next
            .map(|c| c.into_inner().map(|cl| self.clause(cl)).collect())
            .unwrap_or_default();
        Assertion {
            lhs,
            test,
            confidence,
            when,
            span,
        }
    }

    /// `arith` and `product` are left-associative chains of the same shape.
    fn arith(&self, p: Pair<Rule>) -> Expr {
        let mut inner = p.into_inner();
        let first = inner.next().expect("first operand");
        let mut acc = self.chain_item(first);
        while let Some(op) = inner.next() {
            let rhs = self.chain_item(inner.next().expect("rhs after op"));
            let op = match op.as_str() {
                "+" => BinOp::Add,
                "-" => BinOp::Sub,
                "*" => BinOp::Mul,
                _ => BinOp::Div,
            };
            let span = acc.span().to(rhs.span());
            acc = Expr::Binary(Box::new(acc), op, Box::new(rhs), span);
        }
        acc
    }

    fn chain_item(&self, p: Pair<Rule>) -> Expr {
        match p.as_rule() {
            Rule::product | Rule::arith => self.arith(p),
            Rule::operand => self.operand(p),
            r => unreachable!("chain item cannot be {r:?}"),
        }
    }

    fn operand(&self, p: Pair<Rule>) -> Expr {
        let inner = p.into_inner().next().expect("operand alt");
        match inner.as_rule() {
            Rule::metric => {
                let span = self.span(&inner);
                let mut mi = inner.into_inner();
                let name = self.spanned(&mi.next().expect("metric name"));
                let (mut select_pair, mut place_pair) = (None, None);
                for x in mi {
                    match x.as_rule() {
                        Rule::selector => select_pair = Some(x),
                        _ => place_pair = Some(x),
                    }
                }
                let place = place_pair.map(|p| Box::new(self.place(p)));
                let select = select_pair
                    .map(|s| {
                        s.into_inner()
                            .map(|pick| {
                                let mut pi = pick.into_inner();
                                let var = self.spanned(&pi.next().expect("pick var"));
                                (var, self.value_alt(pi.next().expect("pick value")))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Expr::Metric(MetricRef {
                    name,
                    select,
                    place,
                    span,
                })
            }
            Rule::arith => self.arith(inner),
            _ => Expr::Literal(self.value_alt(inner)),
        }
    }

    /// `of [every] broker [N]`.
    fn place(&self, p: Pair<Rule>) -> PlaceRef {
        let span = self.span(&p);
        let (mut every, mut noun, mut id) = (false, None, None);
        for x in p.into_inner() {
            match x.as_rule() {
                Rule::every => every = true,
                Rule::place_noun => noun = Some(self.spanned(&x)),
                _ => id = Some(self.spanned(&x)),
            }
        }
        PlaceRef {
            every,
            noun: noun.expect("a place has its noun"),
            id,
            span,
        }
    }

    /// `at T verb [object] [for D]`.
    fn fault(&self, p: Pair<Rule>) -> Fault {
        // Up to its last part: pest's pair also holds the white space it skipped looking for
        // an optional `for`, up to the next action.
        let last_end = p
            .clone()
            .into_inner()
            .last()
            .map_or(p.as_span().end(), |c| c.as_span().end());
        let span = Span::new(self.file, p.as_span().start(), last_end);
        let mut at = None;
        let mut verb = None;
        let mut object = None;
        let mut lasts = None;
        let mut before = None;
        for part in p.into_inner() {
            match part.as_rule() {
                Rule::fault_time => at = Some(self.fault_time(part)),
                Rule::fault_verb => verb = Some(self.spanned(&part)),
                Rule::fault_object => object = Some(self.fault_object(part)),
                Rule::fault_lasts => {
                    lasts = Some(self.fault_time(part.into_inner().next().expect("a duration")))
                }
                Rule::fault_before => {
                    before = Some(self.fault_time(part.into_inner().next().expect("an offset")))
                }
                r => unreachable!("a fault cannot hold {r:?}"),
            }
        }
        Fault {
            at: at.expect("a fault has `at`"),
            verb: verb.expect("a fault has an action"),
            object,
            before,
            lasts,
            span,
        }
    }

    fn fault_time(&self, p: Pair<Rule>) -> Value {
        self.value_alt(p.into_inner().next().expect("a quantity or a variable"))
    }

    fn fault_object(&self, p: Pair<Rule>) -> FaultObject {
        let mut inner = p.into_inner();
        let first = inner.next().expect("an object");
        if first.as_rule() == Rule::string {
            return FaultObject::Command(self.string(first));
        }
        let mut next = inner.next();
        let of = match &next {
            Some(o) if o.as_rule() == Rule::fault_of => {
                let word = o.clone().into_inner().next().expect("a name after `of`");
                next = inner.next();
                Some(self.spanned(&word))
            }
            _ => None,
        };
        let which = next.map(|w| {
            let alt = w.into_inner().next().expect("which one");
            let span = self.span(&alt);
            match alt.as_rule() {
                Rule::leader => {
                    let mut li = alt.into_inner();
                    let word = self.spanned(&li.next().expect("`leader`"));
                    match li.next() {
                        Some(partition) => Value {
                            kind: ValueKind::Call {
                                name: word,
                                args: vec![Arg {
                                    name: Some(Spanned::new("partition".into(), span)),
                                    value: self.fault_time(partition),
                                }],
                            },
                            span,
                        },
                        None => Value {
                            kind: ValueKind::Word(word.node),
                            span,
                        },
                    }
                }
                Rule::fault_word => Value {
                    kind: ValueKind::Word(alt.as_str().to_string()),
                    span,
                },
                _ => self.value_alt(alt),
            }
        });
        FaultObject::Node {
            noun: self.spanned(&first),
            of,
            which,
        }
    }

    fn clause(&self, p: Pair<Rule>) -> Clause {
        let span = self.span(&p);
        let mut inner = p.into_inner();
        let var = self.spanned(&inner.next().expect("clause var"));
        let rest: Vec<Pair<Rule>> = inner.collect();
        let (op, values) = match rest.first().map(|x| x.as_rule()) {
            Some(Rule::eq_op) => {
                let op = if rest[0].as_str() == "==" {
                    ClauseOp::Eq
                } else {
                    ClauseOp::Ne
                };
                (
                    op,
                    rest[1..]
                        .iter()
                        .map(|a| self.value_alt(a.clone()))
                        .collect(),
                )
            }
            _ => (
                ClauseOp::In,
                rest.into_iter().map(|a| self.value_alt(a)).collect(),
            ),
        };
        Clause {
            var,
            op,
            values,
            span,
        }
    }
}

fn number(text: &str) -> Number {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let integer = if clean.contains('.') {
        None
    } else {
        clean.parse::<u64>().ok()
    };
    Number {
        value: clean.parse::<f64>().unwrap_or(f64::MAX),
        integer,
    }
}

fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                // The grammar allows two hex digits up to 7f: one ASCII character.
                Some('x') => {
                    let hex: String = chars.by_ref().take(2).collect();
                    out.push(u8::from_str_radix(&hex, 16).map_or('?', char::from));
                }
                // `\{` stays escaped so templating can tell it from a variable.
                Some('{') => out.push_str("\\{"),
                Some('}') => out.push_str("\\}"),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}
