//! A consumer group's churn under the fault lines: one line per member leaving or rejoining
//! (and the group's join, when its stalls reach into the measured phase), whose
//! partition-seconds add up to the table's `stalled`.

use crate::format::human_duration;
use crate::measure::{ChurnEvent, RunResult, TimeSeries};

/// The churn lines of `r`, then their total when any partition stalled.
pub(super) fn lines(r: &RunResult, churn: &[ChurnEvent]) -> Vec<String> {
    let mut out: Vec<String> = churn.iter().map(|c| line(c, r.series.as_ref())).collect();
    if churn.iter().any(|c| c.stalls > 0) {
        let total: f64 = churn.iter().map(|c| c.stalled_secs).sum();
        out.push(format!(
            "{} of partitions unread in the measured phase, the rows above added up (`stalled`)",
            secs(total)
        ));
    }
    out
}

/// `consumer 2 left at 15s: 12 partition stalls, 4.1s of partitions unread, the longest 1.9s,
/// lag back at its level in 3s`.
fn line(c: &ChurnEvent, series: Option<&TimeSeries>) -> String {
    let head = if c.join {
        c.event.clone()
    } else if c.at_secs < 0.0 {
        format!("{} {} before the clock", c.event, secs(-c.at_secs))
    } else {
        format!("{} at {}", c.event, secs(c.at_secs))
    };
    let mut parts = vec![if c.stalls == 0 {
        "no partition stalled".to_string()
    } else {
        format!(
            "{} partition stall{}, {} of partitions unread, the longest {}",
            c.stalls,
            if c.stalls == 1 { "" } else { "s" },
            secs(c.stalled_secs),
            secs(c.longest_secs)
        )
    }];
    if c.redelivered > 0 {
        parts.push(format!("{} records read twice", c.redelivered));
    }
    if !c.join {
        parts.push(lag(c, series));
    }
    format!("{head}: {}", parts.join(", "))
}

/// The lag's way back, or why there is none to tell.
fn lag(c: &ChurnEvent, series: Option<&TimeSeries>) -> String {
    match c.lag_back_secs {
        Some(0.0) => "lag never above its level".to_string(),
        Some(s) => format!("lag back at its level in {}", secs(s)),
        None => {
            let first_end = series
                .and_then(|s| s.points.first())
                .map(|p| p.t_secs + p.span_secs);
            match first_end {
                None => "lag not measured".to_string(),
                // The level is the lag before the event: none was measured before the clock.
                Some(end) if c.at_secs < end => "no lag measured before it to come back to".into(),
                Some(_) => "lag not back at its level before the run ended".to_string(),
            }
        }
    }
}

fn secs(s: f64) -> String {
    if s == 0.0 {
        "0s".into()
    } else {
        human_duration(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::SeriesPoint;

    fn event(event: &str, at: f64, stalls: u64, stalled: f64) -> ChurnEvent {
        ChurnEvent {
            event: event.into(),
            at_secs: at,
            stalls,
            stalled_secs: stalled,
            longest_secs: stalled / stalls.max(1) as f64,
            ..ChurnEvent::default()
        }
    }

    #[test]
    fn a_leave_before_the_clock_says_so_and_the_rows_add_up() {
        let series = TimeSeries {
            interval_secs: 1.0,
            points: vec![SeriesPoint {
                t_secs: 0.0,
                span_secs: 1.0,
                lag: Some(10),
                ..SeriesPoint::default()
            }],
        };
        let r = RunResult {
            series: Some(series),
            ..RunResult::default()
        };
        let join = ChurnEvent {
            join: true,
            ..event("the group's join before the clock", -0.02, 6, 18.6)
        };
        let mut rejoin = event("consumers 2, 3, 4 and 5 rejoined", 15.0, 8, 24.0);
        rejoin.lag_back_secs = Some(5.0);
        let rows = [
            join,
            event("consumers 2, 3, 4 and 5 left", -0.017, 8, 20.4),
            rejoin,
        ];
        let l = lines(&r, &rows);
        assert_eq!(l.len(), 4);
        assert_eq!(
            l[0],
            "the group's join before the clock: 6 partition stalls, 18.6s of partitions unread, the longest 3.1s"
        );
        assert!(
            l[1].starts_with(
                "consumers 2, 3, 4 and 5 left 17ms before the clock: 8 partition stalls"
            ),
            "{}",
            l[1]
        );
        assert!(
            l[1].ends_with("no lag measured before it to come back to"),
            "{}",
            l[1]
        );
        assert!(l[2].ends_with("lag back at its level in 5s"), "{}", l[2]);
        assert!(l[3].starts_with("63s of partitions unread"), "{}", l[3]);
    }
}
