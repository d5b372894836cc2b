//! Share consumers against the real broker: every record acquired and accepted exactly once
//! by members that outnumber partitions; release, reject and the delivery-count limit; an
//! expired acquisition lock hands records to another member; every codec decodes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use super::super::{AckKind, AckReport, ShareConsumer};
use super::{config, create_topic, kafka_tool_lag, produce, produce_with, share_group, unique};

/// Poll `c` until `done` says so or `limit` passes, acking each record as `kind(offset, dc)`.
fn drain(
    c: &mut ShareConsumer,
    limit: Duration,
    mut kind: impl FnMut(i64, i16) -> Option<AckKind>,
    mut done: impl FnMut(&[(i64, i16)]) -> bool,
    report: &mut AckReport,
) -> Vec<(i64, i16)> {
    let mut got = Vec::new();
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline && !done(&got) {
        let mut batch = Vec::new();
        let out = c
            .poll(|r| batch.push((r.topic, r.partition, r.offset, r.delivery_count)))
            .expect("poll");
        report.merge(out.acks);
        for (t, p, o, dc) in batch {
            if let Some(k) = kind(o, dc) {
                c.ack(t, p, o, k);
            }
            got.push((o, dc));
        }
    }
    got
}

#[test]
fn three_members_on_one_partition_accept_every_record_once() {
    let topic = unique("t3");
    create_topic(&topic, 1);
    let n = 3000usize;
    let group = share_group(&[]);
    let total = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    // All three hold the partition before the first record is written, so all get records.
    let ready = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let (total, seen, ready) = (total.clone(), seen.clone(), ready.clone());
            let mut cfg = config(&group, &[&topic]);
            // Small fetches, so no single member takes everything at once.
            cfg.max_records = 50;
            std::thread::spawn(move || {
                let mut c = ShareConsumer::join(cfg).expect("join");
                let deadline = Instant::now() + Duration::from_secs(60);
                while c.assignment().is_empty() && Instant::now() < deadline {
                    c.poll(|_| panic!("no records yet")).expect("poll");
                }
                assert_eq!(
                    c.assignment(),
                    &[(0, 0)],
                    "more members than partitions: all share it"
                );
                ready.wait();
                let mut mine = Vec::new();
                let mut accepted = 0;
                while total.load(Ordering::SeqCst) < n && Instant::now() < deadline {
                    let mut batch = Vec::new();
                    let out = c
                        .poll(|r| {
                            assert_eq!(r.value, Some(format!("v{}", r.offset).as_bytes()));
                            assert_eq!(r.header(b"i"), Some(r.offset.to_string().as_bytes()));
                            batch.push((r.topic, r.partition, r.offset));
                        })
                        .expect("poll");
                    assert!(
                        out.acks.refused.is_empty(),
                        "refused: {:?}",
                        out.acks.refused
                    );
                    accepted += out.acks.accepted;
                    for (t, p, o) in batch {
                        c.ack(t, p, o, AckKind::Accept);
                        mine.push(o);
                        total.fetch_add(1, Ordering::SeqCst);
                    }
                }
                let r = c.close().expect("close");
                assert!(r.refused.is_empty(), "refused on close: {:?}", r.refused);
                accepted += r.accepted;
                assert_eq!(
                    accepted,
                    mine.len() as u64,
                    "every ack of this member taken"
                );
                seen.lock().expect("lock").push(mine);
            })
        })
        .collect();
    ready.wait();
    // Batches of 10: the broker hands out whole batches, so large ones would go to whoever
    // asks first.
    produce_with(&topic, n, &[("batch.num.messages", "10")], |i| {
        format!("v{i}").into_bytes()
    });
    for t in threads {
        t.join().expect("member thread");
    }
    let seen = seen.lock().expect("lock");
    let all: Vec<i64> = seen.iter().flatten().copied().collect();
    let unique: BTreeSet<i64> = all.iter().copied().collect();
    assert_eq!(
        all.len(),
        n,
        "no record delivered twice: {} deliveries",
        all.len()
    );
    assert_eq!(unique, (0..n as i64).collect(), "every record delivered");
    let per: Vec<usize> = seen.iter().map(Vec::len).collect();
    assert!(
        per.iter().filter(|m| **m > 0).count() >= 2,
        "records spread over members: {per:?}"
    );
    if let Some(lag) = kafka_tool_lag(&group, &topic) {
        assert_eq!(
            lag, 0,
            "Kafka's ShareGroupCommand counts every record acknowledged"
        );
    }
}

