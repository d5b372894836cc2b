//! The TextMate grammar (editors/textmate/kbs.tmLanguage.json) through VS Code's own engine
//! (vscode-textmate + vscode-oniguruma under Node; `npm ci` in editors/ when missing): one
//! per-token scope snapshot per shipped scenario, and a cross-check against kafkabench's own
//! parser: every comment, property, section, unit, string, variable and metric it finds has the
//! scope meant for it, and no token is left without a scope. Fails, never skips, without Node.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use crate::common::repo;
use kafkabench::source::{FileId, Span};
use kafkabench::syntax::{self, Entry, Expr, Test, Value, ValueKind};

/// Each line of a file: its tokens, each its text and its scopes below `source.kbs`.
type Tokens = Vec<Vec<(String, Vec<String>)>>;

macro_rules! each_scenario {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                scopes_match_the_snapshot_and_the_parser(stringify!($name));
            }
        )*

        const LISTED: &[&str] = &[$(stringify!($name)),*];
    };
}

each_scenario!(
    backlog,
    batch_size_sweep,
    capacity_linger_codec,
    clients,
    codecs_by_encoding,
    codecs_random_vs_orders,
    cold_reads,
    compacted_topic,
    consumer_group,
    group_protocols,
    group_scale_out,
    latency_timers,
    linger_load,
    many_topics,
    ordering_idempotence,
    promo_day,
    promo_friday,
    share_poison,
    share_work_queue,
    transactions,
    tuning_ladder,
);

#[test]
fn every_shipped_scenario_has_a_scope_test() {
    let mut shipped: Vec<String> = shipped().keys().cloned().collect();
    shipped.sort();
    assert_eq!(shipped, LISTED, "add the new scenario to each_scenario!");
}

fn shipped() -> BTreeMap<String, PathBuf> {
    std::fs::read_dir(repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "kbs"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect()
}

/// Installs the engine once (`npm ci`, from editors/package-lock.json), then tokenizes every
/// shipped scenario in one Node process.
fn tokenized() -> &'static BTreeMap<String, Tokens> {
    static ALL: OnceLock<BTreeMap<String, Tokens>> = OnceLock::new();
    ALL.get_or_init(|| {
        let editors = repo().join("editors");
        if !editors.join("node_modules/vscode-textmate").exists() {
            let status = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&editors)
                .status()
                .unwrap_or_else(|e| panic!("npm is needed to install the TextMate engine: {e}"));
            assert!(status.success(), "npm ci in editors/ failed");
        }
        let files = shipped();
        let mut paths: Vec<PathBuf> = files.values().cloned().collect();
        paths.push(editors.join(SAMPLE));
        let out = Command::new("node")
            .arg(editors.join("test/scopes.js"))
            .args(&paths)
            .output()
            .unwrap_or_else(|e| panic!("node is needed to run the TextMate engine: {e}"));
        assert!(
            out.status.success(),
            "editors/test/scopes.js failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let by_path: BTreeMap<String, Tokens> =
            serde_json::from_slice(&out.stdout).expect("JSON from scopes.js");
        let sample = by_path[&editors.join(SAMPLE).display().to_string()].clone();
        files
            .into_iter()
            .map(|(name, path)| {
                let tokens = by_path[&path.display().to_string()].clone();
                (name, tokens)
            })
            .chain([(SAMPLE.to_string(), sample)])
            .collect()
    })
}

/// Syntax the shipped scenarios do not show (ramps, SI counts, escapes, `//` comments).
const SAMPLE: &str = "test/sample.kbs";

