//! Security from librdkafka's properties, and against a SASL_SSL broker when one is named:
//! KB_WIRE_SASL_BOOTSTRAP, KB_WIRE_SASL_CA (its CA, PEM), KB_WIRE_SASL_USER,
//! KB_WIRE_SASL_PASSWORD (scripts/kafka-local up --security sasl_ssl prints them). Without
//! them the broker tests check nothing and say so in their name.

use std::time::{Duration, Instant};

use kafka_protocol::messages::MetadataRequest;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::ClientConfig;

use super::super::conn::{Conn, Limits};
use super::super::security::{Mechanism, Security};
use super::super::{AckKind, ShareConsumer, WireError};

fn props<'a>(kv: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |k| kv.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
}

#[test]
fn security_from_librdkafka_properties() {
    assert_eq!(Security::from_props(props(&[])), Ok(Security::plaintext()));
    let s = Security::from_props(props(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanisms", "scram-sha-512"),
        ("sasl.username", "u"),
        ("sasl.password", "p"),
        ("ssl.ca.location", "/ca.pem"),
        ("ssl.endpoint.identification.algorithm", "none"),
    ]))
    .expect("valid");
    let tls = s.tls.expect("tls");
    assert_eq!(
        tls.ca_location.as_deref(),
        Some(std::path::Path::new("/ca.pem"))
    );
    assert!(!tls.verify_hostname && tls.verify);
    let sasl = s.sasl.expect("sasl");
    assert_eq!(sasl.mechanism, Mechanism::ScramSha512);
    assert!(
        !format!("{sasl:?}").contains("\"p\""),
        "no password in Debug"
    );
    let s = Security::from_props(props(&[("security.protocol", "ssl")])).expect("valid");
    assert!(
        s.tls.expect("tls").verify_hostname,
        "https by default, as librdkafka"
    );
    for (bad, says) in [
        (vec![("security.protocol", "tls")], "security.protocol"),
        (vec![("security.protocol", "sasl_plaintext")], "GSSAPI"),
        (
            vec![
                ("security.protocol", "sasl_ssl"),
                ("sasl.mechanism", "PLAIN"),
            ],
            "sasl.username",
        ),
        (
            vec![
                ("security.protocol", "ssl"),
                ("enable.ssl.certificate.verification", "maybe"),
            ],
            "true or false",
        ),
    ] {
        let e = Security::from_props(props(&bad)).expect_err("invalid");
        assert!(e.contains(says), "{e}");
    }
}

struct Secure {
    bootstrap: String,
    ca: String,
    user: String,
    password: String,
}

fn secure() -> Option<Secure> {
    let v = |k: &str| std::env::var(k).ok();
    Some(Secure {
        bootstrap: v("KB_WIRE_SASL_BOOTSTRAP")?,
        ca: v("KB_WIRE_SASL_CA")?,
        user: v("KB_WIRE_SASL_USER")?,
        password: v("KB_WIRE_SASL_PASSWORD")?,
    })
}

fn security(s: &Secure, mechanism: &str, password: &str, ca: Option<&str>) -> Security {
    let mut kv = vec![
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", mechanism),
        ("sasl.username", s.user.as_str()),
        ("sasl.password", password),
    ];
    if let Some(ca) = ca {
        kv.push(("ssl.ca.location", ca));
    }
    Security::from_props(props(&kv)).expect("valid")
}

#[test]
fn sasl_ssl_every_mechanism_and_clear_refusals_when_a_broker_is_named() {
    let Some(s) = secure() else { return };
    let limits = Limits::new(Duration::from_secs(10));
    for m in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let sec = security(&s, m, &s.password, Some(&s.ca));
        let mut c = Conn::connect(&s.bootstrap, &sec, limits, "kb-wire-test")
            .unwrap_or_else(|e| panic!("{m}: {e}"));
        let md = c
            .request(&MetadataRequest::default())
            .expect("Metadata over SASL_SSL");
        assert!(!md.brokers.is_empty(), "{m}");
        // The wrong password: refused, by the broker, in words.
        let bad = security(&s, m, "not-the-password", Some(&s.ca));
        let e = Conn::connect(&s.bootstrap, &bad, limits, "kb").expect_err("wrong password");
        assert!(matches!(e, WireError::Auth { .. }), "{m}: {e}");
        assert!(
            !e.to_string().contains("not-the-password"),
            "no secret in: {e}"
        );
    }
    // A CA that did not sign the broker's certificate (the system's): not trusted.
    let started = Instant::now();
    let e = Conn::connect(
        &s.bootstrap,
        &security(&s, "PLAIN", &s.password, None),
        limits,
        "kb",
    )
    .expect_err("untrusted");
    assert!(matches!(e, WireError::Tls { .. }), "{e}");
    assert!(e.to_string().contains("not trusted"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // Plaintext against the TLS port: an error, not a hang.
    let limits = Limits::new(Duration::from_secs(3));
    assert!(Conn::connect(&s.bootstrap, &Security::plaintext(), limits, "kb").is_err());
}

#[test]
fn a_share_consumer_over_sasl_ssl_when_a_broker_is_named() {
    let Some(s) = secure() else { return };
    let sec = security(&s, "SCRAM-SHA-512", &s.password, Some(&s.ca));
    let topic = super::unique("sec");
    super::create_topic_at(&s.bootstrap, &sec, &topic, 2);
    let mut cc = ClientConfig::new();
    cc.set("bootstrap.servers", &s.bootstrap)
        .set("security.protocol", "SASL_SSL")
        .set("sasl.mechanism", "SCRAM-SHA-512")
        .set("sasl.username", &s.user)
        .set("sasl.password", &s.password)
        .set("ssl.ca.location", &s.ca);
    let p: BaseProducer = cc.create().expect("producer");
    for i in 0..100 {
        let v = format!("v{i}");
        p.send(BaseRecord::<(), _>::to(&topic).payload(&v))
            .expect("queued");
    }
    p.flush(Duration::from_secs(30)).expect("delivered");
    let group = super::unique("sec-g");
    super::super::alter_group_configs(
        std::slice::from_ref(&s.bootstrap),
        &sec,
        &group,
        &[("share.auto.offset.reset", "earliest")],
    )
    .expect("group configs over SASL_SSL");
    let mut cfg = super::config(&group, &[&topic]);
    cfg.bootstrap = vec![s.bootstrap.clone()];
    cfg.security = sec;
    let mut c = ShareConsumer::join(cfg).expect("join over SASL_SSL");
    let (mut got, deadline) = (0, Instant::now() + Duration::from_secs(30));
    while got < 100 && Instant::now() < deadline {
        let mut b = Vec::new();
        c.poll(|r| b.push((r.topic, r.partition, r.offset)))
            .expect("poll");
        got += b.len();
        for (t, p, o) in b {
            c.ack(t, p, o, AckKind::Accept);
        }
    }
    assert_eq!(got, 100);
    let r = c.close().expect("close");
    assert!(r.refused.is_empty());
}
