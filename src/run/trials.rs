//! One trial of a repeated run: the run's plan on fresh topics of its own (`…-t2`), and a
//! fresh default consumer group, so no trial reads another's records.

use crate::plan::RunPlan;

/// Trial `t` (from 1) of `n` of `rp`.
pub(super) fn trial_plan(rp: &RunPlan, t: u32, n: u32) -> RunPlan {
    let mut p = rp.clone();
    let suffix = format!("-t{t}");
    if !p.topic.existing {
        for name in &mut p.topics {
            name.push_str(&suffix);
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
    // Progress names the trial; the combined run takes the plan's label back.
    p.label = format!("{} · trial {t}/{n}", rp.label);
    p
}