#[test]
fn syntax_beyond_the_shipped_scenarios_gets_its_scopes_too() {
    let tokens = &tokenized()[SAMPLE];
    let scope_of = |line: usize, text: &str| -> String {
        tokens[line - 1]
            .iter()
            .find(|(t, _)| t == text)
            .map(|(_, s)| s.join(" "))
            .unwrap_or_else(|| panic!("no token {text:?} on line {line}: {:?}", tokens[line - 1]))
    };
    for (line, text, want) in [
        (1, "//", "comment.line.double-slash"),
        (3, "include", "keyword.control.import"),
        (5, "300", "constant.numeric"),
        (5, "k", "keyword.other.unit"),
        (6, "ramp", "keyword.control"),
        (6, "to", "keyword.control"),
        (6, "over", "keyword.control"),
        (6, "MB", "keyword.other.unit"),
        (7, "file", "entity.name.function"),
        (7, "delimiter", "entity.other.attribute-name"),
        (7, "\\x1e", "constant.character.escape"),
        (7, "\\n", "constant.character.escape"),
        (9, "-1", "constant.numeric"),
        (11, "ack.p99.9", "support.variable.metric"),
        (12, "-", "keyword.operator.arithmetic"),
        (12, "*", "keyword.operator.arithmetic"),
        (12, "!=", "keyword.operator.comparison"),
        (12, "codec", "variable.parameter"),
        (12, "zstd", "constant.language"),
        (12, "and", "keyword.control"),
        (12, "in", "keyword.operator.word"),
        (12, "#", "comment.line.number-sign"),
        (12, " why", "comment.line.number-sign"),
        (14, "faults", "keyword.control.faults"),
        (15, "at", "keyword.control.fault"),
        (15, "15", "constant.numeric"),
        (15, "s", "keyword.other.unit"),
        (15, "kill", "keyword.other.fault"),
        (15, "broker", "storage.type.fault-target"),
        (15, "leader", "entity.name.function"),
        (15, "partition", "entity.other.attribute-name"),
        (15, "0", "constant.numeric"),
        (15, "for", "keyword.control.fault"),
        (15, "downtime", "variable.parameter"),
        (15, " the busiest", "comment.line.number-sign"),
        (16, "run", "keyword.other.fault"),
        (16, "victim", "variable.parameter"),
        (17, "stop", "keyword.other.fault"),
        (17, "consumer", "storage.type.fault-target"),
        (17, "1", "constant.numeric"),
        (19, "capacity", "entity.name.section"),
        (20, "from", "variable.other.property"),
        (20, "k", "keyword.other.unit"),
        (21, "%", "keyword.other.unit"),
        (22, "slo", "keyword.control.slo"),
        (23, "e2e.p99", "meta.slo.kbs support.variable.metric"),
        (23, "<", "keyword.operator.comparison"),
        (23, "ms", "keyword.other.unit"),
        (
            23,
            " what every probe must meet",
            "comment.line.number-sign",
        ),
        (24, "ack.p99.9", "support.variable.metric"),
        (24, "-", "keyword.operator.arithmetic"),
        (24, "when", "keyword.control.conditional"),
        (24, "codec", "variable.parameter"),
        (24, "in", "keyword.operator.word"),
        (24, "zstd", "constant.language"),
        (25, "}", "meta.slo.kbs punctuation.section.block.end"),
        (27, "auto", "entity.name.function"),
        (27, "±", "keyword.operator.tolerance"),
        (27, "5", "constant.numeric"),
        (27, "%", "keyword.other.unit"),
        (27, "max", "entity.other.attribute-name"),
        (27, "20", "constant.numeric"),
    ] {
        let got = scope_of(line, text);
        assert!(
            got.contains(want),
            "line {line}: {text:?} is {got}, not {want}"
        );
    }
    // After the slo block closes, the capacity block's `}` is plain punctuation again.
    assert_eq!(scope_of(26, "}"), "punctuation.section.block.end.kbs");
    let text = std::fs::read_to_string(repo().join("editors").join(SAMPLE)).unwrap();
    let problems = parser_problems(&text, tokens);
    assert!(problems.is_empty(), "{SAMPLE}:\n{}", problems.join("\n"));
}

