//! What each schema type gets, as grammar/REFERENCE.md says ("Random records honour the
//! schema"), read back by each format's own reader (apache-avro, prost-reflect, serde_json):
//! dates within the year up to the send day, instants in the hour before it, times of day,
//! durations, and numbers in their ranges.

use std::collections::BTreeSet;

use crate::random::Rng;
use crate::schema::{Format, Schema};

/// The send time every record here is generated at, and its day.
const NOW_MS: i64 = 1_700_000_000_000;
const TODAY: i64 = NOW_MS / 86_400_000;
const N: u64 = 2000;

fn load(format: Format, name: &str, text: &str, message: Option<&str>) -> Schema {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    Schema::load(format, &path, message).unwrap_or_else(|e| panic!("{e}"))
}

fn records(s: &Schema) -> impl Iterator<Item = Vec<u8>> + '_ {
    let mut rng = Rng::new(11);
    (0..N).map(move |seq| {
        let mut out = Vec::new();
        s.generate_at(&mut rng, seq, NOW_MS as u64, &mut out);
        out
    })
}

fn within<T: PartialOrd + std::fmt::Debug>(what: &str, v: T, lo: T, hi: T) {
    assert!(
        lo <= v && v <= hi,
        "{what}: {v:?} is not within {lo:?} to {hi:?}"
    );
}

#[test]
fn avro_logical_types_get_the_values_the_reference_says() {
    use apache_avro::types::Value as V;
    let text = r#"{"type": "record", "name": "T", "fields": [
      {"name": "day", "type": {"type": "int", "logicalType": "date"}},
      {"name": "tm", "type": {"type": "int", "logicalType": "time-millis"}},
      {"name": "tu", "type": {"type": "long", "logicalType": "time-micros"}},
      {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
      {"name": "tn", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
      {"name": "lt", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
      {"name": "dur", "type": {"type": "fixed", "name": "D", "size": 12, "logicalType": "duration"}},
      {"name": "n", "type": "int"},
      {"name": "l", "type": "long"},
      {"name": "x", "type": "double"}
    ]}"#;
    let s = load(Format::Avro, "t.avsc", text, None);
    let parsed = apache_avro::Schema::parse_str(text).unwrap();
    let mut days = BTreeSet::new();
    for out in records(&s) {
        let v = apache_avro::from_avro_datum(&parsed, &mut &out[..], None).unwrap();
        let V::Record(f) = v else { panic!("{v:?}") };
        let [(_, V::Date(day)), (_, V::TimeMillis(tm)), (_, V::TimeMicros(tu)), (_, V::TimestampMicros(ts)), (_, V::TimestampNanos(tn)), (_, V::LocalTimestampMillis(lt)), (_, V::Duration(dur)), (_, V::Int(n)), (_, V::Long(l)), (_, V::Double(x))] =
            &f[..]
        else {
            panic!("{f:?}")
        };
        within("date", i64::from(*day), TODAY - 364, TODAY);
        days.insert(*day);
        within("time-millis", *tm, 0, 86_400_000 - 1);
        within("time-micros", *tu, 0, 86_400_000_000 - 1);
        within(
            "timestamp-micros",
            *ts,
            (NOW_MS - 3_600_000) * 1000,
            NOW_MS * 1000 + 999,
        );
        let ns = NOW_MS * 1_000_000;
        within("timestamp-nanos", *tn, ns - 3_600_000_000_000, ns + 999_999);
        within("local-timestamp-millis", *lt, NOW_MS - 3_600_000, NOW_MS);
        within("duration months", u32::from(dur.months()), 0, 11);
        within("duration days", u32::from(dur.days()), 0, 30);
        within(
            "duration millis",
            u32::from(dur.millis()),
            0,
            86_400_000 - 1,
        );
        within("int", *n, 0, 9_999);
        within("long", *l, 0, 999_999_999);
        within("double", *x, 0.0, 999.99);
    }
    assert!(
        days.len() > 300,
        "dates spread over the year: {} days",
        days.len()
    );
}

#[test]
fn json_schema_formats_get_the_values_the_reference_says() {
    let text = r#"{"type": "object", "required": ["d", "t", "e", "u"], "properties": {
      "d": {"type": "string", "format": "date"},
      "t": {"type": "string", "format": "date-time"},
      "e": {"type": "string", "format": "email"},
      "u": {"type": "string", "format": "uuid"}
    }}"#;
    let s = load(Format::JsonSchema, "t.json", text, None);
    let mut days = BTreeSet::new();
    for out in records(&s) {
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let day = days_of(v["d"].as_str().unwrap());
        within("date", day, TODAY - 364, TODAY);
        days.insert(day);
        let t = v["t"].as_str().unwrap();
        let ms = days_of(&t[..10]) * 86_400_000
            + t[11..13].parse::<i64>().unwrap() * 3_600_000
            + t[14..16].parse::<i64>().unwrap() * 60_000
            + (t[17..23].parse::<f64>().unwrap() * 1000.0).round() as i64;
        within("date-time", ms, NOW_MS - 3_600_000, NOW_MS);
        let e = v["e"].as_str().unwrap();
        let local = e.strip_suffix("@example.com").unwrap();
        within("email's local part", local.len(), 4, 12);
        assert!(uuid::Uuid::parse_str(v["u"].as_str().unwrap()).is_ok());
    }
    assert!(
        days.len() > 300,
        "dates spread over the year: {} days",
        days.len()
    );
}