#[test]
fn release_redelivers_reject_does_not_and_the_count_limit_archives() {
    let topic = unique("rel");
    create_topic(&topic, 1);
    produce(&topic, 3, "none", |_| b"x".to_vec());
    let group = share_group(&[("share.delivery.count.limit", "2")]);
    let mut c = ShareConsumer::join(config(&group, &[&topic])).expect("join");
    let mut rep = AckReport::default();
    // First delivery: release 0, reject 1, accept 2.
    let first = drain(
        &mut c,
        Duration::from_secs(20),
        |o, _| Some([AckKind::Release, AckKind::Reject, AckKind::Accept][o as usize]),
        |got| got.len() >= 3,
        &mut rep,
    );
    assert_eq!(first, vec![(0, 1), (1, 1), (2, 1)]);
    // Only 0 comes back, delivered a second time; release it again.
    let second = drain(
        &mut c,
        Duration::from_secs(10),
        |_, _| Some(AckKind::Release),
        |got| !got.is_empty(),
        &mut rep,
    );
    assert_eq!(
        second,
        vec![(0, 2)],
        "the released record, and only it, again"
    );
    // The limit is 2 deliveries: released twice, it is archived, never delivered again.
    let third = drain(
        &mut c,
        Duration::from_secs(3),
        |_, _| Some(AckKind::Accept),
        |_| false,
        &mut rep,
    );
    assert!(third.is_empty(), "delivered past the limit: {third:?}");
    rep.merge(c.close().expect("close"));
    assert!(rep.refused.is_empty(), "{:?}", rep.refused);
    assert_eq!((rep.accepted, rep.released, rep.rejected), (1, 2, 1));
}

#[test]
fn an_expired_lock_hands_records_to_another_member() {
    let topic = unique("lock");
    create_topic(&topic, 1);
    produce(&topic, 10, "none", |_| b"x".to_vec());
    let group = share_group(&[("share.record.lock.duration.ms", "1000")]);
    let mut a = ShareConsumer::join(config(&group, &[&topic])).expect("join a");
    let mut ra = AckReport::default();
    let held = drain(
        &mut a,
        Duration::from_secs(20),
        |_, _| None,
        |got| got.len() >= 10,
        &mut ra,
    );
    assert_eq!(held.len(), 10);
    assert!(held.iter().all(|&(_, dc)| dc == 1));
    assert_eq!(a.lock_timeout_ms(), 1000);
    // a stops without acknowledging (it stays connected): after 1 s the locks expire.
    let started = Instant::now();
    let mut b = ShareConsumer::join(config(&group, &[&topic])).expect("join b");
    let mut rb = AckReport::default();
    let got = drain(
        &mut b,
        Duration::from_secs(20),
        |_, _| None,
        |got| got.len() >= 10,
        &mut rb,
    );
    let offsets: BTreeSet<i64> = got.iter().map(|g| g.0).collect();
    assert_eq!(offsets, (0..10).collect(), "b gets every record a held");
    assert!(
        got.iter().all(|&(_, dc)| dc == 2),
        "second deliveries: {got:?}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "not before the lock expired"
    );
    // a's late acknowledgements are refused: b holds the records now.
    for o in 0..10 {
        a.ack(0, 0, o, AckKind::Accept);
    }
    ra.merge(a.commit().expect("commit a"));
    assert_eq!(ra.accepted, 0);
    assert_eq!(ra.refused.len(), 10, "{ra:?}");
    assert!(
        ra.refused.iter().all(|r| r.3 == 121),
        "INVALID_RECORD_STATE: {ra:?}"
    );
    for o in 0..10 {
        b.ack(0, 0, o, AckKind::Accept);
    }
    rb.merge(b.close().expect("close b"));
    assert_eq!(rb.accepted, 10, "{rb:?}");
    assert!(rb.refused.is_empty(), "{rb:?}");
    a.close().expect("close a");
}

