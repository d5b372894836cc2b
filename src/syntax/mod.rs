//! Stage 1, parse: text → [`Ast`]. pest is confined to this module; its rule names are turned
//! into words a user knows by [`describe`], an exhaustive match, so a new rule without a
//! readable name does not compile.

pub mod ast;

use std::num::NonZeroUsize;
use std::sync::Once;

use pest::iterators::Pair;
use pest::Parser as _;

use crate::diagnostic::{Diagnostic, Kind};
use crate::source::{FileId, Span, Spanned};
pub use ast::*;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/kafkabench.pest"]
struct Grammar;

/// Bounds the parser's work on hostile input (deep nesting, pathological backtracking).
const CALL_LIMIT: usize = 5_000_000;

fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        pest::set_call_limit(NonZeroUsize::new(CALL_LIMIT));
        pest::set_error_detail(true);
    });
}

/// Parses a scenario file.
pub fn parse(file: FileId, text: &str) -> Result<Ast, Diagnostic> {
    init();
    let mut pairs = Grammar::parse(Rule::file, text).map_err(|e| syntax_error(file, text, e))?;
    let file_pair = pairs.next().expect("file rule always yields one pair");
    let scenario = file_pair
        .into_inner()
        .next()
        .expect("file holds a scenario");
    let b = Builder { file };
    Ok(b.scenario(scenario))
}

/// Parses an included file: bare entries, no `scenario` around them.
pub fn parse_fragment(file: FileId, text: &str) -> Result<Vec<Entry>, Diagnostic> {
    init();
    let mut pairs =
        Grammar::parse(Rule::fragment, text).map_err(|e| syntax_error(file, text, e))?;
    let b = Builder { file };
    Ok(pairs
        .next()
        .expect("fragment rule yields one pair")
        .into_inner()
        .filter(|p| p.as_rule() != Rule::EOI)
        .map(|p| b.entry(p))
        .collect())
}

/// What a user calls each rule. Exhaustive on purpose.
fn describe(rule: Rule) -> &'static str {
    match rule {
        Rule::EOI => "the end of the file",
        Rule::WHITESPACE | Rule::COMMENT => "white space",
        Rule::file => "a scenario",
        Rule::fragment => "settings or sections",
        Rule::scenario => "`scenario \"name\" { ... }`",
        Rule::entry => "a setting or a section",
        Rule::include => "`include \"file.kbs\"`",
        Rule::section => "a section (`name { ... }`)",
        Rule::setting => "a setting (`key = value`)",
        Rule::key => "a setting name",
        Rule::ident => "a name",
        Rule::value => "a value",
        Rule::list => "a list (`[a, b]`)",
        Rule::call => "a function (`json(size: 1KiB)`)",
        Rule::arg => "an argument",
        Rule::shape => "a rate shape (`8000/min for 1m, then 200/s for 1m`)",
        Rule::segment => "a rate segment (`200/s for 1m`)",
        Rule::rate => "a rate (`5000/s`)",
        Rule::quantity => "a number (`100_000`, `5ms`, `1KiB`)",
        Rule::number => "a number",
        Rule::unit => "a unit",
        Rule::var => "a variable (`{name}`)",
        Rule::word => "a word",
        Rule::string | Rule::string_inner => "a string",
        Rule::escape => "an escape (`\\\"`, `\\n`, `\\{`)",
        Rule::expect => "`expect { ... }`",
        Rule::assertion => "an assertion (`ack.p99 < 5ms`)",
        Rule::compare => "a comparison (`< 5ms`)",
        Rule::within => "a range (`in 400ms..600ms`)",
        Rule::cmp_op => "a comparison (`<`, `<=`, `>`, `>=`, `==`, `!=`)",
        Rule::arith | Rule::product => "an expression",
        Rule::add_op | Rule::mul_op => "an operator",
        Rule::operand => "a metric or a number",
        Rule::metric => "a metric (`ack.p99`)",
        Rule::metric_name => "a metric name",
        Rule::selector => "a cell selector (`[codec=zstd]`)",
        Rule::pick => "`variable=value`",
        Rule::condition => "`when ...`",
        Rule::clause => "a condition (`codec == zstd`)",
        Rule::eq_op => "`==` or `!=`",
        Rule::atom => "a value",
    }
}

