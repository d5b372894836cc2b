//! Which clients this kafkabench can drive: librdkafka in-process. A side on another client
//! (`client = java`, `client = franz-go`) checks and plans, and is refused here before
//! anything runs, never run on librdkafka in its place. The workers (clients/) lift it.

use crate::model::ClientKind;
use crate::plan::{Plan, RunNo};

/// One message per run with a side on a client not driven yet.
pub(crate) fn undriven(p: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    for r in &p.runs {
        let sides = [
            Some(("producer", r.producer_client)),
            r.consumer_release().map(|c| ("consumer", c.name)),
        ];
        for (side, client) in sides.into_iter().flatten() {
            if client != ClientKind::Librdkafka {
                out.push(format!(
                    "run {} ({}): its {side} is on {}, and this kafkabench drives librdkafka \
                     only so far (the workers under clients/ are not part of it yet)",
                    RunNo(r.index),
                    r.label,
                    client.described()
                ));
            }
        }
    }
    out
}