#[test]
fn every_codec_decodes() {
    let topic = unique("codec");
    create_topic(&topic, 1);
    let codecs = ["none", "gzip", "snappy", "lz4", "zstd"];
    let per = 300usize;
    for (ci, codec) in codecs.iter().enumerate() {
        // Compressible values that say which codec and record they are.
        produce(&topic, per, codec, |i| {
            format!("{ci}:{i}:{}", "abc".repeat(30)).into_bytes()
        });
    }
    let group = share_group(&[]);
    let mut c = ShareConsumer::join(config(&group, &[&topic])).expect("join");
    let mut counts: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let want = codecs.len() * per;
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = 0;
    while n < want && Instant::now() < deadline {
        let mut acked = Vec::new();
        c.poll(|r| {
            let v = std::str::from_utf8(r.value.expect("value")).expect("utf8");
            let mut it = v.splitn(3, ':');
            let ci: usize = it.next().and_then(|x| x.parse().ok()).expect("codec index");
            let i: usize = it
                .next()
                .and_then(|x| x.parse().ok())
                .expect("record index");
            assert_eq!(r.key, Some(i.to_string().as_bytes()));
            assert_eq!(r.header(b"i"), Some(i.to_string().as_bytes()));
            assert!(r.timestamp_ms > 1_600_000_000_000, "a real timestamp");
            counts.entry(ci).or_default().insert(i);
            acked.push((r.topic, r.partition, r.offset));
        })
        .expect("poll");
        n += acked.len();
        for (t, p, o) in acked {
            c.ack(t, p, o, AckKind::Accept);
        }
    }
    for (ci, codec) in codecs.iter().enumerate() {
        let n = counts.get(&ci).map_or(0, BTreeSet::len);
        assert_eq!(n, per, "{codec} records");
    }
    let r = c.close().expect("close");
    assert!(r.refused.is_empty());
}

#[test]
fn a_second_member_takes_half_the_partitions_and_nothing_is_lost_or_doubled() {
    let topic = unique("four");
    create_topic(&topic, 4);
    let n = 4000usize;
    let group = share_group(&[]);
    let mut a = ShareConsumer::join(config(&group, &[&topic])).expect("join a");
    let deadline = Instant::now() + Duration::from_secs(30);
    while a.assignment().len() < 4 && Instant::now() < deadline {
        a.poll(|_| {}).expect("poll");
    }
    assert_eq!(a.assignment().len(), 4, "alone, a holds every partition");
    produce_with(&topic, n, &[("batch.num.messages", "20")], |i| {
        format!("v{i}").into_bytes()
    });
    let mut b = ShareConsumer::join(config(&group, &[&topic])).expect("join b");
    let mut seen: BTreeMap<(i32, i64), usize> = BTreeMap::new();
    let (mut a_changed, mut report) = (false, AckReport::default());
    let deadline = Instant::now() + Duration::from_secs(60);
    // Until every record is in and a's next heartbeat (5 s apart) has shrunk its assignment:
    // its session then forgets partitions.
    while (seen.len() < n || !a_changed) && Instant::now() < deadline {
        for (who, c) in [(0, &mut a), (1, &mut b)] {
            let mut got = Vec::new();
            let out = c
                .poll(|r| got.push((r.topic, r.partition, r.offset)))
                .expect("poll");
            a_changed |= who == 0 && out.assignment_changed;
            report.merge(out.acks);
            for (t, p, o) in got {
                *seen.entry((p, o)).or_default() += 1;
                c.ack(t, p, o, AckKind::Accept);
            }
        }
    }
    assert!(a_changed, "a's assignment changed when b joined");
    assert_eq!(
        a.assignment().len() + b.assignment().len(),
        4,
        "{:?} {:?}",
        a.assignment(),
        b.assignment()
    );
    report.merge(a.close().expect("close a"));
    report.merge(b.close().expect("close b"));
    assert_eq!(seen.len(), n, "every record");
    assert!(seen.values().all(|&k| k == 1), "none twice");
    assert_eq!(report.accepted, n as u64, "{:?}", report.refused);
}
