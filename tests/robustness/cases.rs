//! The fuzz cases: every shipped scenario and fixture, mutated by a seeded RNG, plus explicit
//! huge and deep inputs. Case `i` depends only on the seed and `i`, so the parent process can
//! rebuild the one case a crashed child was on.

use std::path::{Path, PathBuf};

use kafkabench::random::Rng;

/// A scenario text and the path it pretends to have (payload files resolve next to it).
pub(super) struct Case {
    pub path: PathBuf,
    pub text: String,
}

/// The seed files: scenarios/*.kbs and tests/fixtures/**/*.kbs, in a stable order.
pub(super) fn corpus(repo: &Path) -> Vec<Case> {
    let mut paths = Vec::new();
    collect(&repo.join("scenarios"), &mut paths);
    collect(&repo.join("tests/fixtures"), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            Some(Case { path, text })
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "kbs") {
            out.push(p);
        }
    }
}

/// Inputs no mutation reaches by chance: each crashed or hung kafkabench once, or sits just at
/// a limit. They come first, so every run covers them.
pub(super) fn explicit(repo: &Path) -> Vec<Case> {
    let at = |text: String| Case {
        path: repo.join("scenarios/explicit.kbs"),
        text,
    };
    let shape = |n: usize, sep: &str| vec!["1/s for 1s"; n].join(sep);
    let nest = |open: &str, close: &str, n: usize| {
        format!(
            "scenario \"s\" {{ expect {{ {}1{} < 1 }} }}",
            open.repeat(n),
            close.repeat(n)
        )
    };
    let matrix: String = (0..16)
        .map(|v| {
            let values: Vec<String> = (0..16).map(|i| format!("{i}ms")).collect();
            format!("    v{v} = [{}]\n", values.join(", "))
        })
        .collect();
    vec![
        at(format!(
            "scenario \"s\" {{ description = \"{}\" bogus = 1 }}",
            "a".repeat(1_100_000)
        )),
        at(format!("scenario \"s\" {{ bogus{} = 1 }}", "é".repeat(70_000))),
        at(format!(
            "scenario \"s\" {{ topic \"t\" {{}} workload {{ rate = {} }} }}",
            shape(200_000, ", then ")
        )),
        at(format!(
            "scenario \"s\" {{ topic \"t\" {{}} workload {{ rate = {} }} }}",
            shape(1_000, ",\n then ")
        )),
        at(nest("(", ")", 5_000)),
        at(nest("(", ")", 62)),
        at(nest("(", ")", 63)),
        at(format!("scenario \"s\" {{ x = {}1{} }}", "[".repeat(5_000), "]".repeat(5_000))),
        at(format!("scenario \"s\" {{ {} }}", "a { ".repeat(50_000))),
        at(format!(
            "scenario \"s\" {{ x = {}1{} }}",
            "f(".repeat(5_000),
            ")".repeat(5_000)
        )),
        at(format!(
            "scenario \"m\" {{\n  topic \"t-{{v0}}\" {{}}\n  workload {{ messages = 1 }}\n  matrix {{\n{matrix}  }}\n}}\n"
        )),
        at(format!(
            "scenario \"s\" {{ topic \"t\" {{}} workload {{ messages = 1 }} x = [{}] }}",
            vec!["1"; 200_000].join(", ")
        )),
        at("scenario \"s\" { include \"/dev/zero\" }".into()),
        at(concat!(
            "scenario \"s\" { topic \"t\" {} workload { messages = 1 ",
            "payload = file(\"/dev/zero\") } }"
        )
        .into()),
        at("scenario \"s\" { workload { messages = 1e23 duration = 1e23h } }".into()),
        at(format!("scenario \"s\" {{ x = {} }}", "9".repeat(100_000))),
        at("\0".repeat(1_000)),
        at(String::new()),
    ]
}

/// How a case is mutated; each case applies one to four of these.
const NUMBERS: &[&str] = &[
    "0",
    "1e23",
    "99999999999999999999999",
    "18446744073709551616",
    "4294967296",
    "0.0000001",
    "1_000_000_000_000",
    "00",
    "1.",
    "-1",
];
const EXOTIC: &[&str] = &[
    "é",
    "日本語",
    "🦀",
    "\u{202e}",
    "e\u{301}",
    "\u{feff}",
    "\0",
    "\t",
    "\r\n",
    "\\",
    "\"",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "..",
    "=",
    ",",
    "then",
    "for",
    "when",
    "in",
    "{x}",
    "#",
    "//",
];