#[test]
fn protobuf_integers_and_well_known_types_get_the_values_the_reference_says() {
    let text = r#"syntax = "proto3";
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
message M {
  int32 a = 1; sint32 b = 2; fixed32 c = 3;
  int64 d = 4; uint64 e = 5; sint64 f = 6; fixed64 g = 7; sfixed64 h = 8;
  google.protobuf.Timestamp at = 9;
  google.protobuf.Duration took = 10;
}"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.proto"), text).unwrap();
    let s = Schema::load(Format::Protobuf, &dir.path().join("m.proto"), Some("M")).unwrap();
    let pool = {
        let mut c = protox::Compiler::new([dir.path()]).unwrap();
        c.open_file("m.proto").unwrap();
        c.descriptor_pool()
    };
    let desc = pool.get_message_by_name("M").unwrap();
    // Per 64-bit field: records where it is past what a 32-bit one gets.
    let mut wide = [0; 5];
    for out in records(&s) {
        let m = prost_reflect::DynamicMessage::decode(desc.clone(), &out[..]).unwrap();
        let int = |n: &str| -> i64 {
            let v = m.get_field_by_name(n).unwrap();
            v.as_i64()
                .or(v.as_i32().map(i64::from))
                .or(v.as_u32().map(i64::from))
                .or(v.as_u64().map(|x| x as i64))
                .unwrap()
        };
        for n in ["a", "b", "c"] {
            within(n, int(n), 0, 9_999);
        }
        for (k, n) in ["d", "e", "f", "g", "h"].into_iter().enumerate() {
            within(n, int(n), 0, 999_999_999);
            wide[k] += usize::from(int(n) > 9_999);
        }
        if m.has_field_by_name("at") {
            let at = m.get_field_by_name("at").unwrap();
            let at = at.as_message().unwrap();
            let secs = at.get_field_by_name("seconds").unwrap().as_i64().unwrap();
            within("Timestamp", secs, NOW_MS / 1000 - 3600, NOW_MS / 1000);
        }
        if m.has_field_by_name("took") {
            let d = m.get_field_by_name("took").unwrap();
            let d = d.as_message().unwrap();
            let secs = d.get_field_by_name("seconds").unwrap().as_i64().unwrap();
            let nanos = d.get_field_by_name("nanos").unwrap().as_i32().unwrap();
            within("Duration seconds", secs, 0, 999_999_999);
            within("Duration nanos", nanos, 0, 9_999);
        }
    }
    assert!(
        wide.iter().all(|&w| w > N as usize / 2),
        "every 64-bit integer type is a long, not a small int: {wide:?}"
    );
}

/// `YYYY-MM-DD` as days since 1970-01-01 (Howard Hinnant's days_from_civil).
fn days_of(date: &str) -> i64 {
    let n = |a: usize, b: usize| -> i64 { date[a..b].parse().unwrap() };
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
