//! Which clients this kafkabench can drive: librdkafka in-process, and each client with a
//! worker launcher (`run::clients`). A side on a client without one checks and plans, and is
//! refused here before anything runs, never run on librdkafka in its place.

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
            if client != ClientKind::Librdkafka && super::clients::launcher(client).is_none() {
                out.push(format!(
                    "run {} ({}): its {side} is on {}, and this kafkabench has no worker for it \
                     (no launcher in src/run/clients/)",
                    RunNo(r.index),
                    r.label,
                    client.described()
                ));
            }
        }
    }
    out
}
