//! The admin connection: an unreachable cluster is a clear error in bounded time. (Its topic
//! creation against the local broker is checked with the disk bytes, in `logdirs`' tests.)

use std::time::Duration;

use super::Admin;
use crate::model::Props;

fn props(bootstrap: &str) -> Props {
    let mut p = Props::default();
    p.set("bootstrap.servers", bootstrap);
    p
}

#[test]
fn unreachable_cluster_is_a_clear_error_in_bounded_time() {
    // Nothing listens on port 1: the error names the address and says how to start a broker.
    let bootstrap = "127.0.0.1:1";
    let started = std::time::Instant::now();
    let err = Admin::connect(&props(bootstrap), bootstrap)
        .err()
        .expect("must fail")
        .to_string();
    // README: the cluster is given up on within 10 s; the margin is for a busy machine.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}, past the 10 s connect bound",
        started.elapsed()
    );
    assert!(err.contains("127.0.0.1:1"), "{err}");
    assert!(err.contains("scripts/kafka-local up"), "{err}");
}