fn scopes_match_the_snapshot_and_the_parser(name: &str) {
    let tokens = &tokenized()[name];
    let text = std::fs::read_to_string(shipped()[name].clone()).unwrap();

    // One line per token: line number, the token as written, its scopes.
    let mut snap = String::new();
    for (n, line) in tokens.iter().enumerate() {
        for (t, scopes) in line.iter().filter(|(t, _)| !t.trim().is_empty()) {
            snap.push_str(&format!(
                "{:>3}  {:<28}  {}\n",
                n + 1,
                format!("{t:?}"),
                scopes.join(" ")
            ));
        }
    }
    insta::assert_snapshot!(format!("textmate_{name}"), snap);
    let problems = parser_problems(&text, tokens);
    assert!(problems.is_empty(), "{name}:\n{}", problems.join("\n"));
}

/// Where the tokens' scopes disagree with what kafkabench's parser found in `text`, and tokens
/// left without a scope.
fn parser_problems(text: &str, tokens: &Tokens) -> Vec<String> {
    // The scopes of every byte of the file, to compare with what the parser found there.
    let mut at: Vec<Vec<String>> = Vec::with_capacity(text.len());
    for line in tokens {
        for (t, scopes) in line {
            at.extend(std::iter::repeat(scopes.clone()).take(t.len()));
        }
        at.push(Vec::new()); // the line end
    }
    let mut problems = Vec::new();
    for (n, line) in tokens.iter().enumerate() {
        for (t, scopes) in line {
            if !t.trim().is_empty() && scopes.is_empty() {
                problems.push(format!("line {}: {t:?} has no scope", n + 1));
            }
        }
    }
    let mut expect = |span: Span, want: &str| {
        for i in span.start..span.end {
            let c = text.as_bytes()[i];
            // Brackets are punctuation; the `/` of a rate is checked with its unit.
            if c.is_ascii_whitespace() || b"{}()[]/".contains(&c) {
                continue;
            }
            if !at[i].iter().any(|s| s.starts_with(want)) {
                let line = text[..i].matches('\n').count() + 1;
                let word = &text[span.start..span.end];
                problems.push(format!("line {line}: {word:?} is {:?}, not {want}", at[i]));
                return;
            }
        }
    };
    for (start, end) in comment_spans(text) {
        expect(Span::new(FileId(0), start, end), "comment.line");
    }
    let ast = syntax::parse(FileId(0), text).expect("the scenario parses");
    expect(ast.name.span, "string.quoted.double");
    walk_entries(&ast.entries, &mut expect);
    problems
}

fn walk_entries(entries: &[Entry], expect: &mut dyn FnMut(Span, &str)) {
    for e in entries {
        match e {
            Entry::Include(s) => expect(s.span, "string.quoted.double"),
            Entry::Section(s) => {
                expect(s.name.span, "entity.name.section");
                if let Some(l) = &s.label {
                    expect(l.span, "string.quoted.double");
                }
                walk_entries(&s.entries, expect);
            }
            Entry::Setting(s) => {
                expect(s.key.span, "variable.other.property");
                walk_value(&s.value, expect);
            }
            Entry::Expect(assertions, _) | Entry::Slo(assertions, _) => {
                for a in assertions {
                    walk_expr(&a.lhs, expect);
                    match &a.test {
                        Test::Compare(_, rhs) => walk_expr(rhs, expect),
                        Test::Within(lo, hi) => {
                            walk_expr(lo, expect);
                            walk_expr(hi, expect);
                        }
                    }
                    for c in &a.when {
                        expect(c.var.span, "variable.parameter");
                        c.values.iter().for_each(|v| walk_value(v, expect));
                    }
                }
            }
            Entry::Faults(faults, _) => {
                for f in faults {
                    expect(f.verb.span, "keyword.other.fault");
                    walk_value(&f.at, expect);
                    if let Some(l) = &f.lasts {
                        walk_value(l, expect);
                    }
                }
            }
        }
    }
}

