//! What a scenario reads from the environment: the names in its `env("NAME")` calls, which
//! the pods take from a Secret by reference.

use crate::syntax::{Entry, Value, ValueKind};

/// One variable the scenario reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EnvRead {
    pub name: String,
    /// Every `env()` of it gives a default, so the pod may start without it.
    pub optional: bool,
}

/// The variables read by `entries`, in the order first met, added to `into`.
pub(crate) fn reads(entries: &[Entry], into: &mut Vec<EnvRead>) {
    for e in entries {
        match e {
            Entry::Setting(s) => value(&s.value, into),
            Entry::Section(s) => reads(&s.entries, into),
            // A fault timeline holds no values: its `run` command is a plain string.
            Entry::Include(_) | Entry::Expect(..) | Entry::Faults(..) | Entry::Slo(..) => {}
        }
    }
}

fn value(v: &Value, into: &mut Vec<EnvRead>) {
    match &v.kind {
        ValueKind::Call { name, args } => {
            if name.node == "env" {
                if let Some(ValueKind::Str(var)) = args.first().map(|a| &a.value.kind) {
                    let optional = args.len() > 1;
                    match into.iter_mut().find(|r| &r.name == var) {
                        Some(r) => r.optional &= optional,
                        None => into.push(EnvRead {
                            name: var.clone(),
                            optional,
                        }),
                    }
                }
            }
            for a in args {
                value(&a.value, into);
            }
        }
        ValueKind::List(items) => {
            for i in items {
                value(i, into);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    #[test]
    fn every_env_name_is_found_once_and_optional_only_when_always_defaulted() {
        let ast = crate::syntax::parse(
            FileId(0),
            r#"scenario "s" {
                cluster { bootstrap = env("KAFKA_BOOTSTRAP", "localhost:9092") }
                producer { sasl.password = env("PW") }
                matrix { acks = [env("ACKS", "1"), "all"] }
                workload { messages = 10 }
                steps { a { producer { sasl.password = env("PW", "x") } } }
            }"#,
        )
        .unwrap();
        let mut found = Vec::new();
        reads(&ast.entries, &mut found);
        let shown: Vec<(&str, bool)> = found
            .iter()
            .map(|r| (r.name.as_str(), r.optional))
            .collect();
        assert_eq!(
            shown,
            [("KAFKA_BOOTSTRAP", true), ("PW", false), ("ACKS", true)]
        );
    }
}
