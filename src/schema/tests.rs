//! Schemas compiled, records generated and read back by the crates' own readers
//! (apache-avro, prost-reflect), hostile schemas refused with a reason.

use std::path::PathBuf;

use super::*;

fn file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn load(format: Format, name: &str, text: &str, message: Option<&str>) -> Result<Schema, String> {
    let (_dir, path) = file(name, text);
    Schema::load(format, &path, message)
}

const ORDER_AVSC: &str = r#"{
  "type": "record", "name": "Order", "namespace": "shop",
  "fields": [
    {"name": "seq", "type": "long"},
    {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
    {"name": "note", "type": ["null", "string"], "default": null},
    {"name": "total", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
    {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 8}},
    {"name": "items", "type": {"type": "array", "items": {"type": "record", "name": "Item", "fields": [
      {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}, {"name": "price", "type": "double"}]}}},
    {"name": "attrs", "type": {"type": "map", "values": "string"}},
    {"name": "parent", "type": ["null", "Order"], "default": null}
  ]
}"#;

#[test]
fn avro_records_read_back_with_apache_avro_and_honour_the_schema() {
    let s = load(Format::Avro, "o.avsc", ORDER_AVSC, None).unwrap();
    let parsed = apache_avro::Schema::parse_str(ORDER_AVSC).unwrap();
    let mut rng = Rng::new(1);
    let mut out = Vec::new();
    for seq in 0..500 {
        out.clear();
        s.generate_at(&mut rng, seq, 1_700_000_000_000, &mut out);
        let mut r = &out[..];
        let v = apache_avro::from_avro_datum(&parsed, &mut r, None).unwrap();
        assert!(r.is_empty(), "every byte is the record's");
        let apache_avro::types::Value::Record(fields) = v else {
            panic!("{v:?}")
        };
        assert_eq!(fields[0].1, apache_avro::types::Value::Long(seq as i64));
        match &fields[2].1 {
            apache_avro::types::Value::TimestampMillis(ms) => {
                assert!((1_700_000_000_000 - 3_600_000..=1_700_000_000_000).contains(ms))
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn avro_json_documents_encode_and_misfits_name_the_field() {
    let s = load(Format::Avro, "o.avsc", ORDER_AVSC, None).unwrap();
    let doc = serde_json::json!({
        "seq": 1, "id": "9b2f4d4e-8f43-4a4e-9c1a-2b7f0f0e8a11", "at": 1700000000000i64, "day": 19000,
        "status": "PAID", "note": "leave at door", "total": "123.45", "hash": "abcdefgh",
        "items": [{"sku": "A-1", "qty": 2, "price": 9.5}], "attrs": {"channel": "web"}
    });
    let mut out = Vec::new();
    s.encode_json(&doc, &mut out).unwrap();
    let parsed = apache_avro::Schema::parse_str(ORDER_AVSC).unwrap();
    let v = apache_avro::from_avro_datum(&parsed, &mut &out[..], None).unwrap();
    assert!(format!("{v:?}").contains("PAID"));
    let mut bad = doc.clone();
    bad["items"][0]["qty"] = "two".into();
    let e = s.encode_json(&bad, &mut Vec::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "field items[0].qty: expected an int, found \"two\""
    );
    bad["status"] = "LOST".into();
    let e = s.encode_json(&bad, &mut Vec::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "field status: \"LOST\" is not a symbol of the enum (NEW, PAID, SHIPPED)"
    );
}

const ORDER_PROTO: &str = r#"
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message Other { string x = 1; }
message Order {
  int64 seq = 1;
  string id = 2;
  google.protobuf.Timestamp at = 3;
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
  Status status = 4;
  optional string note = 5;
  repeated Item items = 6;
  map<string, string> attrs = 7;
  oneof payment { string card = 8; string iban = 9; }
  repeated int32 tags = 10;
  Order parent = 11;
  message Item { string sku = 1; int32 qty = 2; double price = 3; }
}
"#;

#[test]
fn protobuf_records_decode_with_prost_reflect_and_set_one_oneof_member() {
    let (_dir, path) = file("o.proto", ORDER_PROTO);
    let s = Schema::load(Format::Protobuf, &path, Some("shop.Order")).unwrap();
    let pool = {
        let mut c = protox::Compiler::new([path.parent().unwrap()]).unwrap();
        c.open_file("o.proto").unwrap();
        c.descriptor_pool()
    };
    let desc = pool.get_message_by_name("shop.Order").unwrap();
    let mut rng = Rng::new(2);
    let mut out = Vec::new();
    let mut nested = 0;
    for seq in 0..500 {
        out.clear();
        s.generate_at(&mut rng, seq, 1_700_000_000_000, &mut out);
        let m = prost_reflect::DynamicMessage::decode(desc.clone(), &out[..]).unwrap();
        assert_eq!(
            m.get_field_by_name("seq").unwrap().as_i64(),
            Some(seq as i64)
        );
        let set = ["card", "iban"]
            .iter()
            .filter(|f| m.has_field_by_name(f))
            .count();
        assert_eq!(set, 1, "one member of the oneof");
        nested += usize::from(m.has_field_by_name("parent"));
    }
    assert!(
        nested > 100,
        "the recursive field is set often, and ends: {nested}"
    );
    // The second message of the file: indexes [1], as zigzag count and index.
    assert_eq!(s.wire_prefix(258), [0, 0, 0, 1, 2, 2, 2]);
    let item = Schema::load(Format::Protobuf, &path, Some("shop.Order.Item")).unwrap();
    assert_eq!(item.wire_prefix(1)[5..], [4, 2, 0]);
    let other = Schema::load(Format::Protobuf, &path, Some("shop.Other")).unwrap();
    assert_eq!(
        other.wire_prefix(1),
        [0, 0, 0, 0, 1, 0],
        "the first message: a single 0"
    );
    let e = Schema::load(Format::Protobuf, &path, Some("shop.Ordr")).unwrap_err();
    assert!(e.contains("did you mean shop.Order?"), "{e}");
}

#[test]
fn protobuf_json_goes_through_the_json_mapping() {
    let (_dir, path) = file("o.proto", ORDER_PROTO);
    let s = Schema::load(Format::Protobuf, &path, Some("shop.Order")).unwrap();
    let mut out = Vec::new();
    let doc = serde_json::json!({"seq": "5", "status": "PAID", "at": "2024-05-01T12:00:00Z", "items": [{"sku": "a", "qty": 1}]});
    s.encode_json(&doc, &mut out).unwrap();
    assert!(!out.is_empty());
    let e = s
        .encode_json(&serde_json::json!({"status": "LOST"}), &mut out)
        .unwrap_err();
    assert!(e.to_string().contains("LOST"), "{e}");
}

#[test]
fn json_schema_records_fit_their_schema() {
    let text = r##"{
      "type": "object", "required": ["seq", "id", "status", "items"],
      "properties": {
        "seq": {"type": "integer", "minimum": 0},
        "id": {"type": "string", "format": "uuid"},
        "at": {"type": "string", "format": "date-time"},
        "status": {"enum": ["NEW", "PAID"]},
        "code": {"type": "string", "minLength": 3, "maxLength": 3},
        "qty": {"type": "integer", "minimum": 1, "maximum": 5},
        "price": {"type": "number", "exclusiveMinimum": 0, "maximum": 2},
        "note": {"type": ["string", "null"]},
        "items": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"$ref": "#/$defs/item"}}
      },
      "$defs": {"item": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"], "additionalProperties": false}}
    }"##;
    let s = load(Format::JsonSchema, "o.json", text, None).unwrap();
    let mut rng = Rng::new(3);
    let mut out = Vec::new();
    for seq in 0..500 {
        out.clear();
        s.generate_at(&mut rng, seq, 1_700_000_000_000, &mut out);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["seq"], seq);
        s.encode_json(&v, &mut Vec::new())
            .unwrap_or_else(|e| panic!("{e}: {v}"));
    }
    let e = s
        .encode_json(
            &serde_json::json!({"seq": 1, "id": "x", "status": "NEW", "items": []}),
            &mut out,
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "field id: \"x\" does not match the string's format"
    );
}

#[test]
fn hostile_or_unsupported_schemas_are_refused_with_a_reason() {
    let avro = |t: &str| {
        load(Format::Avro, "a.avsc", t, None)
            .map(|_| ())
            .unwrap_err()
    };
    let e = avro(r#"{"type":"record","name":"L","fields":[{"name":"next","type":"L"}]}"#);
    assert!(e.contains("record L always contains itself"), "{e}");
    let e = avro(r#"{"type":"fixed","name":"F","size":100000000000}"#);
    assert!(e.contains("at most 1048576"), "{e}");
    let e = avro(r#"{"type":"record","name":"R","fields":[{"name":"x","type":"Nope"}]}"#);
    assert!(e.contains("not an Avro schema"), "{e}");
    assert!(avro("{").contains("not JSON"));
    let deep = format!("{}\"int\"{}", "[".repeat(200), "]".repeat(200));
    assert!(!avro(&deep).is_empty());

    let json = |t: &str| {
        load(Format::JsonSchema, "s.json", t, None)
            .map(|_| ())
            .unwrap_err()
    };
    assert!(json(r#"{"type":"string","pattern":"^a"}"#).contains("`pattern` is not supported"));
    assert!(json(r##"{"$defs":{"n":{"type":"object","properties":{"k":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}"##).contains("contains itself"));
    assert!(json(r#"{"type":"string","minLength":5,"maxLength":2}"#).contains("above maxLength"));
    assert!(
        json(r#"{"type":"array","items":{"type":"integer"},"minItems":100000000}"#)
            .contains("at most")
    );
    assert!(json("true").contains("give it a type"));
    assert!(json(r#"{"type":"string","format":"ipv4"}"#).contains("format `ipv4`"));

    let proto = |t: &str| {
        load(Format::Protobuf, "p.proto", t, Some("A"))
            .map(|_| ())
            .unwrap_err()
    };
    assert!(proto("syntax = \"proto3\"; message A { int32 x = 1 }").contains("does not compile"));
    assert!(
        proto("syntax = \"proto3\"; import \"missing.proto\"; message A { int32 x = 1; }")
            .contains("does not compile")
    );
}

#[test]
fn odd_but_valid_schemas_generate_bounded_records() {
    let cases = [
        (Format::Avro, r#"{"type":"record","name":"E","fields":[]}"#),
        (Format::Avro, r#""null""#),
        (
            Format::Avro,
            r#"{"type":"record","name":"T","fields":[{"name":"kids","type":{"type":"array","items":"T"}}]}"#,
        ),
        (
            Format::Avro,
            r#"{"type":"record","name":"M","fields":[{"name":"m","type":{"type":"map","values":["null","M"]}}]}"#,
        ),
        (Format::JsonSchema, r#"{"type":"object"}"#),
    ];
    for (f, t) in cases {
        let s = load(f, "x.schema", t, None).unwrap_or_else(|e| panic!("{t}: {e}"));
        let mut out = Vec::new();
        let mut rng = Rng::new(9);
        for seq in 0..200 {
            s.generate_at(&mut rng, seq, 0, &mut out);
        }
        assert!(out.len() < 50 << 20, "{t}: {}", out.len());
    }
    // A proto2 message that requires itself has no finite record (its innermost one would
    // lack the required field): refused, see a_proto2_message_that_requires_itself_is_refused.
    let s = load(
        Format::Protobuf,
        "r.proto",
        "syntax = \"proto2\"; message A { optional A a = 1; repeated A b = 2; }",
        Some("A"),
    )
    .unwrap();
    let mut out = Vec::new();
    s.generate(&mut Rng::new(1), 0, &mut out);
    assert!(out.len() < 1 << 20);
}

#[test]
fn the_wire_prefix_is_magic_zero_then_the_id_big_endian() {
    let s = load(Format::Avro, "s.avsc", r#""string""#, None).unwrap();
    assert_eq!(s.wire_prefix(0x0102_0304), [0, 1, 2, 3, 4]);
    assert_eq!(s.text(), "\"string\"");
    assert_eq!(s.format().registry_type(), "AVRO");
}

#[test]
fn the_schema_crates_leave_serde_json_numbers_alone() {
    // apache-avro 0.18/0.19 turn on serde_json's arbitrary_precision (through bigdecimal) for
    // the whole build; then numbers inside internally tagged enums no longer deserialize, and
    // the shard control messages break. This fails if a dependency turns it on again.
    #[derive(serde::Deserialize)]
    #[serde(tag = "t")]
    enum M {
        A { x: f64 },
    }
    let M::A { x } = serde_json::from_str::<M>(r#"{"t":"A","x":1.5}"#).unwrap();
    assert_eq!(x, 1.5);
}

#[test]
fn a_proto2_group_is_written_between_its_start_and_end_keys() {
    let text = "syntax = \"proto2\"; package g;\n\
        message R { required int64 seq = 1; optional group Grp = 2 { optional int32 a = 3; repeated group Deep = 4 { required string s = 5; } } repeated group Many = 6 { optional string b = 7; } }";
    let (_dir, path) = file("g.proto", text);
    let s = Schema::load(Format::Protobuf, &path, Some("g.R")).unwrap();
    let pool = {
        let mut c = protox::Compiler::new([path.parent().unwrap()]).unwrap();
        c.open_file("g.proto").unwrap();
        c.descriptor_pool()
    };
    let desc = pool.get_message_by_name("g.R").unwrap();
    let mut rng = Rng::new(3);
    let mut out = Vec::new();
    let mut groups = 0;
    for seq in 0..200 {
        out.clear();
        s.generate_at(&mut rng, seq, 1_700_000_000_000, &mut out);
        let m = prost_reflect::DynamicMessage::decode(desc.clone(), &out[..])
            .unwrap_or_else(|e| panic!("record {seq}: {e}"));
        assert_eq!(m.unknown_fields().count(), 0, "record {seq}");
        groups += usize::from(m.has_field_by_name("grp"));
    }
    assert!(
        groups > 50,
        "the optional group is set most of the time: {groups}"
    );
}

#[test]
fn avro_named_decimal_and_duration_types_may_be_used_again_by_name() {
    let text = r#"{"type": "record", "name": "R", "namespace": "ns", "fields": [
      {"name": "a", "type": {"type": "fixed", "name": "Money", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 2}},
      {"name": "b", "type": "Money"},
      {"name": "c", "type": ["null", "ns.Money"]},
      {"name": "d", "type": {"type": "fixed", "name": "Span", "namespace": "other", "size": 12, "logicalType": "duration"}},
      {"name": "e", "type": "other.Span"},
      {"name": "f", "type": {"type": "array", "items": "other.Span"}}
    ]}"#;
    let s = load(Format::Avro, "n.avsc", text, None).unwrap_or_else(|e| panic!("{e}"));
    // apache-avro's reader cannot resolve such names either (fastavro reads them: the
    // realistic kitchen.avsc in tests/schema.rs); the sizes show each field's encoding.
    let mut rng = Rng::new(4);
    let mut out = Vec::new();
    s.generate_at(&mut rng, 0, 1_700_000_000_000, &mut out);
    for seq in 0..50 {
        out.clear();
        s.generate_at(&mut rng, seq, 1_700_000_000_000, &mut out);
        // Two fixed(8), a union (index 1 and a fixed(8), or index 0), two fixed(12), then
        // an array of fixed(12): its count (zigzag), its items, its end.
        let union = if out[16] == 2 { 9 } else { 1 };
        let n = usize::from(out[16 + union + 24] / 2);
        let end = if n > 0 { 1 } else { 0 };
        assert_eq!(out.len(), 16 + union + 24 + 1 + 12 * n + end, "{out:?}");
    }
    // A name that is really not defined is still refused by apache-avro, with the name.
    let e = load(
        Format::Avro,
        "m.avsc",
        r#"{"type": "record", "name": "R", "fields": [{"name": "a", "type": "Nope"}]}"#,
        None,
    )
    .unwrap_err();
    assert!(e.contains("Nope"), "{e}");
}

#[test]
fn a_message_of_an_imported_file_is_refused_naming_its_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("common.proto"),
        "syntax = \"proto3\"; package c; message Address { string street = 1; }",
    )
    .unwrap();
    let main = dir.path().join("main.proto");
    std::fs::write(
        &main,
        "syntax = \"proto3\"; package m; import \"common.proto\"; message Order { c.Address to = 1; }",
    )
    .unwrap();
    let e = Schema::load(Format::Protobuf, &main, Some("c.Address")).unwrap_err();
    assert!(
        e.starts_with("it declares no message c.Address; c.Address is declared in common.proto"),
        "{e}"
    );
    assert!(Schema::load(Format::Protobuf, &main, Some("m.Order")).is_ok());
}

#[test]
fn schemas_nested_thousands_deep_are_refused_not_a_stack_overflow() {
    let deep_proto = format!(
        "syntax = \"proto3\"; {} int32 x = 1; {}",
        (0..3000)
            .map(|i| format!("message M{i} {{"))
            .collect::<String>(),
        "}".repeat(3000)
    );
    let e = load(Format::Protobuf, "d.proto", &deep_proto, Some("M0")).unwrap_err();
    assert!(
        e.contains("braces nest more than 100 levels deep at line 1"),
        "{e}"
    );
    let chain = (0..20_000)
        .map(|i| format!("message B{i} {{ B{} b = 1; }}\n", i + 1))
        .collect::<String>();
    let chain = format!("syntax = \"proto3\";\n{chain}message B20000 {{ int32 x = 1; }}");
    let e = load(Format::Protobuf, "c.proto", &chain, Some("B0")).unwrap_err();
    assert!(e.contains("more than 1000 types deep"), "{e}");
    let records: Vec<String> = (1..20_000)
        .map(|i| {
            format!(
                r#"{{"type":"record","name":"R{i}","fields":[{{"name":"a","type":"R{}"}}]}}"#,
                i - 1
            )
        })
        .collect();
    let avsc = format!(
        r#"[{{"type":"record","name":"R0","fields":[{{"name":"x","type":"int"}}]}},{}]"#,
        records.join(",")
    );
    let e = load(Format::Avro, "c.avsc", &avsc, None).unwrap_err();
    assert!(e.contains("nests more than 200 levels deep"), "{e}");
    let defs: Vec<String> = (0..20_000)
        .map(|i| format!(r##""d{i}":{{"type":"object","required":["a"],"properties":{{"a":{{"$ref":"#/$defs/d{}"}}}}}}"##, i + 1))
        .collect();
    let json = format!(
        r##"{{"$ref":"#/$defs/d0","$defs":{{{},"d20000":{{"type":"integer"}}}}}}"##,
        defs.join(",")
    );
    let e = load(Format::JsonSchema, "c.json", &json, None).unwrap_err();
    assert!(e.contains("nests more than 100 levels deep"), "{e}");
}

#[test]
fn a_proto2_message_that_requires_itself_is_refused() {
    for text in [
        "syntax = \"proto2\"; message A { required A a = 1; required int32 x = 2; }",
        "syntax = \"proto2\"; message A { required B b = 1; } message B { required group G = 1 { required A a = 2; } }",
    ] {
        let e = load(Format::Protobuf, "r.proto", text, Some("A")).unwrap_err();
        assert!(e.contains("always contains itself through required fields"), "{e}");
    }
    // Optional recursion ends: accepted.
    let text = "syntax = \"proto2\"; message A { optional A a = 1; required int32 x = 2; }";
    assert!(load(Format::Protobuf, "o.proto", text, Some("A")).is_ok());
}

#[test]
fn a_json_schema_constraint_beside_a_ref_is_refused_not_ignored() {
    let text = r##"{"type":"object","required":["a"],"properties":{"a":{"$ref":"#/$defs/s","maxLength":3}},"$defs":{"s":{"type":"string"}}}"##;
    let e = load(Format::JsonSchema, "s.json", text, None).unwrap_err();
    assert_eq!(
        e,
        "at /properties/a: `maxLength` beside `$ref` is not supported (only the reference is followed); move it into the schema referred to"
    );
    // Annotations beside it are fine.
    let text = r##"{"$ref":"#/$defs/s","description":"d","$defs":{"s":{"type":"string"}}}"##;
    assert!(load(Format::JsonSchema, "t.json", text, None).is_ok());
}
