//! One trial of a repeated run: the run's plan on fresh topics of its own (`…-t2`), and a
//! fresh default consumer group, so no trial reads another's records. A capacity search's
//! probes are made fresh the same way.

use crate::plan::RunPlan;

/// Trial `t` (from 1) of `n` of `rp`.
pub(super) fn trial_plan(rp: &RunPlan, t: u32, n: u32) -> RunPlan {
    let mut p = rp.clone();
    fresh(&mut p, &format!("-t{t}"));
    // Progress names the trial; the combined run takes the plan's label back.
    p.label = format!("{} · trial {t}/{n}", rp.label);
    p
}

/// `p` on topics of its own (`suffix` added to every created topic's name) and, when the
/// group is kafkabench's default, a group of its own.
pub(super) fn fresh(p: &mut RunPlan, suffix: &str) {
    if !p.topic.existing {
        for name in &mut p.topics {
            name.push_str(suffix);
        }
        p.topic.name = p.topics[0].clone();
    }
    if let Some(cons) = &mut p.consumer {
        if let Some(g) = cons
            .get("group.id")
            .filter(|g| g.starts_with("kafkabench-"))
        {
            let g = format!("{g}{suffix}");
            cons.set("group.id", g);
        }
    }
    if let Some(share) = &mut p.share {
        if let Some(g) = share
            .client
            .get("group.id")
            .filter(|g| g.starts_with("kafkabench-"))
        {
            let g = format!("{g}{suffix}");
            share.client.set("group.id", g);
        }
    }
}