fn syntax_error(file: FileId, text: &str, e: pest::error::Error<Rule>) -> Diagnostic {
    let (start, end) = match e.location {
        pest::error::InputLocation::Pos(p) => (p, p),
        pest::error::InputLocation::Span((s, e)) => (s, e),
    };
    // Point at the offending character (or the end) rather than an empty gap.
    let end = if end == start {
        next_char_boundary(text, start)
    } else {
        end
    };
    let found = match text[start..].chars().next() {
        None => "the end of the file".to_string(),
        Some(c) if c.is_whitespace() => "white space".to_string(),
        Some(_) => {
            let tok: String = text[start..]
                .chars()
                .take_while(|c| !c.is_whitespace())
                .take(20)
                .collect();
            format!("`{tok}`")
        }
    };
    let mut expected: Vec<String> = Vec::new();
    if let pest::error::ErrorVariant::ParsingError { positives, .. } = &e.variant {
        for r in positives {
            let d = describe(*r);
            if !matches!(*r, Rule::WHITESPACE | Rule::COMMENT) && !expected.iter().any(|x| x == d) {
                expected.push(d.to_string());
            }
        }
    }
    if let Some(att) = e.parse_attempts() {
        for t in att.expected_tokens() {
            // ParsingToken is not exported; only literal (case-sensitive) tokens help a user.
            let lit = t.to_string();
            let layout = lit.trim().is_empty() || lit == "#" || lit == "//";
            if format!("{t:?}").starts_with("Sensitive") && !layout {
                let t = format!("`{t}`");
                if !expected.contains(&t) {
                    expected.push(t);
                }
            }
        }
    }
    expected.truncate(8);
    let help = match expected.len() {
        0 => None,
        1 => Some(format!("expected {}", expected[0])),
        _ => Some(format!("expected one of: {}", expected.join(", "))),
    };
    let msg = match e.variant {
        pest::error::ErrorVariant::CustomError { message } => message,
        _ => format!("unexpected {found}"),
    };
    let msg = if msg.contains("call limit") {
        "the file is too deeply nested or too complex to parse".to_string()
    } else {
        msg
    };
    Diagnostic::new(Kind::Syntax, Span::new(file, start, end), msg)
        .label("here")
        .help_opt(help)
}

fn next_char_boundary(text: &str, at: usize) -> usize {
    text[at..].chars().next().map_or(at, |c| at + c.len_utf8())
}

struct Builder {
    file: FileId,
}

impl Builder {
    fn span(&self, p: &Pair<Rule>) -> Span {
        let s = p.as_span();
        Span::new(self.file, s.start(), s.end())
    }

    fn spanned(&self, p: &Pair<Rule>) -> Spanned<String> {
        Spanned::new(p.as_str().to_string(), self.span(p))
    }

