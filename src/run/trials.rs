//! One trial of a repeated run: the run's plan on fresh topics of its own (`…-t2`), and a
//! fresh default consumer group, so no trial reads another's records. A capacity search's
//! probes are made fresh the same way.

use crate::plan::{RunNo, RunPlan};

/// Trial `t` (from 1) of `n` of `rp`.
pub(super) fn trial_plan(rp: &RunPlan, t: u32, n: u32) -> RunPlan {
    let mut p = rp.clone();
    fresh(&mut p, &format!("-t{t}"));
    // Progress names the trial; the combined run takes the plan's label back.
    p.label = format!("{} · trial {t}/{n}", rp.label);
    p
}

/// A round's notes, each naming its trial when the run is repeated (`run 2: …` becomes
/// `run 2, trial 1 of 3: …`; a note that names no run is given the run and trial first).
pub(super) fn name_trial(
    notes: Vec<String>,
    run: usize,
    trial: Option<(u32, u32)>,
) -> impl Iterator<Item = String> {
    let named = format!("run {}", RunNo(run));
    notes.into_iter().map(move |n| match trial {
        None => n,
        Some((t, of)) => match n.strip_prefix(&named) {
            Some(rest) if rest.starts_with([':', ' ']) => {
                format!("{named}, trial {t} of {of}{rest}")
            }
            _ => format!("{named}, trial {t} of {of}: {n}"),
        },
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trials_notes_name_it() {
        let notes = vec![
            "run 2: compaction check: the cleaner had not finished".to_string(),
            "run 2 (eager): the fault `x` failed".to_string(),
            "could not delete topic t: no answer within 30s".to_string(),
        ];
        let named: Vec<String> = name_trial(notes.clone(), 1, Some((3, 5))).collect();
        assert_eq!(
            named,
            [
                "run 2, trial 3 of 5: compaction check: the cleaner had not finished",
                "run 2, trial 3 of 5 (eager): the fault `x` failed",
                "run 2, trial 3 of 5: could not delete topic t: no answer within 30s",
            ]
        );
        // Not repeated: as they were. `run 20` is not `run 2`.
        assert_eq!(
            name_trial(notes.clone(), 1, None).collect::<Vec<_>>(),
            notes
        );
        let other: Vec<String> = name_trial(vec!["run 20: x".into()], 1, Some((1, 2))).collect();
        assert_eq!(other, ["run 2, trial 1 of 2: run 20: x"]);
    }
}
