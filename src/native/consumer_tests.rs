//! The verifying read's fast path, against the local broker (KAFKA_BOOTSTRAP, default
//! 127.0.0.1:9092): records written with headers are read back through `Consumer`, and their
//! stamp comes from librdkafka's unparsed header bytes (build.rs's offsets), not from
//! `rd_kafka_message_headers`, with the same answer as that public call. A librdkafka whose
//! layout no longer matches makes this test fail instead of the read silently slowing down.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer as _};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

use super::{Consumer, EventKind};

/// How long the records may take to come back before the test gives up (not a timing
/// assertion: a bound on a wait for something that must happen).
const READ_BOUND: Duration = Duration::from_secs(60);

fn bootstrap() -> String {
    std::env::var("KAFKA_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:9092".into())
}

#[tokio::test]
async fn a_stamp_is_read_from_the_fetched_header_bytes() {
    let bootstrap = bootstrap();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let topic = format!("kb-native-headers-{}-{nanos}", std::process::id());
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .expect("admin client");
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let created = admin
        .create_topics(
            &[NewTopic::new(&topic, 1, TopicReplication::Fixed(1))],
            &opts,
        )
        .await
        .expect("the broker answers");
    assert!(created.iter().all(Result::is_ok), "{created:?}");

    // Record 0: the stamp under "kb" after an earlier "kb" and another header (the last one
    // counts); record 1: no headers (a header section of count 0); record 2: a null "kb".
    let stamp: Vec<u8> = (0..21).collect();
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .expect("producer");
    let headers = [
        Some(
            OwnedHeaders::new()
                .insert(Header {
                    key: "kb",
                    value: Some(&b"first"[..]),
                })
                .insert(Header {
                    key: "other",
                    value: Some(&b"x"[..]),
                })
                .insert(Header {
                    key: "kb",
                    value: Some(&stamp[..]),
                }),
        ),
        None,
        Some(OwnedHeaders::new().insert(Header {
            key: "kb",
            value: None::<&[u8]>,
        })),
    ];
    for h in headers {
        let rec = BaseRecord::<(), _>::to(&topic).payload(&b"value"[..]);
        let rec = match h {
            Some(h) => rec.headers(h),
            None => rec,
        };
        producer.send(rec).map_err(|(e, _)| e).expect("enqueued");
    }
    producer
        .flush(Duration::from_secs(30))
        .expect("all records delivered");

    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", &topic)
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(&topic, 0, Offset::Beginning)
        .expect("partition 0");
    consumer.assign(&tpl).expect("assigned");
    let native = Consumer::new(&consumer);
    assert!(
        native.raw_headers,
        "the linked librdkafka is not the one build.rs measured"
    );

    let mut seen = Vec::new();
    let deadline = Instant::now() + READ_BOUND;
    while seen.len() < 3 && Instant::now() < deadline {
        let Some(ev) = native.next_event(100) else {
            continue;
        };
        if ev.kind() != EventKind::Fetch {
            continue;
        }
        let Some(m) = ev.message() else { continue };
        if m.error().is_some() {
            continue;
        }
        let offset = m.offset();
        let fast = m.raw_headers().is_some();
        let kb = m.header(c"kb").map(<[u8]>::to_vec);
        let other = m.header(c"other").map(<[u8]>::to_vec);
        // The public call's answer. It parses the headers into a list kept with the record
        // (when there are any), after which the fast path steps aside: the same answer again.
        let public = (
            m.parsed_header(c"kb").map(<[u8]>::to_vec),
            m.parsed_header(c"other").map(<[u8]>::to_vec),
        );
        let parsed = m.raw_headers().is_none();
        assert_eq!(m.header(c"kb").map(<[u8]>::to_vec), kb);
        seen.push((offset, fast, kb, other, public, parsed));
    }
    let _ = admin.delete_topics(&[&topic], &opts).await;

    assert_eq!(
        seen.len(),
        3,
        "three records read back within {READ_BOUND:?}"
    );
    let (offset, fast, kb, other, public, parsed) = &seen[0];
    assert_eq!(*offset, 0);
    assert!(*fast, "record 0's headers were read from the fetched bytes");
    assert_eq!(kb.as_deref(), Some(&stamp[..]), "the last kb header");
    assert_eq!(other.as_deref(), Some(&b"x"[..]));
    assert_eq!(
        public,
        &(kb.clone(), other.clone()),
        "the public call agrees"
    );
    assert!(*parsed, "once parsed, the headers are librdkafka's list");
    let (_, fast, kb, other, public, _) = &seen[1];
    assert!(
        *fast,
        "an empty header section is read from the fetched bytes too"
    );
    assert_eq!((kb, other), (&None, &None));
    assert_eq!(public, &(None, None));
    let (_, fast, kb, _, public, parsed) = &seen[2];
    assert!(*fast, "record 2's headers were read from the fetched bytes");
    assert_eq!(kb, &None, "a null value is no value");
    assert_eq!(public.0, None);
    assert!(*parsed);
}