fn walk_expr(e: &Expr, expect: &mut dyn FnMut(Span, &str)) {
    match e {
        Expr::Metric(m) => {
            expect(m.name.span, "support.variable.metric");
            for (var, v) in &m.select {
                expect(var.span, "variable.parameter");
                walk_value(v, expect);
            }
        }
        Expr::Literal(v) => walk_value(v, expect),
        Expr::Binary(l, _, r, _) => {
            walk_expr(l, expect);
            walk_expr(r, expect);
        }
    }
}

fn walk_value(v: &Value, expect: &mut dyn FnMut(Span, &str)) {
    let number_then_unit = |start: usize, unit: Span, expect: &mut dyn FnMut(Span, &str)| {
        expect(Span::new(FileId(0), start, unit.start), "constant.numeric");
        expect(unit, "keyword.other.unit");
    };
    match &v.kind {
        ValueKind::Quantity(q) => match &q.unit {
            Some(u) => number_then_unit(v.span.start, u.span, expect),
            None => expect(v.span, "constant.numeric"),
        },
        ValueKind::Tolerance(q) => {
            // `±` and `+-` are both two bytes.
            let sign = Span::new(FileId(0), v.span.start, v.span.start + 2);
            expect(sign, "keyword.operator.tolerance");
            match &q.unit {
                Some(u) => number_then_unit(v.span.start + 2, u.span, expect),
                None => expect(
                    Span::new(FileId(0), v.span.start + 2, v.span.end),
                    "constant.numeric",
                ),
            }
        }
        ValueKind::Rate(r) => {
            let unit = r.amount.unit.as_ref().map_or(r.per.span, |u| u.span);
            number_then_unit(v.span.start, unit, expect);
            expect(r.per.span, "keyword.other.unit");
        }
        ValueKind::Shape(segments) => {
            for s in segments {
                let unit = s
                    .rate
                    .amount
                    .unit
                    .as_ref()
                    .map_or(s.rate.per.span, |u| u.span);
                number_then_unit(s.rate_span.start, unit, expect);
                expect(s.rate.per.span, "keyword.other.unit");
                if let Some(u) = &s.duration.unit {
                    number_then_unit(s.duration_span.start, u.span, expect);
                }
            }
        }
        ValueKind::List(items) => items.iter().for_each(|i| walk_value(i, expect)),
        ValueKind::Pair(what, share) => {
            walk_value(what, expect);
            walk_value(share, expect);
        }
        ValueKind::Call { name, args } => {
            expect(name.span, "entity.name.function");
            for a in args {
                if let Some(n) = &a.name {
                    expect(n.span, "entity.other.attribute-name");
                }
                walk_value(&a.value, expect);
            }
        }
        ValueKind::Str(_) => expect(v.span, "string.quoted.double"),
        ValueKind::Var(_) => expect(v.span, "variable.parameter"),
        ValueKind::Word(_) => expect(v.span, "constant.language"),
    }
}

/// Byte ranges of `#` and `//` comments, outside strings.
fn comment_spans(text: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut offset = 0;
    for line in text.split('\n') {
        let (mut in_string, mut escaped) = (false, false);
        for (i, c) in line.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                '#' | '/' if !in_string && (c == '#' || line[i..].starts_with("//")) => {
                    found.push((offset + i, offset + line.len()));
                    break;
                }
                _ => {}
            }
        }
        offset += line.len() + 1;
    }
    found
}

#[test]
fn the_vscode_extension_ships_the_same_grammar() {
    let read = |p: &str| std::fs::read_to_string(repo().join(p)).unwrap();
    assert_eq!(
        read("editors/vscode/syntaxes/kbs.tmLanguage.json"),
        read("editors/textmate/kbs.tmLanguage.json"),
        "copy editors/textmate/kbs.tmLanguage.json to editors/vscode/syntaxes/"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&read("editors/vscode/package.json")).unwrap();
    assert_eq!(
        manifest["contributes"]["grammars"][0]["scopeName"],
        "source.kbs"
    );
    assert_eq!(
        manifest["contributes"]["languages"][0]["extensions"][0],
        ".kbs"
    );
}