/// Case `index` of the run seeded `seed`.
pub(super) fn generate(seed: u64, index: u64, corpus: &[Case], explicit: &[Case]) -> Case {
    if let Some(e) = explicit.get(index as usize) {
        return Case {
            path: e.path.clone(),
            text: e.text.clone(),
        };
    }
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let base = &corpus[pick(&mut rng, corpus.len())];
    let mut tokens = tokenize(&base.text);
    for _ in 0..1 + pick(&mut rng, 4) {
        mutate(&mut rng, &mut tokens, corpus);
    }
    Case {
        path: base.path.clone(),
        text: tokens.concat(),
    }
}

fn pick(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

fn mutate(rng: &mut Rng, tokens: &mut Vec<String>, corpus: &[Case]) {
    let n = tokens.len();
    let at = pick(rng, n + 1);
    let some = |rng: &mut Rng| pick(rng, n.max(1));
    match pick(rng, 11) {
        // A byte flipped: mostly an invalid or unexpected character.
        0 if n > 0 => {
            let i = some(rng);
            let mut bytes = tokens[i].clone().into_bytes();
            if !bytes.is_empty() {
                let j = pick(rng, bytes.len());
                bytes[j] ^= 1 << pick(rng, 8);
            }
            tokens[i] = String::from_utf8_lossy(&bytes).into_owned();
        }
        1 if n > 0 => {
            tokens.remove(some(rng));
        }
        // A token repeated: twice, or enough to make a huge list, line or shape.
        2 if n > 0 => {
            let t = tokens[some(rng)].clone();
            let times = [2, 10, 1_000, 20_000][pick(rng, 4)];
            // A token already made huge (a 70 000-byte line) repeated 20 000 times would be
            // gigabytes: past the file limit, it tests the generator's memory, not the parser.
            let times = times.min((4_000_000 / t.len().max(1)).max(2));
            tokens.insert(at, t.repeat(times));
        }
        // A token from another file: a key or a section where it does not belong.
        3 => {
            let other = tokenize(&corpus[pick(rng, corpus.len())].text);
            let t = other[pick(rng, other.len())].clone();
            tokens.insert(at.min(n), t);
        }
        4 if n > 1 => {
            let (a, b) = (some(rng), some(rng));
            tokens.swap(a, b);
        }
        5 => {
            let numbers: Vec<usize> = (0..n)
                .filter(|i| tokens[*i].starts_with(|c: char| c.is_ascii_digit()))
                .collect();
            let blown = NUMBERS[pick(rng, NUMBERS.len())];
            match numbers.get(pick(rng, numbers.len())) {
                Some(i) => {
                    let unit: String = tokens[*i]
                        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '_' || c == '.')
                        .to_string();
                    tokens[*i] = format!("{blown}{unit}");
                }
                None => tokens.insert(at, blown.to_string()),
            }
        }
        // Deep nesting of one bracket kind, around the limit or far past it.
        6 => {
            let (open, close) = [("(", ")"), ("[", "]"), ("{", "}")][pick(rng, 3)];
            let depth = [3, 63, 64, 65, 300, 5_000][pick(rng, 6)];
            tokens.insert(
                at,
                format!("{}1{}", open.repeat(depth), close.repeat(depth)),
            );
        }
        7 => {
            // Past 65 535 is where miette's layout gave up; a megabyte line is an explicit case.
            let len = [100, 1_001, 70_000][pick(rng, 3)];
            tokens.insert(at, "x".repeat(len));
        }
        8 | 9 => tokens.insert(at, EXOTIC[pick(rng, EXOTIC.len())].to_string()),
        // A whole line from another file.
        _ => {
            let other = &corpus[pick(rng, corpus.len())].text;
            let lines: Vec<&str> = other.lines().collect();
            let line = lines.get(pick(rng, lines.len())).copied().unwrap_or("");
            tokens.insert(at, format!("\n{line}\n"));
        }
    }
}

/// Words, numbers with their units, white space runs and single punctuation characters; the
/// concatenation of the tokens is the text.
fn tokenize(text: &str) -> Vec<String> {
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' || c == '.' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut out: Vec<String> = Vec::new();
    let mut last = None;
    for c in text.chars() {
        let k = class(c);
        match out.last_mut() {
            Some(t) if last == Some(k) && k != 2 => t.push(c),
            _ => out.push(c.to_string()),
        }
        last = Some(k);
    }
    out
}