    fn scenario(&self, p: Pair<Rule>) -> Ast {
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

    fn entry(&self, p: Pair<Rule>) -> Entry {
        let span = self.span(&p);
        match p.as_rule() {
            Rule::include => Entry::Include(self.string(p.into_inner().next().expect("path"))),
            Rule::expect => {
                Entry::Expect(p.into_inner().map(|a| self.assertion(a)).collect(), span)
            }
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

    fn value_alt(&self, p: Pair<Rule>) -> Value {
        let span = self.span(&p);
        let kind = match p.as_rule() {
            Rule::shape => {
                let segs: Vec<Segment> = p.into_inner().map(|s| self.segment(s)).collect();
                ValueKind::Shape(segs)
            }
            Rule::list => ValueKind::List(p.into_inner().map(|v| self.value(v)).collect()),
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
            Rule::string => ValueKind::Str(self.string(p).node),
            Rule::var => ValueKind::Var(self.spanned(&p.into_inner().next().expect("var name"))),
            Rule::word => ValueKind::Word(p.as_str().to_string()),
            Rule::atom => return self.value_alt(p.into_inner().next().expect("atom alt")),
            r => unreachable!("value cannot be {r:?}"),
        };
        Value { kind, span }
    }

    fn segment(&self, p: Pair<Rule>) -> Segment {
        let mut inner = p.into_inner();
        let r = inner.next().expect("segment rate");
        let rate_span = self.span(&r);
        let d = inner.next();
        match d {
            Some(d) => {
                let duration_span = self.span(&d);
                Segment {
                    rate: self.rate(r),
                    rate_span,
                    duration: self.quantity(d),
                    duration_span,
                }
            }
            // A shape of one segment without `for` is parsed as the bare rate (see `value`).
            None => unreachable!("segment always has `for`"),
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
        let unit = inner.next().map(|u| self.spanned(&u));
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
        let when = inner
            .next()
            .map(|c| c.into_inner().map(|cl| self.clause(cl)).collect())
            .unwrap_or_default();
        Assertion {
            lhs,
            test,
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
                let select = mi
                    .next()
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
                Expr::Metric(MetricRef { name, select, span })
            }
            Rule::arith => self.arith(inner),
            _ => Expr::Literal(self.value_alt(inner)),
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

/// Files larger than this are refused before parsing: no scenario is this big.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
const MAX_INCLUDE_DEPTH: usize = 8;

/// Reads and parses a scenario file, splicing in included files. Every file read is added to
/// `sources` so diagnostics can show it.
pub fn load(
    path: &std::path::Path,
    sources: &mut crate::source::Sources,
) -> Result<Ast, crate::diagnostic::Diagnostics> {
    let text = read_text(path).map_err(crate::diagnostic::Diagnostics::from)?;
    let id = sources.add(path.to_path_buf(), text);
    let text = sources.get(id).text.clone();
    let mut ast = parse(id, &text)?;
    let mut diags = crate::diagnostic::Diagnostics::default();
    let mut stack = vec![path.canonicalize().unwrap_or_else(|_| path.to_path_buf())];
    ast.entries = expand(
        std::mem::take(&mut ast.entries),
        sources,
        &mut stack,
        &mut diags,
    );
    if diags.is_empty() {
        Ok(ast)
    } else {
        Err(diags)
    }
}

fn read_text(path: &std::path::Path) -> Result<String, Diagnostic> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| {
        Diagnostic::unplaced(Kind::Io, format!("cannot read {shown}: {}", io_reason(&e)))
    })?;
    if meta.is_dir() {
        return Err(Diagnostic::unplaced(
            Kind::Io,
            format!("{shown} is a directory, not a scenario file"),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(Diagnostic::unplaced(
            Kind::Io,
            format!(
                "{shown} is {} MB; a scenario file is at most {} MB",
                meta.len() / 1_000_000,
                MAX_FILE_BYTES / 1_000_000
            ),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| {
        Diagnostic::unplaced(Kind::Io, format!("cannot read {shown}: {}", io_reason(&e)))
    })?;
    String::from_utf8(bytes).map_err(|e| {
        Diagnostic::unplaced(
            Kind::Io,
            format!(
                "{shown} is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
        .help("scenario files are UTF-8 text")
    })
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

fn expand(
    entries: Vec<Entry>,
    sources: &mut crate::source::Sources,
    stack: &mut Vec<std::path::PathBuf>,
    diags: &mut crate::diagnostic::Diagnostics,
) -> Vec<Entry> {
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        match e {
            Entry::Include(p) => {
                let dir = sources.get(p.span.file).dir().to_path_buf();
                let path = dir.join(&p.node);
                let canon = path.canonicalize().unwrap_or_else(|_| path.clone());
                if stack.contains(&canon) {
                    diags.push(
                        Diagnostic::new(
                            Kind::Include,
                            p.span,
                            format!("{} includes itself", p.node),
                        )
                        .label("include cycle"),
                    );
                    continue;
                }
                if stack.len() > MAX_INCLUDE_DEPTH {
                    diags.push(
                        Diagnostic::new(Kind::Include, p.span, "includes nest too deeply")
                            .label("here"),
                    );
                    continue;
                }
                let text = match read_text(&path) {
                    Ok(t) => t,
                    Err(d) => {
                        diags.push(
                            Diagnostic::new(Kind::Include, p.span, d.message)
                                .label("this include")
                                .help(format!("paths are relative to {}", dir.display())),
                        );
                        continue;
                    }
                };
                let id = sources.add(path, text);
                let text = sources.get(id).text.clone();
                match parse_fragment(id, &text) {
                    Ok(inner) => {
                        stack.push(canon);
                        out.extend(expand(inner, sources, stack, diags));
                        stack.pop();
                    }
                    Err(d) => diags.push(d),
                }
            }
            Entry::Section(mut s) => {
                s.entries = expand(std::mem::take(&mut s.entries), sources, stack, diags);
                out.push(Entry::Section(s));
            }
            other => out.push(other),
        }
    }
    out
}
