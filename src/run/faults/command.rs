//! A `run "..."` action: the command through `sh -c`, the resolved target in its environment,
//! its exit status and the tail of its output recorded.
//!
//! The environment (placeholders in the text would clash with matrix variables):
//! `KB_TOPIC`, `KB_BOOTSTRAP`, `KB_RUN` (the run's label), `KB_FAULT_AT` (seconds),
//! `KB_LEADERS` (`0:1,1:3`: partition:leader), `KB_PARTITION_LEADER` (partition 0's leader),
//! `KB_BROKER_ID`, `KB_BROKER_HOST`, `KB_BROKER_PORT` (that broker), and `KAFKA_LOCAL_HOME`
//! when the cluster is a kafka-local one.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::capture::{self, Capture, REDIRECT};
use super::undo::Undo;
use super::{Clock, Fault};
use crate::measure::FaultRecord;
use crate::run::blocking::blocking;

/// A command still running when the measured phase ends gets this long to finish.
const GRACE: Duration = Duration::from_secs(10);
/// How much of a command's output the record keeps: the end, where errors are.
const TAIL: usize = 400;

pub(super) async fn run(cmd: &str, f: &Fault, clock: &Clock, rec: &mut FaultRecord) {
    let ctx = clock.ctx.clone();
    let env = {
        let ctx = ctx.clone();
        let at = f.at;
        blocking(move || environment(&ctx, at))
            .await
            .unwrap_or_default()
    };
    if let Some(id) = env.iter().find(|(k, _)| k == "KB_BROKER_ID") {
        rec.target = Some(format!("broker {}", id.1));
    }
    rec.fired_secs = Some(clock.secs());
    let capture = Capture::new();
    // On a line of its own after the redirect: the user's text is never spliced into it.
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!("{REDIRECT}\n{cmd}"))
        .envs(env)
        .env(capture::VAR, &capture.path)
        .stdin(Stdio::null())
        // Its own process group: ended as a whole, and a Ctrl-C at the terminal stays ours.
        .process_group(0)
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            rec.outcome = format!("failed: cannot start sh: {e}");
            return;
        }
    };
    let pgid = child.id() as i32;
    let hold = ctx.live.hold(Undo::Command(pgid));
    let mut child = child;
    let mut waiting = tokio::spawn(blocking(move || child.wait()));
    let mut ended_early = false;
    let out = tokio::select! {
        out = &mut waiting => out,
        () = async {
            clock.until(None).await;
            tokio::time::sleep(GRACE).await;
        } => {
            ended_early = true;
            ctx.live.undo(hold);
            match tokio::time::timeout(Duration::from_secs(5), &mut waiting).await {
                Ok(out) => out,
                Err(_) => {
                    // SAFETY: the process group of the command this action started.
                    unsafe { libc::killpg(pgid, libc::SIGKILL) };
                    waiting.await
                }
            }
        }
    };
    ctx.live.take(hold);
    rec.ended_secs = Some(clock.secs());
    let out = match out {
        Ok(Ok(Ok(o))) => o,
        Ok(Ok(Err(e))) => {
            rec.outcome = format!("failed: {e}");
            return;
        }
        Ok(Err(e)) => {
            rec.outcome = format!("failed: {e}");
            return;
        }
        Err(e) => {
            rec.outcome = format!("failed: {e}");
            return;
        }
    };
    let tail = tail(&capture.text());
    let status = match out.code() {
        Some(0) if !ended_early => "ok (exit 0)".to_string(),
        Some(c) => format!("exit {c}"),
        None => "ended by a signal".to_string(),
    };
    let early = if ended_early {
        format!(
            "; still running {}s after the measured phase ended, so it was ended",
            GRACE.as_secs()
        )
    } else {
        String::new()
    };
    rec.outcome = if tail.is_empty() {
        format!("{status}{early}")
    } else {
        format!("{status}{early}: {tail}")
    };
}

/// The end of a command's output, on one line.
fn tail(text: &str) -> String {
    let t = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.len() <= TAIL {
        return t;
    }
    let mut start = t.len() - TAIL;
    while !t.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &t[start..])
}

fn environment(ctx: &super::Ctx, at: Duration) -> Vec<(String, String)> {
    let mut env = vec![
        ("KB_TOPIC".to_string(), ctx.topic.clone()),
        ("KB_BOOTSTRAP".to_string(), ctx.bootstrap.clone()),
        ("KB_RUN".to_string(), ctx.label.clone()),
        ("KB_FAULT_AT".to_string(), format!("{}", at.as_secs_f64())),
    ];
    if let Some(c) = &ctx.cluster {
        env.push(("KAFKA_LOCAL_HOME".to_string(), c.home.display().to_string()));
    }
    let Some(Ok(snap)) = ctx.meta.as_ref().map(|m| m.snapshot(&ctx.topic)) else {
        return env;
    };
    let leaders: Vec<String> = snap
        .leaders
        .iter()
        .map(|(p, l)| format!("{p}:{l}"))
        .collect();
    env.push(("KB_LEADERS".to_string(), leaders.join(",")));
    let leader = snap.leaders.iter().find(|(p, _)| *p == 0).map(|(_, l)| *l);
    if let Some(l) = leader.filter(|l| *l >= 0) {
        env.push(("KB_PARTITION_LEADER".to_string(), l.to_string()));
        if let Some((id, host, port)) = snap.brokers.iter().find(|(id, _, _)| *id == l) {
            env.push(("KB_BROKER_ID".to_string(), id.to_string()));
            env.push(("KB_BROKER_HOST".to_string(), host.clone()));
            env.push(("KB_BROKER_PORT".to_string(), port.to_string()));
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::tail;

    #[test]
    fn a_long_output_keeps_its_end_on_one_line() {
        let text = format!("{}\nerror: the end\n", "x ".repeat(1000));
        let t = tail(&text);
        assert!(t.ends_with("error: the end"), "{t}");
        assert!(t.chars().count() <= super::TAIL + 1);
        assert_eq!(tail("a\nb\n"), "a b");
    }
}
